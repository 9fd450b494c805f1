/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "proto/roce_build.h"
#include "proto/roce_pkt.h"
#include "tests/control/ctl_testlib.h"
#ifdef NR_HAVE_RTL
#include "dataplane/rtl/nr_rtl_backend.h"
#endif

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- sw: an in-process engine registered as a backend ------------------ */

static void eng_emit(void *ctx, const struct agg_emit *e)
{
}

static void eng_free(void *ctx, void *handle)
{
}

uint32_t tb_sw_last_channels, tb_sw_last_sports, tb_sw_last_pkey, tb_sw_dtype_jobs[NR_ELEM_TYPES];

/* As the box: each channel of a job is an engine job, id | channel << 24. */
static int ch_add(struct nr_backend *b, uint32_t id, const struct nr_job_spec *spec, uint32_t *credits,
		  char *err, size_t errlen)
{
	struct nr_job_spec *one = malloc(nr_job_spec_size(spec->n_conns));
	uint32_t c;
	int rc = -ENOMEM;

	tb_sw_last_channels = nr_job_channels(spec);
	tb_sw_dtype_jobs[spec->dtype % NR_ELEM_TYPES]++;
	tb_sw_last_sports = 0;
	tb_sw_last_pkey = spec->pkey;
	for (c = 0; c < nr_job_conns(spec); c++)
		tb_sw_last_sports += (spec->conns[c].src_sport != 0) + (spec->conns[c].dst_sport != 0);

	for (c = 0; one && c < nr_job_channels(spec); c++) {
		nr_job_channel_spec(spec, c, one);
		rc = agg_engine_job_add(b->priv, id | c << 24, one, mono_ns(), credits, err, errlen);
		if (rc)
			break;
	}
	while (rc && c-- > 0)
		agg_engine_job_del(b->priv, id | c << 24);
	free(one);
	return rc;
}

static int ch_del(struct nr_backend *b, uint32_t id)
{
	int rc = agg_engine_job_del(b->priv, id);

	for (uint32_t c = 1; rc == 0 && c < NR_MAX_CHANNELS; c++)
		if (agg_engine_job_del(b->priv, id | c << 24) != 0)
			break;
	return rc;
}

static int ch_stats_job(struct nr_backend *b, uint32_t id, struct nr_job_stats *st)
{
	struct nr_job_stats one;
	int rc = agg_engine_job_stats(b->priv, id, st);

	st->n_channels = rc ? 0 : 1;
	st->ch[0] = (struct nr_chan_stats){ .state = st->state, .next_emit = st->next_emit,
					    .next_release = st->next_release, .completed = st->completed };
	for (uint32_t c = 1; rc == 0 && c < NR_MAX_CHANNELS; c++) {
		if (agg_engine_job_stats(b->priv, id | c << 24, &one) != 0)
			break;
		st->ch[st->n_channels++] = (struct nr_chan_stats){ .state = one.state,
			.next_emit = one.next_emit, .next_release = one.next_release, .completed = one.completed };
		st->completed += one.completed;
		if (one.state == NR_JOB_FAILED)
			st->state = NR_JOB_FAILED;
	}
	return rc;
}

static json_t *ch_stats(struct nr_backend *b)
{
	uint64_t ctr[NR_ECTR_MAX];
	json_t *c = json_object();

	agg_engine_counters(b->priv, ctr);
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		json_object_set_new(c, nr_engine_ctr_names[i], json_integer((json_int_t)ctr[i]));
	return json_pack("{s:{s:s,s:o}}", "engine", "kernel", agg_engine_kernel_name(b->priv),
			 "counters", c);
}

static json_t *ch_info(struct nr_backend *b)
{
	return json_pack("{s:s,s:i,s:i,s:[]}", "kernel", agg_engine_kernel_name(b->priv), "lcores", 1,
			 "workers", 2, "ports");
}

const char *tb_sw_unhealthy;

