/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box path against the real control server (control/, sw backend on an
 * in-process engine, TCP listener on loopback) but without a dataplane on the
 * path: ranks register the job (credits from the reply), nr_allreduce's
 * messages then reach the receivers unaggregated, which every rank must detect
 * ("arrived unaggregated") instead of returning a wrong sum; rank 0 destroys
 * the job at nr_comm_destroy.  A wrong token is refused with the server's message.
 * Over TLS (NR_TLS_CA) the same job goes through; a wrong CA and a client
 * without TLS are refused, each with a message that says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>

#include <jansson.h>

#include <cmocka.h>

#include "control/api/nr_control.h"
#include "host/comm/comm_internal.h"
#include "host/transport/tp_soft.h"
#include "tests/control/ctl_testlib.h"
#include "ranks.h"

struct box_case {
	struct ranks_env env;
	char sw[64];
	const char *token;
	int rc_init[RANKS_MAX], rc_op[RANKS_MAX];
	uint32_t credits[RANKS_MAX];
	uint32_t channels;               /* cfg.channels of every rank */
	uint32_t short_ppm;              /* cfg.short_ppm of every rank */
	uint8_t spray_ports;             /* cfg.spray_ports of every rank */
	unsigned flags;                  /* of the one nr_allreduce_flags */
	enum nr_dtype dtype[RANKS_MAX];  /* of the one nr_allreduce_flags, by rank */
	unsigned got_channels[RANKS_MAX];
	char msg[RANKS_MAX][512];
	/* what went on the wire: data packets, and those with a class of their own */
	uint64_t tx_data[RANKS_MAX], tx_tclass[RANKS_MAX];
	/* nr_comm_box_counters after init */
	int rc_counters[RANKS_MAX];
	int rc_counters_ex; /* rank 0's nr_comm_box_counters_ex: the same counters */
	struct nr_box_counters counters_ex;
	struct nr_box_counters counters;
	uint64_t left_out[RANKS_MAX + 1];
	/* nr_comm_box_status after init: into a buffer of 4096 bytes, and of 16 */
	int rc_status[RANKS_MAX], rc_status_small;
	char status[4096], status_small_err[512];
};

/*
 * The control server runs in a process of its own: the ranks are forked from
 * the test process, which must have no other thread at fork time (a child
 * could inherit a lock, e.g. the sanitizer allocator's, held by that thread).
 */
struct server {
	const char *tenants;   /* a tenants file's text to load (NULL: the token "tok" alone) */
	pid_t pid;
	int stop[2];           /* test -> server: close to stop */
	struct server_shm {
		int port;      /* > 0 once listening, -1 on failure */
		uint64_t created, destroyed;
		uint32_t channels, sports, pkey;   /* of the last job created */
		uint32_t dtype_jobs[NR_ELEM_TYPES];   /* jobs created of each type */
	} *shm;
};

/* The next server's TLS certificate and key (NULL: plain TCP). */
static const char *srv_cert, *srv_key;

static void server_main(struct server *s)
{
	struct tb tb = { 0 };
	struct nr_backend *b = tb_backend(&tb, "sw");
	struct nr_ctl_server_cfg cfg = { .tcp_addr = "127.0.0.1:0", .token = "box-ctl-token-0123456789",
					 .tls_cert = srv_cert, .tls_key = srv_key };
	struct nr_ctl_server *srv = NULL;
	struct nr_ctl *ctl = b ? nr_ctl_create(b) : NULL;
	char err[256], c;

	if (ctl && s->tenants) {
		char dir[] = "/tmp/nr-boxctl-XXXXXX", path[64];
		FILE *f;

		if (!mkdtemp(dir))
			_exit(1);
		snprintf(path, sizeof(path), "%s/tenants.json", dir);
		f = fopen(path, "w");
		if (!f || fputs(s->tenants, f) < 0 || fclose(f) || chmod(path, 0600) ||
		    nr_ctl_tenants_load(ctl, path, err, sizeof(err)) < 0) {
			printf("tenants: %s\n", err);
			unlink(path);
			rmdir(dir);
			__atomic_store_n(&s->shm->port, -1, __ATOMIC_RELEASE);
			_exit(1);
		}
		unlink(path);
		rmdir(dir);
	}
	if (ctl)
		srv = nr_ctl_server_start(ctl, &cfg, err, sizeof(err));
	if (!srv) {
		printf("control server: %s\n", ctl ? err : "cannot create the API");
		__atomic_store_n(&s->shm->port, -1, __ATOMIC_RELEASE);
		_exit(1);
	}
	__atomic_store_n(&s->shm->port, nr_ctl_server_tcp_port(srv), __ATOMIC_RELEASE);
	close(s->stop[1]);
	while (read(s->stop[0], &c, 1) > 0)
		;
	s->shm->created = nr_ctl_counter(ctl, NR_CCTR_JOBS_CREATED);
	s->shm->destroyed = nr_ctl_counter(ctl, NR_CCTR_JOBS_DESTROYED);
	s->shm->channels = tb_sw_last_channels;
	s->shm->sports = tb_sw_last_sports;
	s->shm->pkey = tb_sw_last_pkey;
	memcpy(s->shm->dtype_jobs, tb_sw_dtype_jobs, sizeof(tb_sw_dtype_jobs));
	nr_ctl_server_stop(srv);
	nr_ctl_destroy(ctl);
	tb_cleanup(&tb);
	_exit(0);
}

