/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration: defaults, the NR_* environment, validation, error strings. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/transport/nr_transport.h"
#include "nr_auth.h"
#include "nr_config.h"
#include "nr_tcp.h"
#include "nr_util.h"
#include "proto/nr_job.h"

/* This library's defaults, every field. */
static void defaults(struct nr_config *cfg)
{
	*cfg = (struct nr_config){
		.size = sizeof(*cfg),
		.rank = 0,
		.world = 1,
		.transport = NR_TP_KIND_DEFAULT,
		.soft_profile = NR_TP_PROFILE_DEFAULT_NAME,
		.mtu = 0,            /* auto: the largest NR_ADDR's interface carries (nr_comm.c) */
		.msg_size = 65536,
		.timeout_ms = 10000,
		.bootstrap_timeout_ms = 300000,
		.pool_msgs = 8,
		.channels = 1,
		.ring_window = 16,
		.udp_port = 4791,
		.gid_index = -1,
		.local_size = 1,
		.local_rank = -1,
		.short_dscp = NR_SHORT_DSCP_DEFAULT,
	};
}

/* The first version of struct nr_config ended with short_scale: no caller's is smaller. */
#define NR_CONFIG_SIZE_MIN (offsetof(struct nr_config, short_scale) + sizeof(uint8_t))
/* NR_DE_THRESH: a packet under 100 x the RMS is not small in any useful sense */
#define NR_DE_THRESH_MAX 100

/* Copy a full config's first size bytes to the caller's, size set to what it has. */
static void give(struct nr_config *cfg, size_t size, const struct nr_config *full)
{
	if (size > sizeof(*full))
		size = sizeof(*full);
	memcpy(cfg, full, size);
	cfg->size = (uint32_t)size;
}

void nr_config_init(struct nr_config *cfg, size_t size)
{
	struct nr_config full;

	defaults(&full);
	give(cfg, size, &full);
}

int nr_config_take(const struct nr_config *cfg, struct nr_config *full)
{
	defaults(full);
	if (!cfg || cfg->size < NR_CONFIG_SIZE_MIN || cfg->size > sizeof(*full)) {
		nr_set_tls_error("struct nr_config: size %u is not one of a netreduce.h (%zu..%zu "
				 "bytes): fill it with nr_config_default() or nr_config_from_env() first",
				 cfg ? cfg->size : 0, (size_t)NR_CONFIG_SIZE_MIN, sizeof(*full));
		return NR_ERR_CONFIG;
	}
	memcpy(full, cfg, cfg->size);
	full->size = sizeof(*full);
	return 0;
}

static int env_uint(const char *name, unsigned long long max, unsigned long long *out)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return 0;   /* unset or empty: the default */
	errno = 0;
	if (*s == '-')
		goto bad;
	*out = strtoull(s, &end, 0);
	if (errno || *end != '\0' || *out > max)
		goto bad;
	return 1;
bad:
	nr_set_tls_error("%s=\"%s\": not an integer in 0..%llu", name, s, max);
	return -1;
}

/* A number in 0..max (what: its kind, for the message): 1 set, 0 unset, -1 bad. */
static int env_double(const char *name, double max, const char *what, double *out)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s || !(v >= 0 && v <= max)) {
		nr_set_tls_error("%s=\"%s\": not %s (0..%g)", name, s, what, max);
		return -1;
	}
	*out = v;
	return 1;
}

static const char *env_str(const char *name, const char *dflt)
{
	const char *s = getenv(name);

	return s && *s ? s : dflt;
}

