/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control API's requests: the operations of PROTOCOL.md and their
 * command table (ctl_ops[]), which nr_ctl_handle_json dispatches, over the
 * job table of ctl_api.c (ctl_jobs.h).  Every reply is built here: errors
 * quote the request, made valid UTF-8.
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

#include "control/api/ctl_jobs.h"
#include "control/api/ctl_log.h"
#include "control/api/ctl_spec.h"
#include "proto/nr_text.h"

static const char *const ctl_ctr_names[NR_CCTR_MAX] = { NR_FOREACH_CTL_CTR(NR_CTR_NAME) };

/* ---- small helpers ------------------------------------------------------ */
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

/* job_create's "name": absent, or 1..NR_CTL_JOB_NAME_MAX of [A-Za-z0-9._:-]. */
static int job_name(const json_t *v, char *out, char *err, size_t errlen)
{
	const char *s;
	size_t n;

	out[0] = '\0';
	if (!v)
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, errlen, "name: expected a string (the job's name, e.g. NR_JOB), got %s",
			 nr_ctl_json_type(v));
		return -EINVAL;
	}
	s = json_string_value(v);
	n = strlen(s);
	if (n == 0 || n > NR_CTL_JOB_NAME_MAX || n != json_string_length(v) ||
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") != n) {
		snprintf(err, errlen,
			 "name: \"%.70s\" is not a job name (1..%u of letters, digits, "
			 "'.', '_', ':', '-')",
			 s, NR_CTL_JOB_NAME_MAX);
		return -EINVAL;
	}
	memcpy(out, s, n + 1);
	return 0;
}

/*
 * Error texts quote the request (truncated with %.Ns) and jansson's messages:
 * replace bytes that are not valid UTF-8 with '?' so the reply always encodes.
 */