static int start_server(struct server *s)
{
	s->shm = mmap(NULL, sizeof(*s->shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (s->shm == MAP_FAILED || pipe(s->stop))
		return -1;
	memset(s->shm, 0, sizeof(*s->shm));
	fflush(stdout);
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0)
		server_main(s);
	close(s->stop[0]);
	for (int i = 0; i < 500 && !__atomic_load_n(&s->shm->port, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	return s->shm->port > 0 ? 0 : -1;
}

/* Stops the server; its counters are then in s->shm. */
static void stop_server(struct server *s)
{
	int status;

	close(s->stop[1]);
	assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int box_child(int rank, int world, void *arg)
{
	struct box_case *t = arg;
	size_t count = 100000;
	float *x = malloc(count * 4), *y = malloc(count * 4);
	struct nr_config cfg;
	struct nr_comm *c;

	ranks_config(&t->env, rank, world, &cfg);
	cfg.switch_addr = t->sw;
	cfg.token = t->token;
	cfg.timeout_ms = 3000;
	cfg.channels = t->channels;
	cfg.short_ppm = t->short_ppm;
	cfg.spray_ports = t->spray_ports;
	if (t->spray_ports > 1)
		cfg.soft_window = 12;    /* a QP keeps 12 in flight */
	ranks_fill(9, rank, x, count);
	t->rc_init[rank] = nr_comm_init(&cfg, &c);
	if (t->rc_init[rank]) {
		snprintf(t->msg[rank], sizeof(t->msg[rank]), "%s", nr_comm_last_error(NULL));
		return 0;
	}
	t->credits[rank] = nr_comm_credits(c);
	t->got_channels[rank] = nr_comm_channels(c);
	t->rc_counters[rank] = nr_comm_box_counters(c, &t->counters, t->left_out, RANKS_MAX + 1);
	if (rank == 0) {
		uint64_t lo[RANKS_MAX + 1];

		t->rc_counters_ex = nr_comm_box_counters_ex(c, &t->counters_ex,
							    sizeof(t->counters_ex), lo,
							    RANKS_MAX + 1);
	}
	if (rank == 0) {
		char small[16];

		t->rc_status[rank] = nr_comm_box_status(c, t->status, sizeof(t->status));
		t->rc_status_small = nr_comm_box_status(c, small, sizeof(small));
		snprintf(t->status_small_err, sizeof(t->status_small_err), "%s",
			 nr_comm_last_error(NULL));
	} else {
		char buf[64];

		t->rc_status[rank] = nr_comm_box_status(c, buf, sizeof(buf));
	}
	/* a 16-bit type's first call opens its job: the buffers hold 2 * count of them */
	t->rc_op[rank] = nr_allreduce_flags(c, x, y, count, t->dtype[rank], NR_SUM, t->flags);
	snprintf(t->msg[rank], sizeof(t->msg[rank]), "%s", nr_comm_last_error(c));
	struct nr_tp_soft_stats st;

	if (!nr_tp_soft_stats(c->tp, &st)) {
		t->tx_data[rank] = st.tx_data;
		t->tx_tclass[rank] = st.tx_tclass;
	}
	nr_comm_destroy(c);
	free(x);
	free(y);
	return 0;
}

static struct box_case *run_case(struct server *s, const char *token, int world, unsigned salt,
				 uint32_t channels, uint32_t short_ppm, unsigned flags, uint8_t spray);

/* NR_BOX of the ranks for the next run_case: these two servers' (NULL: the one given). */
static struct server *boxes_pair[2];

static struct box_case *run_case(struct server *s, const char *token, int world, unsigned salt,
				 uint32_t channels, uint32_t short_ppm, unsigned flags, uint8_t spray)
{
	struct box_case *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];

	assert_true(t != MAP_FAILED);
	memset(t, 0, sizeof(*t));
	ranks_env_init(&t->env, salt);
	if (boxes_pair[0])
		snprintf(t->sw, sizeof(t->sw), "127.0.0.1:%d,127.0.0.1:%d",
			 boxes_pair[0]->shm->port, boxes_pair[1]->shm->port);
	else
		snprintf(t->sw, sizeof(t->sw), "127.0.0.1:%d", s->shm->port);
	t->token = token;
	t->channels = channels;
	t->short_ppm = short_ppm;
	t->flags = flags;
	t->spray_ports = spray;
	ranks_fork(world, box_child, t, pids);
	ranks_wait(world, pids, status, 30000, NULL);
	for (int r = 0; r < world; r++) {
		printf("rank %d: init %s, op %s: %s\n", r, nr_strerror(t->rc_init[r]),
		       nr_strerror(t->rc_op[r]), t->msg[r]);
		assert_int_equal(status[r], 0);
	}
	return t;
}

static struct box_case *run(struct server *s, const char *token, int world, unsigned salt,
			    uint32_t channels)
{
	return run_case(s, token, world, salt, channels, 0, 0, 0);
}

/* run() with NR_BOX listing both servers, a's first. */
static struct box_case *run_pair(struct server *a, struct server *b, const char *token, int world,
				 unsigned salt, uint32_t channels)
{
	struct box_case *t;

	boxes_pair[0] = a;
	boxes_pair[1] = b;
	t = run(a, token, world, salt, channels);
	boxes_pair[0] = boxes_pair[1] = NULL;
	return t;
}

/*
 * Ranks of a box job on a box without a dataplane: no rank may return success
 * (that would be a wrong sum).  A rank sees the raw tag itself (NR_ERR_BOX),
 * unless a peer that saw it first has already stopped: then its own send or
 * receive fails (NR_ERR_PEER or NR_ERR_TIMEOUT).  At least one rank must have
 * seen the raw tag.
 */
static void expect_unaggregated(const struct box_case *t, int world)
{
	int unaggregated = 0;

	for (int r = 0; r < world; r++) {
		printf("rank %d: init %s, op %s: %s\n", r, nr_strerror(t->rc_init[r]),
		       nr_strerror(t->rc_op[r]), t->msg[r]);
		assert_int_equal(t->rc_init[r], NR_OK);
		if (t->rc_op[r] == NR_ERR_BOX) {
			assert_non_null(strstr(t->msg[r], "arrived unaggregated"));
			unaggregated++;
		} else {
			assert_true(t->rc_op[r] == NR_ERR_PEER || t->rc_op[r] == NR_ERR_TIMEOUT);
		}
	}
	assert_true(unaggregated >= 1);
}

static void test_job_registered_unaggregated_detected(void **state)
{
	struct server s = { 0 };
	struct box_case *t;
	const int world = 3;

	assert_int_equal(start_server(&s), 0);
	t = run(&s, "box-ctl-token-0123456789", world, 21, 1);
	for (int r = 0; r < world; r++)
		assert_int_equal(t->credits[r], 4);          /* pool_msgs 8 -> W = 4 */
	expect_unaggregated(t, world);
	munmap(t, sizeof(*t));
	stop_server(&s);
	assert_int_equal(s.shm->created, 1);
	assert_int_equal(s.shm->destroyed, 1);
	munmap(s.shm, sizeof(*s.shm));
}

/*
 * A 16-bit type's job opens at its first nr_allreduce: registered with the
 * box with its dtype (the FP32 one at init), and its messages too arrive
 * unaggregated here (no dataplane), which the ranks detect.  Ranks that
 * disagree on the type fail, every one, naming the types.
 */
static void test_16bit_job_opens(void **state)
{
	struct server s = { 0 };
	const int world = 3;

	assert_int_equal(start_server(&s), 0);
	{
		struct box_case *u = mmap(NULL, sizeof(*u), PROT_READ | PROT_WRITE,
					  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		pid_t pids[RANKS_MAX];
		int status[RANKS_MAX];

		assert_true(u != MAP_FAILED);
		memset(u, 0, sizeof(*u));
		ranks_env_init(&u->env, 41);
		snprintf(u->sw, sizeof(u->sw), "127.0.0.1:%d", s.shm->port);
		u->token = "box-ctl-token-0123456789";
		u->channels = 2;
		for (int r = 0; r < world; r++)
			u->dtype[r] = NR_BF16;
		ranks_fork(world, box_child, u, pids);
		ranks_wait(world, pids, status, 30000, NULL);
		for (int r = 0; r < world; r++)
			assert_int_equal(status[r], 0);
		expect_unaggregated(u, world);
		/* disagreeing ranks: rank 2 asks for fp16 */
		memset(u->rc_op, 0, sizeof(u->rc_op));
		ranks_env_init(&u->env, 43);
		u->dtype[2] = NR_FP16;
		ranks_fork(world, box_child, u, pids);
		ranks_wait(world, pids, status, 30000, NULL);
		for (int r = 0; r < world; r++) {
			printf("rank %d: init %s, op %s: %s\n", r, nr_strerror(u->rc_init[r]),
			       nr_strerror(u->rc_op[r]), u->msg[r]);
			assert_int_equal(status[r], 0);
			assert_int_equal(u->rc_op[r], NR_ERR_INVALID);
			assert_non_null(strstr(u->msg[r], "nr_allreduce with bf16, rank 2 with fp16: every "
					       "rank must call it with the same dtype"));
		}
		munmap(u, sizeof(*u));
	}
	stop_server(&s);
	/* two communicators: the fp32 job at init and the bf16 one; the second's bf16 refused */
	assert_int_equal(s.shm->created, 3);
	assert_int_equal(s.shm->destroyed, 3);
	assert_int_equal(s.shm->dtype_jobs[NR_ELEM_FP32], 2);
	assert_int_equal(s.shm->dtype_jobs[NR_ELEM_BF16], 1);
	assert_int_equal(s.shm->dtype_jobs[NR_ELEM_FP16], 0);
	munmap(s.shm, sizeof(*s.shm));
}

/* ---- leases: ranks killed between collectives ---- */

/* One request over TCP to the test's server; the reply. */
static json_t *tcp_call(int port, const char *line)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char buf[65536];
	size_t n = 0;
	ssize_t r;

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_true(write(fd, line, strlen(line)) == (ssize_t)strlen(line));
	assert_true(write(fd, "\n", 1) == 1);
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0) {
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	close(fd);
	buf[n] = '\0';
	return json_loads(buf, 0, NULL);
}

static long long control_counter(int port, const char *name)
{
	json_t *r = tcp_call(port, "{\"op\":\"stats\",\"token\":\"box-ctl-token-0123456789\"}");
	json_t *v = json_object_get(json_object_get(json_object_get(r, "stats"), "control"), name);
	long long n = json_is_integer(v) ? json_integer_value(v) : -1;

	json_decref(r);
	return n;
}

struct lease_case {
	struct ranks_env env;
	char sw[32];
	char token[64];          /* "": "tok" */
	uint32_t timeout_ms;     /* 0: 500 */
	char errpath[64];        /* rank 0's stderr into this file ("": left alone) */
	int ready[RANKS_MAX];
	int rc[RANKS_MAX];
};

/* Register the job (a 500 ms progress timeout: a lease of 1.5 s), then idle
 * between collectives until killed. */
static int lease_child(int rank, int world, void *arg)
{
	struct lease_case *t = arg;
	struct nr_config cfg;
	struct nr_comm *c;

	if (rank == 0 && t->errpath[0] && !freopen(t->errpath, "w", stderr))
		return 1;
	if (rank == 0)
		setvbuf(stderr, NULL, _IONBF, 0);
	ranks_config(&t->env, rank, world, &cfg);
	cfg.switch_addr = t->sw;
	cfg.token = t->token[0] ? t->token : "box-ctl-token-0123456789";
	cfg.timeout_ms = t->timeout_ms ? t->timeout_ms : 500;
	t->rc[rank] = nr_comm_init(&cfg, &c);
	__atomic_store_n(&t->ready[rank], 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return 0;
}

/*
 * Ranks alive between collectives keep their job (the library renews its
 * lease); SIGKILLed, the job is gone within its lease and counted; then 64
 * jobs fit again, and a 65th is refused with a clear error.
 */
static void test_lease_after_sigkill(void **state)
{
	struct server s = { 0 };
	struct lease_case *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				    -1, 0);
	pid_t pids[RANKS_MAX];
	int status[RANKS_MAX];
	uint64_t t0, gone = 0;
	char req[1024];
	json_t *r;

	assert_true(t != MAP_FAILED);
	memset(t, 0, sizeof(*t));
	assert_int_equal(start_server(&s), 0);
	ranks_env_init(&t->env, 31);
	snprintf(t->sw, sizeof(t->sw), "127.0.0.1:%d", s.shm->port);
	ranks_fork(2, lease_child, t, pids);
	for (int i = 0; i < 1000 && !(__atomic_load_n(&t->ready[0], __ATOMIC_ACQUIRE) &&
				       __atomic_load_n(&t->ready[1], __ATOMIC_ACQUIRE)); i++)
		usleep(10000);
	assert_int_equal(t->rc[0], NR_OK);
	assert_int_equal(t->rc[1], NR_OK);
	/* two leases long: renewed, still there */
	usleep(3000 * 1000);
	assert_int_equal(control_counter(s.shm->port, "jobs"), 1);
	assert_true(control_counter(s.shm->port, "leases_renewed") >= 3);
	assert_int_equal(control_counter(s.shm->port, "jobs_expired"), 0);
	/* every rank killed between collectives */
	for (int i = 0; i < 2; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], &status[i], 0);
	}
	t0 = ranks_now_ms();
	while (ranks_now_ms() - t0 < 6000) {
		if (control_counter(s.shm->port, "jobs") == 0) {
			gone = ranks_now_ms() - t0;
			break;
		}
		usleep(100000);
	}
	printf("job gone %llu ms after the kill (lease 1500 ms, reaped each second)\n",
	       (unsigned long long)gone);
	assert_true(gone > 0 && gone <= 1500 + 1200);
	assert_int_equal(control_counter(s.shm->port, "jobs_expired"), 1);
	/* 64 jobs fit again */
	for (int k = 0; k < 65; k++) {
		snprintf(req, sizeof(req),
			 "{\"op\":\"job_create\",\"token\":\"box-ctl-token-0123456789\",\"spec\":{\"conns\":["
			 "{\"src_ip\":\"10.9.%d.1\",\"dst_ip\":\"10.9.%d.2\",\"src_qpn\":17,\"dst_qpn\":18,\"ipsn\":0},"
			 "{\"src_ip\":\"10.9.%d.2\",\"dst_ip\":\"10.9.%d.1\",\"src_qpn\":19,\"dst_qpn\":20,\"ipsn\":0}]}}",
			 k, k, k, k);
		r = tcp_call(s.shm->port, req);
		if (k < 64 && !json_is_true(json_object_get(r, "ok")))
			fail_msg("job %d of 64 refused: %s", k + 1,
				 json_string_value(json_object_get(r, "error")));
		if (k == 64) {
			assert_false(json_is_true(json_object_get(r, "ok")));
			assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "64 jobs exist"));
		}
		json_decref(r);
	}
	munmap(t, sizeof(*t));
	stop_server(&s);
	munmap(s.shm, sizeof(*s.shm));
}

