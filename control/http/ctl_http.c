/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The read-only HTTP listener (ctl_http.h): one thread, one poll() loop over
 * the listening socket, a wake pipe and up to NR_HTTP_MAX_CONNS clients.  A
 * client sends one request head; the handler renders the answer; the answer
 * is written as the socket takes it, then the connection is closed.  A
 * client that sends too much, too slowly, or reads too slowly is dropped:
 * no input keeps the thread from serving the next scrape.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control/http/ctl_http.h"
#include "control/http/ctl_listen.h"

#define HEAD_MAX   8192
#define CLIENT_MS  5000

struct hclient {
	int fd;
	uint64_t deadline_ms;
	char in[HEAD_MAX + 1];
	size_t in_len;
	char *out;                 /* the whole answer, once rendered */
	size_t out_len, out_off;
};

struct nr_http {
	struct nr_http_cfg cfg;
	int lfd, wake[2], port;
	pthread_t th;
	bool running;
	struct hclient cl[NR_HTTP_MAX_CONNS];
	unsigned ncl;
	uint64_t unauthorized; /* requests refused for want of the token (the thread's) */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static const char *status_text(int st)
{
	switch (st) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

/* The whole answer into c->out: status line, headers, body (none for HEAD). */
static void answer(struct hclient *c, int status, const char *ctype, const char *extra,
		   const char *body, size_t blen, bool head)
{
	char hdr[512];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n",
			 status, status_text(status), ctype, blen, extra ? extra : "");

	c->out = malloc((size_t)n + (head ? 0 : blen));
	if (c->out == NULL) {
		c->out_len = 0;
		return;
	}
	memcpy(c->out, hdr, (size_t)n);
	if (!head && blen)
		memcpy(c->out + n, body, blen);
	c->out_len = (size_t)n + (head ? 0 : blen);
	c->out_off = 0;
}

static void answer_text(struct hclient *c, int status, const char *msg, bool head, const char *extra)
{
	answer(c, status, "text/plain; charset=utf-8", extra, msg, strlen(msg), head);
}

/* a and b of n bytes alike, in a time that does not depend on where they differ */
static bool same_secret(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* Whether the headers (after the request line) carry "Authorization: Bearer <tok>". */
static bool carries(const char *tok, const char *hdrs)
{
	size_t tlen = strlen(tok);

	for (const char *l = hdrs; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *v, *e;

		if (strncasecmp(l, "Authorization:", 14) != 0)
			continue;
		v = l + 14;
		v += strspn(v, " \t");
		if (strncasecmp(v, "Bearer ", 7) != 0)
			return false;
		v += 7;
		v += strspn(v, " ");
		e = v + strcspn(v, "\r\n");
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		return (size_t)(e - v) == tlen && same_secret(v, tok, tlen);
	}
	return false;
}

/* The request's scope: 2 the admin's, 1 the box's, 0 none (401). */
static int scope(const struct nr_http *h, const char *hdrs)
{
	bool admin, box;

	if (!h->cfg.bearer && !h->cfg.bearer_box)
		return 2;
	admin = h->cfg.bearer && carries(h->cfg.bearer, hdrs);
	box = h->cfg.bearer_box && carries(h->cfg.bearer_box, hdrs);
	return admin ? 2 : box ? 1 : 0;
}

/* A complete request head in c->in: parse the request line, let the handler answer. */
static void serve(struct nr_http *h, struct hclient *c)
{
	char *line = c->in, *sp1, *sp2, *eol, *q, *hdrs = NULL;
	struct nr_http_reply r = { .status = 200, .ctype = NULL };
	bool head;
	int sc;

	eol = strpbrk(line, "\r\n");
	if (eol) {
		hdrs = eol + (eol[0] == '\r' && eol[1] == '\n' ? 2 : 1);
		*eol = '\0';
	}
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || sp2 == sp1 + 1 || sp1[1] != '/') {
		answer_text(c, 400, "a request line: METHOD /path HTTP/1.1\n", false, NULL);
		return;
	}
	*sp1 = *sp2 = '\0';
	if (strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		answer_text(c, 505, "HTTP/1.0 or HTTP/1.1 only\n", false, NULL);
		return;
	}
	head = strcmp(line, "HEAD") == 0;
	if (!head && strcmp(line, "GET") != 0) {
		answer_text(c, 405, "read-only: GET and HEAD only\n", false, "Allow: GET, HEAD\r\n");
		return;
	}
	sc = scope(h, hdrs);
	if (sc == 0) {
		__atomic_store_n(&h->unauthorized, h->unauthorized + 1, __ATOMIC_RELAXED);
		answer_text(c, 401,
			    "this listener needs its bearer token (Authorization: Bearer ...)\n",
			    head, "WWW-Authenticate: Bearer realm=\"netreduce\"\r\n");
		return;
	}
	q = strchr(sp1 + 1, '?');
	if (q)
		*q++ = '\0';
	h->cfg.handler(h->cfg.ctx, sp1 + 1, q ? q : "", sc == 2, &r);
	if (r.body.oom) {
		nr_mtext_free(&r.body);
		answer_text(c, 500, "out of memory rendering the answer\n", head, NULL);
		return;
	}
	answer(c, r.status, r.ctype ? r.ctype : "text/plain; charset=utf-8", NULL,
	       r.body.buf ? r.body.buf : "", r.body.len, head);
	nr_mtext_free(&r.body);
}

static void client_close(struct nr_http *h, unsigned i)
{
	close(h->cl[i].fd);
	free(h->cl[i].out);
	h->cl[i] = h->cl[--h->ncl];
}

/* Input on client c: 1 when its head is complete (served), 0 more to come, -1 drop it. */
static int client_read(struct nr_http *h, struct hclient *c)
{
	ssize_t r = recv(c->fd, c->in + c->in_len, HEAD_MAX - c->in_len, MSG_DONTWAIT);

	if (r == 0)
		return -1;
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	c->in_len += (size_t)r;
	c->in[c->in_len] = '\0';
	if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n")) {
		serve(h, c);
		return 1;
	}
	if (c->in_len >= HEAD_MAX) {
		answer_text(c, 431, "request head over 8 KiB\n", false, NULL);
		return 1;
	}
	return 0;
}

