/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator: open the transport, create the rings' QPs and regions (the
 * plain ring and the box ring's channels, nr_region.c), rendezvous
 * (nr_bootstrap.c), connect, barrier; and the teardown that mirrors it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nr_auth.h"
#include "nr_bootstrap.h"
#include "nr_box_client.h"
#include "nr_comm.h"
#include "nr_config.h"
#include "nr_progress.h"
#include "nr_region.h"
#include "nr_util.h"

int nr_post_recvs(struct nr_comm *c, struct nr_ring *r)
{
	while (r->posted < NR_RECV_DEPTH) {
		int rc = nr_tp_post_recv(r->rqp, 0);

		if (rc)
			return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: post_recv: %s", c->rank,
				       strerror(-rc));
		r->posted++;
	}
	return 0;
}

/*
 * The name and IP MTU of the interface that holds ip, or failing that whose
 * subnet holds it (127.0.0.10 on lo's 127.0.0.1/8): 0, or -1 when none does
 * or its MTU cannot be read.
 */
static int find_if_mtu(uint32_t ip, char *name, size_t len, unsigned *mtu)
{
	struct ifaddrs *ifa, *i, *hit = NULL;
	struct ifreq ifr = { 0 };
	int fd, rc = -1;

	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		uint32_t a, m;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		m = i->ifa_netmask ? ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr : ~0u;
		if (a == ip) {
			hit = i;
			break;
		}
		if (!hit && ((a ^ ip) & m) == 0)
			hit = i;
	}
	if (hit) {
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", hit->ifa_name);
		snprintf(name, len, "%s", hit->ifa_name);
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0) {
			*mtu = (unsigned)ifr.ifr_mtu;
			rc = 0;
		}
		if (fd >= 0)
			close(fd);
	}
	freeifaddrs(ifa);
	return rc;
}

/*
 * The RoCE MTU (c->cfg.mtu): NR_MTU, checked against NR_ADDR's interface, or
 * unset (0) the largest that interface carries and the message size is a
 * multiple of: 4096 on jumbo links and loopback, 1024 on a 1500-byte
 * fabric.  An NR_MTU the interface cannot carry fails here, saying what
 * would: the soft transport's packets would be refused (EMSGSIZE), an
 * RNIC's port would not take it.  An interface whose MTU cannot be read
 * leaves NR_MTU as it is, unset 1024.
 */
static int resolve_mtu(struct nr_comm *c, uint32_t ip)
{
	char ifname[IFNAMSIZ] = "?";
	unsigned ifmtu = 0;
	uint32_t fits, m;

	if (find_if_mtu(ip, ifname, sizeof(ifname), &ifmtu)) {
		if (!c->cfg.mtu)
			c->cfg.mtu = c->cfg.msg_size % 1024 ? 256 : 1024;
		return 0;
	}
	fits = nr_roce_mtu(ifmtu);
	if (c->cfg.mtu && c->cfg.mtu > fits)
		return nr_fail(c, NR_ERR_CONFIG, "rank %d: NR_MTU=%u needs an IP MTU of at least %u "
			       "on %s, the interface of NR_ADDR=%s, which has %u: raise its MTU (and "
			       "the fabric's: ip link set %s mtu %u) or use NR_MTU=%u (unset: the "
			       "largest it carries)", c->rank, c->cfg.mtu, c->cfg.mtu + NR_ROCE_HDRS,
			       ifname, c->addr, ifmtu, ifname, c->cfg.mtu + NR_ROCE_HDRS + 8,
			       fits ? fits : 256);
	if (!fits)
		return nr_fail(c, NR_ERR_CONFIG, "rank %d: %s, the interface of NR_ADDR=%s, has an "
			       "IP MTU of %u: RoCE needs at least %u (raise it: ip link set %s mtu "
			       "1500)", c->rank, ifname, c->addr, ifmtu, 256 + NR_ROCE_HDRS, ifname);
	for (m = fits; !c->cfg.mtu && m >= 256; m /= 2)
		if (c->cfg.msg_size % m == 0)
			c->cfg.mtu = m;
	return 0;
}

/* The MAC of the interface that holds ip, when there is one. */
static void find_mac(uint32_t ip, uint8_t mac[6])
{
	struct ifaddrs *ifa, *i;
	struct ifreq ifr = { 0 };
	int fd;

	memset(mac, 0, 6);
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == ip) {
			snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->ifa_name);
			fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (fd >= 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
				memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
			if (fd >= 0)
				close(fd);
			break;
		}
	}
	freeifaddrs(ifa);
}

