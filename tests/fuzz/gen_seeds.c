/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seed inputs made by the packet builders (and by hand for the control
 * protocol), shared by nrz-gen-corpus (writes them for tests/fuzz/run) and the
 * regression replayers (run them in-process).
 *
 *   parse    every IBTA opcode built with several payload lengths, with and
 *            without a VLAN tag and ECN, every truncation of a WRITE frame,
 *            transport-only datagrams;
 *   engine   scripts in fuzz_engine.c's format that complete, acknowledge,
 *            retransmit and time out messages on one and two jobs; on jobs
 *            with short slots, packets lost in the middle, at the end and at
 *            the start of a message, marked and not, a late copy, a first
 *            packet's RETH claiming a longer message, late ranks;
 *   control  JSON request lines ($JOB / $KEY stand for the last job created);
 *   burst    scripts in fuzz_burst.c's format that run jobs to the end on every
 *            box shape, over two workers, through delete, re-add and timeout,
 *            and bursts of one frame of every kind;
 *   soft     scripts in fuzz_soft.c's format on each profile and MTU: messages
 *            in order, duplicates and gaps, writes ACKed, NAKed, RNR-NAKed,
 *            access and sequence errors, mutated and raw packets;
 *   ctlserver  the control requests on admin and TCP connections, lines cut
 *            across chunks, CRLF and blank lines, an oversize line, junk and
 *            wrong tokens before and after the token, a burst past the rate
 *            limit, a connection shut early;
 *   rendezvous  rank 0 with the genuine ranks alone, with strays, with a rank
 *            left out, with hellos claiming their own address (a rank taken,
 *            another world, no such rank); members given a good table, one
 *            without the barrier's go, a short one, rank 0's error;
 *   tenant   scripts in fuzz_tenant.c's format: tenants by the API and by a
 *            tenants file (one refused), each fault of a tenant, raw tenants
 *            files good and bad; jobs inside and outside a tenant's ranges
 *            and MACs, on taken endpoints, past max_jobs and max_pool_bytes,
 *            reached with every kind of key by their tenant, another and the
 *            admin, tokens cut and extended, MAC pinning switched; a box of
 *            12 jobs, 16 channels and 512 mbufs shared by reservations, and
 *            reservations it cannot honour.
 */
#include <stdio.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "proto/roce_build.h"
#include "proto/roce_opcode.h"

#include "nrz_fuzz.h"

struct seedbuf {
	uint8_t b[16384];
	size_t n;
};

static void put(struct seedbuf *s, uint8_t v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = v;
}

static void put5(struct seedbuf *s, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint8_t e)
{
	put(s, a);
	put(s, b);
	put(s, c);
	put(s, d);
	put(s, e);
}

/* ---- parse ------------------------------------------------------------------ */

static int gen_parse(nrz_seed_cb cb, void *ctx)
{
	static const uint32_t lens[] = { 0, 4, 7, 64, 256 };
	struct nr_flow f = {
		.src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 },
		.saddr = htonl(0x0A000001), .daddr = htonl(0x0A000002),
		.sport = 0xC000, .frag_off = NR_IPV4_DF, .dqpn = 0x11,
	};
	uint8_t pay[256], buf[1024];
	char name[64];
	int n = 0, len;

	for (unsigned k = 0; k < sizeof(pay); k++)
		pay[k] = (uint8_t)(k * 7 + 1);
	for (unsigned op = 0; op < 256; op++) {
		const struct nr_opcode_info *oi = nr_opcode_info((uint8_t)op);

		if (!oi)
			continue;
		for (unsigned li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			struct nr_build_args a = {
				.opcode = (uint8_t)op, .psn = 0xFFFFF0 + li, .ackreq = li & 1,
				.va = 0x1000, .rkey = 7, .dma_len = lens[li], .imm = 0xABCD0000 | li,
				.syndrome = li ? 0x60 : 0x1F, .msn = li, .qkey = 0x80010000, .sqp = 1,
			};

			f.vlan = li == 2;
			f.vlan_tci = 100;
			f.tos = li == 3 ? NR_ECN_CE : 0;
			len = nr_build_frame(buf, sizeof(buf), &f, &a, pay, lens[li]);
			if (len < 0)
				continue;
			snprintf(name, sizeof(name), "op%02x-len%u", op, lens[li]);
			cb(ctx, name, buf, (size_t)len);
			n++;
		}
	}
	/* every truncation of one RDMA WRITE ONLY with immediate */
	struct nr_build_args w = { .opcode = NR_OP_RC_WRITE_ONLY_IMM, .psn = 5, .dma_len = 64,
				   .imm = 1 };

	len = nr_build_frame(buf, sizeof(buf), &f, &w, pay, 64);
	for (int cut = 0; len > 0 && cut < len; cut++) {
		snprintf(name, sizeof(name), "write-cut%d", cut);
		cb(ctx, name, buf, (size_t)cut);
		n++;
	}
	/* transport-only datagrams, as a UDP socket endpoint gets them */
	struct nr_icrc_ip4 ip = { .saddr = f.saddr, .daddr = f.daddr, .sport = 0xC000,
				  .dport = NR_ROCEV2_PORT, .frag_off = NR_IPV4_DF };

	len = nr_build_transport(buf, sizeof(buf), &ip, 0x11, &w, pay, 64);
	if (len > 0) {
		cb(ctx, "transport-write", buf, (size_t)len);
		n++;
	}
	return n;
}

/* ---- engine ------------------------------------------------------------------ */

/*
 * Header: njobs-1, then per job b0 (ranks-1 | mtu bit 3 | pool bit 4 | streaming
 * bit 5 | result key bit 6), b1 (packets per message-1 | last length), b2 (ipsn).
 */
static void eng_header(struct seedbuf *s, unsigned njobs, uint8_t b0, uint8_t b1, uint8_t b2)
{
	put(s, (uint8_t)(njobs - 1));
	for (unsigned k = 0; k < njobs; k++) {
		put(s, b0);
		put(s, b1);
		put(s, (uint8_t)(b2 + k));
	}
}

/* msgs messages of ppm packets on every rank of job jb (0/1), ACKed after each. */
static void eng_round(struct seedbuf *s, unsigned jb, unsigned n, unsigned ppm, unsigned msgs,
		      uint8_t pat, bool dup)
{
	for (unsigned m = 0; m < msgs; m++) {
		for (unsigned p = 0; p < ppm; p++)
			for (unsigned c = 0; c < n; c++)
				put5(s, 0, (uint8_t)(jb << 7 | c), 0, dup && c == 0 ? 8 : 0, pat);
		for (unsigned c = 0; c < n; c++)
			put5(s, 4, (uint8_t)(jb << 7 | c), 0, 0, 0);
	}
}

/* Rank c's packet p of a message lost (eng_short_msg). */
#define ENG_LOST(c, p) (1u << ((p) * 8 + (c)))

/*
 * Short slots: one message of ppm packets on every rank of job 0, then every
 * receiver's ACK.  The packets in lost (ENG_LOST) are lost on their way (op
 * bit 3), op is ORed into every packet's op byte (bit 4: unmarked), first
 * into the first packet's (bits 5-6: RETH length).
 */
static void eng_short_msg(struct seedbuf *s, unsigned n, unsigned ppm, uint32_t lost,
			  uint8_t op, uint8_t first, uint8_t pat)
{
	for (unsigned p = 0; p < ppm; p++)
		for (unsigned c = 0; c < n; c++)
			put5(s, (uint8_t)(op | (p == 0 ? first : 0) |
					  (lost & ENG_LOST(c, p) ? 8 : 0)),
			     (uint8_t)c, 0, 0, pat);
	for (unsigned c = 0; c < n; c++)
		put5(s, 4, (uint8_t)c, 0, 0, 0);
}

/* Rank c resends its packet back packets before its cursor; reset: and goes on from there. */
static void eng_back(struct seedbuf *s, unsigned c, unsigned back, bool reset, uint8_t pat)
{
	put5(s, 0, (uint8_t)c, (uint8_t)(2 | (back - 1) << 2 | (reset ? 0x80 : 0)), 0, pat);
}

/*
 * One job with short slots (b0 bit 7, then the short byte) of n ranks and
 * messages of ppm packets (2 or 3), results through ops.emit_slot when
 * emit_slot: a message whole; a middle or last packet lost and the short slot
 * completed when the rank's next packet comes, its late copy resent; an
 * unmarked message with a loss (denied, NAKed, the rank goes back); a first
 * packet lost (never short); a last packet lost with nothing after it (short
 * at the probe time); a message whose first packet's RETH claims 9 packets
 * more (a bound of 5 or 3), with a loss in each of its slots after the first;
 * in 3 packets, two losses (the second denied, the rank goes back); an
 * unmarked message's last packet lost (probed, the rank goes back).
 */
