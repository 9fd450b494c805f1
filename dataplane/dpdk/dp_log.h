/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's log type "netreduce.dp" and a rate limiter: at most one line a
 * second per call site.  Nothing is ever logged per packet.
 */
#ifndef NR_DP_LOG_H
#define NR_DP_LOG_H

#include <stdint.h>

#include <rte_cycles.h>
#include <rte_log.h>

extern int dp_logtype;

#define DP_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dp_logtype, "netreduce.dp: " fmt "\n", ##__VA_ARGS__)
#define DP_LOG_RL(level, fmt, ...)                                             \
	do {                                                                  \
		static uint64_t _dp_last;                                     \
		uint64_t _dp_now = rte_get_tsc_cycles();                      \
		if (_dp_now - __atomic_load_n(&_dp_last, __ATOMIC_RELAXED) >= rte_get_tsc_hz()) { \
			__atomic_store_n(&_dp_last, _dp_now, __ATOMIC_RELAXED); \
			DP_LOG(level, fmt, ##__VA_ARGS__);                     \
		}                                                             \
	} while (0)

#endif /* NR_DP_LOG_H */
