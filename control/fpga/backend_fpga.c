/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Backend "fpga": the driver of the aggregator FPGA (register map in
 * fpga_regs.h, prose in FPGA.md).  It maps the register file from a PCIe BAR
 * (sysfs .../resource0) or from a regular file (simulation), checks magic and
 * version, resets and enables the device, and programs jobs: a free job slot,
 * free connection entries, fields written, doorbell rung, status polled with
 * a bounded timeout.  Every access is a single 32-bit load or store through a
 * struct nr_fpga_io, so tests can watch the driver.
 *
 * Lock contract: none inside; nr_ctl serialises every backend call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/fpga/fpga_regs.h"
#include "control/api/nr_control.h"

struct fpga_job {
	bool used;
	uint32_t id;
	uint32_t n;
	uint32_t pool_bytes;
	uint16_t ent[NR_MAX_CONNS];
};

struct fpga {
	char path[256];
	int fd;
	void *map;
	size_t map_len;
	struct nr_fpga_io io;
	unsigned timeout_ms;
	uint8_t tag;
	uint32_t version;
	uint32_t cap_jobs, cap_conns, cap_pool, cap_ranks, cap_mtu, cap_flags;
	struct fpga_job jobs[NR_FPGA_JOB_SLOTS];
	bool ent_used[NR_FPGA_CONN_SLOTS];
};

static const char *const cmd_err_str[] = { NR_FPGA_FOREACH_CMD_ERR(NR_FPGA_CODE_STR) };
#define NR_FPGA_CMD_INFO_FMT(e, v, s, i) [v] = i,
static const char *const cmd_err_info[] = { NR_FPGA_FOREACH_CMD_ERR(NR_FPGA_CMD_INFO_FMT) };
static const char *const fail_str[] = { NR_FPGA_FOREACH_FAIL(NR_FPGA_CODE_STR) };
static const char *const dctr_names[NR_FPGA_D_MAX] = { NR_FOREACH_FPGA_DCTR(NR_CTR_NAME) };

#define N_CMD_ERR (sizeof(cmd_err_str) / sizeof(cmd_err_str[0]))
#define N_FAIL (sizeof(fail_str) / sizeof(fail_str[0]))

/* ---- register access ---------------------------------------------------- */

static uint32_t mmio_read32(void *ctx, uint32_t off)
{
	return *(volatile uint32_t *)((uint8_t *)ctx + off);
}

static void mmio_write32(void *ctx, uint32_t off, uint32_t val)
{
	*(volatile uint32_t *)((uint8_t *)ctx + off) = val;
}

static inline uint32_t rd(struct fpga *f, uint32_t off)
{
	return f->io.read32(f->io.ctx, off);
}

static inline void wr(struct fpga *f, uint32_t off, uint32_t v)
{
	f->io.write32(f->io.ctx, off, v);
}

static uint64_t rd64(struct fpga *f, uint32_t lo_off)
{
	uint32_t hi, lo, hi2;
	unsigned tries = 0;

	do {
		hi = rd(f, lo_off + 4);
		lo = rd(f, lo_off);
		hi2 = rd(f, lo_off + 4);
	} while (hi != hi2 && ++tries < 8);
	return (uint64_t)hi2 << 32 | lo;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void pause_us(unsigned us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)us * 1000 };

	nanosleep(&ts, NULL);
}

/* Wait until (reg & mask) == want, bounded by the command timeout. */
static int wait_reg(struct fpga *f, uint32_t off, uint32_t mask, uint32_t want)
{
	uint64_t deadline = now_ms() + f->timeout_ms;
	unsigned spins = 0;

	while ((rd(f, off) & mask) != want) {
		if (now_ms() > deadline)
			return (rd(f, off) & mask) == want ? 0 : -ETIMEDOUT;
		if (++spins > 64)
			pause_us(20);
	}
	return 0;
}

/*
 * Ring the doorbell and wait for this command's status.  0, -ETIMEDOUT or
 * -EIO with err and *code (enum nr_fpga_cmd_err) and *info set.
 */
