/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A traffic class per message (nr_tp_post_write_imm_tc): what the IP header
 * of every datagram says, read where it arrives.  The peer of the QP is a
 * plain UDP socket with IP_RECVTOS, no root and no capture needed: it never
 * answers, so the requester resends every message after its ACK timeouts
 * until the retries run out, and each packet's TOS is checked against its
 * message's, the first time and every time it goes again:
 *   - a message posted with a class of its own (a tolerant one's: DSCP 10
 *     with the transport's ECN bits) carries exactly that;
 *   - the messages around it carry the transport's class (cfg.tclass);
 *   - a message's drop-eligible packets (nr_tp_mark's de) carry its
 *     de_tclass, its other packets its tclass;
 *   - ACKs and other QPs keep the transport's class.
 */
#include "soft_util.h"

#include <errno.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>

#include "proto/roce_build.h"
#include "proto/roce_hdr.h"

#define MTU 1024
#define TCLASS 0x22                            /* DSCP 8, ECN ECT(0) */
#define TOLERANT ((10 << 2) | (TCLASS & 3))    /* DSCP 10 (AF11), the ECN bits kept */
#define DROPELIG ((12 << 2) | (TCLASS & 3))    /* DSCP 12 (AF12): its drop-eligible packets */
#define IPSN 100

/* The listening peer: UDP on ip:4791, the TOS of each datagram as ancillary data. */
static int peer_open(const char *ip)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(NR_ROCEV2_PORT) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), one = 1, pmtu = IP_PMTUDISC_DO;

	assert_true(fd >= 0);
	inet_pton(AF_INET, ip, &a.sin_addr);
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)), 0);
	/* DF, so IP ID 0: what the soft transport's ICRC check assumes */
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/*
 * The peer writes 8 bytes with AckReq to A's QP (PSN 0), from its socket
 * (peer_ip:4791) to A (a_ip:4791): A owes it an ACK.
 */
static void peer_write(int fd, const char *peer_ip, const char *a_ip, uint32_t qpn,
		       const struct nr_tp_mr *mr)
{
	struct nr_icrc_ip4 ipx = { .sport = NR_ROCEV2_PORT, .dport = NR_ROCEV2_PORT, .id = 0,
				   .frag_off = NR_IPV4_DF };
	const struct nr_build_args a = {
		.opcode = NR_OP_RC_WRITE_ONLY_IMM, .psn = 0, .ackreq = true, .migreq = true,
		.va = mr->va, .rkey = mr->rkey, .dma_len = 8, .imm = 77,
	};
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(NR_ROCEV2_PORT) };
	uint8_t pkt[256], payload[8] = { 0 };
	int n;

	inet_pton(AF_INET, peer_ip, &ipx.saddr);
	inet_pton(AF_INET, a_ip, &ipx.daddr);
	to.sin_addr.s_addr = ipx.daddr;
	n = nr_build_transport(pkt, sizeof(pkt), &ipx, qpn, &a, payload, sizeof(payload));
	assert_true(n > 0);
	assert_int_equal(sendto(fd, pkt, (size_t)n, 0, (struct sockaddr *)&to, sizeof(to)), n);
}

/* One datagram: its opcode, PSN and TOS; 0, or -1 when none is waiting. */
static int peer_recv(int fd, uint8_t *op, uint32_t *psn, int *tos)
{
	uint8_t pkt[8192], ctl[64];
	struct iovec iov = { .iov_base = pkt, .iov_len = sizeof(pkt) };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(fd, &h, 0);

	if (n < 0)
		return -1;
	assert_true(n >= (ssize_t)sizeof(struct nr_bth));
	*op = nr_bth_opcode((const struct nr_bth *)pkt);
	*psn = nr_bth_psn((const struct nr_bth *)pkt);
	*tos = -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&h); cm; cm = CMSG_NXTHDR(&h, cm))
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS)
			*tos = *(uint8_t *)CMSG_DATA(cm);
	return 0;
}

