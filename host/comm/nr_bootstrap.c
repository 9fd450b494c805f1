/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP rendezvous at rank 0, JSON lines (jansson):
 *   0 -> every connection, at once
 *                 {"rendezvous":"netreduce/1","nonce":N,"auth":B}
 *   rank r -> 0   {"hello":{"rank","world","mtu","msg_size","transport","box","channels",
 *                  "selective"},
 *                  "peer":ROW,"nonce":M}
 *   0 -> rank r   {"ok":true,"credits":W,"result_key":K,"peers":[ROW...]} | {"ok":false,"error":..}
 *                 | {"ok":false,"refused":"proof"|"rank","error":..} (the hello turned away)
 *   barrier:      r -> 0 {"barrier":WHAT}; 0 -> r {"go":WHAT[,"value":V]}
 *   plain region: r -> 0 {"region":{"va","rkey"}}; 0 -> r {"next":{"va","rkey"}}
 * ROW = {"ip","mac","box":[EP a box channel],"plain":EP},
 * EP = {"send":QP,"recv":QP,"va","rkey"}, QP = {"qpn","psn","port","sport"}.  The sockets stay open for barriers and region
 * exchanges; a rank that dies closes its socket and everyone learns it.
 * N: rank 0's nonce of this rendezvous (32 bytes, hex), M: the member's of
 * its connection (16).  With a key (B true: NR_JOB_SECRET or NR_TOKEN) every
 * line after the first, both ways, carries "proof", its HMAC-SHA256 over the
 * line and its place (nr_auth.h); a line without its right proof is a
 * stray's (rank 0 ignores the hello and turns it away, "refused":"proof") or
 * a forgery (a member refuses it).  Unproven: the first line, and a refusal.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nr_auth.h"
#include "nr_bootstrap.h"
#include "nr_box_client.h"
#include "nr_progress.h"
#include "nr_rdv.h"
#include "nr_tcp.h"
#include "nr_util.h"
#include "proto/nr_text.h"
#include "proto/roce_hdr.h"

/* The first line's protocol name: a member of another version says so, not "malformed". */
#define NR_RDV_PROTO "netreduce/1"

static json_t *hello_json(const struct nr_comm *c)
{
	char mnonce[2 * NR_AUTH_MNONCE_BYTES + 1];

	nr_auth_hex(c->links[0].mnonce, NR_AUTH_MNONCE_BYTES, mnonce);
	return json_pack("{s:{s:i,s:i,s:i,s:i,s:s,s:b,s:i,s:b},s:o,s:s}", "hello", "rank", c->rank,
			 "world", c->world, "mtu", (int)c->cfg.mtu, "msg_size",
			 (int)c->cfg.msg_size, "transport", c->transport, "box", c->has_box,
			 "channels", (int)c->n_channels, "selective", c->selective, "peer",
			 nr_row_json(c, &c->peers[c->rank]), "nonce", mnonce);
}

/* --- lines that prove the job's secret (nr_auth.h) --- */

/* Where a connection's other end is (address in network order, port in host order). */
static void sock_end(int fd, bool peer, uint32_t *ip, uint16_t *port)
{
	struct sockaddr_in sa = { 0 };
	socklen_t len = sizeof(sa);

	if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&sa, &len) ||
	    sa.sin_family != AF_INET)
		sa = (struct sockaddr_in){ 0 };
	*ip = sa.sin_addr.s_addr;
	*port = ntohs(sa.sin_port);
}

/* --- rank 0: the gather --- */

#define HELLO_MAX (64 * 1024)   /* bytes of a hello line, at most (16 channels: ~4 KiB) */
#define PENDING_EXTRA 64        /* connections awaiting their hello, beyond the world */
#define BAD_ADDRS 4             /* addresses of wrong proofs named in the timeout */

/* A connection whose hello is not in yet. */
struct pending {
	int fd;
	uint32_t ip;
	uint16_t port;
	uint64_t by;                 /* its hello is due by then */
	char *buf;                   /* what came of it so far */
	size_t len;
};