static void eng_short_seed(struct seedbuf *s, unsigned n, unsigned mode, unsigned ppm,
			   uint8_t sb, bool emit_slot)
{
	uint8_t pat = (uint8_t)(n + mode);

	put(s, emit_slot ? 2 : 0);
	put(s, (uint8_t)((n - 1) | mode << 5 | 1 << 6 | 0x80));
	put(s, (uint8_t)((ppm - 1) | 9 << 2));
	put(s, (uint8_t)(0x80 | n));
	put(s, sb);
	eng_short_msg(s, n, ppm, 0, 0, 0, pat);                    /* g 0 .. ppm-1 */
	eng_short_msg(s, n, ppm, ENG_LOST(1, 1), 0, 0, pat);       /* rank 1 loses g ppm+1 */
	eng_short_msg(s, n, ppm, 0, 0, 0, pat);
	eng_back(s, 1, 2 * ppm - 1, false, pat);                   /* its late copy */
	eng_short_msg(s, n, ppm, ENG_LOST(0, 1), 0x10, 0, pat);    /* unmarked: rank 0 goes back */
	eng_back(s, 0, ppm - 1, true, pat);
	for (unsigned p = 2; p < ppm; p++)
		put5(s, 0x10, 0, 0, 0, pat);
	for (unsigned c = 0; c < n; c++)
		put5(s, 4, (uint8_t)c, 0, 0, 0);
	eng_short_msg(s, n, ppm, ENG_LOST(n - 1, 0), 0, 0, pat);    /* a first packet lost */
	eng_back(s, n - 1, ppm, true, pat);
	for (unsigned p = 1; p < ppm; p++)
		put5(s, 0, (uint8_t)(n - 1), 0, 0, pat);
	for (unsigned c = 0; c < n; c++)
		put5(s, 4, (uint8_t)c, 0, 0, 0);
	eng_short_msg(s, n, ppm, ENG_LOST(n - 1, ppm - 1), 0, 0, pat); /* a tail loss */
	put(s, 5);
	put(s, 0x82);                                              /* 20 ms */
	for (unsigned c = 0; c < n; c++)
		put5(s, 4, (uint8_t)c, 0, 0, 0);
	eng_short_msg(s, n, ppm, ENG_LOST(0, 1) | ENG_LOST(1, 2), 0, 0x40, pat); /* RETH: 9 more */
	put(s, 5);
	put(s, 0x82);
	for (unsigned c = 0; c < n; c++)
		put5(s, 4, (uint8_t)c, 0, 0, 0);
	if (ppm == 3) {         /* two losses in 3 packets: the second over the bound */
		eng_short_msg(s, n, ppm, ENG_LOST(0, 1) | ENG_LOST(1, 2), 0, 0, pat);
		eng_short_msg(s, n, ppm, 0, 0, 0, pat);
		eng_back(s, 1, ppm + 1, true, pat);
		for (unsigned p = 0; p < ppm; p++)
			put5(s, 0, 1, 0, 0, pat);
		for (unsigned c = 0; c < n; c++)
			put5(s, 4, (uint8_t)c, 0, 0, 0);
	}
	/* an unmarked message's tail loss: probed, never short; the rank goes back */
	eng_short_msg(s, n, ppm, ENG_LOST(n - 1, ppm - 1), 0x10, 0, pat);
	put(s, 5);
	put(s, 0x82);
	eng_back(s, n - 1, 1, true, pat);
	for (unsigned c = 0; c < n; c++)
		put5(s, 4, (uint8_t)c, 0, 0, 0);
}

/*
 * Late ranks on a job with short slots (500000 ppm, a 1 s timeout): rank 0
 * sends all but the last packet of a message and stops, the others come
 * once the monitor held it (150 ms); the slot left waiting for rank 0 is not
 * short during rank 0's RNR wait; rank 0 goes back to its mark and finishes.
 */
static void eng_short_late(struct seedbuf *s, unsigned n, unsigned ppm)
{
	put(s, 0);
	put(s, (uint8_t)((n - 1) | 1 << 6 | 0x80));
	put(s, (uint8_t)((ppm - 1) | 9 << 2));
	put(s, (uint8_t)(0x80 | n));
	put(s, 0x40);
	eng_short_msg(s, n, ppm, 0, 0, 0, 1);
	for (unsigned p = 0; p + 1 < ppm; p++)
		put5(s, 0, 0, 0, 0, 1);
	for (unsigned k = 0; k < 3; k++) {
		put(s, 5);
		put(s, 0x85);                   /* 50 ms */
	}
	for (unsigned p = 0; p < ppm; p++)
		for (unsigned c = 1; c < n; c++)
			put5(s, 0, (uint8_t)c, 0, 0, 1);
	put(s, 5);
	put(s, 0x01);                           /* 0.1 ms */
	put(s, 5);
	put(s, 0x82);                           /* 20 ms */
	eng_back(s, 0, ppm - 1, true, 1);
	for (unsigned p = 1; p < ppm; p++)
		put5(s, 0, 0, 0, 0, 1);
	for (unsigned c = 0; c < n; c++)
		put5(s, 4, (uint8_t)c, 0, 0, 0);
}

static int gen_engine(nrz_seed_cb cb, void *ctx)
{
	struct seedbuf s;
	int n = 0;

	for (unsigned ranks = 1; ranks <= 5; ranks++) {
		for (unsigned mode = 0; mode < 2; mode++) {
			for (unsigned ppm = 1; ppm <= 3; ppm++) {
				char name[64];
				uint8_t b0 = (uint8_t)((ranks - 1) | (mode << 5) | (1 << 6));
				uint8_t b1 = (uint8_t)((ppm - 1) | (9 << 2));

				s.n = 0;
				eng_header(&s, 1, b0, b1, (uint8_t)(0x80 | ranks));
				eng_round(&s, 0, ranks, ppm, 5, (uint8_t)(ranks + mode), ppm == 2);
				/* retransmit the last packet of rank 0, then go back */
				put5(&s, 1, 0, 2 | 0x80, 0, 1);
				put(&s, 5);                   /* 50 ms: time out what is open */
				put(&s, 0x85);
				snprintf(name, sizeof(name), "r%u-%s-ppm%u", ranks,
					 mode ? "stream" : "ordered", ppm);
				cb(ctx, name, s.b, s.n);
				n++;
			}
		}
	}
	/* two jobs, interleaved; one deleted and re-added in the middle */
	s.n = 0;
	eng_header(&s, 2, 2 | 1 << 3, 1 | 20 << 2, 3);
	eng_round(&s, 0, 3, 2, 2, 3, false);
	eng_round(&s, 1, 3, 2, 2, 3, true);
	put(&s, 6); put(&s, 1); put(&s, 0x0F);          /* dup add, invalid add, delete */
	put(&s, 6); put(&s, 1); put(&s, 0x01);          /* re-add, new PSNs */
	eng_round(&s, 1, 3, 2, 2, 2, false);
	cb(ctx, "two-jobs", s.b, s.n);
	n++;
	/* mutated frames and hostile options on a 4-rank job */
	s.n = 0;
	eng_header(&s, 1, 3, 1 << 2, 0);
	for (unsigned k = 0; k < 12; k++) {
		put5(&s, 7, (uint8_t)(k % 4), 0, 0, 0);
		put(&s, 0); put(&s, (uint8_t)(40 + k)); put(&s, 0); put(&s, 0xFF);
	}
	for (unsigned k = 0; k < 8; k++)
		put5(&s, 0, (uint8_t)(k % 4), 1, (uint8_t)(0x10 | 0x20 | 0x40 | 0x80 | k), 0x73);
	cb(ctx, "hostile", s.b, s.n);
	n++;
	/* short slots: short_ppm 500000 (one in 2 or 3 packets) and 333334 (one
	 * in 3), DSCP 10 and 46, scaled and not; and short_ppm 0 */
	for (unsigned ranks = 2; ranks <= 4; ranks++) {
		for (unsigned mode = 0; mode < 2; mode++) {
			for (unsigned ppm = 2; ppm <= 3; ppm++) {
				char name[64];
				uint8_t sb = (uint8_t)((ppm == 3 && ranks == 3 ? 1 : 0) |
						       (mode ? 2 : 0) << 3 | (ranks + ppm) % 2 << 5);

				s.n = 0;
				eng_short_seed(&s, ranks, mode, ppm, sb, ranks == 4);
				snprintf(name, sizeof(name), "short-r%u-%s-ppm%u", ranks,
					 mode ? "stream" : "ordered", ppm);
				cb(ctx, name, s.b, s.n);
				n++;
			}
		}
	}
	s.n = 0;
	eng_short_seed(&s, 3, 0, 3, 3, false);
	cb(ctx, "short-ppm0", s.b, s.n);
	n++;
	s.n = 0;
	eng_short_late(&s, 2, 3);
	cb(ctx, "short-late-r2-ppm3", s.b, s.n);
	n++;
	s.n = 0;
	eng_short_late(&s, 3, 2);
	cb(ctx, "short-late-r3-ppm2", s.b, s.n);
	n++;
	return n;
}

/* ---- burst -------------------------------------------------------------------- */

/*
 * fuzz_burst.c's format.  Header: h0 (box shape | ICRC check off bit 4 |
 * burst 4 bit 5), h1 (jobs - 1 | priority classes bit 1 | selective bit 2),
 * per job b0 (ranks - 1 | MTU 512 bit 2 | pool
 * 4 bit 3 | streaming bit 4 | two channels bit 5 | MACs, ports and P_Key
 * registered bit 6 | result key bit 7), b1 (packets per message - 1 | last
 * length << 2 | hosts send to the box's MAC bit 6 | max bit 7), b2 (PSNs).
 * A burst: op 0, then port | (frames - 1) << 3, then 4 bytes a frame (kind |
 * flags, job << 7 | channel << 6 | connection, variant, pattern).  Rank r of
 * job k is host (2k + r) % 6, behind port host % ports: the target reduces
 * the port byte so, and the seeds give the host.
 */
static unsigned bu_host(unsigned job, unsigned rank, unsigned n)
{
	return (2 * job + rank % n) % 6;
}

/* One frame, a burst of its own on the port of host. */
static void bu_frame(struct seedbuf *s, unsigned host, uint8_t d0, uint8_t who, uint8_t var,
		     uint8_t pat)
{
	put(s, 0);
	put(s, (uint8_t)host);
	put(s, d0);
	put(s, who);
	put(s, var);
	put(s, pat);
}

/*
 * msgs messages of ppm packets on every rank of channel ch of job jb, each
 * rank's packets on its own port, every receiver acknowledging everything
 * emitted after each message: a job's all-reduce, start to end.
 */
