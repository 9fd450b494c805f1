/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client side of TLS on the box's TCP control listener (nr_tls.c,
 * OpenSSL): the host library's box client and netreducectl.  TLS 1.2 or
 * newer; the box's certificate must chain to the CA file and name the IP
 * address (or host name) the client dialled (control/PROTOCOL.md, "TLS").
 */
#ifndef NR_TLS_H
#define NR_TLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nr_tls_client;   /* what verifies the box: its CA (an SSL_CTX) */
struct nr_tls_conn;     /* one TLS connection over a connected socket */

/* A client trusting the CA certificate(s) in ca_file (PEM); NULL with err. */
struct nr_tls_client *nr_tls_client_new(const char *ca_file, char *err, size_t errlen);
void nr_tls_client_free(struct nr_tls_client *t);

/*
 * The TLS handshake over fd (connected; left non-blocking), within
 * timeout_ms, checking the box's certificate against the CA and host (an
 * IPv4 or IPv6 address, or a DNS name).  The connection, or NULL with err
 * saying why (a certificate that does not verify: which check failed; a box
 * that answers in plain text: its message).  fd stays the caller's.
 */
struct nr_tls_conn *nr_tls_connect(struct nr_tls_client *t, int fd, const char *host,
				   uint32_t timeout_ms, char *err, size_t errlen);
/* All of buf within timeout_ms: 0, or -1 with err. */
int nr_tls_send(struct nr_tls_conn *c, const void *buf, size_t len, uint32_t timeout_ms,
		char *err, size_t errlen);
/* Up to len bytes within timeout_ms: how many (> 0), 0 at the end of the
 * stream, -1 with err (a timeout: "no answer within the timeout"). */
ssize_t nr_tls_recv(struct nr_tls_conn *c, void *buf, size_t len, uint32_t timeout_ms,
		    char *err, size_t errlen);
/* Sends close_notify (without waiting) and frees c; the caller closes fd. */
void nr_tls_close(struct nr_tls_conn *c);

/* OpenSSL's last error as text (the queue cleared): buf, "" when none. */
const char *nr_tls_why(char *buf, size_t len);

/* "IP:PORT", "[IPv6]:PORT" or "NAME:PORT": the host part into host. 0 or -1. */
int nr_tls_host_of(const char *addr, char *host, size_t len);

#endif /* NR_TLS_H */