static int from_env(struct nr_config *cfg)
{
	static const struct { const char *name; unsigned long long max; size_t off; int size; } nums[] = {
#define F(n, m, f) { n, m, offsetof(struct nr_config, f), sizeof(((struct nr_config *)0)->f) }
		F("NR_RANK", INT_MAX, rank),
		F("NR_WORLD", INT_MAX, world),
		F("NR_MTU", 4096, mtu),
		F("NR_MSG_SIZE", UINT32_MAX, msg_size),
		F("NR_TIMEOUT_MS", 3600000, timeout_ms),
		F("NR_BOOTSTRAP_TIMEOUT_MS", 86400000, bootstrap_timeout_ms),
		F("NR_POOL_MSGS", 65536, pool_msgs),
		F("NR_RING_WINDOW", NR_RING_WINDOW_MAX, ring_window),
		F("NR_UDP_PORT", 65535, udp_port),
		F("NR_GID_INDEX", 255, gid_index),
		F("NR_ACK_TIMEOUT", 31, ack_timeout),
		F("NR_LOCAL_SIZE", 1024, local_size),
		F("NR_LOCAL_RANK", 1024, local_rank),
		F("NR_RACK_AGENTS", 4096, rack_agents),
		F("NR_TCLASS", 255, tclass),
		F("NR_SOFT_WINDOW", 1u << 22, soft_window),
		F("NR_SOFT_ACKREQ", 65535, soft_ackreq),
		F("NR_SHORT_PPM", NR_SHORT_PPM_MAX, short_ppm),
		F("NR_SHORT_DSCP", 63, short_dscp),
		F("NR_SHORT_SCALE", 1, short_scale),
		F("NR_SPRAY_PORTS", 255, spray_ports),
		F("NR_SPRAY_REORDER", 65535, spray_reorder),
		F("NR_PRIO_CLASSES", 255, prio_classes),
#undef F
	};
	static const struct { const char *name; double max; const char *what; size_t off; } dbl[] = {
		{ "NR_INTRA_GBPS", 1e6, "a bandwidth in Gbit/s", offsetof(struct nr_config, intra_gbps) },
		{ "NR_INTER_GBPS", 1e6, "a bandwidth in Gbit/s", offsetof(struct nr_config, inter_gbps) },
		{ "NR_SHM_PACE_GBPS", 1e6, "a bandwidth in Gbit/s",
		  offsetof(struct nr_config, shm_pace_gbps) },
		{ "NR_DE_THRESH", NR_DE_THRESH_MAX, "a multiple of the buffer's RMS",
		  offsetof(struct nr_config, de_thresh) },
	};
	const char *ch = env_str("NR_CHANNELS", NULL);
	unsigned long long v = 0;

	defaults(cfg);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		int rc = env_uint(nums[i].name, nums[i].max, &v);
		char *p = (char *)cfg + nums[i].off;

		if (rc < 0)
			return NR_ERR_CONFIG;
		if (rc == 0)
			continue;
		if (nums[i].size == 1)
			*(uint8_t *)p = v;
		else if (nums[i].size == 2)
			*(uint16_t *)p = v;
		else if (nums[i].size == 4)
			*(uint32_t *)p = v;   /* int and uint32_t alike, range checked above */
	}
	for (size_t i = 0; i < sizeof(dbl) / sizeof(dbl[0]); i++)
		if (env_double(dbl[i].name, dbl[i].max, dbl[i].what,
			       (double *)((char *)cfg + dbl[i].off)) < 0)
			return NR_ERR_CONFIG;
	cfg->hier = env_str("NR_HIER", NULL);
	cfg->racks = env_str("NR_RACKS", NULL);
	if (ch && !strcmp(ch, "auto")) {
		cfg->channels = 0;
	} else if (ch) {
		if (env_uint("NR_CHANNELS", NR_MAX_CHANNELS, &v) < 0 || v == 0) {
			nr_set_tls_error("NR_CHANNELS=\"%s\": use 1..%u, or auto (as many as the box has "
					 "workers)", ch, NR_MAX_CHANNELS);
			return NR_ERR_CONFIG;
		}
		cfg->channels = (uint32_t)v;
	}
	cfg->root = env_str("NR_ROOT", NULL);
	cfg->switch_addr = env_str("NR_BOX", NULL);
	{
		/* NR_SWITCH: NR_BOX's old name, still read (NEWS.md); never two boxes */
		const char *old = env_str("NR_SWITCH", NULL);

		if (old && cfg->switch_addr && strcmp(old, cfg->switch_addr)) {
			nr_set_tls_error("NR_BOX=\"%s\" and NR_SWITCH=\"%s\": NR_SWITCH is the old "
					 "name of NR_BOX; set NR_BOX alone",
					 cfg->switch_addr, old);
			return NR_ERR_CONFIG;
		}
		if (!cfg->switch_addr)
			cfg->switch_addr = old;
	}
	cfg->token = env_str("NR_TOKEN", NULL);
	cfg->job_secret = env_str("NR_JOB_SECRET", NULL);
	cfg->transport = env_str("NR_TRANSPORT", NR_TP_KIND_DEFAULT);
	cfg->soft_profile = env_str("NR_SOFT_PROFILE", cfg->soft_profile);
	cfg->reduce = env_str("NR_REDUCE", cfg->reduce);
	cfg->device = env_str("NR_DEVICE", NULL);
	cfg->addr = env_str("NR_ADDR", NULL);
	return nr_config_check_env(cfg, true);
}