static void bu_round(struct seedbuf *s, unsigned jb, unsigned ch, unsigned n, unsigned ppm,
		     unsigned msgs, uint8_t pat)
{
	uint8_t who = (uint8_t)(jb << 7 | ch << 6);

	for (unsigned m = 0; m < msgs; m++) {
		for (unsigned p = 0; p < ppm; p++)
			for (unsigned i = 0; i < n; i++)
				bu_frame(s, bu_host(jb, i, n), 0, (uint8_t)(who | i), 0, pat);
		for (unsigned i = 0; i < n; i++)
			bu_frame(s, bu_host(jb, i + 1, n), 6, (uint8_t)(who | i), 0, 0);
	}
}

static int gen_burst(nrz_seed_cb cb, void *ctx)
{
	struct seedbuf s;
	char name[64];
	int n = 0;

	/* every box shape: a job of 2..4 ranks runs to the end, messages of 1..3
	 * packets, ordered and streaming, loose and strict registration */
	for (unsigned shape = 0; shape < 6; shape++) {
		for (unsigned v = 0; v < 4; v++) {
			unsigned ranks = 2 + (shape + v) % 3, ppm = 1 + v % 3;
			bool strict = v & 1, via_box = shape == 4 && (v & 2);

			s.n = 0;
			put(&s, (uint8_t)shape);
			put(&s, 0);
			put(&s, (uint8_t)((ranks - 1) | (v & 2) << 3 | strict << 6 | (v == 3) << 7));
			put(&s, (uint8_t)((ppm - 1) | (5 + v) << 2 | via_box << 6));
			put(&s, (uint8_t)(0x80 | (3 + v)));
			bu_round(&s, 0, 0, ranks, ppm, 3, (uint8_t)v);
			put(&s, 5);                   /* 1.2 ms: the monitor's turn */
			put(&s, 12);
			snprintf(name, sizeof(name), "shape%u-r%u-ppm%u%s%s", shape, ranks, ppm,
				 strict ? "-strict" : "", via_box ? "-viabox" : "");
			cb(ctx, name, s.b, s.n);
			n++;
		}
	}
	/* two workers: two jobs of two channels each, frames handed over */
	s.n = 0;
	put(&s, 3);
	put(&s, 1);
	for (unsigned k = 0; k < 2; k++) {
		put(&s, (uint8_t)(2 | 1 << 5 | 1 << 6));
		put(&s, (uint8_t)(1 | 9 << 2));
		put(&s, (uint8_t)(5 + k));
	}
	for (unsigned ch = 0; ch < 2; ch++) {
		bu_round(&s, 0, ch, 3, 2, 2, 1);
		bu_round(&s, 1, ch, 3, 2, 2, 0);
	}
	cb(ctx, "two-workers-channels", s.b, s.n);
	n++;
	/* priority classes (h1 bit 1): a job of two channels, class 0 and class 1;
	 * each slot's last contributions, class 0's first, in one burst of the
	 * last rank's port, the ACKs after them */
	for (unsigned shape = 0; shape < 4; shape += 3) {
		s.n = 0;
		put(&s, (uint8_t)shape);
		put(&s, 2);
		put(&s, (uint8_t)(3 | 1 << 5));
		put(&s, (uint8_t)(1 | 6 << 2));
		put(&s, 7);
		for (unsigned m = 0; m < 3; m++) {
			for (unsigned p = 0; p < 2; p++) {
				for (unsigned i = 0; i < 3; i++)
					for (unsigned ch = 0; ch < 2; ch++)
						bu_frame(&s, bu_host(0, i, 4), 0,
							 (uint8_t)(ch << 6 | i), 0, (uint8_t)m);
				put(&s, 0);
				put(&s, (uint8_t)(bu_host(0, 3, 4) | 1 << 3));
				for (unsigned ch = 0; ch < 2; ch++) {
					put(&s, 0);
					put(&s, (uint8_t)(ch << 6 | 3));
					put(&s, 0);
					put(&s, (uint8_t)m);
				}
			}
			for (unsigned ch = 0; ch < 2; ch++)
				for (unsigned i = 0; i < 4; i++)
					bu_frame(&s, bu_host(0, i + 1, 4), 6,
						 (uint8_t)(ch << 6 | i), 0, 0);
		}
		snprintf(name, sizeof(name), "prio-classes-shape%u", shape);
		cb(ctx, name, s.b, s.n);
		n++;
	}
	/* a selective job (h1 bit 2) of 3 ranks: rank 1's packet lost before the
	 * box (its next one ahead: a selective NAK), then its resends; receivers'
	 * selective NAKs (variant 1 << 6) of the last result and of the two
	 * before it, answered by the box; the monitor's turn; everything ACKed */
	for (unsigned shape = 0; shape < 4; shape += 3) {
		s.n = 0;
		put(&s, (uint8_t)shape);
		put(&s, 4);
		put(&s, 2);
		put(&s, 0 | 6 << 2);
		put(&s, 0x83);
		bu_round(&s, 0, 0, 3, 1, 2, 0);
		bu_frame(&s, bu_host(0, 1, 3), 5, 1, 1, 1); /* rank 1: one ahead */
		bu_frame(&s, bu_host(0, 0, 3), 0, 0, 0, 1);
		bu_frame(&s, bu_host(0, 2, 3), 0, 2, 0, 1);
		put(&s, 5);
		put(&s, 20);                                /* 2 ms */
		bu_frame(&s, bu_host(0, 1, 3), 0, 1, 0, 1); /* the lost one */
		bu_frame(&s, bu_host(0, 1, 3), 0, 1, 0, 1); /* and the one ahead again */
		bu_frame(&s, bu_host(0, 0, 3), 0, 0, 0, 1);
		bu_frame(&s, bu_host(0, 2, 3), 0, 2, 0, 1);
		bu_frame(&s, bu_host(0, 1, 3), 7, 0, 1 | 1 << 6, 1);
		bu_frame(&s, bu_host(0, 2, 3), 7, 1, 1 | 1 << 2 | 1 << 6, 2);
		bu_frame(&s, bu_host(0, 2, 3), 7, 1, 1 | 1 << 2 | 1 << 6, 2); /* an echo */
		put(&s, 5);
		put(&s, 0x82); /* 20 ms: re-arms, probes */
		for (unsigned i = 0; i < 3; i++)
			bu_frame(&s, bu_host(0, i + 1, 3), 6, (uint8_t)i, 0, 0);
		bu_round(&s, 0, 0, 3, 1, 1, 1);
		snprintf(name, sizeof(name), "selective-shape%u", shape);
		cb(ctx, name, s.b, s.n);
		n++;
	}
	/* a job deleted with contributions held, re-added with new PSNs, run again;
	 * the other job times out half way */
	s.n = 0;
	put(&s, 2);
	put(&s, 1);
	put(&s, 3); put(&s, 0); put(&s, 9);
	put(&s, 2); put(&s, 1 | 4 << 2); put(&s, 0x81);
	bu_round(&s, 0, 0, 4, 1, 1, 0);
	bu_frame(&s, bu_host(0, 0, 4), 0, 0, 0, 0);      /* held, then deleted */
	put(&s, 6); put(&s, 0x00);                       /* delete job 0 */
	put(&s, 6); put(&s, 0x10);                       /* re-add, other PSNs */
	bu_round(&s, 0, 0, 4, 1, 2, 1);
	put(&s, 6); put(&s, 0x03);                       /* job 1 added twice: refused */
	put(&s, 6); put(&s, 0x05);                       /* over job 1's conns: refused */
	bu_frame(&s, bu_host(1, 0, 3), 0, 0x80, 0, 0);
	bu_frame(&s, bu_host(1, 1, 3), 0, 0x81, 0, 0);
	put(&s, 5); put(&s, 0x86);                       /* 60 ms: job 1 fails */
	put(&s, 6); put(&s, 0x07);                       /* its status */
	bu_round(&s, 0, 0, 4, 1, 1, 0);
	cb(ctx, "delete-readd-timeout", s.b, s.n);
	n++;
	/* hostile bursts of 32 on a strict 3-rank job, one frame of every kind */
	for (unsigned shape = 0; shape < 6; shape += 3) {
		s.n = 0;
		put(&s, (uint8_t)shape);
		put(&s, 0);
		put(&s, 2 | 1 << 6); put(&s, 1 | 6 << 2); put(&s, 0x11);
		bu_round(&s, 0, 0, 3, 2, 1, 0);
		put(&s, 0);
		put(&s, 31 << 3);
		for (unsigned k = 0; k < 32; k++) {
			put(&s, (uint8_t)(k % 16 | (k & 0x30) << 2));
			put(&s, (uint8_t)(k % 3));
			put(&s, (uint8_t)(k * 37));
			put(&s, (uint8_t)(k * 11));
			if (k % 16 == 8)              /* flips: position and bits of each */
				for (unsigned f = 0; f < 1 + (uint8_t)(k * 37) % 4u; f++) {
					put(&s, (uint8_t)(f * 29 + 20));
					put(&s, 0);
					put(&s, 0x10);
				}
			if (k % 16 == 15)             /* raw bytes: as many as the variant says */
				for (unsigned b = 0; b < (uint8_t)(k * 37); b++)
					put(&s, (uint8_t)(b * 7));
		}
		bu_round(&s, 0, 0, 3, 2, 2, 1);
		snprintf(name, sizeof(name), "hostile-shape%u", shape);
		cb(ctx, name, s.b, s.n);
		n++;
	}
	return n;
}

/* ---- control ------------------------------------------------------------------ */

