/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log lines with their priority for journald, and a rate limit per call
 * site (ctl_log.h).  Nothing here is on a packet path: the control plane
 * and the program log events (a job created, a lease lapsed), never frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/api/ctl_log.h"

#define LOG_LINE_MAX 2048

bool nr_log_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* systemd sets it for a service whose stdout or stderr is the journal;
	 * a child that redirected stderr elsewhere must not prefix */
	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void nr_log(int prio, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	size_t n = 0;
	va_list ap;
	int k;

	if (prio < LOG_EMERG || prio > LOG_DEBUG)
		prio = LOG_INFO;
	if (nr_log_journal())
		n = (size_t)snprintf(line, sizeof(line), "<%d>", prio);
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	n += (size_t)k < sizeof(line) - n - 1 ? (size_t)k : sizeof(line) - n - 2;
	/* one line: a newline inside would start a line journald reads as info */
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	/* one write: lines of several threads never interleave */
	while (write(STDERR_FILENO, line, n) < 0 && errno == EINTR)
		;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool nr_log_rl_pass(struct nr_log_rl *rl, uint64_t *suppressed)
{
	uint64_t t = now_ms();
	bool pass;

	pthread_mutex_lock(&rl->lock);
	if (!rl->started) {
		rl->started = true;
		rl->tokens = NR_LOG_RL_BURST;
		rl->last_ms = t;
	}
	rl->tokens += (double)(t - rl->last_ms) / 1000.0;   /* one a second */
	rl->last_ms = t;
	if (rl->tokens > NR_LOG_RL_BURST)
		rl->tokens = NR_LOG_RL_BURST;
	pass = rl->tokens >= 1.0;
	if (pass) {
		rl->tokens -= 1.0;
		*suppressed = rl->suppressed;
		rl->suppressed = 0;
	} else {
		rl->suppressed++;
	}
	pthread_mutex_unlock(&rl->lock);
	return pass;
}

const char *nr_log_job(char *buf, size_t len, uint32_t id, const char *name, const char *tenant)
{
	if (name && name[0])
		snprintf(buf, len, "job=%" PRIu32 " name=%s tenant=%s", id, name, tenant ? tenant : "?");
	else
		snprintf(buf, len, "job=%" PRIu32 " tenant=%s", id, tenant ? tenant : "?");
	return buf;
}
