/* SPDX-License-Identifier: BSD-3-Clause */
/* Simulated jobs of the EAL suite (see eal_sim.h and test_box.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "eal_harness.h"
#include "proto/roce_build.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

#include "eal_sim.h"

uint64_t rng_state;

uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

double frand(void) { return (double)(rnd() >> 11) / (double)(1ull << 53); }

uint64_t test_seed(const char *name)
{
	const char *env = getenv("NR_SEED");
	uint64_t s = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);

	printf("[ %s ] seed %lu (NR_SEED=%lu to replay)\n", name, s, s);
	rng_state = s ? s : 1;
	return s;
}

/* ---- the simulated job -------------------------------------------------- */



/* Contribution of rank r to element k of packet g: varied magnitudes and signs. */
static float contrib(const struct sim *s, unsigned r, unsigned g, unsigned k)
{
	uint64_t x = ((uint64_t)s->seed << 32) ^ ((uint64_t)r << 48) ^ ((uint64_t)g << 20) ^ k;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (float)((double)(int32_t)(x & 0xFFFFFFFF) / 2147483648.0 *
		       (double)(1u << (x >> 60)));
}

static unsigned pay_len(const struct sim *s, unsigned g)
{
	unsigned k = g % s->pkts_per_msg;

	if (k + 1 < s->pkts_per_msg)
		return s->mtu;
	return s->msg_size - (s->pkts_per_msg - 1) * s->mtu;
}

static void build_args(const struct sim *s, unsigned r, unsigned g, struct nr_build_args *a)
{
	unsigned m = g / s->pkts_per_msg, k = g % s->pkts_per_msg, p = s->pkts_per_msg;

	memset(a, 0, sizeof(*a));
	if (p == 1)
		a->opcode = NR_OP_RC_WRITE_ONLY_IMM;
	else if (k == 0)
		a->opcode = NR_OP_RC_WRITE_FIRST;
	else if (k + 1 == p)
		a->opcode = NR_OP_RC_WRITE_LAST_IMM;
	else
		a->opcode = NR_OP_RC_WRITE_MIDDLE;
	a->psn = (s->ipsn[r] + g) & NR_PSN_MASK;
	a->ackreq = k + 1 == p;
	a->va = 0x100000ull + (uint64_t)m * s->msg_size;
	a->rkey = 0x77;
	a->dma_len = s->msg_size;
	a->imm = m & 0xFFFFFF;   /* tag: op sequence 0, message index m */
}

/* Frame of conn r, packet g, with payload pay (NULL: rank r's contribution);
 * imm_xor goes into its ImmDt (a result's: the job's result key). */
static int build_frame(const struct sim *s, unsigned r, unsigned g, const float *pay, bool ce,
		       uint32_t imm_xor, uint8_t *buf, size_t cap)
{
	float own[NR_MAX_MTU / 4];
	struct nr_build_args a;
	struct nr_flow f = s->data[r];
	unsigned len = pay_len(s, g);

	if (pay == NULL) {
		for (unsigned k = 0; k < len / 4; k++)
			own[k] = contrib(s, r, g, k);
		pay = own;
	}
	if (ce)
		f.tos |= NR_ECN_CE;
	build_args(s, r, g, &a);
	a.imm ^= imm_xor;
	return nr_build_frame(buf, cap, &f, &a, pay, len);
}

int build_data(const struct sim *s, unsigned r, unsigned g, const float *pay, bool ce,
	       uint8_t *buf, size_t cap)
{
	return build_frame(s, r, g, pay, ce, 0, buf, cap);
}