/* What the gather saw besides the ranks it took, for its timeout's message. */
struct gather {
	struct pending *p;           /* in the order they came */
	int n, cap;
	int strays;                  /* connections that brought no hello of this job */
	char stray[160];             /* the last one's story */
	int refused;                 /* proven hellos of a wrong or duplicate rank */
	char refusal[160];
	int bad_proofs;              /* hellos without the right proof */
	uint32_t bad_ip[BAD_ADDRS];  /* their addresses, the first BAD_ADDRS */
	int n_bad_ip;
	bool more_bad_ips;           /* and others */
};

enum hello_verdict { HELLO_JOINED, HELLO_STRAY, HELLO_BAD_PROOF, HELLO_REFUSED };

/*
 * Rank 0: a hello (msg) of connection p.  HELLO_JOINED: rank *rank joined,
 * its row and connection taken.  Ignored, *why saying what it was:
 * HELLO_STRAY, not a well-formed hello, or one whose endpoint row claims
 * another address than the one it came from (members connect from the
 * address they claim, member_bootstrap); HELLO_BAD_PROOF, with a key, a hello
 * without its right proof (so nothing of it is believed); HELLO_REFUSED, a
 * proven hello of a rank rank 0 cannot take (out of range, or taken).  < 0:
 * a proven rank disagrees with rank 0's settings (an error every rank
 * reports).
 */
static int check_hello(struct nr_comm *c, json_t *msg, const struct pending *pc, int *rank,
		       char *why, size_t whylen)
{
	json_t *h = json_object_get(msg, "hello");
	int world, mtu, msg_size, box, channels, selective = 0;
	struct nr_link link = { .ip = pc->ip, .port = pc->port, .rx = 1 };
	struct nr_auth_ctx x;
	struct nr_peer p;
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	const char *tp;

	nr_ip4_str(pc->ip, a);
	if (json_unpack(h, "{s:i,s:i,s:i,s:i,s:s,s:b,s:i,s?b}", "rank", rank, "world", &world,
			"mtu", &mtu, "msg_size", &msg_size, "transport", &tp, "box", &box,
			"channels", &channels, "selective", &selective) ||
	    nr_row_parse(c, json_object_get(msg, "peer"), &p) ||
	    nr_auth_unhex(json_string_value(json_object_get(msg, "nonce")), link.mnonce,
			  NR_AUTH_MNONCE_BYTES)) {
		snprintf(why, whylen, "from %s: not a hello of this job", a);
		return HELLO_STRAY;
	}
	if (p.ip != pc->ip) {
		snprintf(why, whylen, "from %s: a hello for rank %d that claims address %s", a,
			 *rank, nr_ip4_str(p.ip, b));
		return HELLO_STRAY;
	}
	x = (struct nr_auth_ctx){ .nonce = c->nonce, .mnonce = link.mnonce, .ip = pc->ip,
				  .port = pc->port, .dir = 'm', .seq = 0 };
	if (c->auth.on && !nr_auth_verify(&c->auth, &x, msg)) {
		snprintf(why, whylen, "from %s: a hello for rank %d without the right proof of the "
			 "job's secret", a, *rank);
		return HELLO_BAD_PROOF;
	}
#define SAME(what, theirs, ours) \
	if ((theirs) != (ours)) \
		return nr_fail(c, NR_ERR_CONFIG, "rank %d (from %s) has " what " %d, rank 0 has %d: " \
			       "every rank must use the same", *rank, a, (int)(theirs), (int)(ours))
	SAME("world size (NR_WORLD)", world, c->world);
	if (mtu != (int)c->cfg.mtu)     /* each took the largest its interface carries? */
		return nr_fail(c, NR_ERR_CONFIG, "rank %d (from %s) has MTU (NR_MTU) %d, rank 0 has "
			       "%u: every rank must use the same (NR_MTU unset, each takes the largest "
			       "its interface carries: set NR_MTU=%d on every rank, or raise the "
			       "smaller interface's MTU)", *rank, a, mtu, c->cfg.mtu,
			       mtu < (int)c->cfg.mtu ? mtu : (int)c->cfg.mtu);
	SAME("message size (NR_MSG_SIZE)", msg_size, (int)c->cfg.msg_size);
	SAME("box setting (NR_BOX set)", box, c->has_box);
	SAME("box channels (NR_CHANNELS)", channels, (int)c->n_channels);
#undef SAME
	/* a go-back-N QP takes a selective NAK for an error, and the box job is one or the other */
	if (selective != (int)c->selective)
		return nr_fail(c, NR_ERR_CONFIG,
			       "rank %d (from %s) %s NR_SOFT_PROFILE=sr (selective "
			       "repeat), rank 0 %s: every rank must recover loss the same way",
			       *rank, a, selective ? "runs" : "does not run",
			       c->selective ? "does" : "does not");
	if (strcmp(tp, c->transport))
		return nr_fail(c, NR_ERR_CONFIG, "rank %d (from %s) uses transport %s, rank 0 uses %s",
			       *rank, a, tp, c->transport);
	/* a rank that cannot be taken is turned away; the job waits for the real one */
	if (*rank <= 0 || *rank >= c->world) {
		snprintf(why, whylen, "from %s: a hello for rank %d, of ranks 1..%d", a, *rank,
			 c->world - 1);
		return HELLO_REFUSED;
	}
	if (c->fds[*rank] >= 0) {
		snprintf(why, whylen, "from %s: a hello for rank %d, which %s holds already (two "
			 "ranks with NR_RANK=%d?)", a, *rank, nr_ip4_str(c->peers[*rank].ip, b), *rank);
		return HELLO_REFUSED;
	}
	c->peers[*rank] = p;
	c->links[*rank] = link;
	return HELLO_JOINED;
}