/*
 * The transport of NR_TRANSPORT, tuned by it for what the user asked
 * (nr_tp_tune): its profile, its window for this host's link, an ACK timeout
 * whose retries span the collective's time budget (timeout_ms), so that rank
 * skew and a loaded box (on the box ring a message is acknowledged only once
 * every rank contributed it) do not look like a dead peer.
 */
static int open_transport(struct nr_comm *c)
{
	struct nr_tp_wish wish = {
		.profile = c->tp_profile[0] ? c->tp_profile : NULL,
		.link_gbps = c->cfg.inter_gbps > 0 ? c->cfg.inter_gbps : nr_link_gbps(c->addr),
		.window = c->cfg.soft_window,
		.ackreq = c->cfg.soft_ackreq,
		.budget_ms = c->cfg.timeout_ms,
		.ack_timeout = c->cfg.ack_timeout,
	};
	struct nr_tp_config tcfg = {
		.kind = c->transport,
		.local_ip = c->peers[c->rank].ip,
		.device = c->device[0] ? c->device : NULL,
		.gid_index = c->cfg.gid_index,
		.mtu = c->cfg.mtu,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.udp_port = c->cfg.udp_port,
		.tclass = c->cfg.tclass,
		.max_msg = c->cfg.msg_size,
	};
	char err[256] = "";

	if (nr_tp_tune(&tcfg, &wish, err, sizeof(err)) == 0)
		c->tp = nr_tp_open(&tcfg, err, sizeof(err));
	c->tp_window = tcfg.max_inflight;
	c->selective = tcfg.profile == NR_TP_PROFILE_SR;
	if (!c->tp)
		return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: cannot open the %s transport on %s: %s",
			       c->rank, c->transport, c->addr, err);
	return 0;
}

/*
 * How tolerant messages leave (c->short_tos): with the job's short DSCP and
 * the ECN bits of cfg.tclass (ECN is the fabric's, whatever the class), where
 * the transport marks a message of its own; exact otherwise.  verbs cannot
 * (the traffic class is the QP's): said once, by rank 0, not faked.
 */
static void short_tos_init(struct nr_comm *c)
{
	if (!c->has_box || !c->cfg.short_ppm)
		return;
	if (!nr_tp_wr_tclass(c->tp)) {
		if (c->rank == 0)
			fprintf(stderr, "netreduce: NR_SHORT_PPM=%u: the %s transport sets the traffic "
				"class per QP, not per message: tolerant all-reduces go exact (the "
				"box job keeps the bound, unused)\n", c->cfg.short_ppm, c->transport);
		return;
	}
	c->short_tos = c->cfg.short_dscp << 2 | (c->cfg.tclass & 3);
}

/*
 * Priority classes (cfg.prio_classes, with tolerant messages marked:
 * short_tos): class k's messages on box channel k with DSCP short_dscp + 8k,
 * exact ones on channel prio_classes, 8 DSCPs above the highest class.
 */
static void classes_init(struct nr_comm *c)
{
	if (c->cfg.prio_classes < 2 || c->short_tos < 0 ||
	    c->n_channels != c->cfg.prio_classes + 1u)
		return;
	c->classes = c->cfg.prio_classes;
	for (unsigned k = 0; k <= c->classes; k++)
		c->class_tos[k] = (int)((c->cfg.short_dscp + 8 * k) << 2 | (c->cfg.tclass & 3));
}

/*
 * How many box channels: the configured number, or with 0 ("auto") as many
 * as the box has workers; 1 without a box (the box ring is then unused).
 * Over K boxes a multiple of K (channel c to box c mod K): 1, the default,
 * is one a box; auto is box 0's workers a box.
 */
