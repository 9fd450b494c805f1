/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API's index of the QPs its jobs hold (ctl_epidx.c): every
 * (IP, QPN) that a job's connections name, as sender or receiver, to the
 * job's slot in nr_ctl's table.  job_create asks it whether a QP of a new
 * spec is taken: O(connections of the spec), not O(jobs x connections x
 * connections) under the API's lock.  Open addressing, linear probing, one
 * 64-bit word an entry (IP 32 | QPN 24 | slot + 1 8; 0 free), deletions
 * without tombstones (the later entries of a run move back).  Not
 * thread-safe: nr_ctl's lock guards it.
 */
#ifndef NR_CTL_EPIDX_H
#define NR_CTL_EPIDX_H

#include <stdint.h>

#include "proto/nr_job.h"

struct ctl_epidx {
	uint64_t *e;
	uint32_t cap; /* a power of two, 0 before the first reserve */
	uint32_t n;   /* entries held */
};

/* Room for extra more entries (at most half the words taken): 0 or -ENOMEM. */
int ctl_epidx_reserve(struct ctl_epidx *x, uint32_t extra);
/* Every (IP, QPN) of s to slot (0..254); the room reserved first. */
void ctl_epidx_add(struct ctl_epidx *x, const struct nr_job_spec *s, unsigned slot);
/* s's (IP, QPN) entries of slot gone. */
void ctl_epidx_del(struct ctl_epidx *x, const struct nr_job_spec *s, unsigned slot);
/* The slot holding (ip, qpn), or -1. */
int ctl_epidx_find(const struct ctl_epidx *x, uint32_t ip, uint32_t qpn);
void ctl_epidx_free(struct ctl_epidx *x);

#endif /* NR_CTL_EPIDX_H */
