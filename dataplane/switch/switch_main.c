/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreduce-switch [EAL args] -- [options]
 *
 * main(): options, EAL, ports, the box, the control server (UNIX socket for
 * netreducectl, optional TCP listener for hosts), telemetry, signals.  The
 * first EAL lcore runs control and --stats-interval; every other lcore runs
 * the burst loop.  With a single lcore the loop runs on it and control on its
 * own thread.  SIGINT/SIGTERM: loops leave, control server stops, engines are
 * destroyed (held mbufs freed), ports stopped and closed, exit 0.
 *
 * As a service (deploy/netreduce-switch.service, Type=notify): READY=1 once
 * the ports are up, the workers run and the listeners listen; WATCHDOG=1
 * from the main loop while every worker polls; STATUS= the health; STOPPING=1
 * at a signal (switch_sd.c).  --metrics-listen serves /metrics and /healthz
 * (dataplane/dpdk/dp_metrics.c).  Errors and events go to stderr with their
 * priority for the journal (control/api/ctl_log.h).
 *
 * The control API's backend: "sw" (the box's engines, dataplane/dpdk/
 * dp_backend.c) or, with --backend rtl, "rtl": the aggregator's RTL model,
 * fed every frame by the box's worker (switch_rtl.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "control/http/ctl_http.h"
#include "control/api/ctl_log.h"
#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_box.h"
#include "dataplane/switch/switch_rtl.h"
#include "dataplane/switch/switch_sd.h"

static volatile sig_atomic_t got_signal;
static struct dp_box *the_box;  /* for the signal handler only */

static void on_signal(int sig)
{
	got_signal = sig;
	if (the_box)
		__atomic_store_n(&the_box->quit, 1, __ATOMIC_RELEASE);
}

/* -h/--help without "--" is ours (the EAL's own help: --help after EAL args). */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return false;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	return false;
}

/* Split argv at "--": our options are after it (argv[0] kept as program name). */
static int our_args(int argc, char **argv, char ***out)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));
	int n = 1, i;

	if (v == NULL)
		return -ENOMEM;
	v[0] = argv[0];
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		;
	for (i++; i < argc; i++)
		v[n++] = argv[i];
	*out = v;
	return n;
}

/*
 * The secret on the first line of the file of option opt: a file others can
 * read is refused (the secret is the box's), as is one of fewer than min
 * characters.  0, or -errno, said in the log.
 */
static int read_secret(const char *opt, const char *path, char *buf, size_t len, size_t min)
{
	struct stat st;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		nr_log(LOG_ERR, "netreduce-switch: %s %s: %s", opt, path, strerror(errno));
		return -errno;
	}
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
		nr_log(LOG_ERR,
		       "netreduce-switch: %s %s holds a secret and is open to group or "
		       "others (mode %03o): chmod 600 it",
		       opt, path, (unsigned)(st.st_mode & 0777));
		fclose(f);
		return -EPERM;
	}
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0') {
		nr_log(LOG_ERR, "netreduce-switch: %s %s: the first line is empty", opt, path);
		return -EINVAL;
	}
	if (strlen(buf) < min) {
		nr_log(LOG_ERR,
		       "netreduce-switch: %s %s: a secret of %zu characters: at least %zu "
		       "are needed (a random one: openssl rand -hex 16)",
		       opt, path, strlen(buf), min);
		return -EINVAL;
	}
	return 0;
}

static int make_socket_dir(const char *path)
{
	char *copy = strdup(path), *dir, *p;

	if (copy == NULL)
		return -ENOMEM;
	dir = dirname(copy);
	for (p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		nr_log(LOG_ERR, "netreduce-switch: cannot create %s for the control socket: %s",
		       dir, strerror(errno));
		free(copy);
		return -errno;
	}
	free(copy);
	return 0;
}

