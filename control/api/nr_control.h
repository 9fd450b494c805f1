/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API: one API over any backend that runs jobs (PROTOCOL.md;
 * the control path in docs/architecture.md).
 *
 *   nr_ctl          validation, job ids and keys, tenancy (ctl_api.c), the JSON
 *                   request handler (ctl_request.c); speaks to one backend.
 *   nr_backend      what runs the jobs, behind struct nr_backend_ops.  The
 *                   control API depends on no backend: each implements the
 *                   ops and registers with nr_backend_new() + nr_ctl_create().
 *                   "sw": the DPDK box (dataplane/dpdk/dp_backend.c, command
 *                   rings to its lcores); "fpga": an aggregator FPGA through
 *                   its register map (backend_fpga.c, fpga_regs.h), mapped
 *                   from a PCIe BAR or a file; "rtl": that driver on the RTL
 *                   model (dataplane/rtl/nr_rtl_backend.c); tests register an
 *                   in-process engine the same way.  Each lives with what it
 *                   drives (docs/architecture.md, "Control backends").
 *   nr_ctl_server   UNIX socket (0600, admin, no token) and TCP (hosts, shared
 *                   token) listeners serving JSON lines (PROTOCOL.md).
 */
#ifndef NR_CONTROL_H
#define NR_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/nr_job.h"

struct nr_backend;

/* What a box holds in all, for the tenants' reservations; 0: no limit. */
struct nr_backend_cap {
	uint32_t jobs;     /* jobs (the control API's NR_MAX_JOBS at most) */
	uint32_t channels; /* channels of jobs over all workers */
	uint64_t mbufs;    /* the admission budget: frames every job may hold
			    * (ranks x channels x pool packets, nr_job_held_frames) */
};

/*
 * A backend's operations.  nr_ctl calls them under its lock, one at a time,
 * each synchronous from its point of view.  Errors are 0 or -errno; err (when
 * given) says what went wrong for the reply.
 */
struct nr_backend_ops {
	const char *name;          /* backend_info's "name": "sw", "fpga", "rtl" */
	/* id is chosen by nr_ctl; spec already validated (nr_job_spec_validate). */
	int (*job_create)(struct nr_backend *b, uint32_t id, const struct nr_job_spec *spec,
			  uint32_t *credits, char *err, size_t errlen);
	int (*job_destroy)(struct nr_backend *b, uint32_t id);
	int (*job_status)(struct nr_backend *b, uint32_t id, struct nr_job_stats *st);
	/* Backend-wide statistics (ports, lcores, drop reasons) as a JSON object. */
	json_t *(*stats)(struct nr_backend *b);
	/* {"backend":"sw", ...}: kernel, lcores, ports / device, capacity. */
	json_t *(*info)(struct nr_backend *b);
	/* optional: release priv (nr_backend_destroy frees the rest) */
	void (*destroy)(struct nr_backend *b);
	/*
	 * optional: whether the dataplane works, as an object
	 * {"healthy": bool, "reason": "" or every failed check, ...details};
	 * answered without waiting on the dataplane (the health op).  Called
	 * without nr_ctl's lock, beside the other ops: it reads only what is
	 * safe to read while they run.
	 */
	json_t *(*health)(struct nr_backend *b);
	/* optional: what the backend holds in all (nr_backend_cap), which the
	 * tenants' reservations share out; without it, only the control API's
	 * NR_MAX_JOBS jobs are counted */
	void (*capacity)(struct nr_backend *b, struct nr_backend_cap *cap);
	/*
	 * optional: jobs ids[0..n) as the dataplane last published them, for
	 * the metrics: into *st[i] state, slots, slots_busy, completed and ctr
	 * (nothing else), rc[i] job_status's 0 or -errno (-EAGAIN: not
	 * published yet); answered without a command to the dataplane
	 */
	void (*job_published)(struct nr_backend *b, const uint32_t *ids, unsigned n,
			      struct nr_job_stats *const *st, int *rc);
	/*
	 * optional: the operator's static MAC map (a switch-mode box's): mac
	 * NULL: every entry into *list, [{"mac","port","job_pins"}]; else mac
	 * on port (port >= 0) or taken back (port < 0).  0 or -errno with err.
	 */
	int (*l2_static)(struct nr_backend *b, const uint8_t *mac, int port, json_t **list,
			 char *err, size_t errlen);
};

struct nr_backend {
	const struct nr_backend_ops *ops;
	void *priv;                /* the implementation's own state */
};

