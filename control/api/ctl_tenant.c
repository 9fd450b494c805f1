/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tenants: the table of TCP tokens, each naming a tenant with its limits, and
 * the tenants file (jansson).  See ctl_tenant.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "control/api/ctl_log.h"
#include "control/api/ctl_spec.h"
#include "control/api/ctl_tenant.h"
#include "proto/nr_text.h"

#define TOKEN_MAX 255
#define CTL_MIN_MTU 256 /* the least path MTU a job may have (nr_job_spec_validate) */

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NR_CTL_TENANT_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

/* Constant time in the stored token's length: compare every byte, then the lengths. */
static bool token_eq(const struct ctl_tenant *t, const char *tok, size_t len)
{
	unsigned char d = len != t->token_len;
	size_t i;

	for (i = 0; i < t->token_len; i++)
		d |= (unsigned char)t->token[i] ^ (unsigned char)(len ? tok[i % len] : 0);
	return d == 0;
}

int ctl_tenants_find(const struct ctl_tenants *ts, const char *name, const char *tok, size_t len)
{
	int found = -1;
	unsigned i;

	for (i = 0; i < ts->n; i++)     /* no early exit: every token is compared */
		if (token_eq(&ts->t[i], tok, len) && found < 0 &&
		    (name == NULL || strcmp(name, ts->t[i].name) == 0))
			found = (int)i;
	return found;
}

/* "10.1.0.0/16" or "10.1.2.3" (a /32): 0, or -EINVAL. Host bits must be 0. */
static int cidr_parse(const char *s, struct ctl_cidr *out)
{
	char buf[24], *slash, *end;
	struct in_addr a;
	unsigned long len = 32;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, strlen(s) + 1);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (slash[1] < '0' || slash[1] > '9') /* strtoul would skip blanks, take signs */
			return -EINVAL;
		len = strtoul(slash + 1, &end, 10);
		if (*end || len > 32)
			return -EINVAL;
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	out->len = (uint8_t)len;
	out->mask = len ? htonl(~0u << (32 - len)) : 0;
	out->net = a.s_addr;
	return (out->net & ~out->mask) ? -ERANGE : 0;
}

static void tenant_free(struct ctl_tenant *t)
{
	if (t->token) {
		/* the secret does not outlive its table */
		explicit_bzero(t->token, t->token_len);
		free(t->token);
	}
	free(t->ips);
	free(t->macs);
	memset(t, 0, sizeof(*t));
}

/* t's ranges and MACs from cfg: 0, or -EINVAL / -ENOMEM with err. */
static int tenant_addrs(struct ctl_tenant *t, const struct nr_ctl_tenant_cfg *cfg, char *err,
			size_t errlen)
{
	unsigned i;

	t->any_ip = !cfg->ips;
	if (cfg->ips && cfg->n_ips > CTL_TENANT_IPS_MAX) {
		snprintf(err, errlen, "tenant %s: %u ips, at most %d ranges", cfg->name, cfg->n_ips,
			 CTL_TENANT_IPS_MAX);
		return -EINVAL;
	}
	if (cfg->macs && cfg->n_macs > CTL_TENANT_MACS_MAX) {
		snprintf(err, errlen, "tenant %s: %u macs, at most %d", cfg->name, cfg->n_macs,
			 CTL_TENANT_MACS_MAX);
		return -EINVAL;
	}
	if (cfg->ips && cfg->n_ips) {
		t->ips = calloc(cfg->n_ips, sizeof(*t->ips));
		if (!t->ips)
			goto nomem;
	}
	for (i = 0; cfg->ips && i < cfg->n_ips; i++) {
		int rc = cfg->ips[i] ? cidr_parse(cfg->ips[i], &t->ips[i]) : -EINVAL;

		if (rc) {
			snprintf(err, errlen, "tenant %s: ips[%u]: \"%.40s\" is not an IPv4 range%s",
				 cfg->name, i, cfg->ips[i] ? cfg->ips[i] : "",
				 rc == -ERANGE ? " (bits set past its length: write the network, "
				 "e.g. 10.1.0.0/16)" : " (a.b.c.d/len, len 0..32, or one address a.b.c.d)");
			return -EINVAL;
		}
	}
	t->n_ips = cfg->ips ? cfg->n_ips : 0;
	if (cfg->macs) {
		t->macs = calloc(cfg->n_macs ? cfg->n_macs : 1, sizeof(*t->macs));
		if (!t->macs)
			goto nomem;
	}
	for (i = 0; cfg->macs && i < cfg->n_macs; i++) {
		if (!cfg->macs[i] || nr_mac_parse(cfg->macs[i], t->macs[i]) || (t->macs[i][0] & 1)) {
			snprintf(err, errlen, "tenant %s: macs[%u]: \"%.40s\" is not a unicast MAC "
				 "(xx:xx:xx:xx:xx:xx)", cfg->name, i, cfg->macs[i] ? cfg->macs[i] : "");
			return -EINVAL;
		}
	}
	t->n_macs = cfg->macs ? cfg->n_macs : 0;
	return 0;
nomem:
	snprintf(err, errlen, "tenant %s: out of memory", cfg->name);
	return -ENOMEM;
}

