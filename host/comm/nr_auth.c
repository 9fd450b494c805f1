/* SPDX-License-Identifier: BSD-3-Clause */
/* The rendezvous' proofs of the job's secret, and a connection's proven lines: see nr_auth.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "comm_internal.h"
#include "nr_auth.h"
#include "nr_tcp.h"
#include "proto/nr_text.h"

#define KEY_LABEL "netreduce rendezvous key/1"
#define CTX_LABEL "netreduce rendezvous/1"
#define SECRET_FILE_MAX 65536

void nr_auth_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

int nr_auth_unhex(const char *s, uint8_t *p, size_t n)
{
	if (!s || strlen(s) != 2 * n || nr_hex_decode(s, p, n))
		return -1;
	return 0;
}

int nr_auth_random(uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = getrandom(p, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static bool is_path(const char *s)
{
	return s[0] == '/' || s[0] == '.';
}

int nr_auth_check_secret(const char *s, char *err, size_t errlen)
{
	size_t n;

	if (!s || !*s)
		return 0;
	n = strlen(s);
	if (n > NR_AUTH_SECRET_MAX) {
		snprintf(err, errlen, "%zu characters, more than %d: put the secret in a file and "
			 "give its path", n, NR_AUTH_SECRET_MAX);
		return -1;
	}
	if (is_path(s))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i])) {
			snprintf(err, errlen, "not hex digits (character %zu is '%c'), nor a file's "
				 "path (one starts with / or .)", i + 1, s[i]);
			return -1;
		}
	if (n % 2 || n < 2 * NR_AUTH_SECRET_MIN) {
		snprintf(err, errlen, "%zu hex digits: give an even number, at least %d (%d bytes; "
			 "e.g. openssl rand -hex 32)", n, 2 * NR_AUTH_SECRET_MIN, NR_AUTH_SECRET_MIN);
		return -1;
	}
	return 0;
}

/* The file's bytes, one trailing newline left out: length, or -1 with err set. */
static ssize_t read_secret(const char *path, uint8_t *buf, size_t cap, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n == cap) {
		snprintf(err, errlen, "%s: longer than %zu bytes: is it the secret?", path, cap - 1);
		return -1;
	}
	if (n && buf[n - 1] == '\n')
		n--;
	if (n < NR_AUTH_SECRET_MIN) {
		snprintf(err, errlen, "%s holds %zu bytes, fewer than %d (e.g. head -c 32 "
			 "/dev/urandom > %s)", path, n, NR_AUTH_SECRET_MIN, path);
		return -1;
	}
	return (ssize_t)n;
}

/* "NR_X" where the environment holds this very value, else "FIELD of struct nr_config". */
static const char *source_name(const char *var, const char *field, const char *value, char *buf,
			       size_t len)
{
	const char *env = getenv(var);

	if (env && !strcmp(env, value))
		snprintf(buf, len, "%s", var);
	else
		snprintf(buf, len, "%s of struct nr_config", field);
	return buf;
}

int nr_auth_init(struct nr_auth *a, const char *job_secret, const char *token, char *err,
		 size_t errlen)
{
	uint8_t *secret = malloc(SECRET_FILE_MAX);
	char name[64], why[256];
	ssize_t n = 0;
	unsigned mdlen = 0;

	memset(a, 0, sizeof(*a));
	if (!secret) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (job_secret && *job_secret) {
		source_name("NR_JOB_SECRET", "job_secret", job_secret, name, sizeof(name));
		if (nr_auth_check_secret(job_secret, why, sizeof(why))) {
			snprintf(err, errlen, "%s: %s", name, why);
			goto bad;
		}
		if (is_path(job_secret)) {
			n = read_secret(job_secret, secret, SECRET_FILE_MAX, why, sizeof(why));
			if (n < 0) {
				snprintf(err, errlen, "%s: %s", name, why);
				goto bad;
			}
			snprintf(a->src, sizeof(a->src), "%s (the file %s)", name, job_secret);
		} else {
			n = (ssize_t)(strlen(job_secret) / 2);
			nr_auth_unhex(job_secret, secret, (size_t)n);
			snprintf(a->src, sizeof(a->src), "%s", name);
		}
	} else if (token && *token) {
		n = (ssize_t)strlen(token);
		memcpy(secret, token, (size_t)n < SECRET_FILE_MAX ? (size_t)n : SECRET_FILE_MAX);
		snprintf(a->src, sizeof(a->src), "%s (the box's token)",
			 source_name("NR_TOKEN", "token", token, name, sizeof(name)));
	} else {
		free(secret);
		return 0;
	}
	if (!HMAC(EVP_sha256(), secret, (int)n, (const uint8_t *)KEY_LABEL, strlen(KEY_LABEL), a->key,
		  &mdlen) || mdlen != NR_AUTH_KEY_BYTES) {
		snprintf(err, errlen, "HMAC-SHA256 failed (libcrypto)");
		goto bad;
	}
	a->on = true;
	OPENSSL_cleanse(secret, (size_t)n);
	free(secret);
	return 0;
bad:
	OPENSSL_cleanse(secret, n > 0 ? (size_t)n : 0);
	free(secret);
	memset(a, 0, sizeof(*a));
	return -EINVAL;
}

