/* SPDX-License-Identifier: BSD-3-Clause */
/* The registered regions of a communicator's rings (see nr_region.h). */
#include <stdlib.h>
#include <string.h>

#include "nr_region.h"
#include "nr_util.h"

#define BOX_SLOTS_MIN 16
#define BOX_SLOTS_MAX 64

/* bytes of zeroed, page-aligned memory registered with the transport. */
static int region_alloc(struct nr_comm *c, size_t bytes, const char *what, void **mem,
			struct nr_tp_mr *mr)
{
	int rc;

	*mem = aligned_alloc(4096, bytes);
	if (!*mem)
		return nr_fail(c, NR_ERR_NOMEM, "rank %d: cannot allocate %zu bytes of %s",
			       c->rank, bytes, what);
	memset(*mem, 0, bytes);
	rc = nr_tp_reg_mr(c->tp, *mem, bytes, mr);
	if (rc) {
		free(*mem);
		*mem = NULL;
		return nr_fail(c, NR_ERR_TRANSPORT, "rank %d: cannot register %zu bytes: %s",
			       c->rank, bytes, strerror(-rc));
	}
	return 0;
}

int nr_box_region_init(struct nr_comm *c, int ring)
{
	struct nr_ring *r = &c->ring[ring];
	size_t slots = c->cfg.pool_msgs;
	int rc;

	slots = slots < BOX_SLOTS_MIN ? BOX_SLOTS_MIN : slots > BOX_SLOTS_MAX ? BOX_SLOTS_MAX : slots;
	/* staging slots, then send slots */
	rc = region_alloc(c, 2 * slots * c->cfg.msg_size, "box staging", &r->mem, &r->mr);
	if (rc)
		return rc;
	r->cap = slots;
	return 0;
}

int nr_plain_region_init(struct nr_comm *c, size_t cap)
{
	struct nr_ring *r = &c->ring[NR_RING_PLAIN];
	struct nr_tp_mr mr;
	void *mem;
	int rc;

	rc = region_alloc(c, 3 * cap, "ring staging", &mem, &mr);
	if (rc)
		return rc;
	if (r->mem) {
		nr_tp_dereg_mr(c->tp, &r->mr);
		free(r->mem);
	}
	r->mem = mem;
	r->mr = mr;
	r->cap = cap;
	return 0;
}
