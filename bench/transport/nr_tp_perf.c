/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-tp-perf: the soft transport between two ranks, both ways at once, in
 * Gbit/s a core: each rank streams --bytes of RDMA WRITE WITH IMMEDIATE
 * messages to the other while receiving as many, one thread each, and divides
 * what it sent by the CPU time its process spent (user + system, getrusage),
 * so the figure does not depend on what else runs on a shared machine.  Wall
 * clock rates are printed beside it.  Figures only: never fails on speed
 * (exit 0 done, 2 an error).
 *
 *   nr-tp-perf --loopback [--mtu M] [--bytes B] ...     two processes, 127.0.0.51/52
 *   NR_RANK=r NR_ROOT=ip:port NR_ADDR=ip nr-tp-perf     one rank (the testbed's hosts)
 *
 * Rank 0 listens on NR_ROOT (TCP), rank 1 connects; they swap QPs and regions,
 * start together, and rank 0 prints both ranks' figures.  Each message is
 * stamped with its number at both ends; the receiver checks the stamps of
 * what landed (wrong: messages whose stamps disagree).  NR_SOFT_STATS=1: each
 * rank's transport counters (packets, GSO sends, resends ...) on stderr at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "host/transport/nr_transport.h"

#define TP_MAX_QPS 16

struct opts {
	int rank;
	const char *root, *addr;
	uint32_t mtu, window, msg;
	uint64_t bytes;
	unsigned depth, qps;
	uint16_t udp_port;
	bool json, loopback;
	uint8_t offload;         /* NR_TP_OFFLOAD_*: --no-offload (or NR_SOFT_GSO=0) */
	const char *label;
};

/* What a rank tells the other: its QPs and where its receive region is. */
struct hello {
	struct nr_qp_info send[TP_MAX_QPS], recv[TP_MAX_QPS];
	uint64_t va;
	uint32_t rkey;
};

/* A rank's figures, sent to rank 0 at the end. */
struct result {
	uint64_t sent, rcvd, wrong;
	double wall_s, cpu_s, user_s, sys_s;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "nr-tp-perf: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void cpu_s(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *s = getenv(name);

	return s && *s ? s : dflt;
}

/* ---- rendezvous (TCP) --------------------------------------------------- */

static struct sockaddr_in parse_hostport(const char *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		die("NR_ROOT=\"%s\": need ip:port", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1 || atoi(colon + 1) <= 0)
		die("NR_ROOT=\"%s\": need ip:port", s);
	a.sin_port = htons((uint16_t)atoi(colon + 1));
	return a;
}

static int rendezvous(const struct opts *o)
{
	struct sockaddr_in a = parse_hostport(o->root);
	int one = 1, fd;

	if (o->rank == 0) {
		int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			die("listen on %s: %s", o->root, strerror(errno));
		fd = accept(l, NULL, NULL);
		close(l);
		if (fd < 0)
			die("accept: %s", strerror(errno));
	} else {
		double end = now_s() + 30;

		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
				break;
			if (fd >= 0)
				close(fd);
			if (now_s() > end)
				die("cannot connect to rank 0 at %s: %s", o->root, strerror(errno));
			usleep(20000);
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void xfer(int fd, void *buf, size_t len, bool wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = wr ? write(fd, p, len) : read(fd, p, len);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			die("rendezvous %s failed (the other rank died?)", wr ? "write" : "read");
		}
		p += r;
		len -= (size_t)r;
	}
}

/* ---- one rank ------------------------------------------------------------- */

struct rank {
	const struct opts *o;
	struct nr_tp *tp;
	struct nr_tp_qp *sqp[TP_MAX_QPS], *rqp[TP_MAX_QPS];
	uint8_t *sbuf, *rbuf;
	struct nr_tp_mr smr, rmr;
	struct hello peer;
	uint64_t nmsg;                  /* messages each way */
	uint64_t posted, done_tx, done_rx, wrong;
	unsigned inflight[TP_MAX_QPS];
};

static void stamp(uint8_t *m, uint32_t len, uint64_t k)
{
	memcpy(m, &k, sizeof(k));
	memcpy(m + len - sizeof(k), &k, sizeof(k));
}

static bool stamped(const uint8_t *m, uint32_t len, uint64_t k)
{
	uint64_t a, b;

	memcpy(&a, m, sizeof(a));
	memcpy(&b, m + len - sizeof(b), sizeof(b));
	return a == k && b == k;
}

static void setup(struct rank *r, int fd)
{
	const struct opts *o = r->o;
	/* as libnetreduce opens it: ACK timeout exponent 18 (NR_TIMEOUT_MS 10 s: the
	 * first adaptive wait 33.5 ms), an AckReq every quarter window */
	struct nr_tp_config c = { .kind = "soft", .mtu = o->mtu, .max_inflight = o->window,
				  .udp_port = o->udp_port, .ackreq_every = (uint16_t)(o->window / 4),
				  .timeout = 18, .offload = o->offload };
	size_t region = (size_t)o->msg * o->depth;
	struct hello me = { 0 };
	char err[256] = "";

	if (inet_pton(AF_INET, o->addr, &c.local_ip) != 1)
		die("NR_ADDR=\"%s\": need this rank's IPv4 address", o->addr);
	r->tp = nr_tp_open(&c, err, sizeof(err));
	if (!r->tp)
		die("%s", err);
	r->sbuf = aligned_alloc(4096, region);
	r->rbuf = aligned_alloc(4096, region);
	if (!r->sbuf || !r->rbuf)
		die("out of memory for %zu-byte regions", region);
	memset(r->sbuf, 0x5A, region);
	memset(r->rbuf, 0, region);
	if (nr_tp_reg_mr(r->tp, r->sbuf, region, &r->smr) ||
	    nr_tp_reg_mr(r->tp, r->rbuf, region, &r->rmr))
		die("cannot register the regions");
	for (unsigned q = 0; q < o->qps; q++)
		if (nr_tp_qp_create(r->tp, &r->sqp[q], &me.send[q]) ||
		    nr_tp_qp_create(r->tp, &r->rqp[q], &me.recv[q]))
			die("%s", nr_tp_error(r->tp));
	me.va = r->rmr.va;
	me.rkey = r->rmr.rkey;
	xfer(fd, &me, sizeof(me), true);
	xfer(fd, &r->peer, sizeof(r->peer), false);
	for (unsigned q = 0; q < o->qps; q++)
		if (nr_tp_qp_connect(r->sqp[q], &r->peer.recv[q]) ||
		    nr_tp_qp_connect(r->rqp[q], &r->peer.send[q]))
			die("cannot connect QP pair %u", q);
	/* every message's receive, posted up front: completions carry the stamp */
	for (uint64_t k = 0; k < r->nmsg; k++)
		if (nr_tp_post_recv(r->rqp[k % o->qps], k))
			die("post_recv failed");
}

/* Post what the depth allows, message k on QP k mod qps, slot k mod depth. */
static void post_more(struct rank *r)
{
	const struct opts *o = r->o;

	while (r->posted < r->nmsg && r->posted - r->done_tx < o->depth) {
		uint64_t k = r->posted;
		size_t off = (size_t)(k % o->depth) * o->msg;

		stamp(r->sbuf + off, o->msg, k);
		if (nr_tp_post_write_imm(r->sqp[k % o->qps], k, &r->smr, r->sbuf + off, o->msg,
					 r->peer.va + off, r->peer.rkey, (uint32_t)k))
			die("post_write_imm failed");
		r->posted++;
	}
}

static void handle(struct rank *r, const struct nr_wc *wc)
{
	const struct opts *o = r->o;

	if (wc->status != NR_WC_OK)
		die("%s completion of %llu: %s: %s", wc->op == NR_WC_SEND ? "send" : "receive",
		    (unsigned long long)wc->wr_id, nr_wc_status_str(wc->status),
		    nr_tp_qp_error(wc->qp));
	if (wc->op == NR_WC_SEND) {
		r->done_tx++;
		return;
	}
	/* the message may be overwritten by the one depth later; a stale
	 * stamp then shows a later number, never an earlier one */
	if (wc->byte_len != o->msg || wc->imm != (uint32_t)wc->wr_id ||
	    !stamped(r->rbuf + (size_t)(wc->wr_id % o->depth) * o->msg, o->msg, wc->wr_id)) {
		uint64_t a;

		memcpy(&a, r->rbuf + (size_t)(wc->wr_id % o->depth) * o->msg, sizeof(a));
		if (wc->byte_len != o->msg || a < wc->wr_id || a % o->depth != wc->wr_id % o->depth)
			r->wrong++;
	}
	r->done_rx++;
}

static void run(struct rank *r, int fd, struct result *res)
{
	struct nr_wc wc[64];
	double t0, u0, s0, u1, s1, t_local = 0;
	bool peer_done = false, sent_done = false;
	char go = 'G';

	xfer(fd, &go, 1, true);
	xfer(fd, &go, 1, false);
	t0 = now_s();
	cpu_s(&u0, &s0);
	while (!(sent_done && peer_done)) {
		int n;

		post_more(r);
		n = nr_tp_poll(r->tp, wc, 64, sent_done ? 1 : 100);
		if (n < 0)
			die("poll: %s", strerror(-n));
		for (int i = 0; i < n; i++)
			handle(r, &wc[i]);
		if (!sent_done && r->done_tx == r->nmsg && r->done_rx == r->nmsg) {
			char d = 'D';

			t_local = now_s() - t0;
			xfer(fd, &d, 1, true);
			sent_done = true;
		}
		if (!peer_done) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			if (poll(&p, 1, 0) == 1) {
				char d;

				xfer(fd, &d, 1, false);
				peer_done = true;
			}
		}
	}
	cpu_s(&u1, &s1);
	*res = (struct result){
		.sent = r->nmsg * r->o->msg, .rcvd = r->done_rx * r->o->msg, .wrong = r->wrong,
		.wall_s = t_local, .user_s = u1 - u0, .sys_s = s1 - s0, .cpu_s = u1 - u0 + s1 - s0,
	};
}

