/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rendezvous' wire, shared by the rendezvous (nr_bootstrap.c) and the
 * exchanges after it (nr_exchange.c): a rank's row of endpoints as JSON and
 * back (the formats in nr_bootstrap.c's head), a line from rank 0 to every
 * member, and the progress a wait on the sockets keeps up.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "nr_auth.h"
#include "nr_progress.h"
#include "nr_rdv.h"
#include "nr_tcp.h"
#include "nr_util.h"
#include "proto/nr_text.h"
#include "proto/roce_hdr.h"

static json_t *qp_json(const struct nr_qp_info *q)
{
	return json_pack("{s:I,s:I,s:i,s:i}", "qpn", (json_int_t)q->qpn, "psn", (json_int_t)q->psn,
			 "port", q->udp_port, "sport", q->sport);
}

json_t *nr_ep_json(const struct nr_peer *p, int i)
{
	return json_pack("{s:o,s:o,s:I,s:I}", "send", qp_json(&p->send[i]), "recv",
			 qp_json(&p->recv[i]), "va", (json_int_t)p->va[i], "rkey",
			 (json_int_t)p->rkey[i]);
}

/* Our row, or a peer's, with the c->n_channels box channels of every rank. */
json_t *nr_row_json(const struct nr_comm *c, const struct nr_peer *p)
{
	char ip[INET_ADDRSTRLEN], mac[NR_MAC_STRLEN];
	json_t *row, *box = json_array();

	row = json_pack("{s:s,s:s}", "ip", nr_ip4_str(p->ip, ip), "mac", nr_mac_str(p->mac, mac));
	for (unsigned k = 0; k < c->n_channels; k++)
		json_array_append_new(box, nr_ep_json(p, nr_box_ring(NR_ELEM_FP32, k)));
	json_object_set_new(row, "box", box);
	json_object_set_new(row, "plain", nr_ep_json(p, NR_RING_PLAIN));
	return row;
}

/*
 * A number of a row or of the table outside its field (24-bit QPN and PSN,
 * 16-bit port, 32-bit rkey, a VA below 2^63) makes the row malformed: cut to
 * fit, it would connect a ring to another QP or port with no error anywhere.
 */
bool nr_json_in_range(json_int_t v, json_int_t max)
{
	return v >= 0 && v <= max;
}

json_t *nr_box_word_json(const struct nr_comm *c, unsigned t)
{
	const struct nr_box_job *b = &c->box[t];
	json_t *o = json_pack("{s:b,s:I,s:I}", "ok", 1, "credits", (json_int_t)b->credits,
			      "result_key", (json_int_t)b->part[0].result_key);

	if (o && c->n_boxes > 1) {
		json_t *keys = json_array();

		for (unsigned k = 0; k < c->n_boxes; k++)
			json_array_append_new(keys, json_integer(b->part[k].result_key));
		json_object_set_new(o, "result_keys", keys);
	}
	return o;
}

int nr_box_word_parse(struct nr_comm *c, unsigned t, json_t *msg)
{
	struct nr_box_job *b = &c->box[t];
	json_t *keys = json_object_get(msg, "result_keys");
	json_int_t credits, key;

	if (json_unpack(msg, "{s:I,s:I}", "credits", &credits, "result_key", &key) ||
	    !nr_json_in_range(credits, UINT32_MAX) || !nr_json_in_range(key, UINT32_MAX))
		return -1;
	b->credits = (uint32_t)credits;
	b->part[0].result_key = (uint32_t)key;
	if (c->n_boxes < 2)
		return 0;
	if (json_array_size(keys) != c->n_boxes)
		return -1; /* rank 0 striped over other boxes than ours: NR_BOX differs */
	for (unsigned k = 0; k < c->n_boxes; k++) {
		json_t *v = json_array_get(keys, k);

		if (!json_is_integer(v) || !nr_json_in_range(json_integer_value(v), UINT32_MAX))
			return -1;
		b->part[k].result_key = (uint32_t)json_integer_value(v);
	}
	return 0;
}

static int qp_parse(json_t *j, struct nr_qp_info *q, uint32_t ip)
{
	json_int_t qpn, psn, port, sport;

	if (json_unpack(j, "{s:I,s:I,s:I,s:I}", "qpn", &qpn, "psn", &psn, "port", &port, "sport",
			&sport) ||
	    !nr_json_in_range(qpn, NR_BTH_QPN_MASK) || !nr_json_in_range(psn, NR_PSN_MASK) ||
	    !nr_json_in_range(port, UINT16_MAX) || !nr_json_in_range(sport, UINT16_MAX))
		return -1;
	*q = (struct nr_qp_info){ .ip = ip,
				  .qpn = (uint32_t)qpn,
				  .psn = (uint32_t)psn,
				  .udp_port = (uint16_t)port,
				  .sport = (uint16_t)sport };
	return 0;
}

int nr_ep_parse(json_t *ep, struct nr_peer *p, int i)
{
	json_t *s, *r;
	json_int_t va, rkey;

	if (json_unpack(ep, "{s:o,s:o,s:I,s:I}", "send", &s, "recv", &r, "va", &va, "rkey", &rkey) ||
	    !nr_json_in_range(va, INT64_MAX) || !nr_json_in_range(rkey, UINT32_MAX) ||
	    qp_parse(s, &p->send[i], p->ip) || qp_parse(r, &p->recv[i], p->ip))
		return -1;
	for (int k = 0; k < 6; k++)
		p->send[i].mac[k] = p->recv[i].mac[k] = p->mac[k];
	p->va[i] = va;
	p->rkey[i] = rkey;
	return 0;
}

int nr_row_parse(const struct nr_comm *c, json_t *row, struct nr_peer *p)
{
	json_t *box = json_object_get(row, "box");
	const char *ip, *mac;
	struct in_addr a;
	unsigned m[6];

	memset(p, 0, sizeof(*p));
	if (json_unpack(row, "{s:s,s:s}", "ip", &ip, "mac", &mac) ||
	    inet_pton(AF_INET, ip, &a) != 1 || json_array_size(box) != c->n_channels)
		return -1;
	p->ip = a.s_addr;
	if (sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6)
		for (int i = 0; i < 6; i++)
			p->mac[i] = m[i];
	for (unsigned k = 0; k < c->n_channels; k++)
		if (nr_ep_parse(json_array_get(box, k), p, nr_box_ring(NR_ELEM_FP32, k)))
			return -1;
	return nr_ep_parse(json_object_get(row, "plain"), p, NR_RING_PLAIN);
}

void nr_rdv_broadcast(struct nr_comm *c, json_t *msg)
{
	char err[128];

	for (int r = 1; r < c->world; r++)
		if (c->fds[r] >= 0)
			nr_link_send(c, r, msg, err, sizeof(err));
}

/* While a line is awaited: the transport keeps answering (ACKs, resends). */
void nr_rdv_idle(void *c)
{
	nr_idle_progress(c);
}

int nr_rdv_reply_ok(struct nr_comm *c, json_t *msg)
{
	const char *e;
	json_int_t code;
	int ok = 0;

	if (!json_unpack(msg, "{s:b}", "ok", &ok) && ok)
		return 0;
	e = json_string_value(json_object_get(msg, "error"));
	code = json_integer_value(json_object_get(msg, "code"));
	/* rank 0's own error code (NR_ERR_BOX, NR_ERR_CONFIG, ...) */
	if (code >= 0 || code < NR_ERR_BROKEN)
		code = NR_ERR_BOOTSTRAP;
	nr_fail(c, (int)code, "rank %d: rank 0 reports: %s", c->rank, e ? e : "malformed reply");
	json_decref(msg);
	return (int)code;
}