static bool good_hostport(const char *s)
{
	uint32_t ip;
	uint16_t port;

	return nr_parse_hostport(s, &ip, &port) == 0 && port != 0;
}

int nr_list_split(const char *s, char *out, size_t width, unsigned max)
{
	unsigned n = 0;

	while (s && *s) {
		size_t len = strcspn(s, ",");

		if (len == 0 || len >= width || n == max)
			return -1;
		memcpy(out + n * width, s, len);
		out[n++ * width + len] = '\0';
		s += len;
		if (*s && !*++s)
			return -1; /* a trailing comma */
	}
	return n ? (int)n : -1;
}

int nr_boxes_parse(const char *s, char (*out)[NR_BOX_ADDR_LEN], unsigned max)
{
	int n = nr_list_split(s, out[0], NR_BOX_ADDR_LEN, max);

	for (int i = 0; i < n; i++) {
		if (!good_hostport(out[i]))
			return -1;
		for (int k = 0; k < i; k++)
			if (!strcmp(out[k], out[i]))
				return -1; /* a box twice would sum its channels twice */
	}
	return n;
}

int nr_racks_parse(const char *s, int *sizes, int max)
{
	char item[NR_RACKS_MAX][8];
	int n = nr_list_split(s, item[0], sizeof(item[0]),
			      (unsigned)(max < NR_RACKS_MAX ? max : NR_RACKS_MAX));

	for (int i = 0; i < n; i++) {
		char *end;
		long v;

		errno = 0;
		v = strtol(item[i], &end, 10);
		if (errno || end == item[i] || *end || v < 1 || v > 4096)
			return -1;
		sizes[i] = (int)v;
	}
	return n;
}

/*
 * The layout: local ranks and racks.  0 or NR_ERR_CONFIG with the message
 * set.  From the environment with world 1 (NR_WORLD unset: a framework such
 * as torch gives rank and world later) what depends on the world waits for
 * nr_config_check, which nr_comm_init calls.
 */
