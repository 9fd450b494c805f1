/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's jobs, on the control side: where each channel of a job runs, the
 * QPN owner map and the steering rules (dp_steer.c) that send its frames
 * there, and the job operations the box's
 * control backend calls, each run on the owning lcore through its command
 * ring (dp_cmd.c).  A job of K channels is K jobs of the engines (ids
 * dp_chan_eid()), placed round robin over the workers from the least loaded
 * one, so each worker owns whole channels; its status sums them.  Every
 * function takes box->ctl_lock; the loop never does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dataplane/dpdk/dp_cmd.h"
#include "dataplane/dpdk/dp_jobs.h"
#include "dataplane/dpdk/dp_log.h"
#include "dataplane/dpdk/dp_steer.h"
#include "proto/nr_text.h"
#include "proto/nr_text.h"

static bool job_exists(const struct dp_box *b, uint32_t id)
{
	for (unsigned i = 0; i < b->n_chans; i++)
		if (b->chans[i].id == id)
			return true;
	return false;
}

/* Set (worker >= 0) or clear the channel's keys; room checked first (owners_room). */
static void owners_update(struct dp_box *b, const struct nr_job_spec *s, int worker)
{
	for (unsigned i = 0; i < s->n_conns; i++) {
		const struct nr_conn_spec *cs = &s->conns[i];

		if (worker >= 0) {
			int r = dp_owner_set(b->owners, cs->dst_ip, cs->dst_qpn, (unsigned)worker);

			if (r == 0)
				r = dp_owner_set(b->owners, cs->src_ip, cs->src_qpn, (unsigned)worker);
			if (r)   /* owners_room said there was: a bug, said loudly */
				DP_LOG(ERR, "owner map: conns[%u] not set (%d): its frames may "
				       "reach the wrong worker", i, r);
		} else {
			dp_owner_clear(b->owners, cs->dst_ip, cs->dst_qpn);
			dp_owner_clear(b->owners, cs->src_ip, cs->src_qpn);
		}
	}
}

/* Room in the owner map for k channels of s's connections, two keys each: else -ENOSPC. */
static int owners_room(const struct dp_box *b, const struct nr_job_spec *s, uint32_t k,
		       char *err, size_t errlen)
{
	uint64_t need = 2ull * s->n_conns * k;

	if (need <= dp_owner_room(b->owners))
		return 0;
	snprintf(err, errlen, "the box's connection owner map is full: %u connections x %u "
		 "channels need %" PRIu64 " entries, %u left; destroy a job first",
		 s->n_conns, k, need, dp_owner_room(b->owners));
	return -ENOSPC;
}

/* A connection owned by another worker's job: -EEXIST naming it. */
static int owners_conflict(struct dp_box *b, const struct nr_job_spec *s, unsigned worker,
			   char *err, size_t errlen)
{
	for (unsigned i = 0; i < s->n_conns; i++) {
		const struct nr_conn_spec *cs = &s->conns[i];
		int o = dp_owner_get(b->owners, cs->dst_ip, cs->dst_qpn);
		char ip[INET_ADDRSTRLEN];

		if (o >= 0 && (unsigned)o != worker) {
			snprintf(err, errlen, "conns[%u]: receiver %s qpn 0x%x already belongs to another job",
				 i, nr_ip4_str(cs->dst_ip, ip), cs->dst_qpn);
			return -EEXIST;
		}
	}
	return 0;
}

/*
 * Run a command on the worker of channel ch (ctl_lock held): its answer, or
 * -ETIMEDOUT / -ENOBUFS / -ENOMEM.  A command the worker did not answer in
 * time stays with it (it frees it when done).  JOB_ADD carries the channel's
 * spec and gives *credits; JOB_STATS fills *st.
 */
static int chan_cmd(struct dp_box *b, int type, const struct dp_chan *ch, uint32_t *credits,
		    struct nr_job_stats *st, char *err, size_t errlen)
{
	uint32_t eid = dp_chan_eid(ch->id, ch->ch);
	struct dp_cmd *c = dp_cmd_new(type, eid, type == DP_CMD_JOB_ADD ? ch->spec : NULL);
	int rc;

	if (c == NULL) {
		snprintf(err, errlen, "out of memory for a job command");
		return -ENOMEM;
	}
	rc = dp_cmd_call(b, b->workers[ch->worker], c, err, errlen);
	if (rc)
		return rc;
	rc = c->rc;
	if (rc && type == DP_CMD_JOB_ADD)
		snprintf(err, errlen, "%s", c->err);
	if (rc == 0 && credits)
		*credits = c->credits;
	if (rc == 0 && st)
		*st = c->st;
	free(c);
	return rc;
}