/* ---- a tenant's connections: a cap, and a job's lease on its own connection ---- */

#define TOK_ATTACK "attacker-token-0123456789"
#define TOK_VICTIM "victim-token-0123456789ab"

static const char tenants_two[] =
	"{\"tenants\": [\n"
	" {\"name\": \"attacker\", \"token\": \"" TOK_ATTACK "\", \"ips\": [\"10.66.0.0/16\"],"
	"  \"max_conns\": 3},\n"
	" {\"name\": \"victim\", \"token\": \"" TOK_VICTIM "\", \"ips\": [\"127.0.0.0/24\"]}]}\n";

/* A connection from src (host order) to the box at port that sends line: its
 * reply (the connection in *fd, open). */
static json_t *request_from(int port, uint32_t src, const char *line, int *fd)
{
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(src) };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[4096];
	size_t n = 0;
	ssize_t r;
	json_t *j;

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*fd >= 0);
	assert_int_equal(bind(*fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(connect(*fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_true(write(*fd, line, strlen(line)) == (ssize_t)strlen(line));
	while (n < sizeof(buf) - 1 && (r = read(*fd, buf + n, sizeof(buf) - 1 - n)) > 0) {
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = '\0';
	j = json_loads(buf, JSON_DISABLE_EOF_CHECK, NULL);
	if (!j)
		fail_msg("no JSON reply to %s: %s", line, buf);
	return j;
}

/* A connection from 127.0.1.host that sends one stats request as tenant tok: the
 * connection (held) when the box answered ok, else -1 (the reply checked to say why). */
static int attacker_conn(int port, unsigned host, const char *want_err)
{
	static const char req[] = "{\"op\":\"stats\",\"token\":\"" TOK_ATTACK "\"}\n";
	int fd;
	json_t *j = request_from(port, 0x7f000100u + host, req, &fd);
	bool ok = json_is_true(json_object_get(j, "ok"));

	if (!ok) {
		const char *e = json_string_value(json_object_get(j, "error"));

		if (!want_err || !e || !strstr(e, want_err))
			fail_msg("attacker connection %u: %s", host, e ? e : "no error text");
		close(fd);
		fd = -1;
	} else if (want_err) {
		fail_msg("attacker connection %u admitted past its max_conns", host);
	}
	json_decref(j);
	return fd;
}

/* Fork 2 ranks of lease_child on t; wait until both are registered. */
static void lease_ranks(struct lease_case *t, pid_t *pids)
{
	ranks_fork(2, lease_child, t, pids);
	for (int i = 0; i < 1000 && !(__atomic_load_n(&t->ready[0], __ATOMIC_ACQUIRE) &&
				       __atomic_load_n(&t->ready[1], __ATOMIC_ACQUIRE)); i++)
		usleep(10000);
	assert_int_equal(t->rc[0], NR_OK);
	assert_int_equal(t->rc[1], NR_OK);
}

static void lease_ranks_kill(pid_t *pids)
{
	int status;

	for (int i = 0; i < 2; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], &status, 0);
	}
}

/*
 * Tenant attacker (max_conns 3) holds its 3 connections and is refused more
 * before and while tenant victim's library creates its job and keeps it
 * through 3 s of a 1.5 s lease; the lease is renewed on the job's own
 * connection: across 6 renewals the box accepts no connection but the
 * test's own stats request.
 */
static void test_tenant_conn_cap_library(void **state)
{
	struct server s = { .tenants = tenants_two };
	struct lease_case *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				    -1, 0);
	long long acc0, acc1, ren0, ren1;
	int held[3];
	pid_t pids[RANKS_MAX];

	(void)state;
	assert_true(t != MAP_FAILED);
	memset(t, 0, sizeof(*t));
	assert_int_equal(start_server(&s), 0);
	for (unsigned k = 0; k < 3; k++)
		held[k] = attacker_conn(s.shm->port, 1 + k, NULL);
	for (unsigned k = 3; k < 8; k++)
		attacker_conn(s.shm->port, 1 + k, "tenant attacker holds 3 control connections");
	ranks_env_init(&t->env, 33);
	snprintf(t->sw, sizeof(t->sw), "127.0.0.1:%d", s.shm->port);
	snprintf(t->token, sizeof(t->token), "%s", TOK_VICTIM);
	lease_ranks(t, pids);
	acc0 = control_counter(s.shm->port, "conns_accepted");
	ren0 = control_counter(s.shm->port, "leases_renewed");
	for (unsigned k = 0; k < 4; k++) {        /* and more refused meanwhile */
		attacker_conn(s.shm->port, 20 + k, "tenant attacker holds 3 control connections");
		usleep(750 * 1000);
	}
	acc1 = control_counter(s.shm->port, "conns_accepted");
	ren1 = control_counter(s.shm->port, "leases_renewed");
	printf("renewals %lld, connections accepted meanwhile %lld (4 the attacker's, 2 this "
	       "test's stats requests)\n", ren1 - ren0, acc1 - acc0);
	assert_true(ren1 - ren0 >= 4);
	assert_int_equal(acc1 - acc0, 4 + 2);
	assert_int_equal(control_counter(s.shm->port, "jobs"), 1);
	assert_int_equal(control_counter(s.shm->port, "jobs_expired"), 0);
	assert_int_equal(control_counter(s.shm->port, "tenant_conns_refused"), 9);
	lease_ranks_kill(pids);
	for (unsigned k = 0; k < 3; k++)
		close(held[k]);
	munmap(t, sizeof(*t));
	stop_server(&s);
	munmap(s.shm, sizeof(*s.shm));
}

/*
 * A neighbour behind the ranks' own address (127.0.0.1: SNAT) guesses tokens,
 * ten, the box's throttle: requests from that address naming no tenant are
 * refused for a minute.  The victim's library with NR_TENANT=victim names
 * its tenant, and its job registers all the same; without NR_TENANT it is
 * refused, saying why; a name no tenant file can hold is refused before
 * anything is sent.
 */
static void test_tenant_claim(void **state)
{
	static const char guess[] = "{\"op\":\"stats\",\"token\":\"guess-0123456789abcdef\"}\n";
	struct server s = { .tenants = tenants_two };
	struct box_case *t;

	(void)state;
	assert_int_equal(start_server(&s), 0);
	for (unsigned k = 0; k < 10; k++) {
		int fd;
		json_t *j = request_from(s.shm->port, 0x7f000001u, guess, &fd);

		assert_false(json_is_true(json_object_get(j, "ok")));
		json_decref(j);
		close(fd);
	}
	setenv("NR_TENANT", "victim", 1);
	t = run(&s, TOK_VICTIM, 2, 24, 1);
	expect_unaggregated(t, 2); /* registered: no dataplane here */
	munmap(t, sizeof(*t));
	unsetenv("NR_TENANT");
	t = run(&s, TOK_VICTIM, 2, 25, 1);
	assert_int_equal(t->rc_init[0], NR_ERR_BOX);
	assert_non_null(strstr(t->msg[0], "too many failed authentications from this address"));
	munmap(t, sizeof(*t));
	setenv("NR_TENANT", "victim tenant", 1);
	t = run(&s, TOK_VICTIM, 2, 26, 1);
	assert_int_equal(t->rc_init[0], NR_ERR_CONFIG);
	assert_non_null(strstr(t->msg[0], "NR_TENANT=victim tenant: a tenant's name"));
	munmap(t, sizeof(*t));
	unsetenv("NR_TENANT");
	stop_server(&s);
	assert_int_equal(s.shm->created, 1);
	munmap(s.shm, sizeof(*s.shm));
}

/* Lines of file path that contain needle. */
static unsigned lines_with(const char *path, const char *needle)
{
	char line[1024];
	unsigned n = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, needle))
			n++;
		printf("  rank 0: %s", line);
	}
	fclose(f);
	return n;
}

