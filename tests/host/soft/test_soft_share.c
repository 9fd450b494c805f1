/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several transports of one process on one address and port (the
 * communicators of a PyTorch job's world group and its subgroups): they share
 * the receive socket as an RNIC's contexts share UDP 4791, each packet going
 * to the transport whose QP its BTH names, whichever transport read it.
 *
 * A on 127.0.0.1; B1 and B2 both on 127.0.0.2:4791 (before the sharing, B2's
 * open failed: the address was in use).  qa1 -> qb1 (on B1), qa2 -> qb2 (on
 * B2).  Checked: B2 opens, and two transports opened at once on a new
 * address both open (one binds, one joins); a QPN one transport holds is refused to the
 * other, and an inbox nobody polls holds at most SOFT_INBOX_BYTES (the rest
 * dropped, counted by the reader); a write to B2 read by B1 alone (B2 not polled) is
 * passed whole, every packet counted rx_passed at B1 and nowhere received
 * twice, and B2 completes it exactly; two threads, B2 asleep in its poll while
 * B1 spins on the socket, each of many messages reaching B2 without a stall
 * (B1 passes it and wakes B2); B1 spinning in a thread while B2 takes long
 * messages, every packet still in sequence at B2 (no sequence NAK); closing
 * B1, which bound the socket, leaves B2 working, and after both closed the
 * address binds afresh; a child forked while another thread opens and closes
 * transports opens its own (the registry is never locked in the child).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "soft_util.h"

#include "host/transport/tp_soft_share.h"

/* A list of packets soft_share_take handed out, freed unread. */
static void soft_inject_free_list(struct soft_inject *in)
{
	struct soft_inject **tail = &in;

	soft_inject_drop(&in, &tail);
}

#define MTU 1024

struct two {
	struct nr_tp *a, *b1, *b2;
	struct nr_tp_qp *qa1, *qb1, *qa2, *qb2;
	struct nr_qp_info ib1, ib2;
	uint8_t *src, *dst1, *dst2;
	struct nr_tp_mr smr, rmr1, rmr2;
	size_t len;
};

static struct two tw;

/* qa on a connected to qb on b; *ib: what b's QP told a. */
static void link_qps(struct nr_tp *a, struct nr_tp *b, struct nr_tp_qp **qa, struct nr_tp_qp **qb,
		     struct nr_qp_info *ib)
{
	struct nr_qp_info ia;

	assert_int_equal(nr_tp_qp_create(a, qa, &ia), 0);
	assert_int_equal(nr_tp_qp_create(b, qb, ib), 0);
	assert_int_equal(nr_tp_qp_connect(*qa, ib), 0);
	assert_int_equal(nr_tp_qp_connect(*qb, &ia), 0);
}

static int two_setup(void **state)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.1", MTU), cb = tu_cfg("127.0.0.2", MTU);
	char err[256] = "";
	uint64_t seed = 7;

	(void)state;
	memset(&tw, 0, sizeof(tw));
	tw.len = 64 * 1024;
	tw.a = tu_open(&ca);
	tw.b1 = tu_open(&cb);
	tw.b2 = nr_tp_open(&cb, err, sizeof(err));
	if (!tw.b2) {
		fprintf(stderr, "second transport on 127.0.0.2:4791: %s\n", err);
		return -1;
	}
	tw.src = malloc(tw.len);
	tw.dst1 = calloc(1, tw.len);
	tw.dst2 = calloc(1, tw.len);
	if (!tw.src || !tw.dst1 || !tw.dst2)
		return -1;
	tu_fill(tw.src, tw.len, &seed);
	if (nr_tp_reg_mr(tw.a, tw.src, tw.len, &tw.smr) ||
	    nr_tp_reg_mr(tw.b1, tw.dst1, tw.len, &tw.rmr1) ||
	    nr_tp_reg_mr(tw.b2, tw.dst2, tw.len, &tw.rmr2))
		return -1;
	link_qps(tw.a, tw.b1, &tw.qa1, &tw.qb1, &tw.ib1);
	link_qps(tw.a, tw.b2, &tw.qa2, &tw.qb2, &tw.ib2);
	return 0;
}

static int two_teardown(void **state)
{
	(void)state;
	if (tw.b1)
		nr_tp_close(tw.b1);
	if (tw.b2)
		nr_tp_close(tw.b2);
	if (tw.a)
		nr_tp_close(tw.a);
	free(tw.src);
	free(tw.dst1);
	free(tw.dst2);
	memset(&tw, 0, sizeof(tw));
	return 0;
}

