/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr_ring_allreduce over the soft transport between 2 to 8 processes on
 * loopback, sizes from 1 element to 64 MiB, odd sizes, in place and out of
 * place: every rank must end with bytes identical to the reference summed in
 * the ring's own order (ranks.h), hence with the same bytes as every other rank.
 * Also: killing one rank mid-operation, and the box path with no box listening.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "host/comm/comm_internal.h"
#include "host/transport/tp_soft.h"
#include "ranks.h"

#define MAX_SIZES 16

struct shared_out {
	uint64_t hash[RANKS_MAX][MAX_SIZES][2];
	char msg[RANKS_MAX][512];
	int started[RANKS_MAX];
	uint64_t fail_ms[RANKS_MAX];
	uint64_t passed[RANKS_MAX]; /* packets a rank's transport passed to another's */
	int rc[RANKS_MAX];
};

struct ring_case {
	struct ranks_env env;
	size_t sizes[MAX_SIZES];
	int nsizes;
	size_t big;          /* an extra size done only out of place (0: none) */
	int loss_pct;        /* drop this share of the packets each rank sends (soft filter) */
	int reps;            /* repeat the sizes (default 1) */
	uint32_t mtu, msg_size;  /* 0: defaults */
	uint64_t seed;
	uint32_t timeout_ms;
	uint32_t boot_ms;        /* bootstrap_timeout_ms (0: default) */
	uint32_t late_ms;        /* the last rank calls nr_comm_init this late */
	bool max;                /* NR_MAX instead of NR_SUM */
	enum nr_dtype dtype;     /* NR_FLOAT32, or a 16-bit type (check16) */
	unsigned sr_ranks;       /* bit r: rank r runs NR_SOFT_PROFILE=sr */
	struct shared_out *out;
};

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static int child_fail(struct ring_case *t, int rank, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->out->msg[rank], sizeof(t->out->msg[rank]), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rank %d: %s\n", rank, t->out->msg[rank]);
	return code;
}

static int check_one(struct ring_case *t, struct nr_comm *c, int rank, int world, size_t count,
		     int k, int inplace)
{
	size_t bytes = count ? count * 4 : 4;
	float *send = malloc(bytes), *recv = malloc(bytes), *ref = malloc(bytes);
	int rc;

	if (!send || !recv || !ref)
		return child_fail(t, rank, 3, "out of memory for %zu elements", count);
	enum nr_op op = t->max ? NR_MAX : NR_SUM;

	ranks_fill(t->seed + count, rank, send, count);
	if (t->max)
		ranks_max_reference(t->seed + count, world, ref, count);
	else
		ranks_ring_reference(t->seed + count, world, ref, count);
	memset(recv, 0xA5, bytes);
	if (inplace) {
		memcpy(recv, send, count * 4);
		rc = nr_ring_allreduce(c, recv, recv, count, NR_FLOAT32, op);
	} else {
		rc = nr_ring_allreduce(c, send, recv, count, NR_FLOAT32, op);
	}
	if (rc) {
		rc = child_fail(t, rank, 4, "count %zu %s: %s: %s", count, inplace ? "in place" :
				"out of place", nr_strerror(rc), nr_comm_last_error(c));
		goto out;
	}
	if (!inplace) {
		float *again = malloc(bytes);

		ranks_fill(t->seed + count, rank, again, count);
		if (memcmp(again, send, count * 4))
			rc = child_fail(t, rank, 5, "count %zu: sendbuf was modified", count);
		free(again);
		if (rc)
			goto out;
	}
	if (memcmp(recv, ref, count * 4)) {
		size_t i = 0;

		while (!memcmp(&recv[i], &ref[i], 4))
			i++;
		rc = child_fail(t, rank, 6, "count %zu %s: element %zu is %.9g, reference %.9g",
				count, inplace ? "in place" : "out of place", i, recv[i], ref[i]);
		goto out;
	}
	t->out->hash[rank][k][inplace] = fnv(recv, count * 4);
out:
	free(send);
	free(recv);
	free(ref);
	return rc;
}

