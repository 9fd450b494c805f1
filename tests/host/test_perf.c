/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-allreduce-perf (path in argv[1]) as the testbed runs it: one process per
 * rank configured by NR_* variables, --check --json; and its error exits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <math.h>

#include <cmocka.h>
#include <jansson.h>

#include "ranks.h"

static const char *perf_bin;
static const char *local_size;   /* NR_LOCAL_SIZE of the ranks (NULL: unset) */
static const char *racks;        /* NR_RACKS of the ranks (NULL: unset) */

/* Run world ranks of the tool with args; rank 0's stdout into out; exit codes into st. */
static void run_perf(int world, const char *const *args, char *out, size_t outlen, int *st,
		     unsigned salt)
{
	struct ranks_env env;
	pid_t pids[RANKS_MAX];
	char path[64];

	ranks_env_init(&env, salt);
	snprintf(path, sizeof(path), "/tmp/nrc-perf-%d.out", (int)getpid());
	fflush(NULL);
	for (int r = 0; r < world; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			char v[32], *argv[16];
			int n = 0, fd;

			snprintf(v, sizeof(v), "%d", r);
			setenv("NR_RANK", v, 1);
			snprintf(v, sizeof(v), "%d", world);
			setenv("NR_WORLD", v, 1);
			setenv("NR_ROOT", env.root, 1);
			setenv("NR_ADDR", env.addr[r], 1);
			snprintf(v, sizeof(v), "%u", env.udp_port);
			setenv("NR_UDP_PORT", v, 1);
			setenv("NR_TIMEOUT_MS", "5000", 1);
			unsetenv("NR_BOX");
			if (local_size)
				setenv("NR_LOCAL_SIZE", local_size, 1);
			else
				unsetenv("NR_LOCAL_SIZE");
			if (racks)
				setenv("NR_RACKS", racks, 1);
			else
				unsetenv("NR_RACKS");
			if (r == 0) {
				fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
				dup2(fd, 1);
				close(fd);
			}
			argv[n++] = (char *)perf_bin;
			for (int i = 0; args[i] && n < 15; i++)
				argv[n++] = (char *)args[i];
			argv[n] = NULL;
			execv(perf_bin, argv);
			_exit(127);
		}
	}
	ranks_wait(world, pids, st, 60000, NULL);
	out[0] = '\0';
	FILE *f = fopen(path, "r");

	if (f) {
		size_t n = fread(out, 1, outlen - 1, f);

		out[n] = '\0';
		fclose(f);
	}
	unlink(path);
	printf("%s", out);
}

/* world ranks, `local` per host: --check finds no wrong element; the JSON lines are complete. */
static void check_json(int world, int local, const char *variant, unsigned salt)
{
	static const char *const args[] = { "--algo", "ring", "-b", "4", "-e", "300K", "-f", "7",
					     "-n", "3", "-w", "1", "--check", "--json", NULL };
	static char out[8192];
	int st[RANKS_MAX], lines = 0;
	size_t expect = 4;

	run_perf(world, args, out, sizeof(out), st, salt);
	for (int r = 0; r < world; r++)
		assert_int_equal(st[r], 0);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), lines++) {
		json_error_t e;
		json_t *j = json_loads(line, 0, &e);
		const char *algo, *var;
		int ranks, loc, wrong;
		json_int_t bytes;
		double t, alg, bus;

		assert_non_null(j);
		assert_int_equal(json_unpack(j, "{s:s,s:s,s:i,s:i,s:I,s:F,s:F,s:F,s:i}", "algo", &algo,
					     "variant", &var, "ranks", &ranks, "local", &loc, "bytes",
					     &bytes, "time_us", &t, "algbw_gbps", &alg, "busbw_gbps",
					     &bus, "wrong", &wrong), 0);
		assert_string_equal(algo, "ring");
		assert_string_equal(var, variant);
		assert_int_equal(ranks, world);
		assert_int_equal(loc, local);
		assert_int_equal(bytes, expect);
		assert_int_equal(wrong, 0);
		assert_true(t > 0 && alg > 0);
		assert_true(fabs(bus - alg * 2 * (world - 1) / world) <= 1e-5 * bus);  /* 2(N-1)/N */
		json_decref(j);
		expect *= 7;
	}
	assert_int_equal(lines, 6);   /* 4, 28, ..., 67228 bytes */
}

static void test_ring_check_json(void **state)
{
	local_size = NULL;
	check_json(3, 1, "flat", 31);
}

/* 3 hosts of 2 ranks: the reference follows the hosts' layout (netreduce.h). */
static void test_hosts_check_json(void **state)
{
	local_size = "2";
	setenv("NR_HIER", "hierarchical", 1);
	check_json(6, 2, "hierarchical", 34);
	unsetenv("NR_HIER");
	local_size = NULL;
}

static void test_errors_exit_2(void **state)
{
	static const char *const no_box[] = { "--algo", "netreduce", NULL };
	static const char *const bad_size[] = { "-b", "1X", NULL };
	static char out[1024];
	int st[RANKS_MAX];

	run_perf(2, no_box, out, sizeof(out), st, 32);
	assert_int_equal(st[0], 2);
	assert_int_equal(st[1], 2);
	run_perf(1, bad_size, out, sizeof(out), st, 33);
	assert_int_equal(st[0], 2);
}

/* 3 racks of 2, 1 and 2 hosts (no box: incremental deployment everywhere). */
static void test_racks_check_json(void **state)
{
	racks = "2,1,2";
	check_json(5, 1, "racks", 35);
	racks = NULL;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_check_json),
		cmocka_unit_test(test_hosts_check_json),
		cmocka_unit_test(test_racks_check_json),
		cmocka_unit_test(test_errors_exit_2),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: test_perf PATH-TO-nr-allreduce-perf\n");
		return 2;
	}
	perf_bin = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