/*
 * The box stops answering for 4.5 s (SIGSTOP) while a job's lease of 6 s runs:
 * its renewals fail, which rank 0 says once, naming the box and the job, and
 * tries again every second; when the box answers again it says so, and the job
 * was never lost.
 */
static void test_lease_renewal_failure_logged(void **state)
{
	struct server s = { 0 };
	struct lease_case *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				    -1, 0);
	char dir[] = "/tmp/nr-renew-XXXXXX", want[128];
	pid_t pids[RANKS_MAX];

	(void)state;
	assert_true(t != MAP_FAILED);
	memset(t, 0, sizeof(*t));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(start_server(&s), 0);
	ranks_env_init(&t->env, 35);
	snprintf(t->sw, sizeof(t->sw), "127.0.0.1:%d", s.shm->port);
	snprintf(t->errpath, sizeof(t->errpath), "%s/rank0.err", dir);
	t->timeout_ms = 2000;                 /* a lease of 6 s, renewed every 2 s */
	lease_ranks(t, pids);
	usleep(1200 * 1000);
	/* longer than a renewal's wait for its answer (2 s) and a period (2 s) after
	 * any renewal; a renewal waiting when it wakes is answered before its
	 * reaper looks at the lease (clients first, each turn of its loop) */
	kill(s.pid, SIGSTOP);
	usleep(4500 * 1000);
	kill(s.pid, SIGCONT);
	usleep(3000 * 1000);
	assert_int_equal(control_counter(s.shm->port, "jobs"), 1);
	assert_int_equal(control_counter(s.shm->port, "jobs_expired"), 0);
	lease_ranks_kill(pids);
	snprintf(want, sizeof(want), "netreduce: box %s: renewing job 1's lease failed", t->sw);
	assert_int_equal(lines_with(t->errpath, want), 1);
	snprintf(want, sizeof(want), "netreduce: box %s: job 1's lease renewed again, after", t->sw);
	assert_int_equal(lines_with(t->errpath, want), 1);
	unlink(t->errpath);
	rmdir(dir);
	munmap(t, sizeof(*t));
	stop_server(&s);
	munmap(s.shm, sizeof(*s.shm));
}

