/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job contract (see nr_job.h): the engine's counter names and the job
 * spec validation every backend shares; every error names the field and what
 * a valid value looks like.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/nr_job.h"
#include "proto/nr_text.h"
#include "proto/roce_hdr.h"

const char *const nr_engine_ctr_names[NR_ECTR_MAX] = { NR_FOREACH_ENGINE_CTR(NR_CTR_NAME) };
const char *const nr_engine_ctr_help[NR_ECTR_MAX] = { NR_FOREACH_ENGINE_CTR(NR_CTR_HELP) };
const char *const nr_short_why_names[NR_SHORT_WHY_MAX] = { NR_FOREACH_SHORT_WHY(NR_CTR_NAME) };
const char *const nr_short_why_help[NR_SHORT_WHY_MAX] = { NR_FOREACH_SHORT_WHY(NR_CTR_HELP) };

#define NR_MAX_MSG_SIZE   (1u << 30)
#define NR_MAX_POOL_BYTES (256ull << 20)
#define NR_MAX_TIMEOUT_MS 3600000u

static int spec_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int spec_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

uint32_t nr_job_pool_packets(const struct nr_job_spec *s)
{
	uint64_t per = ((uint64_t)s->msg_size + s->mtu - 1) / s->mtu;
	uint64_t pp = per * s->pool_msgs;

	return pp > UINT32_MAX ? UINT32_MAX : (uint32_t)pp;
}

uint32_t nr_job_acc_packets(const struct nr_job_spec *s)
{
	if (s->dtype == NR_ELEM_FP32)
		return 0;
	return s->mode == NR_SUM_STREAMING ? nr_job_pool_packets(s) : 1;
}

uint64_t nr_job_mem_bytes(const struct nr_job_spec *s)
{
	uint64_t pp = nr_job_pool_packets(s);
	uint64_t words = (s->n_conns + 63) / 64;

	return pp * (NR_JOB_SLOT_BYTES + s->mtu + words * 8 +
		     (uint64_t)s->n_conns * (NR_JOB_HELD_BYTES + NR_JOB_RETH_BYTES)) +
	       (uint64_t)nr_job_acc_packets(s) * 2 * s->mtu;
}

uint64_t nr_job_held_frames(const struct nr_job_spec *s)
{
	return (uint64_t)nr_job_conns(s) * nr_job_pool_packets(s);
}

uint64_t nr_job_pool_bytes(const struct nr_job_spec *s)
{
	return nr_job_held_frames(s) * s->mtu;
}

