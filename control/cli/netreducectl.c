/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreducectl: the admin CLI of the box.  One JSON line out, one back
 * (PROTOCOL.md).  Human-readable output by default, the raw reply with
 * --json.  Exit codes a script can rely on:
 *   0  ok (health: healthy)
 *   1  the box answered with an error (printed on stderr, "netreducectl: ..."),
 *      or health: unhealthy (the reason on stdout)
 *   2  usage error
 *   3  cannot connect, or the connection was lost before a reply
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "control/tls/nr_tls.h"

#define DEFAULT_SOCKET "/run/netreduce/netreduce.sock"
#define REPLY_MAX (16u << 20)
#define REPLY_TIMEOUT_MS 10000

enum { EX_OK = 0, EX_REPLY = 1, EX_USAGE = 2, EX_CONNECT = 3 };

struct opts {
	const char *socket;
	const char *connect;
	const char *token;
	const char *tls_ca;    /* --tls-ca: TLS over --connect, the box checked against it */
	const char *key;
	const char *name;      /* job create --name */
	bool json;
	bool watch;
	double watch_s;
	long count;            /* --count N: stop --watch after N rounds (0: forever) */
	const char *pos[4];
	int npos;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: netreducectl [--socket PATH | --connect IP:PORT --token T [--tls-ca F]] [--json]\n"
		"                    COMMAND\n"
		"\n"
		"commands:\n"
		"  jobs                          list jobs (UNIX socket only)\n"
		"  job create FILE.json [--name N]  create a job from a spec file (\"-\": stdin),\n"
		"                                named N (letters, digits, . _ : -)\n"
		"  job show ID [--key K]         state, progress, counters, connections\n"
		"  job destroy ID [--key K]      destroy a job\n"
		"  stats [--watch [SECONDS]] [--count N]\n"
		"                                box counters (repeat every SECONDS, default 1)\n"
		"  backend                       backend name, capacity, device\n"
		"  health                        healthy or not and why: ports linked, workers\n"
		"                                polling (exit 0 healthy, 1 unhealthy, 3 no answer)\n"
		"\n"
		"options:\n"
		"  --socket PATH     admin socket (default %s, or $NETREDUCE_SOCKET)\n"
		"  --connect IP:PORT the TCP listener instead (needs --token or $NETREDUCE_TOKEN)\n"
		"  --tls-ca FILE     TLS to the TCP listener, the box's certificate checked against\n"
		"                    the CA certificate(s) in FILE and the IP of --connect (or\n"
		"                    $NETREDUCE_TLS_CA); a box started with --tls-cert wants it\n"
		"  --json            print the raw JSON reply\n"
		"  -h, --help        this text\n"
		"\n"
		"exit codes: 0 ok, 1 error reply from the box (health: unhealthy), 2 usage error,\n"
		"3 cannot connect\n",
		DEFAULT_SOCKET);
}

