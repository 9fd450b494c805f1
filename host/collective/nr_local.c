/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce-scatter and all-gather among the local ranks of a host, through the
 * shared segment (see nr_local.h for shares and the summation order).
 *
 * Both work in rounds.  An area holds one piece of every share: piece j of
 * share q is elements [j*e, (j+1)*e) of the share, e = area / (4 * nshares),
 * kept at q*e in the area.  Round j:
 *   reduce-scatter  every rank copies piece j of every share of its src into
 *                   its own input area; barrier; the owner of share q sums
 *                   piece q of the P input areas into its share
 *   all-gather      the owner of share q copies piece j into the result
 *                   area; barrier; every rank copies all pieces into dst
 * One barrier per round.  Rounds alternate the two sets (nr_shm_next_set),
 * which is what makes that enough: a rank writes a set in round j+2 only
 * after the barrier of round j+1, which every rank reaches only once done
 * reading that set in round j.
 */
#include <string.h>

#include "host/netreduce.h"
#include "nr_local.h"

void nr_local_share(size_t count, int nshares, int q, size_t *off, size_t *len)
{
	size_t base = count / nshares, rem = count % nshares;

	*off = q * base + ((size_t)q < rem ? (size_t)q : rem);
	*len = base + ((size_t)q < rem);
}

static __attribute__((optimize("tree-vectorize"))) void
add2(float *restrict out, const float *restrict a, const float *restrict b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

static __attribute__((optimize("tree-vectorize"))) void
add_into(float *restrict acc, const float *restrict b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		acc[i] = acc[i] + b[i];
}

/* out = ((in_0 + in_1) + in_2) + ... over the P input areas of set, at offset at. */
static void sum_ranks(struct nr_shm *s, int set, size_t at, size_t n, float *out)
{
	int p = nr_shm_size(s);

	if (p == 1) {
		memcpy(out, nr_shm_input(s, set, 0) + at, n * 4);
		return;
	}
	add2(out, nr_shm_input(s, set, 0) + at, nr_shm_input(s, set, 1) + at, n);
	for (int r = 2; r < p; r++)
		add_into(out, nr_shm_input(s, set, r) + at, n);
	nr_shm_pace(s, (size_t)(p - 1) * n * 4);
}

/* One operation in rounds: what each rank does before and after the barrier of round j. */
struct local_op {
	struct nr_shm *s;
	size_t count, e;        /* e: elements of a piece */
	int nshares, me;
	const float *src;       /* reduce-scatter: the rank's input; all-gather: its share */
	float *dst;             /* reduce-scatter: the rank's share; all-gather: the output */
};

typedef void round_fn(struct local_op *o, int set, size_t j);

/* Piece j of share q: k elements at element off + j*e of the buffer. */
static size_t piece(const struct local_op *o, int q, size_t j, size_t *off)
{
	size_t len;

	nr_local_share(o->count, o->nshares, q, off, &len);
	return j * o->e >= len ? 0 : len - j * o->e < o->e ? len - j * o->e : o->e;
}

static int run_rounds(struct nr_shm *s, struct local_op *o, round_fn *fill, round_fn *take,
		      const char *what)
{
	size_t off, n;

	o->s = s;
	o->me = nr_shm_rank(s);
	o->e = nr_shm_area_bytes(s) / 4 / o->nshares;
	nr_local_share(o->count, o->nshares, 0, &off, &n);   /* share 0 is the longest */
	n = (n + o->e - 1) / o->e;
	for (size_t j = 0; j < n; j++) {
		int set = nr_shm_next_set(s), rc;

		fill(o, set, j);
		rc = nr_shm_barrier(s, what);
		if (rc)
			return rc;
		take(o, set, j);
	}
	return 0;
}

/* Reduce-scatter: piece j of every share of src into this rank's input area. */
static void rs_fill(struct local_op *o, int set, size_t j)
{
	float *mine = nr_shm_input(o->s, set, o->me);
	size_t off, k;

	for (int q = 0; q < o->nshares; q++) {
		k = piece(o, q, j, &off);
		memcpy(mine + q * o->e, o->src + off + j * o->e, k * 4);
	}
}

/* Reduce-scatter: the owner sums piece j of its share over the P input areas. */
static void rs_take(struct local_op *o, int set, size_t j)
{
	size_t off;

	if (o->me < o->nshares)
		sum_ranks(o->s, set, o->me * o->e, piece(o, o->me, j, &off), o->dst + j * o->e);
}

/* All-gather: the owner puts piece j of its share into the result area. */
static void ag_fill(struct local_op *o, int set, size_t j)
{
	size_t off;

	if (o->me < o->nshares)
		memcpy(nr_shm_result(o->s, set) + o->me * o->e, o->src + j * o->e,
		       piece(o, o->me, j, &off) * 4);
}

/* All-gather: every rank copies piece j of every share into dst (its own from its share). */
static void ag_take(struct local_op *o, int set, size_t j)
{
	const float *res = nr_shm_result(o->s, set);
	size_t off, k, got = 0;

	for (int q = 0; q < o->nshares; q++) {
		k = piece(o, q, j, &off);
		if (q == o->me) {
			memmove(o->dst + off + j * o->e, o->src + j * o->e, k * 4);
			continue;
		}
		memcpy(o->dst + off + j * o->e, res + q * o->e, k * 4);
		got += k * 4;
	}
	nr_shm_pace(o->s, got);
}

int nr_local_reduce_scatter(struct nr_shm *s, const float *src, size_t count, int nshares,
			    float *share)
{
	struct local_op o = { .count = count, .nshares = nshares, .src = src, .dst = share };

	return run_rounds(s, &o, rs_fill, rs_take, "local reduce-scatter");
}

int nr_local_all_gather(struct nr_shm *s, const float *share, size_t count, int nshares,
			float *dst)
{
	struct local_op o = { .count = count, .nshares = nshares, .src = share, .dst = dst };

	return run_rounds(s, &o, ag_fill, ag_take, "local all-gather");
}
