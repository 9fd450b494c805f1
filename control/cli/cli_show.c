/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreducectl's output (cli.h): a reply for a person (jobs as a table, a
 * job's channels and counters, health, stats as flat key = value lines), or
 * as the box sent it with --json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cli/cli.h"

static char *scalar_str(const json_t *v)
{
	char *s = NULL;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v) || json_is_real(v) || json_is_boolean(v) || json_is_null(v))
		s = json_dumps(v, JSON_ENCODE_ANY);
	return s ? s : strdup("?");
}

struct kv {
	char *k, *v;
};

struct kvlist {
	struct kv *e;
	size_t n, cap;
	size_t wk;
};

static void kv_add(struct kvlist *l, const char *k, char *v)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		struct kv *e = realloc(l->e, cap * sizeof(*e));

		if (!e) {
			free(v);
			return;
		}
		l->e = e;
		l->cap = cap;
	}
	l->e[l->n].k = strdup(k);
	l->e[l->n].v = v;
	if (strlen(k) > l->wk)
		l->wk = strlen(k);
	l->n++;
}

/* Flatten nested objects and arrays into "a.b[2].c  value" lines. */
static void flatten(struct kvlist *l, const char *prefix, const json_t *v)
{
	char name[256];

	if (json_is_object(v)) {
		const char *k;
		json_t *x;

		json_object_foreach((json_t *)v, k, x)
		{
			snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "." : "", k);
			flatten(l, name, x);
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x)
		{
			snprintf(name, sizeof(name), "%s[%zu]", prefix, i);
			flatten(l, name, x);
		}
	} else {
		kv_add(l, prefix, scalar_str(v));
	}
}

static void kv_print(struct kvlist *l, const char *indent)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		printf("%s%-*s  %s\n", indent, (int)l->wk, l->e[i].k, l->e[i].v);
		free(l->e[i].k);
		free(l->e[i].v);
	}
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static void print_flat(const json_t *v, const char *indent)
{
	struct kvlist l = { 0 };

	flatten(&l, "", v);
	kv_print(&l, indent);
}

/* An aligned table of the given columns over an array of objects. */
static void print_table(const json_t *arr, const char *const *cols, const char *const *heads,
			unsigned ncols)
{
	size_t w[16] = { 0 }, i;
	unsigned c;
	json_t *row;

	for (c = 0; c < ncols; c++)
		w[c] = strlen(heads[c]);
	json_array_foreach(arr, i, row)
	{
		for (c = 0; c < ncols; c++) {
			char *s = scalar_str(json_object_get(row, cols[c]));

			if (s && strlen(s) > w[c])
				w[c] = strlen(s);
			free(s);
		}
	}
	for (c = 0; c < ncols; c++)
		printf("%-*s%s", c + 1 < ncols ? (int)w[c] : 0, heads[c],
		       c + 1 < ncols ? "  " : "\n");
	json_array_foreach(arr, i, row)
	{
		for (c = 0; c < ncols; c++) {
			json_t *v = json_object_get(row, cols[c]);
			char *s = v ? scalar_str(v) : strdup("-");

			printf("%-*s%s", c + 1 < ncols ? (int)w[c] : 0, s ? s : "",
			       c + 1 < ncols ? "  " : "\n");
			free(s);
		}
	}
}

static void show_jobs(const json_t *reply)
{
	static const char *const cols[] = { "id",   "name",  "tenant",   "state",   "ranks",
					    "mode", "dtype", "msg_size", "credits", "completed" };
	static const char *const heads[] = { "ID",   "NAME",  "TENANT",   "STATE",   "RANKS",
					     "MODE", "DTYPE", "MSG_SIZE", "CREDITS", "COMPLETED" };
	const json_t *jobs = json_object_get(reply, "jobs");

	if (!json_array_size(jobs)) {
		printf("no jobs\n");
		return;
	}
	print_table(jobs, cols, heads, 10);
}

static void show_job(const json_t *job)
{
	static const char *const ccols[] = { "rank",    "src_ip", "src_qpn", "dst_ip",
					     "dst_qpn", "ipsn",   "left_out" };
	static const char *const cheads[] = { "RANK",    "SRC_IP", "SRC_QPN", "DST_IP",
					      "DST_QPN", "IPSN",   "LEFT_OUT" };
	const json_t *left_out = json_object_get(job, "left_out");
	static const char *const top[] = { "id",           "name",       "tenant",
					   "state",        "reason",     "ranks",
					   "credits",      "result_key", "next_emit",
					   "next_release", "completed",  "slots",
					   "slots_busy",   "lease_ms",   "lease_left_ms" };
	const json_t *spec = json_object_get(job, "spec");
	const json_t *conns = json_object_get(spec, "conns");
	struct kvlist l = { 0 };
	json_t *tab, *c;
	unsigned i;
	size_t k;

	for (i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		json_t *v = json_object_get(job, top[i]);

		if (!v || ((!strcmp(top[i], "reason") || !strcmp(top[i], "name")) &&
			   !strcmp(json_string_value(v) ?: "", "")))
			continue;
		if (!strcmp(top[i], "result_key") && json_is_integer(v)) {
			char *h = malloc(16);

			if (h)
				snprintf(h, 16, "0x%08llx",
					 (unsigned long long)json_integer_value(v));
			kv_add(&l, top[i], h ? h : strdup("?"));
			continue;
		}
		kv_add(&l, top[i], scalar_str(v));
	}
	if (json_is_object(spec)) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)spec, key, v) if (!json_is_array(v))
			kv_add(&l, key, scalar_str(v));
	}
	kv_print(&l, "");
	tab = json_array();
	json_array_foreach(conns, k, c)
	{
		json_t *row = json_deep_copy(c);

		json_object_set_new(row, "rank", json_integer((json_int_t)k));
		/* short slots: what the box left out of this rank's contributions */
		if (json_array_get(left_out, k))
			json_object_set(row, "left_out", json_array_get(left_out, k));
		json_array_append_new(tab, row);
	}
	printf("\nconnections:\n");
	print_table(tab, ccols, cheads, left_out ? 7 : 6);
	json_decref(tab);
	printf("\ncounters:\n");
	print_flat(json_object_get(job, "counters"), "  ");
	if (json_object_get(job, "short_why")) {
		printf("\nshort_denied by reason:\n");
		print_flat(json_object_get(job, "short_why"), "  ");
	}
	if (json_is_array(json_object_get(job, "short_by_class"))) {
		const json_t *bc = json_object_get(job, "short_by_class");

		printf("\nshort_slots by priority class (0 the lowest):");
		for (size_t i = 0; i < json_array_size(bc); i++)
			printf(" %" JSON_INTEGER_FORMAT, json_integer_value(json_array_get(bc, i)));
		printf("\n");
	}
	if (json_is_object(json_object_get(job, "drop_eligible"))) {
		const json_t *de = json_object_get(job, "drop_eligible");

		printf("\ndrop-eligible: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
		       " tolerant contributions received, %" JSON_INTEGER_FORMAT
		       " short_slots of them alone\n",
		       json_integer_value(json_object_get(de, "received")),
		       json_integer_value(json_object_get(de, "tolerant")),
		       json_integer_value(json_object_get(de, "short")));
	}
}

