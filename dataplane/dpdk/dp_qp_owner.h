/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * (daddr, QPN) -> owning worker, for boxes with more than one worker: the
 * data packets of connection i (daddr = dst_ip, DestQP = dst_qpn) and the
 * ACKs its receiver returns (daddr = src_ip, DestQP = src_qpn) both map to the
 * lcore whose engine holds the job.
 *
 * Linear probing of 64-bit words, one writer (the control side, under its
 * mutex), lock-free readers.  Entry: key (daddr 32 | qpn 24) << 8 | worker + 1;
 * 0 is a free word.  The slot is chosen by rte_jhash keyed with a secret of
 * the box, so no tenant can pick QPNs that pile up in one run.  A deletion
 * leaves no tombstone: it moves the later entries of its run back (Knuth's
 * Algorithm R), so a word freed is free for any key and a run is never longer
 * than the live keys make it, however many jobs came and went.  A reader
 * beside such a move may find an entry neither where it was nor where it
 * goes: the map's sequence counter (rte_seqcount) sends it round again.
 *
 * The map holds at most half its words (dp_owner_create sizes it for every
 * connection the box's workers can hold); a set beyond that is -ENOSPC, which
 * job_create returns, never a silent miss.
 */
#ifndef NR_DP_QP_OWNER_H
#define NR_DP_QP_OWNER_H

#include <stddef.h>
#include <stdint.h>

#include <rte_seqcount.h>

struct dp_owner_map {
	rte_seqcount_t sc;     /* odd while the writer moves entries */
	uint32_t mask;         /* words - 1 */
	uint32_t cap;          /* live entries at most: half the words */
	uint32_t used;         /* live entries (the writer's) */
	uint32_t secret;       /* the hash's seed */
	uint64_t e[];
};

/* Bytes of a map for keys live entries (a power of two of words, twice keys). */
size_t dp_owner_bytes(uint32_t keys);
/* Make mem (dp_owner_bytes(keys), zeroed or not) an empty map; secret seeds the hash. */
struct dp_owner_map *dp_owner_init(void *mem, uint32_t keys, uint32_t secret);
/* 0, or -ENOSPC when the map holds cap entries and key is not one of them. */
int dp_owner_set(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn, unsigned worker);
/* Entries that may still be added (the writer's). */
static inline uint32_t dp_owner_room(const struct dp_owner_map *m) { return m->cap - m->used; }
/* Remove the key if present. */
void dp_owner_clear(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn);
/* Worker index or -1 when no job claims it.  Any lcore, beside the writer. */
int dp_owner_get(const struct dp_owner_map *m, uint32_t daddr, uint32_t qpn);

#endif /* NR_DP_QP_OWNER_H */