static int usage_err(const char *msg, const char *arg)
{
	fprintf(stderr, "netreducectl: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "try 'netreducectl --help'\n");
	return EX_USAGE;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	int i;

	o->socket = getenv("NETREDUCE_SOCKET");
	o->token = getenv("NETREDUCE_TOKEN");
	o->tls_ca = getenv("NETREDUCE_TLS_CA");
	o->watch_s = 1.0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(EX_OK);
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--socket") || !strcmp(a, "--connect") || !strcmp(a, "--token") ||
			   !strcmp(a, "--key") || !strcmp(a, "--count") || !strcmp(a, "--name") ||
			   !strcmp(a, "--tls-ca")) {
			if (i + 1 >= argc)
				return usage_err("option needs a value", a);
			if (!strcmp(a, "--socket"))
				o->socket = argv[++i];
			else if (!strcmp(a, "--connect"))
				o->connect = argv[++i];
			else if (!strcmp(a, "--token"))
				o->token = argv[++i];
			else if (!strcmp(a, "--key"))
				o->key = argv[++i];
			else if (!strcmp(a, "--tls-ca"))
				o->tls_ca = argv[++i];
			else if (!strcmp(a, "--name"))
				o->name = argv[++i];
			else {
				char *end;

				o->count = strtol(argv[++i], &end, 10);
				if (*end || o->count < 1)
					return usage_err("--count needs a positive number", argv[i]);
			}
		} else if (!strcmp(a, "--watch")) {
			o->watch = true;
			if (i + 1 < argc) {
				char *end;
				double v = strtod(argv[i + 1], &end);

				if (end != argv[i + 1] && !*end) {
					if (v <= 0 || v > 86400)
						return usage_err("--watch SECONDS must be in (0, 86400]", argv[i + 1]);
					o->watch_s = v;
					i++;
				}
			}
		} else if (a[0] == '-' && a[1]) {
			return usage_err("unknown option", a);
		} else {
			if (o->npos >= 4)
				return usage_err("too many arguments", a);
			o->pos[o->npos++] = a;
		}
	}
	if (!o->socket)
		o->socket = DEFAULT_SOCKET;
	if (o->connect && (!o->token || !o->token[0]))
		return usage_err("--connect needs --token (or $NETREDUCE_TOKEN)", NULL);
	if (o->tls_ca && !o->tls_ca[0])
		o->tls_ca = NULL;
	if (o->tls_ca && !o->connect && getenv("NETREDUCE_TLS_CA") != o->tls_ca)
		return usage_err("--tls-ca goes with --connect (the UNIX socket is not TLS)", NULL);
	return -1;
}

/* ---- transport ---------------------------------------------------------- */

static int dial(const struct opts *o)
{
	int fd;

	if (o->connect) {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
		struct addrinfo *ai = NULL;
		char host[128], *colon;

		snprintf(host, sizeof(host), "%s", o->connect);
		colon = strrchr(host, ':');
		if (!colon) {
			fprintf(stderr, "netreducectl: --connect %s: expected IP:PORT\n", o->connect);
			return -EX_USAGE;
		}
		*colon = '\0';
		if (host[0] == '[' && colon > host && colon[-1] == ']') {
			colon[-1] = '\0';
			memmove(host, host + 1, strlen(host));
		}
		if (getaddrinfo(host, colon + 1, &hints, &ai) || !ai) {
			fprintf(stderr, "netreducectl: --connect %s: expected a numeric IP:PORT\n",
				o->connect);
			return -EX_USAGE;
		}
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			fprintf(stderr, "netreducectl: cannot connect to %s: %s (is netreduce-switch "
				"running with a TCP listener there?)\n", o->connect, strerror(errno));
			if (fd >= 0)
				close(fd);
			freeaddrinfo(ai);
			return -EX_CONNECT;
		}
		freeaddrinfo(ai);
		return fd;
	}
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(o->socket) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "netreducectl: socket path %s is too long\n", o->socket);
		return -EX_USAGE;
	}
	memcpy(sa.sun_path, o->socket, strlen(o->socket) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "netreducectl: cannot connect to %s: %s (is netreduce-switch running? "
			"--socket or $NETREDUCE_SOCKET choose another path)\n", o->socket, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EX_CONNECT;
	}
	return fd;
}

static const char *peer_name(const struct opts *o)
{
	return o->connect ? o->connect : o->socket;
}

/* A connection: the socket, and TLS over it with --tls-ca. */
struct conn {
	int fd;
	struct nr_tls_conn *tls;
};

