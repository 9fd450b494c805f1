/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-soft-perf: throughput of the soft transport between two processes over
 * loopback.  The parent is the responder (127.0.0.52), a forked child the
 * requester (127.0.0.51); each run writes one message of --size bytes with
 * immediate and times post -> send completion at the requester.  Prints each
 * run and the median.  Figures only: never fails on speed.
 *
 *   nr-soft-perf [--size BYTES] [--runs N] [--mtu M] [--inflight P]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <arpa/inet.h>

#include "host/transport/nr_transport.h"
#include "host/transport/tp_soft.h"

struct hello {
	struct nr_qp_info qp;
	uint64_t va;
	uint32_t rkey;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct nr_tp *open_tp(const char *ip, uint32_t mtu, uint32_t inflight)
{
	struct nr_tp_config c = { .kind = "soft", .mtu = mtu, .max_inflight = inflight };
	char err[256];
	struct nr_tp *tp;

	inet_pton(AF_INET, ip, &c.local_ip);
	tp = nr_tp_open(&c, err, sizeof(err));
	if (!tp) {
		fprintf(stderr, "nr-soft-perf: %s\n", err);
		exit(1);
	}
	return tp;
}

/* Wait for one completion; exit on error. */
static void wait_wc(struct nr_tp *tp, struct nr_tp_qp *qp, const char *who)
{
	struct nr_wc wc;
	int n;

	while ((n = nr_tp_poll(tp, &wc, 1, 1000)) == 0)
		;
	if (n < 0 || wc.status != NR_WC_OK) {
		fprintf(stderr, "nr-soft-perf: %s: %s: %s\n", who,
			n < 0 ? "poll failed" : nr_wc_status_str(wc.status), nr_tp_qp_error(qp));
		exit(1);
	}
}

static void xfer(int fd, void *buf, size_t len, int wr)
{
	ssize_t r = wr ? write(fd, buf, len) : read(fd, buf, len);

	if (r != (ssize_t)len) {
		fprintf(stderr, "nr-soft-perf: pipe %s failed\n", wr ? "write" : "read");
		exit(1);
	}
}

static void requester(int rd, int wr, size_t size, int runs, uint32_t mtu, uint32_t inflight)
{
	struct nr_tp *tp = open_tp("127.0.0.51", mtu, inflight);
	uint8_t *buf = malloc(size);
	struct hello me = { 0 }, peer;
	struct nr_tp_qp *qp;
	struct nr_tp_mr mr;
	double *t = calloc((size_t)runs, sizeof(*t));

	memset(buf, 0x3C, size);
	if (nr_tp_reg_mr(tp, buf, size, &mr) || nr_tp_qp_create(tp, &qp, &me.qp))
		exit(1);
	xfer(wr, &me, sizeof(me), 1);
	xfer(rd, &peer, sizeof(peer), 0);
	if (nr_tp_qp_connect(qp, &peer.qp))
		exit(1);
	for (int i = 0; i < runs; i++) {
		char go;
		double t0;

		xfer(rd, &go, 1, 0);          /* the responder posted its receive */
		t0 = now_s();
		if (nr_tp_post_write_imm(qp, (uint64_t)i, &mr, buf, (uint32_t)size, peer.va,
					 peer.rkey, (uint32_t)i))
			exit(1);
		wait_wc(tp, qp, "requester");
		t[i] = now_s() - t0;
		printf("run %d: %zu bytes in %.3f ms: %.1f MB/s\n", i, size, t[i] * 1e3,
		       (double)size / t[i] / 1e6);
		fflush(stdout);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_dbl);
	printf("median: %.1f MB/s (%zu-byte write, mtu %u, %d runs, two processes, loopback)\n",
	       (double)size / t[runs / 2] / 1e6, size, mtu, runs);
	{
		struct nr_tp_soft_stats st;

		nr_tp_soft_stats(tp, &st);
		printf("requester: data packets %llu, retransmitted %llu, timeouts %llu\n",
		       (unsigned long long)st.tx_data, (unsigned long long)st.tx_retrans,
		       (unsigned long long)st.timeouts);
	}
	nr_tp_close(tp);
	free(buf);
	free(t);
}

static void responder(int rd, int wr, size_t size, int runs, uint32_t mtu, uint32_t inflight)
{
	struct nr_tp *tp = open_tp("127.0.0.52", mtu, inflight);
	uint8_t *buf = calloc(1, size);
	struct hello me = { 0 }, peer;
	struct nr_tp_qp *qp;
	struct nr_tp_mr mr;

	if (nr_tp_reg_mr(tp, buf, size, &mr) || nr_tp_qp_create(tp, &qp, &me.qp))
		exit(1);
	me.va = mr.va;
	me.rkey = mr.rkey;
	xfer(rd, &peer, sizeof(peer), 0);
	xfer(wr, &me, sizeof(me), 1);
	if (nr_tp_qp_connect(qp, &peer.qp))
		exit(1);
	for (int i = 0; i < runs; i++) {
		char go = 1;

		if (nr_tp_post_recv(qp, (uint64_t)i))
			exit(1);
		xfer(wr, &go, 1, 1);
		wait_wc(tp, qp, "responder");
	}
	/* Let the last ACKs out before closing. */
	for (int i = 0; i < 20; i++) {
		struct nr_wc wc;

		nr_tp_poll(tp, &wc, 1, 10);
	}
	if (buf[0] != 0x3C || buf[size - 1] != 0x3C)
		fprintf(stderr, "nr-soft-perf: data check failed\n");
	nr_tp_close(tp);
	free(buf);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'n' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "inflight", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	size_t size = 64u << 20;
	int runs = 5, c, p2c[2], c2p[2], st;
	uint32_t mtu = 4096, inflight = 256;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "s:n:m:i:", opts, NULL)) != -1) {
		switch (c) {
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'n': runs = atoi(optarg); break;
		case 'm': mtu = (uint32_t)atoi(optarg); break;
		case 'i': inflight = (uint32_t)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: nr-soft-perf [--size BYTES] [--runs N] [--mtu M] "
				"[--inflight PACKETS]\n");
			return 2;
		}
	}
	if (runs < 1 || !size || size > 0xFFFFFFFFu) {
		fprintf(stderr, "nr-soft-perf: need runs >= 1 and 0 < size < 4 GiB\n");
		return 2;
	}
	if (pipe(p2c) || pipe(c2p))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		requester(p2c[0], c2p[1], size, runs, mtu, inflight);
		return 0;
	}
	responder(c2p[0], p2c[1], size, runs, mtu, inflight);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
