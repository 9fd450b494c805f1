/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the soft transport puts on the wire, captured for real: dumpcap on lo
 * records a transfer between 127.0.0.41 and 127.0.0.42 (writes of several
 * sizes, one packet dropped before the socket so a NAK appears, one sent twice:
 * the copy goes in a send of its own, its ICRC moved to its IP ID there), then
 *   nr-pcap FILE       must find every RoCEv2 packet well-formed, ICRC ok;
 *   tshark -r FILE -d udp.port==4791,rroce (or ",infiniband" on tshark
 *                      releases without the rroce name) must decode RDMA WRITE
 *                      First/Middle/Last-with-Immediate/Only-with-Immediate and
 *                      Acknowledge, with DF, TTL 64, MigReq set, as RNICs send,
 *                      and (tp_soft_net.c) with GSO: IP IDs 0, 1, 2 ... within a
 *                      GSO send, a UDP checksum filled in (lo, whose checksum
 *                      offload is fixed on, passes the pseudo-header sum a NIC
 *                      would complete); without (NR_TP_OFFLOAD_OFF): IP ID 0
 *                      and UDP checksum 0 on every packet.
 * The test runs in a network namespace of its own whose lo segments GSO sends
 * in software (ethtool -K lo tx-udp-segmentation off), so the capture holds
 * the datagrams a NIC would put on a wire, not the whole sends lo passes on.
 * Needs root (namespace, capture), tshark/dumpcap and ethtool: skipped with a
 * reason otherwise.
 *
 *   test-soft-pcap NR_PCAP_PATH
 */
#include "soft_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sched.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *nr_pcap_path;
static const char *skip_why;     /* why the test cannot run here (private_lo), or NULL */

static bool have_tool(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void probe(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET,
								    .sin_port = htons(9999) };

	inet_pton(AF_INET, "127.0.0.41", &src.sin_addr);
	inet_pton(AF_INET, "127.0.0.42", &dst.sin_addr);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&src, sizeof(src)))
		(void)sendto(fd, "probe", 5, 0, (struct sockaddr *)&dst, sizeof(dst));
	if (fd >= 0)
		close(fd);
}

/* dumpcap on lo into file (pcap format); returns once packets reach the file. */
static pid_t start_capture(const char *file)
{
	pid_t pid = fork();
	uint64_t t0;

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execlp("dumpcap", "dumpcap", "-q", "-i", "lo", "-P", "-f",
		       "(udp port 4791 or udp port 9999) and host 127.0.0.41", "-w", file,
		       (char *)NULL);
		_exit(127);
	}
	t0 = tu_now_ms();
	/* The header, then a probe datagram (UDP 9999, not RoCE) in the file: capture is live. */
	while (file_size(file) <= 24 + 16 + 40) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid)
			fail_msg("dumpcap exited (status %d) before capturing", st);
		if (tu_now_ms() - t0 > 10000)
			fail_msg("dumpcap did not start capturing on lo within 10 s");
		if (file_size(file) >= 24)
			probe();
		usleep(50000);
	}
	return pid;
}

/*
 * Stop once the file holds at least want bytes.  The kernel hands captured
 * packets to dumpcap a ring block at a time, so probes are sent until the
 * block holding our packets reached the file.
 */
