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
 * This file: the arguments, the requests, the watch loop; the connection is
 * cli_conn.c's, the output cli_show.c's (cli.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "control/cli/cli.h"

/*
 * The commands: what usage() lists, --complete offers and build_request
 * sends, each with the control operation it asks for.  Every operation of
 * the API's table (control/api/ctl_request.c, ctl_ops) is one of them but
 * job_renew, the library's lease (tests/layers/test_ctl_ops_docs.py holds the
 * two tables together).
 */
static const struct cli_cmd {
	const char *words; /* the command, "job create" */
	const char *args;
	const char *op;
	const char *help;
} cmds[] = {
	{ "jobs", "", "job_list", "list jobs (UNIX socket only)" },
	{ "job create", "FILE.json [--name N]", "job_create",
	  "create a job from a spec file (\"-\": stdin), named N (letters, digits, . _ : -)" },
	{ "job show", "ID [--key K]", "job_status", "state, progress, counters, connections" },
	{ "job destroy", "ID [--key K]", "job_destroy", "destroy a job" },
	{ "stats", "[--watch [SECONDS]] [--count N]", "stats",
	  "box counters (repeat every SECONDS, default 1)" },
	{ "backend", "", "backend_info", "backend name, capacity, device" },
	{ "health", "", "health",
	  "healthy or not and why: ports linked, workers polling (exit 0 healthy, 1 unhealthy, 3 "
	  "no answer)" },
	{ "static", "", "l2_static", "the static MAC map of a switch-mode box (UNIX socket)" },
	{ "static add", "MAC PORT", "l2_static", "MAC on port PORT (a DPDK port id) for good" },
	{ "static remove", "MAC", "l2_static", "take MAC back (refused while jobs pin it)" },
};

#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static const char *const options[] = { "--socket", "--connect", "--token", "--tls-ca", "--json",
				       "--key",    "--name",    "--watch", "--count",  "--help" };

/* text, wrapped at 50 columns, each line after the first indented to 34. */
static void print_wrapped(FILE *f, const char *text)
{
	size_t col = 0;

	while (*text) {
		size_t w = strcspn(text, " ");

		if (col && col + 1 + w > 50) {
			fprintf(f, "\n%34s", "");
			col = 0;
		} else if (col) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)w, text);
		col += w;
		text += w;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: netreducectl [--socket PATH | --connect IP:PORT --token T [--tls-ca F]] "
		   "[--json]\n"
		   "                    COMMAND\n"
		   "\n"
		   "commands:\n");
	for (size_t i = 0; i < N_CMDS; i++) {
		char lhs[64];

		snprintf(lhs, sizeof(lhs), "%s%s%s", cmds[i].words, cmds[i].args[0] ? " " : "",
			 cmds[i].args);
		if (strlen(lhs) > 31)
			fprintf(f, "  %s\n%34s", lhs, "");
		else
			fprintf(f, "  %-31s ", lhs);
		print_wrapped(f, cmds[i].help);
	}
	fprintf(f,
		"\n"
		"options:\n"
		"  --socket PATH     admin socket (default %s, or $NETREDUCE_SOCKET)\n"
		"  --connect IP:PORT the TCP listener instead (needs --token or $NETREDUCE_TOKEN)\n"
		"  --tls-ca FILE     TLS to the TCP listener, the box's certificate checked against\n"
		"                    the CA certificate(s) in FILE and the IP of --connect (or\n"
		"                    $NETREDUCE_TLS_CA); a box started with --tls-cert wants it\n"
		"  --json            print the raw JSON reply\n"
		"  --complete WORD.. the words that may come next (the shell's completion,\n"
		"                    control/cli/netreducectl.bash): after WORD.., the last one\n"
		"                    being typed\n"
		"  -h, --help        this text\n"
		"\n"
		"exit codes: 0 ok, 1 error reply from the box (health: unhealthy), 2 usage error,\n"
		"3 cannot connect\n",
		DEFAULT_SOCKET);
}