static const char *const ctl_lines[] = {
	"{\"op\":\"backend_info\"}",
	"{\"op\":\"stats\"}",
	"{\"op\":\"job_list\"}",
	"{\"op\":\"job_create\",\"spec\":{\"mtu\":1024,\"msg_size\":4096,\"pool_msgs\":4,"
	"\"mode\":\"ordered\",\"timeout_ms\":5000,\"conns\":["
	"{\"src_ip\":\"10.77.0.1\",\"dst_ip\":\"10.77.0.2\",\"src_qpn\":17,\"dst_qpn\":18,\"ipsn\":0,"
	"\"src_mac\":\"02:00:00:00:00:01\",\"dst_mac\":\"02:00:00:00:00:02\"},"
	"{\"src_ip\":\"10.77.0.2\",\"dst_ip\":\"10.77.0.1\",\"src_qpn\":19,\"dst_qpn\":20,\"ipsn\":100}]}}\n"
	"{\"op\":\"job_status\",\"job\":$JOB,\"key\":\"$KEY\"}\n"
	"{\"op\":\"job_destroy\",\"job\":$JOB,\"key\":\"$KEY\"}",
	"{\"op\":\"job_create\",\"spec\":{\"mtu\":256,\"msg_size\":4,\"mode\":\"streaming\","
	"\"conns\":[{\"src_ip\":\"10.1.0.1\",\"dst_ip\":\"10.1.0.1\",\"src_qpn\":1,\"dst_qpn\":2}]}}\n"
	"{\"op\":\"job_status\",\"job\":$JOB}\n"
	"{\"op\":\"job_status\",\"job\":$JOB,\"key\":\"00000000000000000000000000000000\"}",
	"{\"op\":\"job_create\",\"spec\":{\"mtu\":1000,\"msg_size\":3,\"pool_msgs\":3,\"conns\":[]}}",
	"{\"op\":\"job_create\",\"spec\":{\"conns\":[{\"src_ip\":\"300.1.1.1\"}],\"bogus\":1}}",
	"{\"op\":\"job_destroy\",\"job\":4294967295,\"key\":\"zz\"}",
	"{\"op\":\"job_status\",\"job\":-1}",
	"{\"op\":\"nope\"}",
	"{\"op\":\"stats\",\"token\":\"wrong\"}",
	"{\"op\":\"stats\",\"token\":\"nrz-token-0123456789\"}",
	"{\"op\":\"job_create\",\"token\":\"nrz-token-0123456789\",\"spec\":{\"mtu\":512,\"msg_size\":2048,"
	"\"conns\":[{\"src_ip\":\"10.2.0.1\",\"dst_ip\":\"10.2.0.2\",\"src_qpn\":5,\"dst_qpn\":6},"
	"{\"src_ip\":\"10.2.0.2\",\"dst_ip\":\"10.2.0.1\",\"src_qpn\":7,\"dst_qpn\":8}]}}\n"
	"{\"op\":\"job_status\",\"token\":\"nrz-token-0123456789\",\"job\":$JOB,\"key\":\"$KEY\"}",
	"[1,2,3]",
	"{\"op\":",
	"null",
	"{\"op\":\"job_status\",\"job\":1.5e300}",
	"{\"op\":\"job_create\",\"spec\":{\"mtu\":4096,\"msg_size\":1073741824,\"pool_msgs\":1000000,"
	"\"conns\":[{\"src_ip\":\"10.3.0.1\",\"dst_ip\":\"10.3.0.2\",\"src_qpn\":16777216,"
	"\"dst_qpn\":0,\"ipsn\":16777216}]}}",
};

static int gen_control(nrz_seed_cb cb, void *ctx)
{
	char name[32];
	unsigned k;

	for (k = 0; k < sizeof(ctl_lines) / sizeof(ctl_lines[0]); k++) {
		snprintf(name, sizeof(name), "req%02u", k);
		cb(ctx, name, (const uint8_t *)ctl_lines[k], strlen(ctl_lines[k]));
	}
	return (int)k;
}

/* ---- ctlserver -------------------------------------------------------------------- */

/* A chunk of fuzz_ctlserver.c: connection, wait for the answers, shut our side. */
static void ctl_chunk(struct seedbuf *s, unsigned conn, bool wait, bool shut, const char *text)
{
	size_t n = strlen(text);

	while (n) {
		size_t k = n > 255 ? 255 : n;

		put(s, (uint8_t)(conn | (wait && k == n ? 4 : 0) | (shut && k == n ? 8 : 0)));
		put(s, (uint8_t)k);
		for (size_t i = 0; i < k; i++)
			put(s, (uint8_t)text[i]);
		text += k;
		n -= k;
	}
}

static int gen_ctlserver(nrz_seed_cb cb, void *ctx)
{
	struct seedbuf s;
	char name[64], line[2048];
	unsigned k;
	int n = 0;

	/* every control seed on an admin connection, and on TCP with the token added */
	for (k = 0; k < sizeof(ctl_lines) / sizeof(ctl_lines[0]); k++) {
		const char *l = ctl_lines[k];

		s.n = 0;
		put(&s, 1 | 1 << 2);         /* two connections: 0 admin, 1 TCP */
		put(&s, 1 << 1);             /* 1 starts authenticated */
		snprintf(line, sizeof(line), "%s\n", l);
		ctl_chunk(&s, 0, true, false, line);
		if (l[0] == '{' && l[1] == '"') {
			snprintf(line, sizeof(line), "{\"token\":\"$T\",%s\n", l + 1);
			ctl_chunk(&s, 1, true, false, line);
		} else {
			ctl_chunk(&s, 1, true, false, line);
		}
		snprintf(name, sizeof(name), "req%02u", k);
		cb(ctx, name, s.b, s.n);
		n++;
	}

	/* lines cut across chunks, CRLF, blank lines; an oversize line closes an admin */
	s.n = 0;
	put(&s, 0 | 1 << 2);
	put(&s, 0);
	ctl_chunk(&s, 0, true, false, "{\"op\":\"st");
	ctl_chunk(&s, 0, true, false, "ats\"}\r\n\n\r\n{\"op\":\"backend_");
	ctl_chunk(&s, 0, true, false, "info\"}\n[1]\n{\"op\":\"job_list\"}");
	ctl_chunk(&s, 0, true, false, "\n");
	/* a request of exactly max_line (512) bytes is served, one byte more closes */
	for (k = 512; k <= 513; k++) {
		memset(line, ' ', k);
		memcpy(line, "{\"op\":\"stats\"}", 14);
		line[k] = '\n';
		line[k + 1] = '\0';
		ctl_chunk(&s, 0, true, false, line);
	}
	ctl_chunk(&s, 0, true, false, "{\"op\":\"stats\"}\n");
	cb(ctx, "framing", s.b, s.n);
	n++;

	/* TCP: junk first, a wrong token first, junk after the token, a wrong token after it */
	s.n = 0;
	put(&s, 3);                  /* four TCP connections */
	put(&s, 1 << 2 | 1 << 3);
	ctl_chunk(&s, 0, true, false, "hello\n");
	ctl_chunk(&s, 0, true, false, "{\"op\":\"stats\",\"token\":\"$T\"}\n");
	ctl_chunk(&s, 1, true, false, "{\"op\":\"stats\",\"token\":\"nrz-token-012345678X\"}\n{\"op\":\"stats\"}\n");
	ctl_chunk(&s, 2, true, false, "not json\n{\"op\":\"stats\",\"token\":\"$T\"}\n");
	ctl_chunk(&s, 3, true, false, "{\"op\":\"stats\",\"token\":\"$T$T\"}\n");
	ctl_chunk(&s, 3, true, false, "{\"op\":\"stats\",\"token\":\"$T\"}\n");
	cb(ctx, "auth", s.b, s.n);
	n++;

	/* past the rate limit's burst; a connection shut early, then written to */
	s.n = 0;
	put(&s, 1 | 1 << 2);
	put(&s, 1 << 1);
	line[0] = '\0';
	for (k = 0; k < 60; k++)
		strcat(line, k % 3 ? "{\"op\":\"stats\"}\n" : "{}\n");
	ctl_chunk(&s, 0, false, false, line);
	ctl_chunk(&s, 1, true, true, "{\"op\":\"job_list\",\"token\":\"$T\"}\n{\"op\":");
	ctl_chunk(&s, 1, true, false, "\"stats\"}\n");
	cb(ctx, "rate-shut", s.b, s.n);
	n++;
	return n;
}

/* ---- rendezvous ------------------------------------------------------------------ */

/* An endpoint row of host 127.0.93.h, as nr_bootstrap.c writes one. */
static void rdv_row(char *buf, size_t len, unsigned h)
{
	snprintf(buf, len, "{\"ip\":\"127.0.93.%u\",\"mac\":\"02:00:00:00:5d:%02x\",\"box\":["
		 "{\"send\":{\"qpn\":%u,\"psn\":7,\"port\":4791,\"sport\":49152},\"recv\":{\"qpn\":%u,"
		 "\"psn\":8,\"port\":4791,\"sport\":49153},\"va\":4096,\"rkey\":%u}],\"plain\":{\"send\":"
		 "{\"qpn\":%u,\"psn\":16777215,\"port\":4791,\"sport\":65535},\"recv\":{\"qpn\":%u,"
		 "\"psn\":0,\"port\":0,\"sport\":0},\"va\":0,\"rkey\":4294967295}}", h, h, 0x100 + h,
		 0x200 + h, h, 0x300 + h, 0x400 + h);
}

/* A connection of the fuzzer's to rank 0: from (0 stray, 1 rank 1's address, 3 rank 0's),
 * before which genuine rank, a newline added. */
static void rdv_conn(struct seedbuf *s, unsigned from, unsigned before, bool nl, const char *text)
{
	size_t n = strlen(text);

	put(s, (uint8_t)(from | (before - 1) << 2 | (nl ? 16 : 0)));
	put(s, (uint8_t)n);
	put(s, (uint8_t)(n >> 8));
	for (size_t i = 0; i < n; i++)
		put(s, (uint8_t)text[i]);
}

