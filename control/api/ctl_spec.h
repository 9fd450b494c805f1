/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job spec as JSON, and the JSON helpers of the control API (internal to
 * control/; nr_ctl_spec_from_json is public in nr_control.h).
 */
#ifndef NR_CTL_SPEC_H
#define NR_CTL_SPEC_H

#include <jansson.h>

#include "control/api/nr_control.h"

/* "an object", "a string", ... for messages. */
const char *nr_ctl_json_type(const json_t *v);
/* -EINVAL with err "<where><field>: unknown field" for a key of obj not in known (NULL-ended). */
int nr_ctl_unknown_fields(const json_t *obj, const char *const *known, const char *where,
			  char *err, size_t errlen);
/* The spec as job_status shows it (the fields job_create takes). */
json_t *nr_ctl_spec_to_json(const struct nr_job_spec *s);

#endif /* NR_CTL_SPEC_H */
