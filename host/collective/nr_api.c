/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public calls of libnetreduce (netreduce.h), on top of everything: a
 * communicator is one ring of ranks (nr_comm.c, nr_allreduce_box.c,
 * nr_allreduce_ring.c), or, when its ranks share hosts (NR_LOCAL_SIZE > 1),
 * the layout of a topology whose collectives run on sub-communicators
 * (nr_allreduce_hier.c), or when they span racks (NR_RACKS,
 * nr_allreduce_rack.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/comm/nr_box_client.h"
#include "host/comm/nr_comm.h"
#include "host/comm/nr_config.h"
#include "host/comm/nr_progress.h"
#include "host/comm/nr_topo.h"
#include "host/comm/nr_util.h"
#include "host/netreduce.h"
#include "nr_allreduce_box.h"
#include "nr_allreduce_hier.h"
#include "nr_allreduce_rack.h"
#include "nr_allreduce_ring.h"
#include "nr_collective.h"

int nr_comm_init(const struct nr_config *user, struct nr_comm **comm)
{
	struct nr_config full, *cfg = &full;   /* the caller's, grown to this library's */
	int rc;

	*comm = NULL;
	rc = nr_config_take(user, &full);
	if (!rc)
		rc = nr_config_check_env(cfg, false);
	if (rc)
		return rc;
	if (cfg->racks)
		return nr_rack_init(cfg, comm);
	if (cfg->local_size > 1)
		return nr_hier_init(cfg, comm);
	return nr_flat_init(cfg, false, comm);
}

void nr_comm_destroy(struct nr_comm *comm)
{
	if (comm && comm->topo)
		nr_topo_destroy(comm);
	else
		nr_flat_destroy(comm);
}

/* A collective on a topology: the arguments, then the topology's all-reduce. */
static int topo_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			  enum nr_dtype dtype, enum nr_op op, bool ring)
{
	const char *fn = ring ? "nr_ring_allreduce" : "nr_allreduce";
	int rc;

	/* across racks a rack without a box takes part on its ring */
	if (!ring && !c->broken && !c->topo->racks && !c->topo->has_box)
		return nr_fail(c, NR_ERR_CONFIG,
			       "nr_allreduce: no box configured (NR_BOX); "
			       "use nr_ring_allreduce without a box");
	if (nr_check_args(c, sendbuf, recvbuf, count, dtype, op, fn, &rc))
		return rc;
	if (op != NR_SUM)   /* the local and rack phases sum */
		return nr_fail(c, NR_ERR_INVALID, "%s: NR_MAX on hosts with several ranks or across "
			       "racks: their local and rack phases sum only", fn);
	if (dtype != NR_FLOAT32)   /* the local phases and rack agents sum FP32 */
		return nr_fail(c, NR_ERR_INVALID, "%s: %s on hosts with several ranks or across "
			       "racks is not built: their local phases and rack agents sum FP32 "
			       "(use NR_FLOAT32, or one rank a host)", fn, nr_dtype_name(dtype));
	rc = c->topo->racks ? nr_rack_allreduce(c, sendbuf, recvbuf, count, ring)
			    : nr_hier_allreduce(c, sendbuf, recvbuf, count, ring);
	if (rc && rc != NR_ERR_INVALID)
		c->broken = true;
	return rc;
}

/* Flags of nr_allreduce_flags: the tolerant bit and a class (netreduce.h). */
static int check_flags(struct nr_comm *c, unsigned flags, const char *fn)
{
	if (flags & ~(NR_MSG_TOLERANT | NR_MSG_CLASS_MASK))
		return nr_fail(c, NR_ERR_INVALID, "%s: flags 0x%x: the flags are NR_MSG_TOLERANT "
			       "(0x%x) and NR_MSG_CLASS(c) (0x%x)", fn, flags, NR_MSG_TOLERANT,
			       NR_MSG_CLASS_MASK);
	if (((flags & NR_MSG_CLASS_MASK) >> 4) > NR_MAX_CLASSES)
		return nr_fail(c, NR_ERR_INVALID, "%s: NR_MSG_CLASS(%u): classes are 0..%u", fn,
			       ((flags & NR_MSG_CLASS_MASK) >> 4) - 1, NR_MAX_CLASSES - 1);
	return 0;
}