static int check_layout(const struct nr_config *cfg, bool env)
{
#define NAME(e, f) (env ? e : f)
	int sizes[NR_RACKS_MAX], n, sum = 0, smallest = 0;
	bool sized = !env || cfg->world > 1;

	if (cfg->local_size < 1 || cfg->local_size > 64 || (sized && cfg->world % cfg->local_size)) {
		nr_set_tls_error("%s=%d: must be 1..64 and divide %s=%d (every host runs as many "
				 "ranks)", NAME("NR_LOCAL_SIZE", "local_size"), cfg->local_size,
				 NAME("NR_WORLD", "world"), cfg->world);
		return NR_ERR_CONFIG;
	}
	if (sized && cfg->local_rank != -1 && cfg->local_rank != cfg->rank % cfg->local_size) {
		nr_set_tls_error("%s=%d: rank %d is local rank %d of its host (ranks are numbered "
				 "host by host)", NAME("NR_LOCAL_RANK", "local_rank"), cfg->local_rank,
				 cfg->rank, cfg->rank % cfg->local_size);
		return NR_ERR_CONFIG;
	}
	if (cfg->hier && strcmp(cfg->hier, "auto") && strcmp(cfg->hier, "parallel") &&
	    strcmp(cfg->hier, "hierarchical")) {
		nr_set_tls_error("%s=\"%s\": use auto, parallel or hierarchical",
				 NAME("NR_HIER", "hier"), cfg->hier);
		return NR_ERR_CONFIG;
	}
	if (!(cfg->intra_gbps >= 0 && cfg->inter_gbps >= 0 && cfg->shm_pace_gbps >= 0)) {
		nr_set_tls_error("%s: bandwidths must be >= 0 Gbit/s",
				 NAME("NR_INTRA_GBPS/NR_INTER_GBPS/NR_SHM_PACE_GBPS",
				      "intra_gbps/inter_gbps/shm_pace_gbps"));
		return NR_ERR_CONFIG;
	}
	if (!cfg->racks)
		return 0;
	n = nr_racks_parse(cfg->racks, sizes, NR_RACKS_MAX);
	for (int k = 0; k < n; k++) {
		sum += sizes[k];
		smallest = k == 0 || sizes[k] < smallest ? sizes[k] : smallest;
	}
	if (n < 1 || (sized && sum != cfg->world)) {
		nr_set_tls_error("%s=\"%s\": need hosts per rack, e.g. \"4,4\", adding up to %s=%d "
				 "(at most %d racks)", NAME("NR_RACKS", "racks"), cfg->racks,
				 NAME("NR_WORLD", "world"), cfg->world, NR_RACKS_MAX);
		return NR_ERR_CONFIG;
	}
	if (cfg->rack_agents < 0 || cfg->rack_agents > smallest) {
		nr_set_tls_error("%s=%d: 1..%d (the smallest rack of %s=\"%s\"), or 0 for all of them",
				 NAME("NR_RACK_AGENTS", "rack_agents"), cfg->rack_agents, smallest,
				 NAME("NR_RACKS", "racks"), cfg->racks);
		return NR_ERR_CONFIG;
	}
	if (cfg->local_size > 1) {
		nr_set_tls_error("%s with %s=%d: racks of hosts with several ranks are not supported",
				 NAME("NR_RACKS", "racks"), NAME("NR_LOCAL_SIZE", "local_size"),
				 cfg->local_size);
		return NR_ERR_CONFIG;
	}
	return 0;
#undef NAME
}

/* The bound on tolerant messages (netreduce.h, NR_MSG_TOLERANT): 0 or NR_ERR_CONFIG. */
static int check_short(const struct nr_config *cfg, bool env)
{
#define NAME(e, f) (env ? e : f)
	if (cfg->short_ppm > NR_SHORT_PPM_MAX) {
		nr_set_tls_error("%s=%u: at most %u packets per million (half a message's packets "
				 "may be summed short); 0 turns the bound off",
				 NAME("NR_SHORT_PPM", "short_ppm"), cfg->short_ppm, NR_SHORT_PPM_MAX);
		return NR_ERR_CONFIG;
	}
	if (cfg->short_dscp > 63) {
		nr_set_tls_error("%s=%u: a DSCP is 0..63 (default %u, AF11)",
				 NAME("NR_SHORT_DSCP", "short_dscp"), cfg->short_dscp,
				 NR_SHORT_DSCP_DEFAULT);
		return NR_ERR_CONFIG;
	}
	if (cfg->short_scale > 1) {
		nr_set_tls_error("%s=%u: 1 (scale a short sum by N/(N-1)) or 0 (leave it)",
				 NAME("NR_SHORT_SCALE", "short_scale"), cfg->short_scale);
		return NR_ERR_CONFIG;
	}
	if (cfg->de_thresh != 0 && !(cfg->de_thresh > 0 && cfg->de_thresh <= NR_DE_THRESH_MAX)) {
		nr_set_tls_error("%s=%g: a multiple of the buffer's RMS, 0..%g (0: no packet is "
				 "drop-eligible)", NAME("NR_DE_THRESH", "de_thresh"), cfg->de_thresh,
				 (double)NR_DE_THRESH_MAX);
		return NR_ERR_CONFIG;
	}
	if (cfg->de_thresh > 0 && !cfg->short_ppm) {
		nr_set_tls_error("%s=%g without %s: drop-eligible packets are tolerant ones; set "
				 "the bound (e.g. %s=10000)", NAME("NR_DE_THRESH", "de_thresh"),
				 cfg->de_thresh, NAME("NR_SHORT_PPM", "short_ppm"),
				 NAME("NR_SHORT_PPM", "short_ppm"));
		return NR_ERR_CONFIG;
	}
	if (cfg->de_thresh > 0 &&
	    cfg->short_dscp + 8u * (cfg->prio_classes > 1 ? cfg->prio_classes - 1u : 0) + 2 > 63) {
		nr_set_tls_error("%s with %s=%u: the drop-eligible DSCP (the highest class's + 2) "
				 "passes 63", NAME("NR_DE_THRESH", "de_thresh"),
				 NAME("NR_SHORT_DSCP", "short_dscp"), cfg->short_dscp);
		return NR_ERR_CONFIG;
	}
	if (cfg->short_scale && cfg->reduce && !strcmp(cfg->reduce, "max")) {
		nr_set_tls_error("%s=1 with %s=max: only a sum is scaled (a max without one rank is "
				 "the max of the others)", NAME("NR_SHORT_SCALE", "short_scale"),
				 NAME("NR_REDUCE", "reduce"));
		return NR_ERR_CONFIG;
	}
	return 0;
#undef NAME
}

