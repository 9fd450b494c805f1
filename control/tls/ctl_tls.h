/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The server side of TLS on the control listener (ctl_tls.c, OpenSSL): the
 * box's certificate and key, TLS 1.2 or newer (1.3 preferred, it is
 * OpenSSL's first choice).  The handshakes themselves run non-blocking in
 * the server's poll loop (ctl_server.c).
 */
#ifndef NR_CTL_TLS_H
#define NR_CTL_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

/*
 * A server context from cert_file (PEM: the box's certificate, then any
 * intermediates) and key_file (PEM; refused when others than its owner may
 * read it).  NULL with err naming the file and what to do.
 */
SSL_CTX *nr_ctl_tls_server_ctx(const char *cert_file, const char *key_file, char *err,
			       size_t errlen);

#endif /* NR_CTL_TLS_H */
