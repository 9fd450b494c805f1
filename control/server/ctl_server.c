/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control server: one thread, one poll() loop over a UNIX listener
 * (admin: netreducectl; mode 0600, no token), a TCP listener (host
 * libraries; each request's token names its tenant, nr_ctl_authenticate),
 * and up to max_conns non-blocking clients.
 * Requests are JSON lines of at most max_line bytes (PROTOCOL.md); every
 * line gets exactly one reply line.  Limits: an oversize line is answered
 * with an error and its connection closed; a client idle (no complete
 * request) for idle_timeout_ms is closed; each connection may send
 * rate_per_sec requests a second with a burst of rate_burst, more are
 * answered "rate limit".  No input can stop the server.
 *
 * Only authentication keeps a TCP connection (docs/trust.md): until a request
 * with the right token, nothing resets its idle timer, and a line that is not
 * JSON or brings a wrong token is answered and the connection closed.  When
 * the TCP table is full, a new connection takes the place of the oldest one
 * that has not authenticated (conns_evicted); one source address holds at
 * most max_conns_per_source unauthenticated ones, its newest taking its
 * oldest's place past it (an IPv4-mapped IPv6 peer
 * counts as its IPv4 address, an IPv6 peer as its own; an authenticated one
 * counts against its tenant, so tenants behind one address do not crowd
 * each other out).  So idle or trickling clients
 * cannot keep a host library out.  A connection belongs to the tenant of its
 * first authenticated request, and a tenant holds at most its max_conns
 * (tenant_conns_refused beyond): no tenant fills the table for the others.
 *
 * TLS (cfg.tls_cert, docs/trust.md): every TCP connection is TLS.  The
 * first byte of a new one decides: a TLS record (0x16) starts a handshake,
 * run non-blocking in this loop (SSL_accept's WANT_READ/WANT_WRITE become the
 * poll events, the idle timer bounds it); anything else is a plain-text
 * client, answered in plain text that the box wants TLS, logged, counted
 * (tls_plaintext) and closed.  Without TLS, a client that opens with a TLS
 * record is told in plain text that the listener does not speak it.
 *
 * Failed authentication is throttled per source address and the tenant a
 * request claims (its "tenant", or none): auth_fail_max bad or missing
 * tokens within auth_fail_window_ms block that pair for auth_block_ms; its
 * requests are refused meanwhile (auth_throttled), while another tenant's,
 * claimed, from the same address (SNAT) still authenticate.
 * A source starts at most tls_handshakes_per_sec TLS handshakes a second;
 * the connections past it are closed before OpenSSL reads them (tls_throttled).
 *
 * This file is the loop, the framing, the TLS handshakes and the listeners;
 * admission is ctl_admit.c's, a client's bytes ctl_conn.c's (ctl_srv.h).
 *
 * Thread contract: everything here runs on the server thread, except
 * nr_ctl_server_start/stop (caller's thread).  Requests reach nr_ctl through
 * nr_ctl_handle_json, which takes nr_ctl's own mutex.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "control/api/ctl_log.h"
#include "control/api/nr_control.h"
#include "control/http/ctl_listen.h"
#include "control/server/ctl_srv.h"
#include "control/tls/ctl_tls.h"
#include "control/tls/nr_tls.h"

/* ---- requests ----------------------------------------------------------- */

static void handle_line(struct nr_ctl_server *s, struct client *k, char *line, size_t len)
{
	char err[256], msg[64], claim[NR_CTL_TENANT_NAME_MAX + 1] = "", *out;
	json_t *req, *reply;
	uint64_t now;
	int who = NR_CTL_ADMIN;
	bool claimed;

	if (len && line[len - 1] == '\r')
		len--;
	if (!len)
		return;       /* ignored; they do not reset the idle timer either */
	now = nr_ctl_now_ms();
	if (k->authed)        /* an unauthenticated line never resets it */
		k->last_ms = now;
	if (!srv_rate_ok(s, k, now)) {
		nr_ctl_count(s->c, NR_CCTR_RATE_LIMITED);
		snprintf(msg, sizeof(msg), "rate limit: at most %u requests per second", s->rate);
		srv_client_error(k, msg);
		return;
	}
	req = nr_ctl_parse_line(line, len, err, sizeof(err));
	if (!req) {
		nr_ctl_count(s->c, NR_CCTR_REQUESTS);
		nr_ctl_count(s->c, NR_CCTR_BAD_JSON);
		nr_ctl_count(s->c, NR_CCTR_ERRORS);
		srv_client_error(k, err);
		k->closing |= !k->authed;
		return;
	}
	claimed = k->admin || srv_claim(req, claim);
	if (!k->admin && !k->authed && srv_throttled(s, k, claim, now)) {
		json_decref(req);
		return;
	}
	if (!k->admin && (!claimed || (who = srv_tenant_of(s, req, claim)) < 0)) {
		nr_ctl_count(s->c, NR_CCTR_REQUESTS);
		nr_ctl_count(s->c, NR_CCTR_BAD_TOKEN);
		nr_ctl_count(s->c, NR_CCTR_ERRORS);
		json_decref(req);
		srv_auth_failed(s, &k->peer, claim, now);
		srv_client_error(k, "bad or missing token: connection closed");
		k->closing = true;
		return;
	}
	if (!k->admin && !srv_tenant_admit(s, k, who)) {
		json_decref(req);
		k->closing = true;
		return;
	}
	k->authed = true;
	k->last_ms = now;
	reply = nr_ctl_handle_json(s->c, req, who);
	json_decref(req);
	out = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
	json_decref(reply);
	srv_client_reply(k, out);
	free(out);
}

static void oversize(struct nr_ctl_server *s, struct client *k)
{
	char msg[64];

	nr_ctl_count(s->c, NR_CCTR_OVERSIZE);
	nr_ctl_count(s->c, NR_CCTR_ERRORS);
	snprintf(msg, sizeof(msg), "request longer than %zu bytes", s->max_line);
	srv_client_error(k, msg);
	k->closing = true;
	k->in_len = 0;
}

static void client_read(struct nr_ctl_server *s, struct client *k)
{
	size_t start, i;
	ssize_t r;

	if (k->in_cap - k->in_len < 4096 && k->in_cap < s->max_line + 1) {
		size_t cap = k->in_cap ? k->in_cap * 2 : 4096;
		char *p;

		if (cap > s->max_line + 1)
			cap = s->max_line + 1;
		p = realloc(k->in, cap);
		if (!p) {
			k->closing = true;
			return;
		}
		k->in = p;
		k->in_cap = cap;
	}
	r = srv_client_recv(k, k->in + k->in_len, k->in_cap - k->in_len);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		k->closing = true;
		k->out_off = k->out_len = 0;
		return;
	}
	if (r < 0)
		return;
	/* the connection's first byte, not a read's: what follows blank lines is a line */
	if (!k->admin && !k->rx_any && k->tls == TLS_NONE &&
	    (unsigned char)k->in[0] == TLS_HANDSHAKE_BYTE) {
		nr_ctl_count(s->c, NR_CCTR_REQUESTS);
		nr_ctl_count(s->c, NR_CCTR_BAD_JSON);
		nr_ctl_count(s->c, NR_CCTR_ERRORS);
		srv_client_error(k,
				 "this box's control listener does not speak TLS: connect without "
				 "(no NR_TLS_CA, no --tls-ca), or start the box with --tls-cert and --tls-key");
		k->closing = true;
		return;
	}
	k->rx_any = true;
	i = k->in_len;
	k->in_len += (size_t)r;
	start = 0;
	for (; i < k->in_len && !k->closing; i++) {
		if (k->in[i] != '\n')
			continue;
		if (i - start > s->max_line) {
			oversize(s, k);
			return;
		}
		handle_line(s, k, k->in + start, i - start);
		start = i + 1;
	}
	if (k->closing)
		return;
	memmove(k->in, k->in + start, k->in_len - start);
	k->in_len -= start;
	if (k->in_len > s->max_line)
		oversize(s, k);
}

