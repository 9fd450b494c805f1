/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP connections carrying JSON lines (jansson), for the rendezvous at rank 0
 * and for the box's control API: "ip:port" addresses, connect with retries,
 * listen and accept, one JSON object a line each way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nr_tcp.h"
#include "nr_util.h"
#include "proto/nr_text.h"

#define LINE_MAX_BYTES (1 << 20)

int nr_parse_hostport(const char *s, uint32_t *ip, uint16_t *port)
{
	char host[64];
	const char *colon = s ? strrchr(s, ':') : NULL;
	struct in_addr a;
	char *end;
	unsigned long p;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	if (inet_pton(AF_INET, host, &a) != 1)
		return -EINVAL;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || p > 65535)
		return -EINVAL;
	*ip = a.s_addr;
	*port = p;
	return 0;
}

static void to_sockaddr(uint32_t ip, uint16_t port, struct sockaddr_in *sa)
{
	*sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
				    .sin_addr.s_addr = ip };
}

uint32_t nr_tcp_peer_ip(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (getpeername(fd, (struct sockaddr *)&sa, &len) || sa.sin_family != AF_INET)
		return 0;
	return sa.sin_addr.s_addr;
}

static void tcp_tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int nr_tcp_listen(const char *addr, int backlog, int *fdp, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	uint32_t ip;
	uint16_t port;
	int one = 1, fd;

	if (nr_parse_hostport(addr, &ip, &port)) {
		snprintf(err, errlen, "\"%s\" is not ip:port", addr);
		return -EINVAL;
	}
	to_sockaddr(ip, port, &sa);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, backlog)) {
		int e = errno;

		snprintf(err, errlen, "%s", strerror(e));
		close(fd);
		return -e;
	}
	*fdp = fd;
	return 0;
}

int nr_tcp_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd >= 0)
		tcp_tune(fd);
	return fd;
}

int nr_tcp_connect(const char *addr, uint32_t timeout_ms, int *fdp, char *err, size_t errlen)
{
	return nr_tcp_connect_from(addr, 0, timeout_ms, fdp, err, errlen);
}

int nr_tcp_connect_from(const char *addr, uint32_t src_ip, uint32_t timeout_ms, int *fdp, char *err,
			size_t errlen)
{
	uint64_t deadline = nr_now_ms() + timeout_ms;
	struct sockaddr_in sa, me;
	uint32_t ip;
	uint16_t port;
	int last = 0;

	if (nr_parse_hostport(addr, &ip, &port)) {
		snprintf(err, errlen, "\"%s\" is not ip:port", addr);
		return -EINVAL;
	}
	to_sockaddr(ip, port, &sa);
	to_sockaddr(src_ip, 0, &me);
	do {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			snprintf(err, errlen, "socket: %s", strerror(errno));
			return -errno;
		}
		if (src_ip && bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0) {
			char a[INET_ADDRSTRLEN];
			int e = errno;

			snprintf(err, errlen, "cannot send from %s: %s", nr_ip4_str(src_ip, a), strerror(e));
			close(fd);
			return -e;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			tcp_tune(fd);
			*fdp = fd;
			return 0;
		}
		last = errno;
		close(fd);
		usleep(20000);
	} while (nr_now_ms() < deadline);
	snprintf(err, errlen, "cannot connect to %s within %u ms: %s", addr, timeout_ms,
		 strerror(last));
	return -ETIMEDOUT;
}

int nr_send_json_line(int fd, void *json, char *err, size_t errlen)
{
	char *s = json_dumps(json, JSON_COMPACT);
	size_t len, off = 0;

	if (!s) {
		snprintf(err, errlen, "out of memory encoding JSON");
		return -ENOMEM;
	}
	len = strlen(s);
	s[len++] = '\n';  /* json_dumps leaves the NUL, replaced by the newline */
	while (off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "send: %s", n < 0 ? strerror(errno) : "closed");
			free(s);
			return -EPIPE;
		}
		off += n;
	}
	free(s);
	return 0;
}

int nr_recv_json_line(int fd, uint64_t deadline, void **json, char *err, size_t errlen,
		      nr_idle_fn *idle, void *arg)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	json_error_t jerr;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)deadline - (int64_t)nr_now_ms();
		int pr;
		char ch;
		ssize_t n;

		if (left <= 0) {
			snprintf(err, errlen, "no answer within the timeout");
			rc = -ETIMEDOUT;
			break;
		}
		pr = poll(&pfd, 1, idle ? 2 : (int)(left > 100 ? 100 : left));
		if (pr < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			rc = -errno;
			break;
		}
		if (pr <= 0) {
			if (idle)
				idle(arg);
			continue;
		}
		n = recv(fd, &ch, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "connection closed%s%s", n < 0 ? ": " : "",
				 n < 0 ? strerror(errno) : "");
			rc = -ECONNRESET;
			break;
		}
		if (ch == '\n') {
			*json = json_loadb(buf, len, 0, &jerr);
			if (!*json || !json_is_object((json_t *)*json)) {
				snprintf(err, errlen, "bad JSON line: %s", jerr.text);
				json_decref(*json);
				rc = -EPROTO;
			}
			break;
		}
		if (len + 1 >= cap) {
			char *nb = cap >= LINE_MAX_BYTES ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				snprintf(err, errlen, "line longer than %d bytes", LINE_MAX_BYTES);
				rc = -EMSGSIZE;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		buf[len++] = ch;
	}
	free(buf);
	return rc;
}
