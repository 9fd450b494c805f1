/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header accessors (every get/set pair round-trips and touches only its own
 * bits), byte-order helpers, PSN arithmetic, and the opcode table checked
 * against the IBTA opcode list (IBA vol 1 table 35, RoCEv2 annex for CNP).
 */
#include <stdlib.h>
#include <time.h>

#include "proto_test.h"

static unsigned seed;

/*
 * Set a field on several backgrounds; the getter must return the value, no
 * bit outside the field's byte mask may change, and scribbling over every
 * bit outside the mask must not change what the getter reads.
 */
#define FIELD_TEST(T, SET, GET, VAL, EXPECT, ...)                                    \
	do {                                                                         \
		static const uint8_t m_[sizeof(T)] = { __VA_ARGS__ };                \
		static const uint8_t bgs_[] = { 0x00, 0xFF, 0x5A, 0xA5 };            \
		for (unsigned k_ = 0; k_ < sizeof(bgs_) + 4; k_++) {                 \
			uint8_t b_[sizeof(T)], o_[sizeof(T)];                        \
			for (unsigned i_ = 0; i_ < sizeof(T); i_++)                  \
				b_[i_] = k_ < sizeof(bgs_) ? bgs_[k_] : (uint8_t)rand(); \
			memcpy(o_, b_, sizeof(T));                                   \
			SET((T *)b_, VAL);                                           \
			assert_int_equal(GET((T *)b_), EXPECT);                      \
			for (unsigned i_ = 0; i_ < sizeof(T); i_++) {                \
				if ((b_[i_] ^ o_[i_]) & ~m_[i_])                     \
					fail_msg(#SET " changed byte %u outside its mask", i_); \
				b_[i_] = (uint8_t)((b_[i_] & m_[i_]) | (rand() & ~m_[i_])); \
			}                                                            \
			assert_int_equal(GET((T *)b_), EXPECT);                      \
		}                                                                    \
	} while (0)

static void test_bth_accessors(void **state)
{
	for (int r = 0; r < 50; r++) {
		uint32_t v = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
		uint8_t b = (uint8_t)v;

		FIELD_TEST(struct nr_bth, nr_bth_set_opcode, nr_bth_opcode, b, b, 0xFF);
		FIELD_TEST(struct nr_bth, nr_bth_set_se, nr_bth_se, v & 1, v & 1, 0, 0x80);
		FIELD_TEST(struct nr_bth, nr_bth_set_mig, nr_bth_mig, v & 1, v & 1, 0, 0x40);
		FIELD_TEST(struct nr_bth, nr_bth_set_pad, nr_bth_pad, b, b & 3, 0, 0x30);
		FIELD_TEST(struct nr_bth, nr_bth_set_tver, nr_bth_tver, b, b & 15, 0, 0x0F);
		FIELD_TEST(struct nr_bth, nr_bth_set_pkey, nr_bth_pkey, (uint16_t)v, (uint16_t)v,
			   0, 0, 0xFF, 0xFF);
		FIELD_TEST(struct nr_bth, nr_bth_set_fecn, nr_bth_fecn, v & 1, v & 1,
			   0, 0, 0, 0, 0x80);
		FIELD_TEST(struct nr_bth, nr_bth_set_becn, nr_bth_becn, v & 1, v & 1,
			   0, 0, 0, 0, 0x40);
		FIELD_TEST(struct nr_bth, nr_bth_set_qpn, nr_bth_qpn, v, v & 0xFFFFFF,
			   0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF);
		FIELD_TEST(struct nr_bth, nr_bth_set_ackreq, nr_bth_ackreq, v & 1, v & 1,
			   0, 0, 0, 0, 0, 0, 0, 0, 0x80);
		FIELD_TEST(struct nr_bth, nr_bth_set_psn, nr_bth_psn, v, v & 0xFFFFFF,
			   0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF);
	}
}

static void test_bth_layout(void **state)
{
	static const uint8_t want[12] = { 0x0B, 0xB5, 0xFF, 0xFF, 0x40, 0x12, 0x34, 0x56,
					  0x80, 0xAB, 0xCD, 0xEF };
	uint8_t b[12] = { 0 };
	struct nr_bth *h = (struct nr_bth *)b;

	nr_bth_set_opcode(h, 0x0B);
	nr_bth_set_se(h, true);
	nr_bth_set_pad(h, 3);
	nr_bth_set_tver(h, 5);
	nr_bth_set_pkey(h, 0xFFFF);
	nr_bth_set_becn(h, true);
	nr_bth_set_qpn(h, 0x123456);
	nr_bth_set_ackreq(h, true);
	nr_bth_set_psn(h, 0xABCDEF);
	assert_memory_equal(b, want, sizeof(want));
	/* Clearing flags leaves the neighbours alone. */
	nr_bth_set_se(h, false);
	nr_bth_set_becn(h, false);
	nr_bth_set_ackreq(h, false);
	nr_bth_set_tver(h, 0);
	assert_int_equal(b[1], 0x30);
	assert_int_equal(b[4], 0x00);
	assert_int_equal(b[8], 0x00);
	assert_int_equal(nr_bth_qpn(h), 0x123456);
	assert_int_equal(nr_bth_psn(h), 0xABCDEF);
	assert_int_equal(nr_bth_pad(h), 3);
}

static void test_ext_accessors(void **state)
{
	for (int r = 0; r < 50; r++) {
		uint64_t va = (uint64_t)rand() << 40 ^ (uint64_t)rand() << 20 ^ (uint64_t)rand();
		uint32_t v = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
		uint8_t b = (uint8_t)(v >> 5);

		FIELD_TEST(struct nr_reth, nr_reth_set_va, nr_reth_va, va, va,
			   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF);
		FIELD_TEST(struct nr_reth, nr_reth_set_rkey, nr_reth_rkey, v, v,
			   0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF);
		FIELD_TEST(struct nr_reth, nr_reth_set_len, nr_reth_len, v, v,
			   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF);
		FIELD_TEST(struct nr_aeth, nr_aeth_set_syn, nr_aeth_syn, b, b, 0xFF);
		FIELD_TEST(struct nr_aeth, nr_aeth_set_msn, nr_aeth_msn, v, v & 0xFFFFFF,
			   0, 0xFF, 0xFF, 0xFF);
		FIELD_TEST(struct nr_immdt, nr_immdt_set_imm, nr_immdt_imm, v, v,
			   0xFF, 0xFF, 0xFF, 0xFF);
	}
}

static void test_ext_layout(void **state)
{
	uint8_t b[16] = { 0 };
	static const uint8_t reth[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0xA1, 0xA2, 0xA3, 0xA4,
					  0, 0, 0x10, 0 };
	static const uint8_t deth[8] = { 0x80, 0x01, 0x00, 0x00, 0xAB, 0x00, 0x00, 0x01 };

	nr_reth_set_va((struct nr_reth *)b, 0x0102030405060708ull);
	nr_reth_set_rkey((struct nr_reth *)b, 0xA1A2A3A4);
	nr_reth_set_len((struct nr_reth *)b, 4096);
	assert_memory_equal(b, reth, 16);

	memset(b, 0, sizeof(b));
	nr_aeth_set_syn((struct nr_aeth *)b, NR_AETH_NAK_PSN_SEQ_ERR);
	nr_aeth_set_msn((struct nr_aeth *)b, 0x0A0B0C);
	assert_int_equal(nr_ld_be32(b), 0x600A0B0C);

	/* DETH: Q_Key 32 bits, then 8 reserved bits and the 24-bit source QP. */
	assert_int_equal(nr_deth_qkey((const struct nr_deth *)deth), 0x80010000);
	assert_int_equal(nr_deth_sqp((const struct nr_deth *)deth), 1);
}

static void test_syndrome_classes(void **state)
{
	for (int s = 0; s < 256; s++) {
		assert_int_equal(nr_syn_is_ack((uint8_t)s), s < 0x20);
		assert_int_equal(nr_syn_is_rnr((uint8_t)s), s >= 0x20 && s < 0x40);
		assert_int_equal(nr_syn_is_nak((uint8_t)s), s >= 0x60 && s < 0x80);
	}
}

static void test_be_helpers(void **state)
{
	uint8_t b[11] = { 0 };

	/* Odd offsets: no alignment assumed. */
	nr_st_be16(b + 1, 0x1234);
	nr_st_be32(b + 3, 0x89ABCDEF);
	assert_int_equal(b[1], 0x12);
	assert_int_equal(b[2], 0x34);
	assert_int_equal(b[3], 0x89);
	assert_int_equal(b[6], 0xEF);
	assert_int_equal(nr_ld_be16(b + 1), 0x1234);
	assert_int_equal(nr_ld_be32(b + 3), 0x89ABCDEF);
	nr_st_be64(b + 3, 0x0102030405060708ull);
	assert_int_equal(b[3], 0x01);
	assert_int_equal(b[10], 0x08);
	assert_true(nr_ld_be64(b + 3) == 0x0102030405060708ull);
}

static void test_ipv4_cksum(void **state)
{
	/* The IPv4 header of the ConnectX-4 Lx CNP capture: checksum 0x9161. */
	uint8_t h[20] = { 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
			  0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01 };
	uint16_t c = nr_ipv4_cksum((const struct nr_ipv4_hdr *)h);

	assert_int_equal(nr_ld_be16(&c), 0x9161);
	h[10] = h[11] = 0xEE; /* the stored checksum is not part of the sum */
	c = nr_ipv4_cksum((const struct nr_ipv4_hdr *)h);
	assert_int_equal(nr_ld_be16(&c), 0x9161);
	assert_int_equal(nr_ipv4_ihl_bytes((const struct nr_ipv4_hdr *)h), 20);
	assert_int_equal(nr_ipv4_version((const struct nr_ipv4_hdr *)h), 4);
}

static void test_psn_arith(void **state)
{
	assert_int_equal(nr_psn_add(0xFFFFFF, 1), 0);
	assert_int_equal(nr_psn_add(0xFFFFF0, 0x20), 0x10);
	assert_int_equal(nr_psn_sub(0x10, 0xFFFFF0), 0x20);
	assert_int_equal(nr_psn_diff(0x10, 0xFFFFF0), 0x20);
	assert_int_equal(nr_psn_diff(0xFFFFF0, 0x10), -0x20);
	assert_int_equal(nr_psn_diff(5, 5), 0);
	assert_true(nr_psn_lt(0xFFFFFF, 0));
	assert_false(nr_psn_lt(0, 0xFFFFFF));
	assert_true(nr_psn_le(7, 7));
	assert_int_equal(nr_psn_diff(0x800000, 0), -0x800000);
}

/* ---- opcode table against the IBTA list ---------------------------------- */

enum { X = 0xFF }; /* no such header */

struct ibta_op {
	uint8_t op;
	const char *name;
	uint32_t flags;   /* the complete expected mask */
	uint8_t length;   /* BTH + extension headers */
	uint8_t reth, aeth, imm, deth, atmeth, atmack, ieth;
};

#define SREQ (NR_OPF_REQ | NR_OPF_SEND | NR_OPF_PAYLOAD)
#define WREQ (NR_OPF_REQ | NR_OPF_WRITE | NR_OPF_PAYLOAD)
#define RRSP (NR_OPF_RESP | NR_OPF_READ | NR_OPF_PAYLOAD)
#define FM   NR_OPF_FULL_MTU

#define SEND_WRITE(b, c, p)                                                                    \
	{ b + 0x00, p "SEND_FIRST", c | SREQ | NR_OPF_FIRST | FM, 12, X, X, X, X, X, X, X },     \
	{ b + 0x01, p "SEND_MIDDLE", c | SREQ | NR_OPF_MIDDLE | FM, 12, X, X, X, X, X, X, X },   \
	{ b + 0x02, p "SEND_LAST", c | SREQ | NR_OPF_LAST, 12, X, X, X, X, X, X, X },            \
	{ b + 0x03, p "SEND_LAST_WITH_IMMEDIATE", c | SREQ | NR_OPF_LAST | NR_OPF_IMMDT, 16,     \
	  X, X, 12, X, X, X, X },                                                              \
	{ b + 0x04, p "SEND_ONLY", c | SREQ | NR_OPF_ONLY, 12, X, X, X, X, X, X, X },            \
	{ b + 0x05, p "SEND_ONLY_WITH_IMMEDIATE", c | SREQ | NR_OPF_ONLY | NR_OPF_IMMDT, 16,     \
	  X, X, 12, X, X, X, X },                                                              \
	{ b + 0x06, p "RDMA_WRITE_FIRST", c | WREQ | NR_OPF_FIRST | FM | NR_OPF_RETH, 28,        \
	  12, X, X, X, X, X, X },                                                              \
	{ b + 0x07, p "RDMA_WRITE_MIDDLE", c | WREQ | NR_OPF_MIDDLE | FM, 12, X, X, X, X, X, X, X }, \
	{ b + 0x08, p "RDMA_WRITE_LAST", c | WREQ | NR_OPF_LAST, 12, X, X, X, X, X, X, X },      \
	{ b + 0x09, p "RDMA_WRITE_LAST_WITH_IMMEDIATE", c | WREQ | NR_OPF_LAST | NR_OPF_IMMDT, 16, \
	  X, X, 12, X, X, X, X },                                                              \
	{ b + 0x0A, p "RDMA_WRITE_ONLY", c | WREQ | NR_OPF_ONLY | NR_OPF_RETH, 28,               \
	  12, X, X, X, X, X, X },                                                              \
	{ b + 0x0B, p "RDMA_WRITE_ONLY_WITH_IMMEDIATE",                                        \
	  c | WREQ | NR_OPF_ONLY | NR_OPF_RETH | NR_OPF_IMMDT, 32, 12, X, 28, X, X, X, X }

static const struct ibta_op ibta_ops[] = {
	SEND_WRITE(0x00, NR_OPF_RC, "RC_"),
	{ 0x0C, "RC_RDMA_READ_REQUEST", NR_OPF_RC | NR_OPF_REQ | NR_OPF_READ | NR_OPF_ONLY |
	  NR_OPF_RETH, 28, 12, X, X, X, X, X, X },
	{ 0x0D, "RC_RDMA_READ_RESPONSE_FIRST", NR_OPF_RC | RRSP | NR_OPF_ACK | NR_OPF_FIRST | FM |
	  NR_OPF_AETH, 16, X, 12, X, X, X, X, X },
	{ 0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", NR_OPF_RC | RRSP | NR_OPF_MIDDLE | FM, 12,
	  X, X, X, X, X, X, X },
	{ 0x0F, "RC_RDMA_READ_RESPONSE_LAST", NR_OPF_RC | RRSP | NR_OPF_ACK | NR_OPF_LAST |
	  NR_OPF_AETH, 16, X, 12, X, X, X, X, X },
	{ 0x10, "RC_RDMA_READ_RESPONSE_ONLY", NR_OPF_RC | RRSP | NR_OPF_ACK | NR_OPF_ONLY |
	  NR_OPF_AETH, 16, X, 12, X, X, X, X, X },
	{ 0x11, "RC_ACKNOWLEDGE", NR_OPF_RC | NR_OPF_RESP | NR_OPF_ACK | NR_OPF_ONLY | NR_OPF_AETH,
	  16, X, 12, X, X, X, X, X },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", NR_OPF_RC | NR_OPF_RESP | NR_OPF_ACK | NR_OPF_ATOMIC |
	  NR_OPF_ONLY | NR_OPF_AETH | NR_OPF_ATMACK, 24, X, 12, X, X, X, 16, X },
	{ 0x13, "RC_COMPARE_SWAP", NR_OPF_RC | NR_OPF_REQ | NR_OPF_ATOMIC | NR_OPF_ONLY |
	  NR_OPF_ATMETH, 40, X, X, X, X, 12, X, X },
	{ 0x14, "RC_FETCH_ADD", NR_OPF_RC | NR_OPF_REQ | NR_OPF_ATOMIC | NR_OPF_ONLY |
	  NR_OPF_ATMETH, 40, X, X, X, X, 12, X, X },
	{ 0x16, "RC_SEND_LAST_WITH_INVALIDATE", NR_OPF_RC | SREQ | NR_OPF_LAST | NR_OPF_IETH, 16,
	  X, X, X, X, X, X, 12 },
	{ 0x17, "RC_SEND_ONLY_WITH_INVALIDATE", NR_OPF_RC | SREQ | NR_OPF_ONLY | NR_OPF_IETH, 16,
	  X, X, X, X, X, X, 12 },
	SEND_WRITE(0x20, NR_OPF_UC, "UC_"),
	{ 0x64, "UD_SEND_ONLY", NR_OPF_UD | SREQ | NR_OPF_ONLY | NR_OPF_DETH, 20,
	  X, X, X, 12, X, X, X },
	{ 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", NR_OPF_UD | SREQ | NR_OPF_ONLY | NR_OPF_DETH |
	  NR_OPF_IMMDT, 24, X, X, 20, 12, X, X, X },
	{ 0x81, "CNP", NR_OPF_CNP, 28, X, X, X, X, X, X, X },
};