/* TLS over fd with --tls-ca: EX_OK, or EX_* with the reason printed. */
static int tls_start(const struct opts *o, struct conn *k)
{
	static struct nr_tls_client *ctx;   /* one for every request of a --watch */
	char host[128], err[512];

	if (!ctx && !(ctx = nr_tls_client_new(o->tls_ca, err, sizeof(err)))) {
		fprintf(stderr, "netreducectl: --tls-ca %s: %s\n", o->tls_ca, err);
		return EX_USAGE;
	}
	if (nr_tls_host_of(o->connect, host, sizeof(host)) != 0) {
		fprintf(stderr, "netreducectl: --connect %s: expected IP:PORT\n", o->connect);
		return EX_USAGE;
	}
	k->tls = nr_tls_connect(ctx, k->fd, host, REPLY_TIMEOUT_MS, err, sizeof(err));
	if (!k->tls) {
		fprintf(stderr, "netreducectl: %s: %s\n", o->connect, err);
		return EX_CONNECT;
	}
	return EX_OK;
}

/* All of buf: 0, or -1 with the reason printed. */
static int conn_send(const struct opts *o, struct conn *k, const char *buf, size_t len)
{
	char err[256];
	size_t off = 0;

	if (k->tls) {
		if (nr_tls_send(k->tls, buf, len, REPLY_TIMEOUT_MS, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "netreducectl: %s: %s\n", peer_name(o), err);
		return -1;
	}
	while (off < len) {
		ssize_t w = send(k->fd, buf + off, len - off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "netreducectl: %s: send: %s\n", peer_name(o), strerror(errno));
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

/* Some bytes of the reply: how many, 0 at its end, -1 with the reason printed. */
static ssize_t conn_recv(const struct opts *o, struct conn *k, char *buf, size_t len)
{
	struct pollfd p = { .fd = k->fd, .events = POLLIN };
	char err[256];
	ssize_t r;

	if (k->tls) {
		r = nr_tls_recv(k->tls, buf, len, REPLY_TIMEOUT_MS, err, sizeof(err));
		if (r < 0)
			fprintf(stderr, "netreducectl: %s: %s\n", peer_name(o), err);
		return r;
	}
	if (poll(&p, 1, REPLY_TIMEOUT_MS) == 0) {
		fprintf(stderr, "netreducectl: %s: no reply within %d s\n", peer_name(o),
			REPLY_TIMEOUT_MS / 1000);
		return -1;
	}
	do
		r = recv(k->fd, buf, len, 0);
	while (r < 0 && errno == EINTR);
	return r < 0 ? 0 : r;
}

/* Send req (token added over TCP), read one reply line.  EX_* on failure. */
static int transact(const struct opts *o, json_t *req, json_t **reply)
{
	char *line = NULL, *buf = NULL;
	size_t len = 0, cap = 0;
	struct conn k = { .fd = -1 };
	json_error_t je;
	int ex = EX_CONNECT;

	*reply = NULL;
	k.fd = dial(o);
	if (k.fd < 0)
		return -k.fd;
	if (o->connect && o->tls_ca && (ex = tls_start(o, &k)) != EX_OK)
		goto out;
	ex = EX_CONNECT;
	if (o->connect)
		json_object_set_new(req, "token", json_string(o->token));
	line = json_dumps(req, JSON_COMPACT);
	if (!line) {
		fprintf(stderr, "netreducectl: out of memory\n");
		ex = EX_REPLY;
		goto out;
	}
	len = strlen(line);
	line[len++] = '\n';   /* json_dumps's NUL becomes the newline */
	if (conn_send(o, &k, line, len))
		goto out;
	len = 0;
	for (;;) {
		ssize_t r;
		char *nl;

		if (len + 4096 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			if (cap > REPLY_MAX) {
				fprintf(stderr, "netreducectl: %s: reply longer than %u bytes\n",
					peer_name(o), REPLY_MAX);
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb)
				goto out;
			buf = nb;
		}
		r = conn_recv(o, &k, buf + len, cap - len - 1);
		if (r < 0)
			goto out;
		if (r == 0) {
			fprintf(stderr, "netreducectl: %s: connection closed before a reply\n",
				peer_name(o));
			goto out;
		}
		len += (size_t)r;
		nl = memchr(buf, '\n', len);
		if (!nl)
			continue;
		*reply = json_loadb(buf, (size_t)(nl - buf), 0, &je);
		if (!*reply || !json_is_object(*reply)) {
			fprintf(stderr, "netreducectl: %s: reply is not a JSON object: %s\n",
				peer_name(o), *reply ? "wrong type" : je.text);
			json_decref(*reply);
			*reply = NULL;
			ex = EX_REPLY;
			goto out;
		}
		ex = EX_OK;
		break;
	}
out:
	free(line);
	free(buf);
	nr_tls_close(k.tls);
	close(k.fd);
	return ex;
}

/* ---- output ------------------------------------------------------------- */

static char *scalar_str(const json_t *v)
{
	char *s = NULL;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v) || json_is_real(v) || json_is_boolean(v) || json_is_null(v))
		s = json_dumps(v, JSON_ENCODE_ANY);
	return s ? s : strdup("?");
}

struct kv {
	char *k, *v;
};

struct kvlist {
	struct kv *e;
	size_t n, cap;
	size_t wk;
};

static void kv_add(struct kvlist *l, const char *k, char *v)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		struct kv *e = realloc(l->e, cap * sizeof(*e));

		if (!e) {
			free(v);
			return;
		}
		l->e = e;
		l->cap = cap;
	}
	l->e[l->n].k = strdup(k);
	l->e[l->n].v = v;
	if (strlen(k) > l->wk)
		l->wk = strlen(k);
	l->n++;
}