/* What a call did, bytes of its buffers, into c->stats (nr_comm_stats); busy_ns: the
 * time it took. */
static void count_bytes(struct nr_comm *c, enum nr_dtype dtype, uint64_t bytes, bool ring,
			unsigned flags, uint64_t busy_ns, int rc)
{
	/* what nr_box_allreduce marks: the job has a bound the transport can mark messages for */
	bool tolerant = (flags & NR_MSG_TOLERANT) && !c->topo && c->short_tos >= 0;

	if (!rc && dtype == NR_BF16)
		__atomic_add_fetch(&c->stats.bf16_calls, 1, __ATOMIC_RELAXED);
	else if (!rc && dtype == NR_FP16)
		__atomic_add_fetch(&c->stats.fp16_calls, 1, __ATOMIC_RELAXED);
	if (!rc && tolerant) {
		__atomic_add_fetch(&c->stats.tolerant_calls, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->stats.tolerant_bytes, bytes, __ATOMIC_RELAXED);
	} else if (!rc && (flags & NR_MSG_TOLERANT)) {
		__atomic_add_fetch(&c->stats.tolerant_exact_calls, 1, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&c->stats.busy_ns, busy_ns, __ATOMIC_RELAXED);
	if (rc)
		__atomic_add_fetch(&c->stats.failed_calls, 1, __ATOMIC_RELAXED);
	else if (ring) {
		__atomic_add_fetch(&c->stats.ring_calls, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->stats.ring_bytes, bytes, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&c->stats.box_calls, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->stats.box_bytes, bytes, __ATOMIC_RELAXED);
	}
}

/* count_bytes of an all-reduce of count elements of dtype */
static void count_call(struct nr_comm *c, enum nr_dtype dtype, size_t count, bool ring,
		       unsigned flags, uint64_t busy_ns, int rc)
{
	count_bytes(c, dtype, (uint64_t)count * nr_dtype_size(dtype), ring, flags, busy_ns, rc);
}

/*
 * One public all-reduce, counted in c->stats (nr_comm_stats).  flags
 * (NR_MSG_*) reach the flat box path only: a topology's phases, the ring and
 * a single rank are exact.
 */
static int counted_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			     enum nr_dtype dtype, enum nr_op op, bool ring, unsigned flags)
{
	uint64_t t0 = nr_now_ns();
	int rc = c ? check_flags(c, flags, "nr_allreduce_flags") : 0;

	if (!rc && c && c->topo)
		rc = topo_allreduce(c, sendbuf, recvbuf, count, dtype, op, ring);
	else if (!rc)
		rc = ring ? nr_ring_allreduce_flat(c, sendbuf, recvbuf, count, dtype, op)
			  : nr_box_allreduce(c, sendbuf, recvbuf, count, dtype, op, flags);
	if (c)
		count_call(c, dtype, count, ring, flags, nr_now_ns() - t0, rc);
	return rc;
}

int nr_allreduce_multi(struct nr_comm *c, const struct nr_allreduce_req *reqs, unsigned n,
		       uint64_t *done_ns)
{
	uint64_t t0 = nr_now_ns();
	int rc = 0;

	if (!c)
		return NR_ERR_INVALID;
	if (n && !reqs)
		return nr_fail(c, NR_ERR_INVALID, "nr_allreduce_multi: NULL requests");
	for (unsigned i = 0; i < n; i++)
		if ((rc = check_flags(c, reqs[i].flags, "nr_allreduce_multi")))
			return rc;
	if (!c->classes || c->topo) {           /* one after the other */
		for (unsigned i = 0; !rc && i < n; i++) {
			rc = counted_allreduce(c, reqs[i].sendbuf, reqs[i].recvbuf, reqs[i].count,
					       reqs[i].dtype, reqs[i].op, false, reqs[i].flags);
			if (done_ns)
				done_ns[i] = nr_now_ns();
		}
		return rc;
	}
	rc = nr_box_allreduce_multi(c, reqs, n, done_ns);
	for (unsigned i = 0; i < n; i++)
		count_call(c, reqs[i].dtype, reqs[i].count, false, reqs[i].flags,
			   i ? 0 : nr_now_ns() - t0, rc);
	return rc;
}