static void test_bad_token(void **state)
{
	struct server s = { 0 };
	struct box_case *t;

	assert_int_equal(start_server(&s), 0);
	t = run(&s, "wrong", 2, 22, 1);
	for (int r = 0; r < 2; r++) {
		assert_int_equal(t->rc_init[r], NR_ERR_BOX);
		assert_non_null(strstr(t->msg[r], "refused job_create"));
		assert_non_null(strstr(t->msg[r], "token"));
	}
	munmap(t, sizeof(*t));
	stop_server(&s);
	assert_int_equal(s.shm->created, 0);
	munmap(s.shm, sizeof(*s.shm));
}

/*
 * The library over TLS: with NR_TLS_CA the job is registered (and destroyed)
 * and the ranks run as over plain TCP; with a CA that did not sign the box's
 * certificate, or without NR_TLS_CA, job_create fails and says why (the box is
 * on loopback, where the library may try plain text); NR_TLS other than on or
 * off, or off beside a CA, is refused before anything is sent.
 */
static void test_tls(void **state)
{
	struct server s = { 0 };
	struct tb_tls certs;
	struct box_case *t;

	(void)state;
	assert_int_equal(tb_tls_make(&certs), 0);
	srv_cert = certs.cert;
	srv_key = certs.key;
	assert_int_equal(start_server(&s), 0);
	srv_cert = srv_key = NULL;
	setenv("NR_TLS_CA", certs.ca, 1);
	t = run(&s, "box-ctl-token-0123456789", 2, 40, 1);
	expect_unaggregated(t, 2);
	munmap(t, sizeof(*t));
	setenv("NR_TLS_CA", certs.other_ca, 1);
	t = run(&s, "box-ctl-token-0123456789", 2, 41, 1);
	for (int r = 0; r < 2; r++) {
		assert_int_equal(t->rc_init[r], NR_ERR_BOX);
		if (r == 0)
			assert_non_null(strstr(t->msg[r], "does not verify against the CA file"));
	}
	munmap(t, sizeof(*t));
	unsetenv("NR_TLS_CA");
	t = run(&s, "box-ctl-token-0123456789", 2, 42, 1);
	for (int r = 0; r < 2; r++) {
		assert_int_equal(t->rc_init[r], NR_ERR_BOX);
		if (r == 0)
			assert_non_null(strstr(t->msg[r], "this box wants TLS"));
	}
	munmap(t, sizeof(*t));
	/* NR_TLS: off or on only, and off is not said beside a CA: refused
	 * before anything is sent (the box counts no second job) */
	setenv("NR_TLS", "maybe", 1);
	t = run(&s, "box-ctl-token-0123456789", 2, 43, 1);
	assert_int_equal(t->rc_init[0], NR_ERR_CONFIG);
	assert_non_null(strstr(t->msg[0], "NR_TLS=maybe: on (the default"));
	munmap(t, sizeof(*t));
	setenv("NR_TLS", "off", 1);
	setenv("NR_TLS_CA", certs.ca, 1);
	t = run(&s, "box-ctl-token-0123456789", 2, 44, 1);
	assert_int_equal(t->rc_init[0], NR_ERR_CONFIG);
	assert_non_null(strstr(t->msg[0], "NR_TLS=off with NR_TLS_CA="));
	munmap(t, sizeof(*t));
	unsetenv("NR_TLS");
	unsetenv("NR_TLS_CA");
	stop_server(&s);
	assert_int_equal(s.shm->created, 1);
	assert_int_equal(s.shm->destroyed, 1);
	munmap(s.shm, sizeof(*s.shm));
	tb_tls_remove(&certs);
}

