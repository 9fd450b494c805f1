/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Extensions of the soft transport (tp_soft*.c) beyond nr_transport.h:
 * counters, an initial-PSN override, and test hooks (a packet filter that
 * drops, duplicates or delays packets, and packet injection).  Every function
 * returns -EINVAL when given a transport that is not "soft".
 */
#ifndef NR_TP_SOFT_H
#define NR_TP_SOFT_H

#include <stdint.h>

#include "nr_transport.h"

/* One counter per event or drop reason (X-macro: field, description). */
/* clang-format off */
#define NR_SOFT_FOREACH_STAT(_)                                                  \
	_(tx_pkts, "packets sent (data, ACK, NAK)")                              \
	_(tx_calls, "send batches (a sendmmsg each, more when the socket takes part)") \
	_(tx_gso, "GSO sends: sendmmsg entries of several datagrams (UDP_SEGMENT)") \
	_(tx_bytes, "UDP payload bytes sent")                                    \
	_(tx_data, "data packets sent")                                          \
	_(tx_ackreq, "data packets sent with AckReq")                            \
	_(tx_retrans, "data packets sent again (go-back-N, or after a full send buffer)")                     \
	_(tx_tclass, "data packets sent with their message's own traffic class (nr_tp_post_write_imm_tc)") \
	_(tx_de, "data packets sent drop-eligible (nr_tp_mark's de)")              \
	_(tx_acks, "ACKs sent")                                                  \
	_(tx_nak_seq, "NAK PSN sequence error sent")                             \
	_(tx_nak_other, "NAK invalid request / remote access error sent")        \
	_(tx_again, "sends deferred: socket buffer full")                        \
	_(tx_errors, "send errors other than a full buffer (packet lost)")       \
	_(tx_filtered, "packets dropped by the test filter on send")             \
	_(rx_pkts, "packets received (a GRO datagram's one by one)")            \
	_(rx_calls, "receive batches (recvmmsg calls that returned data)")      \
	_(rx_gro, "GRO datagrams: received entries of several packets (UDP_GRO)") \
	_(rx_ipid, "packets whose ICRC held for another IP ID than the one guessed") \
	_(rx_bytes, "UDP payload bytes received")                                \
	_(rx_malformed, "dropped: not a well-formed RoCEv2 RC packet")           \
	_(rx_bad_icrc, "dropped: ICRC mismatch")                                 \
	_(rx_unknown_qpn, "dropped: no QP with this DestQP")                     \
	_(rx_passed, "packets for another transport of this process on the same address and port, passed to it") \
	_(rx_pass_drop, "dropped: for another transport on the socket whose inbox was full (it is not polled)") \
	_(rx_bad_src, "dropped: source address is not the QP's peer")            \
	_(rx_bad_state, "dropped: QP not connected or in error")                 \
	_(rx_unsupported, "dropped: opcode this endpoint does not serve")        \
	_(rx_filtered, "packets dropped by the test filter on receive")          \
	_(rx_data, "data packets accepted (in sequence)")                        \
	_(rx_dup, "duplicate data packets (re-ACKed, not executed)")             \
	_(rx_out_of_seq, "data packets ahead of the expected PSN dropped (SR: beyond the kept window)") \
	_(rx_ooo_kept, "SR: data packets ahead of the expected PSN kept for their turn") \
	_(tx_nak_sel, "SR: selective NAKs sent (a run of missing PSNs each)")   \
	_(tx_nak_sel_again, "SR: of them, the expected PSN named again (its NAK or resend lost)") \
	_(rx_nak_sel, "SR: selective NAKs received")                             \
	_(tx_sel_resent, "SR: data packets resent alone for a selective NAK")   \
	_(rx_nak_sel_damped, "SR: PSNs a selective NAK named again too soon (not resent)") \
	_(rx_bad_req, "invalid requests (opcode sequence, length)")              \
	_(rx_access_err, "RETH outside every registered region")                 \
	_(rx_acks, "ACKs received")                                              \
	_(rx_stale_acks, "ACKs/NAKs for PSNs not outstanding (ignored)")         \
	_(rx_nak_seq, "NAK PSN sequence error received")                         \
	_(rx_nak_seq_retrying, "sequence NAKs during a retry (acknowledge only, no second go-back-N)") \
	_(rx_nak_rnr, "RNR NAK received")                                        \
	_(rx_nak_other, "other NAK received (QP to error)")                      \
	_(timeouts, "local ACK timeouts (go-back-N from the oldest unacked)")    \
	_(qp_errors, "QPs moved to error")                                       \
	_(gso_fallback, "no UDP GSO: the kernel lacks it, or a GSO send failed (a datagram a send)") \
	_(gro_fallback, "no UDP GRO: the kernel lacks it (a datagram a receive)")
/* clang-format on */

struct nr_tp_soft_stats {
#define NR_SOFT_STAT_FIELD(n, d) uint64_t n;
	NR_SOFT_FOREACH_STAT(NR_SOFT_STAT_FIELD)
#undef NR_SOFT_STAT_FIELD
};

#define NR_SOFT_NSTATS (sizeof(struct nr_tp_soft_stats) / sizeof(uint64_t))

/* Copy the transport's counters. */
int nr_tp_soft_stats(const struct nr_tp *tp, struct nr_tp_soft_stats *st);
/* Name and description of counter i (i < NR_SOFT_NSTATS), NULL past the end. */
const char *nr_tp_soft_stat_name(unsigned i);
const char *nr_tp_soft_stat_desc(unsigned i);

/*
 * Initial send PSN of the QPs created from now on on tp (psn < 2^24), instead
 * of a random one; a negative value restores random PSNs.  The environment
 * variable NR_SOFT_IPSN (decimal or 0x hex) does the same for every soft
 * transport opened while it is set.
 */
int nr_tp_soft_set_ipsn(struct nr_tp *tp, int64_t psn);

/* ---- test hooks -------------------------------------------------------- */

enum nr_soft_dir {
	NR_SOFT_TX = 0,          /* about to be sent */
	NR_SOFT_RX = 1,          /* just received, before the ICRC check */
};

enum nr_soft_verdict {
	NR_SOFT_PASS = 0,
	NR_SOFT_DROP = 1,        /* lost */
	NR_SOFT_DUP = 2,         /* delivered twice */
	NR_SOFT_DELAY = 3,       /* delivered after the rest of its batch (reordering) */
};

/*
 * Called for every packet (UDP payload: BTH .. ICRC, len bytes) the transport
 * sends or receives; may modify the bytes (corruption tests).  Returns an
 * enum nr_soft_verdict.  Runs inside nr_tp_poll, on its thread.
 */
typedef int (*nr_tp_soft_filter_fn)(void *arg, enum nr_soft_dir dir, uint8_t *pkt,
				    uint32_t len);

int nr_tp_soft_set_filter(struct nr_tp *tp, nr_tp_soft_filter_fn fn, void *arg);

/*
 * Feed one UDP payload into the receive path as if it had arrived from
 * saddr:sport (network order address, host order port); processed (ICRC
 * check included) by the next nr_tp_poll.  0 or -errno.
 */
int nr_tp_soft_inject(struct nr_tp *tp, uint32_t saddr, uint16_t sport,
		      const uint8_t *pkt, uint32_t len);

/* UDP source port (entropy) a QP sends from, host order. */
int nr_tp_soft_qp_sport(const struct nr_tp_qp *qp);

#endif /* NR_TP_SOFT_H */
