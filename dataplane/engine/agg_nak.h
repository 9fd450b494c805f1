/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The status monitor of the aggregation engine (agg_nak.c): per
 * connection it follows the sender's stream as the box receives it and the
 * receiver's ACKs and NAKs, and sends the sender a NAK (PSN sequence error;
 * a selective job's: a selective NAK) on its receiver's behalf when a loss
 * would otherwise wait for the sender's ACK timeout.  Called by agg_input.c (every data packet and ACK of a
 * registered connection) and agg_jobs.c (housekeeping).
 */
#ifndef NR_AGG_NAK_H
#define NR_AGG_NAK_H

#include <stdint.h>

#include "dataplane/engine/agg_internal.h"

/* A new job's connections: nothing received, nothing NAKed. */
void agg_mon_init(struct agg_job *j, uint64_t now_ns);

/*
 * Whether sender i's packet of sequence c, missing, is evidently lost: a
 * packet more than the job's reorder_pkts beyond it is in, or (spraying)
 * every one of the sender's ports brought a later one: each port's path
 * delivers in order, so c, sent on one of them, would have come first.
 */
bool agg_mon_lost(const struct agg_job *j, uint32_t i, uint64_t c);

/*
 * A data packet of sender i arrived (p/frame/handle): until the receiver's
 * first ACK, the NAKs' template is taken from it.  Called before the packet
 * is contributed, since its emission may reuse or free the frame.
 */
void agg_mon_sender(struct agg_engine *e, struct agg_job *j, uint32_t i, const struct nr_pkt *p,
		   const uint8_t *frame, void *handle);

/*
 * Sender i's packet of sequence x is (now) in: a contribution just added,
 * or a duplicate of one the box has.  A gap below it gets one NAK.
 */
void agg_mon_data(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x, uint64_t now_ns);

/*
 * Receiver i acknowledged (an ACK, or a NAK PSN sequence error) up to its
 * mark j->acked[i], already updated (moved: it advanced); frame/p/handle:
 * that packet, whose addresses the box's NAKs copy.
 */
void agg_mon_ack(struct agg_engine *e, struct agg_job *j, uint32_t i, const uint8_t *frame,
		const struct nr_pkt *p, void *handle, bool moved, uint64_t now_ns);

/*
 * Receiver i NAKed (PSN sequence error) at its mark j->acked[i], already
 * updated, below what the box emitted: a result was lost on the way to it.
 * When the box still holds every result from the mark on, it resends them
 * itself (a repair) and returns true: the NAK is then not for the sender.
 * False: the sender must get the NAK and go back.
 */
bool agg_mon_repair(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t now_ns);

/*
 * Receiver i of a selective job sent a selective NAK: run results from
 * sequence q lost on the way to it.  It acknowledges nothing (the mark
 * stays).  When the box holds every one of them (emitted, not released)
 * and can send, it resends exactly those (a repair) and returns true: the
 * NAK is then not for the sender.  False: the sender must get it.
 */
bool agg_mon_sel_repair(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t q,
			uint32_t run, uint64_t now_ns);

/* A stored result was resent to receiver i: its ACK is awaited from now. */
void agg_mon_result(struct agg_job *j, uint32_t i, uint64_t now_ns);

/*
 * Short slots (agg_short.c).  A slot at sender i's held-back gap was denied: send
 * the NAK now.  Slot x was completed without sender i's contribution: send
 * receiver i its result (built as a repair's) and move sender i's stream past x.
 */
void agg_mon_gap_nak(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t now_ns);
void agg_mon_short_result(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x,
			 uint64_t now_ns);

/* Re-arms of gaps not repaired, probes of connections stalled without a gap. */
void agg_mon_poll(struct agg_engine *e, struct agg_job *j, uint64_t now_ns);

#endif /* NR_AGG_NAK_H */
