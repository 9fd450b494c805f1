/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP rendezvous at rank 0, JSON lines (jansson):
 *   rank r -> 0   {"hello":{"rank","world","mtu","msg_size","transport","box","channels"}, "peer":ROW}
 *   0 -> rank r   {"ok":true,"credits":W,"result_key":K,"peers":[ROW...]} | {"ok":false,"error":..}
 *   barrier:      r -> 0 {"barrier":WHAT}; 0 -> r {"go":WHAT[,"value":V]}
 *   plain region: r -> 0 {"region":{"va","rkey"}}; 0 -> r {"next":{"va","rkey"}}
 * ROW = {"ip","mac","box":[EP a box channel],"plain":EP},
 * EP = {"send":QP,"recv":QP,"va","rkey"}, QP = {"qpn","psn","port","sport"}.  The sockets stay open for barriers and region
 * exchanges; a rank that dies closes its socket and everyone learns it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nr_bootstrap.h"
#include "nr_box_client.h"
#include "nr_progress.h"
#include "nr_tcp.h"
#include "nr_util.h"
#include "proto/nr_text.h"
#include "proto/roce_hdr.h"

/* --- rows --- */

static json_t *qp_json(const struct nr_qp_info *q)
{
	return json_pack("{s:I,s:I,s:i,s:i}", "qpn", (json_int_t)q->qpn, "psn", (json_int_t)q->psn,
			 "port", q->udp_port, "sport", q->sport);
}

static json_t *ep_json(const struct nr_peer *p, int i)
{
	return json_pack("{s:o,s:o,s:I,s:I}", "send", qp_json(&p->send[i]), "recv",
			 qp_json(&p->recv[i]), "va", (json_int_t)p->va[i], "rkey", (json_int_t)p->rkey[i]);
}

/* Our row, or a peer's, with the c->n_channels box channels of every rank. */
static json_t *row_json(const struct nr_comm *c, const struct nr_peer *p)
{
	char ip[INET_ADDRSTRLEN], mac[NR_MAC_STRLEN];
	json_t *row, *box = json_array();

	row = json_pack("{s:s,s:s}", "ip", nr_ip4_str(p->ip, ip), "mac", nr_mac_str(p->mac, mac));
	for (unsigned k = 0; k < c->n_channels; k++)
		json_array_append_new(box, ep_json(p, nr_box_ring(NR_ELEM_FP32, k)));
	json_object_set_new(row, "box", box);
	json_object_set_new(row, "plain", ep_json(p, NR_RING_PLAIN));
	return row;
}

/*
 * A number of a row or of the table outside its field (24-bit QPN and PSN,
 * 16-bit port, 32-bit rkey, a VA below 2^63) makes the row malformed: cut to
 * fit, it would connect a ring to another QP or port with no error anywhere.
 */
static bool in_range(json_int_t v, json_int_t max)
{
	return v >= 0 && v <= max;
}

static int qp_parse(json_t *j, struct nr_qp_info *q, uint32_t ip)
{
	json_int_t qpn, psn, port, sport;

	if (json_unpack(j, "{s:I,s:I,s:I,s:I}", "qpn", &qpn, "psn", &psn, "port", &port,
			"sport", &sport) ||
	    !in_range(qpn, NR_BTH_QPN_MASK) || !in_range(psn, NR_PSN_MASK) ||
	    !in_range(port, UINT16_MAX) || !in_range(sport, UINT16_MAX))
		return -1;
	*q = (struct nr_qp_info){ .ip = ip, .qpn = (uint32_t)qpn, .psn = (uint32_t)psn,
				  .udp_port = (uint16_t)port, .sport = (uint16_t)sport };
	return 0;
}