/* ---- TLS ----------------------------------------------------------------- */

/*
 * A TLS listener's client before its first request: the first byte tells a
 * TLS client from a plain-text one; then the handshake, one non-blocking
 * step each time the socket is ready for what OpenSSL waits for.
 */
static void tls_step(struct nr_ctl_server *s, struct client *k)
{
	char ip[INET6_ADDRSTRLEN], why[256];
	unsigned char b;
	int r;

	if (k->tls == TLS_SNIFF) {
		ssize_t n = recv(k->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			k->closing = true;
			return;
		}
		if (b != TLS_HANDSHAKE_BYTE) {
			nr_ctl_count(s->c, NR_CCTR_TLS_PLAINTEXT);
			NR_LOG_RL(LOG_NOTICE,
				  "netreduce control: %s: a plain-text client on the TLS "
				  "control listener: refused (tls_plaintext)",
				  srv_peer_str(&k->peer, ip));
			k->tls = TLS_NONE;    /* the refusal goes in plain text */
			srv_client_error(k,
					 "this box wants TLS on its control listener: connect with TLS "
					 "and the box's CA (NR_TLS_CA for the library, netreducectl "
					 "--tls-ca): connection closed");
			k->closing = true;
			return;
		}
		if (!srv_tls_handshake_ok(s, &k->peer, nr_ctl_now_ms())) {
			k->closing = true;
			k->in_len = 0;
			return;
		}
		k->ssl = SSL_new(s->tls);
		if (!k->ssl || SSL_set_fd(k->ssl, k->fd) != 1) {
			nr_log(LOG_ERR, "netreduce control: TLS: %s", nr_tls_why(why, sizeof(why)));
			k->closing = true;
			return;
		}
		k->tls = TLS_ACCEPT;
	}
	ERR_clear_error();
	r = SSL_accept(k->ssl);
	if (r == 1) {
		k->tls = TLS_UP;
		k->tls_want = 0;
		return;
	}
	switch (SSL_get_error(k->ssl, r)) {
	case SSL_ERROR_WANT_READ: k->tls_want = POLLIN; return;
	case SSL_ERROR_WANT_WRITE: k->tls_want = POLLOUT; return;
	default: break;
	}
	nr_ctl_count(s->c, NR_CCTR_TLS_FAILED);
	nr_tls_why(why, sizeof(why));
	NR_LOG_RL(LOG_NOTICE, "netreduce control: %s: TLS handshake failed: %s (tls_failed)",
		  srv_peer_str(&k->peer, ip), why[0] ? why : "the client closed the connection");
	k->closing = true;
	k->out_off = k->out_len = 0;
}

