/* SPDX-License-Identifier: BSD-3-Clause */
/* Soft transport, frames on the wire (tp_soft_net.c). */
#ifndef NR_TP_SOFT_NET_H
#define NR_TP_SOFT_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/roce_build.h"
#include "tp_soft_types.h"

/* One received datagram (the UDP payload, after the test filter) handed up. */
typedef void soft_rx_fn(struct soft_tp *tp, uint8_t *pkt, uint32_t len,
			const struct sockaddr_in *from);

/* The receive socket (tp->ip, tp->port), GSO and GRO where the kernel has them
 * (offload false: neither), and the receive buffers. */
int soft_net_open(struct soft_tp *tp, bool offload, char *err, size_t errlen);
/* The buffers whole packets are built in while a test filter is set. */
int soft_net_filter_bufs(struct soft_tp *tp);
void soft_net_close(struct soft_tp *tp);
/* The UDP source port a QP tries at attempt 0, 1, ... (0xC000 | QPN hash, then stride 97). */
uint16_t soft_qp_sport(uint32_t qpn, unsigned attempt);
/* The send socket of a QP, bound to its entropy source port (the next free
 * candidate when taken); tp's error names the address and port on failure. */
int soft_qp_sock_open(struct soft_tp *tp, struct soft_qp *qp);
/* Its sockets of ports source ports in a row instead (nr_tp_qp_spray): the
 * first free range from its candidates; tp's error says why not. */
int soft_qp_spray_open(struct soft_tp *tp, struct soft_qp *qp, unsigned ports);
/* Its sockets (fd, the sprayed ones) bound to the device qp->rail
 * (SO_BINDTODEVICE): 0, or -errno with tp's error naming the device. */
int soft_qp_rail_bind(struct soft_tp *tp, struct soft_qp *qp);
/* tp_soft_tx.c: a packet into qp's send batch (its payload is read at the flush, in
 * place); tos: its IP_TOS, -1 the socket's. */
void soft_tx_build(struct soft_tp *tp, struct soft_qp *qp, const struct nr_build_args *a,
		   const void *payload, uint32_t len, uint8_t kind, int tos);
/*
 * The header (at most SOFT_HDR_MAX bytes) of a packet of len payload bytes:
 * nr_build_transport_hdr's bytes, written directly for the opcodes the
 * requester and responder send (test soft-gso holds them to it); its length.
 */
int soft_tx_hdr(uint8_t *h, uint32_t dqpn, const struct nr_build_args *a, uint32_t len);
/* Send the batch; packets the socket refuses go to tp->tx_unsent. */
int soft_tx_flush(struct soft_tp *tp);
/* Injected packets, then one receive batch, each packet (a GRO datagram's one by
 * one) to deliver: entries received or -errno. */
int soft_rx_round(struct soft_tp *tp, soft_rx_fn *deliver);
int soft_inject_add(struct soft_tp *tp, uint32_t saddr, uint16_t sport,
		    const uint8_t *pkt, uint32_t len);
void soft_inject_free(struct soft_tp *tp);

#endif /* NR_TP_SOFT_NET_H */
