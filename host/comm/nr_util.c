/* SPDX-License-Identifier: BSD-3-Clause */
/* A monotonic clock and the error messages of libnetreduce (see nr_util.h). */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "nr_util.h"

uint64_t nr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t nr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

int nr_fail(struct nr_comm *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return code;
}

static __thread char tls_err[NR_ERRLEN];

void nr_set_tls_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tls_err, sizeof(tls_err), fmt, ap);
	va_end(ap);
}

const char *nr_comm_last_error(const struct nr_comm *comm)
{
	return comm ? comm->err : tls_err;
}

const char *nr_strerror(int err)
{
	switch (err) {
	case NR_OK: return "success";
	case NR_ERR_CONFIG: return "bad configuration";
	case NR_ERR_INVALID: return "invalid argument";
	case NR_ERR_NOMEM: return "out of memory";
	case NR_ERR_BOOTSTRAP: return "rendezvous failed";
	case NR_ERR_BOX: return "box error";
	case NR_ERR_TRANSPORT: return "transport error";
	case NR_ERR_PEER: return "peer failed";
	case NR_ERR_TIMEOUT: return "timed out";
	case NR_ERR_BROKEN: return "communicator broken by an earlier error";
	case NR_ERR_UNSUPPORTED: return "the box takes no job for this call";
	}
	return "unknown error";
}

double nr_link_gbps(const char *addr)
{
	struct ifaddrs *ifa, *i;
	struct in_addr a;
	double gbps = 10.0;

	if (!addr || inet_pton(AF_INET, addr, &a) != 1 || getifaddrs(&ifa))
		return gbps;
	for (i = ifa; i; i = i->ifa_next) {
		char path[128];
		FILE *f;
		long mbit;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != a.s_addr)
			continue;
		snprintf(path, sizeof(path), "/sys/class/net/%s/speed", i->ifa_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%ld", &mbit) == 1 && mbit > 0)
			gbps = mbit / 1000.0;
		if (f)
			fclose(f);
		break;
	}
	freeifaddrs(ifa);
	return gbps;
}

uint32_t nr_roce_mtu(unsigned ifmtu)
{
	for (uint32_t m = 4096; m >= 256; m /= 2)
		if (ifmtu >= m + NR_ROCE_HDRS)
			return m;
	return 0;
}