/*
 * Register an implementation: ops (static, outliving the backend) and its
 * state.  NULL on allocation failure.  Hand the result to nr_ctl_create().
 */
struct nr_backend *nr_backend_new(const struct nr_backend_ops *ops, void *priv);
/* ops->destroy, then free b (nr_ctl_destroy does it for its backend). */
void nr_backend_destroy(struct nr_backend *b);

/* path: sysfs resource0 of the device, or a regular file (simulation). */
struct nr_backend *nr_backend_fpga_create(const char *path, char *err, size_t errlen);

/*
 * Register accessor of the fpga driver: every register access goes through it
 * (32-bit, byte offset into the register file).  The default does volatile
 * loads and stores on the mapping; tests pass their own to watch the driver
 * or to run the device model synchronously on a doorbell write.
 */
struct nr_fpga_io {
	uint32_t (*read32)(void *ctx, uint32_t off);
	void (*write32)(void *ctx, uint32_t off, uint32_t val);
	void *ctx;
};

struct nr_fpga_opts {
	const struct nr_fpga_io *io;   /* NULL: the mapping of path */
	unsigned cmd_timeout_ms;       /* 0: 100 */
	bool no_reset;                 /* true: do not reset the device at open */
};

/* Like nr_backend_fpga_create with options (path is still mapped and checked). */
struct nr_backend *nr_backend_fpga_open(const char *path, const struct nr_fpga_opts *o,
					char *err, size_t errlen);

/* ---- the API core: validation, ids, keys, tenancy, request handling ---- */

struct nr_ctl;

struct nr_ctl *nr_ctl_create(struct nr_backend *b);
void nr_ctl_destroy(struct nr_ctl *c);     /* destroys the backend too */

/*
 * Failed jobs are kept for inspection (job_status gives the reason) until
 * their creator destroys them, or until they have been failed for ttl_ms:
 * then nr_ctl_reap destroys them.  A job whose rank 0 died is never
 * destroyed by its creator; without the TTL it would hold a job slot of the
 * backend forever.  Default NR_CTL_FAILED_TTL_MS; 0 keeps failed jobs until
 * destroyed.
 */
#define NR_CTL_FAILED_TTL_MS 60000u
void nr_ctl_set_failed_ttl(struct nr_ctl *c, uint32_t ttl_ms);
/*
 * Destroy the jobs failed for at least the TTL, counted from the first reap
 * that saw them failed; returns how many.  The server thread calls it about
 * once a second; now_ms is any millisecond clock that only goes forward.
 */
unsigned nr_ctl_reap(struct nr_ctl *c, uint64_t now_ms);

/*
 * Leases (docs/trust.md): a job holds one when job_create gives "lease_ms",
 * and every job created over TCP holds one (default_ms when it gives none);
 * job_renew with the job's key starts it again.  nr_ctl_reap destroys a job
 * whose lease lapsed, its slots, QPs and held frames with it (jobs_expired),
 * and says so on stderr.  Admin jobs without "lease_ms" hold none.  The
 * clock is CLOCK_MONOTONIC in ms, as nr_ctl_reap's now_ms must be.
 */
#define NR_CTL_DEFAULT_LEASE_MS 60000u
void nr_ctl_set_default_lease(struct nr_ctl *c, uint32_t default_ms);
/*
 * The backend pins a job's MACs for its tenant (the DPDK box in switch
 * mode; dataplane/dpdk/dp_l2.h): then, on a box of two or more tenants, a
 * tenant's job names only MACs its "macs" in the tenants file gives it, and
 * a tenant without "macs" names none (docs/trust.md, "L2").  Off by default.
 */
void nr_ctl_set_mac_pinning(struct nr_ctl *c, bool on);
/* The control clock: CLOCK_MONOTONIC in ms (leases, the server's timers). */
uint64_t nr_ctl_now_ms(void);

/*
 * Tenants (docs/trust.md): every TCP token names a tenant, and a tenant's
 * jobs count against its own limits: at most max_jobs jobs and
 * max_pool_bytes of pool (nr_job_pool_bytes: ranks x pool packets x MTU,
 * summed over its jobs); 0 is no limit of its own (the box's still hold).
 * job_create over its limit is refused (quota_refused) and touches no
 * other tenant's jobs; a job is reached only by its own tenant (with its
 * key) or the admin.  A tenant's jobs register only its own addresses
 * (ips, macs: job_create naming another's is refused, addr_refused), and it
 * holds at most max_conns TCP control connections (the server's count).
 * The server's cfg.token is the tenant "default" without limits (any
 * address); a tenants file adds named ones, each with its ips (PROTOCOL.md,
 * "Tenants").  Add them before the server starts.
 */