/*
 * Box channels: rank 0 registers one job whose channels are the ranks' box
 * rings, each connection with the UDP source ports of its QPs (the soft
 * transport knows them); with channels 0 (auto) every rank asks the box for
 * its worker count (the test backend claims 2).  Unaggregated results are
 * still detected on every channel.
 */
static void test_channels(void **state)
{
	static const struct { uint32_t cfg, want; } cases[] = { { 3, 3 }, { 0, 2 } };
	const int world = 3;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct server s = { 0 };
		struct box_case *t;

		assert_int_equal(start_server(&s), 0);
		t = run(&s, "box-ctl-token-0123456789", world, 23 + (unsigned)i, cases[i].cfg);
		for (int r = 0; r < world; r++) {
			assert_int_equal(t->rc_init[r], NR_OK);
			assert_int_equal(t->got_channels[r], cases[i].want);
			assert_true(t->rc_op[r] == NR_ERR_BOX || t->rc_op[r] == NR_ERR_PEER ||
				    t->rc_op[r] == NR_ERR_TIMEOUT);
		}
		munmap(t, sizeof(*t));
		stop_server(&s);
		assert_int_equal(s.shm->created, 1);
		assert_int_equal(s.shm->destroyed, 1);
		assert_int_equal(s.shm->channels, cases[i].want);
		assert_int_equal(s.shm->sports, 2 * world * cases[i].want);
		/* the soft transport's P_Key (nr_tp_pkey), registered with the job */
		assert_int_equal(s.shm->pkey, 0xFFFF);
		munmap(s.shm, sizeof(*s.shm));
	}
}

