/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreducectl's connection (cli.h): the UNIX socket or TCP (TLS over it
 * with --tls-ca, the box's certificate checked), one request line out and
 * one reply line back within REPLY_TIMEOUT_MS, at most REPLY_MAX bytes.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/cli/cli.h"
#include "control/tls/nr_tls.h"

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
			fprintf(stderr,
				"netreducectl: cannot connect to %s: %s (is netreduce-switch "
				"running with a TCP listener there?)\n",
				o->connect, strerror(errno));
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
		fprintf(stderr,
			"netreducectl: cannot connect to %s: %s (is netreduce-switch running? "
			"--socket or $NETREDUCE_SOCKET choose another path)\n",
			o->socket, strerror(errno));
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
	static struct nr_tls_client *ctx; /* one for every request of a --watch */
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
			fprintf(stderr, "netreducectl: %s: send: %s\n", peer_name(o),
				strerror(errno));
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
int cli_transact(const struct opts *o, json_t *req, json_t **reply)
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
	line[len++] = '\n'; /* json_dumps's NUL becomes the newline */
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