/*
 * Where the K channels of a new job go: round robin over the workers from the
 * least loaded one, skipping full ones.  -ENOSPC when the box lacks room.
 */
static int place(const struct dp_box *b, uint32_t k, struct dp_chan *nc, char *err, size_t errlen)
{
	unsigned load[DP_MAX_WORKERS] = { 0 }, start = 0, w;

	if (b->n_chans + k > DP_MAX_CHANS) {
		snprintf(err, errlen, "dataplane full: %u channels of jobs, %u more do not fit", b->n_chans, k);
		return -ENOSPC;
	}
	for (unsigned i = 0; i < b->n_chans; i++)
		load[b->chans[i].worker]++;
	for (unsigned i = 1; i < b->n_workers; i++)
		if (load[i] < load[start])
			start = i;
	for (uint32_t c = 0; c < k; c++) {
		unsigned tries = 0;

		for (w = (start + c) % b->n_workers; load[w] >= NR_MAX_JOBS && tries < b->n_workers; tries++)
			w = (w + 1) % b->n_workers;
		if (load[w] >= NR_MAX_JOBS) {
			snprintf(err, errlen, "dataplane full: %u jobs on each of %u workers", NR_MAX_JOBS,
				 b->n_workers);
			return -ENOSPC;
		}
		load[w]++;
		nc[c].worker = (uint8_t)w;
	}
	return 0;
}

/*
 * The box-wide admission budget (dp_box.c): what every job could hold
 * (nr_job_held_frames) plus spec's within b->mbuf_budget, or -ENOSPC.
 */
static int admit(struct dp_box *b, const struct nr_job_spec *spec, char *err, size_t errlen)
{
	uint64_t need = nr_job_held_frames(spec), held = 0;

	for (unsigned i = 0; i < b->n_chans; i++)
		held += nr_job_held_frames(b->chans[i].spec);
	if (need <= b->mbuf_budget && held <= b->mbuf_budget - need)
		return 0;
	b->mbufs_refused++;
	snprintf(err, errlen, "the box's mbuf budget: the job can hold %" PRIu64 " frames (ranks x "
		 "channels x pool packets), %" PRIu64 " of %" PRIu64 " are free; lower NR_POOL_MSGS or "
		 "NR_MSG_SIZE, or start the box with a larger --pool-mbufs", need,
		 held < b->mbuf_budget ? b->mbuf_budget - held : 0, b->mbuf_budget);
	return -ENOSPC;
}

/* The L2 table's clock now, on the control side (the workers' own clock). */
static uint32_t l2_now(const struct dp_box *b)
{
	return dp_l2_tick(dp_now_ns(b, rte_get_tsc_cycles()));
}

/* Drop the pins bind_ingress took for spec s (those of a bound side). */
static void unbind_ingress(struct dp_box *b, const struct nr_job_spec *s)
{
	uint32_t now = l2_now(b);

	for (unsigned i = 0; i < s->n_conns; i++) {
		if (s->conns[i].src_ingress)
			dp_l2_unpin(&b->l2, s->conns[i].src_mac, now);
		if (s->conns[i].dst_ingress)
			dp_l2_unpin(&b->l2, s->conns[i].dst_mac, now);
	}
}

/*
 * Pin one MAC of a connection for the job's owner: its ingress (port + 1), 0
 * when not learned yet (that side stays unbound); a MAC that cannot be pinned
 * refuses the job, naming why (dp_l2_pin).
 */
static int pin_one(struct dp_box *b, const uint8_t mac[6], uint32_t now, uint16_t owner,
		   uint16_t *ingress, unsigned i, const char *side, char *err, size_t errlen)
{
	char m[NR_MAC_STRLEN];
	uint16_t port;
	int rc = dp_l2_pin(&b->l2, mac, now, owner, &port);

	*ingress = 0;
	if (rc == 0)
		*ingress = (uint16_t)(port + 1);
	else if (rc == -ENOSPC)
		snprintf(err, errlen,
			 "conns[%u]: the %s's MAC %s cannot be pinned: its bucket of the "
			 "box's L2 table holds %d MACs other jobs pinned (its results would be "
			 "flooded); destroy a job, or map it in --l2-static",
			 i, side, nr_mac_str(mac, m), DP_L2_WAYS);
	else if (rc == -EACCES)
		snprintf(err, errlen,
			 "conns[%u]: the %s's MAC %s is pinned by another tenant's job: "
			 "a MAC serves one tenant's jobs (the tenants file's macs, --l2-static)",
			 i, side, nr_mac_str(mac, m));
	else if (rc == -EDQUOT)
		snprintf(err, errlen,
			 "conns[%u]: the %s's MAC %s cannot be pinned: its port holds "
			 "%u pinned MACs, the box's --l2-pin-cap",
			 i, side, nr_mac_str(mac, m), b->l2.pin_cap);
	return rc == -ENOENT ? 0 : rc;
}

