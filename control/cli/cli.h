/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside netreducectl (control/cli/ only): its options, exit codes, and the
 * calls its three files share.  Calls run one way: netreducectl.c ->
 * cli_conn.c (one request, one reply), netreducectl.c -> cli_show.c (the
 * reply for a person, or as the box sent it).
 */
#ifndef NR_CLI_H
#define NR_CLI_H

#include <stdbool.h>

#include <jansson.h>

#define DEFAULT_SOCKET   "/run/netreduce/netreduce.sock"
#define REPLY_MAX        (16u << 20)
#define REPLY_TIMEOUT_MS 10000

enum { EX_OK = 0, EX_REPLY = 1, EX_USAGE = 2, EX_CONNECT = 3 };

struct opts {
	const char *socket;
	const char *connect;
	const char *token;
	const char *tls_ca; /* --tls-ca: TLS over --connect, the box checked against it */
	const char *key;
	const char *name; /* job create --name */
	bool json;
	bool watch;
	double watch_s;
	long count; /* --count N: stop --watch after N rounds (0: forever) */
	const char *pos[4];
	int npos;
};

/*
 * req to the box named by o (the UNIX socket, or --connect with its token
 * and --tls-ca), its one reply line into *reply: EX_OK, or EX_CONNECT with
 * the reason printed on stderr.
 */
int cli_transact(const struct opts *o, json_t *req, json_t **reply);
/* --json: the reply as the box sent it, one line. */
void cli_print_json(const json_t *reply);
/* An ok reply to req for a person (--json: as the box sent it). */
void cli_show_reply(const struct opts *o, const json_t *req, const json_t *reply);

#endif /* NR_CLI_H */
