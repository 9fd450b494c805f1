/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rendezvous admits only its own ranks (host/comm/nr_bootstrap.c,
 * nr_auth.c): ranks of 2 or 3 processes on loopback with a job secret, and
 * this test as the stranger beside them, or as a rank 0 that is not one.
 *   - a stray from a genuine rank's own address (so the address check
 *     passes) with a well-formed hello that carries no proof, a proof under
 *     another key, or a proof for another rendezvous' nonce (a replay), before
 *     the real rank: each turned away, the job forms with the genuine ranks
 *     and sums exactly; without the real rank, rank 0's timeout names the
 *     missing rank and the address of the wrong proofs;
 *   - a member with another secret (from a file named by NR_JOB_SECRET), or
 *     none: it fails at once naming its secret's source; rank 0 does not abort;
 *   - a member whose "rank 0" cannot prove the secret (a table without a
 *     proof, one under another key, a rendezvous without a secret) refuses it;
 *   - silent and half-hello connections hold nothing up;
 *   - a proven hello of a taken or impossible rank is turned away, not fatal;
 *   - without a secret, rank 0 says once that the rendezvous is unauthenticated.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <jansson.h>

#include "host/comm/comm_internal.h"
#include "host/comm/nr_auth.h"
#include "ranks.h"

#define SECRET "5d1e8a0c3b7f4e2a9c6d0b1f8e3a5c7d2b4f6e8a0c1d3e5f7a9b2c4d6e8f0a1b"
#define SECRET2 "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define COUNT 4100

struct out {
	int rc[RANKS_MAX];
	uint64_t ms[RANKS_MAX];          /* how long nr_comm_init took */
	char msg[RANKS_MAX][NR_ERRLEN];
	int exact[RANKS_MAX];            /* 1: the all-reduce matched the reference */
	int started[RANKS_MAX];          /* calling nr_comm_init */
};

struct rcase {
	struct ranks_env env;
	uint32_t timeout_ms, boot_ms, late_ms;   /* late_ms: the last rank starts this late */
	int absent;                      /* a rank that never comes (0: none) */
	const char *secret[RANKS_MAX];   /* each rank's job_secret (NULL: none) */
	bool secret_env;                 /* given through NR_JOB_SECRET */
	struct out *out;
};

static int child(int rank, int world, void *arg)
{
	struct rcase *t = arg;
	float *buf = malloc(COUNT * 4), *ref = malloc(COUNT * 4);
	struct nr_config cfg;
	struct nr_comm *c;
	uint64_t t0;

	if (rank && rank == t->absent)
		return 0;
	ranks_config(&t->env, rank, world, &cfg);
	cfg.timeout_ms = t->timeout_ms ? t->timeout_ms : 2000;
	cfg.bootstrap_timeout_ms = t->boot_ms ? t->boot_ms : 10000;
	cfg.mtu = 1024;
	if (t->secret[rank] && t->secret_env) {
		setenv("NR_JOB_SECRET", t->secret[rank], 1);
		cfg.job_secret = getenv("NR_JOB_SECRET");
	} else {
		cfg.job_secret = t->secret[rank];
	}
	if (t->late_ms && rank == world - 1)
		usleep(t->late_ms * 1000u);
	t0 = ranks_now_ms();
	__atomic_store_n(&t->out->started[rank], 1, __ATOMIC_RELEASE);
	t->out->rc[rank] = nr_comm_init(&cfg, &c);
	t->out->ms[rank] = ranks_now_ms() - t0;
	snprintf(t->out->msg[rank], NR_ERRLEN, "%s", nr_comm_last_error(NULL));
	if (t->out->rc[rank])
		return 0;
	ranks_fill(7, rank, buf, COUNT);
	ranks_ring_reference(7, world, ref, COUNT);
	t->out->rc[rank] = nr_ring_allreduce(c, buf, buf, COUNT, NR_FLOAT32, NR_SUM);
	if (t->out->rc[rank])
		snprintf(t->out->msg[rank], NR_ERRLEN, "%s", nr_comm_last_error(c));
	t->out->exact[rank] = !t->out->rc[rank] && !memcmp(buf, ref, COUNT * 4);
	nr_comm_destroy(c);
	free(buf);
	free(ref);
	return 0;
}

