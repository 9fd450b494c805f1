/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rank 0's client of the box's TCP control listener (control/PROTOCOL.md):
 * job_create for an element type's box rings (FP32's at init, a 16-bit
 * type's at its first all-reduce; one channel a box channel ring), its lease
 * renewed over the job's own connection (the one job_create went on, kept
 * open: one connection a job, however long it lives), job_destroy at
 * nr_comm_destroy; and the box's worker count, which every rank asks for with
 * NR_CHANNELS=auto.  With NR_TLS_CA every connection is TLS, the box's
 * certificate checked against that CA and the IP of NR_BOX
 * (control/tls/nr_tls.c): the token never crosses in clear.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nr_box_client.h"
#include "nr_tcp.h"
#include "nr_util.h"
#include "proto/nr_text.h"
#include "control/tls/nr_tls.h"

#define REPLY_MAX (1u << 20)

/* Connect to the box at addr (and with c->box_tls, the handshake) within
 * timeout_ms: 0, or -1 with err. */
static int conn_open(const struct nr_comm *c, const char *addr, uint32_t timeout_ms,
		     struct nr_box_conn *k, char *err, size_t errlen)
{
	char host[64];

	k->tls = NULL;
	if (nr_tcp_connect(addr, timeout_ms, &k->fd, err, errlen))
		return -1;
	if (!c->box_tls)
		return 0;
	if (nr_tls_host_of(addr, host, sizeof(host)) != 0)
		snprintf(err, errlen, "\"%s\" is not ip:port", addr);
	else
		k->tls = nr_tls_connect(c->box_tls, k->fd, host, timeout_ms, err, errlen);
	if (k->tls)
		return 0;
	close(k->fd);
	k->fd = -1;
	return -1;
}