/* Healthy unless a test set tb_sw_unhealthy (the box's dp_health_json shape). */
static json_t *ch_health(struct nr_backend *b)
{
	return json_pack("{s:b,s:s,s:i,s:i,s:[],s:[]}", "healthy", tb_sw_unhealthy == NULL, "reason",
			 tb_sw_unhealthy ? tb_sw_unhealthy : "", "ports_up", 0, "workers_polling", 2,
			 "ports", "workers");
}

static const struct nr_backend_ops engine_backend_ops = {
	.name = "sw", .job_create = ch_add, .job_destroy = ch_del, .job_status = ch_stats_job,
	.stats = ch_stats, .info = ch_info, .health = ch_health,
};

/* ---- fpga: temp register file + model ---------------------------------- */

int tb_tmpdir(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/nrctl-XXXXXX");
	return mkdtemp(buf) ? 0 : -errno;
}

int tb_tls_make(struct tb_tls *t)
{
	char cmd[2048];

	if (tb_tmpdir(t->dir, sizeof(t->dir)))
		return -1;
	snprintf(t->ca, sizeof(t->ca), "%s/ca.pem", t->dir);
	snprintf(t->other_ca, sizeof(t->other_ca), "%s/other-ca.pem", t->dir);
	snprintf(t->cert, sizeof(t->cert), "%s/box.pem", t->dir);
	snprintf(t->key, sizeof(t->key), "%s/box.key", t->dir);
	snprintf(t->expired, sizeof(t->expired), "%s/expired.pem", t->dir);
	/* as deploy/README.md makes them, "-days -1" for one that expired yesterday */
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; exec >openssl.log 2>&1; umask 077; ec='-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes'; "
		 "openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=nr-test-ca; "
		 "openssl req -x509 $ec -keyout other-ca.key -out other-ca.pem -days 2 "
		 "-subj /CN=nr-other-ca; "
		 "openssl req $ec -keyout box.key -out box.csr -subj /CN=127.0.0.1; "
		 "printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext; "
		 "openssl x509 -req -in box.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		 "-days 2 -extfile san.ext -out box.pem; "
		 "openssl x509 -req -in box.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
		 "-days -1 -extfile san.ext -out expired.pem; "
		 "chmod 600 box.key; chmod 644 *.pem", t->dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "tb_tls_make: openssl could not make the test certificates in %s "
			"(its output: %s/openssl.log)\n", t->dir, t->dir);
		return -1;
	}
	return 0;
}

void tb_tls_remove(struct tb_tls *t)
{
	char cmd[128];

	if (!t->dir[0] || strncmp(t->dir, "/tmp/nrctl-", 11))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "tb_tls_remove: cannot remove %s\n", t->dir);
	t->dir[0] = '\0';
}

static struct nr_backend *fpga_backend(struct tb *t)
{
	struct nr_fpga_opts o = { 0 };
	struct nr_backend *b;
	char err[256];
	int fd;

	if (tb_tmpdir(t->dir, sizeof(t->dir)))
		return NULL;
	snprintf(t->path, sizeof(t->path), "%s/regs", t->dir);
	fd = open(t->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, NR_FPGA_REGS_SIZE) < 0) {
		perror("register file");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	t->map = mmap(NULL, NR_FPGA_REGS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		return NULL;
	}
	fpga_model_init(&t->model, t->map, NULL);
	t->have_model = true;
	o.io = fpga_model_io(&t->model);
	b = nr_backend_fpga_open(t->path, &o, err, sizeof(err));
	if (!b)
		fprintf(stderr, "fpga backend: %s\n", err);
	return b;
}

/* ---- rtl: the backend "rtl", the fpga driver on the aggregator's RTL ---- */

static struct nr_backend *rtl_backend(struct tb *t)
{
#ifdef NR_HAVE_RTL
	struct nr_backend *b;
	char err[256];

	t->rtl = nr_rtl_create(err, sizeof(err));
	if (!t->rtl) {
		fprintf(stderr, "rtl backend: %s\n", err);
		return NULL;
	}
	b = nr_rtl_backend_create(t->rtl, NULL, err, sizeof(err));
	if (!b)
		fprintf(stderr, "rtl backend: %s\n", err);
	return b;
#else
	fprintf(stderr, "rtl backend: this build has no RTL model (install verilator and "
		"reconfigure)\n");
	return NULL;
#endif
}