static int ep_parse(json_t *ep, struct nr_peer *p, int i)
{
	json_t *s, *r;
	json_int_t va, rkey;

	if (json_unpack(ep, "{s:o,s:o,s:I,s:I}", "send", &s, "recv", &r, "va", &va, "rkey", &rkey) ||
	    !in_range(va, INT64_MAX) || !in_range(rkey, UINT32_MAX) ||
	    qp_parse(s, &p->send[i], p->ip) || qp_parse(r, &p->recv[i], p->ip))
		return -1;
	for (int k = 0; k < 6; k++)
		p->send[i].mac[k] = p->recv[i].mac[k] = p->mac[k];
	p->va[i] = va;
	p->rkey[i] = rkey;
	return 0;
}

static int row_parse(const struct nr_comm *c, json_t *row, struct nr_peer *p)
{
	json_t *box = json_object_get(row, "box");
	const char *ip, *mac;
	struct in_addr a;
	unsigned m[6];

	memset(p, 0, sizeof(*p));
	if (json_unpack(row, "{s:s,s:s}", "ip", &ip, "mac", &mac) || inet_pton(AF_INET, ip, &a) != 1 ||
	    json_array_size(box) != c->n_channels)
		return -1;
	p->ip = a.s_addr;
	if (sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6)
		for (int i = 0; i < 6; i++)
			p->mac[i] = m[i];
	for (unsigned k = 0; k < c->n_channels; k++)
		if (ep_parse(json_array_get(box, k), p, nr_box_ring(NR_ELEM_FP32, k)))
			return -1;
	return ep_parse(json_object_get(row, "plain"), p, NR_RING_PLAIN);
}

static json_t *hello_json(const struct nr_comm *c)
{
	return json_pack("{s:{s:i,s:i,s:i,s:i,s:s,s:b,s:i},s:o}", "hello", "rank", c->rank,
			 "world", c->world, "mtu", (int)c->cfg.mtu, "msg_size", (int)c->cfg.msg_size,
			 "transport", c->transport, "box", c->has_box, "channels", (int)c->n_channels,
			 "peer", row_json(c, &c->peers[c->rank]));
}

/*
 * Rank 0: a hello, from a connection whose far end is `from`.  1: a stray,
 * ignored (*why says what it was): not a well-formed hello, or one whose
 * endpoint row claims another address than the one it came from (members
 * connect from the address they claim, member_bootstrap).  0: rank *rank
 * joined, its row taken.  < 0: a well-addressed rank disagrees with rank 0's
 * settings (an error every rank reports).
 */
static int check_hello(struct nr_comm *c, json_t *msg, uint32_t from, int *rank, char *why,
		       size_t whylen)
{
	json_t *h = json_object_get(msg, "hello");
	int world, mtu, msg_size, box, channels;
	struct nr_peer p;
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	const char *tp;

	if (json_unpack(h, "{s:i,s:i,s:i,s:i,s:s,s:b,s:i}", "rank", rank, "world", &world, "mtu", &mtu,
			"msg_size", &msg_size, "transport", &tp, "box", &box, "channels", &channels) ||
	    row_parse(c, json_object_get(msg, "peer"), &p)) {
		snprintf(why, whylen, "from %s: not a hello of this job", nr_ip4_str(from, a));
		return 1;
	}
	if (p.ip != from) {
		snprintf(why, whylen, "from %s: a hello for rank %d that claims address %s",
			 nr_ip4_str(from, a), *rank, nr_ip4_str(p.ip, b));
		return 1;
	}
	if (*rank <= 0 || *rank >= c->world)
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rendezvous %s: %s claims rank %d of %d",
			       c->root, nr_ip4_str(from, a), *rank, c->world);
	if (c->fds[*rank] >= 0)
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rendezvous %s: two hosts claim rank %d (%s, then %s)",
			       c->root, *rank, nr_ip4_str(c->peers[*rank].ip, b), nr_ip4_str(from, a));
