/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the ranks exchange over the rendezvous' sockets once it is done
 * (nr_bootstrap.h): barriers (one carrying rank 0's value), the plain
 * ring's regions, and a 16-bit type's box job (nr_box_set_open): every
 * rank's rings in, the job registered at rank 0, the table back out.  The
 * lines' formats are in nr_bootstrap.c's head; with a key every line
 * carries its proof (nr_link_send, nr_link_recv).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nr_bootstrap.h"
#include "nr_box_client.h"
#include "nr_auth.h"
#include "nr_progress.h"
#include "nr_rdv.h"
#include "nr_tcp.h"
#include "nr_util.h"
#include "proto/nr_text.h"

/* Root: read one line from every member; member: send one line.  Then the reverse. */
static int root_collect(struct nr_comm *c, const char *what, json_t **msgs)
{
	uint64_t deadline = nr_now_ms() + c->cfg.timeout_ms;
	char err[256];

	for (int r = 1; r < c->world; r++) {
		if (nr_link_recv(c, r, deadline, (void **)&msgs[r], err, sizeof(err), nr_rdv_idle, c)) {
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
		nr_rdv_broadcast(c, msg);
		json_decref(msg);
		return 0;
	}
	msg = json_pack("{s:s}", "barrier", what);
	if (nr_link_send(c, 0, msg, err, sizeof(err)))
		goto fail;
	json_decref(msg);
	if (nr_link_recv(c, 0, nr_now_ms() + 2ull * c->cfg.timeout_ms, (void **)&msg, err,
			 sizeof(err), nr_rdv_idle, c))
		return nr_fail(c, strstr(err, "timeout") ? NR_ERR_TIMEOUT : NR_ERR_PEER,
			       "rank %d: %s: rank 0 (%s): %s", c->rank, what, c->root, err);
	if (value && json_unpack(msg, "{s:I}", "value", &v)) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: %s: malformed reply of rank 0",
			       c->rank, what);
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
			nr_link_send(c, r, msg, err, sizeof(err));
			json_decref(msg);
		}
		for (int r = 0; r < c->world; r++)
			json_decref(msgs[r]);
		return rc;
	}
	msg = json_pack("{s:{s:I,s:I}}", "region", "va", (json_int_t)ring->mr.va, "rkey",
			(json_int_t)ring->mr.rkey);
	if (nr_link_send(c, 0, msg, err, sizeof(err))) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_PEER, "rank %d: region exchange: rank 0 (%s): %s", c->rank,
			       c->root, err);
	}
	json_decref(msg);
	if (nr_link_recv(c, 0, nr_now_ms() + 2ull * c->cfg.timeout_ms, (void **)&msg, err,
			 sizeof(err), nr_rdv_idle, c))
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

/* The call that opens box job t, for messages: "nr_allreduce with NR_BF16", "nr_allgather". */
static const char *opener(unsigned t, char buf[48])
{
	if (t == NR_BOX_BOR)
		return "nr_allgather";
	snprintf(buf, 48, "nr_allreduce with %s", nr_dtype_name((enum nr_dtype)t));
	return buf;
}

/* A rank's box rings of type t: {"dtype":NAME,"rings":[EP a channel]} */
static json_t *box_set_json(const struct nr_comm *c, unsigned t, const struct nr_peer *p)
{
	json_t *rings = json_array();

	for (unsigned k = 0; k < c->n_channels; k++)
		json_array_append_new(rings, nr_ep_json(p, nr_box_ring(t, k)));
	return json_pack("{s:s,s:o}", "dtype", nr_box_kind_name(t), "rings", rings);
}

