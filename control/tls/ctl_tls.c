/* SPDX-License-Identifier: BSD-3-Clause */
/* The control listener's TLS context (ctl_tls.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "control/tls/ctl_tls.h"
#include "control/tls/nr_tls.h"

SSL_CTX *nr_ctl_tls_server_ctx(const char *cert_file, const char *key_file, char *err,
			       size_t errlen)
{
	struct stat st;
	char why[256];
	SSL_CTX *ctx;

	if (!cert_file || !key_file || !cert_file[0] || !key_file[0]) {
		snprintf(err, errlen, "TLS needs both a certificate (--tls-cert) and its key "
			 "(--tls-key)");
		return NULL;
	}
	if (stat(key_file, &st) < 0) {
		snprintf(err, errlen, "TLS key %s: %s", key_file, strerror(errno));
		return NULL;
	}
	/* the key is the box's identity: a copy anyone on the box may read is no key */
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "TLS key %s has mode %04o: open to others than its owner; "
			 "chmod 600 %s", key_file, (unsigned)(st.st_mode & 07777), key_file);
		return NULL;
	}
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) {
		snprintf(err, errlen, "TLS: cannot set up OpenSSL: %s", nr_tls_why(why, sizeof(why)));
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		snprintf(err, errlen, "TLS certificate %s: %s (a PEM certificate?)", cert_file,
			 nr_tls_why(why, sizeof(why)));
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
		snprintf(err, errlen, "TLS key %s: %s (a PEM private key without a passphrase?)",
			 key_file, nr_tls_why(why, sizeof(why)));
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "TLS key %s is not the key of the certificate %s", key_file,
			 cert_file);
		ERR_clear_error();
		goto fail;
	}
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	/* one request a connection is the host library's way: no session cache to grow */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}
