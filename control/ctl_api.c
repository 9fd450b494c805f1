// SPDX-License-Identifier: BSD-3-Clause
/*
 * The control API core: request parsing, job spec validation, job ids and
 * keys, tenancy, and the six operations of PROTOCOL.md over one backend.
 *
 * Lock contract: c->lock protects jobs[] and next_id and serialises every
 * backend call.  Counters are atomics, readable without the lock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "control/nr_control.h"
#include "proto/nr_text.h"

#define CTL_KEY_BYTES 16
#define CTL_MAX_ID    1000000u

struct ctl_job {
	bool used;
	uint32_t id;
	uint32_t credits;
	uint8_t key[CTL_KEY_BYTES];
	struct nr_job_spec *spec;      /* with result_key filled in */
};

struct nr_ctl {
	struct nr_backend *b;
	pthread_mutex_t lock;
	uint32_t next_id;
	struct ctl_job jobs[NR_MAX_JOBS];
	uint64_t ctr[NR_CCTR_MAX];
};

static const char *const ctl_ctr_names[NR_CCTR_MAX] = {
#define NR_CTL_CTR_NAME(e, n, d) n,
	NR_FOREACH_CTL_CTR(NR_CTL_CTR_NAME)
#undef NR_CTL_CTR_NAME
};

void nr_ctl_count(struct nr_ctl *c, enum nr_ctl_ctr k)
{
	if (k < NR_CCTR_MAX)
		__atomic_fetch_add(&c->ctr[k], 1, __ATOMIC_RELAXED);
}

uint64_t nr_ctl_counter(struct nr_ctl *c, enum nr_ctl_ctr k)
{
	return k < NR_CCTR_MAX ? __atomic_load_n(&c->ctr[k], __ATOMIC_RELAXED) : 0;
}

struct nr_backend *nr_backend_new(const struct nr_backend_ops *ops, void *priv)
{
	struct nr_backend *b = calloc(1, sizeof(*b));

	if (b) {
		b->ops = ops;
		b->priv = priv;
	}
	return b;
}

void nr_backend_destroy(struct nr_backend *b)
{
	if (!b)
		return;
	if (b->ops->destroy)
		b->ops->destroy(b);
	free(b);
}

struct nr_ctl *nr_ctl_create(struct nr_backend *b)
{
	struct nr_ctl *c;

	if (!b)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (pthread_mutex_init(&c->lock, NULL)) {
		free(c);
		return NULL;
	}
	c->b = b;
	c->next_id = 1;
	return c;
}

