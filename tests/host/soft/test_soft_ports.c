/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft transport's QP source ports.  A QP sends from the UDP port RNICs
 * derive from its QPN (0xC000 | hash); when another socket of the host holds
 * that port, the QP must take the next candidate instead of failing, and when
 * every candidate is taken the error must name the address and port.
 *
 * These tests hold ports of a loopback address of their own with plain UDP
 * sockets, as other QPs and processes of a host would.
 *
 * Spraying (nr_tp_qp_spray): a QP's packets leave from its ports in turn, a
 * send each, every packet's ICRC made for the port it leaves from; the range
 * is bound whole (a taken port moves it); bad counts and a connected QP are
 * refused; a sprayed QP's window is the transport's, over all its ports.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "soft_util.h"

#include <netinet/in.h>

#include "proto/roce_build.h"
#include "proto/roce_hdr.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

#define SPORT_BASE  0xC000u
#define SPORT_COUNT 0x4000u

struct held {
	int *fd;
	unsigned n;
};

/* Enough descriptors for n more sockets, or false. */
static bool fds_for(unsigned n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return false;
	if (rl.rlim_cur >= n + 256)
		return true;
	rl.rlim_cur = n + 256;
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;   /* root may raise the hard limit */
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* Bind UDP sockets on ip to every port of the range with (port % every == 0). */
static void hold_ports(struct held *h, const char *ip, unsigned every)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	inet_pton(AF_INET, ip, &a.sin_addr);
	h->fd = calloc(SPORT_COUNT, sizeof(int));
	h->n = 0;
	assert_non_null(h->fd);
	for (unsigned p = SPORT_BASE; p < SPORT_BASE + SPORT_COUNT; p++) {
		int fd;

		if (p % every)
			continue;
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		assert_true(fd >= 0);
		a.sin_port = htons((uint16_t)p);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
			fail_msg("cannot hold %s:%u for the test: %s", ip, p, strerror(errno));
		h->fd[h->n++] = fd;
	}
}

static void release_ports(struct held *h)
{
	for (unsigned i = 0; i < h->n; i++)
		close(h->fd[i]);
	free(h->fd);
	h->fd = NULL;
	h->n = 0;
}

/*
 * Half of the range taken (every even port): each QP's own port is taken
 * about half the time, and every QP must still be created.  Before the probe
 * was fixed, a taken first port failed the QP (the communicator's "cannot
 * create a QP: Address already in use"), so 40 QPs all passing was a 2^-40
 * event.
 */
static void test_sport_taken_probes_on(void **state)
{
	struct nr_tp_config c = tu_cfg("127.0.0.41", 0);
	struct nr_tp *tp;
	struct held h;

	(void)state;
	if (!fds_for(SPORT_COUNT / 2 + 64))
		skip();
	tp = tu_open(&c);
	hold_ports(&h, "127.0.0.41", 2);
	for (unsigned i = 0; i < 40; i++) {
		struct nr_tp_qp *qp;
		struct nr_qp_info info;
		int r = nr_tp_qp_create(tp, &qp, &info);

		if (r)
			fail_msg("QP %u: %s (%s)", i, strerror(-r), nr_tp_error(tp));
	}
	release_ports(&h);
	nr_tp_close(tp);
}

/* Every port taken: the QP fails with EADDRINUSE and the error names address and port. */
static void test_sport_exhausted_names_port(void **state)
{
	struct nr_tp_config c = tu_cfg("127.0.0.42", 0);
	struct nr_tp_qp *qp;
	struct nr_qp_info info;
	const char *err, *at;
	struct nr_tp *tp;
	unsigned long port;
	struct held h;

	(void)state;
	if (!fds_for(SPORT_COUNT + 64))
		skip();
	tp = tu_open(&c);
	hold_ports(&h, "127.0.0.42", 1);
	assert_int_equal(nr_tp_qp_create(tp, &qp, &info), -EADDRINUSE);
	err = nr_tp_error(tp);
	printf("# %s\n", err);
	assert_non_null(strstr(err, "no free UDP source port"));
	at = strstr(err, "127.0.0.42:");
	assert_non_null(at);
	port = strtoul(at + strlen("127.0.0.42:"), NULL, 10);
	assert_true(port >= SPORT_BASE && port < SPORT_BASE + SPORT_COUNT);
	release_ports(&h);
	/* and with the ports back, the same transport creates QPs again */
	assert_int_equal(nr_tp_qp_create(tp, &qp, &info), 0);
	assert_string_equal(nr_tp_error(tp), "");
	nr_tp_close(tp);
}

