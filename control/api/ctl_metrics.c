/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Metrics in the Prometheus text format (ctl_metrics.h): the text buffer,
 * the family and sample writers every metric of the box goes through, and
 * the control API's families (control counters, tenants, jobs).  A family's
 * samples are written together, after its HELP and TYPE lines, as the
 * format requires; label values are escaped, and no label ever carries a
 * job's key or a tenant's token.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/api/ctl_metrics.h"

/* ---- the text ------------------------------------------------------------ */

void nr_mtext_free(struct nr_mtext *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

void nr_mtext_printf(struct nr_mtext *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->oom)
		return;
	for (;;) {
		size_t room = t->cap - t->len;

		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
			return;
		}
		if ((size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap : 16384;
		char *p;

		while (cap - t->len <= (size_t)n)
			cap *= 2;
		p = realloc(t->buf, cap);
		if (p == NULL) {
			t->oom = true;
			return;
		}
		t->buf = p;
		t->cap = cap;
	}
}

/* HELP text: backslash and newline escaped (the format's rule for HELP). */
static void help_escaped(struct nr_mtext *t, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			nr_mtext_printf(t, "\\\\");
		else if (*s == '\n')
			nr_mtext_printf(t, "\\n");
		else
			nr_mtext_printf(t, "%c", *s);
	}
}

void nr_mx_family(struct nr_mtext *t, const char *name, const char *type, const char *help)
{
	nr_mtext_printf(t, "# HELP %s ", name);
	help_escaped(t, help);
	nr_mtext_printf(t, "\n# TYPE %s %s\n", name, type);
}

void nr_mx_u64(struct nr_mtext *t, const char *name, const char *labels, uint64_t v)
{
	if (labels && labels[0])
		nr_mtext_printf(t, "%s{%s} %" PRIu64 "\n", name, labels, v);
	else
		nr_mtext_printf(t, "%s %" PRIu64 "\n", name, v);
}

void nr_mx_f64(struct nr_mtext *t, const char *name, const char *labels, double v)
{
	char num[40];

	if (isnan(v))
		snprintf(num, sizeof(num), "NaN");
	else if (isinf(v))
		snprintf(num, sizeof(num), v > 0 ? "+Inf" : "-Inf");
	else
		snprintf(num, sizeof(num), "%.15g", v);
	if (labels && labels[0])
		nr_mtext_printf(t, "%s{%s} %s\n", name, labels, num);
	else
		nr_mtext_printf(t, "%s %s\n", name, num);
}

char *nr_mx_labels(char *buf, size_t len, ...)
{
	size_t n = 0;
	const char *k;
	va_list ap;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	va_start(ap, len);
	while ((k = va_arg(ap, const char *)) != NULL) {
		const char *v = va_arg(ap, const char *);
		int w = snprintf(buf + n, len - n, "%s%s=\"", n ? "," : "", k);

		if (w < 0 || (size_t)w >= len - n)
			goto full;
		n += (size_t)w;
		for (; v && *v; v++) {
			const char *esc = *v == '\\' ? "\\\\" : *v == '"' ? "\\\"" : *v == '\n' ? "\\n" : NULL;
			size_t need = esc ? 2 : 1;

			if (n + need >= len)
				goto full;
			if (esc) {
				memcpy(buf + n, esc, 2);
			} else {
				buf[n] = *v;
			}
			n += need;
		}
		if (n + 1 >= len)
			goto full;
		buf[n++] = '"';
		buf[n] = '\0';
	}
	va_end(ap);
	return buf;
full:
	va_end(ap);
	buf[0] = '\0';
	return buf;
}

/* ---- the control API's families ------------------------------------------ */

static const char *const ctl_ctr_name[NR_CCTR_MAX] = { NR_FOREACH_CTL_CTR(NR_CTR_NAME) };
static const char *const ctl_ctr_help[NR_CCTR_MAX] = { NR_FOREACH_CTL_CTR(NR_CTR_HELP) };

static void control_families(struct nr_ctl *c, struct nr_mtext *t, unsigned n_jobs)
{
	char name[96], help[256];

	nr_mx_family(t, "netreduce_control_jobs", "gauge", "jobs the control API holds");
	nr_mx_u64(t, "netreduce_control_jobs", "", n_jobs);
	for (unsigned i = 0; i < NR_CCTR_MAX; i++) {
		snprintf(name, sizeof(name), "netreduce_control_%s_total", ctl_ctr_name[i]);
		snprintf(help, sizeof(help), "control plane: %s", ctl_ctr_help[i]);
		nr_mx_family(t, name, "counter", help);
		nr_mx_u64(t, name, "", nr_ctl_counter(c, i));
	}
}

