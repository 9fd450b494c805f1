/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tenants (internal to control/): who a TCP token names and what it may
 * hold (docs/trust.md).  A table, its file format, the token lookup; the
 * quota check itself is nr_ctl's (ctl_api.c), which knows the jobs.  No
 * locking here: nr_ctl calls these under its mutex.
 */
#ifndef NR_CTL_TENANT_H
#define NR_CTL_TENANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/api/nr_control.h"

#define CTL_TENANT_IPS_MAX  256     /* ranges of one tenant */
#define CTL_TENANT_MACS_MAX 4096    /* MACs of one tenant */

/* An IPv4 range: addresses a with (a & mask) == net, network order. */
struct ctl_cidr {
	uint32_t net, mask;
	uint8_t len;
};

struct ctl_tenant {
	char name[NR_CTL_TENANT_NAME_MAX + 1];
	char *token;
	size_t token_len;
	uint32_t max_jobs;         /* 0: no limit of its own */
	uint64_t max_pool_bytes;   /* 0: no limit of its own */
	uint32_t max_conns;        /* TCP control connections; 0: the server's default */
	uint64_t quota_refused;    /* its job_creates refused over a limit (ctl_request.c) */
	/* The addresses its jobs may register (ctl_tenant_addr_check): any IPv4
	 * address with any_ip, else one of ips[]; MACs one of macs[], unchecked
	 * without it on a box of one tenant, none on a box shared by several. */
	bool any_ip;
	struct ctl_cidr *ips;
	unsigned n_ips;
	uint8_t (*macs)[6];        /* NULL: MACs not checked */
	unsigned n_macs;
	uint64_t addr_refused;     /* its job_creates naming an address not its own */
	uint64_t conns_refused;    /* its connections over max_conns (the server's count) */
	uint32_t reserve_jobs, reserve_channels; /* nr_ctl_tenant_cfg's */
	uint64_t reserve_mbufs;
	uint64_t reserve_refused; /* job_creates refused: the room left was others' reservations */
};

/* The three reservations (nr_ctl_tenant_cfg) by index, as the tenants file
 * names them and in the units of nr_backend_cap, for messages. */
extern const char *const ctl_reserve_field[3], *const ctl_reserve_unit[3];

struct ctl_tenants {
	struct ctl_tenant t[NR_CTL_MAX_TENANTS];
	unsigned n;
	struct nr_backend_cap cap; /* what the reservations share out (nr_ctl sets it) */
};

/* Its id (>= 0), or -EEXIST / -EINVAL / -ENOSPC / -ENOMEM with err. */
int ctl_tenants_add(struct ctl_tenants *ts, const struct nr_ctl_tenant_cfg *cfg, char *err,
		    size_t errlen);
/* Every tenant of a tenants file (PROTOCOL.md, "Tenants"): count or -errno with err. */
int ctl_tenants_load(struct ctl_tenants *ts, const char *path, char *err, size_t errlen);
/* Whether a and b share an address range (neither of every address) or a MAC:
 * 1 with what names the first such, else 0.  ctl_tenants_load warns of each
 * pair (docs/trust.md: a shared range lets either register on the other's hosts). */
int ctl_tenant_overlap(const struct ctl_tenant *a, const struct ctl_tenant *b, char *what,
		       size_t len);
/* The tenant whose token is tok[0..len), or -1; time independent of where it
 * matches.  With name, only the tenant of that name may match (its claim). */
int ctl_tenants_find(const struct ctl_tenants *ts, const char *name, const char *tok, size_t len);
void ctl_tenants_clear(struct ctl_tenants *ts);
/*
 * Whether every address connection k of s names is t's: 0, or -EACCES with
 * err naming the connection, the address and the tenant.  With tenants of
 * two or more (on a box that pins MACs: nr_ctl_set_mac_pinning; else 1), a
 * MAC is t's only when its macs[] names it: the box pins a job's MACs for
 * its tenant, and a MAC taken from where it was last seen would let a
 * tenant pin another's host (docs/trust.md, "L2").
 */
int ctl_tenant_addr_check(const struct ctl_tenant *t, unsigned tenants, const struct nr_job_spec *s,
			  char *err, size_t errlen);

#endif /* NR_CTL_TENANT_H */
