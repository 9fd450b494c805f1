/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Register-level model of the aggregator FPGA: see fpga_model.h.  What it
 * checks on JOB_LOAD is what FPGA.md says the device checks.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/control/fpga_model.h"

uint32_t fpga_model_rd(struct fpga_model *m, uint32_t off)
{
	return m->regs[off / 4];
}

void fpga_model_wr(struct fpga_model *m, uint32_t off, uint32_t v)
{
	m->regs[off / 4] = v;
}

#define RD(off) fpga_model_rd(m, off)
#define WR(off, v) fpga_model_wr(m, off, v)

static void wr64(struct fpga_model *m, uint32_t off, uint64_t v)
{
	WR(off, (uint32_t)v);
	WR(off + 4, (uint32_t)(v >> 32));
}

static uint64_t rd64(struct fpga_model *m, uint32_t off)
{
	return (uint64_t)RD(off + 4) << 32 | RD(off);
}

void fpga_model_default_caps(struct fpga_model_caps *c)
{
	c->jobs = 16;
	c->conns = NR_FPGA_CONN_SLOTS;
	c->pool_bytes = 64u << 20;
	c->ranks = NR_MAX_CONNS;
	c->mtu = 4096;
	c->flags = NR_FPGA_CAPF_ORDERED | NR_FPGA_CAPF_STREAMING;
}

static void clear_range(struct fpga_model *m, uint32_t from, uint32_t to)
{
	for (uint32_t off = from; off < to; off += 4)
		WR(off, 0);
}

static void reset_tables(struct fpga_model *m)
{
	clear_range(m, NR_FPGA_JOB_BASE, NR_FPGA_JOB(NR_FPGA_JOB_SLOTS, 0));
	clear_range(m, NR_FPGA_CONN_BASE, NR_FPGA_CONN(NR_FPGA_CONN_SLOTS, 0));
	clear_range(m, NR_FPGA_GCTR_BASE, NR_FPGA_GCTR_BASE + 0x100);
	clear_range(m, NR_FPGA_JCTR_BASE, NR_FPGA_JCTR(NR_FPGA_JOB_SLOTS, 0));
	WR(NR_FPGA_POOL_USED, 0);
	WR(NR_FPGA_JOBS_LOADED, 0);
	memset(m->pool, 0, sizeof(m->pool));
}

void fpga_model_init(struct fpga_model *m, void *regs, const struct fpga_model_caps *caps)
{
	memset(m, 0, sizeof(*m));
	m->regs = regs;
	if (caps)
		m->caps = *caps;
	else
		fpga_model_default_caps(&m->caps);
	pthread_mutex_init(&m->lock, NULL);
	clear_range(m, 0, NR_FPGA_REGS_SIZE);
	WR(NR_FPGA_MAGIC_REG, NR_FPGA_MAGIC);
	WR(NR_FPGA_VERSION_REG, NR_FPGA_VERSION);
	WR(NR_FPGA_CAP_MAX_JOBS, m->caps.jobs);
	WR(NR_FPGA_CAP_MAX_CONNS, m->caps.conns);
	WR(NR_FPGA_CAP_POOL_BYTES, m->caps.pool_bytes);
	WR(NR_FPGA_CAP_MAX_RANKS, m->caps.ranks);
	WR(NR_FPGA_CAP_MAX_MTU, m->caps.mtu);
	WR(NR_FPGA_CAP_FLAGS, m->caps.flags);
}

void fpga_model_fini(struct fpga_model *m)
{
	fpga_model_stop(m);
	pthread_mutex_destroy(&m->lock);
}

/* ---- JOB_LOAD checks ---------------------------------------------------- */

static bool mtu_ok(uint32_t mtu)
{
	return mtu >= 256 && mtu <= 4096 && !(mtu & (mtu - 1));
}