/* A 16-bit all-reduce: every element equal to the ring's per-hop reference. */
static int check16(struct ring_case *t, struct nr_comm *c, int rank, int world, size_t count,
		   int k, int inplace)
{
	size_t bytes = (count ? count : 1) * 2;
	uint16_t *send = malloc(bytes), *recv = malloc(bytes), *ref = malloc(bytes);
	const char *name = t->dtype == NR_BF16 ? "bf16" : "fp16";
	int rc = 0;

	if (!send || !recv || !ref)
		return child_fail(t, rank, 3, "out of memory for %zu elements", count);
	for (size_t i = 0; i < count; i++)
		send[i] = ranks_value16(t->seed + count, rank, i, t->dtype);
	ranks_ring_reference16(t->seed + count, world, t->dtype, ref, count);
	memset(recv, 0xA5, bytes);
	if (inplace)
		memcpy(recv, send, count * 2);
	rc = nr_ring_allreduce(c, inplace ? recv : send, recv, count, t->dtype, NR_SUM);
	if (rc) {
		rc = child_fail(t, rank, 4, "%s count %zu: %s: %s", name, count, nr_strerror(rc),
				nr_comm_last_error(c));
		goto out;
	}
	for (size_t i = 0; i < count && !rc; i++)
		if (recv[i] != ref[i])
			rc = child_fail(t, rank, 6, "%s count %zu %s: element %zu is 0x%04x, reference "
					"0x%04x", name, count, inplace ? "in place" : "out of place", i,
					recv[i], ref[i]);
	if (!rc)
		t->out->hash[rank][k][inplace] = fnv(recv, count * 2);
out:
	free(send);
	free(recv);
	free(ref);
	return rc;
}

/* Drops pct% of the packets a rank sends (seeded xorshift). */
struct lossy {
	uint64_t state;
	int pct;
};

static int lossy_filter(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct lossy *l = arg;

	if (dir != NR_SOFT_TX)
		return NR_SOFT_PASS;
	l->state ^= l->state << 13;
	l->state ^= l->state >> 7;
	l->state ^= l->state << 17;
	return (int)(l->state % 100) < l->pct ? NR_SOFT_DROP : NR_SOFT_PASS;
}

static int ring_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;
	int rc;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms;
	if (t->boot_ms)
		cfg.bootstrap_timeout_ms = t->boot_ms;
	if (t->late_ms && rank == world - 1)
		usleep(t->late_ms * 1000u);
	if (t->mtu)
		cfg.mtu = t->mtu;
	if (t->msg_size)
		cfg.msg_size = t->msg_size;
	if (t->sr_ranks >> rank & 1)
		cfg.soft_profile = "sr";
	rc = nr_comm_init(&cfg, &c);
	if (rc)
		return child_fail(t, rank, 2, "init: %s: %s", nr_strerror(rc), nr_comm_last_error(NULL));
	if (t->loss_pct) {
		static struct lossy l;

		l = (struct lossy){ .state = t->seed * 31 + rank + 1, .pct = t->loss_pct };
		nr_tp_soft_set_filter(c->tp, lossy_filter, &l);
	}
	for (int rep = 0; rep < (t->reps ? t->reps : 1) && !rc; rep++)
		for (int k = 0; k < t->nsizes && !rc; k++)
			for (int inplace = 0; inplace < 2 && !rc; inplace++)
				rc = t->dtype == NR_FLOAT32 ? check_one(t, c, rank, world, t->sizes[k], k, inplace)
							    : check16(t, c, rank, world, t->sizes[k], k, inplace);
	if (!rc && t->big)
		rc = check_one(t, c, rank, world, t->big, MAX_SIZES - 1, 0);
	nr_comm_destroy(c);
	return rc;
}

