/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Socket calls of the targets that drive real sockets (fuzz_ctlserver.c,
 * fuzz_rendezvous.c).  libFuzzer's timers raise signals (SIGALRM every
 * second) in whichever thread runs: a blocking call of the target returns
 * EINTR now and then, and must not be taken for a finding.
 */
#ifndef NRZ_NET_H
#define NRZ_NET_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* connect(), waited for through interruptions: 0, or -1 with errno. */
static inline int nrz_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	int r = connect(fd, sa, len);

	/* interrupted, a TCP connect goes on: EALREADY until it is done, then
	 * EISCONN or its error */
	while (r < 0 && (errno == EINTR || errno == EALREADY)) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (errno == EALREADY)
			poll(&p, 1, 100);
		r = connect(fd, sa, len);
	}
	return r < 0 && errno == EISCONN ? 0 : r;
}

/* send() of all n bytes (flags | MSG_NOSIGNAL); false when the peer closed. */
static inline bool nrz_send_all(int fd, const void *p, size_t n, int flags)
{
	while (n) {
		ssize_t r = send(fd, p, n, flags | MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p = (const char *)p + r;
		n -= (size_t)r;
	}
	return true;
}

static inline ssize_t nrz_recv(int fd, void *p, size_t n, int flags)
{
	ssize_t r;

	do
		r = recv(fd, p, n, flags);
	while (r < 0 && errno == EINTR);
	return r;
}

#endif /* NRZ_NET_H */