/* ---- connections -------------------------------------------------------- */

static void do_accept(struct nr_ctl_server *s, int lfd, bool admin)
{
	struct sockaddr_storage peer = { 0 };
	socklen_t plen = sizeof(peer);
	struct in6_addr src = { 0 };
	struct client *k;
	int fd;

	fd = accept4(lfd, admin ? NULL : (struct sockaddr *)&peer, admin ? NULL : &plen,
		     SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (!admin) {
		nr_ctl_count(s->c, NR_CCTR_CONNS_ACCEPTED);
		src = srv_peer_key(&peer);
	}
	if (!srv_admit_accept(s, fd, admin, &src))
		return;
	if (!admin && s->tls) {
		int one = 1;

		/* a handshake is several small writes each way: Nagle would hold
		 * each behind the peer's delayed ACK (40 ms) */
		if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
			/* only slower */
		}
	}
	k = &s->cl[s->ncl++];
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->admin = admin;
	k->authed = admin;
	k->tenant = -1;
	k->peer = src;
	k->tls = !admin && s->tls ? TLS_SNIFF : TLS_NONE;
	if (!admin)
		s->ntcp++;
	k->last_ms = k->tok_ms = nr_ctl_now_ms();
	k->seq = s->accepts++;
	k->tokens = s->burst;
}

/* Decrypted input waits in OpenSSL, where poll() does not see it. */
static bool tls_readable(const struct client *k)
{
	return k->tls == TLS_UP && !k->closing && !k->shut && !k->out_len && SSL_pending(k->ssl) > 0;
}

static int poll_timeout(struct nr_ctl_server *s, uint64_t now)
{
	uint64_t t = 1000;
	unsigned i;

	for (i = 0; i < s->ncl; i++) {
		uint64_t due = s->cl[i].shut ? s->cl[i].close_by : s->cl[i].last_ms + s->idle_ms;

		if (tls_readable(&s->cl[i]))
			return 0;

		if (due <= now)
			return 0;
		if (due - now < t)
			t = due - now;
	}
	return (int)t;
}

