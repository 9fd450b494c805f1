/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress of a communicator's transport: polling it for completions, the
 * backlog of completions that belong to the next collective (a faster peer
 * already started it), and, with the soft transport, the progress thread
 * that keeps the user-space endpoint answering (ACKs, retransmissions)
 * between collectives, as an RNIC would.  c->lock is held by every public
 * call for its whole duration and by the thread around each poll.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nr_progress.h"
#include "nr_util.h"

/* Room for n more completions in the backlog. */
static int backlog_room(struct nr_comm *c, int n)
{
	if (c->head == c->nbacklog)
		c->head = c->nbacklog = 0;
	if (c->nbacklog + n <= c->capbacklog)
		return 0;
	if (c->head) {
		memmove(c->backlog, c->backlog + c->head, (c->nbacklog - c->head) * sizeof(*c->backlog));
		c->nbacklog -= c->head;
		c->head = 0;
	}
	while (c->nbacklog + n > c->capbacklog) {
		int cap = c->capbacklog ? 2 * c->capbacklog : 256;
		struct nr_wc *b;

		if (cap > NR_BACKLOG_MAX)
			return nr_fail(c, NR_ERR_PEER, "rank %d: more than %d messages of the next "
				       "collective arrived early: ranks out of step", c->rank,
				       NR_BACKLOG_MAX);
		b = realloc(c->backlog, cap * sizeof(*b));
		if (!b)
			return nr_fail(c, NR_ERR_NOMEM, "rank %d: out of memory", c->rank);
		c->backlog = b;
		c->capbacklog = cap;
	}
	return 0;
}

void nr_idle_progress(struct nr_comm *c)
{
	int n;

	if (!c->tp || c->broken)
		return;
	if (backlog_room(c, 32)) {
		c->broken = true;
		return;
	}
	n = nr_tp_poll(c->tp, c->backlog + c->nbacklog, 32, 0);
	if (n > 0)
		c->nbacklog += n;
}

int nr_poll(struct nr_comm *c, struct nr_wc *wc, int max, int timeout_ms)
{
	int n;

	if (c->nbacklog > c->head && !c->hold_backlog) {
		n = c->nbacklog - c->head < max ? c->nbacklog - c->head : max;
		memcpy(wc, c->backlog + c->head, n * sizeof(*wc));
		c->head += n;
		return n;
	}
	if (c->broken)   /* the progress thread failed */
		return NR_ERR_PEER;
	n = nr_tp_poll(c->tp, wc, max, timeout_ms);
	if (n < 0)
		return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: %s transport poll failed: %s", c->rank,
			       nr_tp_kind(c->tp), strerror(-n));
	return n;
}

int nr_defer(struct nr_comm *c, const struct nr_wc *wc)
{
	int rc = backlog_room(c, 1);

	if (rc)
		return rc;
	c->backlog[c->nbacklog++] = *wc;
	c->hold_backlog = true;
	return 0;
}

void nr_comm_lock(struct nr_comm *c)
{
	if (c->has_progress)
		pthread_mutex_lock(&c->lock);
}

void nr_comm_unlock(struct nr_comm *c)
{
	if (c->has_progress)
		pthread_mutex_unlock(&c->lock);
}

static void *progress_main(void *arg)
{
	struct nr_comm *c = arg;

	while (!c->stop) {
		if (pthread_mutex_trylock(&c->lock) == 0) {
			nr_idle_progress(c);
			pthread_mutex_unlock(&c->lock);
		}
		usleep(1000);
	}
	return NULL;
}

void nr_progress_start(struct nr_comm *c)
{
	/* the layout's rendezvous of a topology has no transport */
	if (!c->tp || !nr_tp_polled(c->tp) || c->world == 1)
		return;
	pthread_mutex_init(&c->lock, NULL);
	c->has_progress = pthread_create(&c->progress, NULL, progress_main, c) == 0;
	if (!c->has_progress)
		pthread_mutex_destroy(&c->lock);
}

void nr_progress_stop(struct nr_comm *c)
{
	if (!c->has_progress)
		return;
	c->stop = true;
	pthread_join(c->progress, NULL);
	pthread_mutex_destroy(&c->lock);
	c->has_progress = false;
}