/* 0 or an error code; *info says which field (offset) or entry. */
static uint32_t check_job_fields(struct fpga_model *m, unsigned slot, uint32_t *info)
{
	uint32_t n = RD(NR_FPGA_JOB(slot, NR_FPGA_J_N_CONNS));
	uint32_t mtu = RD(NR_FPGA_JOB(slot, NR_FPGA_J_MTU));
	uint32_t msg = RD(NR_FPGA_JOB(slot, NR_FPGA_J_MSG_SIZE));
	uint32_t pool = RD(NR_FPGA_JOB(slot, NR_FPGA_J_POOL_MSGS));
	uint32_t mode = RD(NR_FPGA_JOB(slot, NR_FPGA_J_MODE));

	*info = 0;
	if (n < 1 || n > m->caps.ranks)
		*info = NR_FPGA_J_N_CONNS;
	else if (!mtu_ok(mtu) || mtu > m->caps.mtu)
		*info = NR_FPGA_J_MTU;
	else if (msg < 4 || msg % 4)
		*info = NR_FPGA_J_MSG_SIZE;
	else if (pool < 2 || pool % 2)
		*info = NR_FPGA_J_POOL_MSGS;
	else if (RD(NR_FPGA_JOB(slot, NR_FPGA_J_TIMEOUT_MS)) < 1)
		*info = NR_FPGA_J_TIMEOUT_MS;
	else if (mode > 1 || !(m->caps.flags & (mode ? NR_FPGA_CAPF_STREAMING : NR_FPGA_CAPF_ORDERED)))
		*info = NR_FPGA_J_MODE;
	return *info ? NR_FPGA_ERR_BAD_FIELD : 0;
}

static bool ent_valid(struct fpga_model *m, unsigned e)
{
	return RD(NR_FPGA_CONN(e, NR_FPGA_C_CTRL)) & NR_FPGA_C_VALID;
}

static unsigned ent_job(struct fpga_model *m, unsigned e)
{
	return RD(NR_FPGA_CONN(e, NR_FPGA_C_CTRL)) & NR_FPGA_C_JOB_MASK;
}

static bool ent_fields_ok(struct fpga_model *m, unsigned e)
{
	uint32_t sq = RD(NR_FPGA_CONN(e, NR_FPGA_C_SRC_QPN)), dq = RD(NR_FPGA_CONN(e, NR_FPGA_C_DST_QPN));

	return RD(NR_FPGA_CONN(e, NR_FPGA_C_SRC_IP)) && RD(NR_FPGA_CONN(e, NR_FPGA_C_DST_IP)) &&
	       sq && sq <= 0xffffff && dq && dq <= 0xffffff &&
	       RD(NR_FPGA_CONN(e, NR_FPGA_C_IPSN)) <= 0xffffff &&
	       RD(NR_FPGA_CONN(e, NR_FPGA_C_SRC_MAC_HI)) <= 0xffff &&
	       RD(NR_FPGA_CONN(e, NR_FPGA_C_DST_MAC_HI)) <= 0xffff;
}

static bool ep_clash(struct fpga_model *m, unsigned a, unsigned b)
{
	uint32_t ea[2][2] = {
		{ RD(NR_FPGA_CONN(a, NR_FPGA_C_SRC_IP)), RD(NR_FPGA_CONN(a, NR_FPGA_C_SRC_QPN)) },
		{ RD(NR_FPGA_CONN(a, NR_FPGA_C_DST_IP)), RD(NR_FPGA_CONN(a, NR_FPGA_C_DST_QPN)) } };
	uint32_t eb[2][2] = {
		{ RD(NR_FPGA_CONN(b, NR_FPGA_C_SRC_IP)), RD(NR_FPGA_CONN(b, NR_FPGA_C_SRC_QPN)) },
		{ RD(NR_FPGA_CONN(b, NR_FPGA_C_DST_IP)), RD(NR_FPGA_CONN(b, NR_FPGA_C_DST_QPN)) } };

	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++)
			if (ea[i][0] == eb[k][0] && ea[i][1] == eb[k][1])
				return true;
	return false;
}