static void case_start(struct rcase *t, unsigned salt, int world, pid_t *pids)
{
	ranks_env_init(&t->env, salt);
	t->out = mmap(NULL, sizeof(*t->out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t->out != MAP_FAILED);
	memset(t->out, 0, sizeof(*t->out));
	ranks_fork(world, child, t, pids);
}

static void case_wait(struct rcase *t, int world, pid_t *pids)
{
	int status[RANKS_MAX];

	ranks_wait(world, pids, status, 60000, NULL);
	for (int r = 0; r < world; r++) {
		printf("rank %d: exit %d rc %d in %llu ms: %s\n", r, status[r], t->out->rc[r],
		       (unsigned long long)t->out->ms[r], t->out->msg[r]);
		assert_int_equal(status[r], 0);
	}
}

static void case_end(struct rcase *t)
{
	munmap(t->out, sizeof(*t->out));
}

/* ---- a stranger's side of the rendezvous --------------------------------------------- */

/* Connect from src (sport 0: any port) to "ip:port", retrying while nothing listens there. */
static int dial(const char *src, const char *addr)
{
	struct sockaddr_in me = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
	char host[32];
	unsigned port;

	assert_int_equal(sscanf(addr, "%31[^:]:%u", host, &port), 2);
	inet_pton(AF_INET, src, &me.sin_addr);
	inet_pton(AF_INET, host, &to.sin_addr);
	to.sin_port = htons((uint16_t)port);
	for (int tries = 0;; tries++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		assert_true(fd >= 0);
		assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
		if (!connect(fd, (struct sockaddr *)&to, sizeof(to)))
			return fd;
		close(fd);
		assert_true(tries < 500);      /* rank 0 listens within 5 s */
		usleep(10000);
	}
}

/* One line of fd within ms, parsed (NULL: none, or not JSON). */
static json_t *read_line(int fd, int ms)
{
	char buf[65536];
	size_t n = 0;
	uint64_t end = ranks_now_ms() + (uint64_t)ms;

	while (n < sizeof(buf) - 1 && ranks_now_ms() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 10) != 1)
			continue;
		r = recv(fd, buf + n, 1, 0);
		if (r <= 0)
			return NULL;
		if (buf[n] == '\n')
			return json_loadb(buf, n, 0, NULL);
		n++;
	}
	return NULL;
}

static void send_line(int fd, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t len = strlen(s);

	s[len++] = '\n';
	assert_true(send(fd, s, len, MSG_NOSIGNAL) == (ssize_t)len);
	free(s);
}

static json_t *ep_json(unsigned q)
{
	return json_pack("{s:{s:i,s:i,s:i,s:i},s:{s:i,s:i,s:i,s:i},s:i,s:i}", "send", "qpn", q,
			 "psn", 0, "port", 4791, "sport", 49152, "recv", "qpn", q + 1, "psn", 0,
			 "port", 4791, "sport", 49153, "va", 4096, "rkey", 1);
}

/* An endpoint row claiming address ip, as nr_bootstrap.c writes one. */
static json_t *row_json(const char *ip, unsigned q)
{
	return json_pack("{s:s,s:s,s:[o],s:o}", "ip", ip, "mac", "02:00:00:00:00:01", "box",
			 ep_json(q), "plain", ep_json(q + 2));
}

enum proof { PROOF_NONE, PROOF_RIGHT, PROOF_WRONG_KEY, PROOF_OTHER_NONCE };

/* The key secret makes (nr_auth_init, as every rank does). */
static void key_of(const char *secret, struct nr_auth *a)
{
	char err[256];

	assert_int_equal(nr_auth_init(a, secret, NULL, err, sizeof(err)), 0);
}

/*
 * Say hello to rank 0 from src as rank `rank` of `world` (settings as the
 * children's), proved as `how` for this connection; rank 0's answer.
 */
static json_t *stranger_hello(const struct ranks_env *e, const char *src, int rank, int world,
			      enum proof how)
{
	uint8_t nonce[NR_AUTH_NONCE_BYTES], mnonce[NR_AUTH_MNONCE_BYTES];
	char mhex[2 * NR_AUTH_MNONCE_BYTES + 1];
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	int fd = dial(src, e->root);
	json_t *chal = read_line(fd, 5000), *msg, *reply;
	struct nr_auth a;