static void run_ring_sr(int world, const size_t *sizes, int nsizes, size_t big, unsigned salt,
			int loss_pct, int reps, uint32_t mtu, uint32_t msg_size, bool max,
			enum nr_dtype dtype, unsigned sr_ranks)
{
	struct ring_case t = { .nsizes = nsizes,
			       .big = big,
			       .timeout_ms = 10000,
			       .loss_pct = loss_pct,
			       .reps = reps,
			       .mtu = mtu,
			       .msg_size = msg_size,
			       .max = max,
			       .dtype = dtype,
			       .sr_ranks = sr_ranks };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	t.seed = (uint64_t)time(NULL) * 1000003u + salt;
	printf("ring world %d%s%s%s: seed %llu, loss %d%%, mtu %u, msg_size %u\n", world,
	       max ? ", max" : "",
	       dtype == NR_BF16   ? ", bf16"
	       : dtype == NR_FP16 ? ", fp16"
				  : "",
	       sr_ranks ? ", selective repeat" : "", (unsigned long long)t.seed, loss_pct, mtu,
	       msg_size);
	ranks_env_init(&t.env, salt);
	memcpy(t.sizes, sizes, nsizes * sizeof(*sizes));
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(world, ring_child, &t, pids);
	ranks_wait(world, pids, status, 150000, NULL);
	for (int r = 0; r < world; r++) {
		if (status[r])
			fprintf(stderr, "rank %d exit %d: %s\n", r, status[r], t.out->msg[r]);
		assert_int_equal(status[r], 0);
	}
	/* every rank holds the same bytes */
	for (int k = 0; k < MAX_SIZES; k++)
		for (int ip = 0; ip < 2; ip++)
			for (int r = 1; r < world; r++)
				assert_true(t.out->hash[r][k][ip] == t.out->hash[0][k][ip]);
	munmap(t.out, sizeof(*t.out));
}

static void run_ring_type(int world, const size_t *sizes, int nsizes, size_t big, unsigned salt,
			  int loss_pct, int reps, uint32_t mtu, uint32_t msg_size, bool max,
			  enum nr_dtype dtype)
{
	run_ring_sr(world, sizes, nsizes, big, salt, loss_pct, reps, mtu, msg_size, max, dtype, 0);
}

static void run_ring_case(int world, const size_t *sizes, int nsizes, size_t big,
			  unsigned salt, int loss_pct, int reps, uint32_t mtu, uint32_t msg_size,
			  bool max)
{
	run_ring_type(world, sizes, nsizes, big, salt, loss_pct, reps, mtu, msg_size, max,
		      NR_FLOAT32);
}

static void run_ring_opts(int world, const size_t *sizes, int nsizes, size_t big,
			  unsigned salt, int loss_pct, int reps, uint32_t mtu, uint32_t msg_size)
{
	run_ring_case(world, sizes, nsizes, big, salt, loss_pct, reps, mtu, msg_size, false);
}

/*
 * A rank that starts later than the progress timeout (1 s here) joins: the
 * rendezvous waits NR_BOOTSTRAP_TIMEOUT_MS (10 s here), not NR_TIMEOUT_MS.
 */
static void test_late_start(void **state)
{
	struct ring_case t = { .nsizes = 1, .sizes = { 4100 }, .timeout_ms = 1000,
			       .boot_ms = 10000, .late_ms = 2500 };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	ranks_env_init(&t.env, 17);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(3, ring_child, &t, pids);
	ranks_wait(3, pids, status, 60000, NULL);
	for (int r = 0; r < 3; r++) {
		if (status[r])
			fprintf(stderr, "rank %d exit %d: %s\n", r, status[r], t.out->msg[r]);
		assert_int_equal(status[r], 0);
	}
	for (int r = 1; r < 3; r++)
		assert_true(t.out->hash[r][0][0] == t.out->hash[0][0][0]);
	munmap(t.out, sizeof(*t.out));
}

static void run_ring(int world, const size_t *sizes, int nsizes, size_t big, unsigned salt)
{
	run_ring_opts(world, sizes, nsizes, big, salt, 0, 1, 0, 0);
}

static void test_ring_2(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 1023, 16385, 65537, (1 << 20) + 3 };

	run_ring(2, sizes, sizeof(sizes) / sizeof(sizes[0]), 16u << 20 /* 64 MiB */, 1);
}

/* 2 KiB MTU, 8 KiB messages: 1M+3 elements are ~700 messages per op, far more
 * than the receives kept posted and the send window. */
