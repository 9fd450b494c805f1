/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steering a channel's frames to the RX queue of its worker (see dp_steer.h):
 * rte_flow rules by UDP source port where the PMD has rte_flow, the owner
 * map's hand-off everywhere else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_flow.h>

#include "dataplane/dpdk/dp_log.h"
#include "dataplane/dpdk/dp_steer.h"
#include "proto/roce_hdr.h"

const char *dp_steer_name(enum dp_steer s)
{
	return s == DP_STEER_FLOW ? "rte_flow" : s == DP_STEER_SOFT ? "software" : "none";
}

/* One direction of a connection: frames from (saddr, sport) to (daddr, 4791). */
struct steer_match {
	uint32_t saddr, daddr;     /* network order */
	uint16_t sport;            /* host order */
};

/* validate (create false) or create the rule sending m to queue q of port; NULL on failure. */
static struct rte_flow *rule(uint16_t port, const struct steer_match *m, uint16_t q, bool create,
			     int *rc, struct rte_flow_error *fe)
{
	const struct rte_flow_attr attr = { .ingress = 1 };
	const struct rte_flow_item_ipv4 ip = { .hdr = { .src_addr = m->saddr, .dst_addr = m->daddr } };
	const struct rte_flow_item_ipv4 ip_mask = { .hdr = { .src_addr = RTE_BE32(0xffffffff),
							     .dst_addr = RTE_BE32(0xffffffff) } };
	const struct rte_flow_item_udp udp = { .hdr = { .src_port = rte_cpu_to_be_16(m->sport),
							.dst_port = RTE_BE16(NR_ROCEV2_PORT) } };
	const struct rte_flow_item_udp udp_mask = { .hdr = { .src_port = RTE_BE16(0xffff),
							     .dst_port = RTE_BE16(0xffff) } };
	const struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &ip, .mask = &ip_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp, .mask = &udp_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_action_queue queue = { .index = q };
	const struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &queue },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow *f = NULL;

	memset(fe, 0, sizeof(*fe));
	if (create) {
		f = rte_flow_create(port, &attr, pattern, actions, fe);
		*rc = f ? 0 : -rte_errno;
	} else {
		*rc = rte_flow_validate(port, &attr, pattern, actions, fe);
	}
	return f;
}

/*
 * A port gets rte_flow steering when a rule of the kind the channels need can
 * be created on it (and is removed at once): validation alone is not enough,
 * some PMDs validate rules they cannot install.  The probe matches TEST-NET
 * addresses (RFC 5737), which no job uses.
 */
void dp_steer_probe(struct dp_box *b, struct dp_port *p)
{
	const struct steer_match probe = { .saddr = RTE_BE32(0xC0000201), .daddr = RTE_BE32(0xC0000202),
					   .sport = 0xC000 };
	struct rte_flow_error fe;
	struct rte_flow *f;
	int rc;

	p->steer_why[0] = '\0';
	if (b->n_workers < 2) {
		p->steer = DP_STEER_NONE;
		return;
	}
	p->steer = DP_STEER_SOFT;
	if (p->n_rxq < b->n_workers) {
		snprintf(p->steer_why, sizeof(p->steer_why),
			 "%u RX queue%s for %u workers (driver %s)", p->n_rxq, p->n_rxq == 1 ? "" : "s",
			 b->n_workers, p->driver);
		return;
	}
	rule(p->id, &probe, (uint16_t)(p->n_rxq - 1), false, &rc, &fe);
	f = rc == 0 ? rule(p->id, &probe, (uint16_t)(p->n_rxq - 1), true, &rc, &fe) : NULL;
	if (f != NULL) {
		rte_flow_destroy(p->id, f, &fe);
		p->steer = DP_STEER_FLOW;
		return;
	}
	snprintf(p->steer_why, sizeof(p->steer_why), "driver %s: %s%s%s", p->driver,
		 rc == -ENOSYS || rc == -ENOTSUP ? "no rte_flow" : "rte_flow refuses UDP source port rules",
		 fe.message ? ": " : "", fe.message ? fe.message : "");
}

static void add_one(struct dp_chan *ch, const struct dp_port *p, const struct steer_match *m)
{
	struct rte_flow_error fe;
	struct rte_flow *f;
	int rc;

	f = rule(p->id, m, ch->worker, true, &rc, &fe);
	if (f == NULL) {
		DP_LOG_RL(WARNING, "port %u (%s): rte_flow rule for job %u channel %u refused: %s (%s); "
			  "its frames are handed over in software", p->id, p->name, ch->id, ch->ch,
			  rte_strerror(-rc), fe.message ? fe.message : "no detail");
		return;
	}
	ch->flows[ch->n_flows++] = (struct dp_flow){ .port = p->id, .flow = f };
}

void dp_steer_add(struct dp_box *b, struct dp_chan *ch)
{
	const struct nr_job_spec *s = ch->spec;
	unsigned n_flow_ports = 0;

	for (unsigned i = 0; i < b->n_ports; i++)
		n_flow_ports += b->ports[i].steer == DP_STEER_FLOW;
	if (n_flow_ports == 0)
		return;
	ch->flows = calloc((size_t)n_flow_ports * 2 * s->n_conns, sizeof(*ch->flows));
	if (ch->flows == NULL) {
		DP_LOG(WARNING, "job %u channel %u: no memory for its steering rules; its frames are "
		       "handed over in software", ch->id, ch->ch);
		return;
	}
	for (unsigned i = 0; i < b->n_ports; i++) {
		if (b->ports[i].steer != DP_STEER_FLOW)
			continue;
		for (uint32_t k = 0; k < s->n_conns; k++) {
			const struct nr_conn_spec *c = &s->conns[k];
			const struct steer_match data = { .saddr = c->src_ip, .daddr = c->dst_ip, .sport = c->src_sport };
			const struct steer_match ack = { .saddr = c->dst_ip, .daddr = c->src_ip, .sport = c->dst_sport };

			if (c->src_sport)
				add_one(ch, &b->ports[i], &data);
			if (c->dst_sport)
				add_one(ch, &b->ports[i], &ack);
		}
	}
}

void dp_steer_del(struct dp_box *b, struct dp_chan *ch)
{
	struct rte_flow_error fe;

	(void)b;
	for (unsigned i = 0; i < ch->n_flows; i++)
		if (rte_flow_destroy(ch->flows[i].port, ch->flows[i].flow, &fe) != 0)
			DP_LOG(WARNING, "port %u: cannot remove a steering rule of job %u channel %u: %s",
			       ch->flows[i].port, ch->id, ch->ch, fe.message ? fe.message : "no detail");
	free(ch->flows);
	ch->flows = NULL;
	ch->n_flows = 0;
}