static void banner(const struct dp_box *b, const struct dp_cfg *cfg)
{
	printf("netreduce-switch: mode %s, %s%s, burst %u, idle %s\n",
	       cfg->mode == DP_MODE_SWITCH ? "switch" : "one-armed",
	       cfg->backend == DP_BACKEND_RTL ? "backend rtl (the aggregator's RTL on Verilator)" :
	       "backend sw, sum kernel ", cfg->backend == DP_BACKEND_RTL ? "" : b->kernel_name,
	       cfg->burst, cfg->idle_sleep_us ? "sleep after empty polls" : "busy polling");
	for (unsigned i = 0; i < b->n_ports; i++) {
		const struct dp_port *p = &b->ports[i];
		char mac[RTE_ETHER_ADDR_FMT_SIZE], rx[48] = "";

		rte_ether_format_addr(mac, sizeof(mac), &p->mac);
		for (unsigned w = 0; p->n_rxq == 1 && w < b->n_workers; w++)
			for (unsigned q = 0; q < b->workers[w]->n_rxq; q++)
				if (b->workers[w]->rxq[q].port == p->id)
					snprintf(rx, sizeof(rx), "worker %u", w);
		if (p->n_rxq > 1)
			snprintf(rx, sizeof(rx), "an RX queue per worker");
		printf("  port %u: %s  %s  driver %s  (%s)\n", p->id, p->name, mac, p->driver, rx);
		if (p->steer == DP_STEER_FLOW)
			printf("    steering: rte_flow, each channel's frames to its worker's queue by UDP source port\n");
		else if (p->steer == DP_STEER_SOFT)
			printf("    steering: software: frames of a channel another worker runs are handed over "
			       "through its ring (%s)\n", p->steer_why);
	}
	printf("  control lcore %u; worker lcores:", rte_get_main_lcore());
	for (unsigned i = 0; i < b->n_workers; i++)
		printf(" %u", b->workers[i]->lcore);
	printf("\n  control: unix %s, tcp %s%s\n", cfg->ctl_socket ? cfg->ctl_socket : "off",
	       cfg->ctl_listen ? cfg->ctl_listen : "off", cfg->tls_cert ? " (TLS)" : "");
	printf("  mbufs: %u in the pool, jobs admitted while they can hold at most %" PRIu64
	       " together (--admit-mbufs)\n", b->pool->size, b->mbuf_budget);
	printf("  telemetry: dpdk-telemetry.py -f %s, then /netreduce/stats\n",
	       rte_eal_get_runtime_dir() ? basename((char *)rte_eal_get_runtime_dir()) : "?");
	if (cfg->metrics_listen)
		printf("  metrics: http://%s/metrics, health http://%s/healthz\n", cfg->metrics_listen,
		       cfg->metrics_listen);
	fflush(stdout);
}

/* What the main loop watches (main_loop). */
struct main_ctx {
	struct dp_box *b;
	uint64_t wd_usec;          /* systemd's watchdog interval, 0: none */
};

/*
 * The main loop, every 100 ms on the control lcore (or its thread with -l
 * 0): the --stats-interval line; the box's health, logged and told to
 * systemd (STATUS=) when it changes; the watchdog fed every half interval
 * while every worker polls, so that a stuck worker gets the service
 * restarted (WatchdogSec=).  A link down does not stop the feed: a restart
 * does not bring a cable back.
 */
static void *main_loop(void *arg)
{
	struct main_ctx *m = arg;
	struct dp_box *b = m->b;
	struct dp_health h;
	unsigned tick = 0;
	uint64_t t = 0, fed = 0, checked = 0;
	bool starving = false;
	char sig[DP_MAX_PORTS + DP_MAX_WORKERS + 1], last[sizeof(sig)] = "?";
	char status[sizeof(h.reason) + 64], msg[sizeof(status) + 8];

	while (!__atomic_load_n(&b->quit, __ATOMIC_ACQUIRE)) {
		usleep(100000);
		t += 100000;
		if (b->cfg.stats_interval && ++tick >= b->cfg.stats_interval * 10) {
			char line[512];

			tick = 0;
			dp_stats_line(b, line, sizeof(line));
			printf("stats: %s\n", line);
			fflush(stdout);
		}
		if (t - checked < 1000000 && !(m->wd_usec && t - fed >= m->wd_usec / 2))
			continue;
		checked = t;
		dp_health_check(b, &h);
		/* what failed, not the text: a stuck worker's age grows every second */
		for (unsigned i = 0; i < h.n_ports; i++)
			sig[i] = h.port[i].up ? 'u' : 'd';
		for (unsigned i = 0; i < h.n_workers; i++)
			sig[h.n_ports + i] = h.worker[i].polling ? 'p' : 's';
		sig[h.n_ports + h.n_workers] = '\0';
		if (strcmp(sig, last) != 0) {
			if (h.healthy)
				snprintf(status, sizeof(status), "healthy: %u ports linked, %u workers polling",
					 h.ports_up, h.n_workers);
			else
				snprintf(status, sizeof(status), "unhealthy: %s", h.reason);
			if (strcmp(last, "?") != 0 || !h.healthy)
				nr_log(h.healthy ? LOG_NOTICE : LOG_WARNING, "netreduce-switch: %s", status);
			snprintf(last, sizeof(last), "%s", sig);
			snprintf(msg, sizeof(msg), "STATUS=%s", status);
			switch_sd_notify(msg);
		}
		if (!m->wd_usec || t - fed < m->wd_usec / 2)
			continue;
		if (h.workers_ok) {
			switch_sd_notify("WATCHDOG=1");
			fed = t;
			if (starving)
				nr_log(LOG_NOTICE, "netreduce-switch: every worker polls again: feeding the "
				       "systemd watchdog again");
			starving = false;
		} else if (!starving) {
			nr_log(LOG_CRIT, "netreduce-switch: not feeding the systemd watchdog (WatchdogSec): "
			       "%s; systemd restarts the service unless it recovers", h.reason);
			starving = true;
		}
	}
	return NULL;
}