static void utf8_sanitize(char *p)
{
	unsigned char *s = (unsigned char *)p;

	while (*s) {
		unsigned n = *s < 0x80             ? 0
			     : (*s & 0xe0) == 0xc0 ? 1
			     : (*s & 0xf0) == 0xe0 ? 2
			     : (*s & 0xf8) == 0xf0 ? 3
						   : 4,
			 i;

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

static json_t *op_job_create(struct nr_ctl *c, json_t *req, int who)
{
	char err[512] = "", hex[2 * CTL_KEY_BYTES + 1];
	json_t *lv = json_object_get(req, "lease_ms");
	struct nr_job_spec *s;
	struct ctl_job *slot = NULL;
	uint32_t id, credits = 0, lease = who == NR_CTL_ADMIN ? 0 : c->default_lease_ms;
	char name[NR_CTL_JOB_NAME_MAX + 1], lbl[160];
	unsigned i;
	int rc;

	if (lv) {
		if (!json_is_integer(lv) || json_integer_value(lv) < 1000 ||
		    json_integer_value(lv) > 86400000)
			return reply_err(c, "lease_ms: an integer, 1000..86400000 (the job is destroyed "
					    "when it goes that long without job_renew)");
		lease = (uint32_t)json_integer_value(lv);
	}
	if (job_name(json_object_get(req, "name"), name, err, sizeof(err)))
		return reply_err(c, "%s", err);
	s = nr_ctl_spec_from_json(json_object_get(req, "spec"), err, sizeof(err));
	if (!s)
		return reply_err(c, "%s", err);
	/* the addresses first: a tenant naming another's learns nothing of its jobs */
	if (who >= 0 && (unsigned)who < c->tenants.n &&
	    ctl_tenant_addr_check(&c->tenants.t[who], c->mac_pinning ? c->tenants.n : 1, s, err,
				  sizeof(err))) {
		free(s);
		nr_ctl_count(c, NR_CCTR_ADDR_REFUSED);
		c->tenants.t[who].addr_refused++;
		NR_LOG_RL(LOG_WARNING, "netreduce control: tenant=%s%s%s: job_create refused: %s",
			  ctl_who_name(c, who), name[0] ? " name=" : "", name, err);
		return reply_err(c, "job_create: %s", err);
	}
	if (ctl_quota_check(c, who, s, err, sizeof(err))) {
		free(s);
		nr_ctl_count(c, NR_CCTR_QUOTA_REFUSED);
		c->tenants.t[who].quota_refused++; /* quota_check refuses tenants only */
		NR_LOG_RL(LOG_WARNING, "netreduce control: tenant=%s%s%s: job_create refused: %s",
			  ctl_who_name(c, who), name[0] ? " name=" : "", name, err);
		return reply_err(c, "job_create: %s", err);
	}
	if (ctl_reserve_check(c, who, s, err, sizeof(err))) { /* it logs why */
		free(s);
		nr_ctl_count(c, NR_CCTR_RESERVE_REFUSED);
		if (who >= 0 && (unsigned)who < c->tenants.n)
			c->tenants.t[who].reserve_refused++;
		return reply_err(c, "job_create: %s", err);
	}
	for (i = 0; i < NR_MAX_JOBS && !slot; i++)
		if (!c->jobs[i].used)
			slot = &c->jobs[i];
	if (!slot) {
		free(s);
		return reply_err(c,
				 "job_create: %u jobs exist, the most this box holds; destroy one first",
				 NR_MAX_JOBS);
	}
	if (ctl_check_tenancy(c, s, who, err, sizeof(err))) {
		free(s);
		return reply_err(c, "%s", err);
	}
	if (ctl_epidx_reserve(&c->eps, 2 * nr_job_conns(s))) {
		free(s);
		return reply_err(c, "job_create: out of memory for the index of the jobs' QPs");
	}
	do {
		if (random_bytes(&s->result_key, sizeof(s->result_key)) ||
		    random_bytes(slot->key, sizeof(slot->key))) {
			free(s);
			return reply_err(c, "job_create: getrandom failed: %s", strerror(errno));
		}
	} while (s->result_key == 0);
	/* the owner of its L2 pins: the admin (0) or the tenant (never the spec's word) */
	s->owner = who >= 0 && who < NR_CTL_MAX_TENANTS ? (uint16_t)(who + 1) : 0;
	id = ctl_alloc_id(c);
	rc = c->b->ops->job_create(c->b, id, s, &credits, err, sizeof(err));
	if (rc) {
		free(s);
		NR_LOG_RL(LOG_NOTICE,
			  "netreduce control: tenant=%s%s%s: job_create refused by backend "
			  "%s: %s",
			  ctl_who_name(c, who), name[0] ? " name=" : "", name, c->b->ops->name,
			  err[0] ? err : strerror(-rc));
		return reply_err(c, "job_create: %s", err[0] ? err : strerror(-rc));
	}
	slot->used = true;
	ctl_epidx_add(&c->eps, s, (unsigned)(slot - c->jobs));
	slot->id = id;
	slot->credits = credits;
	slot->spec = s;
	slot->lease_ms = lease;
	slot->renewed_ms = nr_ctl_now_ms();
	slot->tenant = who;
	slot->failed_logged = false;
	memcpy(slot->name, name, sizeof(slot->name));
	nr_ctl_count(c, NR_CCTR_JOBS_CREATED);
	NR_LOG_RL(LOG_NOTICE,
		  "netreduce control: %s: created: %u ranks, %u channel%s, mtu %u, %s %s, "
		  "%s mode, lease %s",
		  ctl_job_label(c, slot, lbl, sizeof(lbl)), s->n_conns, nr_job_channels(s),
		  nr_job_channels(s) > 1 ? "s" : "", s->mtu, nr_elem_name(s->dtype),
		  nr_reduce_name(s->reduce), s->mode == NR_SUM_STREAMING ? "streaming" : "ordered",
		  lease ? "held" : "none");
	key_hex(slot->key, hex);
	return json_pack("{s:b,s:I,s:s,s:I,s:I,s:I}", "ok", 1, "job", (json_int_t)id, "key", hex,
			 "credits", (json_int_t)credits, "result_key", (json_int_t)s->result_key,
			 "lease_ms", (json_int_t)lease);
}

/*
 * Find the job a job_destroy/job_status names and check the caller may touch
 * it.  Without admin the key and the job's own tenant are required and the
 * error does not tell whether the job exists.
 */
static struct ctl_job *job_access(struct nr_ctl *c, json_t *req, int who, json_t **reply)
{
	const bool admin = who == NR_CTL_ADMIN;
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
					   nr_ctl_json_type(jv));
		return NULL;
	}
	id = json_integer_value(jv);
	if (kv && !json_is_string(kv)) {
		*reply = reply_err(c,
				   "key: expected the 32-hex-digit string job_create returned, got %s",
				   nr_ctl_json_type(kv));
		return NULL;
	}
	if (kv && strlen(json_string_value(kv)) == 2 * CTL_KEY_BYTES)
		key_ok = nr_hex_decode(json_string_value(kv), key, CTL_KEY_BYTES) == 0;
	j = ctl_job_find(c, (uint32_t)id);
	if (j && kv && key_ok)
		key_ok = ct_equal(key, j->key, CTL_KEY_BYTES) && (admin || j->tenant == who);
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

static json_t *op_job_renew(struct nr_ctl *c, json_t *req, int who)
{
	json_t *reply = NULL;
	struct ctl_job *j = job_access(c, req, who, &reply);

	if (!j)
		return reply;
	j->renewed_ms = nr_ctl_now_ms();
	nr_ctl_count(c, NR_CCTR_LEASES_RENEWED);
	return json_pack("{s:b,s:I}", "ok", 1, "lease_ms", (json_int_t)j->lease_ms);
}

static json_t *op_job_destroy(struct nr_ctl *c, json_t *req, int who)
{
	json_t *reply = NULL;
	struct ctl_job *j = job_access(c, req, who, &reply);
	uint32_t id;
	int rc;

	if (!j)
		return reply;
	id = j->id;
	rc = ctl_job_remove(c, j, LOG_NOTICE, who == NR_CTL_ADMIN ? "by the admin" : "by its tenant");
	if (rc)
		return reply_err(c, "job %u: backend %s could not destroy it: %s", id,
				 c->b->ops->name, strerror(-rc));
	return json_pack("{s:b}", "ok", 1);
}

static const char *state_name(uint8_t st)
{
	return st == NR_JOB_ACTIVE ? "active" : st == NR_JOB_FAILED ? "failed" : "unknown";
}

/* One row a channel, when the backend reports channels. */
static json_t *channels_json(const struct nr_job_stats *st)
{
	json_t *arr = json_array();

	for (uint32_t k = 0; k < st->n_channels && k < NR_MAX_CHANNELS; k++) {
		const struct nr_chan_stats *ch = &st->ch[k];

		json_array_append_new(arr, json_pack("{s:I,s:s,s:I,s:I,s:I,s:I}", "channel",
						     (json_int_t)k, "state", state_name(ch->state),
						     "worker", (json_int_t)ch->worker, "next_emit",
						     (json_int_t)ch->next_emit, "next_release",
						     (json_int_t)ch->next_release, "completed",
						     (json_int_t)ch->completed));
	}
	return arr;
}

static json_t *op_job_status(struct nr_ctl *c, json_t *req, int who)
{
	json_t *reply = NULL, *o, *ctrs, *why;
	struct ctl_job *j = job_access(c, req, who, &reply);
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
		json_object_set_new(ctrs, nr_engine_ctr_names[i],
				    json_integer((json_int_t)st->ctr[i]));
	o = json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "id", (json_int_t)j->id, "state",
		      state_name(st->state), "reason", st->reason, "next_emit",
		      (json_int_t)st->next_emit, "next_release", (json_int_t)st->next_release,
		      "completed", (json_int_t)st->completed, "ranks", (json_int_t)j->spec->n_conns,
		      "credits", (json_int_t)j->credits, "result_key",
		      (json_int_t)j->spec->result_key);
	json_object_set_new(o, "counters", ctrs);
	json_object_set_new(o, "name", json_string(j->name));
	json_object_set_new(o, "tenant", json_string(ctl_who_name(c, j->tenant)));
	json_object_set_new(o, "slots", json_integer(st->slots));
	json_object_set_new(o, "slots_busy", json_integer(st->slots_busy));
	if (j->spec->short_ppm) {
		json_t *lo = json_array();

		for (i = 0; i < j->spec->n_conns; i++)
			json_array_append_new(lo, json_integer((json_int_t)st->left_out[i]));
		json_object_set_new(o, "left_out", lo);
		why = json_object();
		for (i = 0; i < NR_SHORT_WHY_MAX; i++)
			json_object_set_new(why, nr_short_why_names[i],
					    json_integer((json_int_t)st->short_why[i]));
		json_object_set_new(o, "short_why", why);
		if (j->spec->prio_classes > 1) {
			json_t *bc = json_array();

			for (i = 0; i < j->spec->prio_classes; i++)
				json_array_append_new(bc, json_integer((json_int_t)st->short_cls[i]));
			json_object_set_new(o, "short_by_class", bc);
		}
		json_object_set_new(o, "drop_eligible",
				    json_pack("{s:I,s:I,s:I}", "tolerant", (json_int_t)st->tol_pkts,
					      "received", (json_int_t)st->de_pkts, "short",
					      (json_int_t)st->short_de));
	}
	if (j->lease_ms) {
		uint64_t held = nr_ctl_now_ms() - j->renewed_ms;

		json_object_set_new(o, "lease_ms", json_integer(j->lease_ms));
		json_object_set_new(o, "lease_left_ms",
				    json_integer(held < j->lease_ms ? (json_int_t)(j->lease_ms - held)
								    : 0));
	}
	if (st->n_channels)
		json_object_set_new(o, "channels", channels_json(st));
	json_object_set_new(o, "spec", nr_ctl_spec_to_json(j->spec));
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
		json_array_append_new(arr,
				      json_pack("{s:I,s:s,s:s,s:s,s:I,s:I,s:s,s:s,s:I,s:I,s:I}",
						"id", (json_int_t)j->id, "name", j->name, "tenant",
						ctl_who_name(c, j->tenant), "state", state, "ranks",
						(json_int_t)j->spec->n_conns, "channels",
						(json_int_t)nr_job_channels(j->spec), "mode",
						j->spec->mode == NR_SUM_STREAMING ? "streaming"
										  : "ordered",
						"dtype", nr_elem_name(j->spec->dtype), "msg_size",
						(json_int_t)j->spec->msg_size, "credits",
						(json_int_t)j->credits, "completed",
						(json_int_t)st->completed));
	}
	free(st);
	return json_pack("{s:b,s:o}", "ok", 1, "jobs", arr);
}

