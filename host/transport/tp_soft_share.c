/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport, one receive socket for the transports of a process on one
 * (address, port): the registry of shared sockets, the QPNs each transport
 * claimed on it, and the packets one transport read for another
 * (tp_soft_share.h says why).
 *
 * Locking: shares_mu guards the registry (join, add, leave; held from a
 * join that found no share through the bind to its add, so two transports
 * opened at once on one address never both bind); a share's mu its claims
 * and every member's inbox; its rx_mu the socket's reads (a member holds it
 * from before it takes its inbox to the end of its batch's delivery, passing
 * as it goes; one that finds it held takes its inbox and reads nothing).
 * Order: shares_mu or rx_mu, then mu.  A packet passed is copied under mu
 * and the owner's wake descriptor (an eventfd in its ppoll) written when its
 * inbox was empty: the descriptor is readable exactly while the inbox holds
 * packets, so an owner asleep in ppoll wakes for them.  An inbox holds at
 * most SOFT_INBOX_BYTES, as a socket's receive buffer would: past that the
 * reader drops the packet and counts it (rx_pass_drop).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "tp_soft_share.h"

struct soft_claim {
	uint32_t qpn;
	struct soft_tp *tp;
};

struct soft_share {
	struct soft_share *next;
	pid_t pid;   /* the process that bound it (a fork's child does not share) */
	uint32_t ip; /* network order */
	uint16_t port;
	int fd;
	bool gro;
	unsigned refs;
	pthread_mutex_t mu;    /* claims, members' inboxes */
	pthread_mutex_t rx_mu; /* the socket's reads */
	struct soft_claim *claims;
	unsigned nclaims, claims_cap;
};

static pthread_mutex_t shares_mu = PTHREAD_MUTEX_INITIALIZER;
static struct soft_share *shares;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A fork holds shares_mu across itself: the child's copy is never locked by a
 * thread the child does not have (one in a join's bind, in another thread). */
static void shares_lock(void)
{
	pthread_mutex_lock(&shares_mu);
}

static void shares_unlock(void)
{
	pthread_mutex_unlock(&shares_mu);
}

static void atfork_init(void)
{
	pthread_atfork(shares_lock, shares_unlock, shares_unlock);
}

static struct soft_share *share_find(uint32_t ip, uint16_t port)
{
	pid_t me = getpid();

	for (struct soft_share *s = shares; s; s = s->next)
		if (s->ip == ip && s->port == port && s->pid == me)
			return s;
	return NULL;
}

int soft_share_join(struct soft_tp *tp)
{
	struct soft_share *s;

	pthread_once(&atfork_once, atfork_init);
	tp->in_tail = &tp->in_head;
	tp->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tp->wake_fd < 0)
		return -errno;
	pthread_mutex_lock(&shares_mu);
	s = share_find(tp->ip, tp->port);
	if (!s)
		return 0; /* shares_mu stays held: the caller binds, then adds */
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	tp->share = s;
	tp->fd = s->fd;
	tp->gro = s->gro;
	pthread_mutex_unlock(&shares_mu);
	return 1;
}

int soft_share_add(struct soft_tp *tp, bool bound)
{
	struct soft_share *s = bound ? calloc(1, sizeof(*s)) : NULL;

	if (s) {
		*s = (struct soft_share){ .ip = tp->ip,
					  .port = tp->port,
					  .fd = tp->fd,
					  .gro = tp->gro,
					  .refs = 1,
					  .pid = getpid() };
		pthread_mutex_init(&s->mu, NULL);
		pthread_mutex_init(&s->rx_mu, NULL);
		s->next = shares;
		shares = s;
		tp->share = s;
	}
	pthread_mutex_unlock(&shares_mu);
	return !bound || s ? 0 : -ENOMEM;
}

bool soft_share_leave(struct soft_tp *tp)
{
	struct soft_share *s = tp->share, **pp;
	bool last = true;

	if (!s) {
		if (tp->wake_fd >= 0)
			close(tp->wake_fd);
		tp->wake_fd = -1;
		return true;
	}
	pthread_mutex_lock(&shares_mu);
	pthread_mutex_lock(&s->mu);
	for (unsigned i = 0; i < s->nclaims;)
		if (s->claims[i].tp == tp)
			s->claims[i] = s->claims[--s->nclaims];
		else
			i++;
	soft_inject_drop(&tp->in_head, &tp->in_tail);
	tp->in_bytes = 0;
	/* no claim names tp now: nobody passes it a packet, nor writes its eventfd */
	close(tp->wake_fd);
	tp->wake_fd = -1;
	pthread_mutex_unlock(&s->mu);
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_RELAXED)) {
		last = false;
	} else {
		for (pp = &shares; *pp != s; pp = &(*pp)->next)
			;
		*pp = s->next;
		pthread_mutex_destroy(&s->mu);
		pthread_mutex_destroy(&s->rx_mu);
		free(s->claims);
		free(s);
	}
	pthread_mutex_unlock(&shares_mu);
	tp->share = NULL;
	return last;
}