/* The control API on backend be (which it takes over), and its server. */
static struct nr_ctl_server *start_control(struct nr_backend *be, const struct dp_cfg *cfg,
					   struct nr_ctl **ctlp, const char *token)
{
	struct nr_ctl_server_cfg sc = {
		.unix_path = cfg->ctl_socket,
		.tcp_addr = cfg->ctl_listen,
		.token = token,
		.tls_cert = cfg->tls_cert,
		.tls_key = cfg->tls_key,
	};
	struct nr_ctl_server *srv;
	char err[256] = "";

	*ctlp = be ? nr_ctl_create(be) : NULL;
	if (*ctlp == NULL) {
		nr_log(LOG_ERR, "netreduce-switch: cannot create the control API (out of memory)");
		nr_backend_destroy(be);
		return NULL;
	}
	nr_ctl_set_failed_ttl(*ctlp, cfg->failed_job_ttl * 1000u);
	nr_ctl_set_default_lease(*ctlp, cfg->job_lease * 1000u);
	nr_ctl_set_mac_pinning(*ctlp, cfg->mode == DP_MODE_SWITCH);
	if (cfg->tenants_file) {
		int n = nr_ctl_tenants_load(*ctlp, cfg->tenants_file, err, sizeof(err));

		if (n < 0) {
			nr_log(LOG_ERR, "netreduce-switch: --tenants: %s", err);
			nr_ctl_destroy(*ctlp);
			*ctlp = NULL;
			return NULL;
		}
		printf("netreduce-switch: %d tenants from %s\n", n, cfg->tenants_file);
	}
	if (!cfg->ctl_socket && !cfg->ctl_listen)
		return NULL;
	if (cfg->ctl_socket && make_socket_dir(cfg->ctl_socket) != 0)
		return NULL;
	srv = nr_ctl_server_start(*ctlp, &sc, err, sizeof(err));
	if (srv == NULL)
		nr_log(LOG_ERR, "netreduce-switch: control server: %s", err);
	return srv;
}