static void *server_main(void *arg)
{
	struct nr_ctl_server *s = arg;
	sigset_t pipe;

	/* OpenSSL writes to its sockets without MSG_NOSIGNAL: a client gone
	 * before its reply must be an EPIPE here, not a SIGPIPE that ends the box */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		unsigned n = 0, i, base;
		uint64_t now = nr_ctl_now_ms();
		int rc;

		s->pfd[n++] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		s->pfd[n++] = (struct pollfd){ .fd = s->ufd, .events = POLLIN };
		s->pfd[n++] = (struct pollfd){ .fd = s->tfd, .events = POLLIN };
		base = n;
		for (i = 0; i < s->ncl; i++) {
			struct client *k = &s->cl[i];
			short ev = 0;

			if ((!k->closing && k->out_len == 0) || k->shut)
				ev |= POLLIN;
			if (k->out_len)
				ev |= POLLOUT;
			if (!k->shut && (k->tls == TLS_ACCEPT || k->tls == TLS_UP))
				ev |= k->tls_want;   /* a record OpenSSL must read or write first */
			s->pfd[n++] = (struct pollfd){ .fd = k->fd, .events = ev };
		}
		rc = poll(s->pfd, n, poll_timeout(s, now));
		if (rc < 0 && errno != EINTR)
			break;
		now = nr_ctl_now_ms();
		/* Clients first (indices shift when one closes), listeners after. */
		for (i = s->ncl; i-- > 0;) {
			struct client *k = &s->cl[i];
			short re = rc > 0 ? s->pfd[base + i].revents : 0;

			if (k->shut) {
				if ((re & (POLLIN | POLLHUP | POLLERR) && srv_client_drain(k)) ||
				    now >= k->close_by)
					srv_client_close(s, i);
				continue;
			}
			if (k->tls == TLS_SNIFF || k->tls == TLS_ACCEPT) {
				if (re)
					tls_step(s, k);
			} else {
				if (k->tls == TLS_UP) {
					if (re & (k->tls_want | POLLHUP | POLLERR))
						re |= POLLIN | POLLOUT;   /* retry what waited */
					if (tls_readable(k))
						re |= POLLIN;
					k->tls_want = 0;
				}
				if (re & POLLOUT && k->out_len)
					srv_client_flush(k);
				if (re & (POLLIN | POLLHUP | POLLERR) && !k->closing && !k->out_len)
					client_read(s, k);
			}
			if (!k->closing && now >= k->last_ms + s->idle_ms) {
				nr_ctl_count(s->c, NR_CCTR_IDLE_CLOSED);
				srv_client_error(k, "idle timeout: connection closed");
				k->closing = true;
			}
			if (!k->closing)
				continue;
			if (k->out_len == 0 && !(re & (POLLHUP | POLLERR))) {
				/*
				 * Lingering close: closing with unread input would
				 * reset the connection and could lose the last reply.
				 */
				if (k->tls == TLS_UP)
					SSL_shutdown(k->ssl);   /* close_notify; its answer is drained */
				shutdown(k->fd, SHUT_WR);
				k->shut = true;
				k->close_by = now + 1000;
			} else if (k->out_len == 0 || re & (POLLHUP | POLLERR) ||
				   now >= k->last_ms + s->idle_ms + 1000) {
				srv_client_close(s, i);
			}
		}
		if (now - s->reaped_ms >= 1000) {   /* failed jobs past their TTL */
			nr_ctl_reap(s->c, now);
			s->reaped_ms = now;
		}
		if (rc > 0 && s->pfd[1].revents & POLLIN)
			do_accept(s, s->ufd, true);
		if (rc > 0 && s->pfd[2].revents & POLLIN)
			do_accept(s, s->tfd, false);
	}
	return NULL;
}

/* ---- listeners ---------------------------------------------------------- */