/* Flatten nested objects and arrays into "a.b[2].c  value" lines. */
static void flatten(struct kvlist *l, const char *prefix, const json_t *v)
{
	char name[256];

	if (json_is_object(v)) {
		const char *k;
		json_t *x;

		json_object_foreach((json_t *)v, k, x) {
			snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "." : "", k);
			flatten(l, name, x);
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x) {
			snprintf(name, sizeof(name), "%s[%zu]", prefix, i);
			flatten(l, name, x);
		}
	} else {
		kv_add(l, prefix, scalar_str(v));
	}
}

static void kv_print(struct kvlist *l, const char *indent)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		printf("%s%-*s  %s\n", indent, (int)l->wk, l->e[i].k, l->e[i].v);
		free(l->e[i].k);
		free(l->e[i].v);
	}
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static void print_flat(const json_t *v, const char *indent)
{
	struct kvlist l = { 0 };

	flatten(&l, "", v);
	kv_print(&l, indent);
}

/* An aligned table of the given columns over an array of objects. */
static void print_table(const json_t *arr, const char *const *cols, const char *const *heads,
			unsigned ncols)
{
	size_t w[16] = { 0 }, i;
	unsigned c;
	json_t *row;

	for (c = 0; c < ncols; c++)
		w[c] = strlen(heads[c]);
	json_array_foreach(arr, i, row) {
		for (c = 0; c < ncols; c++) {
			char *s = scalar_str(json_object_get(row, cols[c]));

			if (s && strlen(s) > w[c])
				w[c] = strlen(s);
			free(s);
		}
	}
	for (c = 0; c < ncols; c++)
		printf("%-*s%s", c + 1 < ncols ? (int)w[c] : 0, heads[c], c + 1 < ncols ? "  " : "\n");
	json_array_foreach(arr, i, row) {
		for (c = 0; c < ncols; c++) {
			json_t *v = json_object_get(row, cols[c]);
			char *s = v ? scalar_str(v) : strdup("-");

			printf("%-*s%s", c + 1 < ncols ? (int)w[c] : 0, s ? s : "", c + 1 < ncols ? "  " : "\n");
			free(s);
		}
	}
}