void expected_result(const struct sim *s, unsigned r, unsigned g, uint8_t *buf,
			    int *len)
{
	float sum[NR_MAX_MTU / 4];
	unsigned n = pay_len(s, g) / 4;
	bool ce = false;

	for (unsigned k = 0; k < n; k++) {
		float acc = contrib(s, 0, g, k);

		for (unsigned q = 1; q < s->n; q++)
			acc += contrib(s, q, g, k);
		sum[k] = acc;
	}
	for (unsigned q = 0; q < s->n; q++)
		ce |= s->ce[q][g];
	/* CE reaches the results whose own frame is ECN-capable, never a Not-ECT one */
	*len = build_frame(s, r, g, sum, ce && (s->data[r].tos & NR_ECN_MASK) != NR_ECN_NOT_ECT,
			   s->result_key, buf, 8192);
}

void sim_init(struct sim *s, struct harness *h, unsigned n, unsigned mtu,
		     unsigned msg_size, unsigned pool_msgs)
{
	memset(s, 0, sizeof(*s));
	s->qpn_base = 0;
	s->h = h;
	s->n = n;
	s->mtu = mtu;
	s->msg_size = msg_size;
	s->pkts_per_msg = (msg_size + mtu - 1) / mtu;
	s->pool_msgs = pool_msgs;
	s->seed = (uint32_t)rnd();
	for (unsigned r = 0; r < n; r++) {
		unsigned d = (r + 1) % n;

		s->ipsn[r] = (uint32_t)rnd() & NR_PSN_MASK;
		if (r == 0)
			s->ipsn[r] = NR_PSN_MASK - 3;   /* PSN wrap inside the test */
		h_host_mac(r, s->data[r].src_mac);
		h_host_mac(d, s->data[r].dst_mac);
		s->data[r].saddr = h_host_ip(r);
		s->data[r].daddr = h_host_ip(d);
		s->data[r].sport = (uint16_t)(0xC000 + r);
		s->data[r].frag_off = NR_IPV4_DF;
		s->data[r].tos = NR_ECN_ECT0;    /* ECN-capable, as RoCE with DCQCN sends */
		s->data[r].dqpn = conn_dst_qpn(r, n);
		h_host_mac(d, s->ack[r].src_mac);
		h_host_mac(r, s->ack[r].dst_mac);
		s->ack[r].saddr = h_host_ip(d);
		s->ack[r].daddr = h_host_ip(r);
		s->ack[r].sport = (uint16_t)(0xD000 + r);
		s->ack[r].frag_off = NR_IPV4_DF;
		s->ack[r].dqpn = conn_src_qpn(r);
	}
}

void sim_set_qpn_base(struct sim *s, uint32_t base)
{
	s->qpn_base = base;
	for (unsigned r = 0; r < s->n; r++) {
		s->data[r].dqpn = conn_dst_qpn(r, s->n);
		s->ack[r].dqpn = conn_src_qpn(r);
	}
}

struct nr_job_spec *sim_spec(const struct sim *s)
{
	struct nr_job_spec *sp = calloc(1, sizeof(*sp) + s->n * sizeof(sp->conns[0]));

	sp->n_conns = s->n;
	sp->mtu = s->mtu;
	sp->msg_size = s->msg_size;
	sp->pool_msgs = s->pool_msgs;
	sp->timeout_ms = 60000;
	sp->mode = NR_SUM_ORDERED;
	sp->result_key = s->result_key;
	for (unsigned r = 0; r < s->n; r++) {
		struct nr_conn_spec *c = &sp->conns[r];

		c->src_ip = s->data[r].saddr;
		c->dst_ip = s->data[r].daddr;
		memcpy(c->src_mac, s->data[r].src_mac, 6);
		memcpy(c->dst_mac, s->data[r].dst_mac, 6);
		c->src_qpn = conn_src_qpn(r);
		c->dst_qpn = conn_dst_qpn(r, s->n);
		c->ipsn = s->ipsn[r];
	}
	return sp;
}

void sim_job_add(struct sim *s, uint32_t id)
{
	struct nr_job_spec *sp = sim_spec(s);
	uint32_t credits = 0;
	char err[256] = "";
	int rc;

	rc = dp_job_add(s->h->box, id, sp, &credits, err, sizeof(err));
	if (rc)
		fprintf(stderr, "job_add: %d %s\n", rc, err);
	assert_int_equal(rc, 0);
	assert_int_equal(credits, s->pool_msgs / 2);
	s->w = credits;
	s->job_id = id;
	free(sp);
}

