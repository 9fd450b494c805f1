/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_rendezvous: the hosts' TCP rendezvous (host/comm/nr_bootstrap.c)
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
 *   address it connects from, "$P" a well-formed endpoint row claiming it,
 *   "$N" a nonce of the connection's; once it has read rank 0's challenge,
 *   "$M" the right proof of the line it is in (nr_auth.h, computed here),
 *   "$R" a proof for another rendezvous' nonce (a replay), "$K" one under
 *   another key.  The byte after the connections: bit 0 set, no secret
 *   anywhere (an unauthenticated rendezvous); clear (or absent), every rank
 *   has NRZ_SECRET.  The genuine ranks, written here, connect from their own
 *   addresses, read the challenge and send a proven hello and the two
 *   barrier lines rank 0 will wait for.  Bit 7: a signal interrupts rank 0's
 *   thread 20 ms after the last connection.
 * byte 0 bit 0 set: a member under test (world bits 1-2, rank bits 3-4; bit
 *   5: it has no secret).  It connects to a listener of this target, which
 *   sends a challenge (a fixed nonce, auth as the member's key, bit 6 the
 *   other way; bit 7: the fuzzer's first line instead), reads its hello and
 *   answers with the fuzzer's bytes, $M/$R/$K filled in as above: the
 *   endpoint table, then whatever follows (the barrier's "go").
 *
 * Invariants (a violation traps):
 *   - rank 0 keeps a rank's row only from a connection coming from the
 *     address the row claims; a connection whose hello is not proven (with a
 *     key: the key's right proof for this rendezvous and connection; without:
 *     claiming the address it comes from) never aborts the gather nor takes a
 *     place: with only such besides the genuine ranks, rank 0 succeeds with
 *     exactly the genuine rows, or, with a rank left out, fails with
 *     NR_ERR_TIMEOUT naming that rank among the missing, and naming for
 *     wrong proofs only addresses that sent one (never a genuine rank's
 *     connection), with its secret's source.  Why: any host may connect to
 *     rank 0's port, from a member's own address too; a stray that could
 *     abort or join the job is a way to stop or hijack every rank's ring.
 *   - an error of rank 0's that blames a hello names the address it came
 *     from, a proven connection's.  Why: it is what the operator has to find
 *     the host by.
 *   - a member says hello only to a well-formed challenge whose auth is its
 *     own (a member with a key refuses a rank 0 that proves nothing); its
 *     hello claims the rank and the address it connects from, carries a
 *     nonce of its own and, keyed, the key's right proof.
 *   - a member succeeds only on a well-formed table: "ok" true, integer
 *     credits and result_key (32 bits), a row for every rank, every row but
 *     its own with an IPv4 address, a string MAC, one box endpoint and the
 *     plain one, each with send and receive QPs of 24-bit QPN and PSN and
 *     16-bit ports, a VA >= 0 and a 32-bit rkey, proven (keyed) as rank 0's
 *     line 0 on its connection, and a proven barrier reply (line 1); then its
 *     rows are exactly the table's.  On a well-formed proven table followed
 *     by a proven barrier reply it succeeds.  Turned away for its proof, it
 *     names its secret's source.  Why: the rows become the QPs' peers; a
 *     value cut to fit, or a table anyone could write, would connect a ring
 *     to the wrong QP or port without any error.
 *   - rank 0 ends within its timeouts, signals or not.  Why: a rank that
 *     never joins must be named, not wait for forever.
 *   - no crash, no hang past the timeouts, no fd or memory leak.
 */
#include <arpa/inet.h>
#include <ctype.h>
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
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "host/comm/comm_internal.h"
#include "host/comm/nr_comm.h"
#include "host/comm/nr_tcp.h"

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

static void keys_init(void);

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
	keys_init();
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
	const char *secret;      /* job_secret (NULL: none) */
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
	cfg.job_secret = u->secret;
	u->rc = nr_flat_init(&cfg, true, &c);
	if (u->rc) {
		snprintf(u->err, sizeof(u->err), "%s", nr_comm_last_error(NULL));
	} else {
		for (int r = 0; r < u->world; r++) {
			u->peers[r] = c->peers[r];
			u->from[r] = u->rank == 0 && r ? nr_tcp_peer_ip(c->fds[r]) : 0;
		}
		u->credits = c->box[NR_ELEM_FP32].credits;
		u->result_key = c->box[NR_ELEM_FP32].part[0].result_key;
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
		/* refused: not listening (yet, or any more); reset: the listener
		 * closed while this connection waited in its queue (rank 0 done) */
		NRZ_CHECK(errno == ECONNREFUSED || errno == ECONNRESET, "connect to %s: %s", addr,
			  strerror(errno));
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

/* ---- the proofs, as nr_auth.h specifies them, computed here on their own ------------ */

/* The job secret every rank of a keyed input has (cfg.job_secret). */
#define NRZ_SECRET "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
#define NRZ_SECRET_SRC "job_secret of struct nr_config"

enum { KEY_RIGHT, KEY_WRONG };
static uint8_t keys[2][32];          /* the job's key, and one of another secret */

static void keys_init(void)
{
	static const char label[] = "netreduce rendezvous key/1";
	uint8_t secret[32], other[32];
	unsigned len = 0;

	for (int i = 0; i < 32; i++) {
		secret[i] = (uint8_t)(0xa0 + i);
		other[i] = (uint8_t)(0x50 + i);
	}
	NRZ_CHECK(HMAC(EVP_sha256(), secret, 32, (const uint8_t *)label, strlen(label), keys[KEY_RIGHT],
		       &len) && len == 32 &&
		  HMAC(EVP_sha256(), other, 32, (const uint8_t *)label, strlen(label), keys[KEY_WRONG],
		       &len) && len == 32, "HMAC");
}

static void hex_of(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* n bytes of hex s (exactly 2n lowercase or uppercase digits) into p. */
static bool unhex(const char *s, uint8_t *p, size_t n)
{
	if (!s || strlen(s) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		p[i] = (uint8_t)v;
	}
	return true;
}

/* Where a line stands on its connection (nr_auth.h's CONTEXT). */
struct place {
	uint8_t nonce[32], mnonce[16];
	uint32_t ip;
	uint16_t port;
};

/* HMAC-SHA256(key, CONTEXT || msg without "proof", compact with sorted keys), as hex. */
static void proof_of(int key, const struct place *w, char dir, uint32_t seq, json_t *msg,
		     char hex[65])
{
	static const char label[] = "netreduce rendezvous/1";
	json_t *body = json_deep_copy(msg);
	uint8_t buf[16384 * 2], mac[32];
	char *text;
	size_t k = 0, len;
	unsigned maclen = 0;

	NRZ_CHECK(body != NULL, "json_deep_copy");
	json_object_del(body, "proof");
	text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(body);
	NRZ_CHECK(text != NULL, "json_dumps");
	len = strlen(text);
	NRZ_CHECK(len + 128 < sizeof(buf), "line of %zu bytes", len);
	memcpy(buf, label, sizeof(label));   /* NUL included */
	k = sizeof(label);
	buf[k++] = (uint8_t)dir;
	memcpy(buf + k, w->nonce, 32);
	k += 32;
	memcpy(buf + k, w->mnonce, 16);
	k += 16;
	memcpy(buf + k, &w->ip, 4);          /* network order as it is */
	k += 4;
	buf[k++] = (uint8_t)(w->port >> 8);
	buf[k++] = (uint8_t)w->port;
	buf[k++] = (uint8_t)(seq >> 24);
	buf[k++] = (uint8_t)(seq >> 16);
	buf[k++] = (uint8_t)(seq >> 8);
	buf[k++] = (uint8_t)seq;
	memcpy(buf + k, text, len);
	free(text);
	NRZ_CHECK(HMAC(EVP_sha256(), keys[key], 32, buf, k + len, mac, &maclen) && maclen == 32,
		  "HMAC");
	hex_of(mac, 32, hex);
}

/* Whether msg carries the job key's right proof at (w, dir, seq). */
static bool proven(const struct place *w, char dir, uint32_t seq, json_t *msg)
{
	const char *got = json_string_value(json_object_get(msg, "proof"));
	char want[65];

	if (!got)
		return false;
	proof_of(KEY_RIGHT, w, dir, seq, msg, want);
	return !strcmp(got, want);
}

/*
 * The lines of text (n bytes) with their proofs filled in: "$M" the right
 * proof of the line it is in, "$R" one for another rendezvous' nonce, "$K"
 * one under another key; line i is number i of direction dir at place w.
 * A line that is not a JSON object with the tokens in gets zeros.
 */
static char *fill_proofs(const char *text, size_t n, const struct place *w, char dir,
			 size_t *outlen)
{
	char *out = malloc(n + 1), *p;
	uint32_t seq = 0;

	NRZ_CHECK(out != NULL, "malloc");
	memcpy(out, text, n);
	out[n] = '\0';
	for (p = out; p < out + n; seq++) {
		char *nl = memchr(p, '\n', (size_t)(out + n - p)), *end = nl ? nl : out + n;
		size_t len = (size_t)(end - p);
		char *line = malloc(len + 1);
		json_t *msg;

		NRZ_CHECK(line != NULL, "malloc");
		memcpy(line, p, len);
		line[len] = '\0';
		/* every token zeros first: the object whose proof is made */
		for (char *t = line; (t = strchr(t, '$')); t++)
			if (t[1] == 'M' || t[1] == 'R' || t[1] == 'K')
				t[0] = t[1] = '0';
		msg = json_loadb(line, len, 0, NULL);
		for (char *t = p; t + 1 < end; t++) {
			char hex[65] = "";
			struct place other = *w;

			if (t[0] != '$' || (t[1] != 'M' && t[1] != 'R' && t[1] != 'K'))
				continue;
			other.nonce[0] ^= 0x80;
			if (json_is_object(msg))
				proof_of(t[1] == 'K' ? KEY_WRONG : KEY_RIGHT, t[1] == 'R' ? &other : w,
					 dir, seq, msg, hex);
			else
				memset(hex, '0', 64);
			/* 2 bytes become 64: the line grows */
			size_t off = (size_t)(t - out), tail = n - off - 2;
			char *grown = malloc(n + 62 + 1);

			NRZ_CHECK(grown != NULL, "malloc");
			memcpy(grown, out, off);
			memcpy(grown + off, hex, 64);
			memcpy(grown + off + 64, out + off + 2, tail + 1);
			end = grown + (end - out) + 62;
			t = grown + off + 63;
			p = grown + (p - out);
			free(out);
			out = grown;
			n += 62;
		}
		json_decref(msg);
		free(line);
		p = end + 1;
	}
	*outlen = n;
	return out;
}

/* A connection's first line, up to its newline (NULL: none within NRZ_WAIT_MS, or closed). */
static json_t *first_line(int fd, char *buf, size_t cap, size_t *got)
{
	uint64_t end = now_ms() + NRZ_WAIT_MS;

	*got = 0;
	while (!memchr(buf, '\n', *got)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (now_ms() >= end || *got + 1 >= cap)
			return NULL;
		if (poll(&p, 1, 50) != 1)
			continue;
		r = nrz_recv(fd, buf + *got, 1, 0);
		if (r <= 0)
			return NULL;
		*got += (size_t)r;
	}
	return json_loadb(buf, *got - 1, 0, NULL);
}

/* Rank 0's challenge at place w: its nonce, whether it asks for proofs (false: malformed). */
static bool challenge_of(json_t *msg, struct place *w, bool *auth)
{
	json_t *a = json_object_get(msg, "auth");
	const char *proto = json_string_value(json_object_get(msg, "rendezvous"));

	if (!json_is_object(msg) || !proto || strcmp(proto, "netreduce/1") || !json_is_boolean(a) ||
	    !unhex(json_string_value(json_object_get(msg, "nonce")), w->nonce, 32))
		return false;
	*auth = json_is_true(a);
	return true;
}

/* The place of connection fd, from the member's side (its own end) or rank 0's (the peer). */
static void place_of(int fd, bool member_side, struct place *w)
{
	struct sockaddr_in sa;
	socklen_t l = sizeof(sa);

	NRZ_CHECK(!(member_side ? getsockname : getpeername)(fd, (struct sockaddr *)&sa, &l),
		  "getsockname: %s", strerror(errno));
	w->ip = sa.sin_addr.s_addr;
	w->port = ntohs(sa.sin_port);
}

/* ---- rank 0 under test ------------------------------------------------------------- */

struct fuzz_conn {
	unsigned from;           /* host */
	unsigned before;         /* connects before genuine rank `before` */
	char *bytes;
	size_t n;
	bool valid;              /* its first line is a hello rank 0 may take: claiming the
				    address it comes from, with the key's proof when keyed */
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

/*
 * Genuine rank r's lines at place w (rank 0's challenge read): its hello with
 * a nonce of its own and, keyed, its proof, then the two barrier lines rank 0
 * will wait for.
 */
static char *genuine_lines(unsigned r, int world, bool keyed, struct place *w, size_t *len)
{
	static const char *const fmt[3] = {
		"{\"hello\":{\"rank\":%u,\"world\":%d,\"mtu\":1024,\"msg_size\":65536,"
		"\"transport\":\"soft\",\"box\":false,\"channels\":1},\"peer\":%s,\"nonce\":\"%s\"}",
		"{\"barrier\":\"the rendezvous of the layout\"}",
		"{\"barrier\":\"nr_comm_destroy\"}",
	};
	char row[1024], mn[33], line[4096];
	char *out = malloc(3 * sizeof(line));
	size_t k = 0;

	NRZ_CHECK(out != NULL, "malloc");
	for (int i = 0; i < 16; i++)
		w->mnonce[i] = (uint8_t)(r * 16 + (unsigned)i);
	hex_of(w->mnonce, 16, mn);
	row_text(11 + r, row, sizeof(row));
	for (uint32_t seq = 0; seq < 3; seq++) {
		json_t *msg;
		char *s;

		snprintf(line, sizeof(line), fmt[seq], r, world, row, mn);
		msg = json_loads(line, 0, NULL);
		NRZ_CHECK(msg != NULL, "genuine line %u", seq);
		if (keyed) {
			char hex[65];

			proof_of(KEY_RIGHT, w, 'm', seq, msg, hex);
			json_object_set_new(msg, "proof", json_string(hex));
		}
		s = json_dumps(msg, JSON_COMPACT);
		k += (size_t)snprintf(out + k, 3 * sizeof(line) - k, "%s\n", s);
		free(s);
		json_decref(msg);
	}
	*len = k;
	return out;
}

/*
 * Rank 0 failed on a hello: its message names the address that hello came
 * from (one of the fuzzer's connections).
 */
static void check_blame(const struct run *u, const struct fuzz_conn *f, unsigned nf)
{
	const char *at = strstr(u->err, " (from ");
	char ip[INET_ADDRSTRLEN] = "";
	struct in_addr a;
	bool known = false;

	if (!at)
		return;
	at += strlen(" (from ");
	for (size_t i = 0; i + 1 < sizeof(ip) && (isdigit((unsigned char)at[i]) || at[i] == '.'); i++)
		ip[i] = at[i];
	for (unsigned k = 0; k < nf; k++)
		known |= inet_pton(AF_INET, ip, &a) == 1 && a.s_addr == host_ip(f[k].from) &&
			 f[k].valid;
	NRZ_CHECK(known, "rank 0's error blames a hello that no proven connection sent: %s", u->err);
}

/*
 * The addresses rank 0's timeout names for wrong proofs: each a connection of
 * the fuzzer's whose hello was not proven (a genuine rank's never is), and
 * none without a key.
 */
static void check_bad_proofs(const struct run *u, const struct fuzz_conn *f, unsigned nf,
			     bool keyed)
{
	const char *p = strstr(u->err, "without the right proof of the job's secret (");

	if (!p)
		return;
	NRZ_CHECK(keyed, "rank 0 without a key names wrong proofs: %s", u->err);
	NRZ_CHECK(strstr(p, "(" NRZ_SECRET_SRC ")"), "the secret's source is not named: %s", u->err);
	p = strstr(p, "), from ");
	NRZ_CHECK(p != NULL, "no addresses: %s", u->err);
	p += strlen("), from ");
	while (isdigit((unsigned char)*p)) {
		char ip[INET_ADDRSTRLEN] = "";
		struct in_addr a;
		bool known = false;
		size_t i = 0;

		while (i + 1 < sizeof(ip) && (isdigit((unsigned char)p[i]) || p[i] == '.')) {
			ip[i] = p[i];
			i++;
		}
		for (unsigned k = 0; k < nf; k++)
			known |= inet_pton(AF_INET, ip, &a) == 1 && a.s_addr == host_ip(f[k].from) &&
				 !f[k].valid;
		NRZ_CHECK(known, "rank 0 names %s for a wrong proof, which no unproven hello came "
			  "from: %s", ip, u->err);
		p += i;
		if (strncmp(p, ", ", 2))
			break;
		p += 2;
	}
}

/* The ranks rank 0's timeout says are missing; false: it names none. */
static bool missing_of(const char *err, bool missing[NRZ_WORLD_MAX], int world)
{
	const char *p = strstr(err, "(NR_BOOTSTRAP_TIMEOUT_MS; rank");
	bool any = false;

	memset(missing, 0, NRZ_WORLD_MAX);
	if (!p)
		return false;
	p += strlen("(NR_BOOTSTRAP_TIMEOUT_MS; rank");
	if (*p == 's')
		p++;
	for (;;) {
		char *end;
		long r = strtol(p, &end, 10);

		if (end == p || r < 1 || r >= world)
			return false;
		missing[r] = any = true;
		p = end;
		if (!strncmp(p, " missing", 8))
			return any;
		if (strncmp(p, ", ", 2))
			return false;
		p += 2;
	}
}

/* A fuzzer's connection: challenge read, proofs filled in, its bytes sent. */
static int fuzz_connect(struct fuzz_conn *f, unsigned k, struct run *u, bool *seen, bool keyed)
{
	char buf[512];
	size_t got, n;
	struct place w = { 0 };
	json_t *chal, *first;
	bool auth = false;
	char *text;
	int fd = connect_from(f->from, root_addr, u, seen);

	if (fd < 0)
		return -1;
	chal = first_line(fd, buf, sizeof(buf), &got);
	if (!chal) {       /* rank 0 is past its gather */
		json_decref(chal);
		return fd;
	}
	NRZ_CHECK(challenge_of(chal, &w, &auth) && auth == keyed,
		  "rank 0's first line is not a challenge (auth %d): %.*s", keyed, (int)got, buf);
	json_decref(chal);
	place_of(fd, true, &w);
	/* $N: this connection's nonce */
	for (int i = 0; i < 16; i++)
		w.mnonce[i] = (uint8_t)(0x40 + k * 16 + (unsigned)i);
	{
		char mn[33], *sub = malloc(f->n * 16 + 1);
		size_t j = 0;

		NRZ_CHECK(sub != NULL, "malloc");
		hex_of(w.mnonce, 16, mn);
		for (size_t i = 0; i < f->n; i++) {
			if (i + 1 < f->n && f->bytes[i] == '$' && f->bytes[i + 1] == 'N') {
				memcpy(sub + j, mn, 32);
				j += 32;
				i++;
			} else {
				sub[j++] = f->bytes[i];
			}
		}
		text = fill_proofs(sub, j, &w, 'm', &n);
		free(sub);
	}
	/* proven: a first line that rank 0 may take (its own address, and the key's proof) */
	{
		const char *nl = memchr(text, '\n', n);
		const char *mn;

		first = nl ? json_loadb(text, (size_t)(nl - text), 0, NULL) : NULL;
		mn = json_string_value(json_object_get(first, "nonce"));
		f->valid = line_claims(text, n, f->from) && (!keyed || (unhex(mn, w.mnonce, 16) &&
								      proven(&w, 'm', 0, first)));
		json_decref(first);
	}
	nrz_send_all(fd, text, n, 0);   /* closed: it got what it read */
	shutdown(fd, SHUT_WR);
	free(text);
	return fd;
}

static void fuzz_root(struct nrz_in *in, uint8_t b0)
{
	struct run u = { .rank = 0, .world = 2 + (b0 >> 1 & 3) % 3, .root = root_addr };
	unsigned left_out = b0 >> 3 & 3, nf = (b0 >> 5 & 3) % (NRZ_FUZZ_CONNS + 1);
	struct fuzz_conn f[NRZ_FUZZ_CONNS] = { 0 };
	int fds[NRZ_WORLD_MAX + NRZ_FUZZ_CONNS], nfds = 0;
	bool any_valid = false, seen = false, keyed, missing[NRZ_WORLD_MAX];

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
	}
	/* the byte after the connections: bit 0 set, no secret (an unauthenticated rendezvous) */
	keyed = !(nrz_u8(in) & 1);
	u.secret = keyed ? NRZ_SECRET : NULL;

	run_start(&u);
	/* genuine ranks 1..world-1 in order, the fuzzer's connections among them */
	for (unsigned r = 1; r <= (unsigned)u.world; r++) {
		for (unsigned k = 0; k < nf; k++) {
			int fd;

			if (f[k].before != r && !(r == (unsigned)u.world && f[k].before > r))
				continue;
			fd = fuzz_connect(&f[k], k, &u, &seen, keyed);
			if (fd >= 0)
				fds[nfds++] = fd;
			any_valid |= f[k].valid;
		}
		if (r == (unsigned)u.world || r == left_out)
			continue;
		int fd = connect_from(11 + r, root_addr, &u, &seen);
		struct place w = { 0 };
		char buf[512], *lines;
		size_t got, len;
		json_t *chal;
		bool auth = false;

		if (fd < 0)
			continue;
		fds[nfds++] = fd;
		chal = first_line(fd, buf, sizeof(buf), &got);
		if (!chal)
			continue;      /* rank 0 is past its gather */
		NRZ_CHECK(challenge_of(chal, &w, &auth) && auth == keyed,
			  "rank 0's first line is not a challenge (auth %d): %.*s", keyed, (int)got, buf);
		json_decref(chal);
		place_of(fd, true, &w);
		lines = genuine_lines(r, u.world, keyed, &w, &len);
		nrz_send_all(fd, lines, len, 0);
		shutdown(fd, SHUT_WR);
		free(lines);
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
			if (any_valid)
				continue;
			row_want(11 + (unsigned)r, &want);
			NRZ_CHECK(same_row(&u.peers[r], &want), "rank %d's row is not the one it sent "
				  "(a hello without %s took its place)", r,
				  keyed ? "the key's proof" : "its own address");
		}
		NRZ_CHECK(any_valid || !left_out, "rank 0 completed without rank %u", left_out);
		return;
	}
	check_bad_proofs(&u, f, nf, keyed);
	/* a failure: only a proven connection (unkeyed: one claiming its address) may cause one */
	if (any_valid) {
		check_blame(&u, f, nf);
		return;
	}
	NRZ_CHECK(left_out, "rank 0 failed with only strays besides the ranks: %d %s", u.rc, u.err);
	NRZ_CHECK(u.rc == NR_ERR_TIMEOUT, "rank 0 failed but did not time out: %d %s", u.rc, u.err);
	int joined = 0, world = 0;

	NRZ_CHECK(sscanf(u.err, "rank 0: only %d of %d ranks joined", &joined, &world) == 2 &&
		  missing_of(u.err, missing, u.world),
		  "rank 0's timeout does not say who is missing: %s", u.err);
	for (int r = 1; r < u.world; r++)   /* exactly the ranks that did not join */
		NRZ_CHECK(!missing[r] || joined < u.world - 1 || r == (int)left_out,
			  "rank 0 names rank %d missing, rank %u was left out: %s", r, left_out, u.err);
	/* on a loaded machine a genuine rank may come after the deadline too */
	NRZ_CHECK(missing[left_out], "rank 0's timeout does not name rank %u, left out: %s",
		  left_out, u.err);
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
	size_t n = nrz_left(in), got = 0, len;
	char *bytes = malloc(n + 2), *reply = NULL, hello[8192];
	bool keyed = !(b0 & 32), flip = b0 & 64, own_chal = b0 & 128, chal_ok, auth = false;
	bool valid = false, go = false, table_proven = false, go_proven = false;
	json_int_t credits = 0, key = 0;
	struct place w = { 0 };
	json_t *msg, *first = NULL;
	int fd;

	NRZ_CHECK(bytes != NULL, "malloc");
	u.rank = 1 + (int)((b0 >> 3 & 3) % (unsigned)(world - 1));
	u.secret = keyed ? NRZ_SECRET : NULL;
	for (size_t i = 0; i < n; i++)
		bytes[i] = (char)nrz_u8(in);
	run_start(&u);
	for (uint64_t end = now_ms() + NRZ_WAIT_MS; poll(&pfd, 1, 100) != 1;)
		NRZ_CHECK(now_ms() < end, "rank %d never connected", u.rank);
	do
		fd = accept4(member_lfd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	NRZ_CHECK(fd >= 0, "accept: %s", strerror(errno));
	place_of(fd, false, &w);
	/* the challenge: the fuzzer's first line (bit 7), or one with the key's auth (bit 6 flips it) */
	if (own_chal) {
		char *nl = memchr(bytes, '\n', n);
		size_t k = nl ? (size_t)(nl - bytes) + 1 : n;

		msg = json_loadb(bytes, nl ? k - 1 : 0, 0, NULL);
		chal_ok = nl && challenge_of(msg, &w, &auth);
		json_decref(msg);
		nrz_send_all(fd, bytes, k, 0);
		memmove(bytes, bytes + k, n - k);
		n -= k;
	} else {
		char line[160];

		for (int i = 0; i < 32; i++)
			w.nonce[i] = (uint8_t)(0xc0 + i);
		auth = keyed != flip;
		snprintf(line, sizeof(line), "{\"rendezvous\":\"netreduce/1\",\"nonce\":\""
			 "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf\",\"auth\":%s}\n",
			 auth ? "true" : "false");
		chal_ok = true;
		nrz_send_all(fd, line, strlen(line), 0);
	}
	/* its hello, whole, before we answer; or it hangs up, refusing the challenge */
	first = first_line(fd, hello, sizeof(hello), &got);
	if (first) {
		const char *mn = json_string_value(json_object_get(first, "nonce"));

		NRZ_CHECK(chal_ok && auth == keyed, "rank %d said hello to a rendezvous that %s",
			  u.rank, chal_ok ? (auth ? "asks for proofs it has no key for" :
					     "proves nothing, having a key") : "is no netreduce one");
		NRZ_CHECK(line_claims(hello, got, 11 + (unsigned)u.rank) &&
			  nr_tcp_peer_ip(fd) == host_ip(11 + (unsigned)u.rank) &&
			  json_integer_value(json_object_get(json_object_get(first, "hello"), "rank")) ==
			  u.rank, "rank %d's hello does not claim the rank and the address it comes from",
			  u.rank);
		NRZ_CHECK(unhex(mn, w.mnonce, 16), "rank %d's hello has no nonce of its own", u.rank);
		NRZ_CHECK(!keyed || proven(&w, 'm', 0, first), "rank %d's hello does not prove the key",
			  u.rank);
		reply = fill_proofs(bytes, n, &w, 'r', &len);
		nrz_send_all(fd, reply, len, 0);
	}
	json_decref(first);
	shutdown(fd, SHUT_WR);
	pthread_join(u.th, NULL);
	close(fd);

	/* the table line, and a second line the barrier takes */
	char *nl = reply ? memchr(reply, '\n', len) : NULL;

	if (nl) {
		msg = json_loadb(reply, (size_t)(nl - reply), 0, NULL);
		valid = table_ok(msg, world, u.rank, rows, &credits, &key);
		table_proven = !keyed || proven(&w, 'r', 0, msg);
		if (u.rc && keyed && !table_proven && json_is_object(msg) &&
		    !strcmp(json_string_value(json_object_get(msg, "refused")) ?: "", "proof"))
			NRZ_CHECK(strstr(u.err, NRZ_SECRET_SRC), "rank %d refused for its proof does not "
				  "name its secret's source: %s", u.rank, u.err);
		json_decref(msg);
		char *nl2 = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - reply));

		if (nl2) {
			msg = json_loadb(nl + 1, (size_t)(nl2 - nl - 1), 0, NULL);
			go = json_is_object(msg);
			go_proven = !keyed || proven(&w, 'r', 1, msg);
			json_decref(msg);
		}
	}
	free(bytes);
	free(reply);
	if (u.rc) {
		NRZ_CHECK(u.rc < 0 && u.rc >= NR_ERR_BROKEN, "rank %d failed with %d", u.rank, u.rc);
		NRZ_CHECK(!(valid && table_proven && go && go_proven), "rank %d refused a well-formed, "
			  "proven table: %s", u.rank, u.err);
		return;
	}
	NRZ_CHECK(valid, "rank %d accepted a table that is not well-formed", u.rank);
	NRZ_CHECK(table_proven && go_proven, "rank %d accepted a %s without the key's proof",
		  u.rank, table_proven ? "barrier reply" : "table");
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
