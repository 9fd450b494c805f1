// SPDX-License-Identifier: BSD-3-Clause
/*
 * The RoCE MTU of a communicator (nr_comm.c resolve_mtu): NR_MTU unset, the
 * largest the interface of NR_ADDR carries (the kernel's rule, 96 bytes of
 * headers) that divides the message size; NR_MTU too large for it, a failure
 * at init naming the interface and what would work.  Two ranks on the lo of a
 * network namespace of this test's own, whose MTU it sets: 65536 (4096),
 * 4191 (2048), 1500 (1024), a 3 KiB message size (1024), NR_MTU=4096 on 1500
 * (refused), and every ring all-reduce exact at the MTU chosen.
 * Needs root (a network namespace): skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sched.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "host/collective/comm_internal.h"
#include "ranks.h"

#define COUNT (256 * 1024)

struct mtu_case {
	struct ranks_env env;
	uint32_t nr_mtu;         /* NR_MTU, 0: unset */
	uint32_t msg_size;       /* 0: the default */
	uint32_t want;           /* the MTU every rank must end up with */
};

/* Rank r: init, check the MTU, one ring all-reduce checked against the ring order. */
static int mtu_child(int rank, int world, void *arg)
{
	const struct mtu_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;
	float *x = malloc(COUNT * sizeof(float)), *y = malloc(COUNT * sizeof(float));
	float *ref = malloc(COUNT * sizeof(float));
	int rc;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.mtu = t->nr_mtu;
	if (t->msg_size)
		cfg.msg_size = t->msg_size;
	rc = nr_comm_init(&cfg, &c);
	if (rc) {
		fprintf(stderr, "rank %d: nr_comm_init: %s\n", rank, nr_comm_last_error(NULL));
		return 2;
	}
	if (c->cfg.mtu != t->want) {
		fprintf(stderr, "rank %d: MTU %u, expected %u\n", rank, c->cfg.mtu, t->want);
		return 3;
	}
	ranks_fill(7, rank, x, COUNT);
	rc = nr_ring_allreduce(c, x, y, COUNT, NR_FLOAT32, NR_SUM);
	if (rc) {
		fprintf(stderr, "rank %d: ring all-reduce: %s\n", rank, nr_comm_last_error(c));
		return 4;
	}
	ranks_ring_reference(7, world, ref, COUNT);
	for (size_t i = 0; i < COUNT; i++)
		if (memcmp(&y[i], &ref[i], sizeof(float))) {
			fprintf(stderr, "rank %d: element %zu differs\n", rank, i);
			return 5;
		}
	nr_comm_destroy(c);
	free(x);
	free(y);
	free(ref);
	return 0;
}

/* lo of our namespace: up, with IP MTU mtu. */
static void lo_mtu(int mtu)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	assert_int_equal(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	ifr.ifr_mtu = mtu;
	assert_int_equal(ioctl(fd, SIOCSIFMTU, &ifr), 0);
	close(fd);
}

static void run_case(int ifmtu, uint32_t nr_mtu, uint32_t msg_size, uint32_t want)
{
	static unsigned salt;
	struct mtu_case t = { .nr_mtu = nr_mtu, .msg_size = msg_size, .want = want };
	pid_t pids[2];
	int st[2];

	printf("# lo MTU %d, NR_MTU %u, message %u: expect %u\n", ifmtu, nr_mtu, msg_size, want);
	lo_mtu(ifmtu);
	ranks_env_init(&t.env, ++salt);
	ranks_fork(2, mtu_child, &t, pids);
	ranks_wait(2, pids, st, 60000, NULL);
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], 0);
}

static void test_loopback_4096(void **state) { run_case(65536, 0, 0, 4096); }
static void test_jumbo_short_2048(void **state) { run_case(4191, 0, 0, 2048); }
static void test_ethernet_1024(void **state) { run_case(1500, 0, 0, 1024); }
static void test_message_divides(void **state) { run_case(65536, 0, 3072, 1024); }
static void test_asked_fits(void **state) { run_case(4200, 1024, 0, 1024); }

/* NR_MTU=4096 on a 1500-byte interface: refused at init, saying what would work. */
static void test_asked_too_large(void **state)
{
	struct ranks_env env;
	struct nr_config cfg;
	struct nr_comm *c = NULL;
	const char *msg;

	lo_mtu(1500);
	ranks_env_init(&env, 99);
	ranks_config(&env, 1, 2, &cfg);
	cfg.mtu = 4096;
	cfg.bootstrap_timeout_ms = 3000;     /* were it not refused, no rank 0 would come */
	assert_int_equal(nr_comm_init(&cfg, &c), NR_ERR_CONFIG);
	msg = nr_comm_last_error(NULL);
	printf("# %s\n", msg);
	assert_non_null(strstr(msg, "NR_MTU=4096"));
	assert_non_null(strstr(msg, "4192"));
	assert_non_null(strstr(msg, "lo"));
	assert_non_null(strstr(msg, "NR_MTU=1024"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback_4096),
		cmocka_unit_test(test_jumbo_short_2048),
		cmocka_unit_test(test_ethernet_1024),
		cmocka_unit_test(test_message_divides),
		cmocka_unit_test(test_asked_fits),
		cmocka_unit_test(test_asked_too_large),
	};

	if (geteuid() != 0) {
		printf("SKIP: test_mtu: needs root (a network namespace whose lo MTU it sets)\n");
		return 77;
	}
	if (unshare(CLONE_NEWNET)) {
		printf("SKIP: test_mtu: cannot create a network namespace (unshare: %s)\n",
		       strerror(errno));
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
