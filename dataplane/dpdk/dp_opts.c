/* SPDX-License-Identifier: BSD-3-Clause */
/* The box's configuration: defaults and the command line of netreduce-switch
 * (after the EAL's "--"). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_opts.h"

void dp_cfg_defaults(struct dp_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = DP_MODE_SWITCH;
	cfg->backend = DP_BACKEND_SW;
	cfg->burst = DP_DEFAULT_BURST;
	cfg->pool_mbufs = DP_DEFAULT_POOL_MBUFS;
	cfg->mbuf_dataroom = DP_MBUF_DATAROOM;
	cfg->idle_sleep_us = 50;
	cfg->idle_polls = 1000;
	cfg->rx_desc = 1024;
	cfg->tx_desc = 1024;
	cfg->kernel = NR_KERNEL_AUTO;
	cfg->promisc = true;
	cfg->icrc_check = true;
	cfg->failed_job_ttl = NR_CTL_FAILED_TTL_MS / 1000;
	cfg->job_lease = NR_CTL_DEFAULT_LEASE_MS / 1000;
	cfg->ctl_socket = "/run/netreduce/netreduce.sock";
	cfg->stall_ms = DP_DEFAULT_STALL_MS;
	cfg->l2_port_cap = DP_L2_PORT_CAP;
	cfg->l2_age_s = DP_L2_AGE_S;
}

/* the help text in columns, as it prints */
/* clang-format off */
void dp_opts_usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [EAL options] -- [options]\n"
"\n"
"netreduce-switch: the in-network aggregation box.  Sums the FP32 gradients of\n"
"registered RoCEv2 jobs packet by packet and switches everything else.\n"
"\n"
"EAL options (DPDK): -l CORES (first = main lcore for control, the others run\n"
"the burst loop), -a PCI / --vdev net_af_packet0,iface=IF / --vdev net_ring0,\n"
"--no-huge -m MB, --file-prefix NAME (telemetry: dpdk-telemetry.py -f NAME).\n"
"\n"
"Options:\n"
"  --mode switch|one-armed  switch (default): one port per host, L2 learning and\n"
"                           flooding for everything not aggregated; one-armed:\n"
"                           one port, every frame goes back out of it; frames\n"
"                           sent to the box's MAC are re-addressed to the MAC\n"
"                           the job endpoints give for their destination IP,\n"
"                           other frames (non-RoCE too) go back unchanged\n"
"  --backend sw|rtl         what aggregates: sw (default) the engines on the worker\n"
"                           lcores; rtl the aggregator's RTL (dataplane/rtl) on\n"
"                           Verilator, slow: every frame goes to the model and\n"
"                           what it sends leaves by the ports (one worker lcore;\n"
"                           needs a build with verilator)\n"
"  --ctl-socket PATH        admin UNIX socket (default /run/netreduce/netreduce.sock,\n"
"                           directory created; 'none' disables it)\n"
"  --ctl-listen IP:PORT     TCP listener for host libraries (off by default;\n"
"                           needs --token, --token-file, NETREDUCE_TOKEN or\n"
"                           --tenants)\n"
"  --token T                shared token for the TCP listener, at least %d characters\n"
"                           (visible in ps: prefer --token-file or NETREDUCE_TOKEN\n"
"                           in the environment)\n"
"  --token-file F           read the token from the first line of F\n"
"  --tenants F              tenants, each with its own token and limits (JSON,\n"
"                           mode 0600; control/PROTOCOL.md \"Tenants\"); the token\n"
"                           above, if any, is the tenant \"default\" without limits\n"
"  --tls-cert F             TLS on the TCP listener (1.2 or newer): the box's\n"
"                           certificate (PEM, chain after it); plain-text clients\n"
"                           are refused.  Hosts verify it with NR_TLS_CA, the CLI\n"
"                           with --tls-ca (deploy/README.md: making certificates)\n"
"  --tls-key F              its private key (PEM, no passphrase; refused unless only\n"
"                           its owner may read it: chmod 600)\n"
"  --idle-sleep-us N        sleep N us per empty poll after --idle-polls empty\n"
"                           polls in a row (default 50; 0 = pure busy polling,\n"
"                           right for a dedicated core)\n"
"  --idle-polls N           empty polls before sleeping (default 1000)\n"
"  --burst N                RX burst and TX buffer size, 1..%d (default %d)\n"
"  --pool-mbufs N           mbufs in the packet pool (default %d; each %d B)\n"
"  --mbuf-size N            data room of an mbuf, headroom included (default %d: a\n"
"                           4096-MTU RoCE frame); net_af_xdp takes mbufs of at most a\n"
"                           page (--mbuf-size 2176: links of 1500 bytes)\n"
"  --admit-mbufs N          mbufs the jobs together may hold: a job is admitted\n"
"                           only while ranks x pool packets of every job fit\n"
"                           (default 3/4 of what the ports left free in the pool)\n"
"  --mtu N                  set the ports' MTU (default: leave as is)\n"
"  --kernel auto|scalar|avx512  sum kernel (default auto: AVX-512 if the CPU has it)\n"
"  --l2-port-cap N          switch mode: MACs one port may teach the L2 table\n"
"                           (default %d of %d; docs/trust.md, \"L2\")\n"
"  --l2-age S               switch mode: a learned MAC unseen for S s is forgotten\n"
"                           (default %u; MACs a job pinned stay while it lives)\n"
"  --l2-pin-cap N           switch mode: MACs the jobs may pin on one port\n"
"                           (default: --l2-port-cap; a job past it is refused)\n"
"  --l2-static F            switch mode: the operator's MAC -> port map, one\n"
"                           \"MAC PORT\" a line (PORT: a DPDK port id): pinned for\n"
"                           good before any frame, moved by none (docs/trust.md)\n"
"  --l2-sticky              switch mode: a learned MAC moves to another port only\n"
"                           once it aged out (--l2-age) where it was learned\n"
"  --no-promisc             do not put ports in promiscuous mode\n"
"  --no-icrc-check          do not verify the ICRC of received RoCEv2 frames\n"
"                           (default: verify; a wrong ICRC is dropped, bad_icrc)\n"
"  --stats-interval S       print a one-line counter summary every S s (0 = off)\n"
"  --metrics-listen IP:PORT serve Prometheus metrics (GET /metrics) and a health\n"
"                           check (GET /healthz: 200 or 503 with the reason) over\n"
"                           HTTP, read-only (off by default); bound beyond\n"
"                           loopback it needs --metrics-token-file\n"
"  --metrics-token-file F   the admin's bearer token (first line of F, mode 600,\n"
"                           16+ characters) a GET of the metrics listener must\n"
"                           carry (Authorization: Bearer; Prometheus:\n"
"                           authorization: credentials_file): every family\n"
"  --metrics-box-token-file F  another token, of the box's scope: every family\n"
"                           but those naming jobs and tenants (a shared\n"
"                           monitoring system's)\n"
"  --stall-ms N             a worker whose loop has not gone round for N ms (plus\n"
"                           --idle-sleep-us) is stuck: health fails, the systemd\n"
"                           watchdog is no longer fed (default %d)\n"
"  --failed-job-ttl S       destroy a failed job S s after it failed unless its\n"
"                           creator did (default 60; 0 = keep until destroyed)\n"
"  --job-lease S            a job created over TCP that asks for no lease holds one\n"
"                           of S s: destroyed when no job_renew came for that long\n"
"                           (default 60; the host library renews its own)\n"
"  --log-level LEVEL        netreduce.dp log level: error|warning|notice|info|debug\n"
"  -h, --help               this text\n",
		prog, NR_CTL_TOKEN_MIN, DP_MAX_BURST, DP_DEFAULT_BURST, DP_DEFAULT_POOL_MBUFS, DP_MBUF_DATAROOM,
		DP_MBUF_DATAROOM, DP_L2_PORT_CAP, DP_L2_ENTRIES, DP_L2_AGE_S, DP_DEFAULT_STALL_MS);
}
/* clang-format on */