static uint32_t check_entries(struct fpga_model *m, unsigned slot, uint32_t *info)
{
	uint32_t n = RD(NR_FPGA_JOB(slot, NR_FPGA_J_N_CONNS)), count = 0;
	bool seen[NR_MAX_CONNS] = { false };

	for (unsigned e = 0; e < m->caps.conns; e++) {
		unsigned j;
		uint32_t rank;

		if (!ent_valid(m, e))
			continue;
		j = ent_job(m, e);
		*info = e;
		/* A valid entry must point to this slot or to a loaded job. */
		if (j >= m->caps.jobs)
			return NR_FPGA_ERR_BAD_CONN;
		if (j != slot) {
			if (RD(NR_FPGA_JOB(j, NR_FPGA_J_STATE)) == NR_FPGA_JS_FREE)
				return NR_FPGA_ERR_BAD_CONN;     /* dangling entry */
			continue;
		}
		rank = RD(NR_FPGA_CONN(e, NR_FPGA_C_RANK));
		if (rank >= n || rank >= NR_MAX_CONNS || seen[rank] || !ent_fields_ok(m, e))
			return NR_FPGA_ERR_BAD_CONN;
		seen[rank] = true;
		count++;
		for (unsigned o = 0; o < m->caps.conns; o++) {
			if (o == e || !ent_valid(m, o) || ent_job(m, o) == slot || ent_job(m, o) >= m->caps.jobs)
				continue;
			if (RD(NR_FPGA_JOB(ent_job(m, o), NR_FPGA_J_STATE)) != NR_FPGA_JS_FREE && ep_clash(m, e, o))
				return NR_FPGA_ERR_CONN_CLASH;
		}
	}
	*info = count;
	return count == n ? 0 : NR_FPGA_ERR_CONN_COUNT;
}

static uint32_t job_load(struct fpga_model *m, unsigned slot, uint32_t *info)
{
	uint64_t pool;
	uint32_t rc;

	*info = 0;
	if (!(RD(NR_FPGA_STATUS) & NR_FPGA_ST_ENABLED))
		return NR_FPGA_ERR_DISABLED;
	if (slot >= m->caps.jobs)
		return NR_FPGA_ERR_BAD_INDEX;
	if (RD(NR_FPGA_JOB(slot, NR_FPGA_J_STATE)) != NR_FPGA_JS_FREE)
		return NR_FPGA_ERR_SLOT_BUSY;
	rc = check_job_fields(m, slot, info);
	if (!rc)
		rc = check_entries(m, slot, info);
	if (rc)
		return rc;
	/* every rank's packet of every slot: N x POOL_MSGS x ceil(MSG_SIZE / MTU) x MTU */
	{
		uint64_t mtu = RD(NR_FPGA_JOB(slot, NR_FPGA_J_MTU));
		uint64_t per = (RD(NR_FPGA_JOB(slot, NR_FPGA_J_MSG_SIZE)) + mtu - 1) / mtu;

		pool = RD(NR_FPGA_JOB(slot, NR_FPGA_J_N_CONNS)) * per *
		       RD(NR_FPGA_JOB(slot, NR_FPGA_J_POOL_MSGS)) * mtu;
	}
	if (pool + RD(NR_FPGA_POOL_USED) > m->caps.pool_bytes) {
		*info = (uint32_t)(m->caps.pool_bytes - RD(NR_FPGA_POOL_USED));
		return NR_FPGA_ERR_NO_POOL;
	}
	m->pool[slot] = (uint32_t)pool;
	WR(NR_FPGA_POOL_USED, RD(NR_FPGA_POOL_USED) + (uint32_t)pool);
	WR(NR_FPGA_JOBS_LOADED, RD(NR_FPGA_JOBS_LOADED) + 1);
	WR(NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_EMIT), 0);
	WR(NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_RELEASE), 0);
	WR(NR_FPGA_JOB(slot, NR_FPGA_J_FAIL_CODE), 0);
	wr64(m, NR_FPGA_JOB(slot, NR_FPGA_J_COMPLETED_LO), 0);
	clear_range(m, NR_FPGA_JCTR(slot, 0), NR_FPGA_JCTR(slot + 1, 0));
	WR(NR_FPGA_JOB(slot, NR_FPGA_J_STATE), NR_FPGA_JS_ACTIVE);
	return 0;
}