static int resolve_channels(struct nr_comm *c)
{
	unsigned workers = 1, k = c->n_boxes > 1 ? c->n_boxes : 1;
	int rc;

	if (!c->has_box) {
		c->n_channels = 1;
	} else if (c->cfg.prio_classes > 1) {
		if (k > 1)
			return nr_fail(c, NR_ERR_CONFIG,
				       "rank %d: NR_PRIO_CLASSES=%u over %u boxes "
				       "(NR_BOX): a box orders the classes of the channels it sums, "
				       "and no box sums them all; use one box for priority classes",
				       c->rank, c->cfg.prio_classes, k);
		c->n_channels = c->cfg.prio_classes + 1u;     /* a class each, exact above */
	} else if (c->cfg.channels) {
		c->n_channels = c->cfg.channels == 1 ? k : c->cfg.channels;
	} else {
		rc = nr_box_workers(c, &workers);
		if (rc)
			return rc;
		workers = workers < 1 ? 1 : workers;
		c->n_channels = workers * k > NR_MAX_CHANNELS ? NR_MAX_CHANNELS / k * k : workers * k;
	}
	if (c->n_channels % k) /* nr_config_check said so already; a caller's struct too */
		return nr_fail(c, NR_ERR_CONFIG,
			       "rank %d: %u channels over %u boxes: give a "
			       "multiple of %u (NR_CHANNELS)",
			       c->rank, c->n_channels, k, k);
	return 0;
}

/*
 * NR_RAILS ("eth1,eth2"): the interfaces the box channels leave by, channel
 * c by rail c mod R (one a box: rail k reaches box k), each QP's sockets
 * bound to its rail's device (the soft transport); unset, the routing table
 * picks the interface.  The rails' count is the boxes'.
 */
static int rails_init(struct nr_comm *c)
{
	const char *s = getenv("NR_RAILS");
	int n;

	if (!s || !*s || !c->has_box)
		return 0;
	n = nr_list_split(s, c->rails[0], sizeof(c->rails[0]), NR_MAX_BOXES);
	if (n < 0)
		return nr_fail(c, NR_ERR_CONFIG,
			       "NR_RAILS=%s: interface names (at most %zu characters each), "
			       "comma-separated, one a box",
			       s, sizeof(c->rails[0]) - 1);
	c->n_rails = (unsigned)n;
	if (c->n_rails != c->n_boxes)
		return nr_fail(c, NR_ERR_CONFIG,
			       "NR_RAILS=%s names %u interface%s for %u box%s "
			       "(NR_BOX): give one rail a box, rail k the one that reaches box k",
			       getenv("NR_RAILS"), c->n_rails, c->n_rails == 1 ? "" : "s",
			       c->n_boxes, c->n_boxes == 1 ? "" : "es");
	return 0;
}

static int create_ring(struct nr_comm *c, int i)
{
	struct nr_ring *r = &c->ring[i];
	int rc;

	rc = nr_tp_qp_create(c->tp, &r->sqp, &r->sinfo);
	if (!rc)
		rc = nr_tp_qp_create(c->tp, &r->rqp, &r->rinfo);
	if (rc)
		return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: %s", c->rank, nr_tp_error(c->tp));
	/* the box holds our ACKs until every rank contributed: skew is no loss */
	if (i >= NR_RING_BOX)
		nr_tp_qp_acks_lag(r->sqp);
	/* a box channel's QPs, data and ACKs, leave by the rail of its box */
	if (i >= NR_RING_BOX && c->n_rails) {
		const char *rail = c->rails[nr_ring_chan(i) % c->n_rails];

		rc = nr_tp_qp_rail(r->sqp, rail);
		if (!rc)
			rc = nr_tp_qp_rail(r->rqp, rail);
		if (rc == -ENOTSUP)
			return nr_fail(c, NR_ERR_CONFIG,
				       "rank %d: NR_RAILS=%s: the %s transport does not send a QP by "
				       "an interface of its choosing (verbs: a rail is an RDMA "
				       "device, NR_DEVICE); unset NR_RAILS and let the fabric steer "
				       "each box's channels",
				       c->rank, getenv("NR_RAILS"), c->transport);
		if (rc)
			return nr_fail(c, NR_ERR_TRANSPORT,
				       "rank %d: box channel %u on rail %s "
				       "(NR_RAILS): %s",
				       c->rank, nr_ring_chan(i), rail,
				       nr_tp_error(c->tp)[0] ? nr_tp_error(c->tp) : strerror(-rc));
	}
	/* the box ring's packets (and its ACKs) over several ECMP paths: the
	 * box's job takes the ports (spray_ports, nr_box_client.c) */
	if (i >= NR_RING_BOX && c->has_box && c->cfg.spray_ports > 1) {
		rc = nr_tp_qp_spray(r->sqp, c->cfg.spray_ports, &r->sinfo);
		if (!rc)
			rc = nr_tp_qp_spray(r->rqp, c->cfg.spray_ports, &r->rinfo);
		if (rc)
			return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: spraying the %s ring over %u UDP "
				       "source ports (NR_SPRAY_PORTS): %s", c->rank, nr_ring_name(i),
				       c->cfg.spray_ports, nr_tp_error(c->tp)[0] ?
				       nr_tp_error(c->tp) : strerror(-rc));
	}
	rc = i >= NR_RING_BOX ? nr_box_region_init(c, i) : nr_plain_region_init(c, 1 << 20);
	if (rc)
		return rc;
	c->peers[c->rank].send[i] = r->sinfo;
	c->peers[c->rank].recv[i] = r->rinfo;
	c->peers[c->rank].va[i] = r->mr.va;
	c->peers[c->rank].rkey[i] = r->mr.rkey;
	return 0;
}