#define SPRAY 4
#define SPRAY_MTU 1024

/* A plain UDP peer on ip:4791 (DF, so the soft transport's IP ID 0 holds). */
static int spray_peer(const char *ip)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(NR_ROCEV2_PORT) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), pmtu = IP_PMTUDISC_DO;

	assert_true(fd >= 0);
	inet_pton(AF_INET, ip, &a.sin_addr);
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/*
 * One message of 12 packets from a QP spraying over 4 ports, without GSO (a
 * send a packet): the peer gets them from port, port + 1, port + 2, port + 3,
 * port ... in PSN order, each with an ICRC right for its port.
 */
static void test_spray_ports_in_turn(void **state)
{
	struct nr_tp_config c = tu_cfg("127.0.0.43", SPRAY_MTU);
	struct nr_qp_info info, peer = { .qpn = 0x321, .psn = 0, .udp_port = NR_ROCEV2_PORT };
	static uint8_t buf[12 * SPRAY_MTU];
	int fd = spray_peer("127.0.0.44");
	unsigned got = 0, used[SPRAY] = { 0 };
	struct nr_tp_mr mr;
	struct nr_tp_qp *qp;
	struct nr_wc wc[4];
	struct nr_tp *tp;
	uint64_t t0;

	(void)state;
	c.offload = NR_TP_OFFLOAD_OFF;
	c.timeout = 20;                    /* no resend during the test (4.3 s) */
	tp = tu_open(&c);
	assert_int_equal(nr_tp_reg_mr(tp, buf, sizeof(buf), &mr), 0);
	assert_int_equal(nr_tp_qp_create(tp, &qp, &info), 0);
	assert_int_equal(nr_tp_qp_spray(qp, SPRAY, &info), 0);
	assert_int_equal(nr_tp_soft_qp_sport(qp), info.sport);
	inet_pton(AF_INET, "127.0.0.44", &peer.ip);
	assert_int_equal(nr_tp_qp_connect(qp, &peer), 0);
	assert_int_equal(nr_tp_qp_spray(qp, 2, &info), -EINVAL);      /* connected */
	assert_int_equal(nr_tp_post_write_imm(qp, 1, &mr, buf, sizeof(buf), 0x1000, 7, 9), 0);
	t0 = tu_now_ms();
	while (got < 12 && tu_now_ms() - t0 < 5000) {
		uint8_t pkt[SPRAY_MTU + 64];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		nr_tp_poll(tp, wc, 4, 1);
		while (got < 12 &&
		       (n = recvfrom(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&from, &fl)) > 0) {
			struct nr_icrc_ip4 ipx = { .saddr = c.local_ip, .sport = ntohs(from.sin_port),
						   .dport = NR_ROCEV2_PORT, .frag_off = NR_IPV4_DF };
			uint32_t psn = nr_bth_psn((const struct nr_bth *)pkt);
			unsigned k = ntohs(from.sin_port) - info.sport;
			struct nr_pkt pp;

			inet_pton(AF_INET, "127.0.0.44", &ipx.daddr);
			assert_int_equal(psn, info.psn + got);
			assert_int_equal(k, got % SPRAY);       /* the ports in turn */
			assert_int_equal(nr_parse_transport(pkt, (size_t)n, &pp), NR_PKT_ROCE);
			assert_int_equal(nr_icrc_ip4(&ipx, pkt, (size_t)n - NR_ICRC_LEN),
					 nr_icrc_stored(pkt, &pp));
			used[k]++;
			got++;
			fl = sizeof(from);
		}
	}
	assert_int_equal(got, 12);
	for (unsigned k = 0; k < SPRAY; k++)
		assert_int_equal(used[k], 3);
	close(fd);
	nr_tp_close(tp);
}