/* Poll tp until one completion of op on qp, within ms; its status. */
static int wait_one(struct nr_tp *tp, struct nr_tp_qp *qp, uint8_t op, uint64_t ms)
{
	uint64_t t0 = tu_now_ms();
	struct nr_wc wc;

	while (tu_now_ms() - t0 < ms) {
		int k = nr_tp_poll(tp, &wc, 1, 0);

		assert_true(k >= 0);
		if (k == 1) {
			assert_ptr_equal(wc.qp, qp);
			assert_int_equal(wc.op, op);
			return wc.status;
		}
	}
	fail_msg("no completion within %llu ms", (unsigned long long)ms);
	return -1;
}

static void test_two_on_one_address(void **state)
{
	struct nr_qp_info ia, ib;
	struct nr_tp_qp *q1, *q2;

	(void)state;
	/* the QPNs of the two transports on the socket never meet */
	for (unsigned i = 0; i < 32; i++) {
		assert_int_equal(nr_tp_qp_create(tw.b1, &q1, &ia), 0);
		assert_int_equal(nr_tp_qp_create(tw.b2, &q2, &ib), 0);
		assert_int_not_equal(ia.qpn, ib.qpn);
		assert_int_equal(ia.udp_port, 4791);
		assert_int_equal(ib.udp_port, 4791);
		nr_tp_qp_destroy(q1);
		nr_tp_qp_destroy(q2);
	}
}

/* Two threads opening a transport on one new address at once: one binds the
 * socket, the other joins it (neither fails with the address in use). */
static pthread_barrier_t open_bar;

static void *open_one(void *arg)
{
	struct nr_tp_config c = tu_cfg("127.0.0.3", MTU);
	char err[256];

	pthread_barrier_wait(&open_bar);
	*(struct nr_tp **)arg = nr_tp_open(&c, err, sizeof(err));
	return NULL;
}

static void test_open_at_once(void **state)
{
	(void)state;
	for (int round = 0; round < 20; round++) {
		struct nr_tp *tp[2] = { NULL, NULL };
		pthread_t th[2];

		assert_int_equal(pthread_barrier_init(&open_bar, NULL, 2), 0);
		for (int i = 0; i < 2; i++)
			assert_int_equal(pthread_create(&th[i], NULL, open_one, &tp[i]), 0);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&open_bar);
		for (int i = 0; i < 2; i++)
			if (tp[i])
				nr_tp_close(tp[i]);
		assert_non_null(tp[0]);
		assert_non_null(tp[1]);
	}
}

/* A thread opening and closing transports on one address without a pause,
 * while the test forks: each child opens a transport of its own within 5 s. */
static atomic_bool churn_stop;

static void *churn(void *arg)
{
	struct nr_tp_config c = tu_cfg("127.0.0.4", MTU);
	char err[256];

	(void)arg;
	while (!atomic_load(&churn_stop)) {
		struct nr_tp *tp = nr_tp_open(&c, err, sizeof(err));

		if (tp)
			nr_tp_close(tp);
	}
	return NULL;
}