int main(int argc, char **argv)
{
	struct dp_cfg cfg;
	struct dp_box *b;
	struct nr_ctl *ctl = NULL;
	struct nr_ctl_server *srv = NULL;
	struct dp_metrics_server *ms = NULL;
	struct main_ctx mc = { 0 };
	struct nr_backend *be = NULL;
	struct switch_rtl *rtl = NULL;
	uint16_t ports[DP_MAX_PORTS];
	unsigned lcores[DP_MAX_WORKERS], n_ports = 0, n_lcores = 0, lc;
	char err[512] = "", token[512] = "", metrics_token[512] = "", metrics_box_token[512] = "";
	char **ov;
	int on, rc, pid;
	uint16_t pid16;
	pthread_t st;
	bool inline_worker;

	dp_cfg_defaults(&cfg);
	if (wants_help(argc, argv)) {
		dp_opts_usage(stdout, argv[0]);
		return 0;
	}
	on = our_args(argc, argv, &ov);
	if (on < 0)
		return 1;
	rc = dp_opts_parse(on, ov, &cfg, err, sizeof(err));
	if (rc == 1) {
		dp_opts_usage(stdout, argv[0]);
		free(ov);
		return 0;
	}
	if (rc) {
		nr_log(LOG_ERR, "netreduce-switch: %s", err);
		fprintf(stderr, "\n");
		dp_opts_usage(stderr, argv[0]);
		free(ov);
		return 2;
	}
	if (cfg.token_file && read_secret("--token-file", cfg.token_file, token, sizeof(token),
					  NR_CTL_TOKEN_MIN) != 0) {
		free(ov);
		return 2;
	}
	if ((cfg.metrics_token_file &&
	     read_secret("--metrics-token-file", cfg.metrics_token_file, metrics_token,
			 sizeof(metrics_token), NR_HTTP_BEARER_MIN) != 0) ||
	    (cfg.metrics_box_token_file &&
	     read_secret("--metrics-box-token-file", cfg.metrics_box_token_file, metrics_box_token,
			 sizeof(metrics_box_token), NR_HTTP_BEARER_MIN) != 0)) {
		free(ov);
		return 2;
	}
	if (cfg.token)
		snprintf(token, sizeof(token), "%s", cfg.token);
	free(ov);   /* cfg points into argv itself, not into ov */
	ov = NULL;
	/* stderr is the journal: DPDK's lines with their priority, once */
	if (switch_sd_log_journal() != 0)
		nr_log(LOG_WARNING, "netreduce-switch: DPDK's log lines go to the journal without "
		       "their priority: %s", strerror(errno));

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		nr_log(LOG_ERR, "netreduce-switch: EAL init failed: %s (see the EAL lines above; "
		       "%s --help for this program's options)", rte_strerror(rte_errno), argv[0]);
		return rte_errno == EINVAL ? 2 : 1;
	}
	if (cfg.log_level)
		rte_log_set_level(dp_logtype, (uint32_t)cfg.log_level);
	RTE_ETH_FOREACH_DEV(pid16) {
		if (n_ports < DP_MAX_PORTS)
			ports[n_ports++] = pid16;
	}
	(void)pid;
	if (n_ports == 0) {
		nr_log(LOG_ERR, "netreduce-switch: no ports: give EAL -a <PCI> for a NIC bound to vfio-pci, "
		       "or --vdev net_af_packet0,iface=<veth> / --vdev net_ring0");
		rte_eal_cleanup();
		return 1;
	}
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (n_lcores < DP_MAX_WORKERS)
			lcores[n_lcores++] = lc;
	}
	inline_worker = n_lcores == 0;
	if (inline_worker)
		lcores[n_lcores++] = rte_get_main_lcore();
	b = dp_box_create(&cfg, ports, n_ports, lcores, n_lcores, NULL, err, sizeof(err));
	if (b == NULL) {
		nr_log(LOG_ERR, "netreduce-switch: %s", err);
		rte_eal_cleanup();
		return 1;
	}
	the_box = b;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (dp_telemetry_register(b) != 0)
		DP_LOG(WARNING, "telemetry commands not registered (is telemetry disabled?)");
	/* the backend first: rtl resets and enables the model before frames come */
	if (cfg.backend == DP_BACKEND_RTL) {
		rtl = switch_rtl_attach(b, &be, err, sizeof(err));
		if (rtl == NULL) {
			nr_log(LOG_ERR, "netreduce-switch: %s", err);
			dp_box_destroy(b, true);
			rte_eal_cleanup();
			return 1;
		}
	} else {
		be = dp_backend_create(b);
	}
	if (dp_box_launch(b) != 0) {
		nr_backend_destroy(be);
		dp_box_destroy(b, true);
		switch_rtl_detach(rtl);
		rte_eal_cleanup();
		return 1;
	}
	srv = start_control(be, &cfg, &ctl, token);
	if (ctl == NULL || ((cfg.ctl_socket || cfg.ctl_listen) && srv == NULL)) {
		dp_box_stop(b);
		if (ctl)
			nr_ctl_destroy(ctl);
		dp_box_destroy(b, true);
		switch_rtl_detach(rtl);
		rte_eal_cleanup();
		return 1;
	}
	if (cfg.metrics_listen) {
		ms = dp_metrics_start(b, ctl, cfg.metrics_listen,
				      cfg.metrics_token_file ? metrics_token : NULL,
				      cfg.metrics_box_token_file ? metrics_box_token : NULL, err,
				      sizeof(err));
		if (ms == NULL) {
			nr_log(LOG_ERR, "netreduce-switch: --metrics-listen: %s", err);
			if (srv)
				nr_ctl_server_stop(srv);
			dp_box_stop(b);
			nr_ctl_destroy(ctl);
			dp_box_destroy(b, true);
			switch_rtl_detach(rtl);
			rte_eal_cleanup();
			return 1;
		}
	}
	banner(b, &cfg);
	/* ports up, workers running, listeners listening: ready */
	mc.b = b;
	mc.wd_usec = switch_sd_watchdog_usec();
	switch_sd_notify("READY=1");
	if (inline_worker) {
		rc = pthread_create(&st, NULL, main_loop, &mc);
		dp_worker_main(b->workers[0]);
		if (rc == 0)
			pthread_join(st, NULL);
	} else {
		main_loop(&mc);
	}
	switch_sd_notify("STOPPING=1");
	printf("netreduce-switch: %s, shutting down\n", got_signal ? strsignal(got_signal) : "stopped");
	dp_metrics_stop(ms);
	if (srv)
		nr_ctl_server_stop(srv);
	dp_box_stop(b);
	nr_ctl_destroy(ctl);
	dp_stats_line(b, err, sizeof(err));
	printf("final: %s\n", err);
	the_box = NULL;
	dp_box_destroy(b, true);
	switch_rtl_detach(rtl);
	rte_eal_cleanup();
	free(ov);
	return 0;
}