static int listen_root(struct nr_comm *c)
{
	char err[256];

	if (nr_tcp_listen(c->root, c->world, &c->lfd, err, sizeof(err)))
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank 0: cannot listen on %s (NR_ROOT): %s",
			       c->root, err);
	return 0;
}

static void pending_drop(struct gather *g, int i)
{
	close(g->p[i].fd);
	free(g->p[i].buf);
	memmove(&g->p[i], &g->p[i + 1], (size_t)(g->n - i - 1) * sizeof(g->p[0]));
	g->n--;
}

static void stray(struct gather *g, const char *fmt, uint32_t ip)
{
	char a[INET_ADDRSTRLEN];

	g->strays++;
	snprintf(g->stray, sizeof(g->stray), fmt, nr_ip4_str(ip, a));
}

/*
 * A connection's next bytes, never past its first newline (what follows
 * belongs to the lines after the hello).  1: the hello is whole in p->buf
 * (NUL-terminated, newline left out); 0: more to come; -1: closed, failed or
 * too long.
 */
static int pending_read(struct pending *p)
{
	char peek[4096], *nl, *nb;
	ssize_t n = recv(p->fd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT);
	size_t take;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	nl = memchr(peek, '\n', (size_t)n);
	take = nl ? (size_t)(nl - peek) + 1 : (size_t)n;
	if (p->len + take > HELLO_MAX)
		return -1;
	nb = realloc(p->buf, p->len + take + 1);
	if (!nb)
		return -1;
	p->buf = nb;
	if (recv(p->fd, p->buf + p->len, take, MSG_DONTWAIT) != (ssize_t)take)
		return -1;
	p->len += take;
	if (!nl)
		return 0;
	p->buf[--p->len] = '\0';
	return 1;
}

