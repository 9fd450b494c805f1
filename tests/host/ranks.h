/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers for multi-process libnetreduce tests on loopback: rank r binds
 * 127.0.0.(10+r); the rendezvous is 127.0.0.10:PORT.  Ports (TCP rendezvous,
 * UDP data) are chosen per run from the pid so concurrent runs do not collide.
 * Deterministic data: value(seed, rank, index); reference sums in ring order.
 */
#ifndef NR_TEST_RANKS_H
#define NR_TEST_RANKS_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/netreduce.h"
#include "proto/nr_elem.h"

#define RANKS_MAX 8

struct ranks_env {
	char root[32];
	char addr[RANKS_MAX][32];
	uint16_t udp_port;
};

static inline uint64_t ranks_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void ranks_env_init(struct ranks_env *e, unsigned salt)
{
	unsigned base = 20000 + ((unsigned)getpid() * 7 + salt * 131) % 30000;

	snprintf(e->root, sizeof(e->root), "127.0.0.10:%u", base);
	for (int r = 0; r < RANKS_MAX; r++)
		snprintf(e->addr[r], sizeof(e->addr[r]), "127.0.0.%d", 10 + r);
	e->udp_port = base + 1;
}

static inline void ranks_config(const struct ranks_env *e, int rank, int world,
				struct nr_config *cfg)
{
	nr_config_default(cfg);
	cfg->rank = rank;
	cfg->world = world;
	cfg->root = e->root;
	cfg->addr = e->addr[rank];
	cfg->udp_port = e->udp_port;
	cfg->transport = "soft";
}

/* splitmix64: data that depends on (seed, rank, index) only */
static inline uint64_t ranks_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Values of mixed magnitude, so the summation order shows in the rounding. */
static inline float ranks_value(uint64_t seed, int rank, size_t i)
{
	uint64_t h = ranks_mix(seed ^ ranks_mix(((uint64_t)rank << 40) ^ i));
	static const float scale[4] = { 1.0f, 1e-3f, 1e3f, 3.14159f };

	return (float)((int64_t)(h % 2000001) - 1000000) / 1024.0f * scale[(h >> 32) & 3];
}

static inline void ranks_fill(uint64_t seed, int rank, float *x, size_t count)
{
	for (size_t i = 0; i < count; i++)
		x[i] = ranks_value(seed, rank, i);
}

/*
 * 16-bit data (NR_BF16, NR_FP16): ranks_value rounded to the type, scaled
 * down for fp16 (65504 at most) so that sums of 8 ranks stay finite.
 */
static inline float ranks_widen16(enum nr_dtype d, uint16_t h)
{
	return d == NR_BF16 ? nr_bf16_widen(h) : nr_fp16_widen(h);
}

static inline uint16_t ranks_round16(enum nr_dtype d, float f)
{
	return d == NR_BF16 ? nr_bf16_round(f) : nr_fp16_round(f);
}

static inline uint16_t ranks_value16(uint64_t seed, int rank, size_t i, enum nr_dtype d)
{
	return ranks_round16(d, ranks_value(seed, rank, i) / (d == NR_FP16 ? 256.0f : 1.0f));
}

/* The ring's 16-bit reference: chunk c from rank c, each hop rounded (nr_ring_allreduce). */
static inline void ranks_ring_reference16(uint64_t seed, int world, enum nr_dtype d,
					  uint16_t *ref, size_t count)
{
	size_t base = count / world, rem = count % world, i = 0;

	for (int c = 0; c < world; c++)
		for (size_t k = 0, n = base + ((size_t)c < rem); k < n; k++, i++) {
			uint16_t acc = ranks_value16(seed, c, i, d);

			for (int j = 1; j < world; j++)
				acc = ranks_round16(d, ranks_widen16(d, acc) +
						    ranks_widen16(d, ranks_value16(seed, (c + j) % world, i, d)));
			ref[i] = acc;
		}
}

/* The box's 16-bit reference: widened, summed in FP32 in rank order, rounded once. */
static inline void ranks_box_reference16(uint64_t seed, int world, enum nr_dtype d,
					 uint16_t *ref, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		float acc = ranks_widen16(d, ranks_value16(seed, 0, i, d));

		for (int r = 1; r < world; r++)
			acc = acc + ranks_widen16(d, ranks_value16(seed, r, i, d));
		ref[i] = ranks_round16(d, acc);
	}
}

/* Reference of NR_MAX: the values have no NaN and no -0, so any order gives these bits. */
static inline void ranks_max_reference(uint64_t seed, int world, float *ref, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		float m = ranks_value(seed, 0, i);

		for (int r = 1; r < world; r++) {
			float x = ranks_value(seed, r, i);

			m = x > m ? x : m;
		}
		ref[i] = m;
	}
}

/*
 * Reference of nr_ring_allreduce: chunk c (count/N elements, the first count%N
 * chunks one more) is summed starting at rank c and going round the ring:
 * ((x_c + x_{c+1}) + x_{c+2}) + ... + x_{c+N-1}, indices mod N.
 */
static inline void ranks_ring_reference(uint64_t seed, int world, float *ref, size_t count)
{
	size_t base = count / world, rem = count % world, i = 0;

	for (int c = 0; c < world; c++) {
		size_t n = base + ((size_t)c < rem);

		for (size_t k = 0; k < n; k++, i++) {
			float acc = ranks_value(seed, c, i);

			for (int j = 1; j < world; j++)
				acc = acc + ranks_value(seed, (c + j) % world, i);
			ref[i] = acc;
		}
	}
}

