/* SPDX-License-Identifier: BSD-3-Clause */
/* The metrics scraper of nr-bench-switch --scrape-ms (bench_scrape.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "bench/switch/bench_scrape.h"

struct bench_scraper {
	int port;
	unsigned ms;
	volatile bool stop;
	pthread_t th;
	unsigned n, failed;
	size_t bytes;
	double sum_ms, max_ms;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One GET /metrics: bytes of the answer, or -1. */
static long scrape(int port)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n";
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[65536];
	long total = 0;
	bool ok = false;
	ssize_t r;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return -1;
	}
	while ((r = recv(fd, buf, sizeof(buf), 0)) > 0) {
		/* the status line is in the first chunk (an answer past 64 KiB
		 * comes in several) */
		if (total == 0)
			ok = r >= 12 && strncmp(buf, "HTTP/1.1 200", 12) == 0;
		total += r;
	}
	close(fd);
	return r == 0 && ok ? total : -1;
}

static void *scraper_main(void *arg)
{
	struct bench_scraper *s = arg;
	double next = now_ms();

	while (!s->stop) {
		double t0 = now_ms(), dt;
		long b = scrape(s->port);

		dt = now_ms() - t0;
		if (b < 0) {
			s->failed++;
		} else {
			s->n++;
			s->bytes += (size_t)b;
			s->sum_ms += dt;
			if (dt > s->max_ms)
				s->max_ms = dt;
		}
		next += s->ms;
		while (!s->stop && now_ms() < next)
			usleep(1000);
	}
	return NULL;
}

struct bench_scraper *bench_scraper_start(int port, unsigned ms)
{
	struct bench_scraper *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->port = port;
	s->ms = ms;
	if (rte_ctrl_thread_create(&s->th, "nrb-scraper", NULL, scraper_main, s) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void bench_scraper_stop(struct bench_scraper *s, unsigned *n, unsigned *failed, size_t *bytes,
			double *mean_ms, double *max_ms)
{
	s->stop = true;
	pthread_join(s->th, NULL);
	*n = s->n;
	*failed = s->failed;
	*bytes = s->bytes;
	*mean_ms = s->n ? s->sum_ms / s->n : 0;
	*max_ms = s->max_ms;
	free(s);
}