#define SAME(what, a, b) \
	if ((a) != (b)) \
		return nr_fail(c, NR_ERR_CONFIG, "rank %d has " what " %d, rank 0 has %d: every " \
			       "rank must use the same", *rank, (int)(a), (int)(b))
	SAME("world size (NR_WORLD)", world, c->world);
	if (mtu != (int)c->cfg.mtu)     /* each took the largest its interface carries? */
		return nr_fail(c, NR_ERR_CONFIG, "rank %d has MTU (NR_MTU) %d, rank 0 has %u: every "
			       "rank must use the same (NR_MTU unset, each takes the largest its "
			       "interface carries: set NR_MTU=%d on every rank, or raise the "
			       "smaller interface's MTU)", *rank, mtu, c->cfg.mtu,
			       mtu < (int)c->cfg.mtu ? mtu : (int)c->cfg.mtu);
	SAME("message size (NR_MSG_SIZE)", msg_size, (int)c->cfg.msg_size);
	SAME("box setting (NR_SWITCH set)", box, c->has_box);
	SAME("box channels (NR_CHANNELS)", channels, (int)c->n_channels);
#undef SAME
	if (strcmp(tp, c->transport))
		return nr_fail(c, NR_ERR_CONFIG, "rank %d uses transport %s, rank 0 uses %s", *rank,
			       tp, c->transport);
	c->peers[*rank] = p;
	return 0;
}

static int listen_root(struct nr_comm *c)
{
	char err[256];

	if (nr_tcp_listen(c->root, c->world, &c->lfd, err, sizeof(err)))
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank 0: cannot listen on %s (NR_ROOT): %s",
			       c->root, err);
	return 0;
}

/* While a line is awaited: the transport keeps answering (ACKs, resends). */
static void idle_progress(void *c)
{
	nr_idle_progress(c);
}

static int root_gather(struct nr_comm *c)
{
	uint64_t deadline = nr_now_ms() + c->cfg.bootstrap_timeout_ms;
	char err[256], stray[160] = "";
	int joined = 1, strays = 0, rc;

	while (joined < c->world) {
		struct pollfd pfd = { .fd = c->lfd, .events = POLLIN };
		int64_t left = (int64_t)deadline - (int64_t)nr_now_ms();
		int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		json_t *msg;
		uint64_t hello_by;
		int fd, rank;

		/* a signal: wait again for what is left (the accept below blocks) */
		if (ready < 0)
			continue;
		if (ready == 0) {
			int missing = 1;

			while (missing < c->world && c->fds[missing] >= 0)
				missing++;
			return nr_fail(c, NR_ERR_TIMEOUT, "rank 0: only %d of %d ranks joined at %s "
				       "within %u ms (NR_BOOTSTRAP_TIMEOUT_MS; rank %d missing)%s%.*s%s",
				       joined, c->world, c->root, c->cfg.bootstrap_timeout_ms, missing,
				       strays ? "; ignored stray connections, the last " : "",
				       strays ? 160 : 0, stray, strays ? " (a member connects from its NR_ADDR)" : "");
		}
		fd = nr_tcp_accept(c->lfd);
		if (fd < 0)
			continue;
		/* a member sends its hello as soon as it is connected: a connection
		 * silent for the progress timeout is a stray one, and must not hold
		 * up the others for the whole bootstrap timeout */
		hello_by = nr_now_ms() + c->cfg.timeout_ms;
		if (nr_recv_json_line(fd, hello_by < deadline ? hello_by : deadline, (void **)&msg,
				      err, sizeof(err), NULL, NULL)) {
			close(fd);   /* a stray connection; keep waiting for real ranks */
			continue;
		}
		rc = check_hello(c, msg, nr_tcp_peer_ip(fd), &rank, stray, sizeof(stray));
		json_decref(msg);
		if (rc) {
			close(fd);
			if (rc > 0) {   /* a stray: keep waiting for the real ranks */
				strays++;
				continue;
			}
			return rc;
		}
		c->fds[rank] = fd;
		joined++;
	}
	return 0;
}