/* Reference of nr_allreduce through the box (ordered mode): rank order 0..N-1. */
static inline void ranks_box_reference(uint64_t seed, int world, float *ref, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		float acc = ranks_value(seed, 0, i);

		for (int r = 1; r < world; r++)
			acc = acc + ranks_value(seed, r, i);
		ref[i] = acc;
	}
}

/* Element i summed over hosts[k] for k in ring order from `start` (n terms). */
static inline float ranks_ring_order(const float *terms, int n, int start)
{
	float acc = terms[start];

	for (int j = 1; j < n; j++)
		acc = acc + terms[(start + j) % n];
	return acc;
}

/* Chunk of index k when len elements are cut into n (the first len % n one more). */
static inline int ranks_chunk_of(size_t k, size_t len, int n)
{
	size_t base = len / n, rem = len % n, big = rem * (base + 1);

	return k < big ? (int)(k / (base + 1)) : (int)(rem + (k - big) / base);
}

/*
 * Hosts of `local` ranks each (ranks host by host): the local sum of host h
 * is ((x_{h,0} + x_{h,1}) + ...) in local-rank order.  nr_allreduce (parallel
 * and hierarchical alike) sums the hosts' local sums in host order;
 * nr_ring_allreduce cuts the buffer into `local` shares and sums share p in
 * the ring's order over hosts (ring=1).
 */
static inline void ranks_hier_reference(uint64_t seed, int hosts, int local, int ring, float *ref,
					size_t count)
{
	float l[RANKS_MAX];

	for (size_t i = 0; i < count; i++) {
		for (int h = 0; h < hosts; h++) {
			l[h] = ranks_value(seed, h * local, i);
			for (int p = 1; p < local; p++)
				l[h] = l[h] + ranks_value(seed, h * local + p, i);
		}
		if (ring) {
			int p = ranks_chunk_of(i, count, local);
			size_t off = p * (count / local) + ((size_t)p < count % local ? (size_t)p : count % local);
			size_t len = count / local + ((size_t)p < count % local);

			ref[i] = ranks_ring_order(l, hosts, ranks_chunk_of(i - off, len, hosts));
		} else {
			ref[i] = ranks_ring_order(l, hosts, 0);
		}
	}
}

/*
 * Racks (docs/racks.md): sizes[k] hosts in rack k, ranks rack by rack;
 * box[k]: rack k sums through its box (rank order), else on its ring (the
 * ring's order).  The m agents of each rack (agents, or 0: min(sizes)) cut
 * the buffer into m pieces; element k of piece j is the racks' sums in ring
 * order over the racks, from the rack whose chunk (piece j cut into R) holds k.
 */
static inline void ranks_rack_reference(uint64_t seed, const int *sizes, int nracks,
					const int *box, int agents, float *ref, size_t count)
{
	float x[RANKS_MAX], s[RANKS_MAX];
	int m = sizes[0];

	for (int k = 1; k < nracks; k++)
		m = sizes[k] < m ? sizes[k] : m;
	if (agents > 0)
		m = agents;
	for (size_t i = 0; i < count; i++) {
		int first = 0, j = ranks_chunk_of(i, count, m);
		size_t off = j * (count / m) + ((size_t)j < count % m ? (size_t)j : count % m);
		size_t len = count / m + ((size_t)j < count % m);

		for (int k = 0; k < nracks; first += sizes[k], k++) {
			for (int r = 0; r < sizes[k]; r++)
				x[r] = ranks_value(seed, first + r, i);
			s[k] = ranks_ring_order(x, sizes[k], box[k] ? 0 : ranks_chunk_of(i, count, sizes[k]));
		}
		ref[i] = ranks_ring_order(s, nracks, ranks_chunk_of(i - off, len, nracks));
	}
}

/* Fork world children running fn(rank, world, arg); returns their pids. */
typedef int (*ranks_fn)(int rank, int world, void *arg);

static inline void ranks_fork(int world, ranks_fn fn, void *arg, pid_t *pids)
{
	fflush(NULL);
	for (int r = 0; r < world; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			alarm(120);   /* a child never outlives a hung test */
			_exit(fn(r, world, arg));
		}
	}
}

/*
 * Wait for every child up to deadline_ms from now; kill the rest.  status[r]
 * is the exit code, or 128 + signal, or -1 when it had to be killed.
 */
static inline void ranks_wait(int world, pid_t *pids, int *status, uint64_t deadline_ms,
			      uint64_t *exit_ms)
{
	uint64_t end = ranks_now_ms() + deadline_ms;
	int left = 0;

	for (int r = 0; r < world; r++) {
		status[r] = -1;
		left += pids[r] > 0;
	}
	while (left && ranks_now_ms() < end) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p <= 0) {
			usleep(5000);
			continue;
		}
		for (int r = 0; r < world; r++) {
			if (pids[r] != p)
				continue;
			status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			if (exit_ms)
				exit_ms[r] = ranks_now_ms();
			pids[r] = 0;
			left--;
		}
	}
	for (int r = 0; r < world; r++) {
		if (pids[r] > 0) {
			fprintf(stderr, "rank %d still running at the deadline: killed\n", r);
			kill(pids[r], SIGKILL);
			waitpid(pids[r], NULL, 0);
			pids[r] = 0;
		}
	}
}

#endif /* NR_TEST_RANKS_H */