void expect_fwd(struct sim *s, unsigned port, const uint8_t *f, int len)
{
	assert_true(len > 0);
	assert_true(s->n_expect < MAX_EXPECT);
	s->expect[s->n_expect].port = (uint16_t)port;
	s->expect[s->n_expect].len = (uint16_t)len;
	s->expect[s->n_expect].hit = false;
	s->expect[s->n_expect].data = malloc((size_t)len);
	memcpy(s->expect[s->n_expect].data, f, (size_t)len);
	s->n_expect++;
}

static void hexdump(const char *what, const uint8_t *d, unsigned len)
{
	fprintf(stderr, "%s (%u bytes):", what, len);
	for (unsigned i = 0; i < len && i < 96; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n  ", d[i]);
	fprintf(stderr, "\n");
}

/*
 * Whether frame o (parsed as p) is the expected result exp byte for byte,
 * but that the status monitor sets AckReq on a result it resends itself (a
 * solicit, a repair's last): with that bit cleared and the ICRC made again
 * it must be exp.
 */
bool same_result(const struct h_out *o, const struct nr_pkt *p, const uint8_t *exp, int len)
{
	static uint8_t a[8192];

	if ((int)o->len != len)
		return false;
	if (memcmp(o->data, exp, (size_t)len) == 0)
		return true;
	if (!p->ackreq || (size_t)len > sizeof(a) || !nr_icrc_check(o->data, p))
		return false;
	memcpy(a, o->data, (size_t)len);
	a[p->bth_off + 8] &= 0x7F;              /* BTH AckReq */
	nr_icrc_update(a, p);
	return memcmp(a, exp, (size_t)len) == 0;
}

/* A result of sim s (checked like check_outputs does); false if not one. */
static bool match_result(struct sim *s, const struct h_out *o, const struct nr_pkt *p)
{
	static uint8_t exp[8192];

	for (unsigned r = 0; r < s->n; r++) {
		unsigned g;
		int len;

		if (p->kind != NR_PKT_ROCE || p->qpn != conn_dst_qpn(r, s->n) ||
		    p->daddr != s->data[r].daddr || p->saddr != s->data[r].saddr)
			continue;
		g = (p->psn - s->ipsn[r]) & NR_PSN_MASK;
		assert_true(g < MAX_G);
		assert_int_equal(o->port, (r + 1) % s->n);
		expected_result(s, r, g, exp, &len);
		assert_true(same_result(o, p, exp, len));
		if (s->delivered[r][g]++ == 0) {
			assert_int_equal(g, s->next_first[r]);
			s->next_first[r]++;
			s->results_seen++;
		} else {
			s->resends_seen++;
		}
		return true;
	}
	return false;
}

/* Check and consume every collected output. */
/*
 * A NAK (or a repeat of the last ACK) the box made for conn r's receiver
 * (status monitor): to the sender's
 * port and QPN, the receiver's last ACK (before it: the sender's packet
 * turned around) with another PSN and syndrome, a
 * good ICRC, and a PSN that acknowledges nothing the receiver did not.
 */
static bool match_nak(struct sim *s, const struct h_out *o, const struct nr_pkt *p)
{
	for (unsigned r = 0; r < s->n; r++) {
		unsigned g;

		if (p->kind != NR_PKT_ROCE || p->opcode != NR_OP_RC_ACK ||
		    p->qpn != conn_src_qpn(r) || p->saddr != s->ack[r].saddr ||
		    p->daddr != s->ack[r].daddr ||
		    (p->aeth_syn != NR_AETH_NAK_PSN_SEQ_ERR && !nr_syn_is_rnr(p->aeth_syn) &&
		     !nr_syn_is_ack(p->aeth_syn)))
			continue;
		/* a NAK at g acknowledges g - 1; a repeated ACK at g - 1, g - 1 itself */
		g = ((p->psn - s->ipsn[r]) & NR_PSN_MASK) + nr_syn_is_ack(p->aeth_syn);
		assert_int_equal(o->port, r);                       /* the sender's port */
		assert_true(nr_icrc_check(o->data, p));
		/* the receiver's ACK's; before its first ACK, the sender's packet's */
		if (p->udp_sport != s->ack[r].sport) {
			assert_int_equal(p->udp_sport, s->data[r].sport);
			assert_int_equal(s->acked_g[r], 0);
		}
		if (g > s->acked_g[r])
			fail_msg("conn %u: the box NAKed g=%u, which acknowledges g=%u, but the "
				 "receiver acknowledged only below %u", r, g, g - 1, s->acked_g[r]);
		/* the MSN of an ACK the receiver sent: the box's polls run on the
		 * wall clock, so a NAK may leave before the box took the latest ACK */
		if (p->aeth_msn > s->acked_g[r] / s->pkts_per_msg)
			fail_msg("conn %u: the box's NAK carries MSN %u, beyond the receiver's %u", r,
				 p->aeth_msn, s->acked_g[r] / s->pkts_per_msg);
		s->naks_seen++;
		return true;
	}
	return false;
}

void check_outputs(struct sim *s)
{
	struct harness *h = s->h;
	static uint8_t exp[8192];

	for (unsigned i = 0; i < h->n_out; i++) {
		struct h_out *o = &h->out[i];
		struct nr_pkt p;
		bool matched = false;

		nr_parse(o->data, o->len, &p);
		/* frames expected to leave unchanged first: the box's repeat of a
		 * receiver's ACK is that ACK byte for byte */
		for (unsigned e = 0; e < s->n_expect && !matched; e++) {
			if (s->expect[e].hit || s->expect[e].port != o->port ||
			    s->expect[e].len != o->len || memcmp(s->expect[e].data, o->data, o->len))
				continue;
			s->expect[e].hit = true;
			matched = true;
		}
		if (matched)
			continue;
		if (s->peer && (match_result(s->peer, o, &p) || match_nak(s->peer, o, &p)))
			continue;
		if (match_nak(s, o, &p))
			continue;
		for (unsigned r = 0; r < s->n && !matched; r++) {
			unsigned g;
			int len;

			if (p.kind != NR_PKT_ROCE || p.qpn != conn_dst_qpn(r, s->n) ||
			    p.daddr != s->data[r].daddr || p.saddr != s->data[r].saddr)
				continue;
			matched = true;
			g = (p.psn - s->ipsn[r]) & NR_PSN_MASK;
			assert_true(g < MAX_G);
			assert_int_equal(o->port, (r + 1) % s->n);     /* the receiver's port */
			assert_true(nr_icrc_check(o->data, &p));
			expected_result(s, r, g, exp, &len);
			if (!same_result(o, &p, exp, len)) {
				fprintf(stderr, "conn %u g %u: result differs\n", r, g);
				hexdump("got", o->data, o->len);
				hexdump("want", exp, (unsigned)len);
				fail_msg("result of conn %u g %u is not the rank-ordered sum", r, g);
			}
			if (s->delivered[r][g]++ == 0) {
				/* first deliveries in PSN order, no gap */
				assert_int_equal(g, s->next_first[r]);
				s->next_first[r]++;
				s->results_seen++;
			} else {
				s->resends_seen++;
			}
		}
		if (!matched) {
			hexdump("unexpected frame", o->data, o->len);
			fail_msg("frame of %u bytes left on port %u: not a result, not expected", o->len, o->port);
		}
	}
	h_clear_out(h);
}

void check_expect_all_hit(struct sim *s)
{
	for (unsigned e = 0; e < s->n_expect; e++) {
		if (!s->expect[e].hit)
			hexdump("missing frame", s->expect[e].data, s->expect[e].len);
		assert_true(s->expect[e].hit);
		free(s->expect[e].data);
	}
	s->n_expect = 0;
}

/* ---- traffic ------------------------------------------------------------- */

void send_data(struct sim *s, unsigned r, unsigned g)
{
	uint8_t f[8192];
	int len = build_data(s, r, g, NULL, s->ce[r][g], f, sizeof(f));

	assert_true(len > 0);
	h_inject(s->h, r, f, (unsigned)len);
	if (s->sent[r][g]++ > 0)
		s->dup_data++;
}

/* Non-RoCE unicast from host a to host b (expected unchanged on b's port). */
void send_plain(struct sim *s, unsigned a, unsigned b)
{
	uint8_t f[128];
	unsigned len = 60 + (unsigned)(rnd() % 60);

	for (unsigned i = 0; i < len; i++)
		f[i] = (uint8_t)rnd();
	h_host_mac(b, f);
	h_host_mac(a, f + 6);
	f[12] = 0x88;   /* local experimental ethertype 0x88B5 */
	f[13] = 0xB5;
	h_inject(s->h, a, f, len);
	expect_fwd(s, b, f, (int)len);
}

/* A WRITE on a connection nobody registered: forwarded unchanged. */
void send_unregistered(struct sim *s, unsigned a, unsigned b)
{
	struct nr_flow f = s->data[a];
	struct nr_build_args ar = { .opcode = NR_OP_RC_WRITE_ONLY, .psn = (uint32_t)rnd() & NR_PSN_MASK,
				    .va = 0x5000, .rkey = 9, .dma_len = 64 };
	uint8_t buf[256], pay[64];
	int len;

	for (unsigned i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)rnd();
	h_host_mac(b, f.dst_mac);
	f.daddr = h_host_ip(b);
	f.dqpn = 0x999;
	len = nr_build_frame(buf, sizeof(buf), &f, &ar, pay, sizeof(pay));
	h_inject(s->h, a, buf, (unsigned)len);
	expect_fwd(s, b, buf, len);
	s->unknown_conn++;
}

/* Registered receiver and QPN, wrong source IP: must be dropped, never summed. */
void send_spoofed(struct sim *s, unsigned r, unsigned g)
{
	struct sim t = *s;
	uint8_t f[8192];
	int len;

	unsigned q = (unsigned)(rnd() % s->n);   /* the spoofer, on its own port */

	t.data[r].saddr = htonl(0x0A4E00C8);   /* 10.78.0.200 */
	h_host_mac(q, t.data[r].src_mac);
	t.seed ^= 0x5A5A5A5A;                   /* and a different payload */
	len = build_data(&t, r, g, NULL, false, f, sizeof(f));
	h_inject(s->h, q, f, (unsigned)len);
	s->spoofed++;
}

/* Garbage: truncated RoCE (malformed, dropped), runts (dropped). */
void send_garbage(struct sim *s, unsigned r, unsigned g)
{
	uint8_t f[8192];
	int len = build_data(s, r, g, NULL, false, f, sizeof(f));
	unsigned kind = (unsigned)(rnd() % 6);

	if (kind == 5) {
		/* random bytes behind Ethernet/IPv4/UDP 4791 headers */
		unsigned n = 60 + (unsigned)(rnd() % 1000);

		for (unsigned i = 14; i < n; i++)
			f[i] = (uint8_t)rnd();
		f[12] = 0x08;
		f[13] = 0x00;
		f[14] = 0x45;
		f[14 + 6] = 0x40;   /* DF, not a fragment (a later fragment is not RoCE) */
		f[14 + 7] = 0x00;
		f[14 + 9] = NR_IPPROTO_UDP;
		nr_st_be16(f + 34 + 2, NR_ROCEV2_PORT);
		h_inject(s->h, r, f, n);
		s->garbage_roce++;
	} else if (kind == 4) {
		/* one payload bit flipped in flight, ICRC as sent: never summed */
		f[len - 8] ^= 0x10;
		h_inject(s->h, r, f, (unsigned)len);
		s->bad_icrc++;
	} else if (kind < 3) {
		/* truncated anywhere after the UDP header: IP length disagrees */
		unsigned cut = 42 + (unsigned)(rnd() % (unsigned)(len - 42));

		h_inject(s->h, r, f, cut);
		s->malformed++;
	} else {
		unsigned n = 1 + (unsigned)(rnd() % 13);

		for (unsigned i = 0; i < n; i++)
			f[i] = (uint8_t)rnd();
		h_inject(s->h, r, f, n);
		s->runts++;
	}
}

void send_acks(struct sim *s, unsigned g_end, bool twice)
{
	for (unsigned r = 0; r < s->n; r++) {
		struct nr_build_args a = {
			.opcode = NR_OP_RC_ACK,
			.psn = (s->ipsn[r] + g_end - 1) & NR_PSN_MASK,
			.syndrome = 0x1F,
			.msn = g_end / s->pkts_per_msg,
		};
		uint8_t f[128];
		int len = nr_build_frame(f, sizeof(f), &s->ack[r], &a, NULL, 0);

		assert_true(len > 0);
		if (g_end > s->acked_g[r])
			s->acked_g[r] = g_end;
		for (unsigned t = 0; t < (twice ? 2u : 1u); t++) {
			h_inject(s->h, (r + 1) % s->n, f, (unsigned)len);
			expect_fwd(s, r, f, len);
		}
	}
}

/* Every host announces itself (broadcast), so the box learns all MACs. */
void learn_all(struct sim *s, unsigned n_ports)
{
	for (unsigned a = 0; a < n_ports; a++) {
		uint8_t f[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

		h_host_mac(a, f + 6);
		f[12] = 0x08;   /* ARP */
		f[13] = 0x06;
		for (unsigned i = 14; i < sizeof(f); i++)
			f[i] = (uint8_t)(a + i);
		h_inject(s->h, a, f, sizeof(f));
		for (unsigned b = 0; b < n_ports; b++)
			if (b != a)
				expect_fwd(s, b, f, sizeof(f));
	}
	h_settle(s->h);
	check_outputs(s);
	check_expect_all_hit(s);
}


/*
 * One window of W messages: random interleaving across connections (each in
 * PSN order), loss, duplicates, noise; go-back-N from the first loss of each
 * connection until all went through; then coalesced ACKs.
 */
void run_window(struct sim *s, unsigned g0, unsigned g1, const struct impair *im, bool acks)
{
	unsigned next[H_MAX_HOSTS], lost[H_MAX_HOSTS];
	bool again = true;

	for (unsigned r = 0; r < s->n; r++)
		next[r] = g0;
	for (unsigned round = 0; again; round++) {
		double loss = round < 8 ? im->loss : 0;

		for (unsigned r = 0; r < s->n; r++)
			lost[r] = UINT32_MAX;
		for (;;) {
			unsigned live = 0, pick, r;

			for (r = 0; r < s->n; r++)
				live += next[r] < g1;
			if (live == 0)
				break;
			pick = (unsigned)(rnd() % live);
			for (r = 0; r < s->n; r++)
				if (next[r] < g1 && pick-- == 0)
					break;
			if (frand() < loss) {
				if (lost[r] == UINT32_MAX)
					lost[r] = next[r];
			} else {
				s->gaps += lost[r] != UINT32_MAX;
				send_data(s, r, next[r]);
				if (frand() < im->dup)
					send_data(s, r, next[r]);
			}
			if (frand() < im->noise) {
				switch (rnd() % 4) {
				case 0: send_plain(s, (r + 2 + (unsigned)(rnd() % (s->n - 1))) % s->n,
						   (r + 1) % s->n); break;
				case 1: send_unregistered(s, r, (r + 1) % s->n); break;
				case 2: send_spoofed(s, r, next[r]); break;
				default: send_garbage(s, r, next[r]); break;
				}
			}
			next[r]++;
		}
		h_settle(s->h);
		check_outputs(s);
		again = false;
		for (unsigned r = 0; r < s->n; r++) {
			if (lost[r] == UINT32_MAX)
				continue;
			next[r] = lost[r];   /* go-back-N from the first loss */
			again = true;
		}
	}
	for (unsigned r = 0; r < s->n; r++)
		assert_int_equal(s->next_first[r], g1);
	if (acks) {
		send_acks(s, g1, (g1 / (s->w * s->pkts_per_msg)) % 2 == 0);
		h_settle(s->h);
		check_outputs(s);
	}
	check_expect_all_hit(s);
}

/* rx accounting: every frame in exactly one bucket. */
void check_accounting(struct sim *s, unsigned total_g)
{
	struct dp_ctr c;
	uint64_t dropped_parts, ec[NR_ECTR_MAX];

	dp_box_counters(s->h->box, &c);
	assert_int_equal(dp_box_engine_counters(s->h->box, ec), 0);
	assert_int_equal(c.c[DP_CTR_RX], s->h->injected);
	assert_int_equal(c.c[DP_CTR_RX] + c.c[DP_CTR_HANDOFF_IN],
			 c.c[DP_CTR_FORWARDED] + c.c[DP_CTR_FLOODED] + c.c[DP_CTR_FILTERED] +
			 c.c[DP_CTR_HANDOFF_OUT] + c.c[DP_CTR_HELD] + c.c[DP_CTR_RESENT] +
			 c.c[DP_CTR_DROPPED]);
	dropped_parts = c.c[DP_CTR_RUNT] + c.c[DP_CTR_BAD_ICRC] + c.c[DP_CTR_MULTISEG] +
			c.c[DP_CTR_NO_RECORD] + c.c[DP_CTR_HANDOFF_FULL] +
			c.c[DP_CTR_NO_ROUTE] + c.c[DP_CTR_ENGINE_DROP] + c.c[DP_CTR_MALFORMED];
	assert_int_equal(c.c[DP_CTR_DROPPED], dropped_parts);
	/* random bytes behind UDP/4791 headers are malformed, or (rarely) parse
	 * and then fail their ICRC */
	assert_true(c.c[DP_CTR_MALFORMED] >= s->malformed);
	assert_true(c.c[DP_CTR_BAD_ICRC] >= s->bad_icrc);
	assert_int_equal(c.c[DP_CTR_MALFORMED] + c.c[DP_CTR_BAD_ICRC],
			 s->malformed + s->bad_icrc + s->garbage_roce);
	assert_int_equal(c.c[DP_CTR_RUNT], s->runts);
	assert_int_equal(c.engine_drop[NR_ECTR_SPOOFED], s->spoofed);
	assert_int_equal(c.c[DP_CTR_HELD], (uint64_t)s->n * total_g);     /* each once */
	assert_int_equal(c.c[DP_CTR_RESULTS], (uint64_t)s->n * total_g);
	assert_int_equal(s->results_seen, s->n * total_g);
	/* results again: answers to duplicates, or made by the status monitor
	 * (a repair, a solicited ACK) */
	assert_int_equal(c.c[DP_CTR_RESENT] + nr_ectr_mon_results(ec),
			 s->resends_seen);
	/* a duplicate is either answered or dropped as a duplicate/stale */
	assert_int_equal(c.c[DP_CTR_RESENT] + c.engine_drop[NR_ECTR_DUP_DROPPED] +
			 c.engine_drop[NR_ECTR_STALE_DROPPED], s->dup_data);
	assert_int_equal(c.c[DP_CTR_TX_DROPPED], 0);
	{
		uint64_t sum = 0;

		for (unsigned i = 1; i < NR_BAD_MAX; i++)
			sum += c.malformed[i];
		assert_int_equal(sum, c.c[DP_CTR_MALFORMED]);
	}
}