int nr_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 enum nr_dtype dtype, enum nr_op op)
{
	return counted_allreduce(c, sendbuf, recvbuf, count, dtype, op, false, 0);
}

int nr_allreduce_flags(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		       enum nr_dtype dtype, enum nr_op op, unsigned flags)
{
	return counted_allreduce(c, sendbuf, recvbuf, count, dtype, op, false, flags);
}

int nr_ring_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		      enum nr_dtype dtype, enum nr_op op)
{
	return counted_allreduce(c, sendbuf, recvbuf, count, dtype, op, true, 0);
}

int nr_reduce_scatter(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t recvcount,
		      enum nr_dtype dtype, enum nr_op op)
{
	bool valid = dtype == NR_FLOAT32 || dtype == NR_BF16 || dtype == NR_FP16;
	size_t es = valid ? nr_dtype_size(dtype) : 1, total, share;
	uint64_t t0 = nr_now_ns();
	uint8_t *whole;
	bool ring;
	int rc;

	if (!c)
		return NR_ERR_INVALID;
	ring = c->topo ? !c->topo->racks && !c->topo->has_box : !c->has_box;
	if (recvcount > ((size_t)1 << 40) / es / (size_t)c->world)
		return nr_fail(c, NR_ERR_INVALID,
			       "nr_reduce_scatter: recvcount %zu x %d ranks too "
			       "large",
			       recvcount, c->world);
	total = recvcount * (size_t)c->world;
	share = recvcount * es;
	if (valid && recvcount && sendbuf && recvbuf &&
	    (const uint8_t *)recvbuf < (const uint8_t *)sendbuf + total * es &&
	    (const uint8_t *)sendbuf < (uint8_t *)recvbuf + share)
		return nr_fail(c, NR_ERR_INVALID,
			       "nr_reduce_scatter: recvbuf overlaps sendbuf (give "
			       "the share a buffer of its own)");
	/* the arguments, and one rank's share (the whole) copied */
	if (nr_check_args(c, sendbuf, recvbuf, recvcount, dtype, op, "nr_reduce_scatter", &rc)) {
		count_call(c, dtype, total, ring, 0, nr_now_ns() - t0, rc);
		return rc;
	}
	if (!c->topo && c->has_box && !c->classes) {
		rc = nr_box_reduce_scatter(c, sendbuf, recvbuf, recvcount, dtype, op);
		count_call(c, dtype, total, false, 0, nr_now_ns() - t0, rc);
		return rc;
	}
	/* elsewhere the all-reduce of the whole into a buffer, the share copied */
	whole = malloc(total * es);
	if (!whole)
		return nr_fail(c, NR_ERR_NOMEM,
			       "nr_reduce_scatter: no memory for the %zu bytes of "
			       "the whole result",
			       total * es);
	rc = counted_allreduce(c, sendbuf, whole, total, dtype, op, ring, 0);
	if (!rc)
		memcpy(recvbuf, whole + (size_t)c->rank * share, share);
	free(whole);
	return rc;
}

int nr_allgather(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t sendbytes)
{
	uint64_t t0 = nr_now_ns();
	const uint8_t *s = sendbuf, *r = recvbuf;
	size_t total;
	int rc;

	if (!c)
		return NR_ERR_INVALID;
	if (c->broken)
		return NR_ERR_BROKEN;
	if (sendbytes > ((size_t)1 << 40) / (size_t)c->world)
		return nr_fail(c, NR_ERR_INVALID, "nr_allgather: sendbytes %zu x %d ranks too large",
			       sendbytes, c->world);
	total = sendbytes * (size_t)c->world;
	if (sendbytes && (!sendbuf || !recvbuf))
		return nr_fail(c, NR_ERR_INVALID, "nr_allgather: NULL buffer");
	/* in place (this rank's part of recvbuf) or apart from it */
	if (sendbytes && s != r + (size_t)c->rank * sendbytes && s < r + total && r < s + sendbytes)
		return nr_fail(c, NR_ERR_INVALID,
			       "nr_allgather: sendbuf overlaps recvbuf other than "
			       "at this rank's place, recvbuf + rank x sendbytes");
	if (c->topo)
		return nr_fail(c, NR_ERR_INVALID,
			       "nr_allgather: not built on communicators of "
			       "several ranks a host or across racks (gather with the framework's)");
	if (!sendbytes)
		return NR_OK;
	if (c->world == 1) {
		memmove(recvbuf, sendbuf, sendbytes);
		rc = NR_OK;
	} else if (!c->has_box) {
		return nr_fail(c, NR_ERR_CONFIG,
			       "nr_allgather: no box configured (NR_BOX): gather "
			       "with the framework's all-gather");
	} else {
		rc = nr_box_allgather(c, sendbuf, recvbuf, sendbytes);
	}
	count_bytes(c, NR_FLOAT32, total, false, 0, nr_now_ns() - t0, rc);
	return rc;
}