static void test_ring_3(void **state)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 1023, 65537, (1 << 20) + 3 };

	run_ring_opts(3, sizes, sizeof(sizes) / sizeof(sizes[0]), 0, 2, 0, 1, 2048, 8192);
}

static void test_ring_4(void **state)
{
	static const size_t sizes[] = { 1, 3, 5, 1023, 65537, (1 << 20) + 3 };

	run_ring(4, sizes, sizeof(sizes) / sizeof(sizes[0]), 0, 3);
}

static void test_ring_8(void **state)
{
	static const size_t sizes[] = { 1, 7, 9, 1023, 65537, 262147 };

	run_ring(8, sizes, sizeof(sizes) / sizeof(sizes[0]), 0, 4);
}

/* NR_MAX on the ring: the max of the ranks, the same on every rank */
static void test_ring_4_max(void **state)
{
	static const size_t sizes[] = { 1, 3, 5, 1023, 65537, (1 << 20) + 3 };

	run_ring_case(4, sizes, sizeof(sizes) / sizeof(sizes[0]), 0, 9, 0, 1, 0, 0, true);
}

/* 16-bit types on the ring: rounded at every hop, exactly as the reference
 * (ranks.h), odd sizes, 2 KiB MTU (messages of odd elements' halves) */
static void test_ring_16bit(void **state)
{
	static const size_t sizes[] = { 1, 2, 3, 1023, 65537, (1 << 19) + 3 };

	run_ring_type(3, sizes, 6, 0, 11, 0, 1, 2048, 8192, false, NR_BF16);
	run_ring_type(4, sizes, 6, 0, 12, 0, 1, 0, 0, false, NR_FP16);
}

/* 2% of every rank's packets lost: go-back-N recovers, results stay exact. */
static void test_ring_4_lossy(void **state)
{
	static const size_t sizes[] = { 1, 3, 1023, 65537 };

	run_ring_opts(4, sizes, sizeof(sizes) / sizeof(sizes[0]), 0, 7, 2, 3, 0, 0);
}

/* The same losses with selective repeat on every rank: exact, the same bytes everywhere. */
static void test_ring_4_lossy_sr(void **state)
{
	static const size_t sizes[] = { 1, 3, 1023, 65537 };

	run_ring_sr(4, sizes, sizeof(sizes) / sizeof(sizes[0]), 0, 23, 2, 3, 0, 0, false,
		    NR_FLOAT32, 0xf);
}

/* ---- ranks of both loss recoveries: refused at the rendezvous, by name ---- */

static int mixed_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms;
	if (t->sr_ranks >> rank & 1)
		cfg.soft_profile = "sr";
	t->out->rc[rank] = nr_comm_init(&cfg, &c);
	child_fail(t, rank, 0, "%s", nr_comm_last_error(NULL));
	if (t->out->rc[rank] == 0)
		nr_comm_destroy(c);
	return 0;
}

static void test_mixed_profiles_refused(void **state)
{
	struct ring_case t = { .timeout_ms = 3000, .sr_ranks = 2 };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	ranks_env_init(&t.env, 29);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(2, mixed_child, &t, pids);
	ranks_wait(2, pids, status, 20000, NULL);
	for (int r = 0; r < 2; r++) {
		printf("rank %d: %s: %s\n", r, nr_strerror(t.out->rc[r]), t.out->msg[r]);
		assert_int_equal(status[r], 0);
		assert_int_not_equal(t.out->rc[r], 0);
	}
	/* rank 0 names the setting; rank 1's rendezvous ends with it */
	assert_int_equal(t.out->rc[0], NR_ERR_CONFIG);
	assert_non_null(strstr(t.out->msg[0], "rank 1 (from 127.0.0.11) runs NR_SOFT_PROFILE=sr "
					      "(selective repeat), rank 0 does not"));
	munmap(t.out, sizeof(*t.out));
}

/*
 * Two communicators in a process, as a framework's world group and a subgroup
 * hold (PyTorch's new_group, a DeviceMesh's dimensions): 3 ranks in A, ranks 0
 * and 1 also in B, on A's UDP port (the soft transport's transports of an
 * address share its socket).  Each process runs A's all-reduces and B's at
 * once, a thread each: every result the reference, and the packets one
 * transport read for the other passed to it (rx_passed), none unknown.
 */