/* Packets the peer socket fd receives while tp is polled for ms. */
static unsigned spray_count(struct nr_tp *tp, int fd, unsigned ms)
{
	uint64_t t0 = tu_now_ms();
	unsigned got = 0;
	struct nr_wc wc[4];

	while (tu_now_ms() - t0 < ms) {
		uint8_t pkt[SPRAY_MTU + 64];

		nr_tp_poll(tp, wc, 4, 1);
		while (recv(fd, pkt, sizeof(pkt), 0) > 0)
			got++;
	}
	return got;
}

/*
 * A sprayed QP's window is the transport's, over all its ports (the
 * library's default reorder_pkts): with max_inflight 3 and nobody
 * acknowledging, a 12-packet message puts 3 packets on the wire, sprayed over
 * 2 ports or not, and nothing more before the ACK timeout (4.3 s).
 */
static void test_spray_window_whole(void **state)
{
	static uint8_t buf[12 * SPRAY_MTU];

	(void)state;
	for (unsigned ports = 1; ports <= 2; ports++) {
		struct nr_tp_config c = tu_cfg("127.0.0.46", SPRAY_MTU);
		struct nr_qp_info info, peer = { .qpn = 0x322, .psn = 0, .udp_port = NR_ROCEV2_PORT };
		int fd = spray_peer("127.0.0.47");
		struct nr_tp_mr mr;
		struct nr_tp_qp *qp;
		struct nr_tp *tp;

		c.offload = NR_TP_OFFLOAD_OFF;
		c.timeout = 20;
		c.profile = NR_TP_PROFILE_RXE;  /* the fixed timeout: no resend in the test */
		c.max_inflight = 3;
		tp = tu_open(&c);
		assert_int_equal(nr_tp_reg_mr(tp, buf, sizeof(buf), &mr), 0);
		assert_int_equal(nr_tp_qp_create(tp, &qp, &info), 0);
		assert_int_equal(nr_tp_qp_spray(qp, ports, &info), 0);
		inet_pton(AF_INET, "127.0.0.47", &peer.ip);
		assert_int_equal(nr_tp_qp_connect(qp, &peer), 0);
		assert_int_equal(nr_tp_post_write_imm(qp, 1, &mr, buf, sizeof(buf), 0x1000, 7, 9), 0);
		assert_int_equal(spray_count(tp, fd, 300), 3);
		close(fd);
		nr_tp_close(tp);
	}
}

/*
 * The range is bound whole: with the QP's own port + 1 taken, it sprays from
 * another range whose every port it holds; a count beyond 64 and 0 are
 * refused, and spraying twice with the same count changes nothing.
 */
static void test_spray_range_whole(void **state)
{
	struct nr_tp_config c = tu_cfg("127.0.0.45", 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct nr_qp_info info;
	struct nr_tp_qp *qp;
	struct nr_tp *tp;
	uint16_t first;
	int hold;

	(void)state;
	tp = tu_open(&c);
	assert_int_equal(nr_tp_qp_create(tp, &qp, &info), 0);
	first = info.sport;
	hold = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "127.0.0.45", &a.sin_addr);
	a.sin_port = htons((uint16_t)(first + 1));
	assert_int_equal(bind(hold, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(nr_tp_qp_spray(qp, 65, &info), -EINVAL);
	assert_int_equal(nr_tp_qp_spray(qp, 0, &info), -EINVAL);
	assert_int_equal(nr_tp_qp_spray(qp, 3, &info), 0);
	assert_true(info.sport != first);
	for (unsigned k = 0; k < 3; k++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		a.sin_port = htons((uint16_t)(info.sport + k));
		assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), -1);
		assert_int_equal(errno, EADDRINUSE);    /* the QP holds it */
		close(fd);
	}
	assert_int_equal(nr_tp_qp_spray(qp, 3, &info), 0);
	close(hold);
	nr_tp_close(tp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sport_taken_probes_on),
		cmocka_unit_test(test_sport_exhausted_names_port),
		cmocka_unit_test(test_spray_ports_in_turn),
		cmocka_unit_test(test_spray_range_whole),
		cmocka_unit_test(test_spray_window_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