/* A hello; extra: more members (",\"nonce\":\"$N\",\"proof\":\"$M\"": a proven one) */
static void rdv_hello_x(char *buf, size_t len, int rank, int world, const char *ip_or_row,
			const char *extra)
{
	snprintf(buf, len, "{\"hello\":{\"rank\":%d,\"world\":%d,\"mtu\":1024,\"msg_size\":65536,"
		 "\"transport\":\"soft\",\"box\":false,\"channels\":1},\"peer\":%s%s}", rank, world,
		 ip_or_row, extra);
}

static void rdv_hello(char *buf, size_t len, int rank, int world, const char *ip_or_row)
{
	rdv_hello_x(buf, len, rank, world, ip_or_row, ",\"nonce\":\"$N\"");
}

#define RDV_PROVEN ",\"nonce\":\"$N\",\"proof\":\"$M\""

/* byte 0 of a rank 0 input: world 2..4, the rank left out (0: none), fuzz connections */
static uint8_t rdv_root(unsigned world, unsigned left_out, unsigned conns)
{
	return (uint8_t)((world - 2) << 1 | left_out << 3 | conns << 5);
}

/* A member input: world, rank, flags (bit 5 no key, 6 the challenge's auth flipped, 7 its own). */
static uint8_t rdv_member(unsigned world, unsigned rank, unsigned flags)
{
	return (uint8_t)(1 | (world - 2) << 1 | (rank - 1) << 3 | flags);
}

/* A good table for world ranks, proved with proof ("$M", "$R", "$K", or "" for none), and a go. */
static size_t rdv_table(char *table, size_t cap, unsigned world, const char *proof)
{
	char row[1024];
	size_t len = (size_t)snprintf(table, cap, "{\"ok\":true,\"credits\":4,\"result_key\":77,"
				      "\"peers\":[");

	for (unsigned r = 0; r < world; r++) {
		rdv_row(row, sizeof(row), r ? 11 + r : 10);
		len += (size_t)snprintf(table + len, cap - len, "%s%s", r ? "," : "", row);
	}
	if (*proof)
		len += (size_t)snprintf(table + len, cap - len, "],\"proof\":\"%s\"}\n"
					"{\"go\":\"the rendezvous of the layout\",\"proof\":\"%s\"}\n",
					proof, proof);
	else
		len += (size_t)snprintf(table + len, cap - len, "]}\n{\"go\":\"x\"}\n");
	return len;
}

static int gen_rendezvous(nrz_seed_cb cb, void *ctx)
{
	char row[1024], hello[2048], table[8192];
	struct seedbuf s;
	int n = 0;

	/* rank 0: the genuine ranks alone; strays before and among them */
	s.n = 0;
	put(&s, rdv_root(2, 0, 0));
	cb(ctx, "root-plain", s.b, s.n);
	n++;

	s.n = 0;
	put(&s, rdv_root(3, 0, 2));
	rdv_row(row, sizeof(row), 12);      /* rank 1's row, sent from a stray address */
	rdv_hello(hello, sizeof(hello), 1, 3, row);
	rdv_conn(&s, 0, 1, true, "{}");
	rdv_conn(&s, 0, 2, true, hello);
	cb(ctx, "root-strays", s.b, s.n);
	n++;

	/* rank 2 of 4 left out: a timeout naming it, a stray and a cut hello meanwhile */
	s.n = 0;
	put(&s, rdv_root(4, 2, 2));
	rdv_conn(&s, 0, 2, true, "not json at all");
	rdv_hello(hello, sizeof(hello), 2, 4, "$P");
	hello[strlen(hello) / 2] = '\0';
	rdv_conn(&s, 0, 3, false, hello);
	cb(ctx, "root-left-out", s.b, s.n);
	n++;

	/* a hello from the address it claims: taking rank 1 first, another world, rank 9 */
	static const char *const claims[][2] = {
		{ "1", "3" }, { "2", "4" }, { "9", "3" }, { "0", "3" },
	};
	for (unsigned k = 0; k < sizeof(claims) / sizeof(claims[0]); k++) {
		char name[32];

		s.n = 0;
		put(&s, rdv_root(3, 0, 1));
		rdv_hello(hello, sizeof(hello), atoi(claims[k][0]), atoi(claims[k][1]), "$P");
		rdv_conn(&s, k == 3 ? 1 : 0, 1 + k % 2, true, hello);
		snprintf(name, sizeof(name), "root-claims-%u", k);
		cb(ctx, name, s.b, s.n);
		n++;
	}

	/* members: a good table and the barrier's go; without the go; an error; short */
	for (unsigned k = 0; k < 5; k++) {
		static const unsigned worlds[5] = { 3, 2, 4, 3, 3 };
		unsigned world = worlds[k], rank = k == 2 ? 3 : 1;
		char name[32];
		size_t len;

		s.n = 0;
		put(&s, (uint8_t)(1 | (world - 2) << 1 | (rank - 1) << 3));
		len = (size_t)snprintf(table, sizeof(table), "{\"ok\":true,\"credits\":4,"
				       "\"result_key\":%u,\"peers\":[", k == 1 ? 4294967295u : 77);
		for (unsigned r = 0; r < (k == 3 ? world - 1 : world); r++) {
			rdv_row(row, sizeof(row), r ? 11 + r : 10);
			len += (size_t)snprintf(table + len, sizeof(table) - len, "%s%s", r ? "," : "",
						row);
		}
		snprintf(table + len, sizeof(table) - len, "],\"proof\":\"$M\"}\n%s",
			 k == 1 ? "" : "{\"go\":\"connecting the rings\",\"proof\":\"$M\"}\n");
		if (k == 4)
			snprintf(table, sizeof(table), "{\"ok\":false,\"error\":\"box said no\","
				 "\"code\":-5}\n");
		for (size_t i = 0; table[i]; i++)
			put(&s, (uint8_t)table[i]);
		snprintf(name, sizeof(name), "member-%u", k);
		cb(ctx, name, s.b, s.n);
		n++;
	}

	/* members and rank 0's proofs: none, a replay's, another key's; no key; auth flipped */
	static const struct { const char *name, *proof; unsigned flags; } mp[] = {
		{ "member-unproven", "", 0 }, { "member-replayed", "$R", 0 },
		{ "member-other-key", "$K", 0 }, { "member-no-key", "", 32 },
		{ "member-no-key-asked", "", 32 | 64 }, { "member-key-not-asked", "$M", 64 },
	};
	for (unsigned k = 0; k < sizeof(mp) / sizeof(mp[0]); k++) {
		s.n = 0;
		put(&s, rdv_member(3, 1 + k % 2, mp[k].flags));
		rdv_table(table, sizeof(table), 3, mp[k].proof);
		for (size_t i = 0; table[i]; i++)
			put(&s, (uint8_t)table[i]);
		cb(ctx, mp[k].name, s.b, s.n);
		n++;
	}
	/* turned away for its proof; its own challenge, malformed and well-formed */
	static const char *const own[] = {
		"{\"ok\":false,\"refused\":\"proof\",\"error\":\"no\",\"code\":-4}\n",
		"{\"rendezvous\":\"netreduce/0\",\"nonce\":\"00\",\"auth\":true}\n",
		"{\"rendezvous\":\"netreduce/1\",\"nonce\":\"000102030405060708090a0b0c0d0e0f101112"
		"131415161718191a1b1c1d1e1f\",\"auth\":true}\n",
	};
	for (unsigned k = 0; k < 3; k++) {
		char name[32];
		size_t len;

		s.n = 0;
		put(&s, rdv_member(2, 1, k ? 128 : 0));
		len = (size_t)snprintf(table, sizeof(table), "%s", own[k]);
		if (k == 2)
			rdv_table(table + len, sizeof(table) - len, 2, "$M");
		for (size_t i = 0; table[i]; i++)
			put(&s, (uint8_t)table[i]);
		snprintf(name, sizeof(name), "member-own-%u", k);
		cb(ctx, name, s.b, s.n);
		n++;
	}

	/*
	 * rank 0: a hello from rank 1's own address, before rank 1: unproven, a
	 * replay's proof, another key's; proven (it takes rank 1, the real one
	 * is turned away); a proven duplicate after rank 1, a proven rank 9, a
	 * proven other MTU (rank 0 fails, blaming its address); with rank 2 left
	 * out, an unproven one (the timeout names its address); no key at all.
	 */
	static const struct { const char *name, *proof; unsigned from, before, left_out, mode; int rank, mtu; } rp[] = {
		{ "root-proof-none", "", 1, 1, 0, 0, 1, 1024 },
		{ "root-proof-replayed", "$R", 1, 1, 0, 0, 1, 1024 },
		{ "root-proof-other-key", "$K", 1, 1, 0, 0, 1, 1024 },
		{ "root-proven-first", "$M", 1, 1, 0, 0, 1, 1024 },
		{ "root-proven-taken", "$M", 1, 2, 0, 0, 1, 1024 },
		{ "root-proven-rank-9", "$M", 0, 2, 0, 0, 9, 1024 },
		{ "root-proven-mtu", "$M", 1, 1, 0, 0, 1, 2048 },
		{ "root-proof-left-out", "$K", 1, 1, 2, 0, 1, 1024 },
		{ "root-no-key", "", 1, 2, 0, 1, 1, 1024 },
	};
	for (unsigned k = 0; k < sizeof(rp) / sizeof(rp[0]); k++) {
		char extra[64];

		s.n = 0;
		put(&s, rdv_root(3, rp[k].left_out, 1));
		snprintf(extra, sizeof(extra), ",\"nonce\":\"$N\"%s%s%s", *rp[k].proof ?
			 ",\"proof\":\"" : "", rp[k].proof, *rp[k].proof ? "\"" : "");
		rdv_hello_x(hello, sizeof(hello), rp[k].rank, 3, "$P", extra);
		if (rp[k].mtu != 1024) {
			char *m = strstr(hello, "\"mtu\":1024");

			memcpy(m, "\"mtu\":2048", 10);
		}
		rdv_conn(&s, rp[k].from, rp[k].before, true, hello);
		put(&s, (uint8_t)rp[k].mode);
		cb(ctx, rp[k].name, s.b, s.n);
		n++;
	}
	(void)RDV_PROVEN;
	return n;
}