void nr_comm_stats(const struct nr_comm *c, struct nr_comm_stats *out)
{
	out->box_calls = __atomic_load_n(&c->stats.box_calls, __ATOMIC_RELAXED);
	out->box_bytes = __atomic_load_n(&c->stats.box_bytes, __ATOMIC_RELAXED);
	out->ring_calls = __atomic_load_n(&c->stats.ring_calls, __ATOMIC_RELAXED);
	out->ring_bytes = __atomic_load_n(&c->stats.ring_bytes, __ATOMIC_RELAXED);
	out->failed_calls = __atomic_load_n(&c->stats.failed_calls, __ATOMIC_RELAXED);
	out->busy_ns = __atomic_load_n(&c->stats.busy_ns, __ATOMIC_RELAXED);
	out->tolerant_calls = __atomic_load_n(&c->stats.tolerant_calls, __ATOMIC_RELAXED);
	out->tolerant_bytes = __atomic_load_n(&c->stats.tolerant_bytes, __ATOMIC_RELAXED);
	out->tolerant_exact_calls = __atomic_load_n(&c->stats.tolerant_exact_calls, __ATOMIC_RELAXED);
	out->bf16_calls = __atomic_load_n(&c->stats.bf16_calls, __ATOMIC_RELAXED);
	out->fp16_calls = __atomic_load_n(&c->stats.fp16_calls, __ATOMIC_RELAXED);
}

/* The _ex calls' copy: the first size bytes of the library's struct (all, n bytes)
 * into out, zeros past n for a newer caller's fields this library lacks. */
static void copy_sized(void *out, size_t size, const void *all, size_t n)
{
	memcpy(out, all, size < n ? size : n);
	if (size > n)
		memset((char *)out + n, 0, size - n);
}

int nr_comm_stats_ex(const struct nr_comm *comm, struct nr_comm_stats *out, size_t size)
{
	struct nr_comm_stats all;

	if (!comm || !out || size == 0) {
		nr_set_tls_error("nr_comm_stats_ex: %s",
				 !comm  ? "NULL comm"
				 : !out ? "NULL out"
					: "size 0 (give sizeof(struct nr_comm_stats))");
		return NR_ERR_INVALID;
	}
	nr_comm_stats(comm, &all);
	copy_sized(out, size, &all, sizeof(all));
	return NR_OK;
}

int nr_comm_rank(const struct nr_comm *comm) { return comm->rank; }
int nr_comm_world(const struct nr_comm *comm) { return comm->world; }

/* The communicator that talks to the box (the comm itself when flat). */
static const struct nr_comm *box_comm(const struct nr_comm *comm)
{
	return !comm->topo ? comm : comm->topo->racks ? comm->topo->rack_comm : comm->topo->col;
}

uint32_t nr_comm_credits(const struct nr_comm *comm)
{
	const struct nr_comm *box = box_comm(comm);

	return box && box->has_box ? box->box[NR_ELEM_FP32].credits : 0;
}

unsigned nr_comm_channels(const struct nr_comm *comm)
{
	const struct nr_comm *box = box_comm(comm);

	return box && box->has_box ? box->n_channels : 1;
}

