/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hosts' frames of nr-bench-switch: rank r sends WRITE FIRST, MIDDLE ...
 * LAST_WITH_IMMEDIATE messages of PKTS_PER_MSG packets to rank r+1 (through
 * the box) and its receiver ACKs them.  Each frame is a copy of a template
 * with PSN, immediate and ICRC patched (ISA-L): as cheap as a fresh frame
 * gets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_memcpy.h>

#include "bench/switch/bench_frames.h"
#include "proto/roce_build.h"
#include "proto/roce_icrc.h"

void bench_mac(unsigned r, uint8_t m[6])
{
	const uint8_t x[6] = { 0x02, 0x4e, 0x52, 0x00, 0x01, (uint8_t)(r + 1) };

	memcpy(m, x, 6);
}

void bench_templates(struct bench *B)
{
	float pay[NR_MAX_MTU / 4];

	for (unsigned c = 0; c < MAXCH; c++)
		for (unsigned r = 0; r < B->n; r++) {
			unsigned d = (r + 1) % B->n;
			struct nr_flow f = { .saddr = bench_ip(r), .daddr = bench_ip(d),
					     .sport = (uint16_t)(0xC000 + 0x100 * c + r),
					     .frag_off = NR_IPV4_DF, .dqpn = bench_rqpn(c, d) };
			struct nr_flow a = { .saddr = bench_ip(d), .daddr = bench_ip(r),
					     .sport = (uint16_t)(0xD000 + 0x100 * c + r),
					     .frag_off = NR_IPV4_DF, .dqpn = bench_sqpn(c, r) };
			struct nr_build_args ack = { .opcode = NR_OP_RC_ACK, .syndrome = 0x1F };
			struct bench_chan *ch = &B->ch[c];

			bench_mac(r, f.src_mac);
			bench_mac(d, f.dst_mac);
			bench_mac(d, a.src_mac);
			bench_mac(r, a.dst_mac);
			B->ipsn[r] = 0x1000u * (r + 1);
			for (unsigned i = 0; i < B->payload / 4; i++)
				pay[i] = (float)(r + 1) * 0.25f + (float)i;
			for (unsigned k = 0; k < PKTS_PER_MSG; k++) {
				struct nr_build_args ar = { .psn = B->ipsn[r] + k, .va = 0x10000, .rkey = 1,
							    .dma_len = B->payload * PKTS_PER_MSG };
				struct tmpl *t = &ch->data[r][k];

				ar.opcode = k == 0 ? NR_OP_RC_WRITE_FIRST :
					    k + 1 == PKTS_PER_MSG ? NR_OP_RC_WRITE_LAST_IMM : NR_OP_RC_WRITE_MIDDLE;
				ar.ackreq = k + 1 == PKTS_PER_MSG;
				t->len = (uint16_t)nr_build_frame(t->f, sizeof(t->f), &f, &ar, pay, B->payload);
				nr_parse(t->f, t->len, &t->p);
			}
			ch->ack[r].len = (uint16_t)nr_build_frame(ch->ack[r].f, sizeof(ch->ack[r].f), &a, &ack,
								  NULL, 0);
			nr_parse(ch->ack[r].f, ch->ack[r].len, &ch->ack[r].p);
		}
}

/* Template t into m (emptied first): copy, PSN, immediate, ICRC. */
static void frame_fill(struct rte_mbuf *m, const struct tmpl *t, uint32_t psn, bool imm, uint32_t immv)
{
	uint8_t *d;

	rte_pktmbuf_reset(m);
	d = (uint8_t *)rte_pktmbuf_append(m, t->len);
	rte_memcpy(d, t->f, t->len);
	nr_bth_set_psn((struct nr_bth *)(d + t->p.bth_off), psn);
	if (imm)
		nr_st_be32(d + t->p.bth_off + 12, immv);
	nr_icrc_update(d, &t->p);
}

struct rte_mbuf *bench_frame(struct bench *B, const struct tmpl *t, uint32_t psn, bool imm, uint32_t immv)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(B->pool);

	if (m != NULL)
		frame_fill(m, t, psn, imm, immv);
	return m;
}

