/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_rendezvous: the hosts' TCP rendezvous (host/collective/nr_bootstrap.c)
 * driven through its sockets on 127.0.93.0/24, both sides.  The code under
 * test is the real one: nr_flat_init(tcp_only), the rendezvous of a layout
 * (every rank's address, barriers, no transport), in a thread.
 *
 * byte 0 bit 0 clear: rank 0 under test.  World 2..4 (bits 1-2), one rank
 *   left out (bits 3-4; 0: none, then rank 0 must time out naming it), up to
 *   two connections of the fuzzer's (bits 5-6), each [ctl][len: 2 bytes]
 *   [bytes]: ctl bits 0-1 where it connects from (a stray address of its
 *   own, rank 1's address, rank 1 + k's, rank 0's), bits 2-3 before which
 *   genuine rank, bit 4 a newline added.  "$A" in the bytes becomes the
 *   address it connects from, "$P" a well-formed endpoint row claiming it.
 *   The genuine ranks, written here, connect from their own addresses and
 *   send a hello and the two barrier lines rank 0 will wait for.  Bit 7: a
 *   signal interrupts rank 0's thread 20 ms after the last connection.
 * byte 0 bit 0 set: a member under test (world bits 1-2, rank bits 3-4).  It
 *   connects to a listener of this target, which reads its hello and answers
 *   with the fuzzer's bytes: the endpoint table, then whatever follows (the
 *   barrier's "go").
 *
 * Invariants (a violation traps):
 *   - rank 0 keeps a rank's row only from a connection coming from the
 *     address the row claims; a connection whose hello does not claim the
 *     address it comes from (a stray) never aborts the gather nor takes a
 *     place: with only strays besides the genuine ranks, rank 0 succeeds with
 *     exactly the genuine rows, or, with a rank left out, fails with
 *     NR_ERR_TIMEOUT naming that rank.  Why: any host may connect to rank 0's
 *     port; a stray that could abort or join the job is a way to stop or
 *     hijack every rank's ring.
 *   - an error of rank 0's that blames a hello names the address it came
 *     from.  Why: it is what the operator has to find the host by.
 *   - a member succeeds only on a well-formed table: "ok" true, integer
 *     credits and result_key (32 bits), a row for every rank, every row but
 *     its own with an IPv4 address, a string MAC, one box endpoint and the
 *     plain one, each with send and receive QPs of 24-bit QPN and PSN and
 *     16-bit ports, a VA >= 0 and a 32-bit rkey; and then its rows are
 *     exactly the table's.  On a well-formed table followed by a barrier
 *     reply it succeeds.  Its hello claims the address it connects from.
 *     Why: the rows become the QPs' peers; a value cut to fit would connect a
 *     ring to the wrong QP or port without any error.
 *   - rank 0 ends within its timeouts, signals or not.  Why: a rank that
 *     never joins must be named, not wait for forever.
 *   - no crash, no hang past the timeouts, no fd or memory leak.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "host/collective/comm_internal.h"
#include "host/collective/nr_comm.h"
#include "host/collective/nr_tcp.h"

#include "nrz_fuzz.h"
#include "nrz_net.h"

#define NRZ_WORLD_MAX 4
#define NRZ_FUZZ_CONNS 2
#define NRZ_BOOT_MS 3000          /* no input waits this long unless a rank is left out */
#define NRZ_LEFT_OUT_MS 40        /* rank 0's wait for a rank left out */
#define NRZ_WAIT_MS 5000

/* 127.0.93.h: 1 the listening address, 10 rank 0, 11 + r rank r, 100 + k strays */
static uint32_t host_ip(unsigned h)
{
	return htonl(0x7F005D00u | h);
}

static const char *host_str(unsigned h, char *buf)
{
	snprintf(buf, 16, "127.0.93.%u", h);
	return buf;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- kept for the run: rank 0's port, the listener members connect to ------------- */

static int root_port_keeper = -1, member_lfd = -1;
static char root_addr[32], member_root_addr[32];

static void on_signal(int sig)
{
	(void)sig;
}

static void statics_init(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = host_ip(1) };
	/* no SA_RESTART: the interrupted call returns EINTR, as poll() always does */
	struct sigaction sa = { .sa_handler = on_signal };
	socklen_t l = sizeof(a);
	int one = 1;

	if (root_port_keeper >= 0)
		return;
	sigemptyset(&sa.sa_mask);
	NRZ_CHECK(!sigaction(SIGUSR2, &sa, NULL), "sigaction");
	/*
	 * Bound with SO_REUSEADDR and never listening, it keeps the port ours:
	 * every input's rank 0 listens on it again (nr_tcp_listen sets
	 * SO_REUSEADDR too) past the TIME_WAITs of the last one.
	 */
	root_port_keeper = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	NRZ_CHECK(root_port_keeper >= 0 &&
		  !setsockopt(root_port_keeper, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) &&
		  !bind(root_port_keeper, (struct sockaddr *)&a, sizeof(a)) &&
		  !getsockname(root_port_keeper, (struct sockaddr *)&a, &l),
		  "keep a port on 127.0.93.1: %s", strerror(errno));
	snprintf(root_addr, sizeof(root_addr), "127.0.93.1:%u", ntohs(a.sin_port));

	a.sin_port = 0;
	member_lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	NRZ_CHECK(member_lfd >= 0 && !bind(member_lfd, (struct sockaddr *)&a, sizeof(a)) &&
		  !listen(member_lfd, 8) && !getsockname(member_lfd, (struct sockaddr *)&a, &l),
		  "listen on 127.0.93.1: %s", strerror(errno));
	snprintf(member_root_addr, sizeof(member_root_addr), "127.0.93.1:%u", ntohs(a.sin_port));
}

/* ---- the code under test, in a thread ---------------------------------------------- */

struct run {
	int rank, world;
	const char *root;
	uint32_t boot_ms;
	pthread_t th;
	/* results */
	int rc;
	char err[NR_ERRLEN];
	struct nr_peer peers[NRZ_WORLD_MAX];
	uint32_t from[NRZ_WORLD_MAX];    /* rank 0: where each rank's connection comes from */
	uint32_t credits, result_key;
	bool done;
};

static void *run_main(void *arg)
{
	struct run *u = arg;
	struct nr_config cfg;
	struct nr_comm *c;
	char addr[16];

	nr_config_default(&cfg);
	cfg.rank = u->rank;
	cfg.world = u->world;
	cfg.root = u->root;
	cfg.addr = host_str(u->rank ? 11 + (unsigned)u->rank : 10, addr);
	cfg.timeout_ms = 2000;
	cfg.bootstrap_timeout_ms = u->boot_ms;
	cfg.mtu = 1024;          /* the genuine hellos' (genuine_lines), not lo's 4096 */
	u->rc = nr_flat_init(&cfg, true, &c);
	if (u->rc) {
		snprintf(u->err, sizeof(u->err), "%s", nr_comm_last_error(NULL));
	} else {
		for (int r = 0; r < u->world; r++) {
			u->peers[r] = c->peers[r];
			u->from[r] = u->rank == 0 && r ? nr_tcp_peer_ip(c->fds[r]) : 0;
		}
		u->credits = c->box[NR_ELEM_FP32].credits;
		u->result_key = c->box[NR_ELEM_FP32].result_key;
		nr_flat_destroy(c);
	}
	__atomic_store_n(&u->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void run_start(struct run *u)
{
	NRZ_CHECK(!pthread_create(&u->th, NULL, run_main, u), "pthread_create");
}

static bool run_done(struct run *u)
{
	return __atomic_load_n(&u->done, __ATOMIC_ACQUIRE);
}

/* ---- sockets of this side ---------------------------------------------------------- */

/*
 * Connect from host h to addr, retrying while it does not listen yet; -1
 * when it listens no more (u is done, or *seen: an earlier connect got in).
 */
static int connect_from(unsigned h, const char *addr, struct run *u, bool *seen)
{
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = host_ip(h) };
	struct sockaddr_in to = { .sin_family = AF_INET };
	uint64_t end = now_ms() + NRZ_WAIT_MS;
	uint16_t port;
	int one = 1;

	NRZ_CHECK(!nr_parse_hostport(addr, &to.sin_addr.s_addr, &port), "address %s", addr);
	to.sin_port = htons(port);
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		/* the port is chosen at connect, by the 4-tuple: thousands of
		 * inputs a minute do not run out of ports on one address */
		NRZ_CHECK(fd >= 0 && !setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
						 sizeof(one)) &&
			  !bind(fd, (struct sockaddr *)&me, sizeof(me)), "socket from 127.0.93.%u: %s",
			  h, strerror(errno));
		if (!nrz_connect(fd, (struct sockaddr *)&to, sizeof(to))) {
			*seen = true;
			return fd;
		}
		NRZ_CHECK(errno == ECONNREFUSED, "connect to %s: %s", addr, strerror(errno));
		close(fd);
		if (run_done(u) || *seen)
			return -1;      /* rank 0 is past its gather */
		NRZ_CHECK(now_ms() < end, "rank 0 never listened on %s", addr);
		usleep(200);
	}
}

/* ---- rows and hellos ------------------------------------------------------------ */

/* A well-formed endpoint row of host h (its QPs numbered after h). */
static void row_text(unsigned h, char *buf, size_t len)
{
	char ip[16];

	snprintf(buf, len, "{\"ip\":\"%s\",\"mac\":\"02:00:00:00:5d:%02x\",\"box\":[{\"send\":"
		 "{\"qpn\":%u,\"psn\":%u,\"port\":4791,\"sport\":%u},\"recv\":{\"qpn\":%u,\"psn\":%u,"
		 "\"port\":4791,\"sport\":%u},\"va\":%u,\"rkey\":%u}],\"plain\":{\"send\":{\"qpn\":%u,"
		 "\"psn\":%u,\"port\":4791,\"sport\":%u},\"recv\":{\"qpn\":%u,\"psn\":%u,\"port\":4791,"
		 "\"sport\":%u},\"va\":%u,\"rkey\":%u}}", host_str(h, ip), h, 0x100 + h, 1000 * h,
		 49152 + h, 0x200 + h, 2000 * h, 50000 + h, 4096 * h, 0x10000 + h, 0x300 + h,
		 3000 * h, 51000 + h, 0x400 + h, 4000 * h, 52000 + h, 8192 * h, 0x20000 + h);
}

/* The peer struct row_text(h) describes (MAC aside). */
static void row_want(unsigned h, struct nr_peer *p)
{
	uint32_t ip = host_ip(h);

	memset(p, 0, sizeof(*p));
	p->ip = ip;
	p->send[NR_RING_BOX] = (struct nr_qp_info){ .ip = ip, .qpn = 0x100 + h, .psn = 1000 * h,
						    .udp_port = 4791, .sport = 49152 + h };
	p->recv[NR_RING_BOX] = (struct nr_qp_info){ .ip = ip, .qpn = 0x200 + h, .psn = 2000 * h,
						    .udp_port = 4791, .sport = 50000 + h };
	p->va[NR_RING_BOX] = 4096 * h;
	p->rkey[NR_RING_BOX] = 0x10000 + h;
	p->send[NR_RING_PLAIN] = (struct nr_qp_info){ .ip = ip, .qpn = 0x300 + h, .psn = 3000 * h,
						      .udp_port = 4791, .sport = 51000 + h };
	p->recv[NR_RING_PLAIN] = (struct nr_qp_info){ .ip = ip, .qpn = 0x400 + h, .psn = 4000 * h,
						      .udp_port = 4791, .sport = 52000 + h };
	p->va[NR_RING_PLAIN] = 8192 * h;
	p->rkey[NR_RING_PLAIN] = 0x20000 + h;
}

static bool same_qp(const struct nr_qp_info *a, const struct nr_qp_info *b)
{
	return a->ip == b->ip && a->qpn == b->qpn && a->psn == b->psn &&
	       a->udp_port == b->udp_port && a->sport == b->sport;
}

static bool same_row(const struct nr_peer *a, const struct nr_peer *b)
{
	for (int i = NR_RING_PLAIN; i <= NR_RING_BOX; i++)
		if (!same_qp(&a->send[i], &b->send[i]) || !same_qp(&a->recv[i], &b->recv[i]) ||
		    a->va[i] != b->va[i] || a->rkey[i] != b->rkey[i])
			return false;
	return a->ip == b->ip;
}

/* ---- rank 0 under test ------------------------------------------------------------- */

struct fuzz_conn {
	unsigned from;           /* host */
	unsigned before;         /* connects before genuine rank `before` */
	char *bytes;
	size_t n;
	bool claims_own;         /* its first line claims the address it comes from */
};

/* Expand $A (our address) and $P (a well-formed row claiming it). */
static char *expand(const uint8_t *p, size_t n, unsigned h, size_t *outlen)
{
	char row[1024], ip[16];
	size_t cap = n * 700 + 2, k = 0;
	char *out = malloc(cap);

	NRZ_CHECK(out != NULL, "malloc");
	row_text(h, row, sizeof(row));
	host_str(h, ip);
	for (size_t i = 0; i < n; i++) {
		const char *sub = i + 1 < n && p[i] == '$' ? p[i + 1] == 'A' ? ip :
				  p[i + 1] == 'P' ? row : NULL : NULL;

		if (sub) {
			memcpy(out + k, sub, strlen(sub));
			k += strlen(sub);
			i++;
		} else {
			out[k++] = (char)p[i];
		}
	}
	*outlen = k;
	return out;
}

/* Does the first line (if there is a whole one) claim the address of host h? */
static bool line_claims(const char *p, size_t n, unsigned h)
{
	const char *nl = memchr(p, '\n', n);
	json_t *msg, *peer;
	const char *ip;
	struct in_addr a;
	bool yes;

	if (!nl)
		return false;
	msg = json_loadb(p, (size_t)(nl - p), 0, NULL);
	peer = json_object_get(msg, "peer");
	ip = json_string_value(json_object_get(peer, "ip"));
	yes = ip && inet_pton(AF_INET, ip, &a) == 1 && a.s_addr == host_ip(h);
	json_decref(msg);
	return yes;
}

static void genuine_lines(unsigned r, int world, char *buf, size_t len)
{
	char row[1024];

	row_text(11 + r, row, sizeof(row));
	snprintf(buf, len, "{\"hello\":{\"rank\":%u,\"world\":%d,\"mtu\":1024,\"msg_size\":65536,"
		 "\"transport\":\"soft\",\"box\":false,\"channels\":1},\"peer\":%s}\n"
		 "{\"barrier\":\"layout\"}\n{\"barrier\":\"destroy\"}\n", r, world, row);
}

/*
 * Rank 0 failed on a hello claiming a rank it cannot take: its message names
 * the address that hello came from (one of the fuzzer's connections).
 */
static void check_blame(const struct run *u, const struct fuzz_conn *f, unsigned nf)
{
	const char *at = strstr(u->err, " claims rank "), *p = at;
	char ip[INET_ADDRSTRLEN] = "";
	struct in_addr a;
	bool known = false;

	if (!at)
		return;
	while (p > u->err && p[-1] != ' ')
		p--;
	if (at - p < (ptrdiff_t)sizeof(ip))
		memcpy(ip, p, (size_t)(at - p));
	for (unsigned k = 0; k < nf; k++)
		known |= inet_pton(AF_INET, ip, &a) == 1 && a.s_addr == host_ip(f[k].from);
	NRZ_CHECK(known, "rank 0's error does not name the connection it blames: %s", u->err);
}

static void fuzz_root(struct nrz_in *in, uint8_t b0)
{
	struct run u = { .rank = 0, .world = 2 + (b0 >> 1 & 3) % 3, .root = root_addr };
	unsigned left_out = b0 >> 3 & 3, nf = (b0 >> 5 & 3) % (NRZ_FUZZ_CONNS + 1);
	struct fuzz_conn f[NRZ_FUZZ_CONNS] = { 0 };
	int fds[NRZ_WORLD_MAX + NRZ_FUZZ_CONNS], nfds = 0;
	bool any_claim = false, seen = false;
	char line[4096];

	if (left_out >= (unsigned)u.world)
		left_out = 0;
	u.boot_ms = left_out ? NRZ_LEFT_OUT_MS : NRZ_BOOT_MS;
	for (unsigned k = 0; k < nf; k++) {
		uint8_t ctl = nrz_u8(in);
		size_t n = nrz_u16(in) % 2048;
		uint8_t raw[2048];

		for (size_t i = 0; i < n; i++)
			raw[i] = nrz_u8(in);
		/* a stray address, rank 1's, rank (k + 1)'s (of 1..world-1), rank 0's */
		f[k].from = (ctl & 3) == 0 ? 100 + k : (ctl & 3) == 1 ? 12 :
			    (ctl & 3) == 2 ? 12 + k % (unsigned)(u.world - 1) : 10;
		f[k].before = 1 + (ctl >> 2 & 3);
		f[k].bytes = expand(raw, n, f[k].from, &f[k].n);
		if (ctl & 16)
			f[k].bytes[f[k].n++] = '\n';
		f[k].claims_own = line_claims(f[k].bytes, f[k].n, f[k].from);
		any_claim |= f[k].claims_own;
	}

	run_start(&u);
	/* genuine ranks 1..world-1 in order, the fuzzer's connections among them */
	for (unsigned r = 1; r <= (unsigned)u.world; r++) {
		for (unsigned k = 0; k < nf; k++) {
			int fd;

			if (f[k].before != r && !(r == (unsigned)u.world && f[k].before > r))
				continue;
			fd = connect_from(f[k].from, root_addr, &u, &seen);
			if (fd < 0)
				continue;
			nrz_send_all(fd, f[k].bytes, f[k].n, 0);   /* closed: it got what it read */
			shutdown(fd, SHUT_WR);
			fds[nfds++] = fd;
		}
		if (r == (unsigned)u.world || r == left_out)
			continue;
		int fd = connect_from(11 + r, root_addr, &u, &seen);

		if (fd < 0)
			continue;
		genuine_lines(r, u.world, line, sizeof(line));
		nrz_send_all(fd, line, strlen(line), 0);
		shutdown(fd, SHUT_WR);
		fds[nfds++] = fd;
	}
	/*
	 * Interrupted or not, rank 0 ends within its timeouts: one signal half
	 * way through a left-out rank's wait, when it waits for connections.
	 */
	for (uint64_t t0 = now_ms(), t = t0, sent = 0; (b0 & 128) && !run_done(&u); t = now_ms()) {
		NRZ_CHECK(t < t0 + NRZ_WAIT_MS, "rank 0 still runs %u ms after the last "
			  "connection, its bootstrap timeout %u ms", NRZ_WAIT_MS, u.boot_ms);
		if (!sent && t >= t0 + NRZ_LEFT_OUT_MS / 2)
			sent = !pthread_kill(u.th, SIGUSR2);
		usleep(1000);
	}
	pthread_join(u.th, NULL);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	for (unsigned k = 0; k < nf; k++)
		free(f[k].bytes);

	if (!u.rc) {
		for (int r = 1; r < u.world; r++) {
			struct nr_peer want;
			char a[16], b[16];

			NRZ_CHECK(u.peers[r].ip == u.from[r], "rank 0 took rank %d's row claiming %s "
				  "from a connection of %s", r, inet_ntop(AF_INET, &u.peers[r].ip, a, 16),
				  inet_ntop(AF_INET, &u.from[r], b, 16));
			if (any_claim)
				continue;
			row_want(11 + (unsigned)r, &want);
			NRZ_CHECK(same_row(&u.peers[r], &want), "rank %d's row is not the one it sent", r);
		}
		NRZ_CHECK(any_claim || !left_out, "rank 0 completed without rank %u", left_out);
		return;
	}
	/* a failure: only a connection claiming its own address may cause one, or a rank left out */
	if (any_claim) {
		check_blame(&u, f, nf);
		return;
	}
	NRZ_CHECK(left_out, "rank 0 failed with only strays besides the ranks: %d %s", u.rc, u.err);
	NRZ_CHECK(u.rc == NR_ERR_TIMEOUT, "rank 0 failed but did not time out: %d %s", u.rc, u.err);
	int joined = 0, world = 0, missing = -1;
	const char *m = strstr(u.err, "missing)");

	NRZ_CHECK(sscanf(u.err, "rank 0: only %d of %d ranks joined", &joined, &world) == 2 && m,
		  "rank 0's timeout does not say who is missing: %s", u.err);
	while (m > u.err && m[-1] != '(' && m[-1] != ';')
		m--;
	NRZ_CHECK(sscanf(m, " rank %d missing", &missing) == 1 && missing >= 1 && missing < u.world,
		  "rank 0's timeout names no rank: %s", u.err);
	/* on a loaded machine a genuine rank may come after the deadline too */
	NRZ_CHECK(joined != u.world - 1 || missing == (int)left_out,
		  "rank 0 timed out naming rank %d, rank %u was left out: %s", missing, left_out, u.err);
}

/* ---- a member under test ------------------------------------------------------------ */

static bool int_in(json_t *o, const char *key, json_int_t lo, json_int_t hi, json_int_t *v)
{
	json_t *x = json_object_get(o, key);

	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
		return false;
	*v = json_integer_value(x);
	return true;
}

static bool qp_ok(json_t *q, uint32_t ip, struct nr_qp_info *out)
{
	json_int_t qpn, psn, port, sport;

	if (!json_is_object(q) || !int_in(q, "qpn", 0, 0xFFFFFF, &qpn) ||
	    !int_in(q, "psn", 0, 0xFFFFFF, &psn) || !int_in(q, "port", 0, 65535, &port) ||
	    !int_in(q, "sport", 0, 65535, &sport))
		return false;
	*out = (struct nr_qp_info){ .ip = ip, .qpn = (uint32_t)qpn, .psn = (uint32_t)psn,
				    .udp_port = (uint16_t)port, .sport = (uint16_t)sport };
	return true;
}

static bool ep_ok(json_t *ep, struct nr_peer *p, int i)
{
	json_int_t va, rkey;

	if (!json_is_object(ep) || !qp_ok(json_object_get(ep, "send"), p->ip, &p->send[i]) ||
	    !qp_ok(json_object_get(ep, "recv"), p->ip, &p->recv[i]) ||
	    !int_in(ep, "va", 0, INT64_MAX, &va) || !int_in(ep, "rkey", 0, UINT32_MAX, &rkey))
		return false;
	p->va[i] = (uint64_t)va;
	p->rkey[i] = (uint32_t)rkey;
	return true;
}

/* The table as PROTOCOL of nr_bootstrap.c has it, checked here on its own terms. */
static bool table_ok(json_t *msg, int world, int rank, struct nr_peer *rows, json_int_t *credits,
		     json_int_t *key)
{
	json_t *peers = json_object_get(msg, "peers");

	if (!json_is_object(msg) || !json_is_true(json_object_get(msg, "ok")) ||
	    !int_in(msg, "credits", 0, UINT32_MAX, credits) ||
	    !int_in(msg, "result_key", 0, UINT32_MAX, key) || !json_is_array(peers) ||
	    json_array_size(peers) != (size_t)world)
		return false;
	for (int r = 0; r < world; r++) {
		json_t *row = json_array_get(peers, r), *box = json_object_get(row, "box");
		const char *ip = json_string_value(json_object_get(row, "ip"));
		struct in_addr a;

		if (r == rank)
			continue;   /* its own row is not read */
		memset(&rows[r], 0, sizeof(rows[r]));
		if (!ip || inet_pton(AF_INET, ip, &a) != 1 ||
		    !json_is_string(json_object_get(row, "mac")) || !json_is_array(box) ||
		    json_array_size(box) != 1)
			return false;
		rows[r].ip = a.s_addr;
		if (!ep_ok(json_array_get(box, 0), &rows[r], NR_RING_BOX) ||
		    !ep_ok(json_object_get(row, "plain"), &rows[r], NR_RING_PLAIN))
			return false;
	}
	return true;
}

static void fuzz_member(struct nrz_in *in, uint8_t b0)
{
	int world = 2 + (b0 >> 1 & 3) % 3;
	struct run u = { .world = world, .root = member_root_addr, .boot_ms = NRZ_BOOT_MS };
	struct pollfd pfd = { .fd = member_lfd, .events = POLLIN };
	struct nr_peer rows[NRZ_WORLD_MAX];
	size_t n = nrz_left(in), got = 0;
	char *bytes = malloc(n + 1), hello[8192];
	json_int_t credits = 0, key = 0;
	bool valid = false, go = false;
	json_t *msg;
	int fd;

	NRZ_CHECK(bytes != NULL, "malloc");
	u.rank = 1 + (int)((b0 >> 3 & 3) % (unsigned)(world - 1));
	for (size_t i = 0; i < n; i++)
		bytes[i] = (char)nrz_u8(in);
	run_start(&u);
	for (uint64_t end = now_ms() + NRZ_WAIT_MS; poll(&pfd, 1, 100) != 1;)
		NRZ_CHECK(now_ms() < end, "rank %d never connected", u.rank);
	do
		fd = accept4(member_lfd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	NRZ_CHECK(fd >= 0, "accept: %s", strerror(errno));
	/* its hello, whole, before we answer (closing with it unread would reset) */
	while (!memchr(hello, '\n', got)) {
		ssize_t r = nrz_recv(fd, hello + got, sizeof(hello) - got, 0);

		NRZ_CHECK(r > 0 && got + (size_t)r < sizeof(hello), "rank %d's hello: %s", u.rank,
			  r ? strerror(errno) : "closed");
		got += (size_t)r;
	}
	msg = json_loadb(hello, (size_t)((char *)memchr(hello, '\n', got) - hello), 0, NULL);
	NRZ_CHECK(line_claims(hello, got, 11 + (unsigned)u.rank) &&
		  nr_tcp_peer_ip(fd) == host_ip(11 + (unsigned)u.rank) &&
		  json_integer_value(json_object_get(json_object_get(msg, "hello"), "rank")) == u.rank,
		  "rank %d's hello does not claim the rank and the address it comes from", u.rank);
	json_decref(msg);
	nrz_send_all(fd, bytes, n, 0);
	shutdown(fd, SHUT_WR);
	pthread_join(u.th, NULL);
	close(fd);

	/* the table line, and a second line the barrier takes */
	char *nl = memchr(bytes, '\n', n);

	if (nl) {
		msg = json_loadb(bytes, (size_t)(nl - bytes), 0, NULL);
		valid = table_ok(msg, world, u.rank, rows, &credits, &key);
		json_decref(msg);
		char *nl2 = memchr(nl + 1, '\n', n - (size_t)(nl + 1 - bytes));

		if (nl2) {
			msg = json_loadb(nl + 1, (size_t)(nl2 - nl - 1), 0, NULL);
			go = json_is_object(msg);
			json_decref(msg);
		}
	}
	free(bytes);
	if (u.rc) {
		NRZ_CHECK(u.rc < 0 && u.rc >= NR_ERR_BROKEN, "rank %d failed with %d", u.rank, u.rc);
		NRZ_CHECK(!(valid && go), "rank %d refused a well-formed table: %s", u.rank, u.err);
		return;
	}
	NRZ_CHECK(valid, "rank %d accepted a table that is not well-formed", u.rank);
	NRZ_CHECK(u.credits == (uint32_t)credits && u.result_key == (uint32_t)key,
		  "rank %d: credits %u result_key %u, the table has %lld %lld", u.rank, u.credits,
		  u.result_key, (long long)credits, (long long)key);
	for (int r = 0; r < world; r++)
		NRZ_CHECK(r == u.rank || same_row(&u.peers[r], &rows[r]),
			  "rank %d: row %d is not the table's", u.rank, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nrz_in in = { .p = data, .n = size };
	unsigned fds;
	uint8_t b0;

	if (size < 1 || size > 16384)
		return 0;
	statics_init();
	fds = nrz_count_fds();
	b0 = nrz_u8(&in);
	if (b0 & 1)
		fuzz_member(&in, b0);
	else
		fuzz_root(&in, b0);
	NRZ_CHECK(nrz_count_fds() == fds, "%u fds open after the input, %u before", nrz_count_fds(), fds);
	return 0;
}