/* Write what the socket takes: 1 all written, 0 more to write, -1 drop it. */
static int client_write(struct hclient *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
		c->out_off += (size_t)w;
	}
	return 1;
}

static void accept_all(struct nr_http *h)
{
	for (;;) {
		int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (h->ncl == NR_HTTP_MAX_CONNS) {
			close(fd);     /* full: a scraper retries at its next interval */
			continue;
		}
		memset(&h->cl[h->ncl], 0, sizeof(h->cl[0]));
		h->cl[h->ncl].fd = fd;
		h->cl[h->ncl].deadline_ms = now_ms() + CLIENT_MS;
		h->ncl++;
	}
}

static void *http_main(void *arg)
{
	struct nr_http *h = arg;
	struct pollfd pfd[NR_HTTP_MAX_CONNS + 2];

	for (;;) {
		unsigned n = 2;
		uint64_t t;

		pfd[0] = (struct pollfd){ .fd = h->wake[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = h->lfd, .events = POLLIN };
		for (unsigned i = 0; i < h->ncl; i++)
			pfd[n++] = (struct pollfd){ .fd = h->cl[i].fd,
						    .events = h->cl[i].out ? POLLOUT : POLLIN };
		if (poll(pfd, n, 250) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		t = now_ms();
		/* clients from the back: client_close moves the last one into i */
		for (unsigned i = h->ncl; i-- > 0;) {
			struct hclient *c = &h->cl[i];
			short ev = pfd[2 + i].revents;
			int rc = 0;

			if (ev & (POLLERR | POLLNVAL)) {
				rc = -1;
			} else if (c->out == NULL && (ev & (POLLIN | POLLHUP))) {
				rc = client_read(h, c);
				if (rc == 1)
					rc = c->out ? client_write(c) : -1;
			} else if (c->out && (ev & POLLOUT)) {
				rc = client_write(c);
			}
			if (rc == 0 && t > c->deadline_ms)
				rc = -1;    /* too slow to ask or to read */
			if (rc != 0)
				client_close(h, i);
		}
		if (pfd[1].revents & POLLIN)
			accept_all(h);
	}
	return NULL;
}

/* Whether the listening socket is bound to a loopback address (127/8, ::1). */
static bool bound_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return false;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

static int spawn_pthread(pthread_t *th, const char *name, void *(*fn)(void *), void *arg)
{
	int rc = pthread_create(th, NULL, fn, arg);

	if (rc == 0)
		pthread_setname_np(*th, name);
	return rc;
}

struct nr_http *nr_http_start(const struct nr_http_cfg *cfg, char *err, size_t errlen)
{
	struct nr_http *h;
	int rc;

	if (!cfg || !cfg->addr || !cfg->handler) {
		snprintf(err, errlen, "metrics listener: an address and a handler are needed");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "metrics listener: out of memory");
		return NULL;
	}
	h->cfg = *cfg;
	h->wake[0] = h->wake[1] = -1;
	h->lfd = nr_ctl_listen_tcp(cfg->addr, "metrics", "192.0.2.10:9470", &h->port, err, errlen);
	if (h->lfd < 0)
		goto fail;
	if (!cfg->bearer && !cfg->bearer_box && !bound_loopback(h->lfd)) {
		snprintf(err, errlen,
			 "metrics listener %s answers beyond loopback, where job names, "
			 "tenants and counters are not for everyone: give it a bearer token "
			 "(--metrics-token-file FILE, mode 600; Prometheus: authorization: "
			 "credentials_file), or bind 127.0.0.1",
			 cfg->addr);
		goto fail;
	}
	for (unsigned k = 0; k < 2; k++) {
		const char *t = k ? cfg->bearer_box : cfg->bearer;

		if (t && strlen(t) < NR_HTTP_BEARER_MIN) {
			snprintf(err, errlen,
				 "metrics listener %s: a bearer token of %zu characters: at "
				 "least %d are needed (a random one: openssl rand -hex 16)",
				 cfg->addr, strlen(t), NR_HTTP_BEARER_MIN);
			goto fail;
		}
	}
	if (cfg->bearer && cfg->bearer_box && !strcmp(cfg->bearer, cfg->bearer_box)) {
		snprintf(err, errlen,
			 "metrics listener %s: the admin's token and the box scope's are the "
			 "same: give each its own",
			 cfg->addr);
		goto fail;
	}
	if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, errlen, "metrics listener: pipe: %s", strerror(errno));
		goto fail;
	}
	rc = (cfg->spawn ? cfg->spawn : spawn_pthread)(&h->th, "nr-metrics", http_main, h);
	if (rc) {
		snprintf(err, errlen, "metrics listener: cannot start its thread: %s", strerror(rc < 0 ? -rc : rc));
		goto fail;
	}
	h->running = true;
	return h;
fail:
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->wake[0] >= 0) {
		close(h->wake[0]);
		close(h->wake[1]);
	}
	free(h);
	return NULL;
}

int nr_http_port(const struct nr_http *h)
{
	return h ? h->port : -1;
}

uint64_t nr_http_unauthorized(const struct nr_http *h)
{
	return h ? __atomic_load_n(&h->unauthorized, __ATOMIC_RELAXED) : 0;
}

void nr_http_stop(struct nr_http *h)
{
	if (!h)
		return;
	if (h->running) {
		while (write(h->wake[1], "x", 1) < 0 && errno == EINTR)
			;
		pthread_join(h->th, NULL);
	}
	while (h->ncl)
		client_close(h, h->ncl - 1);
	close(h->lfd);
	close(h->wake[0]);
	close(h->wake[1]);
	free(h);
}