struct two_run {
	struct ring_case *t;
	struct nr_comm *c;
	int rank, world, rc;
};

static void *two_thread(void *arg)
{
	struct two_run *w = arg;

	for (int rep = 0; rep < w->t->reps && !w->rc; rep++)
		for (int k = 0; k < w->t->nsizes && !w->rc; k++)
			w->rc = check_one(w->t, w->c, w->rank, w->world, w->t->sizes[k], k, rep & 1);
	return NULL;
}

static int two_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	struct two_run run[2] = { { &t[0], NULL, rank, world, 0 }, { &t[1], NULL, rank, 2, 0 } };
	int n = rank < 2 ? 2 : 1, rc = 0;
	pthread_t th[2];

	for (int i = 0; i < n; i++) {
		struct nr_config cfg;

		ranks_config(&t[i].env, rank, run[i].world, &cfg);
		cfg.timeout_ms = t[i].timeout_ms;
		rc = nr_comm_init(&cfg, &run[i].c);
		if (rc)
			return child_fail(&t[i], rank, 2, "init of communicator %c: %s: %s",
					  'A' + i, nr_strerror(rc), nr_comm_last_error(NULL));
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, two_thread, &run[i]))
			return child_fail(&t[i], rank, 3, "pthread_create");
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		struct nr_tp_soft_stats st;

		if (!run[i].rc && !nr_tp_soft_stats(run[i].c->tp, &st) && st.rx_unknown_qpn)
			run[i].rc = child_fail(&t[i], rank, 7, "%llu packets for no QP",
					       (unsigned long long)st.rx_unknown_qpn);
		if (!nr_tp_soft_stats(run[i].c->tp, &st))
			t[i].out->passed[rank] = st.rx_passed;
	}
	for (int i = n; i-- > 0;) /* the subgroup's first, as a framework closes them */
		nr_comm_destroy(run[i].c);
	return run[0].rc ? run[0].rc : run[1].rc;
}

static void test_two_comms_one_process(void **state)
{
	static const size_t sizes[] = { 1, 1023, 65537, (1 << 18) + 3 };
	struct ring_case t[2] = { { .timeout_ms = 10000, .reps = 4 },
				  { .timeout_ms = 10000, .reps = 4 } };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];
	uint64_t passed = 0;

	(void)state;
	for (int i = 0; i < 2; i++) {
		ranks_env_init(&t[i].env, 31 + (unsigned)i);
		t[i].seed = (uint64_t)time(NULL) * 1000003u + (unsigned)i;
		t[i].nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
		memcpy(t[i].sizes, sizes, sizeof(sizes));
		t[i].out = mmap(NULL, sizeof(*t[i].out), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		assert_true(t[i].out != MAP_FAILED);
		memset(t[i].out, 0, sizeof(*t[i].out));
	}
	t[1].env.udp_port = t[0].env.udp_port; /* one socket an address */
	ranks_fork(3, two_child, t, pids);
	ranks_wait(3, pids, status, 120000, NULL);
	for (int r = 0; r < 3; r++) {
		if (status[r])
			fprintf(stderr, "rank %d exit %d: %s %s\n", r, status[r], t[0].out->msg[r],
				t[1].out->msg[r]);
		assert_int_equal(status[r], 0);
	}
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < t[i].nsizes; k++)
			for (int ip = 0; ip < 2; ip++)
				for (int r = 1; r < (i ? 2 : 3); r++)
					assert_true(t[i].out->hash[r][k][ip] ==
						    t[i].out->hash[0][k][ip]);
		for (int r = 0; r < 2; r++)
			passed += t[i].out->passed[r];
	}
	printf("# two communicators a process: %llu packets passed between them\n",
	       (unsigned long long)passed);
	assert_true(passed > 0);
	for (int i = 0; i < 2; i++)
		munmap(t[i].out, sizeof(*t[i].out));
}