#define NR_CTL_MAX_TENANTS 64
#define NR_CTL_TENANT_NAME_MAX 31
/* The shortest token a tenant may have (a guess must not be cheap: PROTOCOL.md). */
#define NR_CTL_TOKEN_MIN 16
struct nr_ctl_tenant_cfg {
	const char *name;          /* 1..31 of [A-Za-z0-9._-], unique */
	const char *token;         /* NR_CTL_TOKEN_MIN..255 bytes, unique */
	uint32_t max_jobs;
	uint64_t max_pool_bytes;
	/* TCP control connections it may hold at once (counted from its first
	 * authenticated request); 0: the server's max_conns_per_tenant */
	uint32_t max_conns;
	/* The IPv4 ranges ("10.1.0.0/16"; a bare address is a /32) of which every
	 * src_ip and dst_ip of its jobs must be; ips NULL: any address (the
	 * tenant "default"; a tenants file must give "ips"). */
	const char *const *ips;
	unsigned n_ips;
	/* The MACs every src_mac and dst_mac its jobs name must be one of
	 * (one-armed boxes, where results go to the registered MAC); macs NULL:
	 * not checked. */
	const char *const *macs;
	unsigned n_macs;
	/* Held for it whatever other tenants hold (nr_backend_cap's units): the
	 * others' jobs may take only what the box holds less every other
	 * tenant's reservation it does not use.  The sums over all tenants
	 * must fit the box; 0: none. */
	uint32_t reserve_jobs, reserve_channels;
	uint64_t reserve_mbufs;
};
/* The tenant's id (>= 0), or -errno with err (a name or token twice, ...). */
int nr_ctl_tenant_add(struct nr_ctl *c, const struct nr_ctl_tenant_cfg *t, char *err, size_t errlen);
/* Every tenant of a JSON tenants file (mode 0600): how many, or -errno with
 * err; a bad file adds none. */
int nr_ctl_tenants_load(struct nr_ctl *c, const char *path, char *err, size_t errlen);
/* How many tenants exist (the TCP listener needs one). */
unsigned nr_ctl_tenants(struct nr_ctl *c);
/* The tenant a request's token names (constant time in each token), or -1. */
int nr_ctl_authenticate(struct nr_ctl *c, const char *token, size_t len);
/* The same for a request that names its tenant (its "tenant"): -1 unless the
 * token is that tenant's. */
int nr_ctl_authenticate_as(struct nr_ctl *c, const char *tenant, const char *token, size_t len);
/* Tenant who's name (into name[len]) and max_conns (0: none of its own): 0, or -ENOENT. */
int nr_ctl_tenant_conn_limit(struct nr_ctl *c, int who, char *name, size_t len,
			     uint32_t *max_conns);
/* A connection of tenant who refused over its max_conns: counted (tenant_conns_refused). */
void nr_ctl_tenant_conn_refused(struct nr_ctl *c, int who);
/* Who sends a request: NR_CTL_ADMIN (the UNIX socket) or a tenant id. */
#define NR_CTL_ADMIN (-1)

/*
 * Handle one request line (without the newline).  who is NR_CTL_ADMIN for the
 * UNIX socket (no token, may list and touch every job), else the tenant the
 * TCP request's token named (job operations require the job's key and its
 * tenant; an id no tenant has is one without limits).  Returns a malloc'd reply
 * line without newline; never NULL except on allocation failure.
 *
 * Thread safety: every nr_ctl_* function takes the nr_ctl's mutex, so any
 * thread may call them; backend calls are made under that mutex, one at a
 * time (the sw channel is never entered concurrently).
 * nr_ctl_handle does not look at "token": the server checks it first.
 */
char *nr_ctl_handle(struct nr_ctl *c, const char *line, size_t len, int who);

/* The same on a parsed request (borrowed); returns a new reply object. */
json_t *nr_ctl_handle_json(struct nr_ctl *c, json_t *req, int who);

/*
 * Parse one request line the way nr_ctl_handle does (jansson, duplicate keys
 * refused, objects only).  NULL and err on failure.
 */
json_t *nr_ctl_parse_line(const char *line, size_t len, char *err, size_t errlen);

/* {"ok":false,"error":msg} as a malloc'd line. */
char *nr_ctl_error_line(const char *msg);