static void show_jobs(const json_t *reply)
{
	static const char *const cols[] = { "id", "name", "tenant", "state", "ranks", "mode", "dtype",
					     "msg_size", "credits", "completed" };
	static const char *const heads[] = { "ID", "NAME", "TENANT", "STATE", "RANKS", "MODE", "DTYPE",
					     "MSG_SIZE", "CREDITS", "COMPLETED" };
	const json_t *jobs = json_object_get(reply, "jobs");

	if (!json_array_size(jobs)) {
		printf("no jobs\n");
		return;
	}
	print_table(jobs, cols, heads, 10);
}

static void show_job(const json_t *job)
{
	static const char *const ccols[] = { "rank", "src_ip", "src_qpn", "dst_ip", "dst_qpn", "ipsn",
					     "left_out" };
	static const char *const cheads[] = { "RANK", "SRC_IP", "SRC_QPN", "DST_IP", "DST_QPN", "IPSN",
					      "LEFT_OUT" };
	const json_t *left_out = json_object_get(job, "left_out");
	static const char *const top[] = { "id", "name", "tenant", "state", "reason", "ranks", "credits",
					   "result_key", "next_emit", "next_release", "completed", "slots",
					   "slots_busy", "lease_ms", "lease_left_ms" };
	const json_t *spec = json_object_get(job, "spec");
	const json_t *conns = json_object_get(spec, "conns");
	struct kvlist l = { 0 };
	json_t *tab, *c;
	unsigned i;
	size_t k;

	for (i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		json_t *v = json_object_get(job, top[i]);

		if (!v || ((!strcmp(top[i], "reason") || !strcmp(top[i], "name")) &&
			   !strcmp(json_string_value(v) ?: "", "")))
			continue;
		if (!strcmp(top[i], "result_key") && json_is_integer(v)) {
			char *h = malloc(16);

			if (h)
				snprintf(h, 16, "0x%08llx", (unsigned long long)json_integer_value(v));
			kv_add(&l, top[i], h ? h : strdup("?"));
			continue;
		}
		kv_add(&l, top[i], scalar_str(v));
	}
	if (json_is_object(spec)) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)spec, key, v)
			if (!json_is_array(v))
				kv_add(&l, key, scalar_str(v));
	}
	kv_print(&l, "");
	tab = json_array();
	json_array_foreach(conns, k, c) {
		json_t *row = json_deep_copy(c);

		json_object_set_new(row, "rank", json_integer((json_int_t)k));
		/* short slots: what the box left out of this rank's contributions */
		if (json_array_get(left_out, k))
			json_object_set(row, "left_out", json_array_get(left_out, k));
		json_array_append_new(tab, row);
	}
	printf("\nconnections:\n");
	print_table(tab, ccols, cheads, left_out ? 7 : 6);
	json_decref(tab);
	printf("\ncounters:\n");
	print_flat(json_object_get(job, "counters"), "  ");
	if (json_object_get(job, "short_why")) {
		printf("\nshort_denied by reason:\n");
		print_flat(json_object_get(job, "short_why"), "  ");
	}
	if (json_is_array(json_object_get(job, "short_by_class"))) {
		const json_t *bc = json_object_get(job, "short_by_class");

		printf("\nshort_slots by priority class (0 the lowest):");
		for (size_t i = 0; i < json_array_size(bc); i++)
			printf(" %" JSON_INTEGER_FORMAT, json_integer_value(json_array_get(bc, i)));
		printf("\n");
	}
	if (json_is_object(json_object_get(job, "drop_eligible"))) {
		const json_t *de = json_object_get(job, "drop_eligible");

		printf("\ndrop-eligible: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
		       " tolerant contributions received, %" JSON_INTEGER_FORMAT
		       " short_slots of them alone\n",
		       json_integer_value(json_object_get(de, "received")),
		       json_integer_value(json_object_get(de, "tolerant")),
		       json_integer_value(json_object_get(de, "short")));
	}
}