	assert_non_null(chal);
	assert_int_equal(nr_auth_unhex(json_string_value(json_object_get(chal, "nonce")), nonce,
				       sizeof(nonce)), 0);
	json_decref(chal);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &len), 0);
	nr_auth_random(mnonce, sizeof(mnonce));
	nr_auth_hex(mnonce, sizeof(mnonce), mhex);
	msg = json_pack("{s:{s:i,s:i,s:i,s:i,s:s,s:b,s:i},s:o,s:s}", "hello", "rank", rank, "world",
			world, "mtu", 1024, "msg_size", 65536, "transport", "soft", "box", 0,
			"channels", 1, "peer", row_json(src, 17), "nonce", mhex);
	if (how != PROOF_NONE) {
		struct nr_auth_ctx x = { .nonce = nonce, .mnonce = mnonce, .ip = me.sin_addr.s_addr,
					 .port = ntohs(me.sin_port), .dir = 'm', .seq = 0 };

		key_of(how == PROOF_WRONG_KEY ? SECRET2 : SECRET, &a);
		if (how == PROOF_OTHER_NONCE)   /* as a hello recorded at another rendezvous */
			nonce[0] ^= 1;
		assert_int_equal(nr_auth_sign(&a, &x, msg), 0);
	}
	send_line(fd, msg);
	json_decref(msg);
	reply = read_line(fd, 5000);
	close(fd);
	return reply;
}

/* rank 0's reply turned the hello away as kind ("proof", "rank") */
static void assert_refused(json_t *reply, const char *kind)
{
	const char *k = json_string_value(json_object_get(reply, "refused"));

	assert_non_null(reply);
	printf("  turned away: %s\n", json_string_value(json_object_get(reply, "error")));
	assert_false(json_is_true(json_object_get(reply, "ok")));
	assert_non_null(k);
	assert_string_equal(k, kind);
	json_decref(reply);
}

/* ---- the tests ---------------------------------------------------------------------- */

/*
 * A stranger on rank 1's own address says hello as rank 1 before it: without
 * a proof, with another key's, with one for another rendezvous.  Each is
 * turned away; the job forms with the real rank 1 and sums exactly.  Without
 * rank 1, rank 0 times out naming it and the address of the wrong proofs.
 */
static void test_strays_without_proof(void **state)
{
	for (int part = 0; part < 2; part++) {
		struct rcase t = { .secret = { SECRET, SECRET }, .late_ms = 1500,
				   .boot_ms = part ? 3000 : 10000, .absent = part };
		pid_t pids[RANKS_MAX];

		case_start(&t, 31 + part, 2, pids);
		assert_refused(stranger_hello(&t.env, t.env.addr[1], 1, 2, PROOF_NONE), "proof");
		assert_refused(stranger_hello(&t.env, t.env.addr[1], 1, 2, PROOF_WRONG_KEY), "proof");
		assert_refused(stranger_hello(&t.env, t.env.addr[1], 1, 2, PROOF_OTHER_NONCE), "proof");
		case_wait(&t, 2, pids);
		if (part == 0) {
			for (int r = 0; r < 2; r++) {
				assert_int_equal(t.out->rc[r], 0);
				assert_true(t.out->exact[r]);
			}
		} else {
			assert_int_equal(t.out->rc[0], NR_ERR_TIMEOUT);
			assert_non_null(strstr(t.out->msg[0], "rank 1 missing"));
			assert_non_null(strstr(t.out->msg[0], "3 hellos without the right proof of the "
							      "job's secret (job_secret of struct "
							      "nr_config), from 127.0.0.11"));
		}
		case_end(&t);
	}
}

/*
 * Rank 1's secret (a file named by NR_JOB_SECRET) is not rank 0's: it fails
 * at once naming where its secret comes from; rank 0 keeps waiting and then
 * names the missing rank and the address.  A rank 1 with no secret fails too.
 */
static void test_member_wrong_key(void **state)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/nr-rdv-secret-%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "another secret, 32 bytes long...\n", 33), 33);
	close(fd);
	for (int part = 0; part < 2; part++) {
		struct rcase t = { .secret = { SECRET, part ? NULL : path }, .secret_env = true,
				   .boot_ms = 2500 };
		pid_t pids[RANKS_MAX];

		case_start(&t, 41 + part, 2, pids);
		case_wait(&t, 2, pids);
		assert_int_equal(t.out->rc[1], NR_ERR_CONFIG);
		assert_true(t.out->ms[1] < 2000);       /* at once, not after rank 0's timeout */
		if (part == 0) {
			char want[128];

			snprintf(want, sizeof(want), "this rank's secret is NR_JOB_SECRET (the file %s)",
				 path);
			assert_non_null(strstr(t.out->msg[1], "turned this rank's hello away"));
			assert_non_null(strstr(t.out->msg[1], want));
			assert_non_null(strstr(t.out->msg[0], "without the right proof"));
			assert_non_null(strstr(t.out->msg[0], "127.0.0.11"));
		} else {
			assert_non_null(strstr(t.out->msg[1], "asks every hello to prove the job's "
							      "secret, and this rank has none"));
		}
		assert_int_equal(t.out->rc[0], NR_ERR_TIMEOUT);
		assert_non_null(strstr(t.out->msg[0], "rank 1 missing"));
		case_end(&t);
	}
	unlink(path);
}