/*
 * A job striped over two boxes (NR_BOX "A,B"): rank 0 registers a job on
 * each, box k with channels k, k + 2, ... (4 channels: 2 each; the default
 * of 1: one each); both destroyed at the end.  When the second refuses
 * job_create (its token is another's), the first's job is destroyed again
 * before the ranks fail, the error naming the box that refused.
 */
static void test_two_boxes(void **state)
{
	static const struct { uint32_t cfg, want; } cases[] = { { 4, 4 }, { 1, 2 } };
	const int world = 3;
	struct box_case *t;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct server a = { 0 }, b = { 0 };

		assert_int_equal(start_server(&a), 0);
		assert_int_equal(start_server(&b), 0);
		t = run_pair(&a, &b, "box-ctl-token-0123456789", world, 60 + (unsigned)i,
			     cases[i].cfg);
		for (int r = 0; r < world; r++)
			assert_int_equal(t->got_channels[r], cases[i].want);
		expect_unaggregated(t, world);
		munmap(t, sizeof(*t));
		stop_server(&b);   /* first: its process holds a's pipe too */
		stop_server(&a);
		for (struct server *s = &a; s; s = s == &a ? &b : NULL) {
			assert_int_equal(s->shm->created, 1);
			assert_int_equal(s->shm->destroyed, 1);
			assert_int_equal(s->shm->channels, cases[i].want / 2);
			munmap(s->shm, sizeof(*s->shm));
		}
	}
	/* NR_RAILS: one interface a box (else refused before the boxes hear of
	 * it), each one that exists (else the transport names it); lo twice
	 * binds the channels' QPs to loopback, where the ranks are */
	{
		static const struct {
			const char *rails, *says;
			int rc;
		} rails[] = {
			{ "lo", "NR_RAILS=lo names 1 interface for 2 boxes", NR_ERR_CONFIG },
			{ "lo,", "NR_RAILS=lo,: interface names", NR_ERR_CONFIG },
			{ "lo,nrnosuch0", "cannot send by interface nrnosuch0", NR_ERR_TRANSPORT },
			{ "lo,lo", NULL, NR_OK },
		};

		for (size_t i = 0; i < sizeof(rails) / sizeof(rails[0]); i++) {
			struct server a = { 0 }, b = { 0 };

			assert_int_equal(start_server(&a), 0);
			assert_int_equal(start_server(&b), 0);
			setenv("NR_RAILS", rails[i].rails, 1);
			t = run_pair(&a, &b, "box-ctl-token-0123456789", 2, 63 + (unsigned)i, 2);
			unsetenv("NR_RAILS");
			assert_int_equal(t->rc_init[0], rails[i].rc);
			if (rails[i].says)
				assert_non_null(strstr(t->msg[0], rails[i].says));
			else
				expect_unaggregated(t, 2);
			munmap(t, sizeof(*t));
			stop_server(&b);
			stop_server(&a);
			assert_int_equal(a.shm->created, rails[i].rc == NR_OK);
			munmap(a.shm, sizeof(*a.shm));
			munmap(b.shm, sizeof(*b.shm));
		}
	}
	/* the second box knows another token: the first's job is undone */
	{
		struct server a = { .tenants = tenants_two }, b = { 0 };

		assert_int_equal(start_server(&a), 0);
		assert_int_equal(start_server(&b), 0);
		t = run_pair(&a, &b, TOK_VICTIM, world, 62, 2);
		for (int r = 0; r < world; r++)
			assert_int_equal(t->rc_init[r], NR_ERR_BOX);
		{
			char want[64];

			snprintf(want, sizeof(want), "box 127.0.0.1:%d refused job_create", b.shm->port);
			assert_non_null(strstr(t->msg[0], want));
		}
		assert_int_equal(control_counter(a.shm->port, "jobs"), 0);
		munmap(t, sizeof(*t));
		stop_server(&b);   /* first: its process holds a's pipe too */
		stop_server(&a);
		assert_int_equal(a.shm->created, 1);
		assert_int_equal(a.shm->destroyed, 1);
		assert_int_equal(b.shm->created, 0);
		munmap(a.shm, sizeof(*a.shm));
		munmap(b.shm, sizeof(*b.shm));
	}
}

