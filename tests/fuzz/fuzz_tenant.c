/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_tenant: the control API's tenancy (control/api/ctl_tenant.c: the
 * tenants table and file, nr_ctl_authenticate(_as), the addresses a tenant
 * may register, its reservations; ctl_epidx.c: the (IP, QPN) endpoints jobs
 * hold; ctl_api.c and ctl_request.c: job_create's address, quota,
 * reservation and endpoint checks, a job reached by its own tenant only,
 * nr_ctl_set_mac_pinning) against a shadow model, over a backend of the
 * fuzzer's own: each channel of a job one job of an in-process engine, the
 * box's capacity (jobs, channels, mbufs) said and enforced or not, refusals
 * injected on request.
 *
 * Input (reads past the end give zeros):
 *   byte 0  bits 0-1: 2 + b % 3 tenants; bit 2: MAC pinning; bit 3: the
 *           tenants given as a generated tenants file (a refused file: then
 *           through nr_ctl_tenant_add); bit 4: that file mode 0644 (refused);
 *           bit 5: a raw tenants file follows; bit 6: the backend has a
 *           capacity, its byte follows;
 *   cap     (bit 6) jobs { none, 6, 12, 80 }[b & 3], channels { none, 8, 16,
 *           40 }[b >> 2 & 3], mbufs { none, 64, 512, 4096 }[b >> 4 & 3];
 *   raw     (bit 5) u16 length L (% 2048), L bytes loaded as a tenants file
 *           after the tenants are in: it loads or says why, all or nothing;
 *   tenant  7 bytes each: flags (bit 0 ips listed, else any address; 1 macs
 *           listed; 2 max_jobs; 3 max_pool_bytes; 4 max_conns; 5-6 token: its
 *           own, the previous one's plus "x", 255 characters, 16; 7 the bad
 *           name's kind), the ranges (a bit each of ranges[]), the MACs (a bit
 *           each of 8), max_jobs / max_conns, max_pool_bytes, a fault (1 name
 *           twice, 2 token twice, 3 short token, 4 bad name, 5 bad range, 6
 *           multicast MAC, 7 max_jobs 65: refused by a file only), the
 *           reservations (reserve_jobs and reserve_channels { 0, 1, 2, 4 }[b &
 *           3], [b >> 2 & 3], reserve_mbufs { 0, 8, ... 4096 }[b >> 4 & 7]);
 *   ops     [op] then its arguments, op % 10:
 *           0 job_create [who][shape: ranks, mtu, msg_size, pool_msgs][flags:
 *             1 bad spec, 2 a name, 4 the backend refuses, 8 two channels, 16
 *             a "tenant" field] then 3 bytes a connection
 *             ([ips: src | dst << 4 of ip_text][qpns: 1 + (b & 7), 1 + (b >> 4
 *             & 7)][macs: src | dst << 4, 0 none, 1-8 the pool, 9 the zero
 *             MAC, 10 nobody's, 11-15 the pool in capitals]);
 *           1 job_destroy, 2 job_status, 3 job_renew [who][job][key]: job b %
 *             (jobs made + 1), the last one no job's id; key % 8: the right
 *             one, none, a digit off, another job's, in capitals, 31 digits,
 *             33 digits, not a string;
 *           4 job_list [who]; 5 authenticate [tenant][variant]: the token %
 *             8: itself, a prefix, an x more, its last or first byte off,
 *             empty, a NUL more, another tenant's (cut to its length); the
 *             tenant claimed (b >> 4 & 3): none (nr_ctl_authenticate), its
 *             own, the other's, no tenant's (nr_ctl_authenticate_as);
 *           6 stats [who]; 7 MAC pinning toggled; 8 a connection of a tenant
 *           refused (nr_ctl_tenant_conn_refused) [tenant]; 9 the backend's
 *           next job_destroy refused.
 *           who: tenant (b % (n + 2)) < n, n the admin, n + 1 an id without a
 *           tenant.
 *   Then every live job is destroyed, each by its creator with its key.
 *
 * Invariants (a violation traps):
 *   - a tenants file loads all its tenants or none (-errno and an error
 *     text); a generated one exactly when every tenant in it is valid; what
 *     a raw one loads is what its JSON says (names and tokens), each tenant
 *     within the file's rules (name, token 16..255 without NUL and unique,
 *     limits, 1..256 ranges without host bits, unicast MACs); nr_ctl_tenant_add
 *     refuses exactly the model's bad configurations (-EEXIST / -EINVAL /
 *     -ENOSPC for reservations past max_jobs or the box, an error text) and
 *     adds nothing then;
 *   - authentication answers the tenant whose token equals the bytes given,
 *     same length (never a prefix, an extension, a NUL more), and with a
 *     claimed tenant only that one, else -1;
 *   - job_create is refused exactly when the model says, for the model's
 *     reason, in the code's order: a bad spec; an IP outside a listed tenant's
 *     ranges or a MAC not in its list (without a list: none on a box that pins
 *     MACs for two or more tenants) (addr_refused); the tenant's max_jobs or
 *     max_pool_bytes (quota_refused); room only other tenants' unused
 *     reservations leave (reserve_refused); 64 jobs; an endpoint (IP, QPN) a
 *     live job holds in any role (the admin told which job, a tenant
 *     "another job"); the backend's refusal (its capacity); every refusal
 *     with an error text, and nothing held after it;
 *   - job_destroy/status/renew succeed only for the admin (no key, or the
 *     right one) or the job's own creator with its key; a tenant is told the
 *     same "wrong or missing key" whether the job exists or not; job_list and
 *     the tenants rows of stats are the admin's only;
 *   - after every operation: the snapshot's jobs and tenants (jobs, pool
 *     bytes, limits, quota_refused, addr_refused, conns_refused, max_conns),
 *     the stats rows (reservations, reserve_refused) and the API's counters
 *     equal the model's; no tenant past its max_jobs or max_pool_bytes; what
 *     the jobs hold plus every tenant's unused reservation within what the
 *     box holds, of each resource (a tenant can always have what it
 *     reserved); every job of a tenant with ranges inside them; no endpoint
 *     in two jobs; the endpoint index finds exactly the live jobs'
 *     endpoints, each at its job; the backend holds exactly the live jobs;
 *   - after every job is destroyed the index is empty (every word 0), the
 *     engine holds no job; nothing leaks.
 *
 * Where the code's rule is stricter than a naive one, the model follows the
 * code (ctl_tenant.c): a MAC list binds a tenant whether or not the box pins
 * MACs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "control/api/ctl_jobs.h"
#include "control/api/nr_control.h"
#include "dataplane/engine/agg_engine.h"

#include "nrz_fuzz.h"

#define MAX_TEN   4
#define MAX_TRACK 256
#define MAX_CONNS 8
#define MAX_OPS   160
#define NIPS      16
#define NQPNS     8
#define NRANGES   8
#define NMACS     8
#define NO_JOB_ID 999983u

/* ---- the address pool ------------------------------------------------------------- */

/* The addresses of jobs: in one range or two, on either side of a range's ends
 * (10.1.0.4-6 around 10.1.0.5, 10.2.0.2 past 10.2.0.0/31), in no range. */
/* clang-format off */
static const char *const ip_text[NIPS] = {
	"10.0.0.1", "10.0.0.2", "10.0.1.1", "10.0.1.2", "10.0.2.1", "10.0.2.2",
	"10.0.3.1", "10.1.0.4", "10.0.4.1", "10.1.0.5", "10.1.0.6", "10.2.0.0",
	"10.2.0.1", "10.2.0.2", "192.168.7.1", "10.0.0.255",
};

/* the ranges a tenant may list: text, network (host order), length */
static const struct {
	const char *text;
	uint32_t net;
	unsigned len;
} ranges[NRANGES] = {
	{ "10.0.0.0/24", 0x0a000000u, 24 }, { "10.0.1.0/24", 0x0a000100u, 24 },
	{ "10.0.2.0/24", 0x0a000200u, 24 }, { "10.0.3.0/24", 0x0a000300u, 24 },
	{ "10.0.0.0/16", 0x0a000000u, 16 }, { "10.1.0.5", 0x0a010005u, 32 },
	{ "10.2.0.0/31", 0x0a020000u, 31 }, { "192.168.7.0/24", 0xc0a80700u, 24 },
};
/* clang-format on */

static uint32_t ip_host[NIPS]; /* ip_text in host order */
static uint32_t ip_net[NIPS];  /* and network order */

/* MAC k (1..8) of the pool: 02:ab:00:00:00:0k */
static void pool_mac(unsigned k, uint8_t m[6])
{
	const uint8_t v[6] = { 0x02, 0xab, 0, 0, 0, (uint8_t)k };

	memcpy(m, v, 6);
}