static void root_broadcast(struct nr_comm *c, json_t *msg)
{
	char err[128];

	for (int r = 1; r < c->world; r++)
		if (c->fds[r] >= 0)
			nr_send_json_line(c->fds[r], msg, err, sizeof(err));
}

static int root_bootstrap(struct nr_comm *c)
{
	json_t *peers, *msg;
	int rc;

	rc = listen_root(c);
	if (!rc)
		rc = root_gather(c);
	if (!rc && c->has_box)
		rc = nr_box_job_create(c, NR_ELEM_FP32);
	if (rc) {
		msg = json_pack("{s:b,s:s,s:i}", "ok", 0, "error", c->err, "code", rc);
		root_broadcast(c, msg);
		json_decref(msg);
		return rc;
	}
	peers = json_array();
	for (int r = 0; r < c->world; r++)
		json_array_append_new(peers, row_json(c, &c->peers[r]));
	msg = json_pack("{s:b,s:I,s:I,s:o}", "ok", 1, "credits",
			(json_int_t)c->box[NR_ELEM_FP32].credits, "result_key",
			(json_int_t)c->box[NR_ELEM_FP32].result_key, "peers", peers);
	root_broadcast(c, msg);
	json_decref(msg);
	return 0;
}

static int member_bootstrap(struct nr_comm *c)
{
	char err[256];
	json_t *msg, *peers;
	json_int_t credits, key;
	int ok, fd;

	/* from the address our hello claims: rank 0 takes no hello from elsewhere */
	if (nr_tcp_connect_from(c->root, c->peers[c->rank].ip, c->cfg.bootstrap_timeout_ms, &fd, err,
				sizeof(err)))
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: rendezvous with rank 0 (NR_ROOT): %s",
			       c->rank, err);
	c->fds[0] = fd;
	msg = hello_json(c);
	ok = nr_send_json_line(fd, msg, err, sizeof(err));
	json_decref(msg);
	if (ok)
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: rendezvous %s: %s", c->rank, c->root, err);
	/* rank 0 may wait bootstrap_timeout_ms for late ranks, then for the box */
	if (nr_recv_json_line(fd, nr_now_ms() + c->cfg.bootstrap_timeout_ms +
				      2ull * c->cfg.timeout_ms, (void **)&msg,
			      err, sizeof(err), NULL, NULL))
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: waiting for the endpoint table from "
			       "rank 0 (%s): %s", c->rank, c->root, err);
	if (json_unpack(msg, "{s:b}", "ok", &ok) || !ok) {
		const char *e = json_string_value(json_object_get(msg, "error"));
		json_int_t code = json_integer_value(json_object_get(msg, "code"));

		/* rank 0's own error code (NR_ERR_BOX, NR_ERR_CONFIG, ...) */
		if (code >= 0 || code < NR_ERR_BROKEN)
			code = NR_ERR_BOOTSTRAP;
		nr_fail(c, (int)code, "rank %d: rank 0 reports: %s", c->rank,
			e ? e : "malformed reply");
		json_decref(msg);
		return (int)code;
	}
	if (json_unpack(msg, "{s:I,s:I,s:o}", "credits", &credits, "result_key", &key, "peers",
			&peers) || !in_range(credits, UINT32_MAX) || !in_range(key, UINT32_MAX) ||
	    json_array_size(peers) != (size_t)c->world) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed endpoint table", c->rank);
	}
	c->box[NR_ELEM_FP32].credits = credits;
	c->box[NR_ELEM_FP32].result_key = key;
	for (int r = 0; r < c->world; r++) {
		if (r != c->rank && row_parse(c, json_array_get(peers, r), &c->peers[r])) {
			json_decref(msg);
			return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed row %d", c->rank, r);
		}
	}
	json_decref(msg);
	return 0;
}

int nr_bootstrap(struct nr_comm *c)
{
	return c->rank == 0 ? root_bootstrap(c) : member_bootstrap(c);
}