static void test_tos_per_message(void **state)
{
	/* message m: its packets, the class it was posted with (-1: the transport's) and
	 * its drop-eligible packets (bit k: packet k) */
	static const struct { uint32_t len; int tclass; uint64_t de; } msgs[] = {
		{ 2 * MTU, -1, 0 }, { 3 * MTU - 100, TOLERANT, 0x2 }, { 100, -1, 0 },
		{ MTU, TOLERANT, 0 }, { 3 * MTU, TOLERANT, 0x5 },
	};
	enum { NMSG = sizeof(msgs) / sizeof(msgs[0]) };
	struct nr_tp_config c = tu_cfg("127.0.0.31", MTU);
	struct nr_qp_info info, peer = { .qpn = 0x123, .psn = 0, .udp_port = NR_ROCEV2_PORT };
	unsigned first[NMSG + 1], seen[NMSG] = { 0 }, wrong = 0, tolerant_pkts = 0, acks = 0;
	unsigned de_pkts = 0;
	static uint8_t buf[4 * MTU];
	struct nr_tp_mr mr;
	struct nr_tp_qp *qp;
	struct nr_wc wc[8];
	int fd = peer_open("127.0.0.32"), errors = 0;
	uint64_t t0;

	c.tclass = TCLASS;
	c.timeout = 8;                     /* 1 ms */
	c.retry_cnt = 3;
	c.profile = NR_TP_PROFILE_RXE;     /* fixed timeouts: 4 sends of each packet, soon over */
	tu_pair.a = tu_open(&c);
	assert_true(nr_tp_wr_tclass(tu_pair.a));
	assert_int_equal(nr_tp_soft_set_ipsn(tu_pair.a, IPSN), 0);
	assert_int_equal(nr_tp_reg_mr(tu_pair.a, buf, sizeof(buf), &mr), 0);
	assert_int_equal(nr_tp_qp_create(tu_pair.a, &qp, &info), 0);
	inet_pton(AF_INET, "127.0.0.32", &peer.ip);
	assert_int_equal(nr_tp_qp_connect(qp, &peer), 0);
	/* a class outside 0..255, or below -1: refused before anything is queued */
	assert_int_equal(nr_tp_post_write_imm_tc(qp, 99, &mr, buf, 8, 0, 1, 0,
						 &(struct nr_tp_mark){ .tclass = 256 }), -EINVAL);
	assert_int_equal(nr_tp_post_write_imm_tc(qp, 99, &mr, buf, 8, 0, 1, 0,
						 &(struct nr_tp_mark){ .tclass = -2 }), -EINVAL);
	assert_int_equal(nr_tp_post_write_imm_tc(qp, 99, &mr, buf, 8, 0, 1, 0,
						 &(struct nr_tp_mark){ .tclass = TOLERANT,
								       .de_tclass = 256,
								       .de = &msgs[1].de }),
			 -EINVAL);
	first[0] = IPSN;
	for (unsigned m = 0; m < NMSG; m++) {
		struct nr_tp_mark mk = { .tclass = msgs[m].tclass, .de_tclass = DROPELIG,
					 .de = msgs[m].de ? &msgs[m].de : NULL };

		assert_int_equal(nr_tp_post_write_imm_tc(qp, m, &mr, buf, msgs[m].len, 0x1000, 7, m,
							 msgs[m].tclass < 0 ? NULL : &mk), 0);
		first[m + 1] = first[m] + tu_npkts(msgs[m].len, MTU);
	}
	peer_write(fd, "127.0.0.32", "127.0.0.31", info.qpn, &mr);
	/* until the retries run out: every WR then completes in error */
	t0 = tu_now_ms();
	while (errors < NMSG && tu_now_ms() - t0 < 10000) {
		int k = nr_tp_poll(tu_pair.a, wc, 8, 1);
		uint32_t psn;
		uint8_t op;
		int tos;

		assert_true(k >= 0);
		for (int i = 0; i < k; i++)
			errors += wc[i].status != NR_WC_OK;
		while (peer_recv(fd, &op, &psn, &tos) == 0) {
			unsigned m = 0;

			if (op == NR_OP_RC_ACK) {   /* A's responder: the transport's class */
				acks++;
				wrong += tos != TCLASS;
				continue;
			}
			while (m < NMSG && psn >= first[m + 1])
				m++;
			assert_true(m < NMSG && psn >= IPSN);
			seen[m]++;
			tolerant_pkts += tos == TOLERANT || tos == DROPELIG;
			de_pkts += tos == DROPELIG;
			if (tos != (msgs[m].de >> (psn - first[m]) & 1 ? DROPELIG :
				    msgs[m].tclass < 0 ? TCLASS : msgs[m].tclass)) {
				printf("psn %u of message %u: TOS 0x%02x, posted with %d (de 0x%lx)\n",
				       psn, m, tos, msgs[m].tclass, (unsigned long)msgs[m].de);
				wrong++;
			}
		}
	}
	tu_dump_stats("A", tu_pair.a);
	assert_int_equal(errors, NMSG);
	for (unsigned m = 0; m < NMSG; m++) {
		unsigned n = first[m + 1] - first[m];

		printf("message %u: %u packets, %u sent, TOS 0x%02x\n", m, n, seen[m],
		       msgs[m].tclass < 0 ? TCLASS : msgs[m].tclass);
		/* sent, then resent after the timeouts: each resend kept its class */
		assert_true(seen[m] >= 2 * n);
	}
	assert_int_equal(wrong, 0);
	assert_true(acks >= 1);
	assert_int_equal(TU_STAT(tu_pair.a, tx_tclass), tolerant_pkts);
	assert_int_equal(TU_STAT(tu_pair.a, tx_de), de_pkts);
	assert_true(de_pkts >= 2 * 3);   /* 3 drop-eligible packets, each sent and resent */
	assert_true(TU_STAT(tu_pair.a, tx_retrans) > 0);
	nr_tp_qp_destroy(qp);
	nr_tp_dereg_mr(tu_pair.a, &mr);
	nr_tp_close(tu_pair.a);
	tu_pair.a = NULL;
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_tos_per_message, tu_teardown),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