/* Control-plane counters, shown under "control" in the stats reply and in the
 * metrics (X-macro: _(ENUM, "name", "help")). */
/* clang-format off */
#define NR_FOREACH_CTL_CTR(_)                                                                   \
	_(NR_CCTR_REQUESTS, "requests", "requests handled")                                     \
	_(NR_CCTR_ERRORS, "errors", "requests answered with an error")                          \
	_(NR_CCTR_BAD_JSON, "bad_json", "lines that were not a JSON object")                    \
	_(NR_CCTR_BAD_TOKEN, "bad_token", "TCP requests with a bad or missing token")           \
	_(NR_CCTR_BAD_KEY, "bad_key", "job requests with a wrong or missing key")               \
	_(NR_CCTR_OVERSIZE, "oversize", "request lines over the size limit")                    \
	_(NR_CCTR_RATE_LIMITED, "rate_limited", "requests refused by the rate limit")           \
	_(NR_CCTR_CONNS_REFUSED, "conns_refused",                                               \
	  "connections over max_conns (none unauthenticated to make room for), or over "  \
	  "max_conns_per_source")                                                                 \
	_(NR_CCTR_CONNS_EVICTED, "conns_evicted",                                               \
	  "unauthenticated connections closed to make room for a new one")                      \
	_(NR_CCTR_IDLE_CLOSED, "idle_closed", "connections closed for idleness")                \
	_(NR_CCTR_JOBS_CREATED, "jobs_created", "jobs created")                                 \
	_(NR_CCTR_JOBS_DESTROYED, "jobs_destroyed", "jobs destroyed")                           \
	_(NR_CCTR_JOBS_REAPED, "jobs_reaped",                                                   \
	  "failed jobs destroyed by nr_ctl_reap after the failed-job TTL")                      \
	_(NR_CCTR_JOBS_EXPIRED, "jobs_expired",                                                 \
	  "jobs destroyed by nr_ctl_reap because their lease lapsed")                           \
	_(NR_CCTR_LEASES_RENEWED, "leases_renewed", "leases renewed (job_renew)")               \
	_(NR_CCTR_QUOTA_REFUSED, "quota_refused",                                               \
	  "job_create refused: the tenant's max_jobs or max_pool_bytes")                       \
	_(NR_CCTR_AUTH_THROTTLED, "auth_throttled",                                             \
	  "TCP connections refused: their source failed authentication too often")             \
	_(NR_CCTR_TLS_PLAINTEXT, "tls_plaintext",                                               \
	  "plain-text clients refused by the TLS listener")                                    \
	_(NR_CCTR_TLS_FAILED, "tls_failed", "TLS handshakes that failed")                        \
	_(NR_CCTR_TLS_THROTTLED, "tls_throttled",                                               \
	  "TLS handshakes not started: their source started tls_handshakes_per_sec that second")  \
	_(NR_CCTR_ADDR_REFUSED, "addr_refused",                                                 \
	  "job_create refused: an address (IP or MAC) not the tenant's")                        \
	_(NR_CCTR_CONNS_ACCEPTED, "conns_accepted", "TCP connections accepted")                 \
	_(NR_CCTR_TENANT_CONNS_REFUSED, "tenant_conns_refused",                                 \
	  "TCP connections closed at their first request: the tenant held its max_conns")       \
	_(NR_CCTR_RESERVE_REFUSED, "reserve_refused",                                           \
	  "job_create refused: the room left was other tenants' reservations")
/* clang-format on */

enum nr_ctl_ctr { NR_FOREACH_CTL_CTR(NR_CTR_ENUM) NR_CCTR_MAX };

void nr_ctl_count(struct nr_ctl *c, enum nr_ctl_ctr k);
uint64_t nr_ctl_counter(struct nr_ctl *c, enum nr_ctl_ctr k);

/*
 * A job's name: job_create's optional "name" (the host library sends
 * NR_JOB), 1..NR_CTL_JOB_NAME_MAX of [A-Za-z0-9._:-]; in job_list,
 * job_status, the metrics' labels and the log lines, never a secret.
 */
#define NR_CTL_JOB_NAME_MAX 63

