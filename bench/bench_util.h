/* SPDX-License-Identifier: BSD-3-Clause */
/* What every benchmark needs (bench_util.c): a clock in seconds, a median. */
#ifndef NR_BENCH_UTIL_H
#define NR_BENCH_UTIL_H

#include <time.h>

/* Seconds on clock: CLOCK_THREAD_CPUTIME_ID (this thread's CPU time, which
 * leaves out what other processes ran on its core) or CLOCK_MONOTONIC. */
double nr_bench_seconds(clockid_t clock);
/* The median of v[0..n), n >= 1 (sorts v). */
double nr_bench_median(double *v, unsigned n);

#endif /* NR_BENCH_UTIL_H */