/*
 * Switch mode: pin each connection's MACs to the ports they were learned on
 * (dp_l2.h) and bind the connection to them: the L2 table then never moves
 * them while the job lives (a frame claiming them from another port is
 * dropped, l2_pinned), results go to those ports, and the engine drops the
 * connection's frames from any other port (docs/trust.md).  A MAC not yet
 * learned leaves that side unbound; a spec's own values are never taken.
 * 0, or -ENOSPC with err (no pin left held).
 */
static int bind_ingress(struct dp_box *b, struct nr_job_spec *s, char *err, size_t errlen)
{
	uint32_t now = l2_now(b);
	int rc = 0;

	for (unsigned i = 0; i < s->n_conns; i++)
		s->conns[i].src_ingress = s->conns[i].dst_ingress = 0;
	if (b->cfg.mode != DP_MODE_SWITCH)
		return 0;
	for (unsigned i = 0; i < s->n_conns && rc == 0; i++) {
		struct nr_conn_spec *cs = &s->conns[i];

		rc = pin_one(b, cs->src_mac, now, s->owner, &cs->src_ingress, i, "sender", err,
			     errlen);
		if (rc == 0)
			rc = pin_one(b, cs->dst_mac, now, s->owner, &cs->dst_ingress, i, "receiver",
				     err, errlen);
	}
	if (rc)
		unbind_ingress(b, s);
	return rc;
}

int dp_box_l2_static(struct dp_box *b, const uint8_t mac[6], int port, char *err, size_t errlen)
{
	char m[NR_MAC_STRLEN];
	unsigned pins = 0;
	bool ours = false;
	int rc;

	nr_mac_str(mac, m);
	if (b->cfg.mode != DP_MODE_SWITCH) {
		snprintf(err, errlen,
			 "l2_static: a switch-mode box's (a one-armed box learns no ports)");
		return -ENOTSUP;
	}
	for (unsigned i = 0; i < b->n_ports; i++)
		ours |= port >= 0 && b->ports[i].id == port;
	if (port >= 0 && !ours) {
		snprintf(err, errlen, "l2_static: port %d is not one of the box's", port);
		return -EINVAL;
	}
	pthread_mutex_lock(&b->ctl_lock); /* as the jobs' pins are taken */
	rc = port >= 0 ? dp_l2_static(&b->l2, mac, (uint16_t)port, l2_now(b))
		       : dp_l2_unstatic(&b->l2, mac, l2_now(b), &pins);
	pthread_mutex_unlock(&b->ctl_lock);
	if (rc == -EINVAL)
		snprintf(err, errlen, "l2_static: %s: a host's MAC, not a group's or zero", m);
	else if (rc == -EEXIST)
		snprintf(err, errlen,
			 "l2_static: %s is static on another port, or pinned by a job "
			 "there: take the entry back, or destroy the job, first",
			 m);
	else if (rc == -ENOSPC)
		snprintf(err, errlen,
			 "l2_static: %s: its bucket of the L2 table holds %d static or "
			 "pinned MACs",
			 m, DP_L2_WAYS);
	else if (rc == -ENOENT)
		snprintf(err, errlen, "l2_static: %s is not static", m);
	else if (rc == -EBUSY)
		snprintf(err, errlen,
			 "l2_static: %s is pinned by %u of the jobs' connections too: "
			 "destroy those jobs first",
			 m, pins);
	else if (port >= 0)
		DP_LOG(NOTICE, "l2 static: %s on port %d, by the operator", m, port);
	else
		DP_LOG(NOTICE, "l2 static: %s taken back by the operator: learned again", m);
	return rc;
}

/* Forget channel i of the table (its engine job is gone). */
static void chan_forget(struct dp_box *b, unsigned i)
{
	dp_steer_del(b, &b->chans[i]);
	owners_update(b, b->chans[i].spec, -1);
	unbind_ingress(b, b->chans[i].spec);
	free(b->chans[i].spec);
	b->chans[i] = b->chans[--b->n_chans];
}