/* Root: read one line from every member; member: send one line.  Then the reverse. */
static int root_collect(struct nr_comm *c, const char *what, json_t **msgs)
{
	uint64_t deadline = nr_now_ms() + c->cfg.timeout_ms;
	char err[256];

	for (int r = 1; r < c->world; r++) {
		if (nr_recv_json_line(c->fds[r], deadline, (void **)&msgs[r], err, sizeof(err),
				      idle_progress, c)) {
			for (int k = 1; k < r; k++)
				json_decref(msgs[k]);
			return nr_fail(c, strstr(err, "timeout") ? NR_ERR_TIMEOUT : NR_ERR_PEER,
				       "rank 0: %s: rank %d (%s): %s", what, r,
				       nr_ip4_str(c->peers[r].ip, (char[INET_ADDRSTRLEN]){ 0 }), err);
		}
	}
	return 0;
}

/* A barrier; with value, rank 0's *value reaches every rank in the "go" line. */
static int barrier_value(struct nr_comm *c, const char *what, uint64_t *value)
{
	char err[256];
	json_t *msg;
	json_int_t v;

	if (c->world == 1)
		return 0;
	if (c->rank == 0) {
		json_t *msgs[c->world];
		int rc = root_collect(c, what, msgs);

		if (rc)
			return rc;
		for (int r = 1; r < c->world; r++)
			json_decref(msgs[r]);
		msg = value ? json_pack("{s:s,s:I}", "go", what, "value", (json_int_t)*value)
			    : json_pack("{s:s}", "go", what);
		root_broadcast(c, msg);
		json_decref(msg);
		return 0;
	}
	msg = json_pack("{s:s}", "barrier", what);
	if (nr_send_json_line(c->fds[0], msg, err, sizeof(err)))
		goto fail;
	json_decref(msg);
	if (nr_recv_json_line(c->fds[0], nr_now_ms() + 2ull * c->cfg.timeout_ms, (void **)&msg,
			      err, sizeof(err), idle_progress, c))
		return nr_fail(c, strstr(err, "timeout") ? NR_ERR_TIMEOUT : NR_ERR_PEER,
			       "rank %d: %s: rank 0 (%s): %s", c->rank, what, c->root, err);
	if (value && json_unpack(msg, "{s:I}", "value", &v)) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: %s: malformed reply of rank 0", c->rank,
			       what);
	}
	if (value)
		*value = v;
	json_decref(msg);
	return 0;
fail:
	json_decref(msg);
	return nr_fail(c, NR_ERR_PEER, "rank %d: %s: rank 0 (%s): %s", c->rank, what, c->root, err);
}

int nr_barrier(struct nr_comm *c, const char *what)
{
	return barrier_value(c, what, NULL);
}

int nr_barrier_bcast(struct nr_comm *c, const char *what, uint64_t *value)
{
	return barrier_value(c, what, value);
}