static void stop_capture(pid_t pid, const char *file, off_t want)
{
	uint64_t t0 = tu_now_ms();
	int st;

	while (file_size(file) < want) {
		if (tu_now_ms() - t0 > 10000)
			fail_msg("capture file %s: %lld bytes after 10 s, expected %lld", file,
				 (long long)file_size(file), (long long)want);
		probe();
		usleep(50000);
	}
	kill(pid, SIGINT);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

struct drop_one {
	unsigned n, dup, seen;     /* MIDDLE packets: the one dropped, the one sent twice */
};

static int drop_one_middle(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct drop_one *d = arg;

	if (dir != NR_SOFT_TX || pkt[0] != 0x07)
		return NR_SOFT_PASS;
	++d->seen;
	return d->seen == d->n ? NR_SOFT_DROP : d->seen == d->dup ? NR_SOFT_DUP : NR_SOFT_PASS;
}

static void check_nr_pcap(const char *file, unsigned long expect)
{
	char cmd[512], line[512], last[512] = "";
	unsigned long rocev2, ok, bad, malformed, other;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' '%s'", nr_pcap_path, file);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		snprintf(last, sizeof(last), "%s", line);
	st = pclose(f);
	printf("# nr-pcap: %s", last);
	assert_int_equal(sscanf(last, "rocev2=%lu icrc_ok=%lu icrc_bad=%lu malformed=%lu other=%lu",
				&rocev2, &ok, &bad, &malformed, &other), 5);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(rocev2, expect);
	assert_int_equal(ok, expect);
	assert_int_equal(bad, 0);
	assert_int_equal(malformed, 0);
}

/* tshark's name for the RoCEv2 dissector: "rroce" where it exists, else "infiniband". */
static const char *rroce_name(const char *file)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "tshark -r '%s' -c 1 -d udp.port==4791,rroce >/dev/null 2>&1",
		 file);
	if (system(cmd) == 0)
		return "rroce";
	printf("# this tshark has no \"rroce\" decode-as name; using \"infiniband\" "
	       "(the same RoCEv2 dissector on UDP 4791)\n");
	return "infiniband";
}

/* What tshark decodes: every packet as an RNIC sends it; gso: the IP ID and checksum rules of GSO. */
static void check_tshark(const char *file, unsigned long expect, bool gso)
{
	unsigned long count[256] = { 0 }, naks = 0, n = 0, ids = 0;
	char cmd[768], line[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "tshark -r '%s' -d udp.port==4791,%s "
		 "-Y 'udp.dstport==4791' -T fields -E separator=, "
		 "-e ip.id -e ip.flags.df -e ip.ttl -e udp.checksum -e infiniband.bth.opcode "
		 "-e infiniband.bth.m -e infiniband.bth.p_key -e infiniband.aeth.syndrome "
		 "2>/dev/null", file, rroce_name(file));
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *fld[8] = { 0 }, *s = line;
		unsigned long id;
		unsigned op;

		for (int i = 0; i < 8 && s; i++) {
			fld[i] = strsep(&s, ",\n");
		}
		for (int i = 0; i < 7; i++)
			if (!fld[i] || !*fld[i])
				fail_msg("tshark line without field %d: %s", i, line);
		id = strtoul(fld[0], NULL, 0);
		if (gso ? id >= 64 : id != 0)
			fail_msg("IP ID %s, expected %s", fld[0], gso ? "0..63" : "0");
		ids += id != 0;
		assert_int_equal(strtoul(fld[1], NULL, 0), 1);          /* DF */
		assert_int_equal(strtoul(fld[2], NULL, 0), 64);         /* TTL */
		if (gso ? strtoul(fld[3], NULL, 0) == 0 : strtoul(fld[3], NULL, 0) != 0)
			fail_msg("UDP checksum %s, expected %s", fld[3], gso ? "one" : "0");
		assert_int_equal(strtoul(fld[5], NULL, 0), 1);          /* MigReq */
		assert_int_equal(strtoul(fld[6], NULL, 0), 0xFFFF);     /* P_Key */
		op = (unsigned)strtoul(fld[4], NULL, 0);
		count[op & 0xFF]++;
		if (op == 0x11 && fld[7] && (strtoul(fld[7], NULL, 0) & 0xE0) == 0x60)
			naks++;
		n++;
	}
	pclose(f);
	printf("# tshark: %lu packets: WRITE_FIRST %lu MIDDLE %lu LAST_IMM %lu ONLY_IMM %lu "
	       "ACK %lu (of which NAK %lu); %lu with an IP ID other than 0\n", n, count[6],
	       count[7], count[9], count[11], count[0x11], naks, ids);
	assert_int_equal(n, expect);
	assert_true(count[6] >= 1);
	assert_true(count[7] >= 1);
	assert_true(count[9] >= 1);
	assert_true(count[11] >= 1);
	assert_true(count[0x11] >= 1);
	assert_int_equal(naks, 1);
	assert_int_equal(count[6] + count[7] + count[9] + count[11] + count[0x11], n);
	if (gso)
		assert_true(ids > 0);    /* GSO sends of several datagrams went out */
}

