/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A control client's bytes (ctl_srv.h): send and receive, plain or TLS, its
 * reply backlog bounded by OUT_MAX, its close, and a peer's source address
 * as one key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#include "control/api/ctl_log.h"
#include "control/server/ctl_srv.h"

/*
 * send() or, on a TLS connection, SSL_write(), with send()'s contract: a
 * retry is -1 with errno EAGAIN (k->tls_want says for what), a dead
 * connection -1 with another errno.
 */
ssize_t srv_client_send(struct client *k, const void *buf, size_t len)
{
	int r;

	if (!k->ssl)
		return send(k->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	ERR_clear_error();
	r = SSL_write(k->ssl, buf, len > (1u << 30) ? 1 << 30 : (int)len);
	if (r > 0)
		return r;
	switch (SSL_get_error(k->ssl, r)) {
	case SSL_ERROR_WANT_WRITE:
		k->tls_want = POLLOUT;
		errno = EAGAIN;
		break;
	case SSL_ERROR_WANT_READ:
		k->tls_want = POLLIN;
		errno = EAGAIN;
		break;
	default:
		errno = EPIPE;
		ERR_clear_error();
		break;
	}
	return -1;
}

/* recv() or SSL_read() with recv()'s contract (0: the end of the stream). */
ssize_t srv_client_recv(struct client *k, void *buf, size_t len)
{
	int r;

	if (!k->ssl)
		return recv(k->fd, buf, len, MSG_DONTWAIT);
	ERR_clear_error();
	r = SSL_read(k->ssl, buf, len > (1u << 30) ? 1 << 30 : (int)len);
	if (r > 0)
		return r;
	switch (SSL_get_error(k->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		k->tls_want = POLLIN;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_WANT_WRITE:
		k->tls_want = POLLOUT;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN: return 0;
	default:
		errno = ECONNRESET;
		ERR_clear_error();
		return -1;
	}
}

void srv_client_flush(struct client *k)
{
	while (k->out_off < k->out_len) {
		ssize_t r = srv_client_send(k, k->out + k->out_off, k->out_len - k->out_off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				k->closing = true;
				k->out_off = k->out_len; /* peer gone: drop the backlog */
			}
			break;
		}
		k->out_off += (size_t)r;
	}
	if (k->out_off == k->out_len)
		k->out_off = k->out_len = 0;
}

void srv_client_reply(struct client *k, const char *line)
{
	size_t n = line ? strlen(line) : 0;
	char *p;

	if (!line || k->out_len - k->out_off + n + 1 > OUT_MAX) {
		k->closing = true; /* allocation failure or a client that never reads */
		return;
	}
	if (k->out_off) {
		memmove(k->out, k->out + k->out_off, k->out_len - k->out_off);
		k->out_len -= k->out_off;
		k->out_off = 0;
	}
	p = realloc(k->out, k->out_len + n + 1);
	if (!p) {
		k->closing = true;
		return;
	}
	k->out = p;
	memcpy(k->out + k->out_len, line, n);
	k->out[k->out_len + n] = '\n';
	k->out_len += n + 1;
	srv_client_flush(k);
}

void srv_client_error(struct client *k, const char *msg)
{
	char *line;

	if (k->tls == TLS_SNIFF || k->tls == TLS_ACCEPT) {
		k->closing = true; /* nothing can be said before the handshake */
		k->out_off = k->out_len = 0;
		return;
	}
	line = nr_ctl_error_line(msg);

	srv_client_reply(k, line);
	free(line);
}

/* Discard input of a closing client; true at EOF or error. */
bool srv_client_drain(struct client *k)
{
	char junk[4096];
	unsigned i;

	for (i = 0; i < 64; i++) { /* bounded: a flood cannot hold the thread */
		ssize_t r = recv(k->fd, junk, sizeof(junk), MSG_DONTWAIT);

		if (r > 0)
			continue;
		return r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
	}
	return false;
}

void srv_client_close(struct nr_ctl_server *s, unsigned i)
{
	struct client *k = &s->cl[i];

	if (!k->admin)
		s->ntcp--;
	SSL_free(k->ssl);
	if (k->tenant >= 0 && k->tenant < NR_CTL_MAX_TENANTS)
		s->tenant_conns[k->tenant]--;
	close(k->fd);
	free(k->in);
	free(k->out);
	s->cl[i] = s->cl[--s->ncl];
}

void srv_refuse(struct nr_ctl_server *s, int fd, const char *line)
{
	nr_ctl_count(s->c, NR_CCTR_CONNS_REFUSED);
	if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* nothing more to do: the peer is told by the close */
	}
	close(fd);
}

/* A source key (peer_key) in words: IPv4 dotted, IPv6 as it is. */
const char *srv_peer_str(const struct in6_addr *peer, char buf[INET6_ADDRSTRLEN])
{
	if (IN6_IS_ADDR_V4MAPPED(peer))
		return inet_ntop(AF_INET, &peer->s6_addr[12], buf, INET6_ADDRSTRLEN) ? buf : "?";
	return inet_ntop(AF_INET6, peer, buf, INET6_ADDRSTRLEN) ? buf : "?";
}

/* A peer's source address as one key: IPv4 as ::ffff:a.b.c.d, as a dual-stack
 * listener sees its IPv4 peers, IPv6 as it is. */
struct in6_addr srv_peer_key(const struct sockaddr_storage *ss)
{
	struct in6_addr a = { 0 };

	if (ss->ss_family == AF_INET6) {
		a = ((const struct sockaddr_in6 *)ss)->sin6_addr;
	} else if (ss->ss_family == AF_INET) {
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
		memcpy(&a.s6_addr[12], &((const struct sockaddr_in *)ss)->sin_addr, 4);
	}
	return a;
}