static void init_pool(void)
{
	static bool done;

	if (done)
		return;
	for (unsigned i = 0; i < NIPS; i++) {
		struct in_addr a;

		NRZ_CHECK(inet_pton(AF_INET, ip_text[i], &a) == 1, "pool ip %s", ip_text[i]);
		ip_net[i] = a.s_addr;
		ip_host[i] = ntohl(a.s_addr);
	}
	done = true;
}

/* ---- the backend: each channel a job of one engine, refusals on request ------------- */

struct tb {
	struct agg_engine *eng;
	unsigned eng_jobs;        /* engine jobs (channels) */
	unsigned jobs;            /* control jobs held */
	uint32_t id[NR_MAX_JOBS]; /* control job ids held, 0 free */
	uint8_t chans[NR_MAX_JOBS];
	uint64_t frames[NR_MAX_JOBS];
	bool fail_create, fail_destroy;
	struct nr_backend_cap cap; /* what it holds (with tb_ops_cap), enforced here */
	unsigned chans_used;
	uint64_t frames_used;
};

static int tb_create(struct nr_backend *b, uint32_t id, const struct nr_job_spec *s,
		     uint32_t *credits, char *err, size_t errlen)
{
	struct tb *t = b->priv;
	unsigned n = nr_job_channels(s), k, slot = NR_MAX_JOBS;
	struct nr_job_spec *one;
	int rc = 0;

	if (t->fail_create) {
		t->fail_create = false;
		snprintf(err, errlen, "injected refusal");
		return -EIO;
	}
	if ((t->cap.jobs && t->jobs + 1 > t->cap.jobs) ||
	    (t->cap.channels && t->chans_used + n > t->cap.channels) ||
	    (t->cap.mbufs && t->frames_used + nr_job_held_frames(s) > t->cap.mbufs)) {
		snprintf(err, errlen, "box full");
		return -ENOSPC;
	}
	if (t->eng_jobs + n > NR_MAX_JOBS) {
		snprintf(err, errlen, "engine full");
		return -ENOSPC;
	}
	for (k = 0; k < NR_MAX_JOBS && slot == NR_MAX_JOBS; k++)
		if (!t->id[k])
			slot = k;
	NRZ_CHECK(slot < NR_MAX_JOBS, "backend asked for a job past %u", NR_MAX_JOBS);
	one = malloc(nr_job_spec_size(s->n_conns));
	NRZ_CHECK(one != NULL, "malloc");
	for (k = 0; k < n && !rc; k++) {
		nr_job_channel_spec(s, k, one);
		rc = agg_engine_job_add(t->eng, id * 16 + k, one, 1000000000ull, credits, err,
					errlen);
	}
	free(one);
	if (rc) {
		for (unsigned c = 0; c + 1 < k; c++)
			agg_engine_job_del(t->eng, id * 16 + c);
		return rc;
	}
	t->id[slot] = id;
	t->chans[slot] = (uint8_t)n;
	t->frames[slot] = nr_job_held_frames(s);
	t->eng_jobs += n;
	t->chans_used += n;
	t->frames_used += t->frames[slot];
	t->jobs++;
	return 0;
}

static int tb_destroy(struct nr_backend *b, uint32_t id)
{
	struct tb *t = b->priv;

	if (t->fail_destroy) {
		t->fail_destroy = false;
		return -EIO;
	}
	for (unsigned k = 0; k < NR_MAX_JOBS; k++) {
		if (t->id[k] != id)
			continue;
		for (unsigned c = 0; c < t->chans[k]; c++)
			NRZ_CHECK(agg_engine_job_del(t->eng, id * 16 + c) == 0, "engine job %u.%u",
				  id, c);
		t->eng_jobs -= t->chans[k];
		t->chans_used -= t->chans[k];
		t->frames_used -= t->frames[k];
		t->jobs--;
		t->id[k] = 0;
		return 0;
	}
	return -ENOENT;
}

static int tb_status(struct nr_backend *b, uint32_t id, struct nr_job_stats *st)
{
	struct tb *t = b->priv;

	return agg_engine_job_stats(t->eng, id * 16, st);
}

static json_t *tb_info(struct nr_backend *b)
{
	(void)b;
	return json_pack("{s:s}", "kernel", "fuzz");
}

static void tb_capacity(struct nr_backend *b, struct nr_backend_cap *cap)
{
	struct tb *t = b->priv;

	*cap = t->cap;
}

static const struct nr_backend_ops tb_ops = {
	.name = "sw",
	.job_create = tb_create,
	.job_destroy = tb_destroy,
	.job_status = tb_status,
	.info = tb_info,
};

/* The same with a capacity, which the tenants' reservations share out. */
static const struct nr_backend_ops tb_ops_cap = {
	.name = "sw",
	.job_create = tb_create,
	.job_destroy = tb_destroy,
	.job_status = tb_status,
	.info = tb_info,
	.capacity = tb_capacity,
};

/* ---- the model ------------------------------------------------------------------------ */

struct tcfg { /* a tenant as the input asks for it */
	char name[48];
	char token[300];
	bool any_ip, mac_list;
	uint8_t rng, macs; /* bit masks of ranges[] and the MAC pool */
	uint32_t max_jobs, max_conns;
	uint64_t max_pool;
	uint64_t res[3]; /* reserve_jobs, reserve_channels, reserve_mbufs */
	unsigned fault;
};

struct mten { /* a tenant the table holds */
	struct tcfg c;
	uint64_t quota_refused, addr_refused, conns_refused, reserve_refused;
};

struct mjob {
	uint32_t id;
	char key[33];
	int who;
	bool live;
	uint32_t lease;
	unsigned n_eps;
	uint8_t ep_ip[2 * MAX_CONNS], ep_qpn[2 * MAX_CONNS]; /* ip: of ip_text[] */
	uint64_t pool;
	uint64_t use[3]; /* 1, channels, held frames: what it takes of the box */
};

struct fz {
	struct tb tb;
	struct nr_ctl *c;
	struct mten t[MAX_TEN];
	unsigned nt;      /* model tenants: ids 0..nt-1 */
	unsigned n_total; /* and the raw file's after them */
	bool pinning;
	struct mjob j[MAX_TRACK];
	unsigned nj, live;
	bool fail_create; /* asked of the backend, not yet used */
	uint64_t cap[3];  /* jobs, channels, mbufs the reservations share (0: no limit) */
	uint64_t created, destroyed, addr_ref, quota_ref, reserve_ref, bad_key;
};

/* Tenant t's reservation of resource r: the model's, or what the raw file gave it. */
static uint64_t res_of(const struct fz *f, unsigned t, unsigned r)
{
	const struct ctl_tenant *x = &f->c->tenants.t[t];

	if (t < f->nt)
		return f->t[t].c.res[r];
	return r == 0 ? x->reserve_jobs : r == 1 ? x->reserve_channels : x->reserve_mbufs;
}

static const char *who_name(const struct fz *f, int who, char *buf, size_t len)
{
	if (who == NR_CTL_ADMIN)
		return "admin";
	if (who >= 0 && (unsigned)who < f->n_total)
		return f->c->tenants.t[who].name;
	snprintf(buf, len, "tenant-%d", who);
	return buf;
}

static int pick_who(const struct fz *f, uint8_t b)
{
	unsigned w = b % (f->nt + 2);

	if (w < f->nt)
		return (int)w;
	return w == f->nt ? NR_CTL_ADMIN : (int)f->n_total + 2;
}

static bool ip_mine(const struct tcfg *t, unsigned ip)
{
	if (t->any_ip)
		return true;
	for (unsigned r = 0; r < NRANGES; r++) {
		uint32_t m = ranges[r].len ? ~0u << (32 - ranges[r].len) : 0;

		if ((t->rng >> r & 1) && (ip_host[ip] & m) == ranges[r].net)
			return true;
	}
	return false;
}

/* mac index of the input: 0 none, 1-8 the pool, 9 zero, 10 nobody's, 11-15 the pool */
static unsigned mac_pool_of(unsigned mi)
{
	return mi >= 1 && mi <= 8 ? mi : mi >= 11 ? mi - 10 : 0;
}

static bool mac_mine(const struct tcfg *t, unsigned tenants, unsigned mi)
{
	if (mi == 0 || mi == 9)
		return true;
	if (!t->mac_list)
		return tenants < 2;
	return mac_pool_of(mi) && (t->macs >> (mac_pool_of(mi) - 1) & 1);
}

/* ---- requests ------------------------------------------------------------------------- */

/* One request line in an exact-size buffer; the reply checked and parsed. */
static json_t *request(struct fz *f, const char *line, int who)
{
	size_t n = strlen(line);
	char *exact = malloc(n ? n : 1), *reply;
	json_error_t je;
	json_t *r, *ok;

	NRZ_CHECK(exact != NULL, "malloc");
	memcpy(exact, line, n);
	reply = nr_ctl_handle(f->c, exact, n, who);
	free(exact);
	NRZ_CHECK(reply != NULL, "no reply to %s", line);
	NRZ_CHECK(!strchr(reply, '\n'), "reply spans lines: %s", reply);
	r = json_loads(reply, 0, &je);
	NRZ_CHECK(json_is_object(r), "reply is not a JSON object (%s): %s", je.text, reply);
	ok = json_object_get(r, "ok");
	NRZ_CHECK(json_is_boolean(ok), "reply without a boolean ok: %s", reply);
	if (!json_is_true(ok)) {
		json_t *e = json_object_get(r, "error");

		NRZ_CHECK(json_is_string(e) && json_string_length(e) > 0,
			  "refusal without an error text: %s", reply);
	}
	free(reply);
	return r;
}