static int parse_uint(const char *name, const char *s, unsigned long min, unsigned long max,
		      unsigned *out, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end != '\0' || *s == '-' || v < min || v > max) {
		snprintf(err, errlen, "--%s %s: expected an integer in %lu..%lu", name, s, min, max);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

struct name_val {
	const char *name;
	int val;
};

static const struct name_val modes[] = {
	{ "switch", DP_MODE_SWITCH }, { "one-armed", DP_MODE_ONE_ARMED },
};
static const struct name_val backends[] = {
	{ "sw", DP_BACKEND_SW }, { "rtl", DP_BACKEND_RTL },
};
static const struct name_val kernels[] = {
	{ "auto", NR_KERNEL_AUTO }, { "scalar", NR_KERNEL_SCALAR }, { "avx512", NR_KERNEL_AVX512 },
};
static const struct name_val levels[] = {
	{ "error", RTE_LOG_ERR }, { "warning", RTE_LOG_WARNING },
	{ "notice", RTE_LOG_NOTICE }, { "info", RTE_LOG_INFO }, { "debug", RTE_LOG_DEBUG },
};

/* s among the n names of t: its value, or -EINVAL with "--opt s: expected a, b or c". */
static int parse_name(const char *opt, const char *s, const struct name_val *t, unsigned n,
		      int *out, char *err, size_t errlen)
{
	size_t k;

	for (unsigned i = 0; i < n; i++)
		if (strcmp(s, t[i].name) == 0) {
			*out = t[i].val;
			return 0;
		}
	k = (size_t)snprintf(err, errlen, "--%s %s: expected ", opt, s);
	for (unsigned i = 0; i < n && k < errlen; i++)
		k += (size_t)snprintf(err + k, errlen - k, "%s%s",
				      i == 0 ? "" : i + 1 == n ? " or " : ", ", t[i].name);
	return -EINVAL;
}

/* clang-format off */
enum {
	OPT_MODE = 256, OPT_CTL_SOCKET, OPT_CTL_LISTEN, OPT_TOKEN, OPT_TOKEN_FILE, OPT_IDLE_US,
	OPT_IDLE_POLLS, OPT_BURST, OPT_POOL, OPT_MTU, OPT_KERNEL, OPT_NO_PROMISC, OPT_STATS,
	OPT_LOG_LEVEL, OPT_NO_ICRC, OPT_FAILED_TTL, OPT_JOB_LEASE, OPT_BACKEND, OPT_TENANTS,
	OPT_ADMIT, OPT_MBUF_SIZE, OPT_METRICS, OPT_STALL, OPT_L2_CAP, OPT_L2_AGE, OPT_TLS_CERT,
	OPT_TLS_KEY, OPT_METRICS_TOKEN, OPT_METRICS_BOX_TOKEN, OPT_L2_PIN_CAP, OPT_L2_STATIC, OPT_L2_STICKY,
};
/* clang-format on */

/* 0: run; 1: help printed wanted; -EINVAL: err says why. */
int dp_opts_parse(int argc, char **argv, struct dp_cfg *cfg, char *err, size_t errlen)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "ctl-socket", required_argument, NULL, OPT_CTL_SOCKET },
		{ "ctl-listen", required_argument, NULL, OPT_CTL_LISTEN },
		{ "token", required_argument, NULL, OPT_TOKEN },
		{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
		{ "tenants", required_argument, NULL, OPT_TENANTS },
		{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
		{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
		{ "idle-sleep-us", required_argument, NULL, OPT_IDLE_US },
		{ "idle-polls", required_argument, NULL, OPT_IDLE_POLLS },
		{ "burst", required_argument, NULL, OPT_BURST },
		{ "pool-mbufs", required_argument, NULL, OPT_POOL },
		{ "admit-mbufs", required_argument, NULL, OPT_ADMIT },
		{ "mbuf-size", required_argument, NULL, OPT_MBUF_SIZE },
		{ "mtu", required_argument, NULL, OPT_MTU },
		{ "kernel", required_argument, NULL, OPT_KERNEL },
		{ "no-promisc", no_argument, NULL, OPT_NO_PROMISC },
		{ "no-icrc-check", no_argument, NULL, OPT_NO_ICRC },
		{ "stats-interval", required_argument, NULL, OPT_STATS },
		{ "failed-job-ttl", required_argument, NULL, OPT_FAILED_TTL },
		{ "job-lease", required_argument, NULL, OPT_JOB_LEASE },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "metrics-listen", required_argument, NULL, OPT_METRICS },
		{ "metrics-token-file", required_argument, NULL, OPT_METRICS_TOKEN },
		{ "metrics-box-token-file", required_argument, NULL, OPT_METRICS_BOX_TOKEN },
		{ "stall-ms", required_argument, NULL, OPT_STALL },
		{ "l2-port-cap", required_argument, NULL, OPT_L2_CAP },
		{ "l2-age", required_argument, NULL, OPT_L2_AGE },
		{ "l2-pin-cap", required_argument, NULL, OPT_L2_PIN_CAP },
		{ "l2-static", required_argument, NULL, OPT_L2_STATIC },
		{ "l2-sticky", no_argument, NULL, OPT_L2_STICKY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, v, rc = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case OPT_MODE:
			rc = parse_name("mode", optarg, modes, RTE_DIM(modes), &v, err, errlen);
			cfg->mode = rc ? cfg->mode : (enum dp_mode)v;
			break;
		case OPT_BACKEND:
			rc = parse_name("backend", optarg, backends, RTE_DIM(backends), &v, err, errlen);
			cfg->backend = rc ? cfg->backend : (enum dp_backend_kind)v;
			break;
		case OPT_CTL_SOCKET:
			cfg->ctl_socket = strcmp(optarg, "none") == 0 ? NULL : optarg;
			break;
		case OPT_CTL_LISTEN:
			if (strchr(optarg, ':') == NULL) {
				snprintf(err, errlen, "--ctl-listen %s: expected IP:PORT, e.g. 10.78.0.254:7471", optarg);
				return -EINVAL;
			}
			cfg->ctl_listen = optarg;
			break;
		case OPT_METRICS:
			if (strchr(optarg, ':') == NULL) {
				snprintf(err, errlen, "--metrics-listen %s: expected IP:PORT, e.g. 192.0.2.10:9470",
					 optarg);
				return -EINVAL;
			}
			cfg->metrics_listen = optarg;
			break;
		case OPT_STALL: rc = parse_uint("stall-ms", optarg, 10, 3600000, &cfg->stall_ms, err, errlen); break;
		case OPT_L2_CAP: rc = parse_uint("l2-port-cap", optarg, 1, DP_L2_ENTRIES, &cfg->l2_port_cap, err, errlen); break;
		case OPT_L2_AGE: rc = parse_uint("l2-age", optarg, 1, 86400, &cfg->l2_age_s, err, errlen); break;
		case OPT_L2_PIN_CAP:
			rc = parse_uint("l2-pin-cap", optarg, 1, DP_L2_ENTRIES, &cfg->l2_pin_cap,
					err, errlen);
			break;
		case OPT_L2_STATIC: cfg->l2_static_file = optarg; break;
		case OPT_L2_STICKY: cfg->l2_sticky = true; break;
		case OPT_TOKEN: cfg->token = optarg; break;
		case OPT_TOKEN_FILE: cfg->token_file = optarg; break;
		case OPT_METRICS_TOKEN: cfg->metrics_token_file = optarg; break;
		case OPT_METRICS_BOX_TOKEN: cfg->metrics_box_token_file = optarg; break;
		case OPT_TENANTS: cfg->tenants_file = optarg; break;
		case OPT_TLS_CERT: cfg->tls_cert = optarg; break;
		case OPT_TLS_KEY: cfg->tls_key = optarg; break;
		case OPT_IDLE_US: rc = parse_uint("idle-sleep-us", optarg, 0, 1000000, &cfg->idle_sleep_us, err, errlen); break;
		case OPT_IDLE_POLLS: rc = parse_uint("idle-polls", optarg, 1, UINT_MAX, &cfg->idle_polls, err, errlen); break;
		case OPT_BURST: rc = parse_uint("burst", optarg, 1, DP_MAX_BURST, &cfg->burst, err, errlen); break;
		case OPT_POOL: rc = parse_uint("pool-mbufs", optarg, 512, 1u << 24, &cfg->pool_mbufs, err, errlen); break;
		case OPT_MBUF_SIZE:
			rc = parse_uint("mbuf-size", optarg, RTE_PKTMBUF_HEADROOM + 1536, DP_MBUF_DATAROOM,
					&cfg->mbuf_dataroom, err, errlen);
			break;
		case OPT_ADMIT: rc = parse_uint("admit-mbufs", optarg, 1, 1u << 24, &cfg->admit_mbufs, err, errlen); break;
		case OPT_MTU: rc = parse_uint("mtu", optarg, 68, 9600, &cfg->mtu, err, errlen); break;
		case OPT_STATS: rc = parse_uint("stats-interval", optarg, 0, 86400, &cfg->stats_interval, err, errlen); break;
		case OPT_FAILED_TTL: rc = parse_uint("failed-job-ttl", optarg, 0, 4000000, &cfg->failed_job_ttl, err, errlen); break;
		case OPT_JOB_LEASE: rc = parse_uint("job-lease", optarg, 1, 86400, &cfg->job_lease, err, errlen); break;
		case OPT_NO_PROMISC: cfg->promisc = false; break;
		case OPT_NO_ICRC: cfg->icrc_check = false; break;
		case OPT_KERNEL:
			rc = parse_name("kernel", optarg, kernels, RTE_DIM(kernels), &v, err, errlen);
			cfg->kernel = rc ? cfg->kernel : (enum agg_sum_kernel)v;
			break;
		case OPT_LOG_LEVEL:
			rc = parse_name("log-level", optarg, levels, RTE_DIM(levels), &cfg->log_level,
					err, errlen);
			break;
		case 'h':
			return 1;
		case ':':
			snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
			return -EINVAL;
		default:
			snprintf(err, errlen, "unknown option %s", argv[optind - 1]);
			return -EINVAL;
		}
		if (rc)
			return rc;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (cfg->ctl_listen && !cfg->token && !cfg->token_file) {
		const char *env = getenv("NETREDUCE_TOKEN");   /* kept out of argv (ps) */

		if (env && env[0])
			cfg->token = env;
	}
	if (cfg->ctl_listen && !cfg->token && !cfg->token_file && !cfg->tenants_file) {
		snprintf(err, errlen, "--ctl-listen %s needs --token T, --token-file F, NETREDUCE_TOKEN "
			 "in the environment or --tenants F", cfg->ctl_listen);
		return -EINVAL;
	}
	if (cfg->mode != DP_MODE_SWITCH && (cfg->l2_static_file || cfg->l2_pin_cap)) {
		snprintf(err, errlen,
			 "--%s: the L2 table is switch mode's; a one-armed box learns "
			 "no MACs (give --mode switch, or leave it out)",
			 cfg->l2_static_file ? "l2-static" : "l2-pin-cap");
		return -EINVAL;
	}
	if (cfg->token && cfg->token_file) {
		snprintf(err, errlen, "--token and --token-file: give only one");
		return -EINVAL;
	}
	if (cfg->token && strlen(cfg->token) < NR_CTL_TOKEN_MIN) {
		snprintf(err, errlen, "the token (--token or NETREDUCE_TOKEN) has %zu characters: "
			 "at least %d are needed (a random one: openssl rand -hex 16)",
			 strlen(cfg->token), NR_CTL_TOKEN_MIN);
		return -EINVAL;
	}
	if (!cfg->tls_cert != !cfg->tls_key) {
		snprintf(err, errlen, "--tls-cert and --tls-key go together: give both");
		return -EINVAL;
	}
	if ((cfg->metrics_token_file || cfg->metrics_box_token_file) && !cfg->metrics_listen) {
		snprintf(err, errlen,
			 "--metrics-%stoken-file is for the metrics listener: give "
			 "--metrics-listen too",
			 cfg->metrics_token_file ? "" : "box-");
		return -EINVAL;
	}
	if (cfg->tls_cert && !cfg->ctl_listen) {
		snprintf(err, errlen, "--tls-cert is for the TCP listener: give --ctl-listen too");
		return -EINVAL;
	}
	return 0;
}