int dp_job_add(struct dp_box *b, uint32_t id, const struct nr_job_spec *spec,
	       uint32_t *credits, char *err, size_t errlen)
{
	const uint32_t k = nr_job_channels(spec);
	struct dp_chan nc[NR_MAX_CHANNELS] = { 0 };
	char e2[256] = "";
	uint32_t c, added = 0, bad = 0;
	int rc;

	if (id == 0 || id > DP_JOB_ID_MAX || k > NR_MAX_CHANNELS) {
		snprintf(err, errlen, "job %u of %u channels: the box takes ids 1..%u and 1..%u channels",
			 id, k, DP_JOB_ID_MAX, NR_MAX_CHANNELS);
		return -EINVAL;
	}
	pthread_mutex_lock(&b->ctl_lock);
	if (job_exists(b, id)) {
		snprintf(err, errlen, "job %u already exists on the dataplane", id);
		rc = -EEXIST;
		goto out;
	}
	rc = admit(b, spec, err, errlen);
	if (rc == 0)
		rc = owners_room(b, spec, k, err, errlen);
	if (rc == 0)
		rc = place(b, k, nc, err, errlen);
	/* each channel: its spec, no connection of another worker's job, then its engine job */
	for (c = 0; rc == 0 && c < k; c++) {
		nc[c].id = id;
		nc[c].ch = (uint8_t)c;
		nc[c].spec = malloc(nr_job_spec_size(spec->n_conns));
		if (nc[c].spec == NULL) {
			snprintf(e2, sizeof(e2), "out of memory for job %u's connections", id);
			rc = -ENOMEM;
			break;
		}
		nr_job_channel_spec(spec, c, nc[c].spec);
		bad = c;
		rc = bind_ingress(b, nc[c].spec, e2, sizeof(e2));
		if (rc)
			break;
		nc[c].bound = true;
		rc = owners_conflict(b, nc[c].spec, nc[c].worker, e2, sizeof(e2));
	}
	for (c = 0; rc == 0 && c < k; c++) {
		rc = chan_cmd(b, DP_CMD_JOB_ADD, &nc[c], credits, NULL, e2, sizeof(e2));
		if (rc == 0)
			added++;
		bad = c;
	}
	if (rc) {
		char e3[256];

		if (e2[0] && k > 1)
			snprintf(err, errlen, "channel %u: %.230s", bad, e2);
		else if (e2[0])
			snprintf(err, errlen, "%s", e2);
		while (added > 0)
			chan_cmd(b, DP_CMD_JOB_DEL, &nc[--added], NULL, NULL, e3, sizeof(e3));
		/* an add the worker did not answer in time still runs when it gets
		 * to it: a delete queued behind it removes what no record knows */
		if (rc == -ETIMEDOUT && chan_cmd(b, DP_CMD_JOB_DEL, &nc[bad], NULL, NULL, e3, sizeof(e3)))
			DP_LOG(WARNING, "job %u channel %u: its add timed out; the delete queued behind "
			       "it: %s", id, bad, e3);
		for (c = 0; c < k; c++) {
			if (nc[c].bound)
				unbind_ingress(b, nc[c].spec);
			free(nc[c].spec);
		}
		goto out;
	}
	for (c = 0; c < k; c++) {
		owners_update(b, nc[c].spec, nc[c].worker);
		dp_steer_add(b, &nc[c]);
		b->chans[b->n_chans++] = nc[c];
	}
out:
	pthread_mutex_unlock(&b->ctl_lock);
	return rc;
}

int dp_job_del(struct dp_box *b, uint32_t id)
{
	int rc = -ENOENT;
	char err[256];

	pthread_mutex_lock(&b->ctl_lock);
	for (unsigned i = b->n_chans; i-- > 0;) {
		int r;

		if (b->chans[i].id != id)
			continue;
		r = chan_cmd(b, DP_CMD_JOB_DEL, &b->chans[i], NULL, NULL, err, sizeof(err));
		if (r == 0 || r == -ENOENT) {
			chan_forget(b, i);
			if (rc == -ENOENT)
				rc = 0;
		} else {
			DP_LOG(ERR, "job %u channel %u destroy: %s", id, b->chans[i].ch, err);
			rc = r;
		}
	}
	pthread_mutex_unlock(&b->ctl_lock);
	return rc;
}