static const char *err_of(json_t *r)
{
	const char *e = json_string_value(json_object_get(r, "error"));

	return e ? e : "";
}

/* ---- tenants -------------------------------------------------------------------------- */

static void tenant_cfg(struct nrz_in *in, unsigned k, const struct tcfg *prev, struct tcfg *t)
{
	uint8_t fl = nrz_u8(in), rng = nrz_u8(in), macs = nrz_u8(in), lim = nrz_u8(in);
	uint8_t pool = nrz_u8(in), fault = nrz_u8(in), res = nrz_u8(in);
	static const uint64_t pools[6] = { 512, 4096, 65536, 1u << 20, 16u << 20, 1ull << 34 };
	static const uint64_t rjc[4] = { 0, 1, 2, 4 };
	static const uint64_t rm[8] = { 0, 8, 32, 64, 128, 512, 1024, 4096 };

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "t%u", k);
	switch (fl >> 5 & 3) {
	case 0:
		snprintf(t->token, sizeof(t->token), "token-of-tenant-%c-0123456789", 'a' + k);
		break;
	case 1:
		if (prev)
			snprintf(t->token, sizeof(t->token), "%.280sx", prev->token);
		else
			snprintf(t->token, sizeof(t->token), "token-of-tenant-%c", 'a' + k);
		break;
	case 2:
		memset(t->token, 'A' + (int)k, 255);
		t->token[0] = 'L';
		break;
	default: snprintf(t->token, sizeof(t->token), "0123456789abcde%c", 'a' + k); break;
	}
	t->any_ip = !(fl & 1);
	t->rng = rng;
	t->mac_list = fl & 2;
	t->macs = macs;
	t->max_jobs = fl & 4 ? 1 + lim % 4 : 0;
	t->max_conns = fl & 16 ? 1 + (lim >> 4) : 0;
	t->max_pool = fl & 8 ? pools[pool % 6] : 0;
	t->res[0] = rjc[res & 3];
	t->res[1] = rjc[res >> 2 & 3];
	t->res[2] = rm[res >> 4 & 7];
	t->fault = fault < 8 ? fault : 0;
	switch (t->fault) {
	case 1: snprintf(t->name, sizeof(t->name), "t0"); break;
	case 2: snprintf(t->token, sizeof(t->token), "token-of-tenant-a-0123456789"); break;
	case 3: snprintf(t->token, sizeof(t->token), "fifteen-chars-%c", 'a' + k); break;
	case 4:
		if (fl & 128)
			snprintf(t->name, sizeof(t->name), "t %u", k);
		else
			snprintf(t->name, sizeof(t->name), "t%031u", k);
		break;
	case 7: t->max_jobs = 65; break;
	default: break;
	}
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > NR_CTL_TENANT_NAME_MAX)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* What ctl_tenants_add answers for t, given the table: 0 or -errno. */

/* A reservation past what the tenant's own limits let it use (ctl_tenant.c):
 * reserve_jobs past max_jobs, reserve_channels past 16 a job of them,
 * reserve_mbufs past max_pool_bytes / 256 (the least MTU). */
static bool res_past_limits(const struct tcfg *t)
{
	return (t->max_jobs && (t->res[0] > t->max_jobs ||
				t->res[1] > (uint64_t)t->max_jobs * NR_MAX_CHANNELS)) ||
	       (t->max_pool && t->res[2] > t->max_pool / 256);
}

static int expect_add(const struct fz *f, const struct tcfg *t)
{
	size_t len = strlen(t->token);

	if (!name_ok(t->name))
		return -EINVAL;
	if (len < NR_CTL_TOKEN_MIN || len > 255)
		return -EINVAL;
	for (unsigned i = 0; i < f->nt; i++)
		if (!strcmp(f->t[i].c.name, t->name) || !strcmp(f->t[i].c.token, t->token))
			return -EEXIST;
	if (res_past_limits(t))
		return -EINVAL;
	for (unsigned r = 0; r < 3; r++) {
		uint64_t sum = t->res[r];

		for (unsigned i = 0; i < f->n_total; i++)
			sum += res_of(f, i, r);
		if (f->cap[r] && sum > f->cap[r])
			return -ENOSPC; /* reservations the box cannot honour */
	}
	if (t->fault == 5 || t->fault == 6)
		return -EINVAL;
	return 0;
}

/* Add t through the API (its lists as the file would give them, or none). */
static void add_api(struct fz *f, const struct tcfg *t)
{
	const char *ips[NRANGES + 1], *macs[NMACS + 1];
	char mac_text[NMACS][18];
	struct nr_ctl_tenant_cfg cfg = { .name = t->name,
					 .token = t->token,
					 .max_jobs = t->max_jobs,
					 .max_pool_bytes = t->max_pool,
					 .max_conns = t->max_conns,
					 .reserve_jobs = (uint32_t)t->res[0],
					 .reserve_channels = (uint32_t)t->res[1],
					 .reserve_mbufs = t->res[2] };
	unsigned ni = 0, nm = 0;
	char err[256] = "";
	int want = expect_add(f, t), rc;

	for (unsigned r = 0; r < NRANGES; r++)
		if (t->rng >> r & 1)
			ips[ni++] = ranges[r].text;
	if (t->fault == 5)
		ips[ni++] = "10.0.0.1/24"; /* host bits set */
	for (unsigned m = 0; m < NMACS; m++)
		if (t->macs >> m & 1) {
			snprintf(mac_text[nm], sizeof(mac_text[nm]), "02:ab:00:00:00:%02x", m + 1);
			macs[nm] = mac_text[nm];
			nm++;
		}
	if (t->fault == 6)
		macs[nm++] = "01:00:5e:00:00:01";
	if (!t->any_ip || t->fault == 5) {
		cfg.ips = ips;
		cfg.n_ips = ni;
	}
	if (t->mac_list || t->fault == 6) {
		cfg.macs = macs;
		cfg.n_macs = nm;
	}
	rc = nr_ctl_tenant_add(f->c, &cfg, err, sizeof(err));
	NRZ_CHECK(rc == (want ? want : (int)f->nt), "tenant_add %s: %d (%s), the model %d", t->name,
		  rc, err, want ? want : (int)f->nt);
	if (rc < 0) {
		NRZ_CHECK(err[0], "tenant_add %s: %d without an error text", t->name, rc);
		NRZ_CHECK(nr_ctl_tenants(f->c) == f->nt, "a refused tenant added");
		return;
	}
	f->t[f->nt++].c = *t;
	f->n_total = f->nt;
}