static struct soft_claim *claim_find(struct soft_share *s, uint32_t qpn)
{
	for (unsigned i = 0; i < s->nclaims; i++)
		if (s->claims[i].qpn == qpn)
			return &s->claims[i];
	return NULL;
}

int soft_share_claim(struct soft_tp *tp, uint32_t qpn)
{
	struct soft_share *s = tp->share;
	int r = 0;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	if (claim_find(s, qpn)) {
		r = -EEXIST;
	} else if (s->nclaims == s->claims_cap) {
		unsigned ncap = s->claims_cap ? s->claims_cap * 2 : 16;
		struct soft_claim *n = realloc(s->claims, ncap * sizeof(*n));

		if (n) {
			s->claims = n;
			s->claims_cap = ncap;
		} else {
			r = -ENOMEM;
		}
	}
	if (!r)
		s->claims[s->nclaims++] = (struct soft_claim){ qpn, tp };
	pthread_mutex_unlock(&s->mu);
	return r;
}

void soft_share_release(struct soft_tp *tp, uint32_t qpn)
{
	struct soft_share *s = tp->share;
	struct soft_claim *c;

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	c = claim_find(s, qpn);
	if (c && c->tp == tp)
		*c = s->claims[--s->nclaims];
	pthread_mutex_unlock(&s->mu);
}

bool soft_share_alone(const struct soft_tp *tp)
{
	/* refs changes under shares_mu only; a stale read costs one peek or one batch */
	return !tp->share || __atomic_load_n(&tp->share->refs, __ATOMIC_RELAXED) == 1;
}

bool soft_share_foreign(struct soft_tp *tp, uint32_t qpn)
{
	struct soft_share *s = tp->share;
	struct soft_claim *c;
	bool foreign;

	pthread_mutex_lock(&s->mu);
	c = claim_find(s, qpn);
	foreign = c && c->tp != tp;
	pthread_mutex_unlock(&s->mu);
	return foreign;
}

enum soft_pass soft_share_pass(struct soft_tp *tp, uint32_t qpn, const uint8_t *pkt, uint32_t len,
			       const struct sockaddr_in *from)
{
	struct soft_share *s = tp->share;
	enum soft_pass r = SOFT_PASS_NONE;
	struct soft_claim *c;

	if (!s)
		return SOFT_PASS_NONE;
	pthread_mutex_lock(&s->mu);
	c = claim_find(s, qpn);
	if (c && c->tp != tp) {
		struct soft_tp *to = c->tp;
		struct soft_inject *in = to->in_bytes + len <= SOFT_INBOX_BYTES && len <= SOFT_PKT_MAX
						 ? malloc(sizeof(*in) + len)
						 : NULL;

		r = SOFT_PASS_DROPPED;
		if (in) {
			in->next = NULL;
			in->from = *from;
			in->len = len;
			memcpy(in->data, pkt, len);
			if (!to->in_head)
				eventfd_write(to->wake_fd, 1); /* below its maximum: always taken */
			*to->in_tail = in;
			to->in_tail = &in->next;
			to->in_bytes += len;
			r = SOFT_PASS_DONE;
		}
	}
	pthread_mutex_unlock(&s->mu);
	return r;
}

struct soft_inject *soft_share_take(struct soft_tp *tp)
{
	struct soft_share *s = tp->share;
	struct soft_inject *in;
	eventfd_t v;

	if (!s)
		return NULL;
	pthread_mutex_lock(&s->mu);
	in = tp->in_head;
	if (in) {
		eventfd_read(tp->wake_fd, &v); /* readable: pass wrote it */
		tp->in_head = NULL;
		tp->in_tail = &tp->in_head;
		tp->in_bytes = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return in;
}

bool soft_share_rx_enter(struct soft_tp *tp)
{
	return !tp->share || pthread_mutex_trylock(&tp->share->rx_mu) == 0;
}

void soft_share_rx_leave(struct soft_tp *tp)
{
	if (tp->share)
		pthread_mutex_unlock(&tp->share->rx_mu);
}