/*
 * A rank that stays away from the library between collectives (2.5 s, while
 * the others start the next one) must keep answering, as an RNIC does: the
 * soft transport's progress thread ACKs for it.  The ACK timeout is cut to
 * 134 ms (8 tries: 1.07 s, still far above scheduling delays on a loaded
 * machine), so without that thread the others would fail.
 */
static int idle_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;
	int rc;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = 10000;
	cfg.ack_timeout = 15;
	rc = nr_comm_init(&cfg, &c);
	if (rc)
		return child_fail(t, rank, 2, "init: %s", nr_comm_last_error(NULL));
	for (int k = 0; k < 3 && !rc; k++) {
		rc = check_one(t, c, rank, world, 65537 + k, k, 0);
		if (rank == 1 && k < 2)
			usleep(2500000);
	}
	nr_comm_destroy(c);
	return rc;
}

static void test_idle_rank_keeps_answering(void **state)
{
	struct ring_case t = { .seed = 77 };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	ranks_env_init(&t.env, 8);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(3, idle_child, &t, pids);
	ranks_wait(3, pids, status, 60000, NULL);
	for (int r = 0; r < 3; r++) {
		if (status[r])
			fprintf(stderr, "rank %d exit %d: %s\n", r, status[r], t.out->msg[r]);
		assert_int_equal(status[r], 0);
	}
	munmap(t.out, sizeof(*t.out));
}

/* ---- a rank killed mid-operation ---- */

static int kill_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	size_t count = 4u << 20;
	float *buf = malloc(count * 4);
	struct nr_config cfg;
	struct nr_comm *c;
	int rc;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms;
	rc = nr_comm_init(&cfg, &c);
	if (rc)
		return child_fail(t, rank, 2, "init: %s", nr_comm_last_error(NULL));
	ranks_fill(1, rank, buf, count);
	for (int i = 0; i < 1000; i++) {
		rc = nr_ring_allreduce(c, buf, buf, count, NR_FLOAT32, NR_SUM);
		if (i == 0)
			t->out->started[rank] = 1;
		if (rc)
			break;
	}
	t->out->fail_ms[rank] = ranks_now_ms();
	t->out->rc[rank] = rc;
	child_fail(t, rank, 0, "%s", nr_comm_last_error(c));
	/* a second call after the failure must not hang either */
	if (nr_ring_allreduce(c, buf, buf, count, NR_FLOAT32, NR_SUM) != NR_ERR_BROKEN)
		return 7;
	nr_comm_destroy(c);
	free(buf);
	return rc ? 0 : 8;
}

static void test_kill_one_rank(void **state)
{
	const int world = 4, victim = 2;
	struct ring_case t = { .timeout_ms = 2000 };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];
	uint64_t killed, bound = t.timeout_ms + 3000;

	ranks_env_init(&t.env, 5);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(world, kill_child, &t, pids);
	for (uint64_t end = ranks_now_ms() + 30000; ranks_now_ms() < end;) {
		int all = 1;

		for (int r = 0; r < world; r++)
			all &= t.out->started[r];
		if (all)
			break;
		usleep(10000);
	}
	for (int r = 0; r < world; r++)
		assert_int_equal(t.out->started[r], 1);
	usleep(50000);     /* well inside the second or third operation */
	kill(pids[victim], SIGKILL);
	killed = ranks_now_ms();
	printf("killed rank %d; documented bound %llu ms\n", victim, (unsigned long long)bound);
	ranks_wait(world, pids, status, bound + 5000, NULL);
	for (int r = 0; r < world; r++) {
		if (r == victim) {
			assert_int_equal(status[r], 128 + SIGKILL);
			continue;
		}
		printf("rank %d: %s after %lld ms: %s\n", r, nr_strerror(t.out->rc[r]),
		       (long long)(t.out->fail_ms[r] - killed), t.out->msg[r]);
		assert_int_equal(status[r], 0);
		assert_true(t.out->rc[r] == NR_ERR_PEER || t.out->rc[r] == NR_ERR_TIMEOUT);
		assert_true(t.out->fail_ms[r] <= killed + bound);
		/* the message names the dead peer, or says which wait timed out */
		assert_true(strstr(t.out->msg[r], "rank 2") || strstr(t.out->msg[r], "timeout"));
	}
	munmap(t.out, sizeof(*t.out));
}