/* A tenants file's bytes into a memfd of mode 0600 (or 0644); its /proc path in path. */
static int file_of(const void *d, size_t n, bool open_mode, char *path, size_t len)
{
	int fd = memfd_create("nrz-tenants", MFD_CLOEXEC);

	NRZ_CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	NRZ_CHECK(n == 0 || write(fd, d, n) == (ssize_t)n, "write: %s", strerror(errno));
	NRZ_CHECK(fchmod(fd, open_mode ? 0644 : 0600) == 0, "fchmod: %s", strerror(errno));
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* The tenants as a generated tenants file: loaded exactly when every one is valid. */
static bool add_file(struct fz *f, const struct tcfg *t, unsigned n, bool open_mode)
{
	static const char *const res_field[3] = { "reserve_jobs", "reserve_channels",
						  "reserve_mbufs" };
	json_t *arr = json_array(), *root;
	bool valid = !open_mode;
	char path[64], err[512] = "", *text;
	uint64_t sum[3] = { 0 };
	int fd, rc;

	for (unsigned k = 0; k < n; k++) {
		json_t *o = json_pack("{s:s,s:s}", "name", t[k].name, "token", t[k].token);
		json_t *ips = json_array(), *macs = json_array();

		NRZ_CHECK(o && ips && macs, "json");
		if (t[k].any_ip)
			json_array_append_new(ips, json_string("0.0.0.0/0"));
		for (unsigned r = 0; !t[k].any_ip && r < NRANGES; r++)
			if (t[k].rng >> r & 1)
				json_array_append_new(ips, json_string(ranges[r].text));
		if (t[k].fault == 5)
			json_array_append_new(ips, json_string("10.0.0.0/33"));
		for (unsigned m = 0; m < NMACS; m++)
			if (t[k].macs >> m & 1) {
				char s[18];

				snprintf(s, sizeof(s), "02:ab:00:00:00:%02x", m + 1);
				json_array_append_new(macs, json_string(s));
			}
		if (t[k].fault == 6)
			json_array_append_new(macs, json_string("01:00:5e:00:00:01"));
		json_object_set_new(o, "ips", ips);
		if (t[k].mac_list || t[k].fault == 6)
			json_object_set_new(o, "macs", macs);
		else
			json_decref(macs);
		if (t[k].max_jobs)
			json_object_set_new(o, "max_jobs", json_integer(t[k].max_jobs));
		if (t[k].max_pool)
			json_object_set_new(o, "max_pool_bytes",
					    json_integer((json_int_t)t[k].max_pool));
		if (t[k].max_conns)
			json_object_set_new(o, "max_conns", json_integer(t[k].max_conns));
		for (unsigned r = 0; r < 3; r++) {
			if (t[k].res[r])
				json_object_set_new(o, res_field[r],
						    json_integer((json_int_t)t[k].res[r]));
			sum[r] += t[k].res[r];
			if (f->cap[r] && sum[r] > f->cap[r])
				valid = false;
		}
		if (res_past_limits(&t[k]))
			valid = false;
		json_array_append_new(arr, o);
		/* the table's rules, and the file's own: ips and macs 1..n of them, max_jobs 1..64 */
		if (!name_ok(t[k].name) || strlen(t[k].token) < NR_CTL_TOKEN_MIN ||
		    strlen(t[k].token) > 255 || t[k].fault >= 5 || (!t[k].any_ip && !t[k].rng) ||
		    (t[k].mac_list && !t[k].macs))
			valid = false;
		for (unsigned i = 0; i < k; i++)
			if (!strcmp(t[i].name, t[k].name) || !strcmp(t[i].token, t[k].token))
				valid = false;
	}
	root = json_pack("{s:o}", "tenants", arr);
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	NRZ_CHECK(text != NULL, "json_dumps");
	fd = file_of(text, strlen(text), open_mode, path, sizeof(path));
	rc = nr_ctl_tenants_load(f->c, path, err, sizeof(err));
	close(fd);
	NRZ_CHECK(valid ? rc == (int)n : rc < 0, "tenants file of %u (valid %d): %d (%s): %s", n,
		  valid, rc, err, text);
	free(text);
	if (rc < 0) {
		NRZ_CHECK(err[0], "a refused tenants file without an error text");
		NRZ_CHECK(nr_ctl_tenants(f->c) == 0, "a refused tenants file added %u tenants",
			  nr_ctl_tenants(f->c));
		return false;
	}
	for (unsigned k = 0; k < n; k++)
		f->t[k].c = t[k];
	f->nt = f->n_total = n;
	return true;
}

/* Raw bytes as a tenants file: loaded or refused, all or nothing, as its JSON says. */
static void add_raw(struct fz *f, const uint8_t *d, size_t n)
{
	const struct ctl_tenants *ts = &f->c->tenants;
	unsigned n0 = nr_ctl_tenants(f->c);
	char path[64], err[512] = "";
	json_error_t je;
	json_t *root, *arr;
	int fd = file_of(d, n, false, path, sizeof(path)), rc;

	rc = nr_ctl_tenants_load(f->c, path, err, sizeof(err));
	close(fd);
	if (rc < 0) {
		NRZ_CHECK(err[0] && !strncmp(err, "tenants file ", 13),
			  "a refused tenants file: %d, error \"%s\"", rc, err);
		NRZ_CHECK(nr_ctl_tenants(f->c) == n0, "a refused tenants file changed the table");
		return;
	}
	NRZ_CHECK(nr_ctl_tenants(f->c) == n0 + (unsigned)rc, "loaded %d, the table %u -> %u", rc,
		  n0, nr_ctl_tenants(f->c));
	root = json_loadb((const char *)d, n, JSON_REJECT_DUPLICATES, &je);
	arr = json_object_get(root, "tenants");
	NRZ_CHECK(json_is_object(root) && json_object_size(root) == 1 && json_is_array(arr) &&
			  json_array_size(arr) == (size_t)rc,
		  "loaded %d tenants from a file that is not {\"tenants\": [%d of them]}", rc, rc);
	for (unsigned i = 0; i < (unsigned)rc; i++) {
		const struct ctl_tenant *t = &ts->t[n0 + i];
		json_t *o = json_array_get(arr, i);
		const char *tok = json_string_value(json_object_get(o, "token"));

		NRZ_CHECK(!strcmp(t->name, json_string_value(json_object_get(o, "name"))) &&
				  name_ok(t->name),
			  "tenant %u: name \"%s\"", i, t->name);
		NRZ_CHECK(tok && t->token_len == strlen(tok) && !memcmp(t->token, tok, t->token_len) &&
				  t->token_len >= NR_CTL_TOKEN_MIN && t->token_len <= 255 &&
				  strlen(t->token) == t->token_len,
			  "tenant %s: its token", t->name);
		for (unsigned k = 0; k < n0 + i; k++)
			NRZ_CHECK(strcmp(ts->t[k].name, t->name) &&
					  (ts->t[k].token_len != t->token_len ||
					   memcmp(ts->t[k].token, t->token, t->token_len)),
				  "tenant %s loaded beside tenant %s: same name or token", t->name,
				  ts->t[k].name);
		NRZ_CHECK(t->max_jobs <= NR_MAX_JOBS && t->max_pool_bytes <= (1ull << 50) &&
				  t->max_conns <= 4096,
			  "tenant %s: limits %u %llu %u", t->name, t->max_jobs,
			  (unsigned long long)t->max_pool_bytes, t->max_conns);
		NRZ_CHECK(!t->any_ip && t->n_ips >= 1 && t->n_ips <= 256, "tenant %s: %u ranges",
			  t->name, t->n_ips);
		for (unsigned r = 0; r < t->n_ips; r++) {
			uint32_t m = t->ips[r].len ? ~0u << (32 - t->ips[r].len) : 0;

			NRZ_CHECK(t->ips[r].len <= 32 && ntohl(t->ips[r].mask) == m &&
					  !(t->ips[r].net & ~t->ips[r].mask),
				  "tenant %s: range %u", t->name, r);
		}
		NRZ_CHECK(!t->macs == !json_object_get(o, "macs") && t->n_macs <= 4096 &&
				  (!t->macs || t->n_macs >= 1),
			  "tenant %s: %u macs", t->name, t->n_macs);
		for (unsigned m = 0; m < t->n_macs; m++)
			NRZ_CHECK(!(t->macs[m][0] & 1), "tenant %s: a group MAC", t->name);
	}
	json_decref(root);
	f->n_total = nr_ctl_tenants(f->c);
}

/* The tenant whose token is tok[0..len), by bytes: its id or -1. */
static int token_owner(const struct fz *f, const char *tok, size_t len)
{
	for (unsigned i = 0; i < f->n_total; i++) {
		const char *t = i < f->nt ? f->t[i].c.token : f->c->tenants.t[i].token;
		size_t n = i < f->nt ? strlen(t) : f->c->tenants.t[i].token_len;

		if (n == len && !memcmp(t, tok, len))
			return (int)i;
	}
	return -1;
}

static void op_auth(struct fz *f, uint8_t tb, uint8_t v)
{
	char tok[320];
	unsigned t = tb % f->n_total, o = (t + 1) % f->n_total;
	const char *base = t < f->nt ? f->t[t].c.token : f->c->tenants.t[t].token;
	size_t n = t < f->nt ? strlen(base) : f->c->tenants.t[t].token_len, len = n;
	const char *claim = NULL;
	char wbuf[24], wbuf2[24];
	int got = -2, want;

	memcpy(tok, base, n);
	switch (v % 8) {
	case 0: break;
	case 1: len = n - 1; break;      /* a prefix */
	case 2: tok[len++] = 'x'; break; /* longer */
	case 3: tok[n - 1] ^= 1; break;  /* its last byte off */
	case 4: tok[0] ^= 0x20; break;   /* its first byte off */
	case 5: len = 0; break;
	case 6: tok[len++] = '\0'; break; /* a NUL more */
	default: {                        /* another's, cut to this length */
		const char *b2 = o < f->nt ? f->t[o].c.token : f->c->tenants.t[o].token;
		size_t n2 = o < f->nt ? strlen(b2) : f->c->tenants.t[o].token_len;

		len = v >> 3 & 1 ? n2 : n < n2 ? n : n2;
		memcpy(tok, b2, len);
		break;
	}
	}
	want = token_owner(f, tok, len);
	switch (v >> 4 & 3) { /* the tenant the request claims: none, its own, another, nobody */
	case 0: got = nr_ctl_authenticate(f->c, tok, len); break;
	case 1: claim = who_name(f, (int)t, wbuf, sizeof(wbuf)); break;
	case 2: claim = who_name(f, (int)o, wbuf, sizeof(wbuf)); break;
	default: claim = v >> 6 ? "" : "nobody"; break;
	}
	if (claim) {
		got = nr_ctl_authenticate_as(f->c, claim, tok, len);
		if (want >= 0 && strcmp(claim, who_name(f, want, wbuf2, sizeof(wbuf2))))
			want = -1; /* the token is another's than the tenant claimed */
	}
	NRZ_CHECK(got == want,
		  "authenticate tenant %u's token, variant %u (%zu bytes) as %s: %d, the model %d",
		  t, v % 8, len, claim ? claim : "(none)", got, want);
}

/* ---- jobs ----------------------------------------------------------------------------- */

static struct mjob *holder(struct fz *f, unsigned ip, unsigned qpn)
{
	for (unsigned k = 0; k < f->nj; k++)
		for (unsigned e = 0; f->j[k].live && e < f->j[k].n_eps; e++)
			if (f->j[k].ep_ip[e] == ip && f->j[k].ep_qpn[e] == qpn)
				return &f->j[k];
	return NULL;
}

enum verdict { V_OK, V_SPEC, V_ADDR, V_QUOTA, V_RESERVE, V_FULL, V_TAKEN, V_BACKEND };

/* What the live jobs take: all of them, and each tenant's (tenants of the table). */
static void usage(const struct fz *f, uint64_t all[3], uint64_t used[][3])
{
	memset(all, 0, 3 * sizeof(all[0]));
	memset(used, 0, NR_CTL_MAX_TENANTS * sizeof(used[0]));
	for (unsigned k = 0; k < f->nj; k++)
		for (unsigned r = 0; f->j[k].live && r < 3; r++) {
			all[r] += f->j[k].use[r];
			if (f->j[k].who >= 0 && (unsigned)f->j[k].who < f->n_total)
				used[f->j[k].who][r] += f->j[k].use[r];
		}
}

/*
 * Whether a job taking need[] of who is refused for the other tenants'
 * reservations: a resource of the box it would take past what the box holds
 * less what the jobs hold less what each other tenant reserved and does not
 * use (none: only the backend's own limit, none of the reservations' doing).
 */
static bool reserve_refuses(const struct fz *f, int who, const uint64_t need[3])
{
	uint64_t all[3], used[NR_CTL_MAX_TENANTS][3];
	bool any = false;

	for (unsigned t = 0; t < f->n_total; t++)
		any |= res_of(f, t, 0) + res_of(f, t, 1) + res_of(f, t, 2) > 0;
	if (!any)
		return false;
	usage(f, all, used);
	for (unsigned r = 0; r < 3; r++) {
		uint64_t held = 0;

		for (unsigned t = 0; f->cap[r] && t < f->n_total; t++)
			if ((int)t != who && res_of(f, t, r) > used[t][r])
				held += res_of(f, t, r) - used[t][r];
		if (held && all[r] + held + need[r] > f->cap[r])
			return true;
	}
	return false;
}

struct conn {
	unsigned sip, dip, sq, dq, sm, dm;
};

static void put_mac(char **p, char *end, const char *field, unsigned mi)
{
	uint8_t m[6] = { 0 };

	if (mi == 0)
		return;
	if (mi == 10)
		pool_mac(0x99, m);
	else if (mi != 9)
		pool_mac(mac_pool_of(mi), m);
	*p += snprintf(*p, (size_t)(end - *p),
		       mi >= 11 ? ",\"%s\":\"%02X:%02X:%02X:%02X:%02X:%02X\""
				: ",\"%s\":\"%02x:%02x:%02x:%02x:%02x:%02x\"",
		       field, m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void op_create(struct fz *f, struct nrz_in *in)
{
	static const unsigned mtus[4] = { 256, 512, 1024, 4096 };
	static const unsigned sizes[4] = { 4, 1024, 4096, 16384 };
	static const unsigned pools[4] = { 2, 4, 8, 16 };
	int who = pick_who(f, nrz_u8(in));
	uint8_t shape = nrz_u8(in), fl = nrz_u8(in);
	unsigned ranks = 1 + shape % 4, ch = 1 + (fl >> 3 & 1), n = ranks * ch;
	unsigned mtu = mtus[shape >> 2 & 3], size = sizes[shape >> 4 & 3], pool = pools[shape >> 6];
	uint64_t need = (uint64_t)n * pool * ((size + mtu - 1) / mtu) * mtu;
	const uint64_t use[3] = { 1, ch, (uint64_t)n * pool * ((size + mtu - 1) / mtu) };
	const struct tcfg *t = who >= 0 && (unsigned)who < f->nt ? &f->t[who].c : NULL;
	unsigned tenants = f->pinning ? f->n_total : 1;
	struct conn cs[MAX_CONNS];
	enum verdict want = V_OK;
	struct mjob *taken = NULL;
	char line[4096], *p = line, *end = line + sizeof(line), wbuf[24];
	json_t *r;

	if (fl & 4) {
		f->fail_create = true;
		f->tb.fail_create = true;
	}
	for (unsigned k = 0; k < n; k++) {
		uint8_t a = nrz_u8(in), q = nrz_u8(in), m = nrz_u8(in);

		cs[k] = (struct conn){ a & 15, a >> 4, 1 + (q & 7), 1 + (q >> 4 & 7), m & 15, m >> 4 };
	}
	p += snprintf(p, (size_t)(end - p),
		      "{\"op\":\"job_create\",%s%s\"spec\":{\"mtu\":%u,"
		      "\"msg_size\":%u,\"pool_msgs\":%u,%s",
		      fl & 2 ? "\"name\":\"job-x.1\"," : "", fl & 16 ? "\"tenant\":\"t1\"," : "",
		      fl & 1 ? 1000 : mtu, size, pool, ch > 1 ? "\"channels\":[" : "");
	for (unsigned c = 0; c < ch; c++) {
		p += snprintf(p, (size_t)(end - p), "%s%s\"conns\":[", c ? "," : "",
			      ch > 1 ? "{" : "");
		for (unsigned i = 0; i < ranks; i++) {
			const struct conn *x = &cs[c * ranks + i];

			p += snprintf(p, (size_t)(end - p),
				      "%s{\"src_ip\":\"%s\",\"dst_ip\":\"%s\","
				      "\"src_qpn\":%u,\"dst_qpn\":%u,\"ipsn\":%u",
				      i ? "," : "", ip_text[x->sip], ip_text[x->dip], x->sq, x->dq,
				      i * 7);
			put_mac(&p, end, "src_mac", x->sm);
			put_mac(&p, end, "dst_mac", x->dm);
			p += snprintf(p, (size_t)(end - p), "}");
		}
		p += snprintf(p, (size_t)(end - p), ch > 1 ? "]}" : "]");
	}
	snprintf(p, (size_t)(end - p), "%s}}", ch > 1 ? "]" : "");

	/* the model: the code's order of checks */
	if (fl & 1)
		want = V_SPEC;
	for (unsigned a = 0; want == V_OK && a < n; a++)
		for (unsigned b = 0; b < n; b++) {
			if (a != b && cs[a].dip == cs[b].dip && cs[a].dq == cs[b].dq)
				want = V_SPEC; /* a receiver twice */
			if (a != b && cs[a].sip == cs[b].sip && cs[a].sq == cs[b].sq)
				want = V_SPEC; /* a sender twice */
			if (cs[a].dip == cs[b].sip && cs[a].dq == cs[b].sq)
				want = V_SPEC; /* a QP both receiving and sending */
		}
	for (unsigned k = 0; t && want == V_OK && k < n; k++)
		if (!ip_mine(t, cs[k].sip) || !ip_mine(t, cs[k].dip) ||
		    !mac_mine(t, tenants, cs[k].sm) || !mac_mine(t, tenants, cs[k].dm))
			want = V_ADDR;
	if (t && want == V_OK) {
		unsigned jobs = 0;
		uint64_t used = 0;

		for (unsigned k = 0; k < f->nj; k++)
			if (f->j[k].live && f->j[k].who == who) {
				jobs++;
				used += f->j[k].pool;
			}
		if ((t->max_jobs && jobs >= t->max_jobs) ||
		    (t->max_pool && used + need > t->max_pool))
			want = V_QUOTA;
	}
	if (want == V_OK && reserve_refuses(f, who, use))
		want = V_RESERVE;
	if (want == V_OK && f->live == NR_MAX_JOBS)
		want = V_FULL;
	for (unsigned k = 0; want == V_OK && k < n; k++) {
		taken = holder(f, cs[k].dip, cs[k].dq);
		if (!taken)
			taken = holder(f, cs[k].sip, cs[k].sq);
		if (taken)
			want = V_TAKEN;
	}
	if (want == V_OK && f->fail_create) {
		f->fail_create = false;
		want = V_BACKEND;
	}
	if (want == V_OK && ((f->tb.cap.jobs && f->tb.jobs + 1 > f->tb.cap.jobs) ||
			     (f->tb.cap.channels && f->tb.chans_used + ch > f->tb.cap.channels) ||
			     (f->tb.cap.mbufs && f->tb.frames_used + use[2] > f->tb.cap.mbufs) ||
			     f->tb.eng_jobs + ch > NR_MAX_JOBS))
		want = V_BACKEND; /* the box's own limits */

	r = request(f, line, who);
	if (want != V_OK) {
		const char *e = err_of(r);

		NRZ_CHECK(!json_is_true(json_object_get(r, "ok")),
			  "job_create by %s created, the model says %d: %s",
			  who_name(f, who, wbuf, sizeof(wbuf)), want, line);
		switch (want) {
		case V_ADDR:
			NRZ_CHECK(strstr(e, "is not tenant") || strstr(e, "has no macs"),
				  "address refusal: %s", e);
			f->t[who].addr_refused++;
			f->addr_ref++;
			break;
		case V_QUOTA:
			NRZ_CHECK(strstr(e, "at its quota") || strstr(e, "bytes of pool"),
				  "quota refusal: %s", e);
			f->t[who].quota_refused++;
			f->quota_ref++;
			break;
		case V_RESERVE:
			/* a tenant learns nothing of the others: no names, no holdings */
			NRZ_CHECK(t ? strstr(e, "beside what other tenants reserved") && !strstr(e, " held")
				    : strstr(e, "more reserved for tenants (") != NULL,
				  "reservation refusal: %s", e);
			if (t)
				f->t[who].reserve_refused++;
			f->reserve_ref++;
			break;
		case V_FULL: NRZ_CHECK(strstr(e, "jobs exist"), "full: %s", e); break;
		case V_TAKEN:
			if (who == NR_CTL_ADMIN) {
				char s[64];

				snprintf(s, sizeof(s), "belongs to job %u;", taken->id);
				NRZ_CHECK(strstr(e, s), "endpoint of job %u: %s", taken->id, e);
			} else {
				NRZ_CHECK(strstr(e, "belongs to another job;"),
					  "a tenant told of another's job: %s", e);
			}
			break;
		case V_BACKEND:
			NRZ_CHECK(strstr(e, "injected refusal") || strstr(e, "engine full") ||
					  strstr(e, "box full"),
				  "backend refusal: %s", e);
			break;
		default: break;
		}
	} else {
		json_t *id = json_object_get(r, "job"), *key = json_object_get(r, "key");
		struct mjob *j;

		NRZ_CHECK(json_is_true(json_object_get(r, "ok")),
			  "job_create by %s refused, the model creates it: %s: %s",
			  who_name(f, who, wbuf, sizeof(wbuf)), err_of(r), line);
		NRZ_CHECK(json_is_integer(id) && json_is_string(key) &&
				  json_string_length(key) == 32 &&
				  strspn(json_string_value(key), "0123456789abcdef") == 32,
			  "job_create reply: id, key");
		NRZ_CHECK(json_integer_value(json_object_get(r, "lease_ms")) ==
				  (who == NR_CTL_ADMIN ? 0 : NR_CTL_DEFAULT_LEASE_MS),
			  "job_create by %s: lease_ms %lld", who_name(f, who, wbuf, sizeof(wbuf)),
			  (long long)json_integer_value(json_object_get(r, "lease_ms")));
		for (unsigned k = 0; k < f->nj; k++)
			NRZ_CHECK(!f->j[k].live || f->j[k].id != (uint32_t)json_integer_value(id),
				  "job id %lld handed out twice", (long long)json_integer_value(id));
		f->created++;
		f->live++;
		if (f->nj < MAX_TRACK) {
			j = &f->j[f->nj++];
		} else { /* reuse a dead record */
			j = NULL;
			for (unsigned k = 0; k < f->nj && !j; k++)
				if (!f->j[k].live)
					j = &f->j[k];
			NRZ_CHECK(j != NULL, "more live jobs than records");
		}
		memset(j, 0, sizeof(*j));
		j->id = (uint32_t)json_integer_value(id);
		snprintf(j->key, sizeof(j->key), "%s", json_string_value(key));
		j->who = who;
		j->live = true;
		j->lease = who == NR_CTL_ADMIN ? 0 : NR_CTL_DEFAULT_LEASE_MS;
		j->pool = need;
		memcpy(j->use, use, sizeof(j->use));
		for (unsigned k = 0; k < n; k++) {
			j->ep_ip[j->n_eps] = (uint8_t)cs[k].sip;
			j->ep_qpn[j->n_eps++] = (uint8_t)cs[k].sq;
			j->ep_ip[j->n_eps] = (uint8_t)cs[k].dip;
			j->ep_qpn[j->n_eps++] = (uint8_t)cs[k].dq;
		}
	}
	json_decref(r);
}

/* job_destroy (1), job_status (2), job_renew (3): who, which job, which key. */
static void op_access(struct fz *f, unsigned op, uint8_t wb, uint8_t jb, uint8_t kv)
{
	static const char *const ops[4] = { "", "job_destroy", "job_status", "job_renew" };
	int who = pick_who(f, wb);
	unsigned ji = f->nj ? jb % (f->nj + 1) : 0, v = kv % 8;
	struct mjob *j = ji < f->nj ? &f->j[ji] : NULL, *other = NULL;
	uint32_t id = j ? j->id : NO_JOB_ID;
	bool admin = who == NR_CTL_ADMIN, exists = j && j->live, key_ok, want, bad = false;
	bool refused = false;
	char line[256], key[80] = "", wbuf[24];
	json_t *r;

	for (unsigned k = 1; j && k < f->nj && !other; k++)
		if (f->j[(ji + k) % f->nj].id != id)
			other = &f->j[(ji + k) % f->nj];
	switch (v) {
	case 0: snprintf(key, sizeof(key), ",\"key\":\"%s\"", j ? j->key : ""); break;
	case 1: break;
	case 2:
		snprintf(key, sizeof(key), ",\"key\":\"%s\"", j ? j->key : "");
		if (j)
			key[8] = key[8] == '0' ? '1' : '0';
		break;
	case 3: snprintf(key, sizeof(key), ",\"key\":\"%s\"", other ? other->key : ""); break;
	case 4:
		snprintf(key, sizeof(key), ",\"key\":\"%s\"", j ? j->key : "");
		for (char *c = key + 8; *c; c++) /* the digits, not "key" */
			if (*c >= 'a' && *c <= 'f')
				*c = (char)(*c - 'a' + 'A');
		break;
	case 5: snprintf(key, sizeof(key), ",\"key\":\"%.31s\"", j ? j->key : ""); break;
	case 6: snprintf(key, sizeof(key), ",\"key\":\"%s0\"", j ? j->key : ""); break;
	default: snprintf(key, sizeof(key), ",\"key\":5"); break;
	}
	snprintf(line, sizeof(line), "{\"op\":\"%s\",\"job\":%u%s}", ops[op], id, key);
	key_ok = j && (v == 0 || v == 4);
	if (v == 7) {
		want = false;
	} else if (admin) {
		want = exists && (v == 1 || key_ok);
		bad = exists && v != 1 && !key_ok;
	} else {
		want = exists && key_ok && j->who == who;
		bad = !want;
	}
	if (want && op == 1 && f->tb.fail_destroy) {
		want = false; /* the backend refuses: the job stays */
		refused = true;
	}
	r = request(f, line, who);
	NRZ_CHECK(json_is_true(json_object_get(r, "ok")) == want,
		  "%s by %s of job %u (live %d, of %d), key variant %u: ok %d, the model %d: %s",
		  ops[op], who_name(f, who, wbuf, sizeof(wbuf)), id, exists, j ? j->who : -9, v,
		  json_is_true(json_object_get(r, "ok")), want, err_of(r));
	if (bad) {
		f->bad_key++;
		NRZ_CHECK(strstr(err_of(r), "wrong or missing key"), "%s: %s", line, err_of(r));
	}
	if (refused)
		NRZ_CHECK(!f->tb.fail_destroy && strstr(err_of(r), "could not destroy"),
			  "destroy refused by the backend: %s", err_of(r));
	if (want && op == 1) {
		j->live = false;
		f->live--;
		f->destroyed++;
	} else if (want && op == 2) {
		json_t *o = json_object_get(r, "job");

		NRZ_CHECK(json_integer_value(json_object_get(o, "id")) == id &&
				  !strcmp(json_string_value(json_object_get(o, "tenant")),
					  who_name(f, j->who, wbuf, sizeof(wbuf))),
			  "job_status of job %u: another job's", id);
	} else if (want && op == 3) {
		NRZ_CHECK(json_integer_value(json_object_get(r, "lease_ms")) == j->lease,
			  "job_renew of job %u: lease_ms", id);
	}
	json_decref(r);
}

static void op_list(struct fz *f, int who)
{
	json_t *r = request(f, "{\"op\":\"job_list\"}", who), *arr = json_object_get(r, "jobs");
	char wbuf[24];

	NRZ_CHECK(json_is_true(json_object_get(r, "ok")) == (who == NR_CTL_ADMIN),
		  "job_list by %s: ok %d", who_name(f, who, wbuf, sizeof(wbuf)),
		  json_is_true(json_object_get(r, "ok")));
	if (who == NR_CTL_ADMIN) {
		NRZ_CHECK(json_array_size(arr) == f->live, "job_list: %zu jobs, the model %u",
			  json_array_size(arr), f->live);
		for (size_t i = 0; i < json_array_size(arr); i++) {
			json_t *o = json_array_get(arr, i);
			uint32_t id = (uint32_t)json_integer_value(json_object_get(o, "id"));
			bool found = false;

			for (unsigned k = 0; k < f->nj && !found; k++)
				if (f->j[k].live && f->j[k].id == id) {
					found = true;
					NRZ_CHECK(!strcmp(json_string_value(
								  json_object_get(o, "tenant")),
							  who_name(f, f->j[k].who, wbuf,
								   sizeof(wbuf))),
						  "job_list: job %u's tenant", id);
				}
			NRZ_CHECK(found, "job_list: job %u the model does not hold", id);
		}
	}
	json_decref(r);
}

static uint64_t row_u(json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

static void op_stats(struct fz *f, int who)
{
	json_t *r = request(f, "{\"op\":\"stats\"}", who);
	json_t *ctl = json_object_get(json_object_get(r, "stats"), "control");
	json_t *rows = json_object_get(ctl, "tenants");
	uint64_t all[3], used[NR_CTL_MAX_TENANTS][3];

	NRZ_CHECK(json_is_true(json_object_get(r, "ok")), "stats refused");
	NRZ_CHECK(row_u(ctl, "jobs") == f->live, "stats: jobs");
	if (who != NR_CTL_ADMIN) {
		NRZ_CHECK(!rows, "stats told a tenant the tenants");
		json_decref(r);
		return;
	}
	NRZ_CHECK(json_array_size(rows) == f->n_total, "stats: %zu tenants", json_array_size(rows));
	usage(f, all, used);
	for (unsigned i = 0; i < f->nt; i++) {
		json_t *o = json_array_get(rows, i);
		const struct mten *t = &f->t[i];
		uint64_t bytes = 0;

		for (unsigned k = 0; k < f->nj; k++)
			if (f->j[k].live && f->j[k].who == (int)i)
				bytes += f->j[k].pool;
		NRZ_CHECK(!strcmp(json_string_value(json_object_get(o, "name")), t->c.name) &&
				  row_u(o, "jobs") == used[i][0] && row_u(o, "pool_bytes") == bytes &&
				  row_u(o, "quota_refused") == t->quota_refused &&
				  row_u(o, "addr_refused") == t->addr_refused &&
				  row_u(o, "conns_refused") == t->conns_refused &&
				  row_u(o, "reserve_jobs") == t->c.res[0] &&
				  row_u(o, "reserve_channels") == t->c.res[1] &&
				  row_u(o, "reserve_mbufs") == t->c.res[2] &&
				  row_u(o, "reserve_refused") == t->reserve_refused,
			  "stats: tenant %s's row", t->c.name);
	}
	json_decref(r);
}

static void op_conn_refused(struct fz *f, uint8_t tb)
{
	unsigned t = tb % (f->nt + 1);
	char name[64] = "";
	uint32_t mc = 77;
	int rc = nr_ctl_tenant_conn_limit(f->c, t < f->nt ? (int)t : (int)f->n_total + 2, name,
					  sizeof(name), &mc);

	if (t == f->nt) {
		NRZ_CHECK(rc == -ENOENT, "conn limit of no tenant: %d", rc);
		nr_ctl_tenant_conn_refused(f->c, (int)f->n_total + 2);
		return;
	}
	NRZ_CHECK(rc == 0 && !strcmp(name, f->t[t].c.name) && mc == f->t[t].c.max_conns,
		  "conn limit of tenant %u: %d %s %u", t, rc, name, mc);
	nr_ctl_tenant_conn_refused(f->c, (int)t);
	f->t[t].conns_refused++;
}

/* ---- every operation's invariants ------------------------------------------------------ */

static void check_state(struct fz *f)
{
	struct nr_ctl_job_info *js = NULL;
	struct nr_ctl_tenant_info *ts = NULL;
	struct nr_ctl *c = f->c;
	unsigned njs = 0, nts = 0, eps = 0;
	const struct mjob *own[NIPS][NQPNS + 1] = { { NULL } };
	uint64_t all[3], used[NR_CTL_MAX_TENANTS][3];
	char wbuf[24];

	NRZ_CHECK(nr_ctl_snapshot(c, false, 0, &js, &njs, &ts, &nts) == 0, "snapshot");
	NRZ_CHECK(njs == f->live && f->tb.jobs == f->live, "%u jobs, the backend %u, the model %u",
		  njs, f->tb.jobs, f->live);
	for (unsigned i = 0; i < njs; i++) {
		const struct mjob *j = NULL;

		for (unsigned k = 0; k < f->nj && !j; k++)
			if (f->j[k].live && f->j[k].id == js[i].id)
				j = &f->j[k];
		NRZ_CHECK(j != NULL, "job %u the model does not hold", js[i].id);
		NRZ_CHECK(!strcmp(js[i].tenant, who_name(f, j->who, wbuf, sizeof(wbuf))) &&
				  js[i].pool_bytes == j->pool,
			  "job %u: tenant %s, pool %llu", js[i].id, js[i].tenant,
			  (unsigned long long)js[i].pool_bytes);
	}
	NRZ_CHECK(nts == f->n_total, "%u tenants, the model %u", nts, f->n_total);
	for (unsigned i = 0; i < f->nt; i++) {
		const struct mten *t = &f->t[i];
		unsigned jobs = 0;
		uint64_t bytes = 0;

		for (unsigned k = 0; k < f->nj; k++)
			if (f->j[k].live && f->j[k].who == (int)i) {
				jobs++;
				bytes += f->j[k].pool;
			}
		NRZ_CHECK(!strcmp(ts[i].name, t->c.name) && ts[i].jobs == jobs &&
				  ts[i].pool_bytes == bytes && ts[i].max_jobs == t->c.max_jobs &&
				  ts[i].max_pool_bytes == t->c.max_pool &&
				  ts[i].max_conns == t->c.max_conns &&
				  ts[i].quota_refused == t->quota_refused &&
				  ts[i].addr_refused == t->addr_refused &&
				  ts[i].conns_refused == t->conns_refused,
			  "tenant %s: jobs %u/%u pool %llu/%llu quota_refused %llu/%llu "
			  "addr_refused %llu/%llu conns_refused %llu/%llu",
			  t->c.name, ts[i].jobs, jobs, (unsigned long long)ts[i].pool_bytes,
			  (unsigned long long)bytes, (unsigned long long)ts[i].quota_refused,
			  (unsigned long long)t->quota_refused,
			  (unsigned long long)ts[i].addr_refused, (unsigned long long)t->addr_refused,
			  (unsigned long long)ts[i].conns_refused,
			  (unsigned long long)t->conns_refused);
		NRZ_CHECK(!t->c.max_jobs || ts[i].jobs <= t->c.max_jobs, "tenant %s: %u jobs of %u",
			  t->c.name, ts[i].jobs, t->c.max_jobs);
		NRZ_CHECK(!t->c.max_pool || ts[i].pool_bytes <= t->c.max_pool,
			  "tenant %s: %llu pool bytes of %llu", t->c.name,
			  (unsigned long long)ts[i].pool_bytes, (unsigned long long)t->c.max_pool);
	}
	free(js);
	free(ts);

	/* the jobs' own specs: a tenant's addresses, no endpoint in two jobs, the index */
	for (unsigned s = 0; s < NR_MAX_JOBS; s++) {
		const struct ctl_job *j = &c->jobs[s];

		if (!j->used)
			continue;
		for (uint32_t k = 0; k < nr_job_conns(j->spec); k++) {
			const struct nr_conn_spec *x = &j->spec->conns[k];
			const uint32_t ip[2] = { x->src_ip, x->dst_ip },
				       q[2] = { x->src_qpn, x->dst_qpn };

			for (unsigned e = 0; e < 2; e++) {
				NRZ_CHECK(ctl_epidx_find(&c->eps, ip[e], q[e]) == (int)s,
					  "job %u's endpoint (%08x, %u) indexed at %d", j->id,
					  ip[e], q[e], ctl_epidx_find(&c->eps, ip[e], q[e]));
				if (j->tenant >= 0 && (unsigned)j->tenant < f->nt) {
					unsigned pi = 0;

					while (pi < NIPS && ip_net[pi] != ip[e])
						pi++;
					NRZ_CHECK(pi < NIPS && ip_mine(&f->t[j->tenant].c, pi),
						  "job %u of tenant %s holds %08x", j->id,
						  f->t[j->tenant].c.name, ip[e]);
				}
				eps++;
			}
		}
	}
	/* every endpoint of the pool: where the model has it */
	for (unsigned k = 0; k < f->nj; k++)
		for (unsigned e = 0; f->j[k].live && e < f->j[k].n_eps; e++) {
			NRZ_CHECK(!own[f->j[k].ep_ip[e]][f->j[k].ep_qpn[e]],
				  "the model's endpoint twice");
			own[f->j[k].ep_ip[e]][f->j[k].ep_qpn[e]] = &f->j[k];
		}
	for (unsigned i = 0; i < NIPS; i++)
		for (uint32_t q = 1; q <= NQPNS; q++) {
			const struct mjob *h = own[i][q];
			int s = ctl_epidx_find(&c->eps, ip_net[i], q);

			NRZ_CHECK(h ? s >= 0 && c->jobs[s].used && c->jobs[s].id == h->id : s == -1,
				  "endpoint %s qpn %u: indexed at %d, the model's job %u",
				  ip_text[i], q, s, h ? h->id : 0);
		}
	/* each endpoint once among the jobs: the index holds one word a QP */
	NRZ_CHECK(c->eps.n == eps, "the index holds %u endpoints, the jobs %u", c->eps.n, eps);
	/* every tenant can still have what it reserved: what the jobs hold and what each
	 * tenant reserved and does not use fit in what the box holds */
	usage(f, all, used);
	for (unsigned r = 0; r < 3; r++) {
		uint64_t unused = 0;

		for (unsigned t = 0; t < f->n_total; t++)
			if (res_of(f, t, r) > used[t][r])
				unused += res_of(f, t, r) - used[t][r];
		NRZ_CHECK(!f->cap[r] || all[r] + unused <= f->cap[r],
			  "resource %u: jobs hold %llu, unused reservations %llu, the box %llu", r,
			  (unsigned long long)all[r], (unsigned long long)unused,
			  (unsigned long long)f->cap[r]);
	}
	NRZ_CHECK(nr_ctl_counter(c, NR_CCTR_ADDR_REFUSED) == f->addr_ref &&
			  nr_ctl_counter(c, NR_CCTR_QUOTA_REFUSED) == f->quota_ref &&
			  nr_ctl_counter(c, NR_CCTR_JOBS_CREATED) == f->created &&
			  nr_ctl_counter(c, NR_CCTR_JOBS_DESTROYED) == f->destroyed &&
			  nr_ctl_counter(c, NR_CCTR_BAD_KEY) == f->bad_key &&
			  nr_ctl_counter(c, NR_CCTR_RESERVE_REFUSED) == f->reserve_ref,
		  "counters: addr_refused %llu/%llu quota_refused %llu/%llu created %llu/%llu "
		  "destroyed %llu/%llu bad_key %llu/%llu reserve_refused %llu/%llu",
		  (unsigned long long)nr_ctl_counter(c, NR_CCTR_ADDR_REFUSED),
		  (unsigned long long)f->addr_ref,
		  (unsigned long long)nr_ctl_counter(c, NR_CCTR_QUOTA_REFUSED),
		  (unsigned long long)f->quota_ref,
		  (unsigned long long)nr_ctl_counter(c, NR_CCTR_JOBS_CREATED),
		  (unsigned long long)f->created,
		  (unsigned long long)nr_ctl_counter(c, NR_CCTR_JOBS_DESTROYED),
		  (unsigned long long)f->destroyed,
		  (unsigned long long)nr_ctl_counter(c, NR_CCTR_BAD_KEY),
		  (unsigned long long)f->bad_key,
		  (unsigned long long)nr_ctl_counter(c, NR_CCTR_RESERVE_REFUSED),
		  (unsigned long long)f->reserve_ref);
}

/* ---- the script ------------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nrz_in in = { data, size, 0 };
	struct fz *f = calloc(1, sizeof(*f));
	struct tcfg cfg[MAX_TEN];
	struct nr_backend *b;
	uint8_t h = nrz_u8(&in);
	unsigned n = 2 + (h & 3) % 3, ops = 0;
	const uint8_t *raw = NULL;
	size_t raw_len = 0;

	NRZ_CHECK(f != NULL, "calloc");
	init_pool();
	f->tb.eng = agg_engine_create(&(struct agg_engine_ops){ 0 });
	NRZ_CHECK(f->tb.eng != NULL, "engine");
	f->cap[0] = NR_MAX_JOBS;
	if (h & 64) { /* a box that says what it holds: the reservations share it out */
		static const uint32_t jobs[4] = { 0, 6, 12, 80 }, chans[4] = { 0, 8, 16, 40 };
		static const uint64_t mbufs[4] = { 0, 64, 512, 4096 };
		uint8_t cb = nrz_u8(&in);

		f->tb.cap = (struct nr_backend_cap){ jobs[cb & 3], chans[cb >> 2 & 3],
						     mbufs[cb >> 4 & 3] };
		if (f->tb.cap.jobs && f->tb.cap.jobs < NR_MAX_JOBS)
			f->cap[0] = f->tb.cap.jobs;
		f->cap[1] = f->tb.cap.channels;
		f->cap[2] = f->tb.cap.mbufs;
	}
	b = nr_backend_new(h & 64 ? &tb_ops_cap : &tb_ops, &f->tb);
	NRZ_CHECK(b != NULL, "backend");
	f->c = nr_ctl_create(b);
	NRZ_CHECK(f->c != NULL, "nr_ctl_create");
	f->pinning = h & 4;
	nr_ctl_set_mac_pinning(f->c, f->pinning);

	if (h & 32) {
		raw_len = nrz_u16(&in) % 2048;
		raw_len = raw_len < nrz_left(&in) ? raw_len : nrz_left(&in);
		raw = data + in.off;
		in.off += raw_len;
	}
	for (unsigned k = 0; k < n; k++)
		tenant_cfg(&in, k, k ? &cfg[k - 1] : NULL, &cfg[k]);
	if (!(h & 8) || !add_file(f, cfg, n, h & 16))
		for (unsigned k = 0; k < n; k++)
			add_api(f, &cfg[k]);
	if (raw)
		add_raw(f, raw, raw_len);
	for (unsigned i = 0; i < f->n_total; i++) {
		const char *t = i < f->nt ? f->t[i].c.token : f->c->tenants.t[i].token;
		size_t len = i < f->nt ? strlen(t) : f->c->tenants.t[i].token_len;

		NRZ_CHECK(nr_ctl_authenticate(f->c, t, len) == (int)i, "tenant %u's token", i);
	}
	check_state(f);

	while (nrz_left(&in) >= 2 && ops++ < MAX_OPS) {
		uint8_t op = nrz_u8(&in);

		switch (op % 10) {
		case 0: op_create(f, &in); break;
		case 1:
		case 2:
		case 3: {
			uint8_t wb = nrz_u8(&in), jb = nrz_u8(&in), kv = nrz_u8(&in);

			op_access(f, op % 10, wb, jb, kv);
			break;
		}
		case 4: op_list(f, pick_who(f, nrz_u8(&in))); break;
		case 5: {
			uint8_t tb = nrz_u8(&in), v = nrz_u8(&in);

			if (f->n_total) /* every tenant refused: none to authenticate */
				op_auth(f, tb, v);
			break;
		}
		case 6: op_stats(f, pick_who(f, nrz_u8(&in))); break;
		case 7:
			f->pinning = !f->pinning;
			nr_ctl_set_mac_pinning(f->c, f->pinning);
			break;
		case 8: op_conn_refused(f, nrz_u8(&in)); break;
		default: f->tb.fail_destroy = true; break;
		}
		check_state(f);
	}

	/* every job destroyed by its creator with its key: the index empty again */
	f->tb.fail_destroy = false;
	for (unsigned k = f->nj; k-- > 0;) {
		char line[128];
		json_t *r;

		if (!f->j[k].live)
			continue;
		snprintf(line, sizeof(line), "{\"op\":\"job_destroy\",\"job\":%u,\"key\":\"%s\"}",
			 f->j[k].id, f->j[k].key);
		r = request(f, line, f->j[k].who);
		NRZ_CHECK(json_is_true(json_object_get(r, "ok")),
			  "job %u's creator destroying it: %s", f->j[k].id, err_of(r));
		json_decref(r);
		f->j[k].live = false;
		f->live--;
		f->destroyed++;
	}
	check_state(f);
	NRZ_CHECK(f->c->eps.n == 0, "%u endpoints indexed after every job went", f->c->eps.n);
	for (uint32_t i = 0; i < f->c->eps.cap; i++)
		NRZ_CHECK(f->c->eps.e[i] == 0, "index word %u left: %llx", i,
			  (unsigned long long)f->c->eps.e[i]);
	NRZ_CHECK(f->tb.eng_jobs == 0, "the engine holds %u jobs", f->tb.eng_jobs);
	nr_ctl_destroy(f->c); /* and the backend */
	agg_engine_destroy(f->tb.eng);
	free(f);
	return 0;
}