int nr_comm_box_counters(const struct nr_comm *comm, struct nr_box_counters *out,
			 uint64_t *left_out, size_t n)
{
	const struct nr_comm *box = comm ? box_comm(comm) : NULL;
	char err[NR_ERRLEN];
	int rc;

	if (!out || (n && !left_out)) {
		nr_set_tls_error("nr_comm_box_counters: NULL %s", out ? "left_out" : "out");
		return NR_ERR_INVALID;
	}
	if (!box || !box->has_box || !nr_box_job_made(&box->box[NR_ELEM_FP32])) {
		nr_set_tls_error("nr_comm_box_counters: rank %d holds no box job: rank 0 registered "
				 "it (and a communicator without NR_BOX has none)",
				 comm ? comm->rank : -1);
		return NR_ERR_INVALID;
	}
	if (n > (size_t)box->world) {
		memset(left_out + box->world, 0, (n - (size_t)box->world) * sizeof(*left_out));
		n = (size_t)box->world;
	}
	rc = nr_box_counters_get(box, out, left_out, n, err, sizeof(err));
	if (rc)
		nr_set_tls_error("rank %d: nr_comm_box_counters: %s", comm->rank, err);
	return rc;
}

int nr_comm_box_counters_ex(const struct nr_comm *comm, struct nr_box_counters *out, size_t size,
			    uint64_t *left_out, size_t n)
{
	struct nr_box_counters all = { 0 };
	int rc;

	if (!out || size == 0) {
		nr_set_tls_error("nr_comm_box_counters_ex: %s",
				 !out ? "NULL out" : "size 0 (give sizeof(struct nr_box_counters))");
		return NR_ERR_INVALID;
	}
	rc = nr_comm_box_counters(comm, &all, left_out, n);
	if (rc)
		return rc;
	copy_sized(out, size, &all, sizeof(all));
	return NR_OK;
}

int nr_comm_box_status(const struct nr_comm *comm, char *buf, size_t len)
{
	const struct nr_comm *box = comm ? box_comm(comm) : NULL;
	char err[NR_ERRLEN];
	int rc;

	if (!buf || !len) {
		nr_set_tls_error("nr_comm_box_status: no buffer");
		return NR_ERR_INVALID;
	}
	if (!box || !box->has_box || !nr_box_job_made(&box->box[NR_ELEM_FP32])) {
		nr_set_tls_error("nr_comm_box_status: rank %d holds no box job: rank 0 registered "
				 "it (and a communicator without NR_BOX has none)",
				 comm ? comm->rank : -1);
		return NR_ERR_INVALID;
	}
	rc = nr_box_status_get(box, buf, len, err, sizeof(err));
	if (rc)
		nr_set_tls_error("rank %d: nr_comm_box_status: %s", comm->rank, err);
	return rc;
}

/* QPs of one ring communicator in error, the first one's message to buf when *found is 0. */
static int flat_qp_errors(struct nr_comm *c, char *buf, size_t len, int *found)
{
	int n = 0;

	if (!c || !c->tp)
		return 0;
	nr_comm_lock(c);   /* the progress thread moves QPs to error */
	for (unsigned i = 0; i < NR_RINGS_MAX; i++) {
		struct nr_tp_qp *qps[2] = { c->ring[i].sqp, c->ring[i].rqp };

		for (int k = 0; k < 2; k++) {
			const char *e = qps[k] ? nr_tp_qp_error(qps[k]) : NULL;

			if (!e || !*e)
				continue;
			if (!(*found)++ && buf && len)
				snprintf(buf, len, "rank %d: %s QP of the %s ring: %s", c->rank,
					 k ? "receive" : "send", nr_ring_name((int)i), e);
			n++;
		}
	}
	nr_comm_unlock(c);
	return n;
}

int nr_comm_qp_errors(struct nr_comm *comm, char *buf, size_t len)
{
	int found = 0;

	if (buf && len)
		buf[0] = '\0';
	if (!comm)
		return 0;
	if (!comm->topo)
		return flat_qp_errors(comm, buf, len, &found);
	return flat_qp_errors(comm->topo->col, buf, len, &found) +
	       flat_qp_errors(comm->topo->rack_comm, buf, len, &found) +
	       flat_qp_errors(comm->topo->agent, buf, len, &found);
}

const char *nr_comm_algo(const struct nr_comm *comm)
{
	return !comm->topo ? "flat" : comm->topo->racks ? "racks" : nr_hier_variant_name(comm);
}