/* Tell a turned-away connection why (best effort), then close it. */
static void turn_away(struct gather *g, int i, const char *kind, const char *why)
{
	json_t *msg = json_pack("{s:b,s:s,s:s,s:i}", "ok", 0, "refused", kind, "error", why, "code",
				NR_ERR_BOOTSTRAP);
	char *s = msg ? json_dumps(msg, JSON_COMPACT) : NULL;

	if (s) {
		size_t len = strlen(s);

		s[len++] = '\n';
		if (send(g->p[i].fd, s, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len)
			shutdown(g->p[i].fd, SHUT_WR);
	}
	free(s);
	json_decref(msg);
	pending_drop(g, i);
}

/* Connection i's hello is whole: take its rank, or turn it away.  < 0: rank 0 fails. */
static int pending_hello(struct nr_comm *c, struct gather *g, int i, int *joined)
{
	struct pending *p = &g->p[i];
	json_t *msg = json_loads(p->buf, 0, NULL);
	char why[160];
	int rank = -1, v;

	if (!json_is_object(msg)) {
		json_decref(msg);
		stray(g, "from %s: not a hello of this job", p->ip);
		pending_drop(g, i);
		return 0;
	}
	v = check_hello(c, msg, p, &rank, why, sizeof(why));
	json_decref(msg);
	if (v < 0)
		return v;
	switch (v) {
	case HELLO_JOINED:
		c->fds[rank] = p->fd;
		p->fd = -1;
		free(p->buf);
		memmove(&g->p[i], &g->p[i + 1], (size_t)(g->n - i - 1) * sizeof(g->p[0]));
		g->n--;
		(*joined)++;
		return 0;
	case HELLO_STRAY:
		g->strays++;
		snprintf(g->stray, sizeof(g->stray), "%s", why);
		pending_drop(g, i);
		return 0;
	case HELLO_BAD_PROOF: {
		bool known = false;

		for (int k = 0; k < g->n_bad_ip; k++)
			known |= g->bad_ip[k] == p->ip;
		if (!known && g->n_bad_ip < BAD_ADDRS)
			g->bad_ip[g->n_bad_ip++] = p->ip;
		else if (!known)
			g->more_bad_ips = true;
		g->bad_proofs++;
		turn_away(g, i, "proof", why);
		return 0;
	}
	default:
		g->refused++;
		snprintf(g->refusal, sizeof(g->refusal), "%s", why);
		turn_away(g, i, "rank", why);
		return 0;
	}
}

/* The first line rank 0 sends on every connection: the nonce, whether lines carry proofs. */
static char *challenge(const struct nr_comm *c)
{
	char nonce[2 * NR_AUTH_NONCE_BYTES + 1], *s;
	json_t *msg;

	nr_auth_hex(c->nonce, NR_AUTH_NONCE_BYTES, nonce);
	msg = json_pack("{s:s,s:s,s:b}", "rendezvous", NR_RDV_PROTO, "nonce", nonce, "auth",
			c->auth.on);
	s = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	json_decref(msg);
	return s;
}

/* Accept a connection, send it the challenge, wait for its hello until `by`. */
static void pending_accept(struct nr_comm *c, struct gather *g, const char *chal, uint64_t by)
{
	struct pending p = { .by = by };
	size_t len = strlen(chal);

	p.fd = nr_tcp_accept(c->lfd);
	if (p.fd < 0)
		return;
	sock_end(p.fd, true, &p.ip, &p.port);
	if (g->n == g->cap) {   /* the oldest makes room: a member says hello at once */
		stray(g, "from %s: no hello before newer connections filled the table", g->p[0].ip);
		pending_drop(g, 0);
	}
	/* the challenge and its newline: a fresh socket's buffer takes it whole */
	if (send(p.fd, chal, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len ||
	    send(p.fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1) {
		stray(g, "from %s: gone before its hello", p.ip);
		close(p.fd);
		return;
	}
	g->p[g->n++] = p;
}

/* "rank 3 missing", "ranks 1, 2, 5 missing", "ranks 1, 2, ... missing (40 in all)" */
static void missing_ranks(const struct nr_comm *c, char *buf, size_t len)
{
	int n = 0, shown = 0;
	size_t k = 0;

	for (int r = 1; r < c->world; r++)
		n += c->fds[r] < 0;
	k += (size_t)snprintf(buf, len, "rank%s ", n > 1 ? "s" : "");
	for (int r = 1; r < c->world && k < len; r++) {
		if (c->fds[r] >= 0)
			continue;
		if (shown == 8) {
			k += (size_t)snprintf(buf + k, len - k, ", ...");
			break;
		}
		k += (size_t)snprintf(buf + k, len - k, "%s%d", shown ? ", " : "", r);
		shown++;
	}
	if (k < len)
		k += (size_t)snprintf(buf + k, len - k, " missing");
	if (n > shown && k < len)
		snprintf(buf + k, len - k, " (%d in all)", n);
}

static int gather_timeout(struct nr_comm *c, const struct gather *g, int joined)
{
	char missing[96], bad[160] = "", refused[200] = "", strays[256] = "";

	missing_ranks(c, missing, sizeof(missing));
	if (g->bad_proofs) {
		size_t k = (size_t)snprintf(bad, sizeof(bad), "; %d hello%s without the right proof "
					    "of the job's secret (%s), from ", g->bad_proofs,
					    g->bad_proofs > 1 ? "s" : "", c->auth.src);

		for (int i = 0; i < g->n_bad_ip && k < sizeof(bad); i++)
			k += (size_t)snprintf(bad + k, sizeof(bad) - k, "%s%s", i ? ", " : "",
					      nr_ip4_str(g->bad_ip[i], (char[INET_ADDRSTRLEN]){ 0 }));
		if (k < sizeof(bad))
			snprintf(bad + k, sizeof(bad) - k, "%s: every rank needs the same secret",
				 g->more_bad_ips ? ", ..." : "");
	}
	if (g->refused)
		snprintf(refused, sizeof(refused), "; refused %d hello%s, the last %s", g->refused,
			 g->refused > 1 ? "s" : "", g->refusal);
	if (g->strays)
		snprintf(strays, sizeof(strays), "; ignored stray connections, the last %s (a "
			 "member connects from its NR_ADDR)", g->stray);
	return nr_fail(c, NR_ERR_TIMEOUT, "rank 0: only %d of %d ranks joined at %s within %u ms "
		       "(NR_BOOTSTRAP_TIMEOUT_MS; %s)%s%s%s", joined, c->world, c->root,
		       c->cfg.bootstrap_timeout_ms, missing, bad, refused, strays);
}

/*
 * Every member's hello, within the bootstrap timeout.  Connections are
 * served side by side: each gets the challenge at once and has the progress
 * timeout (NR_TIMEOUT_MS) for its hello, so a silent or trickling one holds
 * nothing up; what is not a hello of a rank this job lacks, proven when there
 * is a key, is turned away and the gather goes on.  Only a proven rank with
 * other settings than rank 0's fails it before the timeout.
 */
static int root_gather(struct nr_comm *c)
{
	uint64_t deadline = nr_now_ms() + c->cfg.bootstrap_timeout_ms;
	struct gather g = { .cap = c->world + PENDING_EXTRA };
	struct pollfd *pfd;
	char *chal = challenge(c);
	int joined = 1, rc = 0;

	g.p = calloc((size_t)g.cap, sizeof(*g.p));
	pfd = calloc((size_t)g.cap + 1, sizeof(*pfd));
	if (!chal || !g.p || !pfd) {
		free(chal);
		free(g.p);
		free(pfd);
		return nr_fail(c, NR_ERR_NOMEM, "rank 0: out of memory for the rendezvous");
	}
	while (joined < c->world && !rc) {
		uint64_t now = nr_now_ms(), wake = deadline;
		int ready, n;

		if (now >= deadline) {
			rc = gather_timeout(c, &g, joined);
			break;
		}
		/* hellos overdue: their connections go */
		for (int i = 0; i < g.n;) {
			if (g.p[i].by <= now) {
				stray(&g, "from %s: no hello within NR_TIMEOUT_MS", g.p[i].ip);
				pending_drop(&g, i);
				continue;
			}
			wake = g.p[i].by < wake ? g.p[i].by : wake;
			i++;
		}
		pfd[0] = (struct pollfd){ .fd = c->lfd, .events = POLLIN };
		for (int i = 0; i < g.n; i++)
			pfd[1 + i] = (struct pollfd){ .fd = g.p[i].fd, .events = POLLIN };
		n = g.n;
		ready = poll(pfd, (nfds_t)n + 1, (int)(wake - now));
		if (ready <= 0)
			continue;   /* a signal, or a time to look at again */
		/* from the newest, so that a connection dropped leaves the indices below alone */
		for (int i = n - 1; i >= 0 && !rc; i--) {
			int got;

			if (!(pfd[1 + i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = pending_read(&g.p[i]);
			if (got < 0) {
				stray(&g, "from %s: closed or broke off before a whole hello", g.p[i].ip);
				pending_drop(&g, i);
			} else if (got > 0) {
				rc = pending_hello(c, &g, i, &joined);
			}
		}
		if (!rc && (pfd[0].revents & POLLIN)) {
			uint64_t by = nr_now_ms() + c->cfg.timeout_ms;

			pending_accept(c, &g, chal, by < deadline ? by : deadline);
		}
	}
	while (g.n)
		pending_drop(&g, g.n - 1);
	free(chal);
	free(g.p);
	free(pfd);
	return rc;
}

/* Said once a process: a rank 0 without a secret admits whoever reaches it first. */
static void say_unauthenticated(const struct nr_comm *c)
{
	static bool said;

	if (__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "netreduce: rank 0: the rendezvous at %s is unauthenticated (neither "
		"NR_JOB_SECRET nor NR_TOKEN is set): any host that reaches it may join as a rank "
		"that has not come yet; set NR_JOB_SECRET on every rank (docs/trust.md)\n", c->root);
}

static int root_bootstrap(struct nr_comm *c)
{
	json_t *peers, *msg;
	int rc;

	if (!c->auth.on)
		say_unauthenticated(c);
	rc = nr_auth_random(c->nonce, sizeof(c->nonce));
	if (rc)
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank 0: no random nonce for the rendezvous: %s",
			       strerror(-rc));
	rc = listen_root(c);
	if (!rc)
		rc = root_gather(c);
	if (!rc && c->has_box)
		rc = nr_box_job_create(c, NR_ELEM_FP32);
	if (rc) {
		msg = json_pack("{s:b,s:s,s:i}", "ok", 0, "error", c->err, "code", rc);
		nr_rdv_broadcast(c, msg);
		json_decref(msg);
		return rc;
	}
	peers = json_array();
	for (int r = 0; r < c->world; r++)
		json_array_append_new(peers, nr_row_json(c, &c->peers[r]));
	msg = nr_box_word_json(c, NR_ELEM_FP32);
	json_object_set_new(msg, "peers", peers);
	nr_rdv_broadcast(c, msg);
	json_decref(msg);
	return 0;
}

/* Rank 0's first line: its nonce, and whether it asks for proofs (as this rank must). */
static int member_challenge(struct nr_comm *c)
{
	char err[256];
	json_t *msg;
	const char *proto = NULL, *nonce = NULL;
	int auth = 0;

	if (nr_recv_json_line(c->fds[0], nr_now_ms() + c->cfg.bootstrap_timeout_ms, (void **)&msg,
			      err, sizeof(err), NULL, NULL))
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: rendezvous %s (NR_ROOT): waiting for "
			       "rank 0's first line: %s", c->rank, c->root, err);
	if (json_unpack(msg, "{s:s,s:s,s:b}", "rendezvous", &proto, "nonce", &nonce, "auth",
			&auth) || strcmp(proto, NR_RDV_PROTO) ||
	    nr_auth_unhex(nonce, c->nonce, NR_AUTH_NONCE_BYTES)) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: what answers at %s (NR_ROOT) does not "
			       "open a rendezvous of this netreduce (%s): is it rank 0 of this job, "
			       "of the same library version?", c->rank, c->root, NR_RDV_PROTO);
	}
	json_decref(msg);
	if (auth && !c->auth.on)
		return nr_fail(c, NR_ERR_CONFIG, "rank %d: rank 0 (%s) asks every hello to prove the "
			       "job's secret, and this rank has none: set the same NR_JOB_SECRET "
			       "(or NR_TOKEN) on every rank", c->rank, c->root);
	if (!auth && c->auth.on)
		return nr_fail(c, NR_ERR_CONFIG, "rank %d: rank 0 (%s) runs its rendezvous without a "
			       "secret, and this rank has one (%s): refused, since what answers at "
			       "NR_ROOT without proving it may be anyone; set the same secret on every "
			       "rank", c->rank, c->root, c->auth.src);
	return 0;
}

/*
 * A member's reply to its hello without its proof: rank 0 turned the hello
 * away (a wrong proof, a wrong or taken rank), or the table is forged.
 */
static int member_unproven(struct nr_comm *c, json_t *msg)
{
	const char *kind = json_string_value(json_object_get(msg, "refused"));
	const char *why = json_string_value(json_object_get(msg, "error"));

	if (kind && !strcmp(kind, "proof"))
		return nr_fail(c, NR_ERR_CONFIG, "rank %d: rank 0 (%s) turned this rank's hello away: "
			       "its proof of the job's secret is not the one rank 0's secret makes; "
			       "this rank's secret is %s: every rank needs the same", c->rank,
			       c->root, c->auth.src);
	if (kind)
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: rank 0 (%s) turned this rank's hello "
			       "away: %s", c->rank, c->root, why ? why : "(no reason given)");
	return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: the endpoint table from %s (NR_ROOT) does not "
		       "prove the job's secret (this rank's: %s): refused, as a forged table, or one "
		       "of a rank 0 with another secret", c->rank, c->root, c->auth.src);
}