/* The tenants, their limits and what their jobs hold (the admin's stats). */
static json_t *tenants_json(struct nr_ctl *c)
{
	json_t *arr = json_array();
	unsigned i, k;

	for (i = 0; i < c->tenants.n; i++) {
		const struct ctl_tenant *t = &c->tenants.t[i];
		uint64_t bytes = 0;
		unsigned jobs = 0;

		for (k = 0; k < NR_MAX_JOBS; k++)
			if (c->jobs[k].used && c->jobs[k].tenant == (int)i) {
				jobs++;
				bytes += nr_job_pool_bytes(c->jobs[k].spec);
			}
		json_t *row = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "name", t->name,
					"jobs", (json_int_t)jobs, "pool_bytes", (json_int_t)bytes,
					"max_jobs", (json_int_t)t->max_jobs, "max_pool_bytes",
					(json_int_t)t->max_pool_bytes, "quota_refused",
					(json_int_t)t->quota_refused, "addr_refused",
					(json_int_t)t->addr_refused, "max_conns",
					(json_int_t)t->max_conns, "conns_refused",
					(json_int_t)t->conns_refused);

		json_object_update_new(row,
				       json_pack("{s:I,s:I,s:I,s:I}", "reserve_jobs",
						 (json_int_t)t->reserve_jobs, "reserve_channels",
						 (json_int_t)t->reserve_channels, "reserve_mbufs",
						 (json_int_t)t->reserve_mbufs, "reserve_refused",
						 (json_int_t)t->reserve_refused));
		json_array_append_new(arr, row);
	}
	return arr;
}

