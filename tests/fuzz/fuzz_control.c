/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_control: request lines through nr_ctl_handle() over the sw backend,
 * whose backend is a tiny in-process engine (nrz_backend.c: job_create ->
 * agg_engine_job_add ...).
 *
 * The input is split at '\n' into request lines; "$JOB" and "$KEY" in a line
 * become the id and key of the last job created (so the fuzzer reaches the
 * keyed paths without guessing 128-bit keys).  Each line is handed over in an
 * exact-size buffer without a terminating NUL.  The whole script runs twice:
 * as admin (UNIX socket) and as a tenant (TCP).
 *
 * Invariants: every reply is one line of valid JSON, an object with a boolean
 * "ok", and an "error" string when ok is false; a tenant never gets ok for
 * job_status/job_destroy without the job's real key, nor for job_list; the
 * engine holds exactly the jobs the replies say exist; nothing leaks
 * (libFuzzer's leak check, ASan at exit).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "control/api/nr_control.h"

#include "nrz_backend.h"
#include "nrz_fuzz.h"

#define NRZ_MAX_LINES 64
#define NRZ_MAX_TRACK 128

struct tracked {
	json_int_t id;
	char key[80];
	bool live;
};

struct state {
	struct tracked t[NRZ_MAX_TRACK];
	unsigned nt;
	json_int_t last_id;
	char last_key[80];
	bool have_last;
};

/* ---- script ------------------------------------------------------------------- */

/* Replace $JOB and $KEY; returns a malloc'd buffer of *outlen bytes, no NUL. */
static char *substitute(const struct state *s, const uint8_t *line, size_t len, size_t *outlen)
{
	char job[32], *out;
	size_t cap = len * 40 + 1, n = 0;

	snprintf(job, sizeof(job), "%lld", s->have_last ? (long long)s->last_id : 1LL);
	out = malloc(cap);
	NRZ_CHECK(out != NULL, "malloc");
	for (size_t i = 0; i < len;) {
		if (len - i >= 4 && !memcmp(line + i, "$JOB", 4)) {
			memcpy(out + n, job, strlen(job));
			n += strlen(job);
			i += 4;
		} else if (len - i >= 4 && !memcmp(line + i, "$KEY", 4)) {
			const char *k = s->have_last ? s->last_key : "";

			memcpy(out + n, k, strlen(k));
			n += strlen(k);
			i += 4;
		} else {
			out[n++] = (char)line[i++];
		}
	}
	/* exact size: a read past the line is an ASan report */
	char *exact = malloc(n ? n : 1);

	NRZ_CHECK(exact != NULL, "malloc");
	memcpy(exact, out, n);
	free(out);
	*outlen = n;
	return exact;
}

static struct tracked *track_find(struct state *s, json_int_t id)
{
	for (unsigned k = 0; k < s->nt; k++)
		if (s->t[k].id == id)
			return &s->t[k];
	return NULL;
}

static void check_reply(struct state *s, const char *line, size_t len, const char *reply,
			bool admin)
{
	json_error_t je;
	json_t *r, *ok, *req;
	const char *op = NULL;

	NRZ_CHECK(reply != NULL, "no reply");
	NRZ_CHECK(!strchr(reply, '\n') && !strchr(reply, '\r'), "reply spans lines: %s", reply);
	r = json_loads(reply, 0, &je);
	NRZ_CHECK(r != NULL, "reply is not JSON (%s): %s", je.text, reply);
	NRZ_CHECK(json_is_object(r), "reply is not an object: %s", reply);
	ok = json_object_get(r, "ok");
	NRZ_CHECK(json_is_boolean(ok), "reply without a boolean ok: %s", reply);
	if (!json_is_true(ok)) {
		json_t *e = json_object_get(r, "error");

		NRZ_CHECK(json_is_string(e) && json_string_length(e) > 0,
			  "error reply without an error text: %s", reply);
		json_decref(r);
		return;
	}

	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (req && json_is_string(json_object_get(req, "op")))
		op = json_string_value(json_object_get(req, "op"));
	NRZ_CHECK(req && op, "ok reply to a request without a string op: %s", reply);

	if (!strcmp(op, "job_create")) {
		json_t *id = json_object_get(r, "job"), *key = json_object_get(r, "key");

		NRZ_CHECK(json_is_integer(id) && json_is_string(key) &&
			  json_string_length(key) == 32, "job_create reply: %s", reply);
		NRZ_CHECK(!track_find(s, json_integer_value(id)) ||
			  !track_find(s, json_integer_value(id))->live,
			  "job id %lld handed out twice", (long long)json_integer_value(id));
		if (s->nt < NRZ_MAX_TRACK) {
			struct tracked *t = &s->t[s->nt++];

			t->id = json_integer_value(id);
			snprintf(t->key, sizeof(t->key), "%s", json_string_value(key));
			t->live = true;
		}
		s->last_id = json_integer_value(id);
		snprintf(s->last_key, sizeof(s->last_key), "%s", json_string_value(key));
		s->have_last = true;
	} else if (!strcmp(op, "job_status") || !strcmp(op, "job_destroy")) {
		json_t *jv = json_object_get(req, "job"), *kv = json_object_get(req, "key");
		struct tracked *t = json_is_integer(jv) ? track_find(s, json_integer_value(jv)) : NULL;

		NRZ_CHECK(t && t->live, "%s ok for a job never created: %.*s", op, (int)len, line);
		if (!admin)
			NRZ_CHECK(json_is_string(kv) && !strcasecmp(json_string_value(kv), t->key),
				  "tenant reached job %lld without its key: %.*s",
				  (long long)t->id, (int)len, line);
		if (!strcmp(op, "job_destroy"))
			t->live = false;
	} else if (!strcmp(op, "job_list")) {
		NRZ_CHECK(admin, "job_list answered to a tenant");
	}
	json_decref(req);
	json_decref(r);
}

static void run_script(const uint8_t *data, size_t size, bool admin)
{
	struct nrz_backend nb;
	struct state *s = calloc(1, sizeof(*s));
	struct nr_backend *b;
	struct nr_ctl *c;
	unsigned lines = 0, live = 0;

	NRZ_CHECK(s != NULL, "calloc");
	b = nrz_backend_new(&nb);
	c = nr_ctl_create(b);
	NRZ_CHECK(c != NULL, "nr_ctl_create");

	for (size_t i = 0; i <= size && lines < NRZ_MAX_LINES; lines++) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t l = nl ? (size_t)(nl - (data + i)) : size - i, n;
		char *line = substitute(s, data + i, l, &n);
		char *reply = nr_ctl_handle(c, line, n, admin ? NR_CTL_ADMIN : 0);

		check_reply(s, line, n, reply, admin);
		free(reply);
		free(line);
		i += l + 1;
	}
	for (unsigned k = 0; k < s->nt; k++)
		live += s->t[k].live;
	if (s->nt < NRZ_MAX_TRACK)
		NRZ_CHECK(nb.jobs == live, "engine holds %u jobs, replies say %u", nb.jobs, live);
	nr_ctl_destroy(c);       /* destroys the backend */
	agg_engine_destroy(nb.eng);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 70000)
		return 0;
	run_script(data, size, true);
	run_script(data, size, false);
	return 0;
}
