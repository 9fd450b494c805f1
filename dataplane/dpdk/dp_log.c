/* SPDX-License-Identifier: BSD-3-Clause */
/* The box's log type (see dp_log.h). */
#include "dataplane/dpdk/dp_log.h"

RTE_LOG_REGISTER(dp_logtype, netreduce.dp, INFO);