/* A job as the control API holds it, for metrics (nr_ctl_snapshot). */
struct nr_ctl_job_info {
	uint32_t id;
	char name[NR_CTL_JOB_NAME_MAX + 1];      /* "" without one */
	char tenant[NR_CTL_TENANT_NAME_MAX + 1]; /* "admin", or the tenant's name */
	uint32_t ranks, channels;
	uint64_t pool_bytes;                     /* nr_job_pool_bytes */
	uint32_t lease_ms;                       /* 0: none */
	uint64_t lease_left_ms;
	int status_rc;                           /* the backend's job_status: 0 or -errno;
						  * -EAGAIN: not asked */
	struct nr_job_stats st;                  /* when status_rc is 0 */
};

/* A tenant, its limits (0: none of its own) and what its jobs hold. */
struct nr_ctl_tenant_info {
	char name[NR_CTL_TENANT_NAME_MAX + 1];
	uint32_t jobs, max_jobs;
	uint64_t pool_bytes, max_pool_bytes;
	uint64_t quota_refused;                  /* its job_creates over a limit */
	uint64_t addr_refused;                   /* its job_creates naming an address not its own */
	uint64_t conns_refused;                  /* its connections over its max_conns */
	uint32_t max_conns;                      /* 0: the server's max_conns_per_tenant */
};

/*
 * Every job (status: with the backend's job_status of each) and tenant, in
 * malloc'd arrays the caller frees: 0, -ENOMEM, or -EBUSY when nr_ctl's lock
 * was not free within wait_ms (a request waiting on a stuck dataplane holds
 * it; 0: wait as long as it takes).  Counts nothing.
 */
int nr_ctl_snapshot(struct nr_ctl *c, bool status, unsigned wait_ms, struct nr_ctl_job_info **jobs,
		    unsigned *n_jobs, struct nr_ctl_tenant_info **tenants, unsigned *n_tenants);

/* Spec parsing and validation alone (tests, tools): NULL and err on failure. */
struct nr_job_spec *nr_ctl_spec_from_json(const json_t *spec, char *err, size_t errlen);

/* ---- the server --------------------------------------------------------- */

struct nr_ctl_server_cfg {
	const char *unix_path;     /* NULL: no UNIX socket */
	const char *tcp_addr;      /* "IP:PORT" or NULL: no TCP listener */
	const char *token;         /* the tenant "default" (no limits of its own); the TCP
				    * listener needs it or a tenant added before */
	unsigned max_conns;        /* TCP connections, 0: 64 (the UNIX socket has 4 more) */
	unsigned max_conns_per_source; /* unauthenticated TCP connections of one source address
				       * (an authenticated one counts against its tenant;
				       * past it the newest takes the oldest's place), 0:
				       * max_conns / 4, at least 16 (at most max_conns); an
				       * IPv4-mapped IPv6 peer is its IPv4 address, an IPv6 peer
				       * its own */
	unsigned max_conns_per_tenant; /* TCP connections of a tenant without max_conns of its
				       * own, counted from its first authenticated request;
				       * 0: as max_conns_per_source.  The tenant "default" of
				       * token: max_conns */
	unsigned idle_timeout_ms;  /* 0: 30000 */
	size_t max_line;           /* 0: 65536 */
	unsigned rate_per_sec;     /* requests per connection per second; 0: 100 */
	unsigned rate_burst;       /* burst above the rate; 0: 20 */
	const char *tls_cert;      /* PEM certificate (chain) of the box: TLS on the TCP
				    * listener, plain-text clients refused; NULL: plain TCP */
	const char *tls_key;       /* its PEM key, readable by its owner only */
	unsigned auth_fail_max;    /* failed authentications of one source address and
				    * claimed tenant (a request's "tenant", or none)
				    * within auth_fail_window_ms that block the pair; 0: 10 */
	unsigned auth_fail_window_ms; /* 0: 60000 */
	unsigned auth_block_ms;       /* how long the pair stays blocked; 0: 60000 */
	unsigned tls_handshakes_per_sec; /* TLS handshakes one source address may start in a
					  * second, more closed unread (tls_throttled); 0: 32 */
};

struct nr_ctl_server;

/* Starts a control thread serving both listeners; NULL and err on failure. */
struct nr_ctl_server *nr_ctl_server_start(struct nr_ctl *c, const struct nr_ctl_server_cfg *cfg,
					  char *err, size_t errlen);
/* The bound TCP port (useful with port 0), or -1 without a TCP listener. */
int nr_ctl_server_tcp_port(const struct nr_ctl_server *s);
/* Stops the thread, closes every socket, unlinks the UNIX path. */
void nr_ctl_server_stop(struct nr_ctl_server *s);

#endif /* NR_CONTROL_H */