static uint32_t job_unload(struct fpga_model *m, unsigned slot)
{
	if (slot >= m->caps.jobs)
		return NR_FPGA_ERR_BAD_INDEX;
	if (RD(NR_FPGA_JOB(slot, NR_FPGA_J_STATE)) == NR_FPGA_JS_FREE)
		return NR_FPGA_ERR_SLOT_FREE;
	for (unsigned e = 0; e < m->caps.conns; e++)
		if (ent_valid(m, e) && ent_job(m, e) == slot)
			clear_range(m, NR_FPGA_CONN(e, 0), NR_FPGA_CONN(e + 1, 0));
	clear_range(m, NR_FPGA_JOB(slot, 0), NR_FPGA_JOB(slot + 1, 0));
	clear_range(m, NR_FPGA_JCTR(slot, 0), NR_FPGA_JCTR(slot + 1, 0));
	WR(NR_FPGA_POOL_USED, RD(NR_FPGA_POOL_USED) - m->pool[slot]);
	WR(NR_FPGA_JOBS_LOADED, RD(NR_FPGA_JOBS_LOADED) - 1);
	m->pool[slot] = 0;
	return 0;
}

static void service_locked(struct fpga_model *m)
{
	uint32_t ctrl = RD(NR_FPGA_CTRL), cmd, err = 0, info = 0, st;
	uint8_t tag;

	if (ctrl & NR_FPGA_CTRL_RESET) {
		reset_tables(m);
		WR(NR_FPGA_CMD_STATUS, (RD(NR_FPGA_CMD_STATUS) & ~NR_FPGA_CS_STATE_MASK) | NR_FPGA_CS_IDLE);
		WR(NR_FPGA_STATUS, NR_FPGA_ST_READY);
		WR(NR_FPGA_CTRL, ctrl & ~(NR_FPGA_CTRL_RESET | NR_FPGA_CTRL_ENABLE));
		ctrl = RD(NR_FPGA_CTRL);
	}
	st = RD(NR_FPGA_STATUS);
	if ((ctrl & NR_FPGA_CTRL_ENABLE) && (st & NR_FPGA_ST_READY))
		WR(NR_FPGA_STATUS, st | NR_FPGA_ST_ENABLED);
	else if (!(ctrl & NR_FPGA_CTRL_ENABLE))
		WR(NR_FPGA_STATUS, st & ~NR_FPGA_ST_ENABLED);

	cmd = RD(NR_FPGA_CMD);
	tag = (uint8_t)(cmd >> NR_FPGA_CMD_TAG_SHIFT);
	if (tag == m->last_tag || m->stall)
		return;
	m->last_tag = tag;
	m->cmds++;
	switch (cmd & NR_FPGA_CMD_OP_MASK) {
	case NR_FPGA_OP_JOB_LOAD:
		err = job_load(m, cmd >> NR_FPGA_CMD_IDX_SHIFT, &info);
		break;
	case NR_FPGA_OP_JOB_UNLOAD:
		err = job_unload(m, cmd >> NR_FPGA_CMD_IDX_SHIFT);
		break;
	default:
		err = NR_FPGA_ERR_BAD_OP;
	}
	m->last_err = err;
	m->last_info = info;
	m->cmd_errors += err != 0;
	WR(NR_FPGA_CMD_INFO, info);
	WR(NR_FPGA_CMD_STATUS, (err ? NR_FPGA_CS_ERROR : NR_FPGA_CS_DONE) |
	   err << NR_FPGA_CS_ERR_SHIFT | (uint32_t)tag << NR_FPGA_CS_TAG_SHIFT);
}

void fpga_model_service(struct fpga_model *m)
{
	pthread_mutex_lock(&m->lock);
	service_locked(m);
	pthread_mutex_unlock(&m->lock);
}