static int fpga_cmd(struct fpga *f, uint32_t op, uint32_t idx, uint32_t *code, uint32_t *info,
		    char *err, size_t errlen)
{
	uint64_t deadline;
	unsigned spins = 0;
	char what[48];
	uint32_t st;

	f->tag = (uint8_t)(f->tag % 255 + 1);
	*code = 0;
	*info = 0;
	wr(f, NR_FPGA_CMD, op | (uint32_t)f->tag << NR_FPGA_CMD_TAG_SHIFT | idx << NR_FPGA_CMD_IDX_SHIFT);
	deadline = now_ms() + f->timeout_ms;
	for (;;) {
		st = rd(f, NR_FPGA_CMD_STATUS);
		if (((st >> NR_FPGA_CS_TAG_SHIFT) & 0xff) == f->tag &&
		    ((st & NR_FPGA_CS_STATE_MASK) == NR_FPGA_CS_DONE ||
		     (st & NR_FPGA_CS_STATE_MASK) == NR_FPGA_CS_ERROR))
			break;
		if (now_ms() > deadline) {
			snprintf(err, errlen, "fpga: device did not complete command 0x%02x within %u ms "
				 "(status 0x%08x); check the device or reset it", op, f->timeout_ms, st);
			return -ETIMEDOUT;
		}
		if (++spins > 64)
			pause_us(20);
	}
	if ((st & NR_FPGA_CS_STATE_MASK) == NR_FPGA_CS_DONE)
		return 0;
	*code = (st >> NR_FPGA_CS_ERR_SHIFT) & 0xff;
	*info = rd(f, NR_FPGA_CMD_INFO);
	what[0] = '\0';
	if (*code < N_CMD_ERR && cmd_err_info[*code])   /* one %u or %x of CMD_INFO */
		snprintf(what, sizeof(what), cmd_err_info[*code], *info);
	snprintf(err, errlen, "fpga: device refused command 0x%02x on job slot %u: %s%s",
		 op, idx, *code < N_CMD_ERR && cmd_err_str[*code] ? cmd_err_str[*code] : "unknown error",
		 what);
	return -EIO;
}

/* ---- jobs --------------------------------------------------------------- */

static uint32_t mac_hi(const uint8_t *m)
{
	return (uint32_t)m[0] << 8 | m[1];
}

static uint32_t mac_lo(const uint8_t *m)
{
	return (uint32_t)m[2] << 24 | (uint32_t)m[3] << 16 | (uint32_t)m[4] << 8 | m[5];
}

static struct fpga_job *slot_of(struct fpga *f, uint32_t id, unsigned *slot)
{
	unsigned i;

	for (i = 0; i < f->cap_jobs; i++) {
		if (f->jobs[i].used && f->jobs[i].id == id) {
			*slot = i;
			return &f->jobs[i];
		}
	}
	return NULL;
}

static void clear_entries(struct fpga *f, struct fpga_job *j)
{
	uint32_t i;

	for (i = 0; i < j->n; i++) {
		wr(f, NR_FPGA_CONN(j->ent[i], NR_FPGA_C_CTRL), 0);
		f->ent_used[j->ent[i]] = false;
	}
	j->n = 0;
}

/* The CAP_FLAGS bit a 16-bit element type needs. */
static uint32_t dtype_cap(uint8_t t)
{
	return t == NR_ELEM_BF16 ? NR_FPGA_CAPF_BF16 : NR_FPGA_CAPF_FP16;
}

/*
 * The device's pool for a job (FPGA.md): every rank's packet of every slot,
 * ranks x pool packets x MTU (nr_job_pool_bytes); a one-rank streaming job of
 * a 16-bit type takes two MTU buffers a packet, its FP32 accumulator being
 * twice the payload (the ranks' buffers hold it when there are two or more).
 */
static uint64_t fpga_pool_bytes(const struct nr_job_spec *s)
{
	uint64_t pool = nr_job_pool_bytes(s);

	if (s->dtype != NR_ELEM_FP32 && s->mode == NR_SUM_STREAMING && s->n_conns == 1)
		pool *= 2;
	return pool;
}

