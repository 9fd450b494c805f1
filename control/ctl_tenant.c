/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tenants: the table of TCP tokens, each naming a tenant with its limits, and
 * the tenants file (jansson).  See ctl_tenant.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "control/ctl_spec.h"
#include "control/ctl_tenant.h"

#define TOKEN_MAX 255

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

int ctl_tenants_find(const struct ctl_tenants *ts, const char *tok, size_t len)
{
	int found = -1;
	unsigned i;

	for (i = 0; i < ts->n; i++)     /* no early exit: every token is compared */
		if (token_eq(&ts->t[i], tok, len) && found < 0)
			found = (int)i;
	return found;
}

int ctl_tenants_add(struct ctl_tenants *ts, const struct nr_ctl_tenant_cfg *cfg, char *err,
		    size_t errlen)
{
	struct ctl_tenant *t;
	size_t len;
	unsigned i;

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
	t = &ts->t[ts->n];
	memset(t, 0, sizeof(*t));
	t->token = strdup(cfg->token);
	if (!t->token) {
		snprintf(err, errlen, "tenant %s: out of memory", cfg->name);
		return -ENOMEM;
	}
	snprintf(t->name, sizeof(t->name), "%s", cfg->name);
	t->token_len = len;
	t->max_jobs = cfg->max_jobs;
	t->max_pool_bytes = cfg->max_pool_bytes;
	return (int)ts->n++;
}

void ctl_tenants_clear(struct ctl_tenants *ts)
{
	unsigned i;

	for (i = 0; i < ts->n; i++) {
		/* the secret does not outlive its table */
		explicit_bzero(ts->t[i].token, ts->t[i].token_len);
		free(ts->t[i].token);
	}
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
		snprintf(err, errlen, "%s.%s: an integer 1..%" PRIu64 " (leave it out for no limit)",
			 where, key, max);
		return -EINVAL;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int load_one(struct ctl_tenants *ts, const json_t *o, size_t i, char *err, size_t errlen)
{
	static const char *const known[] = { "name", "token", "max_jobs", "max_pool_bytes", NULL };
	struct nr_ctl_tenant_cfg cfg = { 0 };
	const json_t *name = json_object_get(o, "name"), *tok = json_object_get(o, "token");
	char where[32];
	uint64_t jobs, bytes;
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
	    limit(o, "max_pool_bytes", UINT64_C(1) << 50, &bytes, where, err, errlen))
		return -EINVAL;
	cfg.name = json_string_value(name);
	cfg.token = json_string_value(tok);
	cfg.max_jobs = (uint32_t)jobs;
	cfg.max_pool_bytes = bytes;
	rc = ctl_tenants_add(ts, &cfg, err, errlen);
	return rc < 0 ? rc : 0;
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
		snprintf(err, errlen, "tenants file %s: expected {\"tenants\": [{\"name\", \"token\", "
			 "\"max_jobs\", \"max_pool_bytes\"}, ...]}", path);
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
		while (ts->n > n0) {
			struct ctl_tenant *t = &ts->t[--ts->n];

			explicit_bzero(t->token, t->token_len);
			free(t->token);
			memset(t, 0, sizeof(*t));
		}
		return rc;
	}
	return (int)i;
}
