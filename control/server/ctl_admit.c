/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control server's admission (ctl_srv.h, docs/trust.md): the admin
 * socket's places beyond max_conns, connections per source address and per
 * tenant, failed authentication throttled per source, each connection's
 * request rate, and the eviction of the oldest unauthenticated connection
 * when the TCP table is full.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/api/ctl_log.h"
#include "control/server/ctl_srv.h"

bool srv_claim(const json_t *req, char claim[NR_CTL_TENANT_NAME_MAX + 1])
{
	const json_t *t = json_object_get(req, "tenant");
	size_t n;

	claim[0] = '\0';
	if (t == NULL)
		return true;
	if (!json_is_string(t) || (n = json_string_length(t)) == 0 || n > NR_CTL_TENANT_NAME_MAX ||
	    strlen(json_string_value(t)) != n)
		return false;
	memcpy(claim, json_string_value(t), n + 1);
	return true;
}

int srv_tenant_of(const struct nr_ctl_server *s, const json_t *req, const char *claim)
{
	const json_t *tok = json_object_get(req, "token");

	if (!json_is_string(tok))
		return -1;
	return nr_ctl_authenticate_as(s->c, claim[0] ? claim : NULL, json_string_value(tok),
				      json_string_length(tok));
}

/* The entry of (peer, claim), or NULL when it has none. */
static struct auth_src *auth_find(struct nr_ctl_server *s, const struct in6_addr *peer,
				  const char *claim)
{
	for (unsigned i = 0; i < NR_AUTH_SOURCES; i++)
		if (s->auth[i].fails + s->auth[i].blocked_until &&
		    !memcmp(&s->auth[i].peer, peer, sizeof(*peer)) &&
		    !strcmp(s->auth[i].claim, claim))
			return &s->auth[i];
	return NULL;
}

uint64_t srv_auth_blocked(struct nr_ctl_server *s, const struct in6_addr *peer, const char *claim,
			  uint64_t now)
{
	const struct auth_src *a = auth_find(s, peer, claim);

	return a && a->blocked_until > now ? a->blocked_until - now : 0;
}

void srv_auth_failed(struct nr_ctl_server *s, const struct in6_addr *peer, const char *claim,
		     uint64_t now)
{
	struct auth_src *a = auth_find(s, peer, claim);
	char ip[INET6_ADDRSTRLEN];

	if (!a) { /* a free entry, else the one whose last news is oldest */
		a = &s->auth[0];
		for (unsigned i = 0; i < NR_AUTH_SOURCES; i++) {
			struct auth_src *b = &s->auth[i];
			uint64_t ta = a->window_ms > a->blocked_until ? a->window_ms
								      : a->blocked_until;
			uint64_t tb = b->window_ms > b->blocked_until ? b->window_ms
								      : b->blocked_until;

			if (b->fails + b->blocked_until == 0) {
				a = b;
				break;
			}
			if (tb < ta)
				a = b;
		}
		*a = (struct auth_src){ .peer = *peer, .window_ms = now };
		snprintf(a->claim, sizeof(a->claim), "%s", claim);
	}
	if (now - a->window_ms > s->auth_window_ms) {
		a->window_ms = now;
		a->fails = 0;
	}
	if (++a->fails < s->auth_max)
		return;
	a->blocked_until = now + s->auth_block_ms;
	a->fails = 0;
	a->window_ms = now;
	NR_LOG_RL(LOG_WARNING,
		  "netreduce control: source %s%s%s: %u failed authentications within "
		  "%.1f s: its connections are refused for %.1f s (auth_throttled)",
		  srv_peer_str(peer, ip), claim[0] ? ", claiming tenant " : "", claim, s->auth_max,
		  s->auth_window_ms / 1000.0, s->auth_block_ms / 1000.0);
}

bool srv_rate_ok(struct nr_ctl_server *s, struct client *k, uint64_t now)
{
	k->tokens += (double)(now - k->tok_ms) * s->rate / 1000.0;
	k->tok_ms = now;
	if (k->tokens > s->burst)
		k->tokens = s->burst;
	if (k->tokens < 1.0)
		return false;
	k->tokens -= 1.0;
	return true;
}

/* (k's source, claim) blocked for failed authentications: k is told, closed, counted. */
bool srv_throttled(struct nr_ctl_server *s, struct client *k, const char *claim, uint64_t now)
{
	uint64_t left = srv_auth_blocked(s, &k->peer, claim, now);
	char msg[192];

	if (!left)
		return false;
	nr_ctl_count(s->c, NR_CCTR_AUTH_THROTTLED);
	snprintf(msg, sizeof(msg),
		 "too many failed authentications from this address%s%s: refused "
		 "for %llu s more",
		 claim[0] ? " for tenant " : "", claim, (unsigned long long)(left + 999) / 1000);
	srv_client_error(k, msg);
	k->closing = true;
	return true;
}

/*
 * A TCP connection belongs to the tenant of its first authenticated request,
 * which holds at most its max_conns of them: true when k may go on as
 * tenant who; else k was answered why and must close.
 */