int nr_exchange_plain_region(struct nr_comm *c)
{
	struct nr_ring *ring = &c->ring[NR_RING_PLAIN];
	char err[256];
	json_t *msg;
	json_int_t va, rkey;

	if (c->world == 1)
		return 0;
	if (c->rank == 0) {
		json_t *msgs[c->world];
		int rc = root_collect(c, "plain ring region exchange", msgs);

		if (rc)
			return rc;
		msgs[0] = json_pack("{s:{s:I,s:I}}", "region", "va", (json_int_t)ring->mr.va,
				    "rkey", (json_int_t)ring->mr.rkey);
		for (int r = 0; r < c->world; r++) {
			json_t *next = json_object_get(msgs[(r + 1) % c->world], "region");

			if (r == 0) {
				if (json_unpack(next, "{s:I,s:I}", "va", &va, "rkey", &rkey))
					rc = nr_fail(c, NR_ERR_BOOTSTRAP, "rank 1: malformed region");
				ring->peer_va = va;
				ring->peer_rkey = rkey;
				continue;
			}
			msg = json_pack("{s:O}", "next", next);
			nr_send_json_line(c->fds[r], msg, err, sizeof(err));
			json_decref(msg);
		}
		for (int r = 0; r < c->world; r++)
			json_decref(msgs[r]);
		return rc;
	}
	msg = json_pack("{s:{s:I,s:I}}", "region", "va", (json_int_t)ring->mr.va, "rkey",
			(json_int_t)ring->mr.rkey);
	if (nr_send_json_line(c->fds[0], msg, err, sizeof(err))) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_PEER, "rank %d: region exchange: rank 0 (%s): %s", c->rank,
			       c->root, err);
	}
	json_decref(msg);
	if (nr_recv_json_line(c->fds[0], nr_now_ms() + 2ull * c->cfg.timeout_ms, (void **)&msg,
			      err, sizeof(err), idle_progress, c))
		return nr_fail(c, strstr(err, "timeout") ? NR_ERR_TIMEOUT : NR_ERR_PEER,
			       "rank %d: region exchange: rank 0 (%s): %s", c->rank, c->root, err);
	if (json_unpack(msg, "{s:{s:I,s:I}}", "next", "va", &va, "rkey", &rkey)) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed region reply", c->rank);
	}
	json_decref(msg);
	ring->peer_va = va;
	ring->peer_rkey = rkey;
	return 0;
}

/* --- a 16-bit type's box job (nr_box_set_open) --- */

/* A rank's box rings of type t: {"dtype":NAME,"rings":[EP a channel]} */
static json_t *box_set_json(const struct nr_comm *c, unsigned t, const struct nr_peer *p)
{
	json_t *rings = json_array();

	for (unsigned k = 0; k < c->n_channels; k++)
		json_array_append_new(rings, ep_json(p, nr_box_ring(t, k)));
	return json_pack("{s:s,s:o}", "dtype", nr_elem_name(t), "rings", rings);
}

static int box_set_parse(const struct nr_comm *c, unsigned t, json_t *rings, struct nr_peer *p)
{
	if (json_array_size(rings) != c->n_channels)
		return -1;
	for (unsigned k = 0; k < c->n_channels; k++)
		if (ep_parse(json_array_get(rings, k), p, nr_box_ring(t, k)))
			return -1;
	return 0;
}

/*
 * Rank 0: every member's rings of type t, each checked to ask for type t
 * (ranks that disagree on the type, or one in another collective, fail every
 * rank with a message naming them), then the job registered; the table of
 * every rank's rings back to each member.
 */
static int root_box_set(struct nr_comm *c, unsigned t)
{
	json_t *msgs[c->world], *rows, *reply;
	const char *what = t == NR_ELEM_BF16 ? "opening the bf16 box job" : "opening the fp16 box job";
	int rc = root_collect(c, what, msgs);

	if (rc)
		return rc;
	for (int r = 1; r < c->world && !rc; r++) {
		json_t *set = json_object_get(msgs[r], "box_set");
		const char *dt = json_string_value(json_object_get(set, "dtype"));

		if (!set)
			rc = nr_fail(c, NR_ERR_INVALID, "rank 0: nr_allreduce with %s, but rank %d is in "
				     "another collective: every rank must make the same calls with the "
				     "same dtype, in the same order", nr_dtype_name((enum nr_dtype)t), r);
		else if (!dt || strcmp(dt, nr_elem_name(t)))
			rc = nr_fail(c, NR_ERR_INVALID, "rank 0: nr_allreduce with %s, rank %d with %s: "
				     "every rank must call it with the same dtype", nr_elem_name(t), r,
				     dt ? dt : "(none)");
		else if (box_set_parse(c, t, json_object_get(set, "rings"), &c->peers[r]))
			rc = nr_fail(c, NR_ERR_BOOTSTRAP, "rank 0: %s: malformed rings of rank %d", what,
				     r);
	}
	for (int r = 1; r < c->world; r++)
		json_decref(msgs[r]);
	if (!rc)
		rc = nr_box_job_create(c, t);
	if (rc) {
		reply = json_pack("{s:b,s:s,s:i}", "ok", 0, "error", c->err, "code", rc);
		root_broadcast(c, reply);
		json_decref(reply);
		return rc;
	}
	rows = json_array();
	for (int r = 0; r < c->world; r++)
		json_array_append_new(rows, box_set_json(c, t, &c->peers[r]));
	reply = json_pack("{s:b,s:I,s:I,s:o}", "ok", 1, "credits", (json_int_t)c->box[t].credits,
			  "result_key", (json_int_t)c->box[t].result_key, "rows", rows);
	root_broadcast(c, reply);
	json_decref(reply);
	return 0;
}