/*
 * The bound on tolerant messages: rank 0 registers it with the job (the box
 * holds it: job_status, through nr_comm_box_counters, which only rank 0 may
 * ask); a tolerant all-reduce's packets leave with a traffic class of their
 * own, every one of them, an exact one's with none.  (No dataplane here: the
 * results arrive unaggregated and the call fails, after the packets left.)
 */
static void test_short_bound(void **state)
{
	const int world = 3;

	for (unsigned flags = 0; flags <= NR_MSG_TOLERANT; flags += NR_MSG_TOLERANT) {
		struct server s = { 0 };
		struct box_case *t;
		uint64_t sent = 0;

		assert_int_equal(start_server(&s), 0);
		/* the tolerant case sprays over 2 ports, a window of 12: the job says so */
		t = run_case(&s, "box-ctl-token-0123456789", world, 25 + flags, 1, 150000, flags, flags ? 2 : 0);
		for (int r = 0; r < world; r++) {
			printf("rank %d: %s: %llu data packets, %llu with their own class\n", r,
			       flags ? "tolerant" : "exact", (unsigned long long)t->tx_data[r],
			       (unsigned long long)t->tx_tclass[r]);
			assert_int_equal(t->rc_init[r], NR_OK);
			assert_int_equal(t->rc_counters[r], r == 0 ? NR_OK : NR_ERR_INVALID);
			assert_int_equal(t->tx_tclass[r], flags ? t->tx_data[r] : 0);
			sent += t->tx_data[r];
		}
		/* a rank that saw a peer's unaggregated message at once may have sent nothing */
		assert_true(sent > 0);
		assert_int_equal(t->counters.short_ppm, 150000);
		assert_int_equal(t->counters.ranks, world);
		assert_int_equal(t->counters.short_slots, 0);
		assert_int_equal(t->rc_counters_ex, NR_OK);
		assert_int_equal(t->counters_ex.short_ppm, 150000);
		assert_int_equal(t->counters_ex.ranks, world);
		for (int r = 0; r <= RANKS_MAX; r++)
			assert_int_equal(t->left_out[r], 0);
		/* everything the box says: the spec the library registered (it
		 * promises the ring layout a first packet's RETH is built from)
		 * and short_denied by reason; rank 0 only, a buffer that fits */
		for (int r = 0; r < world; r++)
			assert_int_equal(t->rc_status[r], r == 0 ? NR_OK : NR_ERR_INVALID);
		assert_non_null(strstr(t->status, "\"short_first\":true"));
		assert_non_null(strstr(t->status, "\"short_why\":{"));
		if (flags) {
			assert_non_null(strstr(t->status, "\"spray_ports\":2"));
			/* by default what a QP keeps in flight */
			assert_non_null(strstr(t->status, "\"reorder_pkts\":12"));
		} else {
			assert_null(strstr(t->status, "spray_ports"));
		}
		assert_int_equal(t->rc_status_small, NR_ERR_INVALID);
		assert_non_null(strstr(t->status_small_err, "the buffer has 16"));
		munmap(t, sizeof(*t));
		stop_server(&s);
		assert_int_equal(s.shm->created, 1);
		munmap(s.shm, sizeof(*s.shm));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_registered_unaggregated_detected),
		cmocka_unit_test(test_16bit_job_opens),
		cmocka_unit_test(test_channels),
		cmocka_unit_test(test_two_boxes),
		cmocka_unit_test(test_bad_token),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_short_bound),
		cmocka_unit_test(test_lease_after_sigkill),
		cmocka_unit_test(test_tenant_conn_cap_library),
		cmocka_unit_test(test_tenant_claim),
		cmocka_unit_test(test_lease_renewal_failure_logged),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("NR_TEST_ONLY"))     /* one case by name, e.g. NR_TEST_ONLY=test_channels */
		cmocka_set_test_filter(getenv("NR_TEST_ONLY"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