static int member_bootstrap(struct nr_comm *c)
{
	struct nr_auth_ctx x;
	char err[256];
	json_t *msg, *peers;
	int ok, fd;

	/* from the address our hello claims: rank 0 takes no hello from elsewhere */
	if (nr_tcp_connect_from(c->root, c->peers[c->rank].ip, c->cfg.bootstrap_timeout_ms, &fd, err,
				sizeof(err)))
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: rendezvous with rank 0 (NR_ROOT): %s",
			       c->rank, err);
	c->fds[0] = fd;
	sock_end(fd, false, &c->links[0].ip, &c->links[0].port);
	ok = member_challenge(c);
	if (ok)
		return ok;
	ok = nr_auth_random(c->links[0].mnonce, NR_AUTH_MNONCE_BYTES);
	if (ok)
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: no random nonce: %s", c->rank,
			       strerror(-ok));
	msg = hello_json(c);
	ok = nr_link_send(c, 0, msg, err, sizeof(err));
	json_decref(msg);
	if (ok)
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: rendezvous %s: %s", c->rank, c->root, err);
	/* rank 0 may wait bootstrap_timeout_ms for late ranks, then for the box */
	if (nr_recv_json_line(fd, nr_now_ms() + c->cfg.bootstrap_timeout_ms +
				      2ull * c->cfg.timeout_ms, (void **)&msg,
			      err, sizeof(err), NULL, NULL))
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: waiting for the endpoint table from "
			       "rank 0 (%s): %s", c->rank, c->root, err);
	nr_link_ctx(c, 0, 'r', 0, &x);
	if ((c->auth.on && !nr_auth_verify(&c->auth, &x, msg)) ||
	    (!c->auth.on && json_object_get(msg, "refused"))) {
		ok = member_unproven(c, msg);
		json_decref(msg);
		return ok;
	}
	c->links[0].rx = 1;
	if ((ok = nr_rdv_reply_ok(c, msg)))
		return ok;
	peers = json_object_get(msg, "peers");
	if (nr_box_word_parse(c, NR_ELEM_FP32, msg) || json_array_size(peers) != (size_t)c->world) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed endpoint table%s", c->rank,
			       c->n_boxes > 1 ? " (does every rank have the same NR_BOX list?)" : "");
	}
	for (int r = 0; r < c->world; r++) {
		if (r != c->rank && nr_row_parse(c, json_array_get(peers, r), &c->peers[r])) {
			json_decref(msg);
			return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed row %d", c->rank, r);
		}
	}
	json_decref(msg);
	return 0;
}

int nr_bootstrap(struct nr_comm *c)
{
	return c->rank == 0 ? root_bootstrap(c) : member_bootstrap(c);
}

void nr_bootstrap_close(struct nr_comm *c)
{
	if (c->fds)
		for (int r = 0; r < c->world; r++)
			if (c->fds[r] >= 0)
				close(c->fds[r]);
	if (c->lfd >= 0)
		close(c->lfd);
}