static bool ip_is_mine(const struct ctl_tenant *t, uint32_t ip)
{
	if (t->any_ip)
		return true;
	for (unsigned i = 0; i < t->n_ips; i++)
		if ((ip & t->ips[i].mask) == t->ips[i].net)
			return true;
	return false;
}

static bool mac_is_mine(const struct ctl_tenant *t, unsigned tenants, const uint8_t mac[6])
{
	static const uint8_t zero[6];

	if (!memcmp(mac, zero, 6)) /* none named: nothing pinned */
		return true;
	if (!t->macs) /* unchecked on a box of one tenant */
		return tenants < 2;
	for (unsigned i = 0; i < t->n_macs; i++)
		if (!memcmp(mac, t->macs[i], 6))
			return true;
	return false;
}

/* "10.1.0.0/16, 10.3.0.0/24": t's first ranges, for an error that shows them. */
static const char *ranges_str(const struct ctl_tenant *t, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i;

	buf[0] = '\0';
	if (t->n_ips == 0) {
		snprintf(buf, len, "none");
		return buf;
	}
	for (i = 0; i < t->n_ips && i < 3 && n < len; i++) {
		char a[INET_ADDRSTRLEN];

		n += (size_t)snprintf(buf + n, len - n, "%s%s/%u", i ? ", " : "",
				      nr_ip4_str(t->ips[i].net, a), t->ips[i].len);
	}
	if (i < t->n_ips && n < len)
		snprintf(buf + n, len - n, " and %u more", t->n_ips - i);
	return buf;
}

int ctl_tenant_addr_check(const struct ctl_tenant *t, unsigned tenants, const struct nr_job_spec *s,
			  char *err, size_t errlen)
{
	for (uint32_t k = 0; k < nr_job_conns(s); k++) {
		const struct nr_conn_spec *x = &s->conns[k];
		const char *field = NULL;
		char where[48], a[INET_ADDRSTRLEN], m[NR_MAC_STRLEN], r[96];

		if (!ip_is_mine(t, x->src_ip))
			field = "src_ip";
		else if (!ip_is_mine(t, x->dst_ip))
			field = "dst_ip";
		if (field) {
			snprintf(err, errlen, "spec.%s.%s: %s is not tenant %s's address (its ips: %s); "
				 "a tenant registers only the addresses the tenants file gives it",
				 nr_job_conn_name(s, k, where, sizeof(where)), field,
				 nr_ip4_str(field[0] == 's' ? x->src_ip : x->dst_ip, a), t->name,
				 ranges_str(t, r, sizeof(r)));
			return -EACCES;
		}
		if (!mac_is_mine(t, tenants, x->src_mac))
			field = "src_mac";
		else if (!mac_is_mine(t, tenants, x->dst_mac))
			field = "dst_mac";
		if (field && !t->macs) {
			snprintf(err, errlen,
				 "spec.%s.%s: %s: tenant %s has no macs in the tenants file, "
				 "and a box shared by %u tenants pins only the MACs the file gives each "
				 "(add \"macs\" to tenant %s)",
				 nr_job_conn_name(s, k, where, sizeof(where)), field,
				 nr_mac_str(field[0] == 's' ? x->src_mac : x->dst_mac, m), t->name,
				 tenants, t->name);
			return -EACCES;
		}
		if (field) {
			snprintf(err, errlen, "spec.%s.%s: %s is not tenant %s's MAC (not among the %u "
				 "macs the tenants file gives it)",
				 nr_job_conn_name(s, k, where, sizeof(where)), field,
				 nr_mac_str(field[0] == 's' ? x->src_mac : x->dst_mac, m), t->name,
				 t->n_macs);
			return -EACCES;
		}
	}
	return 0;
}