/* "healthy: ..." or "unhealthy: <reason>", then the checks. */
static void show_health(const json_t *h)
{
	const json_t *v;
	size_t i;

	if (json_is_true(json_object_get(h, "healthy")))
		printf("healthy: %lld ports linked, %lld workers polling\n",
		       (long long)json_integer_value(json_object_get(h, "ports_up")),
		       (long long)json_integer_value(json_object_get(h, "workers_polling")));
	else
		printf("unhealthy: %s\n", json_string_value(json_object_get(h, "reason")) ?: "?");
	json_array_foreach(json_object_get(h, "ports"), i, v)
		printf("  port %lld %-20s link %s\n", (long long)json_integer_value(json_object_get(v, "port")),
		       json_string_value(json_object_get(v, "name")) ?: "?",
		       json_is_true(json_object_get(v, "link_up")) ? "up" : "DOWN");
	json_array_foreach(json_object_get(h, "workers"), i, v)
		printf("  worker %lld (lcore %lld)  %s, heartbeat %lld ms ago\n",
		       (long long)json_integer_value(json_object_get(v, "worker")),
		       (long long)json_integer_value(json_object_get(v, "lcore")),
		       json_is_true(json_object_get(v, "polling")) ? "polling" : "STUCK",
		       (long long)json_integer_value(json_object_get(v, "heartbeat_age_ms")));
	if ((v = json_object_get(h, "note")))
		printf("  (%s)\n", json_string_value(v) ?: "");
}

/* ---- commands ----------------------------------------------------------- */

static json_t *load_spec(const char *path, int *ex)
{
	json_error_t je;
	json_t *spec;

	if (!strcmp(path, "-"))
		spec = json_loadf(stdin, JSON_REJECT_DUPLICATES, &je);
	else
		spec = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!spec) {
		if (strstr(je.text, "unable to open"))
			fprintf(stderr, "netreducectl: %s\n", je.text);
		else if (je.line < 0)
			fprintf(stderr, "netreducectl: %s: %s\n", path, je.text);
		else
			fprintf(stderr, "netreducectl: %s:%d:%d: %s\n", path, je.line, je.column, je.text);
		*ex = EX_USAGE;
		return NULL;
	}
	return spec;
}

static long parse_id(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return (errno || *end || v < 1 || v > 1000000) ? -1 : v;
}

/* Build the request of the command line; NULL and *ex on a usage error. */
static json_t *build_request(const struct opts *o, int *ex)
{
	const char *cmd = o->npos ? o->pos[0] : NULL;
	json_t *req;

	*ex = EX_USAGE;
	if (!cmd) {
		usage_err("missing command", NULL);
		return NULL;
	}
	if (o->name && (strcmp(cmd, "job") || o->npos < 2 || strcmp(o->pos[1], "create"))) {
		usage_err("--name goes with job create", NULL);
		return NULL;
	}
	if (!strcmp(cmd, "jobs") || !strcmp(cmd, "stats") || !strcmp(cmd, "backend") ||
	    !strcmp(cmd, "health")) {
		if (o->npos != 1) {
			usage_err("unexpected argument", o->pos[1]);
			return NULL;
		}
		if (o->watch && strcmp(cmd, "stats")) {
			usage_err("--watch goes with stats", NULL);
			return NULL;
		}
		return json_pack("{s:s}", "op", !strcmp(cmd, "jobs") ? "job_list" :
				 !strcmp(cmd, "stats") ? "stats" : !strcmp(cmd, "health") ? "health" :
				 "backend_info");
	}
	if (strcmp(cmd, "job")) {
		usage_err("unknown command", cmd);
		return NULL;
	}
	if (o->npos != 3) {
		usage_err(o->npos < 3 ? "job needs a subcommand and an argument (create FILE, "
			  "show ID, destroy ID)" : "unexpected argument", o->npos > 3 ? o->pos[3] : NULL);
		return NULL;
	}
	if (!strcmp(o->pos[1], "create")) {
		json_t *spec = load_spec(o->pos[2], ex);

		if (!spec)
			return NULL;
		req = json_pack("{s:s,s:o}", "op", "job_create", "spec", spec);
		if (o->name)
			json_object_set_new(req, "name", json_string(o->name));
	} else if (!strcmp(o->pos[1], "show") || !strcmp(o->pos[1], "destroy")) {
		long id = parse_id(o->pos[2]);

		if (id < 0) {
			usage_err("not a job id (a positive integer)", o->pos[2]);
			return NULL;
		}
		req = json_pack("{s:s,s:I}", "op", !strcmp(o->pos[1], "show") ? "job_status" : "job_destroy",
				"job", (json_int_t)id);
		if (o->key)
			json_object_set_new(req, "key", json_string(o->key));
	} else {
		usage_err("unknown job subcommand", o->pos[1]);
		return NULL;
	}
	*ex = EX_OK;
	return req;
}