static int check_caps(struct fpga *f, const struct nr_job_spec *s, uint64_t pool,
		      char *err, size_t errlen)
{
	uint32_t used = rd(f, NR_FPGA_POOL_USED);

	if (nr_job_channels(s) > 1) {
		snprintf(err, errlen, "fpga: %u channels; the device runs one channel a job "
			 "(register with one channel: the hosts' NR_CHANNELS=1)", nr_job_channels(s));
		return -EINVAL;
	}
	if (s->n_conns > f->cap_ranks) {
		snprintf(err, errlen, "fpga: %u ranks, the device supports at most %u per job",
			 s->n_conns, f->cap_ranks);
		return -EINVAL;
	}
	if (s->mtu > f->cap_mtu) {
		snprintf(err, errlen, "fpga: mtu %u, the device supports at most %u", s->mtu, f->cap_mtu);
		return -EINVAL;
	}
	if (s->reduce != NR_REDUCE_SUM) {
		snprintf(err, errlen, "fpga: reduce %s: the aggregator's register map has sum only "
			 "(FPGA.md); run the job on the box (backend sw)", nr_reduce_name(s->reduce));
		return -EINVAL;
	}
	if (s->dtype != NR_ELEM_FP32 && !(f->cap_flags & dtype_cap(s->dtype))) {
		snprintf(err, errlen, "fpga: dtype %s: this device does not sum %s elements "
			 "(CAP_FLAGS 0x%x lacks bit %u, FPGA.md); run the job on the box (backend sw) "
			 "or send fp32", nr_elem_name(s->dtype), nr_elem_name(s->dtype), f->cap_flags,
			 (unsigned)__builtin_ctz(dtype_cap(s->dtype)));
		return -EINVAL;
	}
	if (s->short_ppm) {
		snprintf(err, errlen, "fpga: short_ppm %u: the aggregator (FPGA.md, the RTL) has no "
			 "short slots, every slot waits for all its contributions; run the job on "
			 "the box (backend sw) or without NR_SHORT_PPM", s->short_ppm);
		return -EINVAL;
	}
	if (s->prio_classes > 1) {
		snprintf(err, errlen,
			 "fpga: prio_classes %u: the aggregator (FPGA.md, the RTL) emits "
			 "each job's slots as they complete, with no order between classes; run the "
			 "job on the box (backend sw) or without NR_PRIO_CLASSES",
			 s->prio_classes);
		return -EINVAL;
	}
	if (s->selective) {
		snprintf(err, errlen,
			 "fpga: selective: the aggregator (FPGA.md, the RTL) has no status monitor "
			 "to send or answer selective NAKs, its requesters must be go-back-N; run "
			 "the job on the box (backend sw) or with selective false");
		return -EINVAL;
	}
	if (!(f->cap_flags & (s->mode == NR_SUM_STREAMING ? NR_FPGA_CAPF_STREAMING : NR_FPGA_CAPF_ORDERED))) {
		snprintf(err, errlen, "fpga: sum mode %s is not supported by this device",
			 s->mode == NR_SUM_STREAMING ? "streaming" : "ordered");
		return -EINVAL;
	}
	if (pool > f->cap_pool || pool > (uint64_t)f->cap_pool - used) {
		snprintf(err, errlen, "fpga: job needs %llu bytes of pool (ranks x pool packets x mtu), "
			 "%u of %u free; lower pool_msgs or msg_size",
			 (unsigned long long)pool, used <= f->cap_pool ? f->cap_pool - used : 0,
			 f->cap_pool);
		return -ENOSPC;
	}
	return 0;
}

static void write_conn(struct fpga *f, unsigned ent, unsigned slot, uint32_t rank,
		       const struct nr_conn_spec *cs)
{
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_CTRL), 0);
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_RANK), rank);
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_SRC_IP), ntohl(cs->src_ip));
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_DST_IP), ntohl(cs->dst_ip));
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_SRC_QPN), cs->src_qpn);
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_DST_QPN), cs->dst_qpn);
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_IPSN), cs->ipsn);
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_SRC_MAC_HI), mac_hi(cs->src_mac));
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_SRC_MAC_LO), mac_lo(cs->src_mac));
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_DST_MAC_HI), mac_hi(cs->dst_mac));
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_DST_MAC_LO), mac_lo(cs->dst_mac));
	/* VALID last: the entry is complete before the device may look at it. */
	wr(f, NR_FPGA_CONN(ent, NR_FPGA_C_CTRL), NR_FPGA_C_VALID | slot);
}

