/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-impair: a user-space netem for the namespace testbed.
 *
 * Relays every frame between the two interfaces of each pair given
 * (AF_PACKET, both directions) and on the way drops, duplicates and reorders
 * frames with the given probabilities.  tests/testbed/run uses it on kernels
 * without sch_netem (tc qdisc ... netem: "Specified qdisc kind is unknown");
 * where netem exists the run script uses netem instead.
 *
 *   nr-impair [--loss PCT] [--dup PCT] [--reorder PCT] [--delay-us US]
 *             [--seed N] [--control FILE] IF_A:IF_B [IF_A:IF_B ...]
 *
 * --reorder PCT holds that share of the frames for --delay-us (default 1000)
 * so that the frames behind them overtake them; others pass at once.
 * Impairments apply independently per direction and per frame, like a netem
 * qdisc on both ends of a link.  SIGINT/SIGTERM print counters and exit 0.
 * With --control FILE, SIGHUP rereads "LOSS DUP REORDER" (percentages) from
 * FILE and applies them from then on (the soak changes the mix while it runs).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 64
#define FRAME_MAX 65536
#define HOLD_MAX 4096

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

struct held {
	uint64_t due_ns;
	int out_fd;
	uint32_t len;
	uint8_t *data;
};

struct impair {
	double loss, dup, reorder;  /* probabilities 0..1 */
	uint64_t delay_ns;
	uint64_t rng;
	struct held hold[HOLD_MAX];
	unsigned int nheld;
	uint64_t relayed, dropped, duplicated, reordered, send_err;
};

struct port {
	int fd;
	int peer_fd;
	const char *name;
};