static void capture_decodes(uint8_t offload)
{
	const uint32_t sizes[] = { 0, 1, 1024, 1025, 3000, 20000, 7 };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	struct nr_tp_config ca = tu_cfg("127.0.0.41", 1024), cb = tu_cfg("127.0.0.42", 1024);
	size_t offs[N], total = 0;
	char dir[] = "/tmp/nrs-pcap-XXXXXX", file[64];
	struct pair *const pp = &tu_pair;
	struct drop_one d = { .n = 5, .dup = 9 };
	uint64_t seed = tu_seed("pcap");
	unsigned long sent;
	off_t before;
	pid_t cap;

	if (skip_why)
		skip_msg_and_return(skip_why);
	for (unsigned i = 0; i < N; i++) {
		offs[i] = total;
		total += sizes[i];
	}
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/soft.pcap", dir);
	cap = start_capture(file);
	before = file_size(file);

	ca.offload = cb.offload = offload;
	pair_open_cfg(pp, &ca, &cb, total);
	tu_fill(pp->sbuf, total, &seed);
	nr_tp_soft_set_filter(pp->a, drop_one_middle, &d);
	pair_transfer(pp, N, sizes, offs, 2, 0xABC000, 10000);
	sent = (unsigned long)(TU_STAT(pp->a, tx_pkts) + TU_STAT(pp->b, tx_pkts));
	/* Each packet: pcap record header 16, Ethernet 14, IPv4 20, UDP 8, then our bytes. */
	stop_capture(cap, file, before + (off_t)sent * (16 + 14 + 20 + 8) +
		     (off_t)(TU_STAT(pp->a, tx_bytes) + TU_STAT(pp->b, tx_bytes)));
	assert_int_equal(TU_STAT(pp->b, tx_nak_seq), 1);
	printf("# capture %s: %lu RoCEv2 packets sent (%llu GSO sends)\n", file, sent,
	       (unsigned long long)(TU_STAT(pp->a, tx_gso) + TU_STAT(pp->b, tx_gso)));
	assert_true(offload == NR_TP_OFFLOAD_OFF ? TU_STAT(pp->a, tx_gso) == 0 :
		    TU_STAT(pp->a, tx_gso) > 0);

	check_nr_pcap(file, sent);
	check_tshark(file, sent, offload == NR_TP_OFFLOAD_AUTO);
	pair_close(pp);
	unlink(file);
	rmdir(dir);
}

/* GSO and GRO (the default): the datagrams a NIC would send, IDs numbered per send. */
static void test_capture_decodes(void **state) { capture_decodes(NR_TP_OFFLOAD_AUTO); }
/* Without offloads: every packet ID 0, UDP checksum 0. */
static void test_capture_decodes_no_offload(void **state) { capture_decodes(NR_TP_OFFLOAD_OFF); }

/*
 * A network namespace of our own, lo up and segmenting GSO sends in software;
 * NULL, or why the test cannot run here.
 */
static const char *private_lo(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd;

	if (geteuid() != 0)
		return "capturing on lo needs root";
	if (!have_tool("dumpcap") || !have_tool("tshark"))
		return "tshark/dumpcap not installed (apt-get install tshark)";
	if (!have_tool("ethtool"))
		return "ethtool not installed (apt-get install ethtool)";
	if (unshare(CLONE_NEWNET))
		return "cannot create a network namespace (unshare CLONE_NEWNET)";
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr))
		return "lo of the new namespace: SIOCGIFFLAGS failed";
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr))
		return "cannot bring lo of the new namespace up";
	close(fd);
	if (system("ethtool -K lo tx-udp-segmentation off >/dev/null 2>&1"))
		return "ethtool -K lo tx-udp-segmentation off failed in the new namespace";
	return NULL;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_capture_decodes, tu_teardown),
		cmocka_unit_test_teardown(test_capture_decodes_no_offload, tu_teardown),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s NR_PCAP_PATH\n", argv[0]);
		return 2;
	}
	nr_pcap_path = argv[1];
	skip_why = private_lo();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