static int fpga_job_create(struct nr_backend *b, uint32_t id, const struct nr_job_spec *s,
			   uint32_t *credits, char *err, size_t errlen)
{
	struct fpga *f = b->priv;
	/* every rank's contribution to every slot is kept until the slot is summed
	 * (ordered mode; streaming reserves the same): FPGA.md */
	uint64_t pool = fpga_pool_bytes(s);
	struct fpga_job *j = NULL;
	uint32_t code, info, i, e, free_ents = 0;
	unsigned slot = 0;
	int rc;

	if (slot_of(f, id, &slot)) {
		snprintf(err, errlen, "fpga: job %u already loaded in slot %u", id, slot);
		return -EEXIST;
	}
	rc = check_caps(f, s, pool, err, errlen);
	if (rc)
		return rc;
	for (slot = 0; slot < f->cap_jobs; slot++) {
		if (!f->jobs[slot].used &&
		    rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_STATE)) == NR_FPGA_JS_FREE) {
			j = &f->jobs[slot];
			break;
		}
	}
	if (!j) {
		snprintf(err, errlen, "fpga: all %u job slots of the device are in use; destroy a job first",
			 f->cap_jobs);
		return -ENOSPC;
	}
	for (e = 0; e < f->cap_conns; e++)
		free_ents += !f->ent_used[e];
	if (free_ents < s->n_conns) {
		snprintf(err, errlen, "fpga: job needs %u connection entries, %u of %u free; "
			 "destroy a job first",
			 s->n_conns, free_ents, f->cap_conns);
		return -ENOSPC;
	}

	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_N_CONNS), s->n_conns);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_MTU), s->mtu);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_MSG_SIZE), s->msg_size);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_POOL_MSGS), s->pool_msgs);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_TIMEOUT_MS), s->timeout_ms);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_MODE), s->mode);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_RESULT_KEY), s->result_key);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_TAG), id);
	wr(f, NR_FPGA_JOB(slot, NR_FPGA_J_DTYPE), s->dtype);
	j->n = 0;
	for (i = 0, e = 0; i < s->n_conns; i++, e++) {
		while (f->ent_used[e])
			e++;
		write_conn(f, e, slot, i, &s->conns[i]);
		f->ent_used[e] = true;
		j->ent[j->n++] = (uint16_t)e;
	}
	rc = fpga_cmd(f, NR_FPGA_OP_JOB_LOAD, slot, &code, &info, err, errlen);
	if (rc) {
		clear_entries(f, j);
		if (code == NR_FPGA_ERR_CONN_CLASH)
			return -EEXIST;
		return code == NR_FPGA_ERR_NO_POOL ? -ENOSPC : rc;
	}
	j->used = true;
	j->id = id;
	j->pool_bytes = (uint32_t)pool;
	*credits = s->pool_msgs / 2;
	return 0;
}

static int fpga_job_destroy(struct nr_backend *b, uint32_t id)
{
	struct fpga *f = b->priv;
	struct fpga_job *j;
	uint32_t code, info;
	unsigned slot;
	char err[256];
	int rc;

	j = slot_of(f, id, &slot);
	if (!j)
		return -ENOENT;
	rc = fpga_cmd(f, NR_FPGA_OP_JOB_UNLOAD, slot, &code, &info, err, sizeof(err));
	if (rc && code != NR_FPGA_ERR_SLOT_FREE)
		return rc;
	/* The device cleared the entries; keep the shadow in step. */
	for (uint32_t i = 0; i < j->n; i++)
		f->ent_used[j->ent[i]] = false;
	memset(j, 0, sizeof(*j));
	return 0;
}

static int fpga_job_status(struct nr_backend *b, uint32_t id, struct nr_job_stats *st)
{
	struct fpga *f = b->priv;
	uint32_t state, fail, i;
	unsigned slot;

	if (!slot_of(f, id, &slot))
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	state = rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_STATE));
	fail = rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_FAIL_CODE));
	if (state == NR_FPGA_JS_FREE)
		return -ENOENT;           /* the device lost it (reset behind our back) */
	st->state = state == NR_FPGA_JS_FAILED ? NR_JOB_FAILED : NR_JOB_ACTIVE;
	if (state == NR_FPGA_JS_FAILED)
		snprintf(st->reason, sizeof(st->reason), "fpga: %s (failure code %u)",
			 fail < N_FAIL && fail_str[fail] ? fail_str[fail] : "unknown failure", fail);
	st->next_emit = rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_EMIT));
	st->next_release = rd(f, NR_FPGA_JOB(slot, NR_FPGA_J_NEXT_RELEASE));
	st->completed = rd64(f, NR_FPGA_JOB(slot, NR_FPGA_J_COMPLETED_LO));
	for (i = 0; i < NR_ECTR_MAX; i++)
		st->ctr[i] = rd64(f, NR_FPGA_JCTR(slot, i));
	return 0;
}