static void conn_close(struct nr_box_conn *k)
{
	nr_tls_close(k->tls);
	k->tls = NULL;
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

/* One JSON line each way over TLS, the reply by deadline: 0, or -1 with err. */
static int tls_line(struct nr_box_conn *k, json_t *req, uint64_t deadline, json_t **reply, char *err,
		    size_t errlen)
{
	char *line = json_dumps(req, JSON_COMPACT), *buf = NULL, *nl = NULL;
	size_t len = 0, cap = 0;
	json_error_t jerr;
	int rc = -1;

	if (!line) {
		snprintf(err, errlen, "out of memory encoding JSON");
		return -1;
	}
	len = strlen(line);
	line[len++] = '\n';  /* json_dumps's NUL becomes the newline */
	if (nr_tls_send(k->tls, line, len, (uint32_t)(deadline > nr_now_ms() ? deadline - nr_now_ms() : 1),
			err, errlen))
		goto out;
	for (len = 0; !nl;) {
		uint64_t now = nr_now_ms();
		ssize_t n;

		if (len + 4096 > cap) {
			char *nb = cap >= REPLY_MAX ? NULL : realloc(buf, cap ? cap * 2 : 8192);

			if (!nb) {
				snprintf(err, errlen, "reply longer than %u bytes", REPLY_MAX);
				goto out;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		if (now >= deadline) {
			snprintf(err, errlen, "no answer within the timeout");
			goto out;
		}
		n = nr_tls_recv(k->tls, buf + len, cap - len, (uint32_t)(deadline - now), err, errlen);
		if (n < 0)
			goto out;
		if (n == 0) {
			snprintf(err, errlen, "connection closed");
			goto out;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
	}
	*reply = json_loadb(buf, (size_t)(nl - buf), 0, &jerr);
	if (!*reply || !json_is_object(*reply)) {
		snprintf(err, errlen, "bad JSON line: %s", *reply ? "not an object" : jerr.text);
		json_decref(*reply);
		*reply = NULL;
		goto out;
	}
	rc = 0;
out:
	free(line);
	free(buf);
	return rc;
}

/* Connection i of the channel on ring `ring`: rank i's send QP to rank i+1's receive QP. */
static json_t *conn_json(const struct nr_comm *c, int ring, int i)
{
	const struct nr_peer *src = &c->peers[i], *dst = &c->peers[(i + 1) % c->world];
	const struct nr_qp_info *sq = &src->send[ring], *rq = &dst->recv[ring];
	char sip[INET_ADDRSTRLEN], dip[INET_ADDRSTRLEN];
	static const uint8_t zero[6];
	json_t *o;

	o = json_pack("{s:s,s:s,s:I,s:I,s:I}", "src_ip", nr_ip4_str(src->ip, sip), "dst_ip",
		      nr_ip4_str(dst->ip, dip), "src_qpn", (json_int_t)sq->qpn,
		      "dst_qpn", (json_int_t)rq->qpn, "ipsn", (json_int_t)sq->psn);
	/* what the box steers the channel's traffic by (data: the sender's, ACKs: the receiver's) */
	if (sq->sport)
		json_object_set_new(o, "src_sport", json_integer(sq->sport));
	if (rq->sport)
		json_object_set_new(o, "dst_sport", json_integer(rq->sport));
	if (memcmp(src->mac, zero, 6) && memcmp(dst->mac, zero, 6)) {
		char m[NR_MAC_STRLEN];

		json_object_set_new(o, "src_mac", json_string(nr_mac_str(src->mac, m)));
		json_object_set_new(o, "dst_mac", json_string(nr_mac_str(dst->mac, m)));
	}
	return o;
}

/*
 * Send req on fd, read the reply by deadline.  0 with *reply the caller's, or
 * -errno with err and *reply NULL (-ETIMEDOUT: no answer in time);
 * *refused: the box answered "ok":false (err is its message).  Touches no
 * communicator state: the renew thread uses it too.
 */
static int exchange(struct nr_box_conn *k, json_t *req, uint64_t deadline, json_t **reply,
		    bool *refused, char *err, size_t errlen)
{
	int ok, rc;

	*refused = false;
	*reply = NULL;
	if (k->tls)
		rc = tls_line(k, req, deadline, reply, err, errlen);
	else if (!(rc = nr_send_json_line(k->fd, req, err, errlen)))
		rc = nr_recv_json_line(k->fd, deadline, (void **)reply, err, errlen, NULL, NULL);
	if (rc)
		return rc < 0 ? rc : -EIO;
	if (json_unpack(*reply, "{s:b}", "ok", &ok) || !ok) {
		const char *e = json_string_value(json_object_get(*reply, "error"));

		snprintf(err, errlen, "%s", e ? e : "malformed reply");
		json_decref(*reply);
		*reply = NULL;
		*refused = true;
		return -EPERM;
	}
	return 0;
}

/* Send one request to the box at addr on k, read one reply; "ok":false becomes
 * an error with the box's message. */
static int box_call(struct nr_comm *c, const char *addr, struct nr_box_conn *k, json_t *req,
		    json_t **reply, const char *what)
{
	char err[256];
	bool refused;

	if (!exchange(k, req, nr_now_ms() + c->cfg.timeout_ms, reply, &refused, err,
		      sizeof(err)))
		return 0;
	if (refused)
		return nr_fail(c, NR_ERR_BOX, "box %s refused %s: %s", addr, what, err);
	return nr_fail(c, NR_ERR_BOX, "box %s: %s: %s", addr, what, err);
}

/* Whether addr ("ip:port", "localhost:port", "[::1]:port") is this machine's loopback. */
static bool addr_loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4) || !strncmp(addr, "localhost:", 10) ||
	       !strncmp(addr, "[::1]:", 6);
}

/*
 * NR_TLS_CA's context, once (before any thread of the client runs).  Without
 * it the box would read the token (NR_TOKEN, also the rendezvous' key) in
 * clear: refused but for a box on loopback or with NR_TLS=off, the user's
 * word that the control network is trusted.
 */
static int box_tls_init(struct nr_comm *c)
{
	const char *ca = getenv("NR_TLS_CA"), *tls = getenv("NR_TLS");
	bool off = tls && !strcmp(tls, "off"), loopback = true;
	char err[320];

	if (c->box_tls)
		return 0;
	if (tls && tls[0] && !off && strcmp(tls, "on"))
		return nr_fail(c, NR_ERR_CONFIG,
			       "NR_TLS=%s: on (the default: TLS to the box, "
			       "NR_TLS_CA) or off (plain text, a trusted control network)",
			       tls);
	if (off && ca && ca[0])
		return nr_fail(c, NR_ERR_CONFIG, "NR_TLS=off with NR_TLS_CA=%s: give one of them",
			       ca);
	if (off)
		return 0;
	if (!ca || !ca[0]) {
		for (unsigned k = 0; k < c->n_boxes; k++)
			loopback = loopback && addr_loopback(c->boxes[k]);
		if (loopback)
			return 0;
		return nr_fail(c, NR_ERR_CONFIG,
			       "the box at %s (NR_BOX) in plain text would read "
			       "the token in clear, and whoever reads the control network with it: "
			       "set NR_TLS_CA to the CA certificate of the box's --tls-cert "
			       "(deploy/README.md), or NR_TLS=off where that network is trusted",
			       c->switch_addr);
	}
	c->box_tls = nr_tls_client_new(ca, err, sizeof(err));
	if (!c->box_tls)
		return nr_fail(c, NR_ERR_CONFIG, "NR_TLS_CA=%s: %s", ca, err);
	return 0;
}

/*
 * NR_TENANT, once: the tenant every request names beside its token
 * (control/PROTOCOL.md, "tenant"), so the box checks the token against that
 * tenant's alone and counts a failure against (this address, that tenant):
 * another's bad tokens from this address (SNAT) do not lock it out.
 */
static int box_tenant_init(struct nr_comm *c)
{
	const char *t = getenv("NR_TENANT");
	size_t n = t ? strlen(t) : 0;

	if (n == 0 || c->tenant[0])
		return 0;
	if (n >= sizeof(c->tenant) ||
	    strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != n)
		return nr_fail(c, NR_ERR_CONFIG,
			       "NR_TENANT=%s: a tenant's name, as the box's tenants file gives it: "
			       "1 to %zu of A-Z a-z 0-9 - _ .",
			       t, sizeof(c->tenant) - 1);
	memcpy(c->tenant, t, n + 1);
	return 0;
}

/* req (NULL: out of memory) with the token, and NR_TENANT's name when set. */
static json_t *with_auth(const struct nr_comm *c, json_t *req)
{
	if (req && (json_object_set_new(req, "token", json_string(c->token)) ||
		    (c->tenant[0] && json_object_set_new(req, "tenant", json_string(c->tenant))))) {
		json_decref(req);
		return NULL;
	}
	return req;
}

static int box_connect(struct nr_comm *c, const char *addr, struct nr_box_conn *k, const char *what)
{
	char err[320];
	int rc = box_tenant_init(c) ?: box_tls_init(c);

	if (rc)
		return rc;
	if (conn_open(c, addr, c->cfg.timeout_ms < 3000 ? c->cfg.timeout_ms : 3000, k, err,
		      sizeof(err)))
		return nr_fail(c, NR_ERR_BOX, "cannot %s with the box at %s (NR_BOX): %s%s", what,
			       addr, err,
			       strncmp(err, "TLS", 3) ? "; is netreduce-switch "
							"running with its TCP control listener there?"
						      : "");
	return 0;
}

void nr_box_client_free(struct nr_comm *c)
{
	nr_tls_client_free(c->box_tls);
	c->box_tls = NULL;
}

/*
 * One request of job part p on its own connection p->conn (opened when closed): 0
 * with *reply, or -1 with err (*refused: the box answered "ok":false).  A
 * connection that fails is closed, never used again (a late answer would
 * read as the next one's); when it was one kept from before and the box
 * closed it (idle, restarted) or answered it with an error, the request goes
 * once more on a new one.  A box that does not answer in time is not asked
 * again here.  Only one thread at a time:
 * the renew thread while it runs, rank 0's after renew_stop.
 */
static int job_call(struct nr_box_part *p, json_t *req, uint32_t timeout_ms, json_t **reply,
		    bool *refused, char *err, size_t errlen)
{
	const struct nr_comm *c = p->owner->comm;

	for (int fresh = 0; fresh < 2; fresh++) {
		bool kept = p->conn.fd >= 0;

		if (!kept && conn_open(c, p->addr, timeout_ms, &p->conn, err, errlen)) {
			*refused = false;
			return -1;
		}
		int rc = exchange(&p->conn, req, nr_now_ms() + timeout_ms, reply, refused, err,
				  errlen);

		if (!rc)
			return 0;
		conn_close(&p->conn);
		if (!kept || rc == -ETIMEDOUT)
			break;
	}
	return -1;
}

/* One job_renew of p on the part's connection.  0 or -1 with err. */
static int renew_once(struct nr_box_part *p, uint32_t timeout_ms, char *err, size_t errlen)
{
	const struct nr_comm *c = p->owner->comm;
	json_t *req, *reply;
	bool refused;
	int rc;

	req = with_auth(c, json_pack("{s:s,s:I,s:s}", "op", "job_renew", "job", (json_int_t)p->job,
				     "key", p->key));
	rc = job_call(p, req, timeout_ms, &reply, &refused, err, errlen);
	json_decref(req);
	json_decref(reply);
	if (rc && refused) {
		char why[200];

		snprintf(why, sizeof(why), "%.180s", err);
		snprintf(err, errlen, "the box refused it: %.180s", why);
	}
	return rc;
}

/*
 * Renew every third of the lease, at most NR_RENEW_MAX_MS apart so that the
 * job's connection never sits idle past the box's idle timeout (30 s).  A
 * renewal that fails is said once on stderr, naming the box and the job, and
 * tried again every second until one succeeds (said too).
 */
#define NR_RENEW_MAX_MS  10000u
#define NR_RENEW_RETRY_MS 1000u

static void *renew_main(void *arg)
{
	struct nr_box_part *b = arg;
	uint32_t period = b->lease_ms / 3 < NR_RENEW_MAX_MS ? b->lease_ms / 3 : NR_RENEW_MAX_MS;
	uint32_t retry = period < NR_RENEW_RETRY_MS ? period : NR_RENEW_RETRY_MS;
	unsigned failed = 0;

	pthread_mutex_lock(&b->lock);
	while (!b->stop) {
		uint32_t wait = failed ? retry : period;
		struct timespec ts;
		char err[256];

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += wait / 1000;
		ts.tv_nsec += (long)(wait % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&b->wake, &b->lock, &ts) != ETIMEDOUT || b->stop)
			continue;
		pthread_mutex_unlock(&b->lock);
		if (renew_once(b, period < 3000 ? period : 3000, err, sizeof(err))) {
			if (failed++ == 0)
				fprintf(stderr,
					"netreduce: box %s: renewing job %u's lease failed: %s; "
					"trying again every %u ms (the box destroys the job when "
					"%u ms pass without a renewal)\n",
					b->addr, b->job, err, retry, b->lease_ms);
		} else if (failed) {
			fprintf(stderr,
				"netreduce: box %s: job %u's lease renewed again, after %u "
				"failed tr%s\n",
				b->addr, b->job, failed, failed > 1 ? "ies" : "y");
			failed = 0;
		}
		pthread_mutex_lock(&b->lock);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static int renew_start(struct nr_box_part *b, uint32_t lease_ms)
{
	struct nr_comm *c = b->owner->comm;
	int rc;

	b->lease_ms = lease_ms;
	b->stop = false;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->wake, NULL);
	rc = pthread_create(&b->renew_th, NULL, renew_main, b);
	if (rc) {
		pthread_cond_destroy(&b->wake);
		pthread_mutex_destroy(&b->lock);
		return nr_fail(c, NR_ERR_BOX,
			       "box %s: cannot start the thread that renews job %u's "
			       "lease: %s",
			       b->addr, b->job, strerror(rc));
	}
	b->renewing = true;
	return 0;
}

static void renew_stop(struct nr_box_part *b)
{
	if (!b->renewing)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_signal(&b->wake);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->renew_th, NULL);
	pthread_cond_destroy(&b->wake);
	pthread_mutex_destroy(&b->lock);
	b->renewing = false;
}

/*
 * NR_JOB as a box job's name: at most 63 of [A-Za-z0-9._:-], anything else
 * an '_'; a 16-bit type's job gets its type after a ':' ("resnet:bf16").
 */
static const char *job_name(const char *env, unsigned t, char out[64])
{
	const char *sfx = t == NR_ELEM_FP32   ? ""
			  : t == NR_ELEM_BF16 ? ":bf16"
			  : t == NR_ELEM_FP16 ? ":fp16"
					      : ":allgather";
	size_t n = 0, room = 63 - strlen(sfx);

	for (; env[n] && n < room; n++)
		out[n] = (isalnum((unsigned char)env[n]) || strchr("._:-", env[n])) ? env[n] : '_';
	strcpy(out + n, sfx);
	return out;
}

/*
 * The job's reorder_pkts for sprayed QPs: NR_SPRAY_REORDER, else the
 * transport's window.  A sprayed packet is overtaken by at most the packets
 * in flight after it, so no reordering is taken for a loss, whatever the
 * paths' delays; the box finds the losses by port instead (a gap every port
 * moved past: agg_mon_lost).  A smaller allowance, over a 100 and a 40 Mbit/s
 * path half the window, took 2,427 reorderings for losses
 * (docs/short-slots.md, "Spraying").  At least 2 x (ports - 1), at most
 * NR_MAX_REORDER.
 */
static unsigned spray_reorder(const struct nr_comm *c)
{
	unsigned p = c->cfg.spray_ports, r = c->tp_window;

	if (c->cfg.spray_reorder)
		return c->cfg.spray_reorder;
	if (r < 2 * (p - 1))
		r = 2 * (p - 1);
	return r > NR_MAX_REORDER ? NR_MAX_REORDER : r;
}

/* job_destroy of one part (best effort: on its connection, or a new one if
 * the box closed it or restarted), its renewals stopped first. */
static void part_destroy(struct nr_box_part *p)
{
	const struct nr_comm *c = p->owner->comm;
	json_t *req, *reply = NULL;
	char err[256];
	bool refused;

	renew_stop(p);
	if (p->key[0]) {
		req = with_auth(c, json_pack("{s:s,s:I,s:s}", "op", "job_destroy", "job",
					     (json_int_t)p->job, "key", p->key));
		if (job_call(p, req, 1000, &reply, &refused, err, sizeof(err)) == 0)
			json_decref(reply);
		json_decref(req);
		p->key[0] = '\0';
	}
	conn_close(&p->conn);
}

/*
 * job_create of part bx of element type t's job: the box at c->boxes[bx]
 * sums the job's channels bx, bx + K, ... (all of them with one box).
 */
static int part_create(struct nr_comm *c, unsigned t, unsigned bx)
{
	struct nr_box_job *b = &c->box[t];
	struct nr_box_part *p = &b->part[bx];
	json_t *chans = json_array(), *spec, *req, *reply;
	unsigned stride = c->n_boxes > 1 ? c->n_boxes : 1, nch = 0;
	char name[64];
	json_int_t job, credits, rkey, lease, lease_ms;
	const char *key;
	int rc;

	rc = box_connect(c, p->addr, &p->conn, "register the job");
	if (rc) {
		json_decref(chans);
		return rc;
	}
	for (unsigned k = bx; k < c->n_channels; k += stride, nch++) {
		json_t *conns = json_array();

		for (int i = 0; i < c->world; i++)
			json_array_append_new(conns, conn_json(c, nr_box_ring(t, k), i));
		json_array_append_new(chans, json_pack("{s:o}", "conns", conns));
	}
	spec = json_pack("{s:i,s:i,s:i,s:s,s:i}", "mtu", (int)c->cfg.mtu, "msg_size",
			 (int)c->cfg.msg_size, "pool_msgs", (int)c->cfg.pool_msgs, "mode", "ordered",
			 "timeout_ms", (int)c->cfg.timeout_ms);
	if (t == NR_BOX_BOR) /* the all-gather's: OR of words, fp32's size */
		json_object_set_new(spec, "reduce", json_string("bor"));
	else if (c->reduce == NR_MAX) /* sum: the form every box version takes */
		json_object_set_new(spec, "reduce", json_string("max"));
	if (t != NR_ELEM_FP32 && t != NR_BOX_BOR) /* fp32: the same */
		json_object_set_new(spec, "dtype", json_string(nr_elem_name(t)));
	/* The P_Key of the transport's packets, where it can say: the box drops
	 * any of the job's frames with another. */
	if (nr_tp_pkey(c->tp))
		json_object_set_new(spec, "pkey", json_integer(nr_tp_pkey(c->tp)));
	/* the bound on tolerant messages; without one the form every box version takes */
	if (c->cfg.short_ppm && t != NR_BOX_BOR) { /* the all-gather is exact */
		json_object_set_new(spec, "short_ppm", json_integer(c->cfg.short_ppm));
		json_object_set_new(spec, "short_dscp", json_integer(c->cfg.short_dscp));
		json_object_set_new(spec, "short_scale", json_boolean(c->cfg.short_scale));
		/* every rank's box ring is laid out alike (nr_allreduce_box.c: a
		 * channel's message j in slot j mod S of msg_size bytes, one MR)
		 * and every rank sends equal messages: the box may build a lost
		 * first packet's RETH (docs/short-slots.md) */
		json_object_set_new(spec, "short_first", json_true());
	}
	/* priority classes: a channel each, the box emits a higher one's first;
	 * NR_PRIO_BOX=0 keeps the hosts' class channels and traffic classes but
	 * registers plain channels, the box's emission in arrival order (what the
	 * box's order adds, measured apart: e2e torch-train-prio) */
	if (c->classes && t != NR_BOX_BOR &&
	    !(getenv("NR_PRIO_BOX") && !strcmp(getenv("NR_PRIO_BOX"), "0")))
		json_object_set_new(spec, "prio_classes", json_integer(c->classes));
	/* selective repeat: the box NAKs a gap by its PSNs alone (docs/short-slots.md) */
	if (c->selective)
		json_object_set_new(spec, "selective", json_true());
	/* spraying: the ports of each connection and how far out of order they arrive */
	if (c->cfg.spray_ports > 1) {
		json_object_set_new(spec, "spray_ports", json_integer(c->cfg.spray_ports));
		json_object_set_new(spec, "reorder_pkts", json_integer(spray_reorder(c)));
	}
	if (nch > 1) /* one channel: the plain form every box version takes */
		json_object_set_new(spec, "channels", chans);
	else {
		json_object_set(spec, "conns", json_object_get(json_array_get(chans, 0), "conns"));
		json_decref(chans);
	}
	/* a lease of three progress timeouts (at least 1 s), renewed every third of
	 * it while the communicator lives (renew_main): a job whose ranks all died
	 * is gone from the box within it (docs/trust.md) */
	lease_ms = c->cfg.timeout_ms < 334 ? 1000 : 3ull * c->cfg.timeout_ms;
	req = with_auth(c, json_pack("{s:s,s:o,s:I}", "op", "job_create", "spec", spec, "lease_ms",
				     lease_ms));
	/* NR_JOB names the job in the box's metrics and logs; without it, the form
	 * every box version takes */
	if (getenv("NR_JOB") && getenv("NR_JOB")[0])
		json_object_set_new(req, "name", json_string(job_name(getenv("NR_JOB"), t, name)));
	rc = box_call(c, p->addr, &p->conn, req, &reply,
		      t == NR_ELEM_FP32   ? "job_create"
		      : t == NR_ELEM_BF16 ? "job_create of the bf16 job"
		      : t == NR_ELEM_FP16 ? "job_create of the fp16 job"
					  : "job_create of the all-gather's job (reduce bor)");
	json_decref(req);
	if (rc) {
		conn_close(&p->conn);
		return rc;
	}
	if (json_unpack(reply, "{s:I,s:s,s:I,s:I}", "job", &job, "key", &key, "credits", &credits,
			"result_key", &rkey) ||
	    credits < 1 || rkey == 0 || strlen(key) >= sizeof(p->key)) {
		json_decref(reply);
		conn_close(&p->conn);
		return nr_fail(c, NR_ERR_BOX,
			       "box %s: malformed job_create reply (need job, key, "
			       "credits >= 1, result_key != 0)",
			       p->addr);
	}
	p->job = job;
	strcpy(p->key, key);
	p->credits = credits;
	p->result_key = rkey;
	lease = json_integer_value(json_object_get(reply, "lease_ms"));
	json_decref(reply);
	if (lease > 0)    /* the job's connection stays open: its renewals go on it */
		return renew_start(p, (uint32_t)lease);
	conn_close(&p->conn); /* a box without leases: nothing keeps the connection busy */
	return 0;
}

int nr_box_job_create(struct nr_comm *c, unsigned t)
{
	struct nr_box_job *b = &c->box[t];
	unsigned n = c->n_boxes ? c->n_boxes : 1;
	int rc = 0;

	for (unsigned k = 0; !rc && k < n; k++) {
		rc = part_create(c, t, k);
		if (rc) { /* the boxes before it (and it, if it registered the job before
			   * failing) forget the job: no half-registered job */
			for (unsigned j = 0; j <= k; j++)
				part_destroy(&b->part[j]);
			return rc;
		}
	}
	b->credits = b->part[0].credits;
	for (unsigned k = 1; k < n; k++)
		if (b->part[k].credits < b->credits)
			b->credits = b->part[k].credits;
	return 0;
}

/* A counter of a reply: 0 when the box does not report it (an older box). */
static uint64_t count_of(json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static uint64_t reply_count(json_t *o, const char *name)
{
	return count_of(json_object_get(o, name));
}

/* job_status of one job part: its reply's "job" object (a new reference), or NULL with err set */
static json_t *job_status(const struct nr_comm *c, const struct nr_box_part *b, char *err,
			  size_t errlen)
{
	uint32_t timeout = c->cfg.timeout_ms < 3000 ? c->cfg.timeout_ms : 3000;
	json_t *req, *reply, *job;
	struct nr_box_conn k;
	char why[320];
	bool refused;
	int rc;

	if (conn_open(c, b->addr, timeout, &k, why, sizeof(why))) {
		snprintf(err, errlen, "cannot ask the box at %s (NR_BOX) for job %u's counters: %s",
			 b->addr, b->job, why);
		return NULL;
	}
	req = with_auth(c, json_pack("{s:s,s:I,s:s}", "op", "job_status", "job", (json_int_t)b->job,
				     "key", b->key));
	rc = exchange(&k, req, nr_now_ms() + c->cfg.timeout_ms, &reply, &refused, why, sizeof(why));
	json_decref(req);
	conn_close(&k);
	if (rc) {
		snprintf(err, errlen, "box %s %s job_status of job %u: %s", b->addr,
			 refused ? "refused" : "did not answer", b->job, why);
		return NULL;
	}
	job = json_incref(json_object_get(reply, "job"));
	json_decref(reply);
	if (!job)
		snprintf(err, errlen, "box %s: job_status of job %u without a job", b->addr, b->job);
	return job;
}

/* job_status of one job part, its counters added to *out and left_out[] */
static int job_counters_add(const struct nr_comm *c, const struct nr_box_part *b,
			    struct nr_box_counters *out, uint64_t *left_out, size_t n, char *err,
			    size_t errlen)
{
	json_t *job = job_status(c, b, err, errlen), *ctrs, *lo, *spec;

	if (!job)
		return NR_ERR_BOX;
	ctrs = json_object_get(job, "counters");
	lo = json_object_get(job, "left_out");
	spec = json_object_get(job, "spec");
	out->completed += reply_count(job, "completed");
	out->short_slots += reply_count(ctrs, "short_slots");
	out->short_denied += reply_count(ctrs, "short_denied");
	out->short_ppm = (uint32_t)reply_count(spec, "short_ppm");
	out->ranks = (uint32_t)reply_count(job, "ranks");
	for (size_t i = 0; i < n; i++)
		left_out[i] += count_of(json_array_get(lo, i));
	json_decref(job);
	return 0;
}

int nr_box_counters_get(const struct nr_comm *c, struct nr_box_counters *out, uint64_t *left_out,
			size_t n, char *err, size_t errlen)
{
	int rc = 0;

	*out = (struct nr_box_counters){ 0 };
	memset(left_out, 0, n * sizeof(*left_out));
	for (unsigned t = 0; !rc && t < NR_ELEM_TYPES;
	     t++) /* the gradients' jobs, not the all-gather's */
		for (unsigned k = 0; !rc && k < c->n_boxes; k++)
			if (c->box[t].part[k].key[0])
				rc = job_counters_add(c, &c->box[t].part[k], out, left_out, n, err,
						      errlen);
	return rc;
}

int nr_box_status_get(const struct nr_comm *c, char *buf, size_t len, char *err, size_t errlen)
{
	json_t *jobs = json_array(), *o;
	char *text = NULL;
	int rc = 0;

	for (unsigned i = 0; !rc && i < NR_BOX_KINDS * c->n_boxes; i++) {
		const struct nr_box_part *p = &c->box[i / c->n_boxes].part[i % c->n_boxes];
		json_t *job;

		if (!p->key[0])
			continue;
		job = job_status(c, p, err, errlen);
		if (!job)
			rc = NR_ERR_BOX;
		else if (c->n_boxes > 1) /* which box's part: its control address */
			json_object_set_new(job, "box", json_string(p->addr));
		if (job)
			json_array_append_new(jobs, job);
	}
	if (rc) {
		json_decref(jobs);
		return rc;
	}
	o = json_pack("{s:o}", "jobs", jobs);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return NR_ERR_NOMEM;
	}
	if (strlen(text) >= len) {
		snprintf(err, errlen, "the box's job_status takes %zu bytes, the buffer has %zu",
			 strlen(text) + 1, len);
		rc = NR_ERR_INVALID;
	} else {
		memcpy(buf, text, strlen(text) + 1);
	}
	free(text);
	return rc;
}

int nr_box_workers(struct nr_comm *c, unsigned *workers)
{
	json_t *req, *reply, *w;
	struct nr_box_conn k;
	int rc = box_connect(c, c->boxes[0], &k, "ask for the worker count (NR_CHANNELS=auto)");

	if (rc)
		return rc;
	req = with_auth(c, json_pack("{s:s}", "op", "backend_info"));
	rc = box_call(c, c->boxes[0], &k, req, &reply, "backend_info");
	json_decref(req);
	conn_close(&k);
	if (rc)
		return rc;
	/* a backend without workers (fpga) runs a job as one channel */
	w = json_object_get(json_object_get(reply, "backend"), "workers");
	*workers = json_is_integer(w) && json_integer_value(w) > 0 ? (unsigned)json_integer_value(w) : 1;
	json_decref(reply);
	return 0;
}

void nr_box_job_destroy(struct nr_comm *c, unsigned t)
{
	for (unsigned k = 0; k < c->n_boxes; k++)
		part_destroy(&c->box[t].part[k]);
}