/* "healthy: ..." or "unhealthy: <reason>", then the checks. */
static void show_health(const json_t *h)
{
	const json_t *v;
	size_t i;

	if (json_is_true(json_object_get(h, "healthy")))
		printf("healthy: %lld ports linked, %lld workers polling\n",
		       (long long)json_integer_value(json_object_get(h, "ports_up")),
		       (long long)json_integer_value(json_object_get(h, "workers_polling")));
	else
		printf("unhealthy: %s\n", json_string_value(json_object_get(h, "reason")) ?: "?");
	json_array_foreach(json_object_get(h, "ports"), i, v)
		printf("  port %lld %-20s link %s\n",
		       (long long)json_integer_value(json_object_get(v, "port")),
		       json_string_value(json_object_get(v, "name")) ?: "?",
		       json_is_true(json_object_get(v, "link_up")) ? "up" : "DOWN");
	json_array_foreach(json_object_get(h, "workers"), i, v)
		printf("  worker %lld (lcore %lld)  %s, heartbeat %lld ms ago\n",
		       (long long)json_integer_value(json_object_get(v, "worker")),
		       (long long)json_integer_value(json_object_get(v, "lcore")),
		       json_is_true(json_object_get(v, "polling")) ? "polling" : "STUCK",
		       (long long)json_integer_value(json_object_get(v, "heartbeat_age_ms")));
	if ((v = json_object_get(h, "note")))
		printf("  (%s)\n", json_string_value(v) ?: "");
}

/* --json: the reply as the box sent it, one line. */
void cli_print_json(const json_t *reply)
{
	char *s = json_dumps(reply, JSON_COMPACT);

	if (s)
		printf("%s\n", s);
	free(s);
}

/* The static MAC map, or what an add or remove did. */
static void show_l2_static(const json_t *req, const json_t *reply)
{
	const json_t *list = json_object_get(reply, "l2_static");
	const char *mac = json_string_value(json_object_get(req, "mac"));

	if (mac) {
		if (json_object_get(req, "remove"))
			printf("%s taken back: learned again\n", mac);
		else
			printf("%s static on port %lld\n", mac,
			       (long long)json_integer_value(json_object_get(req, "port")));
		return;
	}
	printf("%zu static MAC%s\n", json_array_size(list), json_array_size(list) == 1 ? "" : "s");
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *e = json_array_get(list, i);

		printf("  %s  port %lld  jobs' pins %lld\n",
		       json_string_value(json_object_get(e, "mac")) ?: "?",
		       (long long)json_integer_value(json_object_get(e, "port")),
		       (long long)json_integer_value(json_object_get(e, "job_pins")));
	}
}

void cli_show_reply(const struct opts *o, const json_t *req, const json_t *reply)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	if (o->json) {
		cli_print_json(reply);
		return;
	}
	if (!strcmp(op, "job_list")) {
		show_jobs(reply);
	} else if (!strcmp(op, "job_create")) {
		printf("job %lld created\n",
		       (long long)json_integer_value(json_object_get(reply, "job")));
		printf("  credits     %lld\n",
		       (long long)json_integer_value(json_object_get(reply, "credits")));
		printf("  key         %s\n", json_string_value(json_object_get(reply, "key")) ?: "");
		printf("  result_key  0x%08llx\n",
		       (unsigned long long)json_integer_value(json_object_get(reply, "result_key")));
	} else if (!strcmp(op, "job_destroy")) {
		printf("job %lld destroyed\n",
		       (long long)json_integer_value(json_object_get(req, "job")));
	} else if (!strcmp(op, "job_status")) {
		show_job(json_object_get(reply, "job"));
	} else if (!strcmp(op, "stats")) {
		print_flat(json_object_get(reply, "stats"), "");
	} else if (!strcmp(op, "health")) {
		show_health(json_object_get(reply, "health"));
	} else if (!strcmp(op, "l2_static")) {
		show_l2_static(req, reply);
	} else {
		print_flat(json_object_get(reply, "backend"), "");
	}
}