const char *const ctl_reserve_field[3] = { "reserve_jobs", "reserve_channels", "reserve_mbufs" };
const char *const ctl_reserve_unit[3] = { "jobs", "channels of jobs", "mbufs of admission budget" };

/*
 * cfg's reservations beside those the table holds: within its own max_jobs,
 * and the sums within what the box holds (ts->cap), else -ENOSPC naming the
 * resource; a reservation the box cannot honour is refused at start, never
 * found out at a job_create.
 */
static int reserve_fits(const struct ctl_tenants *ts, const struct nr_ctl_tenant_cfg *cfg,
			char *err, size_t errlen)
{
	uint64_t sum[3] = { cfg->reserve_jobs, cfg->reserve_channels, cfg->reserve_mbufs };
	const uint64_t cap[3] = { ts->cap.jobs, ts->cap.channels, ts->cap.mbufs };

	/* a reservation its own limits keep it from using holds room from all */
	if (cfg->max_jobs && cfg->reserve_jobs > cfg->max_jobs) {
		snprintf(err, errlen, "tenant %s: reserve_jobs %u over its max_jobs %u", cfg->name,
			 cfg->reserve_jobs, cfg->max_jobs);
		return -EINVAL;
	}
	if (cfg->max_jobs && cfg->reserve_channels > (uint64_t)cfg->max_jobs * NR_MAX_CHANNELS) {
		snprintf(err, errlen,
			 "tenant %s: reserve_channels %u over what its max_jobs %u can open (%d "
			 "channels a job)",
			 cfg->name, cfg->reserve_channels, cfg->max_jobs, NR_MAX_CHANNELS);
		return -EINVAL;
	}
	if (cfg->max_pool_bytes && cfg->reserve_mbufs > cfg->max_pool_bytes / CTL_MIN_MTU) {
		snprintf(err, errlen,
			 "tenant %s: reserve_mbufs %" PRIu64 " over what its max_pool_bytes %" PRIu64
			 " can hold (a frame of pool is %d bytes or more)",
			 cfg->name, cfg->reserve_mbufs, cfg->max_pool_bytes, CTL_MIN_MTU);
		return -EINVAL;
	}
	for (unsigned i = 0; i < ts->n; i++) {
		sum[0] += ts->t[i].reserve_jobs;
		sum[1] += ts->t[i].reserve_channels;
		sum[2] += ts->t[i].reserve_mbufs;
	}
	for (unsigned r = 0; r < 3; r++)
		if (cap[r] && sum[r] > cap[r]) {
			snprintf(err, errlen,
				 "tenant %s: the tenants' %s come to %" PRIu64 ", past the "
				 "%" PRIu64 " %s this box holds",
				 cfg->name, ctl_reserve_field[r], sum[r], cap[r],
				 ctl_reserve_unit[r]);
			return -ENOSPC;
		}
	return 0;
}

