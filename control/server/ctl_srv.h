/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the control server (control/server/ only): its clients and its
 * state, shared by its three files.  Calls run one way:
 *
 *   ctl_server.c   the poll loop, framing, TLS handshakes, listeners
 *        |    \
 *        |   ctl_admit.c   admission: connections per source and tenant,
 *        |    /            failed authentication per source, rates, eviction
 *   ctl_conn.c     a client's output and input, its close
 *
 * Thread contract: everything here runs on the server thread.
 */
#ifndef NR_CTL_SRV_H
#define NR_CTL_SRV_H

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>
#include <openssl/ssl.h>

#include "control/api/nr_control.h"

#define OUT_MAX (4u << 20) /* reply backlog of a client that does not read */

/* Connections kept for the admin socket beyond max_conns. */
#define NR_ADMIN_RESERVED 4

/* Sources whose failed authentications are remembered (the oldest go first). */
#define NR_AUTH_SOURCES 256

/* The first byte of a TLS record carrying a handshake (a ClientHello). */
#define TLS_HANDSHAKE_BYTE 0x16

enum tls_state {
	TLS_NONE,   /* plain: the UNIX socket, or TCP without TLS */
	TLS_SNIFF,  /* TLS listener: the first byte decides */
	TLS_ACCEPT, /* handshake under way */
	TLS_UP,     /* requests flow */
};

/* A source's failed authentications in its current window. */
struct auth_src {
	struct in6_addr peer; /* the source (peer_key); fails + blocked_until 0: a free entry */
	char claim[NR_CTL_TENANT_NAME_MAX + 1]; /* the tenant its requests named, "" none */
	unsigned fails;
	uint64_t window_ms; /* start of the window */
	uint64_t blocked_until;
};

/* A source's TLS handshakes started in its current second. */
struct hs_src {
	struct in6_addr peer;
	uint64_t window_ms; /* start of the second; 0: a free entry */
	unsigned n;
};

struct client {
	int fd;
	bool admin;
	bool authed;          /* a request with the right token came (admin: always) */
	int tenant;           /* TCP: the tenant it authenticated as, -1 before */
	struct in6_addr peer; /* TCP: the source address (IPv4 as ::ffff:a.b.c.d) */
	uint64_t seq;         /* the server's accepts before it: the oldest has the least */
	bool closing; /* flush out, then close */
	bool shut;    /* write side shut: drain input until EOF or close_by */
	uint64_t close_by;
	char *in;
	size_t in_len, in_cap;
	bool rx_any; /* a byte came: a TLS ClientHello is looked for at the first */
	char *out;
	size_t out_len, out_off;
	uint64_t last_ms; /* last authenticated request (or accept) */
	double tokens;
	uint64_t tok_ms;
	SSL *ssl; /* TLS_ACCEPT, TLS_UP */
	enum tls_state tls;
	short tls_want; /* POLLIN or POLLOUT: what OpenSSL waits for */
};

struct nr_ctl_server {
	struct nr_ctl *c;
	char *unix_path;
	unsigned max_conns, per_source, per_tenant, idle_ms, rate, burst;
	unsigned tenant_conns[NR_CTL_MAX_TENANTS]; /* TCP connections by tenant */
	size_t max_line;
	int ufd, tfd, wake[2];
	int tcp_port;
	uint64_t reaped_ms; /* last nr_ctl_reap */
	bool stop;
	pthread_t th;
	struct client *cl; /* [max_conns + NR_ADMIN_RESERVED] */
	unsigned ncl;      /* clients, admin or not */
	unsigned ntcp;     /* of which TCP (at most max_conns) */
	uint64_t accepts;  /* connections accepted so far */
	struct pollfd *pfd;
	SSL_CTX *tls; /* NULL: plain TCP */
	unsigned auth_max, auth_window_ms, auth_block_ms;
	struct auth_src auth[NR_AUTH_SOURCES];
	unsigned hs_max; /* TLS handshakes a source may start a second */
	struct hs_src hs[NR_AUTH_SOURCES];
};

/* ---- ctl_conn.c: a client's bytes -------------------------------------------- */

/*
 * send() or, on a TLS connection, SSL_write(), with send()'s contract: a
 * retry is -1 with errno EAGAIN (k->tls_want says for what), a dead
 * connection -1 with another errno.
 */
