/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A scraper for nr-bench-switch --scrape-ms (bench_scrape.c): a thread on the
 * EAL's control cores, as Prometheus would be on another machine, that GETs
 * http://127.0.0.1:PORT/metrics every N ms and reads the whole answer.
 */
#ifndef NR_BENCH_SCRAPE_H
#define NR_BENCH_SCRAPE_H

#include <stddef.h>

struct bench_scraper;

/* Start scraping port every ms milliseconds; NULL when the thread cannot start. */
struct bench_scraper *bench_scraper_start(int port, unsigned ms);
/* Stop: scrapes done, failed ones, bytes read, mean and worst time of a scrape. */
void bench_scraper_stop(struct bench_scraper *s, unsigned *n, unsigned *failed, size_t *bytes,
			double *mean_ms, double *max_ms);

#endif /* NR_BENCH_SCRAPE_H */
