/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_ctlserver: the control server's framing, authentication and limits
 * (control/server/ctl_server.c) over real sockets: byte streams on a few admin
 * (UNIX) and host (TCP, token) connections, cut into chunks.
 *
 * Per input: a server on a UNIX socket in a temp dir and on 127.0.0.1 (a
 * port this process keeps), token "nrz-token", max_line 512, an idle
 * timeout no input reaches, a rate limit of 40 requests burst; the control
 * API over an in-process engine (nrz_backend.c).  Then:
 *
 *   byte 0     connections - 1 (bits 0-1), connection i admin (bit 2 + i)
 *   byte 1     connection i (TCP) starts with an authenticated request (bit i)
 *   chunks     [sel][len][len bytes]: sel bits 0-1 the connection, bit 2 wait
 *              until the server answered every complete line sent on it
 *              (or closed it), bit 3 shut our write side after the chunk;
 *              "$T" in a chunk becomes the token
 * and every connection's write side is shut, every reply read until the
 * server closes.  Then an admin job_list on a fresh UNIX connection and an
 * authenticated backend_info on a fresh TCP one must be answered ok, the
 * server is stopped, and the process holds the same fds as before.
 *
 * Each connection's replies are matched to its lines (PROTOCOL.md):
 *   - every reply is one line of JSON, an object with a boolean "ok" and a
 *     non-empty string "error" when ok is false;
 *   - a blank line (or "\r") gets none, every other line one, in order;
 *     after a line that closes the connection none, and it is closed;
 *   - a line over max_line (or an unfinished one that grew past it) gets an
 *     error and closes the connection;
 *   - a line refused by the rate limit gets that error and changes nothing;
 *   - a line that is not a JSON object gets an error; on TCP before any
 *     authenticated request it closes the connection;
 *   - a TCP connection whose first byte is a TLS record's (0x16) is told the
 *     box speaks no TLS and closed, whatever follows (a bad-JSON request);
 *   - a TCP request without exactly the token gets an error and closes the
 *     connection, authenticated or not;
 *   - the server's counters of bad JSON, bad tokens, oversize lines, rate
 *     limited and handled requests equal what the replies show, and it
 *     refused, evicted or idled out no connection.
 * Why: the TCP listener faces any host of the fabric; the server is the box's
 * only control path and must neither crash, stall, nor serve a connection
 * that has not shown the token.  Nothing leaks (fds, memory).
 */
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "control/api/nr_control.h"

#include "nrz_backend.h"
#include "nrz_fuzz.h"
#include "nrz_net.h"

#define NRZ_CONNS     4
#define NRZ_TOKEN     "nrz-token-0123456789"
#define NRZ_MAX_LINE  512
#define NRZ_BURST     40
#define NRZ_IDLE_MS   5000       /* longer than any input: an idle close is no finding */
#define NRZ_WAIT_MS   5000       /* what the server owes must come within this */
#define NRZ_CHUNKS    64

struct buf {
	char *p;
	size_t n, cap;
};

struct conn {
	int fd;
	bool admin;
	bool shut;               /* our write side is shut */
	bool eof;                /* the server closed its side */
	struct buf sent, out, got;
	size_t out_off;
};

struct world {
	struct nrz_backend nb;
	struct nr_ctl *c;
	struct nr_ctl_server *srv;
	struct conn k[NRZ_CONNS];
	unsigned nk;
	/* what the replies show, for the counters */
	uint64_t bad_json, bad_token, oversize, rate_limited, handled;
};

/* Kept for the whole run: a directory for the UNIX socket, a TCP port. */
static char sock_dir[64], sock_path[96], tcp_addr[32];
static int port_keeper = -1;
static struct sockaddr_in tcp_sa;

static void remove_sock_dir(void)
{
	rmdir(sock_dir);
}