static void test_fork_while_opening(void **state)
{
	pthread_t th;
	int hung = 0, failed = 0;

	(void)state;
	atomic_store(&churn_stop, false);
	assert_int_equal(pthread_create(&th, NULL, churn, NULL), 0);
	for (int i = 0; i < 200 && !hung; i++) {
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0) {
			struct nr_tp_config c = tu_cfg("127.0.0.5", MTU);
			char err[256];
			struct nr_tp *tp;

			alarm(5); /* a registry locked for good: the child hangs */
			tp = nr_tp_open(&c, err, sizeof(err));
			_exit(tp ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		hung += WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM;
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	atomic_store(&churn_stop, true);
	pthread_join(th, NULL);
	assert_int_equal(hung, 0);
	assert_int_equal(failed, 0);
}

/* The claims, and an inbox's bound: through the share's own calls. */
static void test_claims_and_inbox_bound(void **state)
{
	struct soft_tp *b1 = (struct soft_tp *)tw.b1, *b2 = (struct soft_tp *)tw.b2;
	struct sockaddr_in from = { .sin_family = AF_INET };
	static uint8_t pkt[4096];
	uint32_t free_qpn = 2;
	unsigned passed = 0;

	(void)state;
	/* a QPN another transport on the socket has is refused; a free one taken */
	assert_int_equal(soft_share_claim(b1, tw.ib2.qpn), -EEXIST);
	assert_int_equal(soft_share_claim(b2, tw.ib1.qpn), -EEXIST);
	while (free_qpn == tw.ib1.qpn || free_qpn == tw.ib2.qpn)
		free_qpn++;
	assert_int_equal(soft_share_claim(b1, free_qpn), 0);
	assert_true(soft_share_foreign(b2, free_qpn));
	assert_false(soft_share_foreign(b1, free_qpn));
	assert_int_equal(soft_share_pass(b2, free_qpn, pkt, 64, &from), SOFT_PASS_DONE);
	soft_inject_free_list(soft_share_take(b1));
	soft_share_release(b1, free_qpn);
	assert_false(soft_share_foreign(b2, free_qpn));
	assert_int_equal(soft_share_pass(b2, free_qpn, pkt, 64, &from), SOFT_PASS_NONE);
	/* an owner nobody polls holds at most SOFT_INBOX_BYTES: the rest dropped */
	while (soft_share_pass(b1, tw.ib2.qpn, pkt, sizeof(pkt), &from) == SOFT_PASS_DONE)
		passed++;
	printf("# %u packets of %zu bytes in B2's inbox, the next dropped\n", passed, sizeof(pkt));
	assert_int_equal(passed, SOFT_INBOX_BYTES / sizeof(pkt));
	assert_int_equal(soft_share_pass(b1, tw.ib2.qpn, pkt, sizeof(pkt), &from), SOFT_PASS_DROPPED);
	soft_inject_free_list(soft_share_take(b2));
	assert_int_equal(soft_share_pass(b1, tw.ib2.qpn, pkt, sizeof(pkt), &from), SOFT_PASS_DONE);
	soft_inject_free_list(soft_share_take(b2));
}

/* A write to B2 that only B1 reads: passed to B2, whole, counted once. */
static void test_passed_whole(void **state)
{
	uint32_t n = tu_npkts((uint32_t)tw.len, MTU);
	uint64_t t0 = tu_now_ms();
	struct nr_wc wc;

	(void)state;
	memset(tw.dst2, 0, tw.len);
	assert_int_equal(nr_tp_post_recv(tw.qb2, 77), 0);
	assert_int_equal(nr_tp_post_write_imm(tw.qa2, 1, &tw.smr, tw.src, (uint32_t)tw.len,
					      tw.rmr2.va, tw.rmr2.rkey, 0xabc),
			 0);
	/* A sends the message (within its window); B1 alone reads the socket */
	while (TU_STAT(tw.b1, rx_passed) < n && tu_now_ms() - t0 < 5000) {
		assert_true(nr_tp_poll(tw.a, &wc, 1, 0) == 0);
		assert_true(nr_tp_poll(tw.b1, &wc, 1, 0) == 0);
	}
	tu_dump_stats("B1", tw.b1);
	assert_true(TU_STAT(tw.b1, rx_passed) >= n);
	assert_int_equal(TU_STAT(tw.b1, rx_pkts), 0);
	assert_int_equal(TU_STAT(tw.b1, rx_unknown_qpn), 0);
	assert_int_equal(TU_STAT(tw.b2, rx_pkts), 0);
	/* B2 takes them (and whatever else A sends after its ACKs) */
	t0 = tu_now_ms();
	assert_int_equal(wait_one(tw.b2, tw.qb2, NR_WC_RECV, 5000), NR_WC_OK);
	for (;;) {
		int k = nr_tp_poll(tw.a, &wc, 1, 0);

		assert_true(k >= 0);
		if (k) {
			assert_int_equal(wc.status, NR_WC_OK);
			assert_ptr_equal(wc.qp, tw.qa2);
			break;
		}
		assert_true(nr_tp_poll(tw.b2, &wc, 1, 0) == 0);
		assert_true(tu_now_ms() - t0 < 5000);
	}
	tu_dump_stats("B2", tw.b2);
	assert_memory_equal(tw.dst2, tw.src, tw.len);
	assert_int_equal(TU_STAT(tw.b2, rx_data), n);
	/* each packet B1 passed B2 received once (more only if A resent on a timeout) */
	assert_true(TU_STAT(tw.b2, rx_pkts) >= TU_STAT(tw.b1, rx_passed));
	assert_true(TU_STAT(tw.b2, rx_dup) <= TU_STAT(tw.a, tx_retrans));
}

/* B2 asleep in nr_tp_poll in its own thread, B1 spinning on the socket. */
struct sleeper {
	atomic_int want; /* completions asked for */
	atomic_int got;
	atomic_bool stop;
	uint64_t worst_ms;
	char bad[96];
};

static void *b2_main(void *arg)
{
	struct sleeper *s = arg;

	while (!atomic_load(&s->stop)) {
		struct nr_wc wc;
		uint64_t t0;
		int k;

		if (atomic_load(&s->got) == atomic_load(&s->want)) {
			usleep(50);
			continue;
		}
		t0 = tu_now_ms();
		k = nr_tp_poll(tw.b2, &wc, 1, 3000);
		if (k < 0 || (k == 1 && wc.status != NR_WC_OK)) {
			snprintf(s->bad, sizeof(s->bad), "B2: poll %d, status %s", k,
				 k < 0 ? "-" : nr_wc_status_str(wc.status));
			return NULL;
		}
		if (k == 1) {
			uint64_t ms = tu_now_ms() - t0;

			s->worst_ms = ms > s->worst_ms ? ms : s->worst_ms;
			atomic_fetch_add(&s->got, 1);
		}
	}
	return NULL;
}

static void test_passed_wakes_sleeper(void **state)
{
	struct sleeper s = { 0 };
	const char *bad = NULL;
	pthread_t th;
	uint64_t passed0 = TU_STAT(tw.b1, rx_passed);
	const int msgs = 200;

	(void)state;
	memset(tw.dst2, 0, tw.len);
	for (int i = 0; i < msgs; i++)
		assert_int_equal(nr_tp_post_recv(tw.qb2, 1000 + (uint64_t)i), 0);
	assert_int_equal(pthread_create(&th, NULL, b2_main, &s), 0);
	for (int i = 0; i < msgs; i++) {
		uint64_t t0 = tu_now_ms();
		size_t off = (size_t)i * 256 % (tw.len - 256);
		bool sent = false;
		struct nr_wc wc;

		atomic_fetch_add(&s.want, 1);
		if (nr_tp_post_write_imm(tw.qa2, (uint64_t)i, &tw.smr, tw.src + off, 256,
					 tw.rmr2.va + off, tw.rmr2.rkey, (uint32_t)i))
			bad = "A: a post failed";
		while (!bad && (!sent || atomic_load(&s.got) <= i) && tu_now_ms() - t0 < 5000) {
			int k = nr_tp_poll(tw.a, &wc, 1, 0);

			if (k < 0 || (k && wc.status != NR_WC_OK))
				bad = "A: a send failed";
			sent = sent || k > 0;
			if (nr_tp_poll(tw.b1, &wc, 1, 0))
				bad = "B1: poll returned a completion or an error";
		}
		if (bad || !sent || atomic_load(&s.got) <= i)
			break;
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	tu_dump_stats("B1", tw.b1);
	tu_dump_stats("B2", tw.b2);
	printf("# %d of %d messages, B1 passed %llu packets, B2's longest wait %llu ms\n",
	       atomic_load(&s.got), msgs, (unsigned long long)(TU_STAT(tw.b1, rx_passed) - passed0),
	       (unsigned long long)s.worst_ms);
	/* no assertion while B2's thread runs: a failure would leave it polling */
	if (bad || s.bad[0])
		fail_msg("%s", bad ? bad : s.bad);
	assert_int_equal(atomic_load(&s.got), msgs);
	/* a pass that did not wake B2 leaves it asleep for its 3 s */
	assert_true(s.worst_ms < 1500);
	for (int i = 0; i < msgs; i++) {
		size_t off = (size_t)i * 256 % (tw.len - 256);

		assert_memory_equal(tw.dst2 + off, tw.src + off, 256);
	}
}

/* B1 spinning on the socket in a thread of its own while B2 takes a long
 * message: B1 passes some of B2's packets, and B2 still sees them in the
 * order they came (one transport reads at a time and passes before it lets
 * go): no packet out of sequence, no sequence NAK. */
static atomic_bool spin_stop, spinning;

static void *b1_spin(void *arg)
{
	struct nr_wc wc;

	(void)arg;
	atomic_store(&spinning, true);
	while (!atomic_load(&spin_stop))
		if (nr_tp_poll(tw.b1, &wc, 1, 0) < 0)
			break;
	return NULL;
}

static void test_passed_in_order(void **state)
{
	uint64_t passed0 = TU_STAT(tw.b1, rx_passed), t0 = tu_now_ms();
	uint64_t ooo0 = TU_STAT(tw.b2, rx_out_of_seq), nak0 = TU_STAT(tw.b2, tx_nak_seq);
	const int msgs = 256;
	int sent = 0, got = 0, posted = 0;
	const char *bad = NULL;
	pthread_t th;

	(void)state;
	if (geteuid() != 0) /* SO_RCVBUFFORCE: else kernel drops would read as reordering */
		skip_msg_and_return("needs root: the receive socket's buffer is capped otherwise");
	memset(tw.dst2, 0, tw.len);
	atomic_store(&spin_stop, false);
	atomic_store(&spinning, false);
	assert_int_equal(pthread_create(&th, NULL, b1_spin, NULL), 0);
	while (!atomic_load(&spinning))
		;
	/* no assertion while B1's thread runs: a failure would leave it polling */
	while (!bad && (sent < msgs || got < msgs) && tu_now_ms() - t0 < 60000) {
		struct nr_wc wc[16];
		int k;

		for (; !bad && posted < msgs && posted < got + 32; posted++)
			if (nr_tp_post_recv(tw.qb2, (uint64_t)posted) ||
			    nr_tp_post_write_imm(tw.qa2, (uint64_t)posted, &tw.smr, tw.src,
						 (uint32_t)tw.len, tw.rmr2.va, tw.rmr2.rkey,
						 (uint32_t)posted))
				bad = "a post failed";
		k = nr_tp_poll(tw.a, wc, 16, 0);
		for (int i = 0; i < k; i++)
			bad = wc[i].status != NR_WC_OK ? "A: a send failed" : bad;
		sent += k > 0 ? k : 0;
		bad = k < 0 ? "A: poll failed" : bad;
		k = nr_tp_poll(tw.b2, wc, 16, 0);
		for (int i = 0; i < k; i++)
			bad = wc[i].status != NR_WC_OK ? "B2: a receive failed" : bad;
		got += k > 0 ? k : 0;
		bad = k < 0 ? "B2: poll failed" : bad;
	}
	atomic_store(&spin_stop, true);
	pthread_join(th, NULL);
	tu_dump_stats("B1", tw.b1);
	tu_dump_stats("B2", tw.b2);
	tu_dump_stats("A", tw.a);
	printf("# %d of %d messages of %zu bytes, B1 passed %llu packets\n", got, msgs, tw.len,
	       (unsigned long long)(TU_STAT(tw.b1, rx_passed) - passed0));
	if (bad)
		fail_msg("%s", bad);
	assert_int_equal(sent, msgs);
	assert_int_equal(got, msgs);
	assert_memory_equal(tw.dst2, tw.src, tw.len);
	assert_true(TU_STAT(tw.b1, rx_passed) > passed0);
	/* (an ACK timeout on this loaded machine resends: duplicates, not these) */
	assert_int_equal(TU_STAT(tw.b2, rx_out_of_seq) - ooo0, 0);
	assert_int_equal(TU_STAT(tw.b2, tx_nak_seq) - nak0, 0);
}

/* B1 bound the socket; B2 goes on without it, and the address is free after both. */
static void test_first_closes(void **state)
{
	struct nr_tp_config cb = tu_cfg("127.0.0.2", MTU);
	struct nr_tp *again;

	(void)state;
	nr_tp_close(tw.b1);
	tw.b1 = NULL;
	memset(tw.dst2, 0, 4096);
	assert_int_equal(nr_tp_post_recv(tw.qb2, 5), 0);
	assert_int_equal(nr_tp_post_write_imm(tw.qa2, 9, &tw.smr, tw.src, 4096, tw.rmr2.va,
					      tw.rmr2.rkey, 1),
			 0);
	assert_int_equal(nr_tp_poll(tw.a, &(struct nr_wc){ 0 }, 1, 0), 0); /* sent */
	assert_int_equal(wait_one(tw.b2, tw.qb2, NR_WC_RECV, 5000), NR_WC_OK);
	assert_memory_equal(tw.dst2, tw.src, 4096);
	assert_int_equal(wait_one(tw.a, tw.qa2, NR_WC_SEND, 5000), NR_WC_OK);
	nr_tp_close(tw.b2);
	tw.b2 = NULL;
	again = tu_open(&cb);
	nr_tp_close(again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* clang-format off */
		cmocka_unit_test(test_two_on_one_address),
		cmocka_unit_test(test_open_at_once),
		cmocka_unit_test(test_claims_and_inbox_bound),
		cmocka_unit_test(test_passed_whole),
		cmocka_unit_test(test_passed_wakes_sleeper),
		cmocka_unit_test(test_passed_in_order),
		cmocka_unit_test(test_first_closes),
		cmocka_unit_test(test_fork_while_opening),
		/* clang-format on */
	};

	return cmocka_run_group_tests(tests, two_setup, two_teardown);
}