bool srv_tenant_admit(struct nr_ctl_server *s, struct client *k, int who)
{
	char name[NR_CTL_TENANT_NAME_MAX + 1] = "", msg[320];
	uint32_t own = 0, cap;

	if (k->tenant == who)
		return true;
	if (k->tenant >= 0 || who >= NR_CTL_MAX_TENANTS) {
		nr_ctl_count(s->c, NR_CCTR_REQUESTS);
		nr_ctl_count(s->c, NR_CCTR_BAD_TOKEN);
		nr_ctl_count(s->c, NR_CCTR_ERRORS);
		srv_client_error(k, "the token names another tenant than this connection's first request "
				    "did: a connection serves one tenant; connection closed");
		return false;
	}
	nr_ctl_tenant_conn_limit(s->c, who, name, sizeof(name), &own);
	cap = own ? own : s->per_tenant;
	if (s->tenant_conns[who] >= cap) {
		nr_ctl_count(s->c, NR_CCTR_REQUESTS);
		nr_ctl_count(s->c, NR_CCTR_ERRORS);
		nr_ctl_tenant_conn_refused(s->c, who);
		snprintf(msg, sizeof(msg),
			 "tenant %s holds %u control connections, its max_conns%s: "
			 "connection closed; close one (the library keeps one a job), or raise "
			 "max_conns in the tenants file",
			 name, s->tenant_conns[who], own ? "" : " (the box's default)");
		srv_client_error(k, msg);
		return false;
	}
	s->tenant_conns[who]++;
	k->tenant = who;
	return true;
}

bool srv_evict_unauthenticated(struct nr_ctl_server *s, const struct in6_addr *src)
{
	unsigned oldest = s->ncl;

	for (unsigned i = 0; i < s->ncl; i++) {
		const struct client *k = &s->cl[i];

		if (!k->admin && !k->authed && (!src || !memcmp(&k->peer, src, sizeof(*src))) &&
		    (oldest == s->ncl || k->seq < s->cl[oldest].seq))
			oldest = i;
	}
	if (oldest == s->ncl)
		return false;
	nr_ctl_count(s->c, NR_CCTR_CONNS_EVICTED);
	srv_client_close(s, oldest);
	return true;
}

bool srv_admit_accept(struct nr_ctl_server *s, int fd, bool admin, const struct in6_addr *src)
{
	static const char full[] = "{\"ok\":false,\"error\":\"too many connections; try again later\"}\n";
	unsigned same = 0;

	/*
	 * TCP clients may hold max_conns connections; the admin socket has
	 * NR_ADMIN_RESERVED more of its own, so the network cannot lock the
	 * operator out.
	 */
	if (admin) {
		if (s->ncl >= s->max_conns + NR_ADMIN_RESERVED) {
			srv_refuse(s, fd, full);
			return false;
		}
		return true;
	}
	/*
	 * A source holds per_source connections that have not authenticated (an
	 * authenticated one counts against its tenant): past it, the newest
	 * takes the place of the source's oldest.  Tenants behind one address
	 * (SNAT) send their first request at once; a neighbour's idle
	 * connections cannot keep them out, as a refusal of the newest would.
	 * Failed authentication is throttled when a request names who it is
	 * (srv_throttled), not here: the connection has not said yet.
	 */
	for (unsigned i = 0; i < s->ncl; i++)
		same += !s->cl[i].admin && !s->cl[i].authed &&
			!memcmp(&s->cl[i].peer, src, sizeof(*src));
	if (same >= s->per_source && !srv_evict_unauthenticated(s, src)) {
		srv_refuse(s, fd, full);
		return false;
	}
	if (s->ntcp >= s->max_conns && !srv_evict_unauthenticated(s, NULL)) {
		srv_refuse(s, fd, full);
		return false;
	}
	return true;
}

bool srv_tls_handshake_ok(struct nr_ctl_server *s, const struct in6_addr *peer, uint64_t now)
{
	struct hs_src *h = NULL, *oldest = &s->hs[0];
	char ip[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < NR_AUTH_SOURCES && !h; i++) {
		struct hs_src *x = &s->hs[i];

		if (x->window_ms && !memcmp(&x->peer, peer, sizeof(*peer)))
			h = x;
		else if (x->window_ms < oldest->window_ms)
			oldest = x; /* a free entry (0) first, else the stalest */
	}
	if (!h) {
		h = oldest;
		*h = (struct hs_src){ .peer = *peer, .window_ms = now ? now : 1 };
	}
	if (now - h->window_ms >= 1000) {
		h->window_ms = now ? now : 1;
		h->n = 0;
	}
	if (h->n < s->hs_max) {
		h->n++;
		return true;
	}
	nr_ctl_count(s->c, NR_CCTR_TLS_THROTTLED);
	NR_LOG_RL(LOG_WARNING,
		  "netreduce control: source %s: more than %u TLS handshakes in a "
		  "second: closed before the handshake (tls_throttled)",
		  srv_peer_str(peer, ip), s->hs_max);
	return false;
}
