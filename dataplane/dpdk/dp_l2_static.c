/* SPDX-License-Identifier: BSD-3-Clause */
/* The operator's static MAC -> port map (see dp_l2_static.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/dpdk/dp_l2_static.h"
#include "proto/nr_text.h"

int dp_l2_static_load(struct dp_l2 *t, const char *path, uint32_t now,
		      int (*is_port)(void *arg, uint16_t port), void *arg, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned ln = 0;
	int n = 0;

	if (!f) {
		snprintf(err, errlen, "--l2-static %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char mac_s[32], port_s[16], extra[2], *hash = strchr(line, '#');
		uint8_t mac[6];
		unsigned long port;
		char *end;
		int k, rc;

		ln++;
		if (hash)
			*hash = '\0';
		k = sscanf(line, "%31s %15s %1s", mac_s, port_s, extra);
		if (k <= 0)
			continue;
		if (k != 2) {
			snprintf(err, errlen,
				 "--l2-static %s:%u: expected \"MAC PORT\" (e.g. "
				 "02:00:00:00:00:01 0)",
				 path, ln);
			goto fail;
		}
		if (nr_mac_parse(mac_s, mac) || (mac[0] & 1)) {
			snprintf(err, errlen,
				 "--l2-static %s:%u: \"%s\" is not a unicast MAC "
				 "(xx:xx:xx:xx:xx:xx)",
				 path, ln, mac_s);
			goto fail;
		}
		port = strtoul(port_s, &end, 10);
		if (*end || port >= DP_L2_PORTS || !is_port(arg, (uint16_t)port)) {
			snprintf(err, errlen,
				 "--l2-static %s:%u: port \"%s\" is not a port of the box "
				 "(a DPDK port id it runs: netreducectl info lists them)",
				 path, ln, port_s);
			goto fail;
		}
		rc = dp_l2_static(t, mac, (uint16_t)port, now);
		if (rc == -EEXIST) {
			snprintf(err, errlen, "--l2-static %s:%u: %s is already on another port",
				 path, ln, mac_s);
			goto fail;
		}
		if (rc) {
			snprintf(err, errlen,
				 "--l2-static %s:%u: %s: its bucket of the L2 table holds "
				 "%d static MACs already",
				 path, ln, mac_s, DP_L2_WAYS);
			goto fail;
		}
		n++;
	}
	fclose(f);
	return n;
fail:
	fclose(f);
	return -1;
}