int ctl_tenants_add(struct ctl_tenants *ts, const struct nr_ctl_tenant_cfg *cfg, char *err,
		    size_t errlen)
{
	struct ctl_tenant *t;
	size_t len;
	unsigned i;
	int rc;

	if (!cfg->name || !name_ok(cfg->name)) {
		snprintf(err, errlen, "tenant name \"%.40s\": 1..%d letters, digits, '-', '_' or '.'",
			 cfg->name ? cfg->name : "", NR_CTL_TENANT_NAME_MAX);
		return -EINVAL;
	}
	len = cfg->token ? strlen(cfg->token) : 0;
	/* a short token is a cheap guess, the throttle notwithstanding */
	if (len < NR_CTL_TOKEN_MIN || len > TOKEN_MAX) {
		snprintf(err, errlen, "tenant %s: a token of %zu characters; tokens are %d..%d "
			 "characters (a random secret, e.g. openssl rand -hex 16)", cfg->name, len,
			 NR_CTL_TOKEN_MIN, TOKEN_MAX);
		return -EINVAL;
	}
	for (i = 0; i < ts->n; i++) {
		if (!strcmp(ts->t[i].name, cfg->name)) {
			snprintf(err, errlen, "tenant %s: defined twice", cfg->name);
			return -EEXIST;
		}
		if (token_eq(&ts->t[i], cfg->token, len)) {
			snprintf(err, errlen, "tenant %s: same token as tenant %s (a token names one tenant)",
				 cfg->name, ts->t[i].name);
			return -EEXIST;
		}
	}
	if (ts->n == NR_CTL_MAX_TENANTS) {
		snprintf(err, errlen, "tenant %s: %d tenants exist, the most a box holds", cfg->name,
			 NR_CTL_MAX_TENANTS);
		return -ENOSPC;
	}
	rc = reserve_fits(ts, cfg, err, errlen);
	if (rc)
		return rc;
	t = &ts->t[ts->n];
	memset(t, 0, sizeof(*t));
	rc = tenant_addrs(t, cfg, err, errlen);
	if (rc) {
		tenant_free(t);
		return rc;
	}
	t->token = strdup(cfg->token);
	if (!t->token) {
		tenant_free(t);
		snprintf(err, errlen, "tenant %s: out of memory", cfg->name);
		return -ENOMEM;
	}
	snprintf(t->name, sizeof(t->name), "%s", cfg->name);
	t->token_len = len;
	t->max_jobs = cfg->max_jobs;
	t->max_pool_bytes = cfg->max_pool_bytes;
	t->max_conns = cfg->max_conns;
	t->reserve_jobs = cfg->reserve_jobs;
	t->reserve_channels = cfg->reserve_channels;
	t->reserve_mbufs = cfg->reserve_mbufs;
	return (int)ts->n++;
}

void ctl_tenants_clear(struct ctl_tenants *ts)
{
	unsigned i;

	for (i = 0; i < ts->n; i++)
		tenant_free(&ts->t[i]);
	memset(ts, 0, sizeof(*ts));
}

/* A limit field: absent = 0 (none), else a positive integer up to max. */
static int limit(const json_t *o, const char *key, uint64_t max, uint64_t *out, const char *where,
		 char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 || (uint64_t)json_integer_value(v) > max) {
		snprintf(err, errlen, "%s.%s: an integer 1..%" PRIu64 " (leave it out for %s)", where,
			 key, max, strncmp(key, "reserve_", 8) ? "no limit" : "no reservation");
		return -EINVAL;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* A list field of strings into out[] (borrowed from o): 0, or -EINVAL with err. */
static int str_list(const json_t *o, const char *key, unsigned max, const char *want,
		    const char ***out, unsigned *n, const char *where, char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, key);
	size_t i;

	*out = NULL;
	*n = 0;
	if (!v)
		return 0;
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > max) {
		snprintf(err, errlen, "%s.%s: a list of 1..%u %s", where, key, max, want);
		return -EINVAL;
	}
	*out = calloc(json_array_size(v), sizeof(**out));
	if (!*out) {
		snprintf(err, errlen, "%s.%s: out of memory", where, key);
		return -ENOMEM;
	}
	for (i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i);

		if (!json_is_string(e)) {
			snprintf(err, errlen, "%s.%s[%zu]: expected a string (%s), got %s", where, key, i,
				 want, nr_ctl_json_type(e));
			free(*out);
			*out = NULL;
			return -EINVAL;
		}
		(*out)[i] = json_string_value(e);
	}
	*n = (unsigned)i;
	return 0;
}