/*
 * --complete W1 .. Wn: the words that may take Wn's place (one a line),
 * after W1 .. Wn-1 typed (the options and their values left out): an
 * option when Wn starts with '-', else the next word of a command.
 */
static int complete(int n, char **w)
{
	const char *cur = n ? w[n - 1] : "";
	char typed[64] = "";
	size_t len = 0;

	if (cur[0] == '-') {
		for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
			if (!strncmp(options[i], cur, strlen(cur)))
				printf("%s\n", options[i]);
		return EX_OK;
	}
	for (int i = 0; i + 1 < n && len + strlen(w[i]) + 2 < sizeof(typed); i++) {
		if (w[i][0] == '-')
			continue;
		len += (size_t)snprintf(typed + len, sizeof(typed) - len, "%s ", w[i]);
	}
	for (size_t i = 0; i < N_CMDS; i++) {
		const char *next = cmds[i].words + len, *end;

		/* the commands that go on from what was typed, their next word once */
		if (strncmp(cmds[i].words, typed, len) || (len && cmds[i].words[len - 1] != ' ') ||
		    !*next || strncmp(next, cur, strlen(cur)))
			continue;
		end = next + strcspn(next, " ");
		if (i && !strncmp(cmds[i - 1].words, cmds[i].words, len + (size_t)(end - next)) &&
		    (cmds[i - 1].words[len + (size_t)(end - next)] == ' ' ||
		     !cmds[i - 1].words[len + (size_t)(end - next)]))
			continue;
		printf("%.*s\n", (int)(end - next), next);
	}
	return EX_OK;
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
		} else if (!strcmp(a, "--complete")) {
			exit(complete(argc - i - 1, argv + i + 1));
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--socket") || !strcmp(a, "--connect") ||
			   !strcmp(a, "--token") || !strcmp(a, "--key") || !strcmp(a, "--count") ||
			   !strcmp(a, "--name") || !strcmp(a, "--tls-ca")) {
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

/* static [add MAC PORT | remove MAC]: the l2_static request, or NULL and *ex. */
static json_t *static_request(const struct opts *o, int *ex)
{
	const bool add = o->npos == 4 && !strcmp(o->pos[1], "add");
	const bool rm = o->npos == 3 && !strcmp(o->pos[1], "remove");
	char *end;
	long port = 0;

	if (o->npos == 1) {
		*ex = EX_OK;
		return json_pack("{s:s}", "op", "l2_static");
	}
	if (!add && !rm) {
		usage_err("static takes nothing, add MAC PORT, or remove MAC", o->pos[1]);
		return NULL;
	}
	if (add) {
		port = strtol(o->pos[3], &end, 10);
		if (*end || end == o->pos[3] || port < 0 || port > 65535) {
			usage_err("not a port id (0..65535)", o->pos[3]);
			return NULL;
		}
	}
	*ex = EX_OK;
	return add ? json_pack("{s:s,s:s,s:I}", "op", "l2_static", "mac", o->pos[2], "port",
			       (json_int_t)port)
		   : json_pack("{s:s,s:s,s:b}", "op", "l2_static", "mac", o->pos[2], "remove", 1);
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
	if (!strcmp(cmd, "static"))
		return static_request(o, ex);
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

static int run_once(const struct opts *o, json_t *req)
{
	json_t *reply = NULL;
	int ex = cli_transact(o, req, &reply);

	if (ex != EX_OK)
		return ex;
	if (!json_is_true(json_object_get(reply, "ok"))) {
		const char *e = json_string_value(json_object_get(reply, "error"));

		if (o->json)
			cli_print_json(reply);
		fprintf(stderr, "netreducectl: %s\n", e ? e : "error reply without a message");
		json_decref(reply);
		return EX_REPLY;
	}
	cli_show_reply(o, req, reply);
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
