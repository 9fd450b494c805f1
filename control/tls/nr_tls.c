/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS clients of the box's control listener (nr_tls.h): OpenSSL over a
 * connected socket made non-blocking, every step bounded by poll() and a
 * deadline, so a box that stops answering cannot hang the caller.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "control/tls/nr_tls.h"

struct nr_tls_client {
	SSL_CTX *ctx;
	char ca[256];
};

struct nr_tls_conn {
	SSL *ssl;
	int fd;
};

/*
 * OpenSSL writes to the socket without MSG_NOSIGNAL: while it runs, SIGPIPE
 * is blocked in this thread, and one it raised is taken back, so a box that
 * closed the connection is an error here, not the end of the caller's process.
 */
struct nopipe {
	sigset_t old;
	bool was_pending;
};

static void nopipe_enter(struct nopipe *np)
{
	sigset_t pipe, pending;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	np->was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &np->old);
}

static void nopipe_leave(struct nopipe *np)
{
	static const struct timespec zero;
	sigset_t pipe, pending;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	if (!np->was_pending && sigismember(&pending, SIGPIPE))
		sigtimedwait(&pipe, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &np->old, NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

const char *nr_tls_why(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	buf[0] = '\0';
	if (e)
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

struct nr_tls_client *nr_tls_client_new(const char *ca_file, char *err, size_t errlen)
{
	struct nr_tls_client *t = calloc(1, sizeof(*t));
	char why[256];

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(t->ca, sizeof(t->ca), "%s", ca_file);
	t->ctx = SSL_CTX_new(TLS_client_method());
	if (!t->ctx || !SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION)) {
		snprintf(err, errlen, "TLS: cannot set up OpenSSL: %s", nr_tls_why(why, sizeof(why)));
		goto fail;
	}
	if (access(ca_file, R_OK) != 0) {
		snprintf(err, errlen, "TLS: cannot read the CA file %s: %s", ca_file, strerror(errno));
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(t->ctx, ca_file, NULL) != 1) {
		snprintf(err, errlen, "TLS: cannot read the CA file %s (PEM certificates): %s",
			 ca_file, nr_tls_why(why, sizeof(why)));
		goto fail;
	}
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	return t;
fail:
	nr_tls_client_free(t);
	return NULL;
}

void nr_tls_client_free(struct nr_tls_client *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

/*
 * Wait for what OpenSSL asked for after a call returned r: 1 to retry,
 * 0 at the deadline, -1 on an error that is not a retry.
 */
static int ssl_wait(SSL *ssl, int fd, int r, uint64_t deadline)
{
	int e = SSL_get_error(ssl, r);
	struct pollfd p = { .fd = fd };
	int64_t left = (int64_t)deadline - (int64_t)now_ms();

	if (e == SSL_ERROR_WANT_READ)
		p.events = POLLIN;
	else if (e == SSL_ERROR_WANT_WRITE)
		p.events = POLLOUT;
	else
		return -1;
	if (left <= 0)
		return 0;
	if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
		return -1;
	return 1;
}

static void handshake_error(const struct nr_tls_client *t, SSL *ssl, const char *host, char *err,
			    size_t errlen)
{
	unsigned long e = ERR_peek_last_error();
	long v = SSL_get_verify_result(ssl);
	char why[256];

	if (v != X509_V_OK) {
		snprintf(err, errlen, "TLS: the box's certificate does not verify against the CA "
			 "file %s for %s: %s", t->ca, host, X509_verify_cert_error_string(v));
		ERR_clear_error();
	} else if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
		   (ERR_GET_REASON(e) == SSL_R_WRONG_VERSION_NUMBER ||
		    ERR_GET_REASON(e) == SSL_R_PACKET_LENGTH_TOO_LONG)) {
		snprintf(err, errlen, "TLS: the box answered in plain text: its control listener "
			 "does not speak TLS (netreduce-switch without --tls-cert?)");
		ERR_clear_error();
	} else {
		nr_tls_why(why, sizeof(why));
		snprintf(err, errlen, "TLS handshake with %s failed: %s", host,
			 why[0] ? why : "the box closed the connection");
	}
}

struct nr_tls_conn *nr_tls_connect(struct nr_tls_client *t, int fd, const char *host,
				   uint32_t timeout_ms, char *err, size_t errlen)
{
	uint64_t deadline = now_ms() + timeout_ms;
	struct nr_tls_conn *c = calloc(1, sizeof(*c));
	unsigned char ip[16];
	X509_VERIFY_PARAM *vp;
	bool is_ip;
	int fl, r, one = 1;

	if (!c || !(c->ssl = SSL_new(t->ctx))) {
		snprintf(err, errlen, "TLS: out of memory");
		free(c);
		return NULL;
	}
	c->fd = fd;
	/* the handshake's small writes must not wait for delayed ACKs (Nagle) */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || SSL_set_fd(c->ssl, fd) != 1) {
		snprintf(err, errlen, "TLS: cannot use the socket: %s", strerror(errno));
		goto fail;
	}
	/* the name checked in the certificate: the IP (subjectAltName IP) or DNS name */
	is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
	vp = SSL_get0_param(c->ssl);
	if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host) != 1
		  : (X509_VERIFY_PARAM_set1_host(vp, host, 0) != 1 ||
		     SSL_set_tlsext_host_name(c->ssl, host) != 1)) {
		snprintf(err, errlen, "TLS: cannot check the box's certificate for \"%s\"", host);
		goto fail;
	}
	for (;;) {
		struct nopipe np;

		ERR_clear_error();
		nopipe_enter(&np);
		r = SSL_connect(c->ssl);
		nopipe_leave(&np);
		if (r == 1)
			return c;
		r = ssl_wait(c->ssl, fd, r, deadline);
		if (r == 0) {
			snprintf(err, errlen, "TLS handshake with %s: no answer within %u ms", host,
				 timeout_ms);
			goto fail;
		}
		if (r < 0) {
			handshake_error(t, c->ssl, host, err, errlen);
			goto fail;
		}
	}
