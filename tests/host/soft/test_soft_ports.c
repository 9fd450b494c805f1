/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft transport's QP source ports.  A QP sends from the UDP port RNICs
 * derive from its QPN (0xC000 | hash); when another socket of the host holds
 * that port, the QP must take the next candidate instead of failing, and when
 * every candidate is taken the error must name the address and port.
 *
 * These tests hold ports of a loopback address of their own with plain UDP
 * sockets, as other QPs and processes of a host would.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "soft_util.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sport_taken_probes_on),
		cmocka_unit_test(test_sport_exhausted_names_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