static void print(const struct opts *o, int rank, const struct result *x)
{
	double gbit = (double)x->sent * 8 / 1e9;

	if (o->json) {
		printf("{\"bench\":\"tp\",\"transport\":\"soft\",\"label\":\"%s\",\"rank\":%d,"
		       "\"offload\":%s,\"mtu\":%u,\"msg\":%u,\"depth\":%u,\"qps\":%u,\"window\":%u,\"bytes\":%llu,"
		       "\"wall_s\":%.4f,\"cpu_s\":%.4f,\"user_s\":%.4f,\"sys_s\":%.4f,"
		       "\"gbps_wall\":%.3f,\"gbps_core\":%.3f,\"wrong\":%llu}\n",
		       o->label, rank, o->offload || !strcmp(env_or("NR_SOFT_GSO", "1"), "0") ?
		       "false" : "true", o->mtu, o->msg, o->depth, o->qps, o->window,
		       (unsigned long long)x->sent, x->wall_s, x->cpu_s, x->user_s, x->sys_s,
		       gbit / x->wall_s, gbit / x->cpu_s, (unsigned long long)x->wrong);
	} else {
		printf("rank %d: mtu %u: %.3f GB each way in %.3f s wall (%.2f Gbit/s), CPU %.3f s "
		       "(user %.3f sys %.3f): %.2f Gbit/s a core each way, wrong %llu\n", rank,
		       o->mtu, (double)x->sent / 1e9, x->wall_s, gbit / x->wall_s, x->cpu_s,
		       x->user_s, x->sys_s, gbit / x->cpu_s, (unsigned long long)x->wrong);
	}
	fflush(stdout);
}

