/* SPDX-License-Identifier: BSD-3-Clause */
/* Addresses and bytes as text (see nr_text.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "proto/nr_text.h"

const char *nr_ip4_str(uint32_t ip, char buf[INET_ADDRSTRLEN])
{
	struct in_addr a = { .s_addr = ip };

	if (!inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN))
		snprintf(buf, INET_ADDRSTRLEN, "?");
	return buf;
}

const char *nr_mac_str(const uint8_t mac[6], char buf[NR_MAC_STRLEN])
{
	snprintf(buf, NR_MAC_STRLEN, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	return buf;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int nr_hex_decode(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(hex[2 * i]), lo = hi < 0 ? -1 : hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int nr_mac_parse(const char *s, uint8_t mac[6])
{
	if (strlen(s) != NR_MAC_STRLEN - 1)
		return -EINVAL;
	for (unsigned i = 0; i < 6; i++)
		if (nr_hex_decode(s + 3 * i, &mac[i], 1) || (i < 5 && s[3 * i + 2] != ':'))
			return -EINVAL;
	return 0;
}

int nr_size_parse(const char *s, size_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}