static bool mtu_ok(uint32_t mtu)
{
	return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

const char *nr_job_conn_name(const struct nr_job_spec *s, uint32_t k, char *buf, size_t len)
{
	if (nr_job_channels(s) > 1)
		snprintf(buf, len, "channels[%u].conns[%u]", k / s->n_conns, k % s->n_conns);
	else
		snprintf(buf, len, "conns[%u]", k);
	return buf;
}

static int check_conn(const struct nr_job_spec *s, uint32_t k, char *err, size_t len)
{
	const struct nr_conn_spec *c = &s->conns[k];
	char n[48];

	if (!c->src_ip)
		return spec_err(err, len, "%s.src_ip: 0.0.0.0 is not a host address", nr_job_conn_name(s, k, n, sizeof(n)));
	if (!c->dst_ip)
		return spec_err(err, len, "%s.dst_ip: 0.0.0.0 is not a host address", nr_job_conn_name(s, k, n, sizeof(n)));
	if (c->src_qpn == 0 || c->src_qpn > NR_BTH_QPN_MASK)
		return spec_err(err, len, "%s.src_qpn: 0x%x is not a 24-bit QPN (1..0xffffff)",
				nr_job_conn_name(s, k, n, sizeof(n)), c->src_qpn);
	if (c->dst_qpn == 0 || c->dst_qpn > NR_BTH_QPN_MASK)
		return spec_err(err, len, "%s.dst_qpn: 0x%x is not a 24-bit QPN (1..0xffffff)",
				nr_job_conn_name(s, k, n, sizeof(n)), c->dst_qpn);
	if (c->ipsn > NR_PSN_MASK)
		return spec_err(err, len, "%s.ipsn: 0x%x is not a 24-bit PSN", nr_job_conn_name(s, k, n, sizeof(n)),
				c->ipsn);
	return 0;
}

/* Data keys (dst_ip, dst_qpn) and ACK keys (src_ip, src_qpn) of every channel must all differ. */
static int check_keys(const struct nr_job_spec *s, char *err, size_t len)
{
	const uint32_t total = nr_job_conns(s);
	char a[INET_ADDRSTRLEN], n[48], m[48];

	for (uint32_t i = 0; i < total; i++) {
		const struct nr_conn_spec *ci = &s->conns[i];

		for (uint32_t k = 0; k < total; k++) {
			const struct nr_conn_spec *ck = &s->conns[k];

			if (k > i && ci->dst_ip == ck->dst_ip && ci->dst_qpn == ck->dst_qpn)
				return spec_err(err, len, "%s: receiver %s qpn 0x%x already used by %s",
						nr_job_conn_name(s, k, n, sizeof(n)), nr_ip4_str(ck->dst_ip, a),
						ck->dst_qpn, nr_job_conn_name(s, i, m, sizeof(m)));
			if (k > i && ci->src_ip == ck->src_ip && ci->src_qpn == ck->src_qpn)
				return spec_err(err, len, "%s: sender %s qpn 0x%x already used by %s",
						nr_job_conn_name(s, k, n, sizeof(n)), nr_ip4_str(ck->src_ip, a),
						ck->src_qpn, nr_job_conn_name(s, i, m, sizeof(m)));
			if (ci->dst_ip == ck->src_ip && ci->dst_qpn == ck->src_qpn)
				return spec_err(err, len,
						"%s: sender %s qpn 0x%x is the receiving QP of %s; "
						"a host needs distinct QPs to send and to receive",
						nr_job_conn_name(s, k, n, sizeof(n)), nr_ip4_str(ck->src_ip, a),
						ck->src_qpn, nr_job_conn_name(s, i, m, sizeof(m)));
		}
	}
	return 0;
}

const char *nr_reduce_name(unsigned op)
{
	static const char *const names[NR_REDUCE_OPS] = { "sum", "max", "bor" };

	return op < NR_REDUCE_OPS ? names[op] : NULL;
}

void nr_job_channel_spec(const struct nr_job_spec *s, uint32_t c, struct nr_job_spec *out)
{
	memcpy(out, s, sizeof(*s));
	out->n_channels = 1;
	memcpy(out->conns, &s->conns[(size_t)c * s->n_conns], s->n_conns * sizeof(s->conns[0]));
}

int nr_job_spec_validate(const struct nr_job_spec *s, char *err, size_t len)
{
	uint64_t mem;
	int rc;

	if (!s)
		return spec_err(err, len, "spec: missing");
	if (s->n_conns < 1 || s->n_conns > NR_MAX_CONNS)
		return spec_err(err, len, "n_conns: %u is out of range (1..%u)", s->n_conns,
				NR_MAX_CONNS);
	if (nr_job_channels(s) > NR_MAX_CHANNELS)
		return spec_err(err, len, "n_channels: %u is out of range (1..%u)", s->n_channels,
				NR_MAX_CHANNELS);
	if (!mtu_ok(s->mtu))
		return spec_err(err, len, "mtu: %u is not a RoCE path MTU (256, 512, 1024, 2048, 4096)",
				s->mtu);
	if (!nr_elem_name(s->dtype))
		return spec_err(err, len, "dtype: %u is not an element type (0 fp32, 1 bf16, 2 fp16)",
				s->dtype);
	if (s->msg_size < nr_elem_size(s->dtype) || s->msg_size % nr_elem_size(s->dtype) ||
	    s->msg_size > NR_MAX_MSG_SIZE)
		return spec_err(err, len,
				"msg_size: %u must be a multiple of %u between %u and %u bytes (%s elements)",
				s->msg_size, nr_elem_size(s->dtype), nr_elem_size(s->dtype),
				NR_MAX_MSG_SIZE, nr_elem_name(s->dtype));
	if (s->pool_msgs < 2 || s->pool_msgs % 2)
		return spec_err(err, len, "pool_msgs: %u must be even and >= 2 (2W messages)",
				s->pool_msgs);
	if ((uint64_t)nr_job_pool_packets(s) * 2 >= (1u << 23))
		return spec_err(err, len,
				"pool_msgs: %u messages of %u packets exceed the PSN window "
				"(pool packets * 2 must stay below 2^23)",
				s->pool_msgs, (s->msg_size + s->mtu - 1) / s->mtu);
	mem = nr_job_mem_bytes(s);
	if (mem > NR_MAX_POOL_BYTES)
		return spec_err(err, len,
				"pool_msgs: %u messages need %llu MiB of pool, the limit is %llu MiB; "
				"use fewer messages or smaller ones",
				s->pool_msgs, (unsigned long long)(mem >> 20),
				(unsigned long long)(NR_MAX_POOL_BYTES >> 20));
	if (s->timeout_ms < 1 || s->timeout_ms > NR_MAX_TIMEOUT_MS)
		return spec_err(err, len, "timeout_ms: %u is out of range (1..%u)", s->timeout_ms,
				NR_MAX_TIMEOUT_MS);
	if (s->mode != NR_SUM_ORDERED && s->mode != NR_SUM_STREAMING)
		return spec_err(err, len, "mode: %u is not a sum mode (0 ordered, 1 streaming)",
				s->mode);
	if (!nr_reduce_name(s->reduce))
		return spec_err(err, len, "reduce: %u is not a reduce op (0 sum, 1 max, 2 bor)",
				s->reduce);
	if (s->reduce != NR_REDUCE_SUM && s->dtype != NR_ELEM_FP32) {
		const char *why = s->reduce == NR_REDUCE_BOR
					  ? "bor ORs 32-bit words, whatever they hold"
					  : "the box's max kernels are FP32";

		return spec_err(err, len,
				"reduce: %s of %s elements is not built (%s): use dtype fp32 or "
				"reduce sum",
				nr_reduce_name(s->reduce), nr_elem_name(s->dtype), why);
	}
	if (s->short_ppm > NR_SHORT_PPM_MAX)
		return spec_err(err, len, "short_ppm: %u is over %u (packets per million of a message "
				"that may be completed short)", s->short_ppm, NR_SHORT_PPM_MAX);
	if (s->short_dscp > 63)
		return spec_err(err, len, "short_dscp: %u is not a DSCP (0..63)", s->short_dscp);
	if (s->short_scale > 1 || (s->short_scale && s->reduce != NR_REDUCE_SUM))
		return spec_err(err, len, "short_scale: %u: 0 or 1, and 1 only with reduce sum",
				s->short_scale);
	if (s->prio_classes > NR_MAX_CLASSES)
		return spec_err(err, len, "prio_classes: %u is over %u", s->prio_classes,
				NR_MAX_CLASSES);
	if (s->prio_classes > 1 && s->short_dscp + 8u * (s->prio_classes - 1) + 2 > 63)
		return spec_err(err, len, "prio_classes: %u classes from short_dscp %u reach DSCP "
				"%u (a class is 8 DSCPs up, its drop-eligible packets 2 more): at most "
				"63", s->prio_classes, s->short_dscp,
				s->short_dscp + 8u * (s->prio_classes - 1) + 2);
	if (s->short_first > 1)
		return spec_err(err, len, "short_first: %u: 0 or 1", s->short_first);
	if (s->selective > 1)
		return spec_err(err, len, "selective: %u: 0 (go-back-N) or 1 (selective repeat)",
				s->selective);
	if (s->spray_ports > NR_MAX_SPRAY)
		return spec_err(err, len, "spray_ports: %u is over %u UDP source ports", s->spray_ports,
				NR_MAX_SPRAY);
	if (s->reorder_pkts > NR_MAX_REORDER || s->reorder_pkts >= nr_job_pool_packets(s) / 2)
		return spec_err(err, len, "reorder_pkts: %u must stay below %u and half the pool "
				"(%u packets)", s->reorder_pkts, NR_MAX_REORDER + 1,
				nr_job_pool_packets(s));
	if (s->short_ppm && s->n_conns < 2)
		return spec_err(err, len, "short_ppm: a job of %u rank cannot leave a contribution out",
				s->n_conns);
	for (uint32_t i = 0; i < nr_job_conns(s); i++) {
		rc = check_conn(s, i, err, len);
		if (rc)
			return rc;
	}
	return check_keys(s, err, len);
}