static int rank_main(const struct opts *o)
{
	struct rank r = { .o = o };
	struct result mine, other;
	int fd = rendezvous(o);

	r.nmsg = (o->bytes + o->msg - 1) / o->msg;
	setup(&r, fd);
	run(&r, fd, &mine);
	if (o->rank == 1) {
		xfer(fd, &mine, sizeof(mine), true);
	} else {
		xfer(fd, &other, sizeof(other), false);
		print(o, 0, &mine);
		print(o, 1, &other);
	}
	/* let the last ACKs out before the sockets close */
	for (int i = 0; i < 10; i++) {
		struct nr_wc wc[8];

		nr_tp_poll(r.tp, wc, 8, 5);
	}
	close(fd);
	nr_tp_close(r.tp);
	free(r.sbuf);
	free(r.rbuf);
	return (mine.wrong || (o->rank == 0 && other.wrong)) ? 1 : 0;
}

static uint64_t size_arg(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (*end || !v)
		die("\"%s\": not a size (bytes, K/M/G suffixes)", s);
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: nr-tp-perf [--loopback] [--mtu M] [--bytes B] [--msg B] [--depth N] [--qps Q]\n"
"                  [--window P] [--label S] [--json]\n"
"  --loopback   run both ranks here (127.0.0.51 and .52, rendezvous 127.0.0.51:29611)\n"
"  --mtu M      RoCE path MTU (NR_MTU, default 4096)\n"
"  --bytes B    bytes each way (default 1G)\n"
"  --msg B      bytes a message (NR_MSG_SIZE, default 64K, a multiple of the MTU)\n"
"  --depth N    messages in flight per rank (default 16, as NR_RING_WINDOW)\n"
"  --qps Q      QP pairs between the ranks, messages round robin (default 1, at most %u)\n"
"  --window P   packets unacknowledged per QP (NR_SOFT_WINDOW, default 128)\n"
"  --no-offload no UDP GSO and GRO (NR_SOFT_GSO=0): a datagram a send and a receive\n"
"  otherwise NR_RANK, NR_ROOT (ip:port, rank 0 listens), NR_ADDR, NR_UDP_PORT\n",
		TP_MAX_QPS);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "loopback", no_argument, NULL, 'L' }, { "mtu", required_argument, NULL, 'm' },
		{ "bytes", required_argument, NULL, 'b' }, { "msg", required_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' }, { "qps", required_argument, NULL, 'q' },
		{ "window", required_argument, NULL, 'w' }, { "json", no_argument, NULL, 'J' },
		{ "label", required_argument, NULL, 'l' }, { "help", no_argument, NULL, 'h' },
		{ "no-offload", no_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.rank = atoi(env_or("NR_RANK", "0")), .root = env_or("NR_ROOT", NULL),
		.addr = env_or("NR_ADDR", NULL), .mtu = (uint32_t)atoi(env_or("NR_MTU", "4096")),
		.msg = (uint32_t)size_arg(env_or("NR_MSG_SIZE", "65536")), .bytes = 1ull << 30,
		.depth = 16, .qps = 1, .window = (uint32_t)atoi(env_or("NR_SOFT_WINDOW", "128")),
		.udp_port = (uint16_t)atoi(env_or("NR_UDP_PORT", "4791")), .label = "",
	};
	int c, st;

	while ((c = getopt_long(argc, argv, "Lm:b:s:d:q:w:Jl:hO", lo, NULL)) != -1) {
		switch (c) {
		case 'L': o.loopback = true; break;
		case 'm': o.mtu = (uint32_t)atoi(optarg); break;
		case 'b': o.bytes = size_arg(optarg); break;
		case 's': o.msg = (uint32_t)size_arg(optarg); break;
		case 'd': o.depth = (unsigned)atoi(optarg); break;
		case 'q': o.qps = (unsigned)atoi(optarg); break;
		case 'w': o.window = (uint32_t)atoi(optarg); break;
		case 'J': o.json = true; break;
		case 'l': o.label = optarg; break;
		case 'O': o.offload = NR_TP_OFFLOAD_OFF; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!o.mtu || o.msg % o.mtu || o.depth < 1 || o.qps < 1 || o.qps > TP_MAX_QPS ||
	    !o.window)
		die("need --msg a multiple of --mtu, --depth >= 1, 1 <= --qps <= %u, --window >= 1",
		    TP_MAX_QPS);
	if (!o.loopback) {
		if (!o.root || !o.addr || o.rank < 0 || o.rank > 1)
			die("set NR_RANK (0 or 1), NR_ROOT (ip:port) and NR_ADDR, or use --loopback");
		return rank_main(&o);
	}
	o.root = "127.0.0.51:29611";
	fflush(stdout);
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		o.rank = 1;
		o.addr = "127.0.0.52";
		exit(rank_main(&o));
	}
	o.rank = 0;
	o.addr = "127.0.0.51";
	c = rank_main(&o);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return 2;
	return c ? c : WEXITSTATUS(st);
}
