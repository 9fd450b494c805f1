/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreduce-switch under systemd (switch_sd.c), without libsystemd: the
 * notify protocol (a datagram of "READY=1", "WATCHDOG=1", "STATUS=...",
 * "STOPPING=1" to $NOTIFY_SOCKET, sd_notify(3)), the watchdog interval
 * systemd asks for ($WATCHDOG_USEC for $WATCHDOG_PID), and DPDK's log lines
 * with their priority when stderr is the journal.  Outside systemd (no
 * NOTIFY_SOCKET, no JOURNAL_STREAM) each is a no-op.
 */
#ifndef NR_SWITCH_SD_H
#define NR_SWITCH_SD_H

#include <stdint.h>

/* Send state to the service manager: 1 sent, 0 not under one, -errno. */
int switch_sd_notify(const char *state);
/* The watchdog interval in microseconds systemd asks this process for, 0 none. */
uint64_t switch_sd_watchdog_usec(void);
/*
 * When stderr is the journal (nr_log_journal): DPDK's log lines (rte_log)
 * to stderr, each with its syslog priority ("<3>" for RTE_LOG_ERR), instead
 * of DPDK's default stream, which also copies every line to syslog, that is
 * to the journal a second time.  Call before rte_eal_init.  0, or -errno.
 */
int switch_sd_log_journal(void);

#endif /* NR_SWITCH_SD_H */
