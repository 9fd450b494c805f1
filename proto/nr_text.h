/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Addresses and bytes as text, the one place every layer formats and reads
 * them: IPv4 addresses in network order (as the headers, the job spec and the
 * host library keep them), MAC addresses as xx:xx:xx:xx:xx:xx, hex strings.
 */
#ifndef NR_TEXT_H
#define NR_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#define NR_MAC_STRLEN 18   /* "xx:xx:xx:xx:xx:xx" and its NUL */

/* "10.0.0.3" for ip (network order) in buf; returns buf. */
const char *nr_ip4_str(uint32_t ip, char buf[INET_ADDRSTRLEN]);
/* "02:00:00:00:00:01" in buf; returns buf. */
const char *nr_mac_str(const uint8_t mac[6], char buf[NR_MAC_STRLEN]);
/* Exactly six two-digit hex bytes separated by ':' into mac: 0, or -EINVAL. */
int nr_mac_parse(const char *s, uint8_t mac[6]);
/* A byte count as a command line gives it: 4096, 64K, 16M, 1G (KiB units; a
 * trailing B allowed): 0, or -EINVAL. */
int nr_size_parse(const char *s, size_t *out);
/* n bytes from the 2n hex digits at hex (either case): 0, or -EINVAL. */
int nr_hex_decode(const char *hex, uint8_t *out, size_t n);

#endif /* NR_TEXT_H */