static int load_one(struct ctl_tenants *ts, const json_t *o, size_t i, char *err, size_t errlen)
{
	static const char *const known[] = {
		"name", "token",        "max_jobs",         "max_pool_bytes", "max_conns", "ips",
		"macs", "reserve_jobs", "reserve_channels", "reserve_mbufs",  NULL
	};
	struct nr_ctl_tenant_cfg cfg = { 0 };
	const json_t *name = json_object_get(o, "name"), *tok = json_object_get(o, "token");
	const char **ips = NULL, **macs = NULL;
	char where[32];
	uint64_t jobs, bytes, conns, rjobs, rchans, rmbufs;
	int rc;

	snprintf(where, sizeof(where), "tenants[%zu]", i);
	if (!json_is_object(o)) {
		snprintf(err, errlen, "%s: expected an object, got %s", where, nr_ctl_json_type(o));
		return -EINVAL;
	}
	snprintf(where, sizeof(where), "tenants[%zu]: ", i);
	if (nr_ctl_unknown_fields(o, known, where, err, errlen))
		return -EINVAL;
	snprintf(where, sizeof(where), "tenants[%zu]", i);
	if (!json_is_string(name) || !json_is_string(tok)) {
		snprintf(err, errlen, "%s: \"name\" and \"token\" are required strings", where);
		return -EINVAL;
	}
	if (json_string_length(tok) < NR_CTL_TOKEN_MIN || json_string_length(tok) != strlen(json_string_value(tok))) {
		snprintf(err, errlen, "%s.token: at least %d characters, no NUL (a random secret, e.g. "
			 "head -c 24 /dev/urandom | base64)", where, NR_CTL_TOKEN_MIN);
		return -EINVAL;
	}
	if (limit(o, "max_jobs", NR_MAX_JOBS, &jobs, where, err, errlen) ||
	    limit(o, "max_pool_bytes", UINT64_C(1) << 50, &bytes, where, err, errlen) ||
	    limit(o, "max_conns", 4096, &conns, where, err, errlen) ||
	    limit(o, "reserve_jobs", NR_MAX_JOBS, &rjobs, where, err, errlen) ||
	    limit(o, "reserve_channels", UINT32_MAX, &rchans, where, err, errlen) ||
	    limit(o, "reserve_mbufs", UINT64_C(1) << 40, &rmbufs, where, err, errlen))
		return -EINVAL;
	/* no default that lets a tenant register any address: the file says which */
	if (!json_object_get(o, "ips")) {
		snprintf(err, errlen, "%s (%s): \"ips\" is required: the IPv4 ranges its jobs may "
			 "register, e.g. [\"10.1.0.0/16\"] ([\"0.0.0.0/0\"]: any address, for a "
			 "tenant trusted with every host's)", where, json_string_value(name));
		return -EINVAL;
	}
	rc = str_list(o, "ips", CTL_TENANT_IPS_MAX, "IPv4 ranges, a.b.c.d/len", &ips, &cfg.n_ips,
		      where, err, errlen);
	if (!rc)
		rc = str_list(o, "macs", CTL_TENANT_MACS_MAX, "unicast MACs, xx:xx:xx:xx:xx:xx",
			      &macs, &cfg.n_macs, where, err, errlen);
	if (!rc) {
		cfg.name = json_string_value(name);
		cfg.token = json_string_value(tok);
		cfg.max_jobs = (uint32_t)jobs;
		cfg.max_pool_bytes = bytes;
		cfg.max_conns = (uint32_t)conns;
		cfg.reserve_jobs = (uint32_t)rjobs;
		cfg.reserve_channels = (uint32_t)rchans;
		cfg.reserve_mbufs = rmbufs;
		cfg.ips = ips;
		cfg.macs = macs;
		rc = ctl_tenants_add(ts, &cfg, err, errlen);
	}
	free(ips);
	free(macs);
	return rc < 0 ? rc : 0;
}