/* --json: the reply as the box sent it, one line. */
static void print_json(const json_t *reply)
{
	char *s = json_dumps(reply, JSON_COMPACT);

	if (s)
		printf("%s\n", s);
	free(s);
}

static void show_reply(const struct opts *o, const json_t *req, const json_t *reply)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	if (o->json) {
		print_json(reply);
		return;
	}
	if (!strcmp(op, "job_list")) {
		show_jobs(reply);
	} else if (!strcmp(op, "job_create")) {
		printf("job %lld created\n", (long long)json_integer_value(json_object_get(reply, "job")));
		printf("  credits     %lld\n", (long long)json_integer_value(json_object_get(reply, "credits")));
		printf("  key         %s\n", json_string_value(json_object_get(reply, "key")) ?: "");
		printf("  result_key  0x%08llx\n",
		       (unsigned long long)json_integer_value(json_object_get(reply, "result_key")));
	} else if (!strcmp(op, "job_destroy")) {
		printf("job %lld destroyed\n", (long long)json_integer_value(json_object_get(req, "job")));
	} else if (!strcmp(op, "job_status")) {
		show_job(json_object_get(reply, "job"));
	} else if (!strcmp(op, "stats")) {
		print_flat(json_object_get(reply, "stats"), "");
	} else if (!strcmp(op, "health")) {
		show_health(json_object_get(reply, "health"));
	} else {
		print_flat(json_object_get(reply, "backend"), "");
	}
}

static int run_once(const struct opts *o, json_t *req)
{
	json_t *reply = NULL;
	int ex = transact(o, req, &reply);

	if (ex != EX_OK)
		return ex;
	if (!json_is_true(json_object_get(reply, "ok"))) {
		const char *e = json_string_value(json_object_get(reply, "error"));

		if (o->json)
			print_json(reply);
		fprintf(stderr, "netreducectl: %s\n", e ? e : "error reply without a message");
		json_decref(reply);
		return EX_REPLY;
	}
	show_reply(o, req, reply);
	/* health: unhealthy is a failure a script can test */
	if (!strcmp(json_string_value(json_object_get(req, "op")), "health") &&
	    !json_is_true(json_object_get(json_object_get(reply, "health"), "healthy")))
		ex = EX_REPLY;
	json_decref(reply);
	fflush(stdout);
	return ex;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	json_t *req;
	long round;
	int ex;

	ex = parse_args(argc, argv, &o);
	if (ex >= 0)
		return ex;
	req = build_request(&o, &ex);
	if (!req)
		return ex;
	if (!o.watch) {
		ex = run_once(&o, req);
		json_decref(req);
		return ex;
	}
	for (round = 1;; round++) {
		struct timespec ts = { .tv_sec = (time_t)o.watch_s,
				       .tv_nsec = (long)((o.watch_s - (time_t)o.watch_s) * 1e9) };
		time_t t = time(NULL);
		char when[32];

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		if (!o.json)
			printf("--- %s ---\n", when);
		ex = run_once(&o, req);
		if (ex != EX_OK || (o.count && round >= o.count))
			break;
		nanosleep(&ts, NULL);
	}
	json_decref(req);
	return ex;
}
