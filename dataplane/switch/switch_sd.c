/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The service manager's protocols, as systemd documents them
 * (sd_notify(3), sd_watchdog_enabled(3), systemd.exec(5) JOURNAL_STREAM),
 * implemented in a few lines so the box needs no libsystemd: see
 * switch_sd.h.  Nothing here runs on a worker's lcore.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_log.h>

#include "control/api/ctl_log.h"
#include "dataplane/switch/switch_sd.h"

int switch_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	ssize_t r;
	int fd;

	if (path == NULL || path[0] == '\0')
		return 0;
	n = strlen(path);
	/* a path, or an abstract address written with a leading '@' */
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
		return -EAFNOSUPPORT;
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
	n = r < 0 ? (size_t)errno : 0;
	close(fd);
	return r < 0 ? -(int)n : 1;
}

uint64_t switch_sd_watchdog_usec(void)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (us == NULL)
		return 0;
	/* WATCHDOG_PID, when set, names the process the interval is for */
	if (pid && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	errno = 0;
	v = strtoull(us, &end, 10);
	return errno || end == us || *end ? 0 : (uint64_t)v;
}

/* DPDK's log stream: each line with "<N>", N the message's syslog priority. */
static ssize_t journal_write(void *cookie, const char *buf, size_t size)
{
	static __thread int at_line_start = 1;
	char out[4096];
	size_t n = 0;
	int prio = rte_log_cur_msg_loglevel() - 1;   /* RTE_LOG_EMERG is 1, LOG_EMERG 0 */

	if (prio < LOG_EMERG || prio > LOG_DEBUG)
		prio = LOG_INFO;
	for (size_t i = 0; i < size; i++) {
		if (at_line_start && n + 4 < sizeof(out))
			n += (size_t)snprintf(out + n, sizeof(out) - n, "<%d>", prio);
		at_line_start = buf[i] == '\n';
		if (n + 1 < sizeof(out))
			out[n++] = buf[i];
	}
	if (n && out[n - 1] != '\n' && n + 1 < sizeof(out) && !at_line_start) {
		/* a line cut by the buffer: end it here, the rest starts a line */
		out[n++] = '\n';
		at_line_start = 1;
	}
	while (write(STDERR_FILENO, out, n) < 0 && errno == EINTR)
		;
	return (ssize_t)size;
}

int switch_sd_log_journal(void)
{
	static const cookie_io_functions_t io = { .write = journal_write };
	FILE *f;

	if (!nr_log_journal())
		return 0;
	f = fopencookie(NULL, "w", io);
	if (f == NULL)
		return -errno;
	/* rte_vlog writes a whole message, then flushes: one write a message */
	setvbuf(f, NULL, _IOFBF, 4096);
	return rte_openlog_stream(f);
}
