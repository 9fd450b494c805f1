/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP listeners of the box's control plane (ctl_listen.c): the control
 * API's (ctl_server.c) and the metrics' (ctl_http.c).
 */
#ifndef NR_CTL_LISTEN_H
#define NR_CTL_LISTEN_H

#include <stddef.h>

/*
 * A non-blocking listening socket on addr, "IP:PORT" or "[IPv6]:PORT"
 * (numeric; port 0: the kernel picks one), SO_REUSEADDR, backlog 64; *port
 * the port it got.  The fd, or -1 with err naming `what` ("tcp", "metrics"),
 * the address and, for a malformed one, `example` as the form expected.
 */
int nr_ctl_listen_tcp(const char *addr, const char *what, const char *example, int *port,
		      char *err, size_t errlen);

#endif /* NR_CTL_LISTEN_H */