static volatile sig_atomic_t stop, reload;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	reload = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: uniform in [0, 1). */
static double rnd(struct impair *im)
{
	im->rng ^= im->rng >> 12;
	im->rng ^= im->rng << 25;
	im->rng ^= im->rng >> 27;
	return (double)((im->rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

static int open_port(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int one = 1, buf = 8 << 20;
	int fd;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "nr-impair: no interface %s in this namespace\n", ifname);
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0) {
		fprintf(stderr, "nr-impair: AF_PACKET socket: %s (needs CAP_NET_RAW)\n",
			strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0)
		fprintf(stderr, "nr-impair: %s: PACKET_IGNORE_OUTGOING unsupported (%s); "
			"outgoing frames filtered by packet type\n", ifname, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "nr-impair: bind to %s: %s\n", ifname, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void xmit(struct impair *im, int fd, const uint8_t *data, uint32_t len)
{
	if (send(fd, data, len, MSG_DONTWAIT) < 0)
		im->send_err++;
}

static void hold_frame(struct impair *im, int fd, const uint8_t *data, uint32_t len,
		       uint64_t now)
{
	struct held *h;

	if (im->nheld == HOLD_MAX) {
		xmit(im, fd, data, len);
		return;
	}
	h = &im->hold[im->nheld];
	h->data = malloc(len);
	if (!h->data) {
		xmit(im, fd, data, len);
		return;
	}
	memcpy(h->data, data, len);
	h->len = len;
	h->out_fd = fd;
	h->due_ns = now + im->delay_ns;
	im->nheld++;
	im->reordered++;
}

/* Send every held frame that is due; returns ms until the next one (-1: none). */
static int flush_held(struct impair *im, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	unsigned int i = 0;

	while (i < im->nheld) {
		struct held *h = &im->hold[i];

		if (h->due_ns <= now) {
			xmit(im, h->out_fd, h->data, h->len);
			free(h->data);
			*h = im->hold[--im->nheld];
			continue;
		}
		if (h->due_ns < next)
			next = h->due_ns;
		i++;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now + 999999) / 1000000);
}

static void relay_one(struct impair *im, const struct port *p, const uint8_t *data,
		      uint32_t len, uint64_t now)
{
	int copies = 1;

	if (im->loss > 0 && rnd(im) < im->loss) {
		im->dropped++;
		return;
	}
	if (im->dup > 0 && rnd(im) < im->dup) {
		copies = 2;
		im->duplicated++;
	}
	for (int c = 0; c < copies; c++) {
		if (im->reorder > 0 && rnd(im) < im->reorder)
			hold_frame(im, p->peer_fd, data, len, now);
		else
			xmit(im, p->peer_fd, data, len);
	}
	im->relayed++;
}

static void drain_port(struct impair *im, const struct port *p, uint8_t *buf)
{
	for (int n = 0; n < 256; n++) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t len = recvfrom(p->fd, buf, FRAME_MAX, 0, (struct sockaddr *)&from, &fl);

		if (len <= 0)
			return;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		relay_one(im, p, buf, (uint32_t)len, now_ns());
	}
}

static double pct(const char *s)
{
	double v = atof(s);

	if (v < 0 || v > 100) {
		fprintf(stderr, "nr-impair: percentage %s out of 0..100\n", s);
		exit(2);
	}
	return v / 100.0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: nr-impair [--loss PCT] [--dup PCT] [--reorder PCT] "
		"[--delay-us US] [--seed N] [--control FILE] IF_A:IF_B [IF_A:IF_B ...]\n");
}

/* SIGHUP: the new mix from the control file; a bad file keeps the old one. */
static void reload_mix(struct impair *im, const char *path)
{
	double l, d, r;
	FILE *f = fopen(path, "r");

	if (!f || fscanf(f, "%lf %lf %lf", &l, &d, &r) != 3 || l < 0 || l > 100 || d < 0 ||
	    d > 100 || r < 0 || r > 100) {
		fprintf(stderr, "nr-impair: %s: want \"LOSS DUP REORDER\" percentages; mix unchanged\n",
			path);
	} else {
		im->loss = l / 100;
		im->dup = d / 100;
		im->reorder = r / 100;
		printf("nr-impair: now loss %.2f%% dup %.2f%% reorder %.2f%%\n", l, d, r);
		fflush(stdout);
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "loss", required_argument, NULL, 'l' },
		{ "dup", required_argument, NULL, 'd' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "delay-us", required_argument, NULL, 'D' },
		{ "seed", required_argument, NULL, 's' },
		{ "control", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct impair im;
	static struct port ports[2 * MAX_PAIRS];
	static uint8_t buf[FRAME_MAX];
	struct epoll_event ev[64];
	const char *control = NULL;
	int nports = 0, ep, c;
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	im.delay_ns = 1000000;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l': im.loss = pct(optarg); break;
		case 'd': im.dup = pct(optarg); break;
		case 'r': im.reorder = pct(optarg); break;
		case 'D': im.delay_ns = strtoull(optarg, NULL, 0) * 1000ull; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'c': control = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind == argc || argc - optind > MAX_PAIRS) {
		usage(stderr);
		return 2;
	}
	im.rng = seed ? seed : 1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (int i = optind; i < argc; i++) {
		char a[IFNAMSIZ + 1], *colon = strchr(argv[i], ':');
		int fa, fb;

		if (!colon || colon - argv[i] > IFNAMSIZ) {
			fprintf(stderr, "nr-impair: pair '%s' is not IF_A:IF_B\n", argv[i]);
			return 2;
		}
		memcpy(a, argv[i], (size_t)(colon - argv[i]));
		a[colon - argv[i]] = 0;
		fa = open_port(a);
		fb = open_port(colon + 1);
		if (fa < 0 || fb < 0)
			return 2;
		ports[nports] = (struct port){ .fd = fa, .peer_fd = fb, .name = argv[i] };
		ports[nports + 1] = (struct port){ .fd = fb, .peer_fd = fa, .name = argv[i] };
		for (int k = 0; k < 2; k++) {
			struct epoll_event e = { .events = EPOLLIN, .data.u32 = (uint32_t)(nports + k) };

			epoll_ctl(ep, EPOLL_CTL_ADD, ports[nports + k].fd, &e);
		}
		nports += 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (control)
		signal(SIGHUP, on_hup);
	printf("nr-impair: %d pairs, loss %.2f%% dup %.2f%% reorder %.2f%% delay %" PRIu64
	       " us, seed %" PRIu64 "\n", nports / 2, im.loss * 100, im.dup * 100,
	       im.reorder * 100, im.delay_ns / 1000, seed);
	fflush(stdout);

	while (!stop) {
		int wait_ms = flush_held(&im, now_ns());
		int n = epoll_wait(ep, ev, 64, wait_ms < 0 ? 200 : wait_ms);

		if (reload) {
			reload = 0;
			reload_mix(&im, control);
		}

		for (int i = 0; i < n; i++)
			drain_port(&im, &ports[ev[i].data.u32], buf);
	}
	printf("nr-impair: relayed %" PRIu64 " dropped %" PRIu64 " duplicated %" PRIu64
	       " reordered %" PRIu64 " send errors %" PRIu64 "\n", im.relayed, im.dropped,
	       im.duplicated, im.reordered, im.send_err);
	return 0;
}