static int member_box_set(struct nr_comm *c, unsigned t)
{
	char err[256];
	json_t *msg, *rows;
	json_int_t credits, key;
	int ok;

	msg = json_pack("{s:o}", "box_set", box_set_json(c, t, &c->peers[c->rank]));
	ok = nr_send_json_line(c->fds[0], msg, err, sizeof(err));
	json_decref(msg);
	if (ok)
		return nr_fail(c, NR_ERR_PEER, "rank %d: opening the %s box job: rank 0 (%s): %s",
			       c->rank, nr_elem_name(t), c->root, err);
	/* rank 0 waits up to timeout_ms for every rank, then for the box */
	if (nr_recv_json_line(c->fds[0], nr_now_ms() + 3ull * c->cfg.timeout_ms, (void **)&msg,
			      err, sizeof(err), idle_progress, c))
		return nr_fail(c, strstr(err, "timeout") ? NR_ERR_TIMEOUT : NR_ERR_PEER,
			       "rank %d: opening the %s box job: rank 0 (%s): %s (is every rank calling "
			       "nr_allreduce with %s?)", c->rank, nr_elem_name(t), c->root, err,
			       nr_dtype_name((enum nr_dtype)t));
	if (json_unpack(msg, "{s:b}", "ok", &ok) || !ok) {
		const char *e = json_string_value(json_object_get(msg, "error"));
		json_int_t code = json_integer_value(json_object_get(msg, "code"));

		if (code >= 0 || code < NR_ERR_BROKEN)
			code = NR_ERR_BOOTSTRAP;
		nr_fail(c, (int)code, "rank %d: rank 0 reports: %s", c->rank, e ? e : "malformed reply");
		json_decref(msg);
		return (int)code;
	}
	if (json_unpack(msg, "{s:I,s:I,s:o}", "credits", &credits, "result_key", &key, "rows", &rows) ||
	    !in_range(credits, UINT32_MAX) || !in_range(key, UINT32_MAX) ||
	    json_array_size(rows) != (size_t)c->world) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed %s box table", c->rank,
			       nr_elem_name(t));
	}
	for (int r = 0; r < c->world; r++)
		if (r != c->rank &&
		    box_set_parse(c, t, json_object_get(json_array_get(rows, r), "rings"), &c->peers[r])) {
			json_decref(msg);
			return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed %s box row %d", c->rank,
				       nr_elem_name(t), r);
		}
	c->box[t].credits = credits;
	c->box[t].result_key = key;
	json_decref(msg);
	return 0;
}

int nr_exchange_box_set(struct nr_comm *c, unsigned t)
{
	return c->rank == 0 ? root_box_set(c, t) : member_box_set(c, t);
}

void nr_bootstrap_close(struct nr_comm *c)
{
	if (c->fds)
		for (int r = 0; r < c->world; r++)
			if (c->fds[r] >= 0)
				close(c->fds[r]);
	if (c->lfd >= 0)
		close(c->lfd);
}