ssize_t srv_client_send(struct client *k, const void *buf, size_t len);

/* recv() or SSL_read() with recv()'s contract (0: the end of the stream). */
ssize_t srv_client_recv(struct client *k, void *buf, size_t len);

/* Write what k's output holds, as much as the socket takes now. */
void srv_client_flush(struct client *k);

/* Queue one reply line (line + '\n'); a client past OUT_MAX unread is closed. */
void srv_client_reply(struct client *k, const char *line);

/* Queue {"ok":false,"error":msg}. */
void srv_client_error(struct client *k, const char *msg);

/* Discard input of a closing client; true at EOF or error. */
bool srv_client_drain(struct client *k);

/* Close client i and give its place (and its tenant's count) back. */
void srv_client_close(struct nr_ctl_server *s, unsigned i);

/* A connection refused at accept: line sent, fd closed, conns_refused counted. */
void srv_refuse(struct nr_ctl_server *s, int fd, const char *line);

/* A source key (peer_key) in words: IPv4 dotted, IPv6 as it is. */
const char *srv_peer_str(const struct in6_addr *peer, char buf[INET6_ADDRSTRLEN]);

/* A peer's source address as one key: IPv4 as ::ffff:a.b.c.d, as a dual-stack
 * listener sees its IPv4 peers, IPv6 as it is. */
struct in6_addr srv_peer_key(const struct sockaddr_storage *ss);

/* ---- ctl_admit.c: who may connect and go on --------------------------------- */

/*
 * The tenant a request claims, its "tenant" (PROTOCOL.md), into claim: ""
 * when it names none; false when "tenant" is there but is no tenant's name
 * (not a string, empty, too long): such a request fails authentication.
 * Failed authentication is throttled per (source, claim).
 */
bool srv_claim(const json_t *req, char claim[NR_CTL_TENANT_NAME_MAX + 1]);

/* The tenant a request's token names (the claimed one's token only, with a
 * claim), or -1. */
int srv_tenant_of(const struct nr_ctl_server *s, const json_t *req, const char *claim);

/* How long (source, claim) stays blocked (ms), 0 when it is not. */
uint64_t srv_auth_blocked(struct nr_ctl_server *s, const struct in6_addr *peer, const char *claim,
			  uint64_t now);

/* A failed authentication from (peer, claim): after auth_max in a window, it is blocked. */
void srv_auth_failed(struct nr_ctl_server *s, const struct in6_addr *peer, const char *claim,
		     uint64_t now);

/* k's token bucket (rate a second, burst): true when this request may run. */
bool srv_rate_ok(struct nr_ctl_server *s, struct client *k, uint64_t now);

/* (k's source, claim) blocked for failed authentications: k is told, closed, counted. */
bool srv_throttled(struct nr_ctl_server *s, struct client *k, const char *claim, uint64_t now);

/*
 * A TCP connection belongs to the tenant of its first authenticated request,
 * which holds at most its max_conns of them: true when k may go on as
 * tenant who; else k was answered why and must close.
 */
bool srv_tenant_admit(struct nr_ctl_server *s, struct client *k, int who);

/* Close the oldest connection that has not authenticated (from src; NULL:
 * from any source), if there is one: the TCP table, or src's share of it, is
 * full.  Counted (conns_evicted); true when a place was made. */
bool srv_evict_unauthenticated(struct nr_ctl_server *s, const struct in6_addr *src);

/*
 * A new connection fd from src (admin: the UNIX socket) against the limits:
 * the admin socket's own places, connections per source address, a source
 * blocked for failed authentications (plain listeners: at once), the TCP
 * table (evicting the oldest unauthenticated).  True when it may take a
 * place; else it was answered, closed and counted.
 */
bool srv_admit_accept(struct nr_ctl_server *s, int fd, bool admin, const struct in6_addr *src);

/*
 * A TLS handshake from peer may start now: true, counted in its second;
 * false past hs_max that second (tls_throttled counted, the caller closes
 * the connection before OpenSSL reads a byte of it): a handshake costs the
 * server's one thread a key exchange, so no source spends it all.
 */
bool srv_tls_handshake_ok(struct nr_ctl_server *s, const struct in6_addr *peer, uint64_t now);

#endif /* NR_CTL_SRV_H */