static json_t *op_stats(struct nr_ctl *c, int who)
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
		json_object_set_new(ctl, ctl_ctr_names[i],
				    json_integer((json_int_t)nr_ctl_counter(c, i)));
	if (who == NR_CTL_ADMIN) /* a tenant does not learn the others' names */
		json_object_set_new(ctl, "tenants", tenants_json(c));
	json_object_set_new(st, "control", ctl);
	return json_pack("{s:b,s:o}", "ok", 1, "stats", st);
}

/*
 * Whether the box works: the backend's own checks (sw: ports linked, workers
 * polling), or healthy with a note for a backend without any.  Answered
 * without waiting on the dataplane.
 */
static json_t *op_health(struct nr_ctl *c)
{
	json_t *h = c->b->ops->health ? c->b->ops->health(c->b) : NULL;

	if (!json_is_object(h)) {
		json_decref(h);
		h = json_pack("{s:b,s:s,s:s}", "healthy", 1, "reason", "", "note",
			      "the backend has no health checks of its own: the control API answers");
	}
	json_object_set_new(h, "backend", json_string(c->b->ops->name));
	return json_pack("{s:b,s:o}", "ok", 1, "health", h);
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

static json_t *op_job_list_req(struct nr_ctl *c, json_t *req, int who)
{
	(void)req;
	return op_job_list(c, who == NR_CTL_ADMIN);
}

static json_t *op_stats_req(struct nr_ctl *c, json_t *req, int who)
{
	(void)req;
	return op_stats(c, who);
}

static json_t *op_backend_info_req(struct nr_ctl *c, json_t *req, int who)
{
	(void)req;
	(void)who;
	return op_backend_info(c);
}

static json_t *op_health_req(struct nr_ctl *c, json_t *req, int who)
{
	(void)req;
	(void)who;
	return op_health(c);
}

/*
 * The operator's static MAC map (admin only): "mac" and "port" add an entry,
 * "mac" and "remove" take one back, neither lists them.
 */
static json_t *op_l2_static(struct nr_ctl *c, json_t *req, int who)
{
	const json_t *mv = json_object_get(req, "mac"), *pv = json_object_get(req, "port");
	const json_t *rv = json_object_get(req, "remove");
	json_t *list = NULL;
	uint8_t mac[6];
	char err[256] = "";
	int port = -1, rc;

	if (who != NR_CTL_ADMIN)
		return reply_err(c, "l2_static: the operator's (the admin socket), not a tenant's");
	if (!c->b->ops->l2_static)
		return reply_err(c, "l2_static: backend %s has no L2 table (a switch-mode sw box's)",
				 c->b->ops->name);
	if (rv && !json_is_boolean(rv))
		return reply_err(c, "l2_static: remove: true or false");
	if (mv) {
		if (!json_is_string(mv) || nr_mac_parse(json_string_value(mv), mac))
			return reply_err(c, "l2_static: mac: xx:xx:xx:xx:xx:xx");
		if (json_is_true(rv) == (pv != NULL))
			return reply_err(c, "l2_static: with mac, give port (add) or remove: true");
		if (pv && (!json_is_integer(pv) || json_integer_value(pv) < 0 ||
			   json_integer_value(pv) > 65535))
			return reply_err(c, "l2_static: port: a DPDK port id of the box, 0..65535");
		port = pv ? (int)json_integer_value(pv) : -1;
	} else if (pv || json_is_true(rv)) {
		return reply_err(c, "l2_static: port and remove go with mac");
	}
	rc = c->b->ops->l2_static(c->b, mv ? mac : NULL, port, &list, err, sizeof(err));
	if (rc)
		return reply_err(c, "%s", err[0] ? err : strerror(-rc));
	if (!mv)
		return json_pack("{s:b,s:o}", "ok", 1, "l2_static", list);
	return json_pack("{s:b}", "ok", 1);
}

static const char *const f_create[] = { "op", "token", "tenant", "spec", "lease_ms", "name", NULL };
static const char *const f_job[] = { "op", "token", "tenant", "job", "key", NULL };
static const char *const f_none[] = { "op", "token", "tenant", NULL };
static const char *const f_l2[] = { "op", "token", "tenant", "mac", "port", "remove", NULL };

/*
 * The operations (PROTOCOL.md, "Operations"; tests/layers/test_ctl_ops_docs.py
 * holds the documents to this table): the fields a request may carry, the
 * handler, and whether it runs under the API's lock.  health reads no job:
 * it does not queue behind a request waiting on a stuck dataplane (the
 * backend's health callback takes no lock of ours).
 */
static const struct ctl_op {
	const char *name;
	const char *const *fields;
	json_t *(*fn)(struct nr_ctl *c, json_t *req, int who);
	bool locked;
} ctl_ops[] = {
	{ "job_create", f_create, op_job_create, true },
	{ "job_renew", f_job, op_job_renew, true },
	{ "job_destroy", f_job, op_job_destroy, true },
	{ "job_status", f_job, op_job_status, true },
	{ "job_list", f_none, op_job_list_req, true },
	{ "stats", f_none, op_stats_req, true },
	{ "backend_info", f_none, op_backend_info_req, true },
	{ "health", f_none, op_health_req, false },
	{ "l2_static", f_l2, op_l2_static, true },
};

#define CTL_N_OPS (sizeof(ctl_ops) / sizeof(ctl_ops[0]))

/* "job_create, job_renew, ...": every operation's name, for an error. */
static const char *ops_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < CTL_N_OPS && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", ctl_ops[i].name);
	return buf;
}