static void tenant_families(struct nr_mtext *t, const struct nr_ctl_tenant_info *ts, unsigned n)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "netreduce_tenant_jobs", "gauge", "jobs the tenant holds" },
		{ "netreduce_tenant_pool_bytes", "gauge",
		  "pool its jobs can make the box hold (ranks x channels x pool packets x MTU)" },
		{ "netreduce_tenant_max_jobs", "gauge", "the tenant's max_jobs (0: no limit of its own)" },
		{ "netreduce_tenant_max_pool_bytes", "gauge",
		  "the tenant's max_pool_bytes (0: no limit of its own)" },
		{ "netreduce_tenant_quota_refused_total", "counter",
		  "job_creates refused over the tenant's max_jobs or max_pool_bytes" },
		{ "netreduce_tenant_addr_refused_total", "counter",
		  "job_creates refused: an address (IP or MAC) the tenants file does not give it" },
		{ "netreduce_tenant_conns_refused_total", "counter",
		  "control connections refused over the tenant's max_conns" },
	};
	char lb[96];

	if (n == 0)
		return;
	for (unsigned f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		nr_mx_family(t, fam[f].name, fam[f].type, fam[f].help);
		for (unsigned i = 0; i < n; i++) {
			const uint64_t v[] = { ts[i].jobs, ts[i].pool_bytes, ts[i].max_jobs,
					       ts[i].max_pool_bytes, ts[i].quota_refused,
					       ts[i].addr_refused, ts[i].conns_refused };

			nr_mx_labels(lb, sizeof(lb), "tenant", ts[i].name, NULL);
			nr_mx_u64(t, fam[f].name, lb, v[f]);
		}
	}
}

static void job_families(struct nr_mtext *t, const struct nr_ctl_job_info *js, unsigned n)
{
	char (*lb)[192] = calloc(n ? n : 1, sizeof(*lb));
	char name[96];
	bool any_status = false, any_lease = false;

	if (lb == NULL) {
		t->oom = true;
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		char id[16];

		snprintf(id, sizeof(id), "%" PRIu32, js[i].id);
		nr_mx_labels(lb[i], sizeof(lb[i]), "job", id, "name", js[i].name, "tenant", js[i].tenant,
			     NULL);
		any_status |= js[i].status_rc == 0;
		any_lease |= js[i].lease_ms != 0;
	}
	if (n) {
		nr_mx_family(t, "netreduce_job_ranks", "gauge", "ranks (connections of each channel)");
		for (unsigned i = 0; i < n; i++)
			nr_mx_u64(t, "netreduce_job_ranks", lb[i], js[i].ranks);
		nr_mx_family(t, "netreduce_job_channels", "gauge", "channels of the job");
		for (unsigned i = 0; i < n; i++)
			nr_mx_u64(t, "netreduce_job_channels", lb[i], js[i].channels);
		nr_mx_family(t, "netreduce_job_pool_bytes", "gauge",
			     "pool the job can make the box hold (ranks x channels x pool packets x MTU)");
		for (unsigned i = 0; i < n; i++)
			nr_mx_u64(t, "netreduce_job_pool_bytes", lb[i], js[i].pool_bytes);
	}
	if (any_lease) {
		nr_mx_family(t, "netreduce_job_lease_remaining_seconds", "gauge",
			     "time left before the job's lease lapses without job_renew");
		for (unsigned i = 0; i < n; i++)
			if (js[i].lease_ms)
				nr_mx_f64(t, "netreduce_job_lease_remaining_seconds", lb[i],
					  (double)js[i].lease_left_ms / 1e3);
	}
	if (any_status) {
		nr_mx_family(t, "netreduce_job_failed", "gauge",
			     "1 when the job failed (job_status gives the reason), else 0");
		for (unsigned i = 0; i < n; i++)
			if (js[i].status_rc == 0)
				nr_mx_u64(t, "netreduce_job_failed", lb[i], js[i].st.state == NR_JOB_FAILED);
		nr_mx_family(t, "netreduce_job_slots", "gauge", "slots of the job's pools");
		for (unsigned i = 0; i < n; i++)
			if (js[i].status_rc == 0)
				nr_mx_u64(t, "netreduce_job_slots", lb[i], js[i].st.slots);
		nr_mx_family(t, "netreduce_job_slots_busy", "gauge",
			     "slots taken: filling, complete, or emitted and not yet ACKed by every receiver");
		for (unsigned i = 0; i < n; i++)
			if (js[i].status_rc == 0)
				nr_mx_u64(t, "netreduce_job_slots_busy", lb[i], js[i].st.slots_busy);
		for (unsigned c = 0; c < NR_ECTR_MAX; c++) {
			snprintf(name, sizeof(name), "netreduce_job_%s_total", nr_engine_ctr_names[c]);
			nr_mx_family(t, name, "counter", nr_engine_ctr_help[c]);
			for (unsigned i = 0; i < n; i++)
				if (js[i].status_rc == 0)
					nr_mx_u64(t, name, lb[i], js[i].st.ctr[c]);
		}
	}
	free(lb);
}

int nr_ctl_metrics(struct nr_ctl *c, struct nr_mtext *t, unsigned what)
{
	struct nr_ctl_job_info *js;
	struct nr_ctl_tenant_info *ts;
	unsigned nj, nt;
	const bool admin = what & NR_MX_ADMIN;

	int rc = nr_ctl_snapshot(c, admin && (what & NR_MX_STATUS), NR_CTL_METRICS_WAIT_MS, &js,
				 &nj, &ts, &nt);

	if (rc != 0)
		return rc;
	control_families(c, t, nj);
	if (admin) {
		tenant_families(t, ts, nt);
		job_families(t, js, nj);
	}
	free(js);
	free(ts);
	return t->oom ? -ENOMEM : 0;
}