static json_t *fpga_stats(struct nr_backend *b)
{
	struct fpga *f = b->priv;
	json_t *ctrs = json_object(), *dctrs = json_object(), *o;
	unsigned i;

	for (i = 0; i < NR_ECTR_MAX; i++)
		json_object_set_new(ctrs, nr_engine_ctr_names[i],
				    json_integer((json_int_t)rd64(f, NR_FPGA_GCTR(i))));
	for (i = 0; i < NR_FPGA_D_MAX; i++)
		json_object_set_new(dctrs, dctr_names[i],
				    json_integer((json_int_t)rd64(f, NR_FPGA_DCTR(i))));
	o = json_pack("{s:I,s:I,s:I}", "jobs_loaded", (json_int_t)rd(f, NR_FPGA_JOBS_LOADED),
		      "pool_used_bytes", (json_int_t)rd(f, NR_FPGA_POOL_USED),
		      "pool_bytes", (json_int_t)f->cap_pool);
	json_object_set_new(o, "counters", ctrs);
	json_object_set_new(o, "dataplane", dctrs);
	return json_pack("{s:o}", "device", o);
}

static json_t *fpga_info(struct nr_backend *b)
{
	struct fpga *f = b->priv;
	uint32_t st = rd(f, NR_FPGA_STATUS);
	char ver[32];

	snprintf(ver, sizeof(ver), "%u.%u", f->version >> 16, f->version & 0xffff);
	return json_pack("{s:s,s:s,s:{s:I,s:I,s:I,s:I,s:I,s:b,s:b,s:b,s:b},s:{s:b,s:b,s:b}}",
			 "device", f->path, "version", ver,
			 "capacity", "jobs", (json_int_t)f->cap_jobs, "conns", (json_int_t)f->cap_conns,
			 "pool_bytes", (json_int_t)f->cap_pool, "ranks", (json_int_t)f->cap_ranks,
			 "mtu", (json_int_t)f->cap_mtu,
			 "ordered", (int)!!(f->cap_flags & NR_FPGA_CAPF_ORDERED),
			 "streaming", (int)!!(f->cap_flags & NR_FPGA_CAPF_STREAMING),
			 "bf16", (int)!!(f->cap_flags & NR_FPGA_CAPF_BF16),
			 "fp16", (int)!!(f->cap_flags & NR_FPGA_CAPF_FP16),
			 "status", "ready", (int)!!(st & NR_FPGA_ST_READY),
			 "enabled", (int)!!(st & NR_FPGA_ST_ENABLED),
			 "fatal", (int)!!(st & NR_FPGA_ST_FATAL));
}