fail:
	SSL_free(c->ssl);
	free(c);
	return NULL;
}

int nr_tls_send(struct nr_tls_conn *c, const void *buf, size_t len, uint32_t timeout_ms,
		char *err, size_t errlen)
{
	uint64_t deadline = now_ms() + timeout_ms;
	size_t off = 0;
	char why[256];

	while (off < len) {
		struct nopipe np;
		int r, w;

		ERR_clear_error();
		nopipe_enter(&np);
		r = SSL_write(c->ssl, (const char *)buf + off,
			      len - off > (1u << 30) ? 1 << 30 : (int)(len - off));
		nopipe_leave(&np);
		if (r > 0) {
			off += (size_t)r;
			continue;
		}
		w = ssl_wait(c->ssl, c->fd, r, deadline);
		if (w > 0)
			continue;
		snprintf(err, errlen, "send: %s", w == 0 ? "no progress within the timeout"
			 : nr_tls_why(why, sizeof(why))[0] ? why : "connection closed");
		return -1;
	}
	return 0;
}

ssize_t nr_tls_recv(struct nr_tls_conn *c, void *buf, size_t len, uint32_t timeout_ms,
		    char *err, size_t errlen)
{
	uint64_t deadline = now_ms() + timeout_ms;
	char why[256];

	for (;;) {
		struct nopipe np;
		int r, w;

		ERR_clear_error();
		nopipe_enter(&np);     /* a read may write (a TLS 1.3 key update) */
		r = SSL_read(c->ssl, buf, len > (1u << 30) ? 1 << 30 : (int)len);
		nopipe_leave(&np);
		if (r > 0)
			return r;
		if (SSL_get_error(c->ssl, r) == SSL_ERROR_ZERO_RETURN)
			return 0;
		w = ssl_wait(c->ssl, c->fd, r, deadline);
		if (w > 0)
			continue;
		if (w == 0) {
			snprintf(err, errlen, "no answer within the timeout");
			return -1;
		}
		if (SSL_get_error(c->ssl, r) == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
			return 0;       /* the box closed without close_notify */
		snprintf(err, errlen, "TLS: %s", nr_tls_why(why, sizeof(why)));
		return -1;
	}
}

void nr_tls_close(struct nr_tls_conn *c)
{
	struct nopipe np;

	if (!c)
		return;
	nopipe_enter(&np);
	SSL_shutdown(c->ssl);   /* close_notify, not waiting for the box's */
	nopipe_leave(&np);
	SSL_free(c->ssl);
	free(c);
}

int nr_tls_host_of(const char *addr, char *host, size_t len)
{
	const char *colon = addr ? strrchr(addr, ':') : NULL;
	size_t n;

	if (!colon || colon == addr)
		return -1;
	n = (size_t)(colon - addr);
	if (addr[0] == '[' && colon[-1] == ']') {
		addr++;
		n -= 2;
	}
	if (n == 0 || n >= len)
		return -1;
	memcpy(host, addr, n);
	host[n] = '\0';
	return 0;
}