static int connect_ring(struct nr_comm *c, int i)
{
	struct nr_ring *r = &c->ring[i];
	const struct nr_peer *next = &c->peers[(c->rank + 1) % c->world];
	const struct nr_peer *prev = &c->peers[(c->rank + c->world - 1) % c->world];
	int rc;

	rc = nr_tp_qp_connect(r->sqp, &next->recv[i]);
	if (!rc)
		rc = nr_tp_qp_connect(r->rqp, &prev->send[i]);
	if (rc)
		return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: cannot connect the %s ring: %s",
			       c->rank, nr_ring_name(i), strerror(-rc));
	r->peer_va = next->va[i];
	r->peer_rkey = next->rkey[i];
	return nr_post_recvs(c, r);
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static struct nr_comm *comm_alloc(const struct nr_config *cfg)
{
	struct nr_comm *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cfg = *cfg;
	copy_str(c->root, sizeof(c->root), cfg->root);
	copy_str(c->switch_addr, sizeof(c->switch_addr), cfg->switch_addr);
	copy_str(c->token, sizeof(c->token), cfg->token);
	copy_str(c->transport, sizeof(c->transport), cfg->transport);
	copy_str(c->tp_profile, sizeof(c->tp_profile), cfg->soft_profile ? cfg->soft_profile : "");
	copy_str(c->device, sizeof(c->device), cfg->device);
	copy_str(c->addr, sizeof(c->addr), cfg->addr);
	copy_str(c->job_secret, sizeof(c->job_secret), cfg->job_secret);
	c->rank = cfg->rank;
	c->world = cfg->world;
	c->has_box = cfg->switch_addr != NULL;
	if (c->has_box) { /* checked by nr_config_check: one to NR_MAX_BOXES */
		int n = nr_boxes_parse(cfg->switch_addr, c->boxes, NR_MAX_BOXES);

		c->n_boxes = n > 0 ? (unsigned)n : 1;
	}
	c->reduce = cfg->reduce && !strcmp(cfg->reduce, "max") ? NR_MAX : NR_SUM;
	c->n_channels = 1;
	c->short_tos = -1;
	c->lfd = -1;
	for (unsigned t = 0; t < NR_BOX_KINDS; t++) {
		c->box[t] = (struct nr_box_job){ .comm = c, .dtype = (uint8_t)t };
		for (unsigned k = 0; k < NR_MAX_BOXES; k++)
			c->box[t].part[k] = (struct nr_box_part){ .owner = &c->box[t],
								  .addr = c->boxes[k],
								  .conn = { .fd = -1 } };
	}
	c->peers = calloc(c->world, sizeof(*c->peers));
	c->fds = malloc(c->world * sizeof(int));
	c->links = calloc(c->world, sizeof(*c->links));
	if (!c->peers || !c->fds || !c->links) {
		free(c->peers);
		free(c->fds);
		free(c->links);
		free(c);
		return NULL;
	}
	for (int r = 0; r < c->world; r++)
		c->fds[r] = -1;
	return c;
}

static void rings_close(struct nr_comm *c)
{
	for (unsigned i = 0; i < NR_RINGS_MAX; i++) {
		struct nr_ring *r = &c->ring[i];

		if (!r->sqp && !r->rqp && !r->mem)
			continue;
		nr_tp_qp_destroy(r->sqp);
		nr_tp_qp_destroy(r->rqp);
		if (r->mem) {
			nr_tp_dereg_mr(c->tp, &r->mr);
			free(r->mem);
		}
		free(r->de);
		memset(r, 0, sizeof(*r));
	}
}