struct nr_backend *tb_backend(struct tb *t, const char *kind)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->kind, sizeof(t->kind), "%s", kind);
	if (!strcmp(kind, "sw")) {
		struct agg_engine_ops ops = { .emit = eng_emit, .free = eng_free };

		t->eng = agg_engine_create(&ops);
		if (!t->eng)
			return NULL;
		return nr_backend_new(&engine_backend_ops, t->eng);
	}
	if (!strcmp(kind, "fpga"))
		return fpga_backend(t);
	if (!strcmp(kind, "rtl"))
		return rtl_backend(t);
	fprintf(stderr, "unknown backend kind %s\n", kind);
	return NULL;
}

void tb_cleanup(struct tb *t)
{
	if (t->eng)
		agg_engine_destroy(t->eng);
	if (t->have_model)
		fpga_model_fini(&t->model);
#ifdef NR_HAVE_RTL
	if (t->rtl)
		nr_rtl_destroy(t->rtl);
#endif
	if (t->map)
		munmap(t->map, NR_FPGA_REGS_SIZE);
	if (t->path[0])
		unlink(t->path);
	if (t->dir[0])
		rmdir(t->dir);
	memset(t, 0, sizeof(*t));
}

/* Rank 0's first packet of job spec into t->frame, parsed into t->pkt; its length or -1. */
static int stall_packet(struct tb *t, const json_t *spec)
{
	const json_t *c0 = json_array_get(json_object_get(spec, "conns"), 0);
	struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_ONLY_IMM, .ackreq = true,
				   .rkey = 1, .imm = 0 };
	struct nr_flow fl = { .sport = 49152, .frag_off = NR_IPV4_DF };
	json_int_t msg = json_integer_value(json_object_get(spec, "msg_size"));
	uint8_t payload[4096] = { 0 };
	int len;

	const char *mac = json_string_value(json_object_get(c0, "src_mac"));
	unsigned m[6];

	/* from where the connection is bound (docs/trust.md): its MAC and port */
	if (mac && sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6)
		for (int k = 0; k < 6; k++)
			fl.src_mac[k] = (uint8_t)m[k];
	if (json_is_integer(json_object_get(c0, "src_sport")))
		fl.sport = (uint16_t)json_integer_value(json_object_get(c0, "src_sport"));
	inet_pton(AF_INET, json_string_value(json_object_get(c0, "src_ip")), &fl.saddr);
	inet_pton(AF_INET, json_string_value(json_object_get(c0, "dst_ip")), &fl.daddr);
	fl.dqpn = (uint32_t)json_integer_value(json_object_get(c0, "dst_qpn"));
	a.psn = (uint32_t)json_integer_value(json_object_get(c0, "ipsn"));
	a.dma_len = (uint32_t)msg;
	len = nr_build_frame(t->frame, sizeof(t->frame), &fl, &a, payload, (uint32_t)msg);
	if (len < 0 || nr_parse(t->frame, (uint32_t)len, &t->pkt) != NR_PKT_ROCE) {
		fprintf(stderr, "tb_fail_job: cannot build rank 0's packet (%d)\n", len);
		return -1;
	}
	return len;
}

#ifdef NR_HAVE_RTL
static void rtl_stall_job(struct tb *t, uint32_t id, const json_t *spec)
{
	json_int_t tmo = json_integer_value(json_object_get(spec, "timeout_ms"));
	int len = stall_packet(t, spec);

	if (len < 0)
		return;
	if (nr_rtl_send(t->rtl, 0, t->frame, (uint32_t)len))
		fprintf(stderr, "tb_fail_job: rtl: %s\n", nr_rtl_error(t->rtl));
	/* past the timeout, by the device's millisecond tick */
	nr_rtl_tick_ms(t->rtl, (unsigned)(tmo > 0 ? tmo : 5000) + 2);
	(void)id;
}
#endif