static void check_off(const struct nr_opcode_info *i, uint32_t flag, enum nr_ext_hdr e,
		      uint8_t want, uint8_t op)
{
	if (want == X) {
		if (i->mask & flag)
			fail_msg("opcode 0x%02x: header %d present, IBTA says absent", op, e);
		return;
	}
	if (!(i->mask & flag))
		fail_msg("opcode 0x%02x: header %d missing", op, e);
	if (i->offset[e] != want)
		fail_msg("opcode 0x%02x: header %d at %u, IBTA says %u", op, e, i->offset[e], want);
}

static void test_opcode_table(void **state)
{
	bool listed[256] = { false };

	for (size_t k = 0; k < sizeof(ibta_ops) / sizeof(ibta_ops[0]); k++) {
		const struct ibta_op *w = &ibta_ops[k];
		const struct nr_opcode_info *i = nr_opcode_info(w->op);

		listed[w->op] = true;
		if (!i)
			fail_msg("opcode 0x%02x (%s) missing from the table", w->op, w->name);
		assert_string_equal(i->name, w->name);
		assert_string_equal(nr_opcode_name(w->op), w->name);
		if (i->mask != w->flags)
			fail_msg("opcode 0x%02x %s: mask 0x%x, expected 0x%x", w->op, w->name,
				 i->mask, w->flags);
		assert_int_equal(i->length, w->length);
		assert_int_equal(i->offset[NR_EXT_PAYLOAD], w->length);
		check_off(i, NR_OPF_RETH, NR_EXT_RETH, w->reth, w->op);
		check_off(i, NR_OPF_AETH, NR_EXT_AETH, w->aeth, w->op);
		check_off(i, NR_OPF_IMMDT, NR_EXT_IMMDT, w->imm, w->op);
		check_off(i, NR_OPF_DETH, NR_EXT_DETH, w->deth, w->op);
		check_off(i, NR_OPF_ATMETH, NR_EXT_ATMETH, w->atmeth, w->op);
		check_off(i, NR_OPF_ATMACK, NR_EXT_ATMACK, w->atmack, w->op);
		check_off(i, NR_OPF_IETH, NR_EXT_IETH, w->ieth, w->op);
	}
	/* Everything else (RD 0x40-0x5F, 0x15, XRC, vendor range) is unknown. */
	for (int op = 0; op < 256; op++) {
		if (listed[op])
			continue;
		if (nr_opcode_info((uint8_t)op))
			fail_msg("opcode 0x%02x has an entry IBTA (RC/UC/UD/CNP) does not define", op);
		assert_string_equal(nr_opcode_name((uint8_t)op), "UNKNOWN");
	}
	/* The enum agrees with the wire values. */
	assert_int_equal(NR_OP_RC_WRITE_ONLY_IMM, 0x0B);
	assert_int_equal(NR_OP_RC_ACK, 0x11);
	assert_int_equal(NR_OP_UC_WRITE_ONLY_IMM, 0x2B);
	assert_int_equal(NR_OP_UD_SEND_ONLY_IMM, 0x65);
}

static void test_malformed_names(void **state)
{
	for (int a = 0; a < NR_BAD_MAX; a++) {
		const char *s = nr_malformed_str((enum nr_malformed)a);

		assert_non_null(s);
		assert_true(strlen(s) > 3);
		for (int b = 0; b < a; b++)
			assert_string_not_equal(s, nr_malformed_str((enum nr_malformed)b));
	}
	assert_string_equal(nr_malformed_str(NR_BAD_MAX), "unknown reason");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bth_accessors),
		cmocka_unit_test(test_bth_layout),
		cmocka_unit_test(test_ext_accessors),
		cmocka_unit_test(test_ext_layout),
		cmocka_unit_test(test_syndrome_classes),
		cmocka_unit_test(test_be_helpers),
		cmocka_unit_test(test_ipv4_cksum),
		cmocka_unit_test(test_psn_arith),
		cmocka_unit_test(test_opcode_table),
		cmocka_unit_test(test_malformed_names),
	};

	seed = getenv("NR_SEED") ? (unsigned)strtoul(getenv("NR_SEED"), NULL, 0) : (unsigned)time(NULL);
	printf("test_hdr: seed %u (NR_SEED=%u to repeat)\n", seed, seed);
	srand(seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