int nr_auth_proof(const struct nr_auth *a, const struct nr_auth_ctx *x, void *msg,
		  char hex[NR_AUTH_PROOF_HEX + 1])
{
	json_t *proof = json_object_get(msg, "proof");
	uint8_t head[sizeof(CTX_LABEL) + 1 + NR_AUTH_NONCE_BYTES + NR_AUTH_MNONCE_BYTES + 10];
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0;
	size_t k = 0, len;
	uint8_t *buf;
	char *body;
	bool ok;

	/* the body without "proof", the member put back as it was */
	if (proof) {
		json_incref(proof);
		json_object_del(msg, "proof");
	}
	body = json_dumps(msg, JSON_COMPACT | JSON_SORT_KEYS);
	if (proof)
		json_object_set_new(msg, "proof", proof);
	if (!body)
		return -ENOMEM;
	memcpy(head, CTX_LABEL, sizeof(CTX_LABEL));     /* its NUL too */
	k = sizeof(CTX_LABEL);
	head[k++] = (uint8_t)x->dir;
	memcpy(head + k, x->nonce, NR_AUTH_NONCE_BYTES);
	k += NR_AUTH_NONCE_BYTES;
	memcpy(head + k, x->mnonce, NR_AUTH_MNONCE_BYTES);
	k += NR_AUTH_MNONCE_BYTES;
	memcpy(head + k, &x->ip, 4);
	k += 4;
	head[k++] = (uint8_t)(x->port >> 8);
	head[k++] = (uint8_t)x->port;
	for (int s = 24; s >= 0; s -= 8)
		head[k++] = (uint8_t)(x->seq >> s);

	/* one buffer: HMAC() is libcrypto's one call that no version deprecates */
	len = strlen(body);
	buf = malloc(k + len);
	ok = buf != NULL;
	if (ok) {
		memcpy(buf, head, k);
		memcpy(buf + k, body, len);
		ok = HMAC(EVP_sha256(), a->key, NR_AUTH_KEY_BYTES, buf, k + len, mac, &maclen) &&
		     maclen == 32;
		free(buf);
	}
	free(body);
	if (!ok)
		return -ENOMEM;
	nr_auth_hex(mac, 32, hex);
	return 0;
}

int nr_auth_sign(const struct nr_auth *a, const struct nr_auth_ctx *x, void *msg)
{
	char hex[NR_AUTH_PROOF_HEX + 1];

	if (nr_auth_proof(a, x, msg, hex) ||
	    json_object_set_new(msg, "proof", json_string(hex)))
		return -ENOMEM;
	return 0;
}

bool nr_auth_verify(const struct nr_auth *a, const struct nr_auth_ctx *x, void *msg)
{
	const char *got = json_string_value(json_object_get(msg, "proof"));
	char want[NR_AUTH_PROOF_HEX + 1], have[NR_AUTH_PROOF_HEX + 1];
	bool ok;

	if (!got || strlen(got) != NR_AUTH_PROOF_HEX) {
		json_object_del(msg, "proof");
		return false;
	}
	memcpy(have, got, sizeof(have));
	json_object_del(msg, "proof");
	if (nr_auth_proof(a, x, msg, want))
		return false;
	ok = CRYPTO_memcmp(want, have, NR_AUTH_PROOF_HEX) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

/* --- a connection's lines --- */

/* Line seq of direction dir ('m' a member's, 'r' rank 0's) on connection r. */
void nr_link_ctx(const struct nr_comm *c, int r, char dir, uint32_t seq, struct nr_auth_ctx *x)
{
	*x = (struct nr_auth_ctx){ .nonce = c->nonce, .mnonce = c->links[r].mnonce,
				   .ip = c->links[r].ip, .port = c->links[r].port, .dir = dir,
				   .seq = seq };
}

/* Send msg on connection r (rank 0: to rank r; a member: r = 0), with its proof. */
int nr_link_send(struct nr_comm *c, int r, void *msg, char *err, size_t errlen)
{
	struct nr_link *l = &c->links[r];
	json_t *m = msg;
	struct nr_auth_ctx x;
	int rc;

	if (c->auth.on) {
		/* a copy: rank 0 sends one message to every member, each its own proof */
		m = json_copy(msg);
		nr_link_ctx(c, r, c->rank ? 'm' : 'r', l->tx, &x);
		if (!m || nr_auth_sign(&c->auth, &x, m)) {
			json_decref(m);
			snprintf(err, errlen, "out of memory proving a line");
			return -ENOMEM;
		}
	}
	rc = nr_send_json_line(c->fds[r], m, err, errlen);
	if (m != msg)
		json_decref(m);
	if (!rc)
		l->tx++;
	return rc;
}

/* Receive a line on connection r; with a key, one without its right proof is an error. */
int nr_link_recv(struct nr_comm *c, int r, uint64_t deadline, void **msg, char *err,
		 size_t errlen, nr_idle_fn *idle, void *arg)
{
	struct nr_link *l = &c->links[r];
	struct nr_auth_ctx x;
	int rc = nr_recv_json_line(c->fds[r], deadline, msg, err, errlen, idle, arg);

	if (rc)
		return rc;
	nr_link_ctx(c, r, c->rank ? 'r' : 'm', l->rx, &x);
	if (c->auth.on && !nr_auth_verify(&c->auth, &x, *msg)) {
		json_decref(*msg);
		*msg = NULL;
		snprintf(err, errlen, "a line without a valid proof of the job's secret (%s), "
			 "refused: forged, or sent with another secret", c->auth.src);
		return -EACCES;
	}
	l->rx++;
	return 0;
}
