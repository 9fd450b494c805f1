/* SPDX-License-Identifier: BSD-3-Clause */
/* The box's configuration: struct dp_cfg, its defaults, its command line. */
#ifndef NR_DP_OPTS_H
#define NR_DP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "dataplane/dpdk/dp_l2.h"
#include "dataplane/engine/agg_sum.h"

#define DP_MAX_BURST     256
#define DP_DEFAULT_BURST 32
#define DP_MBUF_DATAROOM (RTE_PKTMBUF_HEADROOM + 4352) /* a 4096-MTU RoCE frame */
/* 150 MB: room for 16 ranks of a 1024-MTU job of eight 64 KiB messages
 * (the host library's defaults) under the admission budget, with others */
#define DP_DEFAULT_POOL_MBUFS 32767

enum dp_mode {
	DP_MODE_SWITCH = 0,    /* one port per host, L2 learning, flooding */
	DP_MODE_ONE_ARMED = 1, /* one port, frames go back out of it */
};

/* What aggregates (the program's choice, dataplane/switch/). */
enum dp_backend_kind {
	DP_BACKEND_SW = 0,     /* the engines on the worker lcores (backend "sw") */
	DP_BACKEND_RTL = 1,    /* the aggregator's RTL model (backend "rtl", dp_dev.c) */
};

struct dp_cfg {
	enum dp_mode mode;
	enum dp_backend_kind backend;
	unsigned burst;            /* rx burst, 1..DP_MAX_BURST */
	unsigned pool_mbufs;       /* mbufs in the box's pool */
	unsigned mbuf_dataroom;    /* their data room (headroom included), at most DP_MBUF_DATAROOM */
	unsigned admit_mbufs;      /* what jobs may hold together; 0: dp_box_create's default */
	unsigned idle_sleep_us;    /* 0: pure busy polling */
	unsigned idle_polls;       /* empty polls before sleeping */
	unsigned stats_interval;   /* seconds, 0 off (the program) */
	unsigned failed_job_ttl;   /* seconds a failed job is kept; 0: until destroyed */
	unsigned job_lease;        /* seconds of the lease of TCP jobs that ask for none */
	uint16_t rx_desc, tx_desc;
	unsigned mtu;              /* 0: leave the ports' MTU alone */
	enum agg_sum_kernel kernel;
	bool promisc;              /* switch mode wants every frame */
	bool icrc_check;           /* drop RoCEv2 frames with a wrong ICRC */
	unsigned l2_port_cap;      /* switch mode: learned MACs a port may hold (dp_l2.h) */
	unsigned l2_age_s;         /* switch mode: a learned MAC unseen this long is forgotten */
	unsigned l2_pin_cap;       /* switch mode: MACs jobs may pin on one port (0: l2_port_cap) */
	bool l2_sticky;            /* switch mode: a learned MAC moves only once aged */
	const char *l2_static_file; /* switch mode: the operator's MAC -> port map (dp_l2_static.c) */
	/* control plane (the program) */
	const char *ctl_socket;
	const char *ctl_listen;
	const char *token;
	const char *token_file;
	const char *tenants_file;
	const char *tls_cert;      /* TLS on the TCP listener: the box's certificate (PEM) */
	const char *tls_key;       /* and its key (PEM, mode 0600 or stricter) */
	const char *metrics_listen;   /* IP:PORT of the metrics and /healthz listener; NULL off */
	const char *metrics_token_file; /* its bearer token's file (needed beyond loopback) */
	const char *metrics_box_token_file; /* the box scope's token (dp_metrics.h) */
	unsigned stall_ms;         /* a worker whose heartbeat is older is stuck (dp_health.c) */
	int log_level;             /* RTE_LOG_*; 0: leave */
};

#define DP_DEFAULT_STALL_MS 1000

void dp_cfg_defaults(struct dp_cfg *cfg);
/* Options after "--": 0 run, 1 help wanted, -EINVAL with err naming the option. */
int dp_opts_parse(int argc, char **argv, struct dp_cfg *cfg, char *err, size_t errlen);
void dp_opts_usage(FILE *f, const char *prog);

#endif /* NR_DP_OPTS_H */