static int box_set_parse(const struct nr_comm *c, unsigned t, json_t *rings, struct nr_peer *p)
{
	if (json_array_size(rings) != c->n_channels)
		return -1;
	for (unsigned k = 0; k < c->n_channels; k++)
		if (nr_ep_parse(json_array_get(rings, k), p, nr_box_ring(t, k)))
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
	const char *what = t == NR_ELEM_BF16   ? "opening the bf16 box job"
			   : t == NR_ELEM_FP16 ? "opening the fp16 box job"
					       : "opening the all-gather's box job";
	int rc = root_collect(c, what, msgs);

	if (rc)
		return rc;
	for (int r = 1; r < c->world && !rc; r++) {
		json_t *set = json_object_get(msgs[r], "box_set");
		char call[48];
		const char *dt = json_string_value(json_object_get(set, "dtype"));

		if (!set)
			rc = nr_fail(c, NR_ERR_INVALID,
				     "rank 0: %s, but rank %d is in "
				     "another collective: every rank must make the same calls with the "
				     "same dtype, in the same order",
				     opener(t, call), r);
		else if (!dt || strcmp(dt, nr_box_kind_name(t)))
			rc = nr_fail(c, NR_ERR_INVALID,
				     t == NR_BOX_BOR
					     ? "rank 0: nr_allgather (its job %s), rank %d "
					       "opening the %s job: every rank must make the "
					       "same calls in the same order"
					     : "rank 0: nr_allreduce with %s, rank %d with %s: "
					       "every rank must call it with the same dtype",
				     nr_box_kind_name(t), r, dt ? dt : "(none)");
		else if (box_set_parse(c, t, json_object_get(set, "rings"), &c->peers[r]))
			rc = nr_fail(c, NR_ERR_BOOTSTRAP, "rank 0: %s: malformed rings of rank %d",
				     what, r);
	}
	for (int r = 1; r < c->world; r++)
		json_decref(msgs[r]);
	if (!rc)
		rc = nr_box_job_create(c, t);
	if (rc) {
		reply = json_pack("{s:b,s:s,s:i}", "ok", 0, "error", c->err, "code", rc);
		nr_rdv_broadcast(c, reply);
		json_decref(reply);
		return rc;
	}
	rows = json_array();
	for (int r = 0; r < c->world; r++)
		json_array_append_new(rows, box_set_json(c, t, &c->peers[r]));
	reply = nr_box_word_json(c, t);
	json_object_set_new(reply, "rows", rows);
	nr_rdv_broadcast(c, reply);
	json_decref(reply);
	return 0;
}

static int member_box_set(struct nr_comm *c, unsigned t)
{
	char err[256], call[48];
	json_t *msg, *rows;
	int ok;

	msg = json_pack("{s:o}", "box_set", box_set_json(c, t, &c->peers[c->rank]));
	ok = nr_link_send(c, 0, msg, err, sizeof(err));
	json_decref(msg);
	if (ok)
		return nr_fail(c, NR_ERR_PEER, "rank %d: opening the %s box job: rank 0 (%s): %s",
			       c->rank, nr_box_kind_name(t), c->root, err);
	/* rank 0 waits up to timeout_ms for every rank, then for the box */
	if (nr_link_recv(c, 0, nr_now_ms() + 3ull * c->cfg.timeout_ms, (void **)&msg, err,
			 sizeof(err), nr_rdv_idle, c))
		return nr_fail(c, strstr(err, "timeout") ? NR_ERR_TIMEOUT : NR_ERR_PEER,
			       "rank %d: opening the %s box job: rank 0 (%s): %s (is every rank calling "
			       "%s?)",
			       c->rank, nr_box_kind_name(t), c->root, err, opener(t, call));
	if ((ok = nr_rdv_reply_ok(c, msg)))
		return ok;
	rows = json_object_get(msg, "rows");
	if (nr_box_word_parse(c, t, msg) || json_array_size(rows) != (size_t)c->world) {
		json_decref(msg);
		return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed %s box table", c->rank,
			       nr_box_kind_name(t));
	}
	for (int r = 0; r < c->world; r++)
		if (r != c->rank &&
		    box_set_parse(c, t, json_object_get(json_array_get(rows, r), "rings"),
				  &c->peers[r])) {
			json_decref(msg);
			return nr_fail(c, NR_ERR_BOOTSTRAP, "rank %d: malformed %s box row %d",
				       c->rank, nr_box_kind_name(t), r);
		}
	json_decref(msg);
	return 0;
}

int nr_exchange_box_set(struct nr_comm *c, unsigned t)
{
	return c->rank == 0 ? root_box_set(c, t) : member_box_set(c, t);
}