static int listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket path %s is longer than %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0755) < 0 && errno != EEXIST) {
		/* bind() below reports a missing directory with its own errno */
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "control socket path %s exists and is not a socket; "
				 "remove it or choose another path", path);
			return -1;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(fd);
			snprintf(err, errlen, "control socket %s: another server is listening on it", path);
			return -1;
		}
		if (fd >= 0)
			close(fd);
		unlink(path);    /* stale socket of a previous run */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Nobody can connect before listen(): the socket is 0600 before it is reachable. */
	if (chmod(path, 0600) < 0 || listen(fd, 64) < 0) {
		int e = errno;

		unlink(path);
		snprintf(err, errlen, "control socket %s: %s", sa.sun_path, strerror(e));
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

static void server_free(struct nr_ctl_server *s)
{
	unsigned i;

	for (i = 0; i < s->ncl; i++) {
		SSL_free(s->cl[i].ssl);
		close(s->cl[i].fd);
		free(s->cl[i].in);
		free(s->cl[i].out);
	}
	if (s->ufd >= 0) {
		close(s->ufd);
		unlink(s->unix_path);
	}
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	free(s->cl);
	free(s->pfd);
	free(s->unix_path);
	SSL_CTX_free(s->tls);
	free(s);
}

struct nr_ctl_server *nr_ctl_server_start(struct nr_ctl *c, const struct nr_ctl_server_cfg *cfg,
					  char *err, size_t errlen)
{
	struct nr_ctl_server *s;

	if (!c || !cfg || (!cfg->unix_path && !cfg->tcp_addr)) {
		snprintf(err, errlen, "control server: give a UNIX socket path, a TCP address or both");
		return NULL;
	}
	if (cfg->tcp_addr && (!cfg->token || !cfg->token[0]) && nr_ctl_tenants(c) == 0) {
		snprintf(err, errlen, "control server: the TCP listener %s needs a token or a "
			 "tenant (hosts send their token with every request)", cfg->tcp_addr);
		return NULL;
	}

	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "control server: out of memory");
		return NULL;
	}
	s->c = c;
	s->ufd = s->tfd = s->wake[0] = s->wake[1] = -1;
	s->tcp_port = -1;
	s->max_conns = cfg->max_conns ? cfg->max_conns : 64;
	s->idle_ms = cfg->idle_timeout_ms ? cfg->idle_timeout_ms : 30000;
	/* a quarter of the table, at least 16 (but no more than the table) */
	s->per_source = cfg->max_conns_per_source ? cfg->max_conns_per_source
		      : s->max_conns / 4 > 16 ? s->max_conns / 4 : s->max_conns < 16 ? s->max_conns : 16;
	s->per_tenant = cfg->max_conns_per_tenant ? cfg->max_conns_per_tenant : s->per_source;
	if (s->per_tenant > s->max_conns)
		s->per_tenant = s->max_conns;
	s->max_line = cfg->max_line ? cfg->max_line : 65536;
	s->rate = cfg->rate_per_sec ? cfg->rate_per_sec : 100;
	s->burst = cfg->rate_burst ? cfg->rate_burst : 20;
	s->auth_max = cfg->auth_fail_max ? cfg->auth_fail_max : 10;
	s->auth_window_ms = cfg->auth_fail_window_ms ? cfg->auth_fail_window_ms : 60000;
	s->auth_block_ms = cfg->auth_block_ms ? cfg->auth_block_ms : 60000;
	s->hs_max = cfg->tls_handshakes_per_sec ? cfg->tls_handshakes_per_sec : 32;
	s->cl = calloc(s->max_conns + NR_ADMIN_RESERVED, sizeof(*s->cl));
	s->pfd = calloc(s->max_conns + NR_ADMIN_RESERVED + 3, sizeof(*s->pfd));
	s->unix_path = cfg->unix_path ? strdup(cfg->unix_path) : NULL;
	if (!s->cl || !s->pfd || (cfg->unix_path && !s->unix_path)) {
		snprintf(err, errlen, "control server: out of memory");
		goto fail;
	}
	if ((cfg->tls_cert || cfg->tls_key) && !cfg->tcp_addr) {
		snprintf(err, errlen, "control server: TLS is for the TCP listener, and there is none");
		goto fail;
	}
	if ((cfg->tls_cert || cfg->tls_key) &&
	    !(s->tls = nr_ctl_tls_server_ctx(cfg->tls_cert, cfg->tls_key, err, errlen)))
		goto fail;
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "control server: pipe: %s", strerror(errno));
		goto fail;
	}
	if (s->unix_path && (s->ufd = listen_unix(s->unix_path, err, errlen)) < 0)
		goto fail;
	if (cfg->tcp_addr && (s->tfd = nr_ctl_listen_tcp(cfg->tcp_addr, "tcp", "0.0.0.0:7400", &s->tcp_port,
						       err, errlen)) < 0)
		goto fail;
	if (cfg->token && cfg->token[0] &&
	    nr_ctl_authenticate(c, cfg->token, strlen(cfg->token)) < 0) {
		/* one token for every host: it may hold the whole table */
		struct nr_ctl_tenant_cfg def = { .name = "default", .token = cfg->token,
						 .max_conns = s->max_conns };

		if (nr_ctl_tenant_add(c, &def, err, errlen) < 0)
			goto fail;
	}
	if (pthread_create(&s->th, NULL, server_main, s)) {
		snprintf(err, errlen, "control server: cannot start its thread");
		goto fail;
	}
	return s;
fail:
	server_free(s);
	return NULL;
}

int nr_ctl_server_tcp_port(const struct nr_ctl_server *s)
{
	return s ? s->tcp_port : -1;
}

void nr_ctl_server_stop(struct nr_ctl_server *s)
{
	char b = 1;

	if (!s)
		return;
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	if (write(s->wake[1], &b, 1) < 0) {
		/* the pipe is non-blocking and never full here; the poll timeout covers it */
	}
	pthread_join(s->th, NULL);
	server_free(s);
}
