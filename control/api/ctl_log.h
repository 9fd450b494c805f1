/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log lines of the control plane and of the box's program (ctl_log.c): one
 * line a call on stderr, written at once.  When stderr is the journal
 * (systemd sets JOURNAL_STREAM to its device and inode), every line starts
 * with "<N>", N its syslog priority, so journald keeps it (journalctl -p).
 *
 * Lines about a job, a tenant or a connection name them the same way
 * everywhere, first, as key=value fields (nr_log_job), then the event:
 *   netreduce control: job=7 name=resnet tenant=vision: created: 4 ranks, ...
 * and a connection as the engine's job reasons do (agg_conn_describe):
 *   connection 2 (10.0.0.3 -> 10.0.0.4 qpn 0x11)
 * Events a remote peer can repeat at will go through NR_LOG_RL: at most
 * NR_LOG_RL_BURST lines at once, then one a second from that call site; the
 * next line that passes says how many were left out.
 */
#ifndef NR_CTL_LOG_H
#define NR_CTL_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

/* One line (no newline in fmt) at syslog priority prio (LOG_ERR, LOG_WARNING, ...). */
void nr_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when stderr is the journal: JOURNAL_STREAM ("dev:ino") names it. */
bool nr_log_journal(void);

/* A call site's rate limit (NR_LOG_RL). */
struct nr_log_rl {
	pthread_mutex_t lock;
	double tokens;
	uint64_t last_ms;
	uint64_t suppressed;
	bool started;
};

#define NR_LOG_RL_BURST 20

/* Whether a line may pass; *suppressed: lines left out since the last one that did. */
bool nr_log_rl_pass(struct nr_log_rl *rl, uint64_t *suppressed);

#define NR_LOG_RL(prio, fmt, ...)                                                       \
	do {                                                                            \
		static struct nr_log_rl _nr_rl = { .lock = PTHREAD_MUTEX_INITIALIZER }; \
		uint64_t _nr_sup;                                                       \
		if (nr_log_rl_pass(&_nr_rl, &_nr_sup)) {                                \
			if (_nr_sup)                                                    \
				nr_log(prio, fmt " (%llu similar lines left out)",     \
				       ##__VA_ARGS__, (unsigned long long)_nr_sup);    \
			else                                                            \
				nr_log(prio, fmt, ##__VA_ARGS__);                       \
		}                                                                       \
	} while (0)

/*
 * "job=7 name=resnet tenant=vision" into buf (name= left out for a job
 * without one); returns buf.  The one form of a job in every log line.
 */
const char *nr_log_job(char *buf, size_t len, uint32_t id, const char *name, const char *tenant);

#endif /* NR_CTL_LOG_H */