static void sw_stall_job(struct tb *t, uint32_t id, const json_t *spec)
{
	enum nr_engine_ctr ctr;

	if (stall_packet(t, spec) < 0)
		return;
	if (agg_engine_input(t->eng, &t->pkt, t->frame, t->frame, mono_ns(), &ctr) != NR_V_HELD)
		fprintf(stderr, "tb_fail_job: engine did not take job %u's packet (%s)\n", id,
			nr_engine_ctr_names[ctr]);
	/* Far past any timeout: the engine fails the job for lack of progress. */
	agg_engine_poll(t->eng, mono_ns() + 4000ull * 1000000000ull);
}

void tb_fail_job(struct tb *t, uint32_t id, const json_t *spec)
{
	if (t->eng) {
		sw_stall_job(t, id, spec);
#ifdef NR_HAVE_RTL
	} else if (t->rtl) {
		rtl_stall_job(t, id, spec);
#endif
	} else if (t->have_model) {
		int slot = fpga_model_slot_of(&t->model, id);

		if (slot >= 0)
			fpga_model_fail(&t->model, (unsigned)slot, NR_FPGA_FAIL_TIMEOUT);
	}
}

/* ---- requests ----------------------------------------------------------- */

json_t *tb_spec(unsigned n, unsigned net, uint32_t qpn_base)
{
	json_t *conns = json_array();

	for (unsigned i = 0; i < n; i++) {
		unsigned r = (i + 1) % n;
		char sip[32], dip[32], smac[24], dmac[24];

		snprintf(sip, sizeof(sip), "10.%u.%u.%u", net, (i + 1) >> 8, (i + 1) & 255);
		snprintf(dip, sizeof(dip), "10.%u.%u.%u", net, (r + 1) >> 8, (r + 1) & 255);
		snprintf(smac, sizeof(smac), "02:00:00:%02x:%02x:%02x", net & 255, (i + 1) >> 8, (i + 1) & 255);
		snprintf(dmac, sizeof(dmac), "02:00:00:%02x:%02x:%02x", net & 255, (r + 1) >> 8, (r + 1) & 255);
		json_array_append_new(conns, json_pack("{s:s,s:s,s:I,s:I,s:I,s:s,s:s}",
			"src_ip", sip, "dst_ip", dip, "src_qpn", (json_int_t)(qpn_base + 2 * i),
			"dst_qpn", (json_int_t)(qpn_base + 2 * r + 1), "ipsn", (json_int_t)(1000 * i),
			"src_mac", smac, "dst_mac", dmac));
	}
	return json_pack("{s:o}", "conns", conns);
}

json_t *tb_spec_channels(unsigned n, unsigned k, unsigned net, uint32_t qpn_base)
{
	json_t *chans = json_array();

	for (unsigned c = 0; c < k; c++) {
		json_t *one = tb_spec(n, net, qpn_base + 0x100 * c);
		json_t *conns = json_object_get(one, "conns");

		for (unsigned i = 0; i < n; i++) {
			json_t *cj = json_array_get(conns, i);

			json_object_set_new(cj, "src_sport", json_integer(0xC000 + 0x100 * c + 2 * i));
			json_object_set_new(cj, "dst_sport", json_integer(0xC000 + 0x100 * c + 2 * i + 1));
		}
		json_array_append_new(chans, json_pack("{s:O}", "conns", conns));
		json_decref(one);
	}
	return json_pack("{s:o}", "channels", chans);
}

json_t *tb_call(struct nr_ctl *c, json_t *req, bool admin)
{
	char *line = json_dumps(req, JSON_COMPACT);
	json_t *r;

	json_decref(req);
	r = tb_call_text(c, line, admin);
	free(line);
	return r;
}

json_t *tb_call_text(struct nr_ctl *c, const char *line, bool admin)
{
	char *out = nr_ctl_handle(c, line, strlen(line), admin ? NR_CTL_ADMIN : 0);
	json_t *r = out ? json_loads(out, 0, NULL) : NULL;

	free(out);
	return r;
}