void nr_ctl_destroy(struct nr_ctl *c)
{
	unsigned i;

	if (!c)
		return;
	for (i = 0; i < NR_MAX_JOBS; i++) {
		if (!c->jobs[i].used)
			continue;
		c->b->ops->job_destroy(c->b, c->jobs[i].id);
		free(c->jobs[i].spec);
	}
	nr_backend_destroy(c->b);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- small helpers ------------------------------------------------------ */

static void fmt(char *err, size_t errlen, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *err, size_t errlen, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(err, errlen, f, ap);
	va_end(ap);
}

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Constant-time comparison of n bytes. */
static bool ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static void key_hex(const uint8_t *key, char out[2 * CTL_KEY_BYTES + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned i;

	for (i = 0; i < CTL_KEY_BYTES; i++) {
		out[2 * i] = digits[key[i] >> 4];
		out[2 * i + 1] = digits[key[i] & 15];
	}
	out[2 * CTL_KEY_BYTES] = '\0';
}

static int random_bytes(void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = getrandom(p, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* ---- the job spec ------------------------------------------------------- */

static int get_uint(const json_t *v, const char *name, uint64_t lo, uint64_t hi,
		    const char *what, uint32_t *out, char *err, size_t errlen)
{
	json_int_t x;

	if (!json_is_integer(v)) {
		fmt(err, errlen, "%s: expected an integer, got %s", name, json_type_name(v));
		return -EINVAL;
	}
	x = json_integer_value(v);
	if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi) {
		if (what)
			fmt(err, errlen, "%s: %" JSON_INTEGER_FORMAT " is not %s (%" PRIu64 "..%" PRIu64 ")",
			    name, x, what, lo, hi);
		else
			fmt(err, errlen, "%s: %" JSON_INTEGER_FORMAT " is out of range (%" PRIu64 "..%" PRIu64 ")",
			    name, x, lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}

static int get_ip(const json_t *v, const char *name, uint32_t *out, char *err, size_t errlen)
{
	struct in_addr a;
	uint32_t h;

	if (!json_is_string(v)) {
		fmt(err, errlen, "%s: expected an IPv4 address string, got %s", name, json_type_name(v));
		return -EINVAL;
	}
	if (inet_pton(AF_INET, json_string_value(v), &a) != 1) {
		fmt(err, errlen, "%s: \"%.64s\" is not an IPv4 address (dotted quad)", name,
		    json_string_value(v));
		return -EINVAL;
	}
	h = ntohl(a.s_addr);
	if (h == 0 || h == 0xffffffffu || (h >> 28) == 0xe) {
		fmt(err, errlen, "%s: %s is not a unicast host address", name, json_string_value(v));
		return -EINVAL;
	}
	*out = a.s_addr;
	return 0;
}

static int get_mac(const json_t *v, const char *name, uint8_t mac[6], char *err, size_t errlen)
{
	const char *s;

	if (!json_is_string(v)) {
		fmt(err, errlen, "%s: expected a MAC address string, got %s", name, json_type_name(v));
		return -EINVAL;
	}
	s = json_string_value(v);
	if (nr_mac_parse(s, mac)) {
		fmt(err, errlen, "%s: \"%.64s\" is not a MAC address (xx:xx:xx:xx:xx:xx)", name, s);
		return -EINVAL;
	}
	if (mac[0] & 1) {
		fmt(err, errlen, "%s: %s is a multicast MAC, expected a host's unicast MAC", name, s);
		return -EINVAL;
	}
	return 0;
}

static int unknown_fields(const json_t *obj, const char *const *known, const char *where,
			  char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	unsigned i;

	json_object_foreach((json_t *)obj, k, v) {
		for (i = 0; known[i]; i++)
			if (!strcmp(k, known[i]))
				break;
		if (!known[i]) {
			fmt(err, errlen, "%s%.64s: unknown field", where, k);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_conn(const json_t *o, unsigned i, struct nr_conn_spec *cs, char *err, size_t errlen)
{
	static const char *const known[] = { "src_ip", "dst_ip", "src_qpn", "dst_qpn", "ipsn",
					     "src_mac", "dst_mac", NULL };
	static const char *const req[] = { "src_ip", "dst_ip", "src_qpn", "dst_qpn", "ipsn", NULL };
	char where[48], name[80];
	json_t *v;
	unsigned k;

	snprintf(where, sizeof(where), "spec.conns[%u]", i);
	if (!json_is_object(o)) {
		fmt(err, errlen, "%s: expected an object, got %s", where, json_type_name(o));
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%s.", where);
	if (unknown_fields(o, known, name, err, errlen))
		return -EINVAL;
	for (k = 0; req[k]; k++) {
		if (!json_object_get(o, req[k])) {
			fmt(err, errlen, "%s.%s: missing", where, req[k]);
			return -EINVAL;
		}
	}
#define NAME(f) (snprintf(name, sizeof(name), "%s." f, where), name)
	if (get_ip(json_object_get(o, "src_ip"), NAME("src_ip"), &cs->src_ip, err, errlen) ||
	    get_ip(json_object_get(o, "dst_ip"), NAME("dst_ip"), &cs->dst_ip, err, errlen) ||
	    get_uint(json_object_get(o, "src_qpn"), NAME("src_qpn"), 1, 0xffffff, "a 24-bit QPN",
		     &cs->src_qpn, err, errlen) ||
	    get_uint(json_object_get(o, "dst_qpn"), NAME("dst_qpn"), 1, 0xffffff, "a 24-bit QPN",
		     &cs->dst_qpn, err, errlen) ||
	    get_uint(json_object_get(o, "ipsn"), NAME("ipsn"), 0, 0xffffff, "a 24-bit PSN",
		     &cs->ipsn, err, errlen))
		return -EINVAL;
	v = json_object_get(o, "src_mac");
	if (v && get_mac(v, NAME("src_mac"), cs->src_mac, err, errlen))
		return -EINVAL;
	v = json_object_get(o, "dst_mac");
	if (v && get_mac(v, NAME("dst_mac"), cs->dst_mac, err, errlen))
		return -EINVAL;
#undef NAME
	return 0;
}

static int check_dup_conns(const struct nr_job_spec *s, char *err, size_t errlen)
{
	char a[INET_ADDRSTRLEN];
	uint32_t i, j;

	for (i = 0; i < s->n_conns; i++) {
		for (j = 0; j < i; j++) {
			const struct nr_conn_spec *x = &s->conns[i], *y = &s->conns[j];

			if (x->dst_ip == y->dst_ip && x->dst_qpn == y->dst_qpn) {
				fmt(err, errlen, "spec.conns[%u]: receiver %s qpn %u repeats spec.conns[%u]",
				    i, nr_ip4_str(x->dst_ip, a), x->dst_qpn, j);
				return -EINVAL;
			}
			if (x->src_ip == y->src_ip && x->src_qpn == y->src_qpn) {
				fmt(err, errlen, "spec.conns[%u]: sender %s qpn %u repeats spec.conns[%u]",
				    i, nr_ip4_str(x->src_ip, a), x->src_qpn, j);
				return -EINVAL;
			}
		}
	}
	return 0;
}

struct nr_job_spec *nr_ctl_spec_from_json(const json_t *o, char *err, size_t errlen)
{
	static const char *const known[] = { "mtu", "msg_size", "pool_msgs", "mode", "timeout_ms",
					     "conns", NULL };
	struct nr_job_spec *s = NULL;
	const json_t *conns, *v;
	size_t n, i;
	char e2[256];

	if (!o) {
		fmt(err, errlen, "spec: missing (the job spec object)");
		return NULL;
	}
	if (!json_is_object(o)) {
		fmt(err, errlen, "spec: expected an object, got %s", json_type_name(o));
		return NULL;
	}
	if (unknown_fields(o, known, "spec.", err, errlen))
		return NULL;
	conns = json_object_get(o, "conns");
	if (!conns) {
		fmt(err, errlen, "spec.conns: missing (one connection per rank)");
		return NULL;
	}
	if (!json_is_array(conns)) {
		fmt(err, errlen, "spec.conns: expected an array, got %s", json_type_name(conns));
		return NULL;
	}
	n = json_array_size(conns);
	if (n < 1 || n > NR_MAX_CONNS) {
		fmt(err, errlen, "spec.conns: %zu connections, expected 1..%u (one per rank)", n,
		    NR_MAX_CONNS);
		return NULL;
	}
	s = calloc(1, sizeof(*s) + n * sizeof(s->conns[0]));
	if (!s) {
		fmt(err, errlen, "out of memory");
		return NULL;
	}
	s->n_conns = (uint32_t)n;
	s->mtu = 1024;
	s->msg_size = 65536;
	s->pool_msgs = 8;
	s->timeout_ms = 5000;
	s->mode = NR_SUM_ORDERED;

	if ((v = json_object_get(o, "mtu"))) {
		if (get_uint(v, "spec.mtu", 256, NR_MAX_MTU, NULL, &s->mtu, err, errlen))
			goto fail;
		if (s->mtu & (s->mtu - 1)) {
			fmt(err, errlen, "spec.mtu: %u is not a RoCE path MTU (256, 512, 1024, 2048 or 4096)",
			    s->mtu);
			goto fail;
		}
	}
	if ((v = json_object_get(o, "msg_size"))) {
		if (get_uint(v, "spec.msg_size", 4, 1u << 30, NULL, &s->msg_size, err, errlen))
			goto fail;
		if (s->msg_size % 4) {
			fmt(err, errlen, "spec.msg_size: %u is not a multiple of 4 (FP32 elements)",
			    s->msg_size);
			goto fail;
		}
	}
	if ((v = json_object_get(o, "pool_msgs"))) {
		if (get_uint(v, "spec.pool_msgs", 2, 65536, NULL, &s->pool_msgs, err, errlen))
			goto fail;
		if (s->pool_msgs % 2) {
			fmt(err, errlen, "spec.pool_msgs: %u is odd (credits W = pool_msgs / 2)",
			    s->pool_msgs);
			goto fail;
		}
	}
	if ((v = json_object_get(o, "timeout_ms")) &&
	    get_uint(v, "spec.timeout_ms", 1, 3600000, NULL, &s->timeout_ms, err, errlen))
		goto fail;
	if ((v = json_object_get(o, "mode"))) {
		const char *m = json_string_value(v);

		if (!json_is_string(v)) {
			fmt(err, errlen, "spec.mode: expected a string, got %s", json_type_name(v));
			goto fail;
		}
		if (!strcmp(m, "ordered")) {
			s->mode = NR_SUM_ORDERED;
		} else if (!strcmp(m, "streaming")) {
			s->mode = NR_SUM_STREAMING;
		} else {
			fmt(err, errlen, "spec.mode: \"%.32s\" is not a sum mode (ordered or streaming)", m);
			goto fail;
		}
	}
	for (i = 0; i < n; i++)
		if (parse_conn(json_array_get(conns, i), (unsigned)i, &s->conns[i], err, errlen))
			goto fail;
	if (check_dup_conns(s, err, errlen))
		goto fail;
	/* The engine's own checks: one validation for every backend. */
	e2[0] = '\0';
	if (nr_job_spec_validate(s, e2, sizeof(e2))) {
		fmt(err, errlen, "%s%s", strncmp(e2, "spec", 4) ? "spec." : "",
		    e2[0] ? e2 : "invalid job spec");
		goto fail;
	}
	return s;
fail:
	free(s);
	return NULL;
}

/* ---- jobs --------------------------------------------------------------- */

static struct ctl_job *job_find(struct nr_ctl *c, uint32_t id)
{
	unsigned i;

	for (i = 0; i < NR_MAX_JOBS; i++)
		if (c->jobs[i].used && c->jobs[i].id == id)
			return &c->jobs[i];
	return NULL;
}

static bool ep_eq(uint32_t ip1, uint32_t q1, uint32_t ip2, uint32_t q2)
{
	return ip1 == ip2 && q1 == q2;
}

/* A QP (IP, QPN) belongs to at most one job, in whatever role. */
static int check_tenancy(struct nr_ctl *c, const struct nr_job_spec *s, char *err, size_t errlen)
{
	char a[INET_ADDRSTRLEN];
	unsigned j;
	uint32_t i, k;

	for (j = 0; j < NR_MAX_JOBS; j++) {
		const struct ctl_job *o = &c->jobs[j];

		if (!o->used)
			continue;
		for (i = 0; i < s->n_conns; i++) {
			const struct nr_conn_spec *x = &s->conns[i];

			for (k = 0; k < o->spec->n_conns; k++) {
				const struct nr_conn_spec *y = &o->spec->conns[k];
				const char *role = NULL;
				uint32_t ip = 0, qpn = 0;

				if (ep_eq(x->dst_ip, x->dst_qpn, y->dst_ip, y->dst_qpn) ||
				    ep_eq(x->dst_ip, x->dst_qpn, y->src_ip, y->src_qpn))
					role = "receiver", ip = x->dst_ip, qpn = x->dst_qpn;
				else if (ep_eq(x->src_ip, x->src_qpn, y->src_ip, y->src_qpn) ||
					 ep_eq(x->src_ip, x->src_qpn, y->dst_ip, y->dst_qpn))
					role = "sender", ip = x->src_ip, qpn = x->src_qpn;
				if (role) {
					fmt(err, errlen,
					    "spec.conns[%u]: %s %s qpn %u belongs to job %u; a QP serves one job",
					    i, role, nr_ip4_str(ip, a), qpn, o->id);
					return -EEXIST;
				}
			}
		}
	}
	return 0;
}

static uint32_t alloc_id(struct nr_ctl *c)
{
	for (;;) {
		uint32_t id = c->next_id;

		c->next_id = id >= CTL_MAX_ID ? 1 : id + 1;
		if (!job_find(c, id))
			return id;
	}
}

/*
 * Error texts quote the request (truncated with %.Ns) and jansson's messages:
 * replace bytes that are not valid UTF-8 with '?' so the reply always encodes.
 */
static void utf8_sanitize(char *p)
{
	unsigned char *s = (unsigned char *)p;

	while (*s) {
		unsigned n = *s < 0x80 ? 0 : (*s & 0xe0) == 0xc0 ? 1 : (*s & 0xf0) == 0xe0 ? 2 :
			     (*s & 0xf8) == 0xf0 ? 3 : 4, i;

		if (n == 4 || (n == 1 && *s < 0xc2)) {
			*s++ = '?';
			continue;
		}
		for (i = 1; i <= n; i++)
			if ((s[i] & 0xc0) != 0x80)
				break;
		if (i <= n) {
			*s++ = '?';
			continue;
		}
		s += n + 1;
	}
}

static json_t *reply_err(struct nr_ctl *c, const char *f, ...) __attribute__((format(printf, 2, 3)));
static json_t *reply_err(struct nr_ctl *c, const char *f, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	utf8_sanitize(buf);
	nr_ctl_count(c, NR_CCTR_ERRORS);
	return json_pack("{s:b,s:s}", "ok", 0, "error", buf);
}

static json_t *op_job_create(struct nr_ctl *c, json_t *req)
{
	char err[512] = "", hex[2 * CTL_KEY_BYTES + 1];
	struct nr_job_spec *s;
	struct ctl_job *slot = NULL;
	uint32_t id, credits = 0;
	unsigned i;
	int rc;

	s = nr_ctl_spec_from_json(json_object_get(req, "spec"), err, sizeof(err));
	if (!s)
		return reply_err(c, "%s", err);
	for (i = 0; i < NR_MAX_JOBS && !slot; i++)
		if (!c->jobs[i].used)
			slot = &c->jobs[i];
	if (!slot) {
		free(s);
		return reply_err(c, "job_create: %u jobs exist, the most this box holds; destroy one first",
				 NR_MAX_JOBS);
	}
	if (check_tenancy(c, s, err, sizeof(err))) {
		free(s);
		return reply_err(c, "%s", err);
	}
	do {
		if (random_bytes(&s->result_key, sizeof(s->result_key)) ||
		    random_bytes(slot->key, sizeof(slot->key))) {
			free(s);
			return reply_err(c, "job_create: getrandom failed: %s", strerror(errno));
		}
	} while (s->result_key == 0);
	id = alloc_id(c);
	rc = c->b->ops->job_create(c->b, id, s, &credits, err, sizeof(err));
	if (rc) {
		free(s);
		return reply_err(c, "job_create: %s", err[0] ? err : strerror(-rc));
	}
	slot->used = true;
	slot->id = id;
	slot->credits = credits;
	slot->spec = s;
	nr_ctl_count(c, NR_CCTR_JOBS_CREATED);
	key_hex(slot->key, hex);
	return json_pack("{s:b,s:I,s:s,s:I,s:I}", "ok", 1, "job", (json_int_t)id, "key", hex,
			 "credits", (json_int_t)credits, "result_key", (json_int_t)s->result_key);
}

/*
 * Find the job a job_destroy/job_status names and check the caller may touch
 * it.  Without admin the key is required and the error does not tell whether
 * the job exists.
 */
static struct ctl_job *job_access(struct nr_ctl *c, json_t *req, bool admin, json_t **reply)
{
	json_t *jv = json_object_get(req, "job"), *kv = json_object_get(req, "key");
	uint8_t key[CTL_KEY_BYTES];
	struct ctl_job *j;
	bool key_ok = false;
	json_int_t id;

	if (!jv) {
		*reply = reply_err(c, "job: missing (the job id job_create returned)");
		return NULL;
	}
	if (!json_is_integer(jv) || json_integer_value(jv) < 1 ||
	    json_integer_value(jv) > CTL_MAX_ID) {
		if (json_is_integer(jv))
			*reply = reply_err(c, "job: %" JSON_INTEGER_FORMAT " is not a job id (1..%u)",
					   json_integer_value(jv), CTL_MAX_ID);
		else
			*reply = reply_err(c, "job: expected an integer job id, got %s",
					   json_type_name(jv));
		return NULL;
	}
	id = json_integer_value(jv);
	if (kv && !json_is_string(kv)) {
		*reply = reply_err(c, "key: expected the 32-hex-digit string job_create returned, got %s",
				   json_type_name(kv));
		return NULL;
	}
	if (kv && strlen(json_string_value(kv)) == 2 * CTL_KEY_BYTES)
		key_ok = nr_hex_decode(json_string_value(kv), key, CTL_KEY_BYTES) == 0;
	j = job_find(c, (uint32_t)id);
	if (j && kv && key_ok)
		key_ok = ct_equal(key, j->key, CTL_KEY_BYTES);
	if ((!admin && (!j || !key_ok)) || (admin && j && kv && !key_ok)) {
		nr_ctl_count(c, NR_CCTR_BAD_KEY);
		*reply = reply_err(c, "job %" JSON_INTEGER_FORMAT ": wrong or missing key", id);
		return NULL;
	}
	if (!j) {
		*reply = reply_err(c, "job %" JSON_INTEGER_FORMAT ": no such job", id);
		return NULL;
	}
	return j;
}

static json_t *op_job_destroy(struct nr_ctl *c, json_t *req, bool admin)
{
	json_t *reply = NULL;
	struct ctl_job *j = job_access(c, req, admin, &reply);
	int rc;

	if (!j)
		return reply;
	rc = c->b->ops->job_destroy(c->b, j->id);
	if (rc && rc != -ENOENT)
		return reply_err(c, "job %u: backend %s could not destroy it: %s", j->id,
				 c->b->ops->name, strerror(-rc));
	free(j->spec);
	memset(j, 0, sizeof(*j));
	nr_ctl_count(c, NR_CCTR_JOBS_DESTROYED);
	return json_pack("{s:b}", "ok", 1);
}

static json_t *spec_to_json(const struct nr_job_spec *s)
{
	json_t *o, *conns;
	uint32_t i;

	conns = json_array();
	for (i = 0; i < s->n_conns; i++) {
		const struct nr_conn_spec *cs = &s->conns[i];
		char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN], m[NR_MAC_STRLEN];
		json_t *cj;
		unsigned k;

		cj = json_pack("{s:s,s:s,s:I,s:I,s:I}", "src_ip", nr_ip4_str(cs->src_ip, a),
			       "dst_ip", nr_ip4_str(cs->dst_ip, b), "src_qpn", (json_int_t)cs->src_qpn,
			       "dst_qpn", (json_int_t)cs->dst_qpn, "ipsn", (json_int_t)cs->ipsn);
		for (k = 0; k < 2; k++) {
			const uint8_t *mac = k ? cs->dst_mac : cs->src_mac;

			if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
				continue;
			json_object_set_new(cj, k ? "dst_mac" : "src_mac", json_string(nr_mac_str(mac, m)));
		}
		json_array_append_new(conns, cj);
	}
	o = json_pack("{s:I,s:I,s:I,s:s,s:I}", "mtu", (json_int_t)s->mtu, "msg_size",
		      (json_int_t)s->msg_size, "pool_msgs", (json_int_t)s->pool_msgs, "mode",
		      s->mode == NR_SUM_STREAMING ? "streaming" : "ordered", "timeout_ms",
		      (json_int_t)s->timeout_ms);
	json_object_set_new(o, "conns", conns);
	return o;
}

static const char *state_name(uint8_t st)
{
	return st == NR_JOB_ACTIVE ? "active" : st == NR_JOB_FAILED ? "failed" : "unknown";
}

static json_t *op_job_status(struct nr_ctl *c, json_t *req, bool admin)
{
	json_t *reply = NULL, *o, *ctrs;
	struct ctl_job *j = job_access(c, req, admin, &reply);
	struct nr_job_stats *st;
	unsigned i;
	int rc;

	if (!j)
		return reply;
	st = calloc(1, sizeof(*st));
	if (!st)
		return reply_err(c, "out of memory");
	rc = c->b->ops->job_status(c->b, j->id, st);
	if (rc) {
		free(st);
		return reply_err(c, "job %u: backend %s has no status for it: %s", j->id,
				 c->b->ops->name, strerror(-rc));
	}
	st->reason[sizeof(st->reason) - 1] = '\0';
	ctrs = json_object();
	for (i = 0; i < NR_ECTR_MAX; i++)
		json_object_set_new(ctrs, nr_engine_ctr_names[i], json_integer((json_int_t)st->ctr[i]));
	o = json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "id", (json_int_t)j->id,
		      "state", state_name(st->state), "reason", st->reason,
		      "next_emit", (json_int_t)st->next_emit,
		      "next_release", (json_int_t)st->next_release,
		      "completed", (json_int_t)st->completed, "ranks", (json_int_t)j->spec->n_conns,
		      "credits", (json_int_t)j->credits, "result_key", (json_int_t)j->spec->result_key);
	json_object_set_new(o, "counters", ctrs);
	json_object_set_new(o, "spec", spec_to_json(j->spec));
	free(st);
	return json_pack("{s:b,s:o}", "ok", 1, "job", o);
}

static json_t *op_job_list(struct nr_ctl *c, bool admin)
{
	struct nr_job_stats *st;
	json_t *arr;
	unsigned i;

	if (!admin)
		return reply_err(c, "job_list: admin only (use the UNIX socket)");
	st = calloc(1, sizeof(*st));
	if (!st)
		return reply_err(c, "out of memory");
	arr = json_array();
	for (i = 0; i < NR_MAX_JOBS; i++) {
		const struct ctl_job *j = &c->jobs[i];
		const char *state = "unknown";

		if (!j->used)
			continue;
		memset(st, 0, sizeof(*st));
		if (!c->b->ops->job_status(c->b, j->id, st))
			state = state_name(st->state);
		json_array_append_new(arr, json_pack("{s:I,s:s,s:I,s:s,s:I,s:I,s:I}",
			"id", (json_int_t)j->id, "state", state, "ranks", (json_int_t)j->spec->n_conns,
			"mode", j->spec->mode == NR_SUM_STREAMING ? "streaming" : "ordered",
			"msg_size", (json_int_t)j->spec->msg_size, "credits", (json_int_t)j->credits,
			"completed", (json_int_t)st->completed));
	}
	free(st);
	return json_pack("{s:b,s:o}", "ok", 1, "jobs", arr);
}

static json_t *op_stats(struct nr_ctl *c)
{
	json_t *st = c->b->ops->stats ? c->b->ops->stats(c->b) : NULL;
	json_t *ctl = json_object();
	unsigned i, n = 0;

	if (!json_is_object(st)) {
		json_decref(st);
		st = json_object();
	}
	for (i = 0; i < NR_MAX_JOBS; i++)
		n += c->jobs[i].used;
	json_object_set_new(ctl, "jobs", json_integer(n));
	for (i = 0; i < NR_CCTR_MAX; i++)
		json_object_set_new(ctl, ctl_ctr_names[i], json_integer((json_int_t)nr_ctl_counter(c, i)));
	json_object_set_new(st, "control", ctl);
	return json_pack("{s:b,s:o}", "ok", 1, "stats", st);
}

static json_t *op_backend_info(struct nr_ctl *c)
{
	json_t *info = c->b->ops->info ? c->b->ops->info(c->b) : NULL;

	if (!json_is_object(info)) {
		json_decref(info);
		info = json_object();
	}
	json_object_set_new(info, "name", json_string(c->b->ops->name));
	json_object_set_new(info, "max_jobs", json_integer(NR_MAX_JOBS));
	json_object_set_new(info, "max_ranks", json_integer(NR_MAX_CONNS));
	return json_pack("{s:b,s:o}", "ok", 1, "backend", info);
}

/* ---- requests ----------------------------------------------------------- */

static const char *const ops_names = "job_create, job_destroy, job_status, job_list, stats, backend_info";

json_t *nr_ctl_handle_json(struct nr_ctl *c, json_t *req, bool admin)
{
	static const char *const f_create[] = { "op", "token", "spec", NULL };
	static const char *const f_job[] = { "op", "token", "job", "key", NULL };
	static const char *const f_none[] = { "op", "token", NULL };
	const char *const *known;
	json_t *opv, *reply;
	char err[256], where[48];
	const char *op;

	nr_ctl_count(c, NR_CCTR_REQUESTS);
	if (!json_is_object(req))
		return reply_err(c, "request: expected a JSON object");
	opv = json_object_get(req, "op");
	if (!opv)
		return reply_err(c, "op: missing (one of %s)", ops_names);
	if (!json_is_string(opv))
		return reply_err(c, "op: expected a string, got %s", json_type_name(opv));
	op = json_string_value(opv);
	if (!strcmp(op, "job_create"))
		known = f_create;
	else if (!strcmp(op, "job_destroy") || !strcmp(op, "job_status"))
		known = f_job;
	else if (!strcmp(op, "job_list") || !strcmp(op, "stats") || !strcmp(op, "backend_info"))
		known = f_none;
	else
		return reply_err(c, "op: \"%.32s\" is not an operation (one of %s)", op, ops_names);
	snprintf(where, sizeof(where), "%s: ", op ? op : "?");
	if (unknown_fields(req, known, where, err, sizeof(err)))
		return reply_err(c, "%s", err);

	pthread_mutex_lock(&c->lock);
	if (!strcmp(op, "job_create"))
		reply = op_job_create(c, req);
	else if (!strcmp(op, "job_destroy"))
		reply = op_job_destroy(c, req, admin);
	else if (!strcmp(op, "job_status"))
		reply = op_job_status(c, req, admin);
	else if (!strcmp(op, "job_list"))
		reply = op_job_list(c, admin);
	else if (!strcmp(op, "stats"))
		reply = op_stats(c);
	else
		reply = op_backend_info(c);
	pthread_mutex_unlock(&c->lock);
	if (!reply)     /* a backend string that does not encode, or no memory */
		reply = reply_err(c, "%s: could not build the reply", op);
	return reply;
}

json_t *nr_ctl_parse_line(const char *line, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *req;

	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!req) {
		fmt(err, errlen, "malformed JSON at column %d: %s", je.column, je.text);
		return NULL;
	}
	if (!json_is_object(req)) {
		fmt(err, errlen, "request: expected a JSON object, got %s", json_type_name(req));
		json_decref(req);
		return NULL;
	}
	return req;
}

char *nr_ctl_error_line(const char *msg)
{
	char buf[512];
	json_t *o;
	char *s;

	snprintf(buf, sizeof(buf), "%s", msg ? msg : "error");
	utf8_sanitize(buf);
	o = json_pack("{s:b,s:s}", "ok", 0, "error", buf);
	if (!o)
		return NULL;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

char *nr_ctl_handle(struct nr_ctl *c, const char *line, size_t len, bool admin)
{
	char err[256];
	json_t *req, *reply;
	char *s;

	req = nr_ctl_parse_line(line, len, err, sizeof(err));
	if (!req) {
		nr_ctl_count(c, NR_CCTR_REQUESTS);
		nr_ctl_count(c, NR_CCTR_BAD_JSON);
		nr_ctl_count(c, NR_CCTR_ERRORS);
		return nr_ctl_error_line(err);
	}
	reply = nr_ctl_handle_json(c, req, admin);
	json_decref(req);
	if (!reply)
		return NULL;
	s = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	return s;
}