/* The engine's reason names the channel's engine id: name the job and the channel. */
static void chan_reason(char *dst, size_t len, const struct dp_chan *ch, uint32_t k, const char *reason)
{
	char eid[32];
	size_t n = (size_t)snprintf(eid, sizeof(eid), "job %u: ", dp_chan_eid(ch->id, ch->ch));

	if (k > 1 && strncmp(reason, eid, n) == 0)
		snprintf(dst, len, "job %u channel %u: %.220s", ch->id, ch->ch, reason + n);
	else if (k > 1)
		snprintf(dst, len, "channel %u: %.240s", ch->ch, reason);
	else
		snprintf(dst, len, "%s", reason);
}

int dp_job_stats(struct dp_box *b, uint32_t id, struct nr_job_stats *st)
{
	struct nr_job_stats *cs = malloc(sizeof(*cs));
	uint32_t k = 0;
	bool failed = false;
	char err[256];
	int rc = -ENOENT;

	if (cs == NULL)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&b->ctl_lock);
	for (unsigned i = 0; i < b->n_chans; i++)
		k += b->chans[i].id == id;
	for (unsigned i = 0; i < b->n_chans && k; i++) {
		const struct dp_chan *ch = &b->chans[i];

		if (ch->id != id)
			continue;
		rc = chan_cmd(b, DP_CMD_JOB_STATS, ch, NULL, cs, err, sizeof(err));
		if (rc) {
			DP_LOG(ERR, "job %u channel %u status: %s", id, ch->ch, rc == -ENOENT ? "no such job" : err);
			break;
		}
		if (ch->ch == 0) {
			st->next_emit = cs->next_emit;
			st->next_release = cs->next_release;
		}
		st->completed += cs->completed;
		st->slots += cs->slots;
		st->slots_busy += cs->slots_busy;
		for (unsigned c = 0; c < NR_ECTR_MAX; c++)
			st->ctr[c] += cs->ctr[c];
		for (unsigned r = 0; r < NR_MAX_CONNS; r++)
			st->left_out[r] += cs->left_out[r];
		for (unsigned w = 0; w < NR_SHORT_WHY_MAX; w++)
			st->short_why[w] += cs->short_why[w];
		for (unsigned cl = 0; cl < NR_MAX_CLASSES; cl++)
			st->short_cls[cl] += cs->short_cls[cl];
		st->tol_pkts += cs->tol_pkts;
		st->de_pkts += cs->de_pkts;
		st->short_de += cs->short_de;
		/* the reason of a failed channel, else the first warning */
		if (cs->reason[0] && (!st->reason[0] || (!failed && cs->state == NR_JOB_FAILED)))
			chan_reason(st->reason, sizeof(st->reason), ch, k, cs->reason);
		failed |= cs->state == NR_JOB_FAILED;
		st->ch[ch->ch] = (struct nr_chan_stats){ .state = cs->state, .worker = ch->worker,
			.next_emit = cs->next_emit, .next_release = cs->next_release,
			.completed = cs->completed };
	}
	pthread_mutex_unlock(&b->ctl_lock);
	st->state = failed ? NR_JOB_FAILED : NR_JOB_ACTIVE;
	st->n_channels = k;
	free(cs);
	return rc;
}

int dp_box_engine_counters(struct dp_box *b, uint64_t ctr[NR_ECTR_MAX])
{
	char err[256];
	int rc = 0;

	memset(ctr, 0, sizeof(uint64_t) * NR_ECTR_MAX);
	pthread_mutex_lock(&b->ctl_lock);
	for (unsigned w = 0; w < b->n_workers; w++) {
		struct dp_cmd *c = dp_cmd_new(DP_CMD_ENGINE_CTRS, 0, NULL);
		int r;

		if (c == NULL) {
			rc = -ENOMEM;
			break;
		}
		r = dp_cmd_call(b, b->workers[w], c, err, sizeof(err));
		if (r) {
			DP_LOG(WARNING, "engine counters: %s", err);
			rc = r;
			continue;
		}
		for (unsigned i = 0; i < NR_ECTR_MAX; i++)
			ctr[i] += c->eng[i];
		free(c);
	}
	pthread_mutex_unlock(&b->ctl_lock);
	return rc;
}

/* Job list snapshot for telemetry: ids and the workers of their channel 0. */
unsigned dp_box_jobs(struct dp_box *b, uint32_t *ids, unsigned *workers, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&b->ctl_lock);
	for (unsigned i = 0; i < b->n_chans && n < max; i++) {
		if (b->chans[i].ch != 0)
			continue;
		ids[n] = b->chans[i].id;
		if (workers)
			workers[n] = b->chans[i].worker;
		n++;
	}
	pthread_mutex_unlock(&b->ctl_lock);
	return n;
}