/* ---- box path with nothing listening at NR_BOX ---- */

static int nobox_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;
	uint64_t t0 = ranks_now_ms();
	int rc;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms;
	cfg.switch_addr = "127.0.0.1:9";   /* discard port: nothing listens there */
	cfg.token = "secret";
	rc = nr_comm_init(&cfg, &c);
	t->out->fail_ms[rank] = ranks_now_ms() - t0;
	t->out->rc[rank] = rc;
	child_fail(t, rank, 0, "%s", nr_comm_last_error(NULL));
	if (rc == 0)
		nr_comm_destroy(c);
	return 0;
}

static void test_box_unreachable(void **state)
{
	struct ring_case t = { .timeout_ms = 1000 };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	ranks_env_init(&t.env, 6);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(2, nobox_child, &t, pids);
	ranks_wait(2, pids, status, 20000, NULL);
	for (int r = 0; r < 2; r++) {
		printf("rank %d: %s in %llu ms: %s\n", r, nr_strerror(t.out->rc[r]),
		       (unsigned long long)t.out->fail_ms[r], t.out->msg[r]);
		assert_int_equal(status[r], 0);
		assert_int_equal(t.out->rc[r], NR_ERR_BOX);
		assert_non_null(strstr(t.out->msg[r], "127.0.0.1:9"));
		assert_true(t.out->fail_ms[r] < 3 * t.timeout_ms + 2000);
	}
	munmap(t.out, sizeof(*t.out));
}

/* ---- a rank that never shows up at the rendezvous ---- */

static int missing_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;
	uint64_t t0 = ranks_now_ms();

	if (rank == world - 1)
		return 0;    /* never joins */
	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms;
	cfg.bootstrap_timeout_ms = t->timeout_ms;    /* the rendezvous' own bound */
	t->out->rc[rank] = nr_comm_init(&cfg, &c);
	t->out->fail_ms[rank] = ranks_now_ms() - t0;
	child_fail(t, rank, 0, "%s", nr_comm_last_error(NULL));
	if (t->out->rc[rank] == 0)
		nr_comm_destroy(c);
	return 0;
}

static void test_missing_rank(void **state)
{
	struct ring_case t = { .timeout_ms = 1000 };
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	ranks_env_init(&t.env, 9);
	t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t.out != MAP_FAILED);
	memset(t.out, 0, sizeof(*t.out));
	ranks_fork(3, missing_child, &t, pids);
	ranks_wait(3, pids, status, 20000, NULL);
	for (int r = 0; r < 2; r++) {
		printf("rank %d: %s in %llu ms: %s\n", r, nr_strerror(t.out->rc[r]),
		       (unsigned long long)t.out->fail_ms[r], t.out->msg[r]);
		assert_int_equal(status[r], 0);
		assert_int_equal(t.out->rc[r], NR_ERR_TIMEOUT);
		assert_non_null(strstr(t.out->msg[r], "rank 2 missing"));
		assert_true(t.out->fail_ms[r] < t.timeout_ms + 2000);
	}
	munmap(t.out, sizeof(*t.out));
}

/* ---- strays at the rendezvous ---- */

/* Rank 0 waits boot_ms for the others; the other ranks never come. */
static int lonely_child(int rank, int world, void *arg)
{
	struct ring_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;

	if (rank)
		return 0;
	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms;
	cfg.bootstrap_timeout_ms = t->boot_ms;
	t->out->rc[rank] = nr_comm_init(&cfg, &c);
	child_fail(t, rank, 0, "%s", nr_comm_last_error(NULL));
	if (t->out->rc[rank] == 0)
		nr_comm_destroy(c);
	return 0;
}

/* One line to rank 0's rendezvous from address src, then hang up. */
static void send_stray(const struct ranks_env *e, const char *src, const char *line)
{
	struct sockaddr_in me = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
	char host[32];
	unsigned port;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(sscanf(e->root, "%31[^:]:%u", host, &port), 2);
	inet_pton(AF_INET, src, &me.sin_addr);
	inet_pton(AF_INET, host, &to.sin_addr);
	to.sin_port = htons((uint16_t)port);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	for (int tries = 0; connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0; tries++) {
		assert_true(tries < 200);      /* rank 0 listens within 2 s */
		close(fd);
		usleep(10000);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	}
	assert_true(write(fd, line, strlen(line)) == (ssize_t)strlen(line));
	usleep(100000);
	close(fd);
}