static void statics_init(void)
{
	socklen_t l = sizeof(tcp_sa);
	int one = 1;

	if (port_keeper >= 0)
		return;
	snprintf(sock_dir, sizeof(sock_dir), "/tmp/nrz-fuzz-ctl-XXXXXX");
	NRZ_CHECK(mkdtemp(sock_dir) != NULL, "mkdtemp: %s", strerror(errno));
	atexit(remove_sock_dir);
	snprintf(sock_path, sizeof(sock_path), "%s/ctl.sock", sock_dir);
	/*
	 * A socket bound (SO_REUSEADDR, never listening) keeps the port ours:
	 * every input's server listens on it again, past the TIME_WAITs of the
	 * last one, and nothing else can take it in between.
	 */
	tcp_sa = (struct sockaddr_in){ .sin_family = AF_INET,
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	port_keeper = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	NRZ_CHECK(port_keeper >= 0 &&
		  !setsockopt(port_keeper, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) &&
		  !bind(port_keeper, (struct sockaddr *)&tcp_sa, sizeof(tcp_sa)) &&
		  !getsockname(port_keeper, (struct sockaddr *)&tcp_sa, &l),
		  "keep a TCP port: %s", strerror(errno));
	snprintf(tcp_addr, sizeof(tcp_addr), "127.0.0.1:%u", ntohs(tcp_sa.sin_port));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		NRZ_CHECK(b->p != NULL, "realloc");
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* ---- connections ------------------------------------------------------------ */

static int connect_admin(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	NRZ_CHECK(fd >= 0 && !nrz_connect(fd, (struct sockaddr *)&sa, sizeof(sa)),
		  "connect %s: %s", sock_path, strerror(errno));
	return fd;
}

static int connect_tcp(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	NRZ_CHECK(fd >= 0 && !nrz_connect(fd, (struct sockaddr *)&tcp_sa, sizeof(tcp_sa)),
		  "connect %s: %s", tcp_addr, strerror(errno));
	/* each chunk its own segment, now: Nagle would hold it for the server's ACK */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Replies received on k: its newlines. */
static size_t replies(const struct conn *k)
{
	size_t n = 0;

	for (size_t i = 0; i < k->got.n; i++)
		n += k->got.p[i] == '\n';
	return n;
}

/* Complete lines sent on k that the server answers, were it to close none. */
static size_t lines_owed(const struct conn *k)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i < k->sent.n; i++) {
		if (k->sent.p[i] != '\n')
			continue;
		size_t len = i - start;

		if (len && k->sent.p[i - 1] == '\r')
			len--;
		n += len > 0;
		start = i + 1;
	}
	return n;
}

/*
 * Move bytes both ways on every connection until done(k) holds for each, or
 * the server closed it; the server owes that within NRZ_WAIT_MS.
 */
static void pump(struct world *w, bool (*done)(const struct conn *k))
{
	uint64_t end = now_ms() + NRZ_WAIT_MS;

	for (;;) {
		struct pollfd pfd[NRZ_CONNS];
		bool all = true;

		for (unsigned i = 0; i < w->nk; i++) {
			struct conn *k = &w->k[i];
			int one = 1;

			/*
			 * ACK what came at once: the server's sockets keep Nagle on,
			 * so its next reply to lines we pipelined would wait for our
			 * delayed ACK (40 ms) -- real clients wait for each reply.
			 */
			if (!k->admin)
				setsockopt(k->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
			pfd[i] = (struct pollfd){ .fd = k->eof ? -1 : k->fd, .events = POLLIN };
			if (k->out_off < k->out.n)
				pfd[i].events |= POLLOUT;
			all &= k->eof || (k->out_off == k->out.n && done(k));
		}
		if (all)
			return;
		NRZ_CHECK(now_ms() < end, "the server owes replies or a close for %u ms",
			  NRZ_WAIT_MS);
		if (poll(pfd, w->nk, 100) <= 0)
			continue;
		for (unsigned i = 0; i < w->nk; i++) {
			struct conn *k = &w->k[i];
			char tmp[4096];
			ssize_t r;

			if (pfd[i].revents & POLLOUT) {
				r = send(k->fd, k->out.p + k->out_off, k->out.n - k->out_off,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
				if (r > 0)
					k->out_off += (size_t)r;
				else if (r < 0 && errno != EAGAIN && errno != EINTR)
					k->out_off = k->out.n;   /* closed under us: it is read below */
			}
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = recv(k->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
			if (r > 0)
				buf_add(&k->got, tmp, (size_t)r);
			else if (r == 0 || (errno != EAGAIN && errno != EINTR))
				k->eof = true;
		}
	}
}

static bool answered(const struct conn *k)
{
	return replies(k) >= lines_owed(k);
}

static bool closed(const struct conn *k)
{
	return k->eof;
}

/* Queue bytes for k ($T becomes the token), remembered as sent. */
static void send_chunk(struct conn *k, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && p[i] == '$' && p[i + 1] == 'T') {
			buf_add(&k->sent, NRZ_TOKEN, strlen(NRZ_TOKEN));
			buf_add(&k->out, NRZ_TOKEN, strlen(NRZ_TOKEN));
			i++;
		} else {
			buf_add(&k->sent, &p[i], 1);
			buf_add(&k->out, &p[i], 1);
		}
	}
}

static void shut_write(struct world *w, struct conn *k)
{
	if (k->shut)
		return;
	pump(w, answered);    /* what is queued goes first */
	k->shut = true;
	shutdown(k->fd, SHUT_WR);
}

/* ---- the replies against the lines ------------------------------------------------ */

/* One reply line: a JSON object, boolean ok, an error text when not ok. */
static json_t *reply_parse(const char *line, size_t len)
{
	json_error_t je;
	json_t *r = json_loadb(line, len, 0, &je), *ok, *e;

	NRZ_CHECK(r != NULL, "reply is not JSON (%s): %.*s", je.text, (int)len, line);
	NRZ_CHECK(json_is_object(r), "reply is not an object: %.*s", (int)len, line);
	ok = json_object_get(r, "ok");
	NRZ_CHECK(json_is_boolean(ok), "reply without a boolean ok: %.*s", (int)len, line);
	e = json_object_get(r, "error");
	NRZ_CHECK(json_is_true(ok) || (json_is_string(e) && json_string_length(e) > 0),
		  "error reply without an error text: %.*s", (int)len, line);
	return r;
}

static bool is_error(json_t *r, const char *prefix)
{
	const char *e = json_string_value(json_object_get(r, "error"));

	return !json_is_true(json_object_get(r, "ok")) && e && !strncmp(e, prefix, strlen(prefix));
}

/* The token check of PROTOCOL.md: "token" is a string equal to the token,
 * and "tenant", if there, names its tenant ("default", the --token's). */
static bool has_token(json_t *req)
{
	json_t *t = json_object_get(req, "token"), *who = json_object_get(req, "tenant");

	return json_is_string(t) && json_string_length(t) == strlen(NRZ_TOKEN) &&
	       !memcmp(json_string_value(t), NRZ_TOKEN, strlen(NRZ_TOKEN)) &&
	       (!who || (json_is_string(who) && json_string_length(who) == 7 &&
			 !memcmp(json_string_value(who), "default", 7)));
}

static void check_conn(struct world *w, unsigned ki)
{
	struct conn *k = &w->k[ki];
	const char *g = k->got.p, *s = k->sent.p;
	size_t gi = 0, si = 0, nrep = 0;
	bool authed = k->admin, closes = false;
	json_t **rep;

	/* the replies, each checked on its own */
	rep = calloc(replies(k) + 1, sizeof(*rep));
	NRZ_CHECK(rep != NULL, "calloc");
	for (size_t i = 0; i < k->got.n; i++) {
		if (g[i] != '\n')
			continue;
		rep[nrep++] = reply_parse(g + gi, i - gi);
		gi = i + 1;
	}
	NRZ_CHECK(gi == k->got.n, "conn %u: a reply without its newline: %.*s", ki,
		  (int)(k->got.n - gi), g + gi);

	/* the lines, matched to the replies in order */
	size_t r = 0;

	/* a TLS ClientHello's first byte opening a TCP connection: one answer, closed */
	if (!k->admin && k->sent.n && (uint8_t)s[0] == 0x16) {
		NRZ_CHECK(nrep >= 1 && is_error(rep[0], "this box's control listener does not "
							"speak TLS"),
			  "conn %u: a connection opening with 0x16 not told the box speaks no TLS",
			  ki);
		r = 1;
		w->handled++;
		w->bad_json++;
		closes = true;
	}

	while (!closes) {
		const char *nl = si < k->sent.n ? memchr(s + si, '\n', k->sent.n - si) : NULL;
		size_t raw = nl ? (size_t)(nl - (s + si)) : k->sent.n - si, len = raw;
		json_t *x, *req;
		char err[256];

		if (!nl) {      /* unfinished: answered only when it outgrew max_line */
			if (raw > NRZ_MAX_LINE) {
				NRZ_CHECK(r < nrep && is_error(rep[r], "request longer than"),
					  "conn %u: an unfinished line of %zu bytes not refused", ki, raw);
				r++;
				w->oversize++;
			}
			break;
		}
		if (raw > NRZ_MAX_LINE) {
			NRZ_CHECK(r < nrep && is_error(rep[r], "request longer than"),
				  "conn %u: a line of %zu bytes not refused as too long", ki, raw);
			r++;
			w->oversize++;
			closes = true;
			break;
		}
		if (len && s[si + len - 1] == '\r')
			len--;
		if (!len) {
			si += raw + 1;
			continue;
		}
		NRZ_CHECK(r < nrep, "conn %u (%s): no reply to line \"%.*s\" (%zu replies)", ki,
			  k->admin ? "admin" : "tcp", (int)len, s + si, nrep);
		x = rep[r++];
		if (is_error(x, "rate limit")) {
			w->rate_limited++;
			si += raw + 1;
			continue;
		}
		w->handled++;
		req = nr_ctl_parse_line(s + si, len, err, sizeof(err));
		if (!req) {
			NRZ_CHECK(!json_is_true(json_object_get(x, "ok")),
				  "conn %u: ok for a line that is not a JSON object", ki);
			w->bad_json++;
			closes = !authed;
		} else if (!k->admin && !has_token(req)) {
			NRZ_CHECK(is_error(x, "bad or missing token"), "conn %u: a request without "
				  "the token answered otherwise: %.*s", ki, (int)len, s + si);
			w->bad_token++;
			closes = true;
		} else {
			authed = true;
		}
		json_decref(req);
		si += raw + 1;
	}
	NRZ_CHECK(r == nrep, "conn %u (%s): %zu replies to %zu answered lines%s", ki,
		  k->admin ? "admin" : "tcp", nrep, r, closes ? " (it should have closed)" : "");
	NRZ_CHECK(k->eof, "conn %u: never closed", ki);
	for (size_t i = 0; i < nrep; i++)
		json_decref(rep[i]);
	free(rep);
}

/* A fresh connection gets req answered with ok: the server still serves. */
static void check_alive(bool admin, const char *req)
{
	char line[8192];
	size_t n = 0;
	uint64_t end = now_ms() + NRZ_WAIT_MS;
	int fd = admin ? connect_admin() : connect_tcp();
	json_t *r;

	NRZ_CHECK(nrz_send_all(fd, req, strlen(req), 0), "send %s: %s", req, strerror(errno));
	while (!memchr(line, '\n', n)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t got;

		NRZ_CHECK(now_ms() < end && n < sizeof(line), "no answer to %s", req);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		got = nrz_recv(fd, line + n, sizeof(line) - n, 0);
		NRZ_CHECK(got > 0, "the server closed a fresh %s connection: %s",
			  admin ? "admin" : "tcp", got ? strerror(errno) : "EOF");
		n += (size_t)got;
	}
	r = reply_parse(line, (size_t)((char *)memchr(line, '\n', n) - line));
	NRZ_CHECK(json_is_true(json_object_get(r, "ok")), "%s answered %.*s", req, (int)n, line);
	json_decref(r);
	if (!admin) {   /* a reset, not a TIME_WAIT per input */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(fd);
}

static void check_counters(struct world *w)
{
#define CTR(k, want) NRZ_CHECK(nr_ctl_counter(w->c, k) == (want), #k " is %llu, the replies " \
			       "say %llu", (unsigned long long)nr_ctl_counter(w->c, k), \
			       (unsigned long long)(want))
	CTR(NR_CCTR_BAD_JSON, w->bad_json);
	CTR(NR_CCTR_BAD_TOKEN, w->bad_token);
	CTR(NR_CCTR_OVERSIZE, w->oversize);
	CTR(NR_CCTR_RATE_LIMITED, w->rate_limited);
	CTR(NR_CCTR_REQUESTS, w->handled);
	CTR(NR_CCTR_CONNS_REFUSED, 0);
	CTR(NR_CCTR_CONNS_EVICTED, 0);
	CTR(NR_CCTR_IDLE_CLOSED, 0);
#undef CTR
}

/* ---- one input -------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char auth[] = "{\"op\":\"backend_info\",\"token\":\"" NRZ_TOKEN "\"}\n";
	struct nrz_in in = { .p = data, .n = size };
	struct nr_ctl_server_cfg cfg = {
		.unix_path = sock_path, .tcp_addr = tcp_addr, .token = NRZ_TOKEN,
		.idle_timeout_ms = NRZ_IDLE_MS, .max_line = NRZ_MAX_LINE,
		.rate_per_sec = 1000, .rate_burst = NRZ_BURST,
		/* the model knows no throttle: one bad token more than an input can send */
		.auth_fail_max = 100000,
	};
	char err[256];
	struct world *w;
	unsigned fds;
	uint8_t b0, b1;

	if (size < 2 || size > 65536)
		return 0;
	statics_init();
	fds = nrz_count_fds();
	w = calloc(1, sizeof(*w));
	NRZ_CHECK(w != NULL, "calloc");
	w->c = nr_ctl_create(nrz_backend_new(&w->nb));
	NRZ_CHECK(w->c != NULL, "nr_ctl_create");
	w->srv = nr_ctl_server_start(w->c, &cfg, err, sizeof(err));
	NRZ_CHECK(w->srv != NULL, "nr_ctl_server_start: %s", err);

	b0 = nrz_u8(&in);
	b1 = nrz_u8(&in);
	w->nk = (b0 & 3u) + 1;
	for (unsigned i = 0; i < w->nk; i++) {
		struct conn *k = &w->k[i];

		k->admin = b0 >> (2 + i) & 1;
		k->fd = k->admin ? connect_admin() : connect_tcp();
		if (!k->admin && (b1 >> i & 1))
			send_chunk(k, (const uint8_t *)auth, strlen(auth));
	}
	for (unsigned n = 0; n < NRZ_CHUNKS && nrz_left(&in); n++) {
		uint8_t sel = nrz_u8(&in), len = nrz_u8(&in), chunk[UINT8_MAX + 1];
		struct conn *k = &w->k[(sel & 3u) % w->nk];

		for (uint8_t i = 0; i < len; i++)
			chunk[i] = nrz_u8(&in);
		if (k->shut)
			continue;
		send_chunk(k, chunk, len);
		if (sel & 4)
			pump(w, answered);
		if (sel & 8)
			shut_write(w, k);
	}
	for (unsigned i = 0; i < w->nk; i++)
		shut_write(w, &w->k[i]);
	pump(w, closed);
	for (unsigned i = 0; i < w->nk; i++)
		check_conn(w, i);

	check_alive(true, "{\"op\":\"job_list\"}\n");
	w->handled++;
	check_alive(false, auth);
	w->handled++;
	check_counters(w);

	for (unsigned i = 0; i < w->nk; i++) {
		close(w->k[i].fd);
		free(w->k[i].sent.p);
		free(w->k[i].out.p);
		free(w->k[i].got.p);
	}
	nr_ctl_server_stop(w->srv);
	nr_ctl_destroy(w->c);
	agg_engine_destroy(w->nb.eng);
	free(w);
	NRZ_CHECK(nrz_count_fds() == fds, "%u fds open after the input, %u before", nrz_count_fds(), fds);
	return 0;
}