/* ---- soft ---------------------------------------------------------------------- */

/*
 * A packet record of fuzz_soft.c: kind 0 (write-class) or 3 (ACK/NAK); b1:
 * opcode | QP << 3 | AckReq << 4 | poll now << 5 | PSN mode << 6; b3/b4:
 * length mode and byte (ACK: syndrome choice and byte); b5: RETH choices;
 * off: VA offset; dma: RETH length; mut/at: mutations.
 */
static void soft_pkt(struct seedbuf *s, uint8_t kind, uint8_t b1, uint8_t b2, uint8_t b3,
		     uint8_t b4, uint8_t b5, uint16_t off, uint16_t dma, uint8_t mut, uint8_t at)
{
	put(s, kind);
	put(s, b1);
	put(s, b2);
	put(s, b3);
	put(s, b4);
	put(s, b5);
	put(s, (uint8_t)off);
	put(s, (uint8_t)(off >> 8));
	put(s, (uint8_t)dma);
	put(s, (uint8_t)(dma >> 8));
	put(s, mut);
	put(s, at);
	put(s, 0x34);                /* ImmDt low bytes */
	put(s, 0x12);
	put(s, 0x5C);                /* payload pattern */
	put(s, 0x77);                /* a QPN that is none of ours */
}

enum { SW_FIRST, SW_MIDDLE, SW_LAST, SW_LAST_IMM, SW_ONLY, SW_ONLY_IMM, SW_SEND, SW_UC };
#define SQP(q)   ((q) << 3)
#define SACKREQ  (1 << 4)
#define SNOW     (1 << 5)
#define SPSN(m)  ((m) << 6)

/* A 3-packet message with immediate into region 0 at offset off, in order. */
static void soft_msg3(struct seedbuf *s, unsigned qp, uint16_t off, bool now)
{
	soft_pkt(s, 0, SW_FIRST | SQP(qp), 0, 0, 0, 2 << 2, off, 2, 0, 0);
	soft_pkt(s, 0, SW_MIDDLE | SQP(qp), 0, 0, 0, 0, 0, 0, 0, 0);
	soft_pkt(s, 0, SW_LAST_IMM | SQP(qp) | SACKREQ | (now ? SNOW : 0), 0, 1, 0, 0, 0, 0, 0, 0);
}

static void soft_header(struct seedbuf *s, uint8_t h0)
{
	s->n = 0;
	put(s, h0);
	put(s, 3 | 2 << 3);          /* retry_cnt 3, rnr_retry 2 */
	put(s, 0x3F);                /* region 0: 2048 bytes, region 1: 256 */
	put(s, 2);                   /* our PSNs start 2 below the wrap */
	put(s, 1);                   /* the peer's QP 0 too */
}

static int gen_soft(nrz_seed_cb cb, void *ctx)
{
	static const char *const pname[] = { "rnic", "rxe", "legacy" };
	static const uint8_t pbits[] = { 0, 1 << 2, 2 << 2 };
	struct seedbuf s;
	char name[64];
	int n = 0;

	for (unsigned pi = 0; pi < 3; pi++) {
		for (unsigned mi = 0; mi < 2; mi++) {
			uint8_t h0 = (uint8_t)((mi ? 1 : 0) | pbits[pi] | 16 | (pi == 0 && mi ? 32 : 0));

			/* messages in order on both QPs; a duplicate, a gap, then in order again */
			soft_header(&s, h0);
			put(&s, 5); put(&s, 0 | 3 << 1);            /* 4 receives on QP 0 */
			put(&s, 5); put(&s, 1 | 1 << 1);            /* 2 on QP 1 */
			soft_msg3(&s, 0, 0, false);
			soft_pkt(&s, 0, SW_ONLY_IMM | SQP(1) | SACKREQ | SNOW, 0, 2, 100, 1 << 2,
				 16, 0, 0, 0);
			soft_pkt(&s, 0, SW_LAST_IMM | SPSN(2), 0, 1, 0, 0, 0, 0, 0, 0);
			soft_pkt(&s, 0, SW_ONLY | SPSN(1), 3, 2, 8, 1 << 2, 0, 0, 0, 0);
			soft_pkt(&s, 0, SW_ONLY | SPSN(1), 4, 2, 8, 1 << 2, 0, 0, 0, 0);
			soft_msg3(&s, 0, 64, true);
			soft_pkt(&s, 0, SW_ONLY_IMM | SACKREQ | SNOW, 0, 2, 0, 1 << 2, 0, 0, 0, 0);
			put(&s, 5); put(&s, 0);                     /* takes the early one */
			put(&s, 6);
			snprintf(name, sizeof(name), "msgs-%s-mtu%u", pname[pi], mi ? 512 : 256);
			cb(ctx, name, s.b, s.n);
			n++;

			/* writes ACKed, sequence-NAKed, RNR-NAKed, ACKed again */
			soft_header(&s, h0);
			put(&s, 4); put(&s, 0); put(&s, 44); put(&s, 1); put(&s, 1);      /* 300 B */
			put(&s, 4); put(&s, 0); put(&s, 88); put(&s, 2); put(&s, 2);      /* 600 B */
			put(&s, 4); put(&s, 1); put(&s, 0); put(&s, 0); put(&s, 3);       /* 0 B */
			put(&s, 6);
			soft_pkt(&s, 3, SPSN(2) | SNOW, 0, 0, 0, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(0), 1, 1, 0, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(0), 1, 1, 0, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(0) | SNOW, 1, 2, 1, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(1) | SQP(1) | SNOW, 0, 0, 0, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(1) | SNOW, 0, 0, 0, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(1), 5, 0, 0, 0, 0, 0, 0, 0);          /* stale */
			put(&s, 4); put(&s, 0); put(&s, 0); put(&s, 1); put(&s, 4);       /* 256 B */
			put(&s, 6);
			soft_pkt(&s, 3, SPSN(0) | SNOW, 0, 2, 3, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(0) | SNOW, 0, 2, 3, 0, 0, 0, 0, 0);
			soft_pkt(&s, 3, SPSN(0) | SNOW, 0, 2, 3, 0, 0, 0, 0, 0);
			snprintf(name, sizeof(name), "acks-%s-mtu%u", pname[pi], mi ? 512 : 256);
			cb(ctx, name, s.b, s.n);
			n++;
		}
	}

	/* errors: an access error, a middle without a first, a NAK, then the QPs in error */
	soft_header(&s, 16);
	put(&s, 5); put(&s, 0 | 1 << 1);
	put(&s, 4); put(&s, 0); put(&s, 10); put(&s, 0); put(&s, 9);
	put(&s, 6);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 16, 2 | 1 << 2, 0, 0, 0, 0);      /* wrong rkey */
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 16, 1 << 2, 0, 0, 0, 0);          /* QP in error */
	soft_pkt(&s, 0, SW_MIDDLE | SQP(1) | SNOW, 0, 0, 0, 0, 0, 0, 0, 0);
	put(&s, 5); put(&s, 0);
	put(&s, 4); put(&s, 1); put(&s, 1); put(&s, 0); put(&s, 9);
	put(&s, 6);
	cb(ctx, "errors-access-badreq", s.b, s.n);
	n++;

	soft_header(&s, 16 | 1 << 2);
	put(&s, 4); put(&s, 0); put(&s, 10); put(&s, 0); put(&s, 9);
	put(&s, 6);
	soft_pkt(&s, 3, SPSN(0) | SNOW, 0, 3, 1, 0, 0, 0, 0, 0);     /* NAK remote access */
	soft_pkt(&s, 0, SW_ONLY | SNOW, 0, 2, 8, 1 | 1 << 2 | 32, 8, 0, 0, 0);     /* end of region 1 */
	soft_pkt(&s, 0, SW_ONLY | SQP(1) | SNOW, 0, 2, 8, 1 | 1 << 2 | 32, 4, 0, 0, 0);
	soft_pkt(&s, 0, SW_ONLY | SQP(1) | SNOW, 0, 2, 8, 1 << 2 | 16, 4, 0, 0, 0); /* VA wraps */
	cb(ctx, "errors-nak-bounds", s.b, s.n);
	n++;

	/* mutants of a good packet: wrong source, wrong QPN, bad ICRC, cut, flipped, raw */
	soft_header(&s, 16);
	put(&s, 5); put(&s, 0 | 3 << 1);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 32, 1 << 2, 0, 0, 1, 0);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 32, 1 << 2, 0, 0, 2, 0);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 32, 1 << 2, 0, 0, 4, 0);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 32, 1 << 2, 0, 0, 8, 3);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 32, 1 << 2, 0, 0, 8 | 32, 3);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 2, 32, 1 << 2, 0, 0, 16 | 32, 13);
	soft_pkt(&s, 0, SW_SEND | SNOW, 0, 2, 32, 0, 0, 0, 0, 0);
	soft_pkt(&s, 0, SW_UC | SNOW, 0, 2, 32, 1 << 2, 0, 0, 0, 0);
	soft_pkt(&s, 0, SW_ONLY_IMM | SNOW, 0, 3, 0, 1 << 2, 0, 0, 0, 0);         /* over the MTU */
	put(&s, 7); put(&s, 3); put(&s, 16);
	for (unsigned k = 0; k < 16; k++)
		put(&s, (uint8_t)(k == 0 ? NR_OP_RC_ACK : k * 17));
	put(&s, 7); put(&s, 2); put(&s, 3); put(&s, 1); put(&s, 2); put(&s, 3);
	cb(ctx, "mutants", s.b, s.n);
	n++;
	return n;
}