/*
 * Rank 0's rendezvous ignores what is not a rank of its job: an empty object,
 * a line that is not JSON, a hello for rank 1 sent from another address than
 * the one it claims.  The real rank 1 joins after them; without it, rank 0's
 * timeout names the last stray.
 */
static void test_rendezvous_strays(void **state)
{
	static const char ep[] = "{\"send\":{\"qpn\":17,\"psn\":0,\"port\":4791,\"sport\":49152},"
				 "\"recv\":{\"qpn\":18,\"psn\":0,\"port\":4791,\"sport\":49153},"
				 "\"va\":4096,\"rkey\":1}";
	char hello[1024];
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	for (int part = 0; part < 2; part++) {
		struct ring_case t = { .nsizes = 1, .sizes = { 4100 }, .timeout_ms = 1000,
				       .boot_ms = part ? 3000 : 10000, .late_ms = 2500 };

		ranks_env_init(&t.env, 23 + part);
		/* a well-formed hello for rank 1, claiming rank 1's address */
		snprintf(hello, sizeof(hello),
			 "{\"hello\":{\"rank\":1,\"world\":2,\"mtu\":1024,\"msg_size\":65536,"
			 "\"transport\":\"soft\",\"box\":false,\"channels\":1},"
			 "\"peer\":{\"ip\":\"%s\",\"mac\":\"00:00:00:00:00:00\",\"box\":[%s],\"plain\":%s},"
			 "\"nonce\":\"000102030405060708090a0b0c0d0e0f\"}\n",
			 t.env.addr[1], ep, ep);
		t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
		assert_true(t.out != MAP_FAILED);
		memset(t.out, 0, sizeof(*t.out));
		/* part 1: rank 1 never comes */
		ranks_fork(2, part ? lonely_child : ring_child, &t, pids);
		send_stray(&t.env, "127.0.0.50", "{}\n");
		send_stray(&t.env, "127.0.0.51", "not json at all\n");
		send_stray(&t.env, "127.0.0.52", hello);
		ranks_wait(2, pids, status, 60000, NULL);
		for (int r = 0; r < 2; r++)
			printf("part %d rank %d: exit %d rc %d: %s\n", part, r, status[r], t.out->rc[r],
			       t.out->msg[r]);
		if (part == 0) {
			assert_int_equal(status[0], 0);
			assert_int_equal(status[1], 0);
			assert_true(t.out->hash[1][0][0] == t.out->hash[0][0][0]);
		} else {
			assert_int_equal(t.out->rc[0], NR_ERR_TIMEOUT);
			assert_non_null(strstr(t.out->msg[0], "stray"));
			assert_non_null(strstr(t.out->msg[0], "from 127.0.0.52: a hello for rank 1 that "
							      "claims address 127.0.0.11"));
		}
		munmap(t.out, sizeof(*t.out));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_2),
		cmocka_unit_test(test_ring_3),
		cmocka_unit_test(test_ring_4),
		cmocka_unit_test(test_ring_4_max),
		cmocka_unit_test(test_ring_16bit),
		cmocka_unit_test(test_ring_8),
		cmocka_unit_test(test_ring_4_lossy),
		cmocka_unit_test(test_ring_4_lossy_sr),
		cmocka_unit_test(test_mixed_profiles_refused),
		cmocka_unit_test(test_two_comms_one_process),
		cmocka_unit_test(test_idle_rank_keeps_answering),
		cmocka_unit_test(test_kill_one_rank),
		cmocka_unit_test(test_box_unreachable),
		cmocka_unit_test(test_missing_rank),
		cmocka_unit_test(test_late_start),
		cmocka_unit_test(test_rendezvous_strays),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("NR_TEST_FILTER"))
		cmocka_set_test_filter(getenv("NR_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
