/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bottom of libnetreduce: a monotonic clock and the error messages (a
 * communicator's failure, the thread's last error, error codes as text).
 */
#ifndef NR_UTIL_H
#define NR_UTIL_H

#include <stdint.h>

#include "comm_internal.h"

/* Milliseconds and nanoseconds of CLOCK_MONOTONIC. */
uint64_t nr_now_ms(void);
uint64_t nr_now_ns(void);
/* Set c's failure message (nr_comm_last_error(c)); returns code. */
int nr_fail(struct nr_comm *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set this thread's last error (nr_comm_last_error(NULL)). */
void nr_set_tls_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The speed of the link holding addr (sysfs) in Gbit/s; 10 when unknown. */
double nr_link_gbps(const char *addr);

/*
 * The soft RNIC profile's window and AckReq interval for a host link of
 * link_gbps and packets of mtu bytes; a nonzero *window or *ackreq is the
 * user's (NR_SOFT_WINDOW, NR_SOFT_ACKREQ) and stays.  *window: the packets
 * the link sends in about 1.3 ms, at least 16 KiB and 8 packets, at most 128
 * packets; *ackreq: a quarter of *window (at least 1).
 */
/*
 * The RoCE path MTU an interface of IP MTU ifmtu carries, as the kernel
 * computes a RoCE port's active MTU from its netdev's (iboe_get_mtu): the
 * largest IB MTU that fits with NR_ROCE_HDRS bytes of headers (GRH or IPv4,
 * UDP, BTH, the longest extension headers, ICRC): 4096 from an IP MTU of
 * 4192, 1024 from 1500; 0 when not even 256 fits.
 */
#define NR_ROCE_HDRS 96
uint32_t nr_roce_mtu(unsigned ifmtu);
void nr_soft_window(double link_gbps, uint32_t mtu, uint32_t *window, uint16_t *ackreq);

#endif /* NR_UTIL_H */
