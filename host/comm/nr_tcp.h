/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP connections carrying JSON lines (nr_tcp.c). */
#ifndef NR_TCP_H
#define NR_TCP_H

#include <stddef.h>
#include <stdint.h>

/* Called while a line is awaited (every 2 ms), e.g. to keep a transport answering. */
typedef void nr_idle_fn(void *arg);

/* "a.b.c.d:port" into ip (network order) and port (host order): 0 or -EINVAL. */
int nr_parse_hostport(const char *s, uint32_t *ip, uint16_t *port);
/* Connect to addr, retrying refused connections until timeout_ms passed. */
int nr_tcp_connect(const char *addr, uint32_t timeout_ms, int *fd, char *err, size_t errlen);
/* The same from source address src_ip (network order; 0: the route's). */
int nr_tcp_connect_from(const char *addr, uint32_t src_ip, uint32_t timeout_ms, int *fd, char *err,
			size_t errlen);
/* The IPv4 address at the other end of a connected socket (network order), 0 if none. */
uint32_t nr_tcp_peer_ip(int fd);
/* A listening socket on addr: 0, or -errno with err saying why. */
int nr_tcp_listen(const char *addr, int backlog, int *fd, char *err, size_t errlen);
/* An accepted connection (TCP_NODELAY), or -1. */
int nr_tcp_accept(int lfd);
/* Send one JSON object (a json_t *) as a line. */
int nr_send_json_line(int fd, void *json, char *err, size_t errlen);
/* Read one line within deadline (nr_now_ms); idle (may be NULL) runs meanwhile. */
int nr_recv_json_line(int fd, uint64_t deadline, void **json, char *err, size_t errlen,
		      nr_idle_fn *idle, void *arg);

#endif /* NR_TCP_H */
