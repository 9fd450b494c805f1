/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rendezvous' proofs of the job's secret (nr_auth.c): the key, and an
 * HMAC-SHA256 of each line over the line and where it belongs.
 *
 * The key is HMAC-SHA256(secret, "netreduce rendezvous key/1"), the secret
 * being, in order: the job secret (NR_JOB_SECRET, struct nr_config's
 * job_secret: 32 or more hex digits, or the path, starting with / or ., of a
 * file whose bytes are the secret, 16 or more), or the box's control token
 * (NR_TOKEN); none of them: no key, an unauthenticated rendezvous.
 *
 * A line's proof is "proof": 64 hex digits, HMAC-SHA256(key, CONTEXT ||
 * BODY), where BODY is the line's object without "proof", dumped compact with
 * sorted keys (jansson: JSON_COMPACT | JSON_SORT_KEYS), and CONTEXT is
 *   "netreduce rendezvous/1" NUL, a direction byte ('m': a member to rank 0,
 *   'r': rank 0 to a member), rank 0's nonce of this rendezvous (32 bytes),
 *   the member's nonce of this connection (16 bytes), the member end of the
 *   connection (IPv4 address, 4 bytes, and TCP port, 2, network order), the
 *   line's number in its direction on this connection (4 bytes, big-endian;
 *   the hello is member line 0, the endpoint table rank 0's line 0).
 * So a line proves the secret for one rendezvous, one connection, one
 * direction and one place in it: replayed anywhere else, it proves nothing.
 */
#ifndef NR_AUTH_H
#define NR_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm_internal.h"
#include "nr_tcp.h"

/* Where a line stands: the rendezvous, the connection, the direction, its number. */
struct nr_auth_ctx {
	const uint8_t *nonce;        /* rank 0's, NR_AUTH_NONCE_BYTES */
	const uint8_t *mnonce;       /* the member's, NR_AUTH_MNONCE_BYTES */
	uint32_t ip;                 /* the member end: address, network order */
	uint16_t port;               /* and TCP port, host order */
	char dir;                    /* 'm' or 'r' */
	uint32_t seq;
};

/*
 * The key from job_secret, else token (either may be NULL or empty), each
 * named in messages by its variable (NR_JOB_SECRET, NR_TOKEN) where the
 * environment holds this very value, else by its field.  0 (a->on: a key;
 * not: neither is set), or -errno with err saying what is wrong (a malformed
 * secret, a file that cannot be read or is too short).
 */
int nr_auth_init(struct nr_auth *a, const char *job_secret, const char *token, char *err,
		 size_t errlen);
/* The format of job_secret alone (no file read): 0, or -1 with err set. */
int nr_auth_check_secret(const char *job_secret, char *err, size_t errlen);
/* n bytes from the kernel's random source: 0 or -errno. */
int nr_auth_random(uint8_t *p, size_t n);
/* The proof of msg (a json_t *, its "proof" member ignored) at x, as hex. */
int nr_auth_proof(const struct nr_auth *a, const struct nr_auth_ctx *x, void *msg,
		  char hex[NR_AUTH_PROOF_HEX + 1]);
/* Set msg's "proof" to its proof at x: 0 or -ENOMEM. */
int nr_auth_sign(const struct nr_auth *a, const struct nr_auth_ctx *x, void *msg);
/* Whether msg carries the right proof at x (compared in constant time); "proof" removed. */
bool nr_auth_verify(const struct nr_auth *a, const struct nr_auth_ctx *x, void *msg);
/* Hex of n bytes into out (2n + 1), and back: 0, or -1 for anything but 2n hex digits. */
void nr_auth_hex(const uint8_t *p, size_t n, char *out);
int nr_auth_unhex(const char *s, uint8_t *p, size_t n);

/*
 * A communicator's rendezvous connection r (rank 0: to rank r; a member: 0,
 * to rank 0), c->links[r] counting its lines: the context of its line seq in
 * direction dir; a JSON line (json_t *) sent with its proof when c has a key;
 * one received, refused (-EACCES, err saying so) without its right proof.
 */
struct nr_comm;
struct nr_auth_ctx;
void nr_link_ctx(const struct nr_comm *c, int r, char dir, uint32_t seq, struct nr_auth_ctx *x);
int nr_link_send(struct nr_comm *c, int r, void *msg, char *err, size_t errlen);
int nr_link_recv(struct nr_comm *c, int r, uint64_t deadline, void **msg, char *err,
		 size_t errlen, nr_idle_fn *idle, void *arg);

#endif /* NR_AUTH_H */