/*
 * This test answers at NR_ROOT as a rank 0 without the secret.  Rank 1 (with
 * it) refuses: a rendezvous without a secret; a table without a proof; a
 * table proved with another key.  Its own hello carries the right proof, and
 * a table with the right proof it takes (it then fails later, at the barrier
 * this test never answers, with another message).
 */
static void test_forged_table(void **state)
{
	for (int part = 0; part < 4; part++) {
		struct rcase t = { .secret = { NULL, SECRET }, .absent = 0, .timeout_ms = 1000 };
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		uint8_t nonce[NR_AUTH_NONCE_BYTES], mnonce[NR_AUTH_MNONCE_BYTES];
		char nhex[2 * NR_AUTH_NONCE_BYTES + 1];
		struct nr_auth a;
		pid_t pids[2];
		int lfd, fd, one = 1;
		json_t *hello, *table;
		struct nr_auth_ctx x;

		ranks_env_init(&t.env, 51 + (unsigned)part);
		t.out = mmap(NULL, sizeof(*t.out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
		assert_true(t.out != MAP_FAILED);
		memset(t.out, 0, sizeof(*t.out));
		/* the fake rank 0 listens where rank 0 would */
		{
			struct sockaddr_in sa = { .sin_family = AF_INET };
			char host[32];
			unsigned port;

			assert_int_equal(sscanf(t.env.root, "%31[^:]:%u", host, &port), 2);
			inet_pton(AF_INET, host, &sa.sin_addr);
			sa.sin_port = htons((uint16_t)port);
			lfd = socket(AF_INET, SOCK_STREAM, 0);
			setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
			assert_int_equal(listen(lfd, 4), 0);
		}
		fflush(NULL);
		pids[0] = -1;
		pids[1] = fork();
		if (pids[1] == 0) {
			alarm(60);
			_exit(child(1, 2, &t));
		}
		fd = accept(lfd, (struct sockaddr *)&peer, &len);
		assert_true(fd >= 0);
		nr_auth_random(nonce, sizeof(nonce));
		nr_auth_hex(nonce, sizeof(nonce), nhex);
		table = json_pack("{s:s,s:s,s:b}", "rendezvous", "netreduce/1", "nonce", nhex, "auth",
				  part != 0);
		send_line(fd, table);
		json_decref(table);
		if (part) {
			hello = read_line(fd, 5000);
			assert_non_null(hello);
			assert_int_equal(nr_auth_unhex(json_string_value(json_object_get(hello, "nonce")),
						       mnonce, sizeof(mnonce)), 0);
			x = (struct nr_auth_ctx){ .nonce = nonce, .mnonce = mnonce,
						  .ip = peer.sin_addr.s_addr,
						  .port = ntohs(peer.sin_port), .dir = 'm' };
			key_of(SECRET, &a);
			assert_true(nr_auth_verify(&a, &x, hello));   /* the member proves it */
			json_decref(hello);
			table = json_pack("{s:b,s:i,s:i,s:[o,o]}", "ok", 1, "credits", 4, "result_key",
					  0, "peers", row_json("127.0.0.10", 21), row_json("127.0.0.11", 25));
			x.dir = 'r';
			if (part >= 2) {
				key_of(part == 2 ? SECRET2 : SECRET, &a);
				assert_int_equal(nr_auth_sign(&a, &x, table), 0);
			}
			send_line(fd, table);
			json_decref(table);
		}
		{
			int st;

			/* the member fails; this side then hangs up */
			if (part == 3)
				json_decref(read_line(fd, 3000));   /* its barrier line, then nothing more */
			close(fd);
			assert_int_equal(waitpid(pids[1], &st, 0), pids[1]);
			assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		close(lfd);
		printf("part %d: rank 1 rc %d: %s\n", part, t.out->rc[1], t.out->msg[1]);
		assert_int_not_equal(t.out->rc[1], 0);
		if (part == 0)
			assert_non_null(strstr(t.out->msg[1], "runs its rendezvous without a secret, and "
							      "this rank has one (job_secret of struct "
							      "nr_config): refused"));
		else if (part < 3)
			assert_non_null(strstr(t.out->msg[1], "does not prove the job's secret"));
		else
			assert_null(strstr(t.out->msg[1], "prove"));
		case_end(&t);
	}
}

/*
 * A silent connection and one that sends half a hello and stays, both before
 * rank 1, with a progress timeout longer than the bootstrap timeout: the
 * job forms all the same (rank 0 serves connections side by side).
 */
static void test_silent_peers(void **state)
{
	struct rcase t = { .secret = { SECRET, SECRET }, .late_ms = 600, .timeout_ms = 5000,
			   .boot_ms = 3000 };
	pid_t pids[RANKS_MAX];
	int quiet, slow;

	case_start(&t, 61, 2, pids);
	quiet = dial("127.0.0.60", t.env.root);
	slow = dial("127.0.0.61", t.env.root);
	assert_int_equal(send(slow, "{\"hello\":{\"rank\":1,", 19, MSG_NOSIGNAL), 19);
	case_wait(&t, 2, pids);
	close(quiet);
	close(slow);
	for (int r = 0; r < 2; r++) {
		assert_int_equal(t.out->rc[r], 0);
		assert_true(t.out->exact[r]);
	}
	case_end(&t);
}

/*
 * Proven hellos of a rank already taken (from its own address) and of a rank
 * the job does not have: turned away; the job forms when the last rank comes.
 */
static void test_wrong_ranks(void **state)
{
	struct rcase t = { .secret = { SECRET, SECRET, SECRET }, .late_ms = 2500 };
	pid_t pids[RANKS_MAX];

	case_start(&t, 71, 3, pids);
	for (int i = 0; !__atomic_load_n(&t.out->started[1], __ATOMIC_ACQUIRE); i++) {
		assert_true(i < 1000);
		usleep(10000);
	}
	usleep(700000);      /* rank 1 is in: its hello goes at once (rank 2 comes 2.5 s late) */
	assert_refused(stranger_hello(&t.env, t.env.addr[1], 1, 3, PROOF_RIGHT), "rank");
	assert_refused(stranger_hello(&t.env, "127.0.0.52", 7, 3, PROOF_RIGHT), "rank");
	assert_refused(stranger_hello(&t.env, "127.0.0.53", 0, 3, PROOF_RIGHT), "rank");
	case_wait(&t, 3, pids);
	for (int r = 0; r < 3; r++) {
		assert_int_equal(t.out->rc[r], 0);
		assert_true(t.out->exact[r]);
	}
	case_end(&t);
}

/* Without a secret rank 0 says so on stderr, once a process; with one it says nothing. */
static void test_unauthenticated_said_once(void **state)
{
	char path[64], text[4096] = "";
	struct ranks_env e;
	pid_t pid;
	int st, fd, n = 0;

	snprintf(path, sizeof(path), "/tmp/nr-rdv-stderr-%d", (int)getpid());
	ranks_env_init(&e, 81);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		for (int k = 0; k < 3; k++) {
			struct nr_config cfg;
			struct nr_comm *c;

			ranks_config(&e, 0, 2, &cfg);
			cfg.bootstrap_timeout_ms = 50;
			cfg.job_secret = k == 2 ? SECRET : NULL;
			if (nr_comm_init(&cfg, &c) != NR_ERR_TIMEOUT)
				_exit(1);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(read(fd, text, sizeof(text) - 1) > 0);
	close(fd);
	unlink(path);
	printf("%s", text);
	for (const char *p = text; (p = strstr(p, "is unauthenticated")); p++)
		n++;
	assert_int_equal(n, 1);
	assert_non_null(strstr(text, "NR_JOB_SECRET"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strays_without_proof),
		cmocka_unit_test(test_member_wrong_key),
		cmocka_unit_test(test_forged_table),
		cmocka_unit_test(test_silent_peers),
		cmocka_unit_test(test_wrong_ranks),
		cmocka_unit_test(test_unauthenticated_said_once),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (getenv("NR_TEST_FILTER"))
		cmocka_set_test_filter(getenv("NR_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