/* ---- owner, l2 ------------------------------------------------------------------ */

/*
 * owner: a small map filled past its cap, cleared in another order, refilled
 * (runs that wrap the end of the map, moves on every deletion); l2: each
 * port's cap reached, pins taken over and given back, time passing the ageing
 * time, sweeps, the VLAN cases; two owners' pins past a port's pin cap, static
 * entries against thieves and pins, a bucket of statics.
 */
static int gen_tables(const char *target, nrz_seed_cb cb, void *ctx)
{
	struct seedbuf s = { .n = 0 };
	int n = 0;

	if (!strcmp(target, "owner")) {
		for (unsigned size = 1; size <= 33; size += 16) {
			s.n = 0;
			put(&s, (uint8_t)(size - 1));
			for (unsigned k = 0; k < 80; k++) {       /* set past the cap */
				put(&s, 0); put(&s, (uint8_t)(k * 37)); put(&s, (uint8_t)k);
			}
			for (unsigned k = 0; k < 80; k += 2) {    /* clear every other one */
				put(&s, 1); put(&s, (uint8_t)(k * 37)); put(&s, 0);
			}
			for (unsigned k = 0; k < 80; k++) {       /* refill, look up */
				put(&s, 0); put(&s, (uint8_t)(k * 11)); put(&s, 3);
				put(&s, 2); put(&s, (uint8_t)(k * 37)); put(&s, 0);
			}
			cb(ctx, size == 1 ? "fill-tiny" : size == 17 ? "fill-small" : "fill", s.b, s.n);
			n++;
		}
		return n;
	}
	/* l2 */
	/* clang-format off */
	put(&s, 2); put(&s, 0); put(&s, 7);
	for (unsigned m = 0; m < 16; m++) {               /* port 1 past its cap (3) */
		put(&s, 0); put(&s, (uint8_t)m); put(&s, 1);
	}
	put(&s, 2); put(&s, 12); put(&s, 0);              /* pin, steal, VLANs */
	put(&s, 0); put(&s, 12); put(&s, 2);
	put(&s, 8); put(&s, 12); put(&s, 2);
	put(&s, 16); put(&s, 13); put(&s, 2);
	put(&s, 4); put(&s, 0); put(&s, 7);               /* age, sweep, unpin */
	put(&s, 5); put(&s, 0); put(&s, 255);
	put(&s, 3); put(&s, 12); put(&s, 0);
	put(&s, 0); put(&s, 30); put(&s, 1);
	put(&s, 0); put(&s, 31); put(&s, 33);
	cb(ctx, "cap-pin-age", s.b, s.n);
	n++;
	s.n = 0;
	put(&s, 15); put(&s, 3); put(&s, 7);
	for (unsigned m = 0; m < 12; m++) {               /* one bucket: ways, pins, FULL */
		put(&s, 0); put(&s, (uint8_t)m); put(&s, (uint8_t)m);
		put(&s, 2); put(&s, (uint8_t)m); put(&s, 0);
	}
	for (unsigned m = 0; m < 12; m++) {
		put(&s, 3); put(&s, (uint8_t)m); put(&s, 0);
		put(&s, 0); put(&s, (uint8_t)m); put(&s, 5);
	}
	cb(ctx, "one-bucket", s.b, s.n);
	n++;
	s.n = 0;
	put(&s, 15); put(&s, 3); put(&s, 1);               /* pin cap 2 a port */
	for (unsigned m = 12; m < 16; m++) {              /* owner 1 pins, owner 2 refused */
		put(&s, 0); put(&s, (uint8_t)m); put(&s, 4);
		put(&s, 2); put(&s, (uint8_t)m); put(&s, 0);
		put(&s, 10); put(&s, (uint8_t)m); put(&s, 0);
	}
	put(&s, 1); put(&s, 20); put(&s, 6);              /* static, then a thief, a pin */
	put(&s, 0); put(&s, 20); put(&s, 4);
	put(&s, 10); put(&s, 20); put(&s, 0);
	put(&s, 3); put(&s, 20); put(&s, 0);
	put(&s, 1); put(&s, 12); put(&s, 6);
	put(&s, 1); put(&s, 31); put(&s, 6);
	for (unsigned m = 0; m < 12; m++) {               /* one bucket of statics */
		put(&s, 1); put(&s, (uint8_t)m); put(&s, (uint8_t)m);
		put(&s, 2); put(&s, (uint8_t)m); put(&s, 0);
	}
	/* clang-format on */
	cb(ctx, "owners-static", s.b, s.n);
	return n + 1;
}

/* ---- tenant ------------------------------------------------------------------- */

/* A tenant of fuzz_tenant.c: flags, ranges, MACs, limits, pool limit, fault, reservations. */
static void ten_cfg(struct seedbuf *s, uint8_t fl, uint8_t rng, uint8_t macs, uint8_t lim,
		    uint8_t pool, uint8_t fault, uint8_t res)
{
	put(s, fl);
	put(s, rng);
	put(s, macs);
	put(s, lim);
	put(s, pool);
	put(s, fault);
	put(s, res);
}

/* job_create by who: ranks 1..4, mtu, msg_size and pool_msgs of the target's tables. */
static void ten_create(struct seedbuf *s, uint8_t who, unsigned ranks, unsigned mtu, unsigned size,
		       unsigned pool, uint8_t fl)
{
	put(s, 0);
	put(s, who);
	put(s, (uint8_t)((ranks - 1) | mtu << 2 | size << 4 | pool << 6));
	put(s, fl);
}

/* One connection: IPs of the pool, QPNs 1..8, MACs (0 none, 1-8 the pool, 10 nobody's). */
static void ten_conn(struct seedbuf *s, unsigned sip, unsigned dip, unsigned sq, unsigned dq,
		     unsigned sm, unsigned dm)
{
	put(s, (uint8_t)(sip | dip << 4));
	put(s, (uint8_t)((sq - 1) | (dq - 1) << 4));
	put(s, (uint8_t)(sm | dm << 4));
}

/* job_destroy (1), job_status (2), job_renew (3) by who of job jb with key variant kv. */
static void ten_access(struct seedbuf *s, uint8_t op, uint8_t who, uint8_t jb, uint8_t kv)
{
	put(s, op);
	put(s, who);
	put(s, jb);
	put(s, kv);
}

static const char *const ten_files[] = {
	"{\"tenants\": [{\"name\": \"vision\", \"token\": \"vision-token-0123456789\", "
	"\"ips\": [\"10.0.0.0/24\", \"10.2.0.0/31\"], \"macs\": [\"02:ab:00:00:00:01\"], "
	"\"max_jobs\": 2, \"max_pool_bytes\": 65536, \"max_conns\": 3}, "
	"{\"name\": \"speech\", \"token\": \"speech-token-0123456789\", \"ips\": [\"0.0.0.0/0\"]}]}",
	"{\"tenants\": []}",
	"{\"tenants\": [{\"name\": \"c\", \"token\": \"short\", \"ips\": [\"10.0.0.0/8\"]}]}",
	"{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": "
	"[\"10.0.0.0/8\", \"10.1.2.3/16\"]}]}",
	"{\"tenants\": [{\"name\": \"c\", \"token\": \"cccccccccccccccccccc\", \"ips\": "
	"[\"10.0.0.0/8\"], \"macs\": [\"01:00:5e:00:00:01\"]}]}",
	"{\"tenants\": [{\"name\": \"c\", \"token\": \"token-of-tenant-a-0123456789\", "
	"\"ips\": [\"10.0.0.0/8\"]}]}",
	"{\"tenants\": [{\"name\": \"d\", \"token\": \"dddddddddddddddddddd\", \"ips\": [\"10.9.0.0/16\"], "
	"\"max_jobs\": 0}], \"x\": 1}",
	"{\"tenants\": [{\"name\": \"e\", \"token\": \"eeeeeeeeeeeeeeee\\u0000eeee\", \"ips\": [\"10.9.0.0/16\"]}]}",
	"{\"tenants\": [",
};

/*
 * The tenants of most seeds: t0 10.0.0.0/24 and 10.1.0.5 with MACs 1-2 and
 * max_jobs 2; t1 10.0.1.0/24 and 10.2.0.0/31, MACs 3-4, 64 KiB of pool;
 * t2 any address, no MACs, its token t1's and an x.
 */
static void ten_three(struct seedbuf *s)
{
	ten_cfg(s, 0x07, 0x21, 0x03, 1, 0, 0, 0);
	ten_cfg(s, 0x0b, 0x42, 0x0c, 0, 2, 0, 0);
	ten_cfg(s, 0x20, 0, 0, 0, 0, 0, 0);
}

