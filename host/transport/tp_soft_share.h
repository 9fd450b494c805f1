/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport, one receive socket for every transport of a process on one
 * (address, port) (tp_soft_share.c).
 *
 * An RNIC takes every RoCEv2 packet of its address on UDP 4791 and hands it
 * to the QP its BTH names, whichever of the process's contexts made that QP.
 * The soft transport does the same for the communicators of one process (a
 * PyTorch job's world group and its subgroups): the first transport on an
 * address binds the socket, later ones share it.  Each transport's QPNs are
 * claimed here, unique over the socket; a transport that reads a packet for a
 * QPN another one claimed passes it to that one (a copy, in its inbox, its
 * wake descriptor written), which takes it at its next receive round, before
 * it reads the socket itself.  A forked child never shares its parent's
 * socket: its transports bind their own, which fails while it holds the
 * parent's (as another process's would).  A fork waits for the registry
 * (pthread_atfork), so a child never starts with it locked by a thread it
 * does not have (a DataLoader's worker forked while a subgroup opens).
 */
#ifndef NR_TP_SOFT_SHARE_H
#define NR_TP_SOFT_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "tp_soft_types.h"

/* tp's wake descriptor, and the socket of (tp->ip, tp->port) when a
 * transport of this process has it: tp shares it (tp->fd, tp->gro its) and
 * 1; else 0, the registry still locked: tp binds one and calls soft_share_add
 * whether the bind worked or not; -errno on failure. */
int soft_share_join(struct soft_tp *tp);
/* After a join that returned 0: tp's newly bound socket (tp->fd, tp->gro;
 * bound) open to the process's later transports, the registry unlocked: 0,
 * or -ENOMEM (tp then closes its socket itself). */
int soft_share_add(struct soft_tp *tp, bool bound);
/* tp leaves its socket, its claims and unread passed packets dropped: true
 * when it was the last, and the caller closes tp->fd. */
bool soft_share_leave(struct soft_tp *tp);
/* qpn for tp: 0, -EEXIST when another transport on the socket has it, -ENOMEM. */
int soft_share_claim(struct soft_tp *tp, uint32_t qpn);
void soft_share_release(struct soft_tp *tp, uint32_t qpn);
/* Whether tp is the only transport on its socket. */
bool soft_share_alone(const struct soft_tp *tp);
/* Whether another transport on tp's socket claimed qpn. */
bool soft_share_foreign(struct soft_tp *tp, uint32_t qpn);
/* What became of a packet tp read for a QPN it has none of. */
enum soft_pass {
	SOFT_PASS_NONE,    /* no other transport claimed it (tp counts it unknown) */
	SOFT_PASS_DONE,    /* in its owner's inbox */
	SOFT_PASS_DROPPED, /* its owner's inbox full (SOFT_INBOX_BYTES) or no memory */
};
/* The inbox's bound: what a socket's receive buffer would hold (8 MiB). */
#define SOFT_INBOX_BYTES (8u << 20)
enum soft_pass soft_share_pass(struct soft_tp *tp, uint32_t qpn, const uint8_t *pkt, uint32_t len,
			       const struct sockaddr_in *from);
/* The packets passed to tp since the last call, oldest first (the caller
 * frees each), and its wake descriptor read. */
struct soft_inject *soft_share_take(struct soft_tp *tp);
/*
 * One transport reads the socket at a time, and passes what it read before it
 * lets go: true, tp reads (soft_share_rx_leave after the batch is delivered);
 * false, another does, and passes tp its packets.  A transport that takes its
 * passed packets after entering and then reads the socket delivers in the
 * order the socket received: no packet it reads is older than one passed to
 * it (a reordering would cost a go-back-N).
 */
bool soft_share_rx_enter(struct soft_tp *tp);
void soft_share_rx_leave(struct soft_tp *tp);

#endif /* NR_TP_SOFT_SHARE_H */