/* The transport and its profile, as nr_tp_tune knows them. */
static int check_transport(const struct nr_config *cfg, bool env)
{
	struct nr_tp_config tcfg = { .kind = cfg->transport };
	struct nr_tp_wish wish = { .profile = cfg->soft_profile,
				   .spray_ports = cfg->spray_ports,
				   .msg_tclass = cfg->prio_classes > 1 };
	char err[160];
	int r;

	if (!cfg->transport) {
		nr_set_tls_error("%s is NULL: name a transport (soft or verbs)",
				 env ? "NR_TRANSPORT" : "transport");
		return -EINVAL;
	}
	r = nr_tp_tune(&tcfg, &wish, err, sizeof(err));
	if (r == -ENOENT)
		nr_set_tls_error("%s=\"%s\": %s", env ? "NR_TRANSPORT" : "transport",
				 cfg->transport, err);
	else if (r == -ENOTSUP && wish.spray_ports > 1)
		nr_set_tls_error("%s=%u with %s=%s: %s", env ? "NR_SPRAY_PORTS" : "spray_ports",
				 cfg->spray_ports, env ? "NR_TRANSPORT" : "transport",
				 cfg->transport, err);
	else if (r == -ENOTSUP)
		nr_set_tls_error("%s=%u with %s=%s: %s", env ? "NR_PRIO_CLASSES" : "prio_classes",
				 cfg->prio_classes, env ? "NR_TRANSPORT" : "transport",
				 cfg->transport, err);
	else if (r)
		nr_set_tls_error("%s=\"%s\": %s", env ? "NR_SOFT_PROFILE" : "soft_profile",
				 cfg->soft_profile, err);
	return r;
}

/* Spraying and classes, within the box job's limits (proto/nr_job.h). */
static int check_spray(const struct nr_config *cfg, bool env)
{
#define NAME(e, f) (env ? e : f)
	if (cfg->spray_ports > NR_MAX_SPRAY) {
		nr_set_tls_error("%s=%u: at most %u UDP source ports a QP (1: no spraying)",
				 NAME("NR_SPRAY_PORTS", "spray_ports"), cfg->spray_ports,
				 NR_MAX_SPRAY);
		return NR_ERR_CONFIG;
	}
	if (cfg->spray_reorder > NR_MAX_REORDER) {
		nr_set_tls_error("%s=%u: at most %u packets out of order",
				 NAME("NR_SPRAY_REORDER", "spray_reorder"), cfg->spray_reorder,
				 NR_MAX_REORDER);
		return NR_ERR_CONFIG;
	}
	if (cfg->prio_classes > NR_MAX_CLASSES) {
		nr_set_tls_error("%s=%u: at most %u classes (0 or 1: none)",
				 NAME("NR_PRIO_CLASSES", "prio_classes"), cfg->prio_classes,
				 NR_MAX_CLASSES);
		return NR_ERR_CONFIG;
	}
	if (cfg->prio_classes > 1 && cfg->short_dscp + 8u * cfg->prio_classes > 63) {
		nr_set_tls_error("%s=%u from %s=%u: the exact messages' DSCP above the classes, "
				 "%u, is over 63 (a class is 8 DSCPs up)",
				 NAME("NR_PRIO_CLASSES", "prio_classes"), cfg->prio_classes,
				 NAME("NR_SHORT_DSCP", "short_dscp"), cfg->short_dscp,
				 cfg->short_dscp + 8u * cfg->prio_classes);
		return NR_ERR_CONFIG;
	}
	if (cfg->prio_classes > 1 && cfg->channels != 1 &&
	    cfg->channels != cfg->prio_classes + 1u) {
		nr_set_tls_error("%s=%u with %s=%u: the classes take %u channels (one a class, one "
				 "for exact messages); leave %s unset",
				 NAME("NR_PRIO_CLASSES", "prio_classes"), cfg->prio_classes,
				 NAME("NR_CHANNELS", "channels"), cfg->channels,
				 cfg->prio_classes + 1u, NAME("NR_CHANNELS", "channels"));
		return NR_ERR_CONFIG;
	}
	if (cfg->spray_reorder && cfg->spray_ports < 2) {
		nr_set_tls_error("%s=%u without %s: one port sends in order",
				 NAME("NR_SPRAY_REORDER", "spray_reorder"), cfg->spray_reorder,
				 NAME("NR_SPRAY_PORTS", "spray_ports"));
		return NR_ERR_CONFIG;
	}
	return 0;
#undef NAME
}