static uint32_t io_read(void *ctx, uint32_t off)
{
	return fpga_model_rd(ctx, off);
}

static void io_write(void *ctx, uint32_t off, uint32_t v)
{
	struct fpga_model *m = ctx;

	fpga_model_wr(m, off, v);
	if (off == NR_FPGA_CMD || off == NR_FPGA_CTRL)
		fpga_model_service(m);
}

const struct nr_fpga_io *fpga_model_io(struct fpga_model *m)
{
	m->io = (struct nr_fpga_io){ .read32 = io_read, .write32 = io_write, .ctx = m };
	return &m->io;
}

static void *model_thread(void *arg)
{
	struct fpga_model *m = arg;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 50000 };

	while (__atomic_load_n(&m->running, __ATOMIC_ACQUIRE)) {
		fpga_model_service(m);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int fpga_model_start(struct fpga_model *m)
{
	m->last_tag = (uint8_t)(RD(NR_FPGA_CMD) >> NR_FPGA_CMD_TAG_SHIFT);
	__atomic_store_n(&m->running, true, __ATOMIC_RELEASE);
	if (pthread_create(&m->th, NULL, model_thread, m)) {
		m->running = false;
		return -1;
	}
	return 0;
}

void fpga_model_stop(struct fpga_model *m)
{
	if (!__atomic_load_n(&m->running, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&m->running, false, __ATOMIC_RELEASE);
	pthread_join(m->th, NULL);
}

/* ---- inspection and pretend traffic ------------------------------------- */

int fpga_model_slot_of(struct fpga_model *m, uint32_t tag)
{
	for (unsigned s = 0; s < m->caps.jobs; s++)
		if (RD(NR_FPGA_JOB(s, NR_FPGA_J_STATE)) != NR_FPGA_JS_FREE &&
		    RD(NR_FPGA_JOB(s, NR_FPGA_J_TAG)) == tag)
			return (int)s;
	return -1;
}

static void mac_get(struct fpga_model *m, unsigned e, uint32_t hi_off, uint32_t lo_off, uint8_t *mac)
{
	uint32_t hi = RD(NR_FPGA_CONN(e, hi_off)), lo = RD(NR_FPGA_CONN(e, lo_off));

	mac[0] = (uint8_t)(hi >> 8);
	mac[1] = (uint8_t)hi;
	mac[2] = (uint8_t)(lo >> 24);
	mac[3] = (uint8_t)(lo >> 16);
	mac[4] = (uint8_t)(lo >> 8);
	mac[5] = (uint8_t)lo;
}

struct nr_job_spec *fpga_model_decode(struct fpga_model *m, unsigned slot)
{
	struct nr_job_spec *s;
	uint32_t n;

	if (slot >= m->caps.jobs || RD(NR_FPGA_JOB(slot, NR_FPGA_J_STATE)) == NR_FPGA_JS_FREE)
		return NULL;
	n = RD(NR_FPGA_JOB(slot, NR_FPGA_J_N_CONNS));
	if (n > NR_MAX_CONNS)
		return NULL;
	s = calloc(1, sizeof(*s) + n * sizeof(s->conns[0]));
	if (!s)
		return NULL;
	s->n_conns = n;
	s->mtu = RD(NR_FPGA_JOB(slot, NR_FPGA_J_MTU));
	s->msg_size = RD(NR_FPGA_JOB(slot, NR_FPGA_J_MSG_SIZE));
	s->pool_msgs = RD(NR_FPGA_JOB(slot, NR_FPGA_J_POOL_MSGS));
	s->timeout_ms = RD(NR_FPGA_JOB(slot, NR_FPGA_J_TIMEOUT_MS));
	s->mode = (uint8_t)RD(NR_FPGA_JOB(slot, NR_FPGA_J_MODE));
	s->result_key = RD(NR_FPGA_JOB(slot, NR_FPGA_J_RESULT_KEY));
	for (unsigned e = 0; e < m->caps.conns; e++) {
		struct nr_conn_spec *c;
		uint32_t r;

		if (!ent_valid(m, e) || ent_job(m, e) != slot)
			continue;
		r = RD(NR_FPGA_CONN(e, NR_FPGA_C_RANK));
		if (r >= n)
			continue;
		c = &s->conns[r];
		c->src_ip = htonl(RD(NR_FPGA_CONN(e, NR_FPGA_C_SRC_IP)));
		c->dst_ip = htonl(RD(NR_FPGA_CONN(e, NR_FPGA_C_DST_IP)));
		c->src_qpn = RD(NR_FPGA_CONN(e, NR_FPGA_C_SRC_QPN));
		c->dst_qpn = RD(NR_FPGA_CONN(e, NR_FPGA_C_DST_QPN));
		c->ipsn = RD(NR_FPGA_CONN(e, NR_FPGA_C_IPSN));
		mac_get(m, e, NR_FPGA_C_SRC_MAC_HI, NR_FPGA_C_SRC_MAC_LO, c->src_mac);
		mac_get(m, e, NR_FPGA_C_DST_MAC_HI, NR_FPGA_C_DST_MAC_LO, c->dst_mac);
	}
	return s;
}

unsigned fpga_model_valid_entries(struct fpga_model *m)
{
	unsigned n = 0;

	for (unsigned e = 0; e < NR_FPGA_CONN_SLOTS; e++)
		n += ent_valid(m, e);
	return n;
}

static void ctr_add(struct fpga_model *m, unsigned slot, enum nr_engine_ctr c, uint64_t v)
{
	wr64(m, NR_FPGA_JCTR(slot, c), rd64(m, NR_FPGA_JCTR(slot, c)) + v);
	wr64(m, NR_FPGA_GCTR(c), rd64(m, NR_FPGA_GCTR(c)) + v);
}

void fpga_model_traffic(struct fpga_model *m, unsigned slot, uint64_t n)
{
	uint32_t ranks;

	pthread_mutex_lock(&m->lock);
	if (slot < m->caps.jobs && RD(NR_FPGA_JOB(slot, NR_FPGA_J_STATE)) == NR_FPGA_JS_ACTIVE) {
		ranks = RD(NR_FPGA_JOB(slot, NR_FPGA_J_N_CONNS));
		ctr_add(m, slot, NR_ECTR_AGGREGATED, n * ranks);
		ctr_add(m, slot, NR_ECTR_COMPLETED, n);
		ctr_add(m, slot, NR_ECTR_EMITTED, n * ranks);
		ctr_add(m, slot, NR_ECTR_RELEASED, n);
		ctr_add(m, slot, NR_ECTR_ACKS_SNOOPED, n * ranks);
		wr64(m, NR_FPGA_JOB(slot, NR_FPGA_J_COMPLETED_LO),
		     rd64(m, NR_FPGA_JOB(slot, NR_FPGA_J_COMPLETED_LO)) + n);
		WR(NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_EMIT),
		   (uint32_t)((RD(NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_EMIT)) + n) & 0xffffff));
		WR(NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_RELEASE), RD(NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_EMIT)));
	}
	pthread_mutex_unlock(&m->lock);
}

void fpga_model_fail(struct fpga_model *m, unsigned slot, uint32_t code)
{
	pthread_mutex_lock(&m->lock);
	if (slot < m->caps.jobs && RD(NR_FPGA_JOB(slot, NR_FPGA_J_STATE)) == NR_FPGA_JS_ACTIVE) {
		WR(NR_FPGA_JOB(slot, NR_FPGA_J_FAIL_CODE), code);
		WR(NR_FPGA_JOB(slot, NR_FPGA_J_STATE), NR_FPGA_JS_FAILED);
		if (code == NR_FPGA_FAIL_TIMEOUT)
			ctr_add(m, slot, NR_ECTR_JOB_TIMEOUTS, 1);
	}
	pthread_mutex_unlock(&m->lock);
}