json_t *nr_ctl_handle_json(struct nr_ctl *c, json_t *req, int who)
{
	const struct ctl_op *o = NULL;
	json_t *opv, *reply;
	char err[256], where[48], names[160];
	const char *op;

	nr_ctl_count(c, NR_CCTR_REQUESTS);
	if (!json_is_object(req))
		return reply_err(c, "request: expected a JSON object");
	opv = json_object_get(req, "op");
	if (!opv)
		return reply_err(c, "op: missing (one of %s)", ops_names(names, sizeof(names)));
	if (!json_is_string(opv))
		return reply_err(c, "op: expected a string, got %s", nr_ctl_json_type(opv));
	op = json_string_value(opv);
	for (size_t i = 0; i < CTL_N_OPS && !o; i++)
		if (!strcmp(op, ctl_ops[i].name))
			o = &ctl_ops[i];
	if (!o)
		return reply_err(c, "op: \"%.32s\" is not an operation (one of %s)", op,
				 ops_names(names, sizeof(names)));
	snprintf(where, sizeof(where), "%s: ", o->name);
	if (nr_ctl_unknown_fields(req, o->fields, where, err, sizeof(err)))
		return reply_err(c, "%s", err);
	if (o->locked)
		pthread_mutex_lock(&c->lock);
	reply = o->fn(c, req, who);
	if (o->locked)
		pthread_mutex_unlock(&c->lock);
	if (!reply) /* a backend string that does not encode, or no memory */
		reply = reply_err(c, "%s: could not build the reply", o->name);
	return reply;
}

json_t *nr_ctl_parse_line(const char *line, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *req;

	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!req) {
		snprintf(err, errlen, "malformed JSON at column %d: %s", je.column, je.text);
		return NULL;
	}
	if (!json_is_object(req)) {
		snprintf(err, errlen, "request: expected a JSON object, got %s",
			 nr_ctl_json_type(req));
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

char *nr_ctl_handle(struct nr_ctl *c, const char *line, size_t len, int who)
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
	reply = nr_ctl_handle_json(c, req, who);
	json_decref(req);
	if (!reply)
		return NULL;
	s = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	return s;
}
