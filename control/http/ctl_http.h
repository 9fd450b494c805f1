/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A read-only HTTP/1.1 listener for scrapers and health checkers
 * (ctl_http.c): GET and HEAD only, one request a connection (Connection:
 * close), answered by the caller's handler on the listener's own thread.
 * Limits: a request head of at most 8 KiB, 5 s to send it and to read the
 * answer, NR_HTTP_MAX_CONNS clients at once (more are closed at accept).
 * It serves what the handler renders and nothing else: no files, no
 * methods that change anything.  Bound beyond loopback it needs a bearer
 * token (cfg.bearer, the admin's, or cfg.bearer_box), which every request
 * must then carry ("Authorization: Bearer <token>", compared in constant
 * time; 401 otherwise); bound to loopback the tokens are optional.  A
 * request is in the admin's scope when it carries cfg.bearer, or when the
 * listener has no token at all (loopback); cfg.bearer_box's is in the box's
 * scope, where the handler leaves out what the admin alone may read.
 */
#ifndef NR_CTL_HTTP_H
#define NR_CTL_HTTP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "control/api/ctl_metrics.h"

#define NR_HTTP_MAX_CONNS 16
#define NR_HTTP_BEARER_MIN 16 /* characters of a bearer token, at least */

/* The handler's answer: status (200, 404, 503 ...), content type, body. */
struct nr_http_reply {
	int status;
	const char *ctype;         /* default "text/plain; charset=utf-8" */
	struct nr_mtext body;
};

/* path: the request target without its query ("/metrics"); query: after '?' or "";
 * admin: the request is in the admin's scope (above). */
typedef void (*nr_http_handler)(void *ctx, const char *path, const char *query, bool admin,
				struct nr_http_reply *r);
/* Starts the listener's thread (e.g. on the box's control cores); 0 or an errno. */
typedef int (*nr_http_spawn)(pthread_t *th, const char *name, void *(*fn)(void *), void *arg);

struct nr_http_cfg {
	const char *addr;          /* "IP:PORT" ("[v6]:PORT"); port 0: any (nr_http_port) */
	nr_http_handler handler;
	void *ctx;
	nr_http_spawn spawn;       /* NULL: pthread_create */
	const char *bearer;        /* the admin's token; NULL: none (loopback only, or with
				    * bearer_box), else at least NR_HTTP_BEARER_MIN characters */
	const char *bearer_box;    /* a token of the box's scope alone; NULL: none */
};

struct nr_http;

/* Bind, listen and start serving; NULL and err naming the address on failure. */
struct nr_http *nr_http_start(const struct nr_http_cfg *cfg, char *err, size_t errlen);
/* The bound TCP port. */
int nr_http_port(const struct nr_http *h);
/* Requests refused for want of the bearer token, so far. */
uint64_t nr_http_unauthorized(const struct nr_http *h);
/* Stop the thread (an answer being rendered finishes first), close everything. */
void nr_http_stop(struct nr_http *h);

#endif /* NR_CTL_HTTP_H */