int bench_window(struct bench *B, unsigned c, struct rte_mbuf **pk, uint64_t msgs, bool refill)
{
	const unsigned per_port = bench_per_port(B);
	const struct bench_chan *ch = &B->ch[c];

	for (unsigned r = 0; r < B->n; r++)
		for (unsigned i = 0; i < per_port; i++) {
			uint64_t m = msgs + i / PKTS_PER_MSG;
			unsigned k = i % PKTS_PER_MSG;
			uint32_t g = (uint32_t)(ch->ipsn_off + m * PKTS_PER_MSG + k);
			uint32_t tag = (uint32_t)((ch->ipsn_off / PKTS_PER_MSG + m) & 0xFFFFFF);
			struct rte_mbuf **slot = &pk[r * per_port + i];

			if (refill) {
				frame_fill(*slot, &ch->data[r][k], B->ipsn[r] + g, k + 1 == PKTS_PER_MSG, tag);
				continue;
			}
			*slot = bench_frame(B, &ch->data[r][k], B->ipsn[r] + g, k + 1 == PKTS_PER_MSG, tag);
			if (*slot == NULL) {
				rte_pktmbuf_free_bulk(pk, r * per_port + i);
				return -ENOBUFS;
			}
		}
	return 0;
}

void bench_feed_order(const struct bench *B, struct rte_mbuf **pk, struct rte_mbuf **order)
{
	const unsigned per_port = bench_per_port(B);
	unsigned k = 0;

	for (unsigned off = 0; off < per_port; off += FEED_BURST)
		for (unsigned r = 0; r < B->n; r++)
			for (unsigned i = off; i < off + FEED_BURST && i < per_port; i++)
				order[k++] = pk[r * per_port + i];
}

struct nr_job_spec *bench_job_spec(const struct bench *B, unsigned k)
{
	struct nr_job_spec *sp = calloc(1, nr_job_spec_size(k * B->n));

	if (sp == NULL)
		return NULL;
	sp->n_conns = B->n;
	sp->n_channels = k;
	sp->mtu = B->payload;
	sp->msg_size = B->payload * PKTS_PER_MSG;
	sp->pool_msgs = 2 * B->w;
	sp->timeout_ms = 60000;
	sp->mode = NR_SUM_ORDERED;
	sp->dtype = B->dtype;
	sp->result_key = 0x6e720001;   /* as the control API sets one: results' ImmDt rewritten */
	for (unsigned c = 0; c < k; c++)
		for (unsigned r = 0; r < B->n; r++) {
			struct nr_conn_spec *cs = &sp->conns[c * B->n + r];

			cs->src_ip = bench_ip(r);
			cs->dst_ip = bench_ip((r + 1) % B->n);
			cs->src_qpn = bench_sqpn(c, r);
			cs->dst_qpn = bench_rqpn(c, (r + 1) % B->n);
			cs->ipsn = B->ipsn[r] + (uint32_t)B->ch[c].ipsn_off;
			if (B->unbound && k == 1)
				continue;   /* IP and QPN only (one channel: no steering) */
			cs->src_sport = (uint16_t)(0xC000 + 0x100 * c + r);
			cs->dst_sport = (uint16_t)(0xD000 + 0x100 * c + r);
			if (!B->unbound) {   /* bound as a host registers: MACs, P_Key */
				bench_mac(r, cs->src_mac);
				bench_mac((r + 1) % B->n, cs->dst_mac);
			}
		}
	if (!B->unbound)
		sp->pkey = NR_BTH_PKEY_DEFAULT;
	return sp;
}

unsigned bench_drain(struct bench *B, unsigned w)
{
	unsigned got = 0;

	for (unsigned i = 0; i < B->n; i++) {
		struct rte_mbuf *m[64];
		unsigned k;

		while ((k = rte_ring_dequeue_burst(B->tx[i][w], (void **)m, 64, NULL)) > 0) {
			rte_pktmbuf_free_bulk(m, k);
			got += k;
		}
	}
	return got;
}