static void fpga_close(struct fpga *f)
{
	if (f->map && f->map != MAP_FAILED)
		munmap(f->map, f->map_len);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

static void fpga_destroy(struct nr_backend *b)
{
	struct fpga *f = b->priv;
	unsigned i;

	for (i = 0; i < NR_FPGA_JOB_SLOTS; i++)
		if (f->jobs[i].used)
			fpga_job_destroy(b, f->jobs[i].id);
	fpga_close(f);
}

static const struct nr_backend_ops fpga_ops = {
	.name = "fpga",
	.job_create = fpga_job_create,
	.job_destroy = fpga_job_destroy,
	.job_status = fpga_job_status,
	.stats = fpga_stats,
	.info = fpga_info,
	.destroy = fpga_destroy,
};

static int fpga_map(struct fpga *f, const char *path, char *err, size_t errlen)
{
	struct stat sb;

	f->fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (f->fd < 0) {
		snprintf(err, errlen, "fpga: cannot open %s: %s (a PCIe BAR as "
			 "/sys/bus/pci/devices/DBDF/resource0, or a register file for simulation)",
			 path, strerror(errno));
		return -errno;
	}
	if (fstat(f->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "fpga: %s is not a register file (sysfs resource0 or a regular file)",
			 path);
		return -EINVAL;
	}
	if ((uint64_t)sb.st_size < NR_FPGA_REGS_SIZE) {
		snprintf(err, errlen, "fpga: %s is %lld bytes, the register map needs %u",
			 path, (long long)sb.st_size, NR_FPGA_REGS_SIZE);
		return -EINVAL;
	}
	f->map_len = NR_FPGA_REGS_SIZE;
	f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		snprintf(err, errlen, "fpga: cannot map %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

static int fpga_probe(struct fpga *f, bool reset, char *err, size_t errlen)
{
	uint32_t magic = rd(f, NR_FPGA_MAGIC_REG);

	if (magic != NR_FPGA_MAGIC) {
		snprintf(err, errlen, "fpga: %s: magic 0x%08x, expected 0x%08x ('NRFA'): not a "
			 "netreduce aggregator", f->path, magic, NR_FPGA_MAGIC);
		return -ENODEV;
	}
	f->version = rd(f, NR_FPGA_VERSION_REG);
	if (f->version >> 16 != NR_FPGA_VERSION_MAJOR) {
		snprintf(err, errlen, "fpga: %s: register map version %u.%u, this driver speaks %u.x",
			 f->path, f->version >> 16, f->version & 0xffff, NR_FPGA_VERSION_MAJOR);
		return -ENODEV;
	}
	f->cap_jobs = rd(f, NR_FPGA_CAP_MAX_JOBS);
	f->cap_conns = rd(f, NR_FPGA_CAP_MAX_CONNS);
	f->cap_pool = rd(f, NR_FPGA_CAP_POOL_BYTES);
	f->cap_ranks = rd(f, NR_FPGA_CAP_MAX_RANKS);
	f->cap_mtu = rd(f, NR_FPGA_CAP_MAX_MTU);
	f->cap_flags = rd(f, NR_FPGA_CAP_FLAGS);
	if (!f->cap_jobs || f->cap_jobs > NR_FPGA_JOB_SLOTS || !f->cap_conns ||
	    f->cap_conns > NR_FPGA_CONN_SLOTS) {
		snprintf(err, errlen, "fpga: %s: capabilities out of range (%u jobs, %u conns; "
			 "at most %u and %u)", f->path, f->cap_jobs, f->cap_conns,
			 NR_FPGA_JOB_SLOTS, NR_FPGA_CONN_SLOTS);
		return -ENODEV;
	}
	if (f->cap_ranks > NR_MAX_CONNS)
		f->cap_ranks = NR_MAX_CONNS;
	f->tag = (uint8_t)(rd(f, NR_FPGA_CMD) >> NR_FPGA_CMD_TAG_SHIFT);
	if (!reset) {
		/* Entries of jobs loaded by an earlier driver stay taken. */
		for (uint32_t e = 0; e < f->cap_conns; e++)
			f->ent_used[e] = !!(rd(f, NR_FPGA_CONN(e, NR_FPGA_C_CTRL)) & NR_FPGA_C_VALID);
	} else {
		wr(f, NR_FPGA_CTRL, NR_FPGA_CTRL_RESET);
		if (wait_reg(f, NR_FPGA_CTRL, NR_FPGA_CTRL_RESET, 0) ||
		    wait_reg(f, NR_FPGA_STATUS, NR_FPGA_ST_READY, NR_FPGA_ST_READY)) {
			snprintf(err, errlen, "fpga: %s: device did not come out of reset within %u ms",
				 f->path, f->timeout_ms);
			return -ETIMEDOUT;
		}
	}
	wr(f, NR_FPGA_CTRL, NR_FPGA_CTRL_ENABLE);
	if (wait_reg(f, NR_FPGA_STATUS, NR_FPGA_ST_ENABLED, NR_FPGA_ST_ENABLED)) {
		snprintf(err, errlen, "fpga: %s: device did not report enabled within %u ms",
			 f->path, f->timeout_ms);
		return -ETIMEDOUT;
	}
	return 0;
}

struct nr_backend *nr_backend_fpga_open(const char *path, const struct nr_fpga_opts *o,
					char *err, size_t errlen)
{
	struct nr_backend *b;
	struct fpga *f;

	if (!path) {
		snprintf(err, errlen, "fpga: no register file path given");
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "fpga: out of memory");
		return NULL;
	}
	f->fd = -1;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->timeout_ms = o && o->cmd_timeout_ms ? o->cmd_timeout_ms : 100;
	if (fpga_map(f, path, err, errlen))
		goto fail;
	if (o && o->io)
		f->io = *o->io;
	else
		f->io = (struct nr_fpga_io){ .read32 = mmio_read32, .write32 = mmio_write32, .ctx = f->map };
	if (fpga_probe(f, !(o && o->no_reset), err, errlen))
		goto fail;
	b = nr_backend_new(&fpga_ops, f);
	if (b)
		return b;
	snprintf(err, errlen, "fpga: out of memory");
fail:
	fpga_close(f);
	return NULL;
}

struct nr_backend *nr_backend_fpga_create(const char *path, char *err, size_t errlen)
{
	return nr_backend_fpga_open(path, NULL, err, errlen);
}