int ctl_tenant_overlap(const struct ctl_tenant *a, const struct ctl_tenant *b, char *what, size_t len)
{
	char x[INET_ADDRSTRLEN], y[INET_ADDRSTRLEN], m[NR_MAC_STRLEN];

	/* a tenant of every address was given them all on purpose (PROTOCOL.md) */
	for (unsigned i = 0; !a->any_ip && !b->any_ip && i < a->n_ips; i++)
		for (unsigned j = 0; j < b->n_ips; j++) {
			uint32_t mask = a->ips[i].mask & b->ips[j].mask; /* the wider range's */

			if (a->ips[i].len == 0 || b->ips[j].len == 0) /* 0.0.0.0/0: as any_ip */
				continue;
			if ((a->ips[i].net & mask) == (b->ips[j].net & mask)) {
				snprintf(what, len, "addresses (%s/%u and %s/%u)",
					 nr_ip4_str(a->ips[i].net, x), a->ips[i].len,
					 nr_ip4_str(b->ips[j].net, y), b->ips[j].len);
				return 1;
			}
		}
	for (unsigned i = 0; a->macs && b->macs && i < a->n_macs; i++)
		for (unsigned j = 0; j < b->n_macs; j++)
			if (!memcmp(a->macs[i], b->macs[j], 6)) {
				snprintf(what, len, "a MAC (%s)", nr_mac_str(a->macs[i], m));
				return 1;
			}
	return 0;
}

int ctl_tenants_load(struct ctl_tenants *ts, const char *path, char *err, size_t errlen)
{
	char msg[256];
	json_error_t je;
	json_t *root, *arr;
	struct stat st;
	unsigned n0;
	size_t i;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "tenants file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) == 0 && (st.st_mode & 077)) {
		snprintf(err, errlen, "tenants file %s holds tokens and is open to group or others "
			 "(mode %03o): chmod 600 it", path, (unsigned)(st.st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	close(fd);
	if (!root) {
		snprintf(err, errlen, "tenants file %s: line %d: %s", path, je.line, je.text);
		return -EINVAL;
	}
	arr = json_object_get(root, "tenants");
	if (!json_is_object(root) || json_object_size(root) != 1 || !json_is_array(arr)) {
		snprintf(err, errlen,
			 "tenants file %s: expected {\"tenants\": [{\"name\", \"token\", \"ips\", "
			 "\"macs\", \"max_jobs\", \"max_pool_bytes\", \"max_conns\", \"reserve_jobs\", "
			 "\"reserve_channels\", \"reserve_mbufs\"}, ...]}",
			 path);
		json_decref(root);
		return -EINVAL;
	}
	n0 = ts->n;
	for (i = 0; i < json_array_size(arr) && rc == 0; i++) {
		rc = load_one(ts, json_array_get(arr, i), i, msg, sizeof(msg));
		if (rc)
			snprintf(err, errlen, "tenants file %s: %s", path, msg);
	}
	json_decref(root);
	if (rc) {               /* all of the file or none of it */
		while (ts->n > n0)
			tenant_free(&ts->t[--ts->n]);
		return rc;
	}
	for (unsigned a = n0; a < ts->n; a++)
		for (unsigned b = 0; b < a; b++)
			if (ctl_tenant_overlap(&ts->t[b], &ts->t[a], msg, sizeof(msg)))
				nr_log(LOG_WARNING,
				       "netreduce control: tenants file %s: tenants %s and %s share %s: "
				       "either may register connections on the other's hosts, or pin "
				       "its MACs first; give each its own, or merge them",
				       path, ts->t[b].name, ts->t[a].name, msg);
	return (int)i;
}