/* Jobs of the three tenants: in and out of their addresses, taken, past quotas, keys. */
static void ten_script(struct seedbuf *s)
{
	/* clang-format off */
	ten_create(s, 0, 2, 1, 1, 1, 0);                  /* t0: job 0 */
	ten_conn(s, 0, 1, 1, 2, 1, 2); ten_conn(s, 1, 0, 3, 4, 2, 1);
	ten_create(s, 1, 2, 2, 2, 0, 0);                  /* t1: job 1 */
	ten_conn(s, 2, 3, 1, 2, 3, 4); ten_conn(s, 3, 2, 3, 4, 4, 3);
	ten_create(s, 1, 1, 0, 0, 0, 0);                  /* t1 on t0's address */
	ten_conn(s, 0, 2, 5, 6, 0, 0);
	ten_create(s, 2, 1, 0, 0, 0, 0);                  /* t2 on job 0's QP */
	ten_conn(s, 0, 12, 1, 7, 0, 0);
	ten_create(s, 3, 1, 0, 0, 0, 0);                  /* the admin on it */
	ten_conn(s, 14, 1, 5, 2, 0, 0);
	ten_create(s, 2, 1, 0, 0, 0, 0);                  /* t2 names a MAC: pinned */
	ten_conn(s, 14, 15, 5, 6, 3, 0);
	ten_create(s, 0, 1, 0, 0, 0, 0);                  /* t0: job 2, its second */
	ten_conn(s, 9, 15, 5, 6, 0, 1);
	ten_create(s, 0, 1, 0, 0, 0, 0);                  /* t0: at its max_jobs */
	ten_conn(s, 15, 9, 7, 8, 0, 0);
	ten_create(s, 0, 1, 0, 0, 0, 0);                  /* t0: nobody's MAC */
	ten_conn(s, 15, 9, 7, 8, 0, 10);
	ten_create(s, 1, 4, 3, 3, 3, 0);                  /* t1: past its pool */
	ten_conn(s, 2, 3, 5, 6, 0, 0); ten_conn(s, 3, 2, 7, 8, 0, 0);
	ten_conn(s, 11, 12, 5, 6, 0, 0); ten_conn(s, 12, 11, 7, 8, 0, 0);
	ten_create(s, 4, 2, 0, 0, 0, 8);                  /* no tenant's id, two channels */
	ten_conn(s, 5, 6, 1, 2, 0, 0); ten_conn(s, 6, 5, 3, 4, 0, 0);
	ten_conn(s, 5, 6, 5, 6, 0, 0); ten_conn(s, 6, 5, 7, 8, 0, 0);
	ten_create(s, 3, 1, 0, 0, 0, 1);                  /* a bad spec */
	ten_conn(s, 7, 8, 1, 1, 0, 0);
	ten_create(s, 3, 1, 0, 0, 0, 0);                  /* a QP both ways */
	ten_conn(s, 7, 7, 1, 1, 0, 0);
	ten_create(s, 3, 1, 0, 0, 0, 4);                  /* the backend refuses */
	ten_conn(s, 7, 8, 1, 1, 0, 0);
	for (uint8_t kv = 0; kv < 8; kv++) {              /* every key, by t0, t1, admin */
		ten_access(s, 2, 0, 0, kv);
		ten_access(s, 2, 1, 0, kv);
		ten_access(s, 3, 3, 0, kv);
	}
	ten_access(s, 2, 4, 3, 0);                        /* the id without a tenant */
	ten_access(s, 2, 0, 4, 0);                        /* no such job */
	for (uint8_t v = 0; v < 64; v++) {                /* tokens cut, extended, off; */
		put(s, 5); put(s, v % 3); put(s, v);      /* claiming a tenant or none */
	}
	put(s, 4); put(s, 3); put(s, 4); put(s, 0);       /* job_list: admin, t0 */
	put(s, 6); put(s, 3); put(s, 6); put(s, 1);       /* stats: admin, t1 */
	put(s, 7);                                        /* pinning off: t2's MAC */
	ten_create(s, 2, 1, 0, 0, 0, 0);
	ten_conn(s, 14, 15, 5, 6, 3, 0);
	put(s, 8); put(s, 1); put(s, 8); put(s, 3);       /* connections refused */
	put(s, 9);                                        /* a destroy refused */
	ten_access(s, 1, 0, 0, 0);
	ten_access(s, 1, 1, 0, 0);                        /* t1 destroys t0's job */
	ten_access(s, 1, 0, 0, 4);
	ten_access(s, 1, 3, 1, 1);                        /* the admin, no key */
	ten_access(s, 1, 0, 0, 0);                        /* gone */
	put(s, 6); put(s, 3);
	/* clang-format on */
}

static int gen_tenant(nrz_seed_cb cb, void *ctx)
{
	struct seedbuf s = { .n = 0 };
	char name[32];
	int n = 0;

	/* three tenants by the API, MACs pinned */
	put(&s, 0x05);
	ten_three(&s);
	ten_script(&s);
	cb(ctx, "api-pinned", s.b, s.n);
	n++;
	/* the same from a tenants file */
	s.n = 0;
	put(&s, 0x0d);
	ten_three(&s);
	ten_script(&s);
	cb(ctx, "file-pinned", s.b, s.n);
	n++;
	/* a file open to others: refused, then the API */
	s.n = 0;
	put(&s, 0x19);
	ten_three(&s);
	ten_script(&s);
	cb(ctx, "file-mode-open", s.b, s.n);
	n++;
	/* clang-format off */
	/* four tenants, each refused for a fault, by a file then the API */
	for (uint8_t fault = 1; fault < 8; fault++) {
		s.n = 0;
		put(&s, fault & 1 ? 0x0a : 0x02);
		ten_cfg(&s, 0x07, 0x01, 0x01, 0, 0, 0, 0);
		ten_cfg(&s, (uint8_t)(0x03 | (fault == 4 ? 0x80 : 0)), 0x02, 0x02, 0, 0, fault, 0);
		ten_cfg(&s, 0x41, 0x04, 0, 0, 0, 0, 0);   /* 255 characters */
		ten_cfg(&s, 0x21, 0x08, 0, 0, 0, 0, 0);   /* and one more: refused */
		ten_create(&s, 1, 1, 0, 0, 0, 0);
		ten_conn(&s, 2, 3, 1, 2, 0, 0);
		put(&s, 5); put(&s, 1); put(&s, 0);
		put(&s, 6); put(&s, 4);
		snprintf(name, sizeof(name), "fault%u", fault);
		cb(ctx, name, s.b, s.n);
		n++;
	}
	/* a box of 12 jobs, 16 channels, 512 mbufs: t0 reserves 2, 2, 64, t1 4, 4,
	 * 128; the admin's jobs fill what is left, then each tenant its own; by a
	 * file and by the API, then reservations the box cannot honour */
	for (unsigned v = 0; v < 3; v++) {
		s.n = 0;
		put(&s, v == 1 ? 0x4d : 0x45);
		put(&s, 0x2a);
		ten_cfg(&s, 0x00, 0, 0, 0, 0, 0, v == 2 ? 0x7a : 0x3a);
		ten_cfg(&s, 0x04, 0, 0, v == 2 ? 0 : 3, 0, 0, 0x4f);
		ten_cfg(&s, 0x00, 0, 0, 0, 0, 0, 0);
		for (unsigned k = 0; k < 9; k++) {         /* the admin: 6 fit */
			ten_create(&s, 3, 1, 0, 0, 0, 0);
			ten_conn(&s, k, k, 1, 2, 0, 0);
		}
		for (unsigned k = 0; k < 4; k++) {         /* t0, t1, t2 */
			ten_create(&s, (uint8_t)(k % 3), 1, 0, 0, 0, 0);
			ten_conn(&s, k, k, 3 + k % 3, 6, 0, 0);
		}
		ten_create(&s, 1, 2, 0, 0, 3, 8);          /* two channels of 64 frames */
		ten_conn(&s, 9, 10, 1, 2, 0, 0);
		ten_conn(&s, 10, 9, 3, 4, 0, 0);
		ten_conn(&s, 9, 10, 5, 6, 0, 0);
		ten_conn(&s, 10, 9, 7, 8, 0, 0);
		put(&s, 6);
		put(&s, 3);
		ten_access(&s, 1, 3, 0, 1);
		ten_create(&s, 2, 1, 0, 0, 0, 0);
		ten_conn(&s, 11, 12, 1, 2, 0, 0);
		snprintf(name, sizeof(name), "reserve%u", v);
		cb(ctx, name, s.b, s.n);
		n++;
	}
	/* raw tenants files, good and bad, beside the three */
	for (unsigned k = 0; k < sizeof(ten_files) / sizeof(ten_files[0]); k++) {
		size_t len = strlen(ten_files[k]);

		s.n = 0;
		put(&s, 0x25);
		put(&s, (uint8_t)len);
		put(&s, (uint8_t)(len >> 8));
		for (size_t i = 0; i < len; i++)
			put(&s, (uint8_t)ten_files[k][i]);
		ten_three(&s);
		for (uint8_t v = 0; v < 8; v++) {
			put(&s, 5); put(&s, 3); put(&s, v);
			put(&s, 5); put(&s, 4); put(&s, v);
		}
		ten_create(&s, 3, 1, 0, 0, 0, 0);
		ten_conn(&s, 0, 1, 1, 2, 1, 0);
		put(&s, 6); put(&s, 3);
		snprintf(name, sizeof(name), "raw-file%u", k);
		cb(ctx, name, s.b, s.n);
		n++;
	}
	/* clang-format on */
	return n;
}

int nrz_gen_seeds(const char *target, nrz_seed_cb cb, void *ctx)
{
	if (!strcmp(target, "owner") || !strcmp(target, "l2"))
		return gen_tables(target, cb, ctx);
	if (!strcmp(target, "parse"))
		return gen_parse(cb, ctx);
	if (!strcmp(target, "engine"))
		return gen_engine(cb, ctx);
	if (!strcmp(target, "control"))
		return gen_control(cb, ctx);
	if (!strcmp(target, "burst"))
		return gen_burst(cb, ctx);
	if (!strcmp(target, "soft"))
		return gen_soft(cb, ctx);
	if (!strcmp(target, "ctlserver"))
		return gen_ctlserver(cb, ctx);
	if (!strcmp(target, "rendezvous"))
		return gen_rendezvous(cb, ctx);
	if (!strcmp(target, "tenant"))
		return gen_tenant(cb, ctx);
	fprintf(stderr,
		"no seeds for target '%s' (parse, engine, control, burst, soft, ctlserver, "
		"rendezvous, owner, l2, tenant)\n",
		target);
	return -1;
}