static void comm_free(struct nr_comm *c)
{
	for (unsigned t = 0; t < NR_BOX_KINDS; t++) {
		if (c->rank == 0 && c->has_box)
			nr_box_job_destroy(c, t);
	}
	nr_box_client_free(c);
	if (c->tp)
		rings_close(c);
	nr_tp_close(c->tp);
	nr_bootstrap_close(c);
	free(c->peers);
	free(c->fds);
	free(c->links);
	free(c->backlog);
	explicit_bzero(&c->auth, sizeof(c->auth));
	explicit_bzero(c->job_secret, sizeof(c->job_secret));
	free(c);
}

int nr_flat_init(const struct nr_config *cfg, bool tcp_only, struct nr_comm **comm)
{
	struct nr_comm *c;
	struct in_addr a;
	int rc = 0;

	*comm = NULL;
	c = comm_alloc(cfg);
	if (!c) {
		nr_set_tls_error("nr_comm_init: out of memory");
		return NR_ERR_NOMEM;
	}
	if (c->world == 1) {     /* nothing to connect: both collectives copy */
		for (uint32_t m = 4096; !c->cfg.mtu; m /= 2)
			if (c->cfg.msg_size % m == 0)
				c->cfg.mtu = m;
		*comm = c;
		return 0;
	}
	if (nr_auth_init(&c->auth, cfg->job_secret, cfg->token, c->err, sizeof(c->err))) {
		nr_set_tls_error("rank %d: the rendezvous' secret: %s", c->rank, c->err);
		comm_free(c);
		return NR_ERR_CONFIG;
	}
	inet_pton(AF_INET, c->addr, &a);
	c->peers[c->rank].ip = a.s_addr;
	find_mac(a.s_addr, c->peers[c->rank].mac);
	rc = resolve_mtu(c, a.s_addr);
	if (!rc && !tcp_only)
		rc = open_transport(c);
	if (!rc && !tcp_only) {
		short_tos_init(c);
		rc = rails_init(c) ?: resolve_channels(c);
		if (!rc)
			classes_init(c);
	}
	for (unsigned k = 0; !rc && !tcp_only && k <= c->n_channels; k++)   /* plain, then box */
		rc = create_ring(c, k ? nr_box_ring(NR_ELEM_FP32, k - 1) : NR_RING_PLAIN);
	if (!rc)
		rc = nr_bootstrap(c);
	if (c->lfd >= 0) {
		close(c->lfd);
		c->lfd = -1;
	}
	for (unsigned k = 0; !rc && !tcp_only && k <= c->n_channels; k++)
		rc = connect_ring(c, k ? nr_box_ring(NR_ELEM_FP32, k - 1) : NR_RING_PLAIN);
	if (!rc)
		rc = nr_barrier(c, tcp_only ? "the rendezvous of the layout" : "connecting the rings");
	if (rc) {
		nr_set_tls_error("%s", c->err);
		c->has_box = c->has_box && nr_box_job_made(&c->box[NR_ELEM_FP32]);
		comm_free(c);
		return rc;
	}
	c->box[NR_ELEM_FP32].open = c->has_box && !tcp_only;
	nr_progress_start(c);
	*comm = c;
	return 0;
}

int nr_box_set_open(struct nr_comm *c, unsigned t)
{
	int rc = 0;

	for (unsigned k = 0; !rc && k < c->n_channels; k++)
		rc = create_ring(c, nr_box_ring(t, k));
	if (!rc)
		rc = nr_exchange_box_set(c, t);
	for (unsigned k = 0; !rc && k < c->n_channels; k++)
		rc = connect_ring(c, nr_box_ring(t, k));
	if (!rc)
		rc = nr_barrier(c, "connecting a box job's rings");
	if (!rc)
		c->box[t].open = true;
	return rc;
}

void nr_flat_destroy(struct nr_comm *c)
{
	if (!c)
		return;
	nr_progress_stop(c);
	/* a healthy rank keeps answering (ACKs) until every rank is done with the rings */
	if (!c->broken && c->world > 1)
		nr_barrier(c, "nr_comm_destroy");
	comm_free(c);
}