/* names: env variable names (true) or struct field names (false) in messages. */
int nr_config_check_env(const struct nr_config *cfg, bool env)
{
#define NAME(e, f) (env ? e : f)
	struct in_addr a;
	char why[256];

	if (cfg->world < 1) {
		nr_set_tls_error("%s=%d: the world size must be at least 1",
				 NAME("NR_WORLD", "world"), cfg->world);
		return NR_ERR_CONFIG;
	}
	if (cfg->rank < 0 || cfg->rank >= cfg->world) {
		nr_set_tls_error("%s=%d: must be in 0..%d (%s=%d)", NAME("NR_RANK", "rank"),
				 cfg->rank, cfg->world - 1, NAME("NR_WORLD", "world"), cfg->world);
		return NR_ERR_CONFIG;
	}
	if (check_transport(cfg, env))
		return NR_ERR_CONFIG;
	if (cfg->reduce && strcmp(cfg->reduce, "sum") && strcmp(cfg->reduce, "max")) {
		nr_set_tls_error("%s=\"%s\": use sum or max (what the box job computes)",
				 NAME("NR_REDUCE", "reduce"), cfg->reduce);
		return NR_ERR_CONFIG;
	}
	if (cfg->reduce && !strcmp(cfg->reduce, "max") && (cfg->local_size > 1 || cfg->racks)) {
		nr_set_tls_error("%s=max: hosts with several ranks and racks sum in their local and "
				 "rack phases; max takes one rank per host in one rack",
				 NAME("NR_REDUCE", "reduce"));
		return NR_ERR_CONFIG;
	}
	if (check_short(cfg, env) || check_spray(cfg, env))
		return NR_ERR_CONFIG;
	if (cfg->mtu != 0 && cfg->mtu != 256 && cfg->mtu != 512 && cfg->mtu != 1024 &&
	    cfg->mtu != 2048 && cfg->mtu != 4096) {
		nr_set_tls_error("%s=%u: use 256, 512, 1024, 2048 or 4096, or 0 (unset: the largest "
				 "the interface of %s carries)", NAME("NR_MTU", "mtu"), cfg->mtu,
				 NAME("NR_ADDR", "addr"));
		return NR_ERR_CONFIG;
	}
	/* with the MTU unset, a multiple of the smallest; the MTU then divides it (nr_comm.c) */
	if (cfg->msg_size == 0 || cfg->msg_size % (cfg->mtu ? cfg->mtu : 256) ||
	    cfg->msg_size > (1u << 30)) {
		nr_set_tls_error("%s=%u: must be a multiple of the MTU (%u) up to 1 GiB",
				 NAME("NR_MSG_SIZE", "msg_size"), cfg->msg_size,
				 cfg->mtu ? cfg->mtu : 256);
		return NR_ERR_CONFIG;
	}
	if (cfg->timeout_ms < 10) {
		nr_set_tls_error("%s=%u: must be at least 10 ms", NAME("NR_TIMEOUT_MS", "timeout_ms"),
				 cfg->timeout_ms);
		return NR_ERR_CONFIG;
	}
	if (cfg->bootstrap_timeout_ms < 10) {
		nr_set_tls_error("%s=%u: must be at least 10 ms",
				 NAME("NR_BOOTSTRAP_TIMEOUT_MS", "bootstrap_timeout_ms"),
				 cfg->bootstrap_timeout_ms);
		return NR_ERR_CONFIG;
	}
	if (cfg->pool_msgs < 2 || cfg->pool_msgs % 2) {
		nr_set_tls_error("%s=%u: must be even and at least 2",
				 NAME("NR_POOL_MSGS", "pool_msgs"), cfg->pool_msgs);
		return NR_ERR_CONFIG;
	}
	if (cfg->channels > NR_MAX_CHANNELS) {
		nr_set_tls_error("channels=%u: use 1..%u, or 0 (as many as the box has workers)",
				 cfg->channels, NR_MAX_CHANNELS);
		return NR_ERR_CONFIG;
	}
	if (cfg->ring_window < 1 || cfg->ring_window > NR_RING_WINDOW_MAX) {
		nr_set_tls_error("%s=%u: must be in 1..%u (the ring's messages in flight stay below "
				 "the receives it keeps posted)", NAME("NR_RING_WINDOW", "ring_window"),
				 cfg->ring_window, NR_RING_WINDOW_MAX);
		return NR_ERR_CONFIG;
	}
	if (cfg->world > 1) {
		if (!cfg->root || !good_hostport(cfg->root)) {
			nr_set_tls_error("%s=\"%s\": need the rendezvous address ip:port of rank 0",
					 NAME("NR_ROOT", "root"), cfg->root ? cfg->root : "");
			return NR_ERR_CONFIG;
		}
		if (!cfg->addr || inet_pton(AF_INET, cfg->addr, &a) != 1) {
			nr_set_tls_error("%s=\"%s\": need this host's IPv4 address on the data path",
					 NAME("NR_ADDR", "addr"), cfg->addr ? cfg->addr : "");
			return NR_ERR_CONFIG;
		}
	}
	if (cfg->switch_addr) {
		char boxes[NR_MAX_BOXES][NR_BOX_ADDR_LEN];
		int n = nr_boxes_parse(cfg->switch_addr, boxes, NR_MAX_BOXES);

		if (n < 0) {
			nr_set_tls_error("%s=\"%s\": need the box's control address ip:port, or "
					 "the addresses of up to %u boxes a job is striped over, "
					 "comma-separated, each once",
					 NAME("NR_BOX", "switch_addr"), cfg->switch_addr,
					 NR_MAX_BOXES);
			return NR_ERR_CONFIG;
		}
		if (n > 1 && cfg->channels > 1 && cfg->channels % (unsigned)n) {
			nr_set_tls_error("%s=%u over %d boxes (%s): a job's channels are dealt to the "
					 "boxes in turn, channel c to box c mod %d; give a multiple of %d (1, "
					 "the default: one a box)",
					 NAME("NR_CHANNELS", "channels"), cfg->channels, n,
					 NAME("NR_BOX", "switch_addr"), n, n);
			return NR_ERR_CONFIG;
		}
	}
	if (cfg->switch_addr && cfg->world > 1 && (!cfg->token || !*cfg->token)) {
		nr_set_tls_error("%s: the box's control API needs the shared token (%s is set)",
				 NAME("NR_TOKEN", "token"), NAME("NR_BOX", "switch_addr"));
		return NR_ERR_CONFIG;
	}
	if (nr_auth_check_secret(cfg->job_secret, why, sizeof(why))) {
		nr_set_tls_error("%s: %s", NAME("NR_JOB_SECRET", "job_secret"), why);
		return NR_ERR_CONFIG;
	}
	return check_layout(cfg, env);
#undef NAME
}

int nr_config_check(const struct nr_config *cfg)
{
	struct nr_config full;
	int rc = nr_config_take(cfg, &full);

	return rc ? rc : nr_config_check_env(&full, false);
}

int nr_config_init_env(struct nr_config *cfg, size_t size)
{
	struct nr_config full;
	int rc = from_env(&full);

	give(cfg, size, &full);
	return rc;
}
