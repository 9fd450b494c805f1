/* SPDX-License-Identifier: BSD-3-Clause */
/* The index of the QPs the control API's jobs hold (see ctl_epidx.h). */
#include <errno.h>
#include <stdlib.h>

#include "control/api/ctl_epidx.h"

static inline uint64_t ep_key(uint32_t ip, uint32_t qpn)
{
	return (uint64_t)ip << 24 | (qpn & 0xFFFFFFu);
}

static inline uint32_t ep_home(const struct ctl_epidx *x, uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: the top bits */

	return (uint32_t)(h >> 32) & (x->cap - 1);
}

/* Put word w (free of its key in x) into x, which has room. */
static void put(struct ctl_epidx *x, uint64_t w)
{
	uint32_t i = ep_home(x, w >> 8);

	while (x->e[i])
		i = (i + 1) & (x->cap - 1);
	x->e[i] = w;
	x->n++;
}

int ctl_epidx_reserve(struct ctl_epidx *x, uint32_t extra)
{
	uint64_t need = ((uint64_t)x->n + extra) * 2;
	uint32_t cap = x->cap ? x->cap : 1024;
	struct ctl_epidx y;

	if (need <= x->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	y = (struct ctl_epidx){ .e = calloc(cap, sizeof(*y.e)), .cap = cap };
	if (!y.e)
		return -ENOMEM;
	for (uint32_t i = 0; i < x->cap; i++)
		if (x->e[i])
			put(&y, x->e[i]);
	free(x->e);
	*x = y;
	return 0;
}

/* The word of key, or -1. */
static int64_t find_word(const struct ctl_epidx *x, uint64_t key)
{
	if (!x->cap)
		return -1;
	for (uint32_t i = ep_home(x, key);; i = (i + 1) & (x->cap - 1)) {
		if (!x->e[i])
			return -1;
		if (x->e[i] >> 8 == key)
			return i;
	}
}

static void add_one(struct ctl_epidx *x, uint32_t ip, uint32_t qpn, unsigned slot)
{
	uint64_t key = ep_key(ip, qpn);

	if (find_word(x, key) < 0) /* one word a QP, however often a spec names it */
		put(x, key << 8 | (slot + 1));
}

void ctl_epidx_add(struct ctl_epidx *x, const struct nr_job_spec *s, unsigned slot)
{
	for (uint32_t i = 0; i < nr_job_conns(s); i++) {
		add_one(x, s->conns[i].src_ip, s->conns[i].src_qpn, slot);
		add_one(x, s->conns[i].dst_ip, s->conns[i].dst_qpn, slot);
	}
}

/* Free word i, moving the later words of its run back (Knuth's Algorithm R). */
static void del_word(struct ctl_epidx *x, uint32_t i)
{
	uint32_t j = i;

	x->e[i] = 0;
	x->n--;
	for (;;) {
		uint32_t home;

		j = (j + 1) & (x->cap - 1);
		if (!x->e[j])
			return;
		home = ep_home(x, x->e[j] >> 8);
		/* j's word may fill the hole at i unless its home lies in (i, j] */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			x->e[i] = x->e[j];
			x->e[j] = 0;
			i = j;
		}
	}
}

static void del_one(struct ctl_epidx *x, uint32_t ip, uint32_t qpn, unsigned slot)
{
	int64_t i = find_word(x, ep_key(ip, qpn));

	if (i >= 0 && (x->e[i] & 0xFF) == slot + 1)
		del_word(x, (uint32_t)i);
}

void ctl_epidx_del(struct ctl_epidx *x, const struct nr_job_spec *s, unsigned slot)
{
	for (uint32_t i = 0; i < nr_job_conns(s); i++) {
		del_one(x, s->conns[i].src_ip, s->conns[i].src_qpn, slot);
		del_one(x, s->conns[i].dst_ip, s->conns[i].dst_qpn, slot);
	}
}

int ctl_epidx_find(const struct ctl_epidx *x, uint32_t ip, uint32_t qpn)
{
	int64_t i = find_word(x, ep_key(ip, qpn));

	return i < 0 ? -1 : (int)(x->e[i] & 0xFF) - 1;
}

void ctl_epidx_free(struct ctl_epidx *x)
{
	free(x->e);
	*x = (struct ctl_epidx){ 0 };
}
