/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IBTA base transport opcode table (IBA vol 1 section 9.2, table 35; CNP
 * from the RoCEv2 annex A17), rxe_opcode.c style.  Offsets are counted from
 * the first BTH byte; length is BTH plus every extension header (for CNP, the
 * 16 reserved bytes that follow its BTH).  RD opcodes (0x40-0x5F), XRC and
 * the manufacturer range are not supported: they have no entry and are
 * therefore unknown to the parser.
 */
#include "proto/roce_opcode.h"

#define BTH	12
#define RETH	16
#define AETH	4
#define IMM	4
#define DETH	8
#define ATMETH	28
#define ATMACK	8
#define IETH	4
#define CNP_RSV	16

/* Shorthands for the common header layouts: the BTH alone, one extension
 * header X of len bytes after it, or two (X then Y). */
#define L_BTH(m)	.mask = (m), .length = BTH, .offset = { [NR_EXT_PAYLOAD] = BTH }
#define L_ONE(m, f, x, len)	.mask = (m) | (f), .length = BTH + (len), \
				.offset = { [x] = BTH, [NR_EXT_PAYLOAD] = BTH + (len) }
#define L_TWO(m, f, x, xlen, g, y, ylen) \
	.mask = (m) | (f) | (g), .length = BTH + (xlen) + (ylen), \
	.offset = { [x] = BTH, [y] = BTH + (xlen), [NR_EXT_PAYLOAD] = BTH + (xlen) + (ylen) }
#define L_IMM(m)	L_ONE(m, NR_OPF_IMMDT, NR_EXT_IMMDT, IMM)
#define L_IETH(m)	L_ONE(m, NR_OPF_IETH, NR_EXT_IETH, IETH)
#define L_RETH(m)	L_ONE(m, NR_OPF_RETH, NR_EXT_RETH, RETH)
#define L_AETH(m)	L_ONE(m, NR_OPF_AETH, NR_EXT_AETH, AETH)
#define L_DETH(m)	L_ONE(m, NR_OPF_DETH, NR_EXT_DETH, DETH)
#define L_RETH_IMM(m)	L_TWO(m, NR_OPF_RETH, NR_EXT_RETH, RETH, NR_OPF_IMMDT, NR_EXT_IMMDT, IMM)
#define L_DETH_IMM(m)	L_TWO(m, NR_OPF_DETH, NR_EXT_DETH, DETH, NR_OPF_IMMDT, NR_EXT_IMMDT, IMM)

#define SEND_REQ	(NR_OPF_REQ | NR_OPF_SEND | NR_OPF_PAYLOAD)
#define WRITE_REQ	(NR_OPF_REQ | NR_OPF_WRITE | NR_OPF_PAYLOAD)
#define READ_RSP	(NR_OPF_RESP | NR_OPF_READ | NR_OPF_PAYLOAD)
#define FIRST		(NR_OPF_FIRST | NR_OPF_FULL_MTU)
#define MIDDLE		(NR_OPF_MIDDLE | NR_OPF_FULL_MTU)

/* The send and write opcodes, identical for RC and UC except for the class flag. */
#define SEND_WRITE_OPS(base, cls, p)						\
	[base + 0x00] = { .name = p "SEND_FIRST", L_BTH(cls | SEND_REQ | FIRST) },	\
	[base + 0x01] = { .name = p "SEND_MIDDLE", L_BTH(cls | SEND_REQ | MIDDLE) },	\
	[base + 0x02] = { .name = p "SEND_LAST", L_BTH(cls | SEND_REQ | NR_OPF_LAST) },	\
	[base + 0x03] = { .name = p "SEND_LAST_WITH_IMMEDIATE",				\
			  L_IMM(cls | SEND_REQ | NR_OPF_LAST) },			\
	[base + 0x04] = { .name = p "SEND_ONLY", L_BTH(cls | SEND_REQ | NR_OPF_ONLY) },	\
	[base + 0x05] = { .name = p "SEND_ONLY_WITH_IMMEDIATE",				\
			  L_IMM(cls | SEND_REQ | NR_OPF_ONLY) },			\
	[base + 0x06] = { .name = p "RDMA_WRITE_FIRST", L_RETH(cls | WRITE_REQ | FIRST) }, \
	[base + 0x07] = { .name = p "RDMA_WRITE_MIDDLE", L_BTH(cls | WRITE_REQ | MIDDLE) }, \
	[base + 0x08] = { .name = p "RDMA_WRITE_LAST",					\
			  L_BTH(cls | WRITE_REQ | NR_OPF_LAST) },			\
	[base + 0x09] = { .name = p "RDMA_WRITE_LAST_WITH_IMMEDIATE",			\
			  L_IMM(cls | WRITE_REQ | NR_OPF_LAST) },			\
	[base + 0x0A] = { .name = p "RDMA_WRITE_ONLY",					\
			  L_RETH(cls | WRITE_REQ | NR_OPF_ONLY) },			\
	[base + 0x0B] = { .name = p "RDMA_WRITE_ONLY_WITH_IMMEDIATE",			\
			  L_RETH_IMM(cls | WRITE_REQ | NR_OPF_ONLY) }

const struct nr_opcode_info nr_opcode_table[256] = {
	SEND_WRITE_OPS(0x00, NR_OPF_RC, "RC_"),
	[NR_OP_RC_READ_REQ] = { .name = "RC_RDMA_READ_REQUEST",
		L_RETH(NR_OPF_RC | NR_OPF_REQ | NR_OPF_READ | NR_OPF_ONLY) },
	[NR_OP_RC_READ_RESP_FIRST] = { .name = "RC_RDMA_READ_RESPONSE_FIRST",
		L_AETH(NR_OPF_RC | READ_RSP | NR_OPF_ACK | FIRST) },
	[NR_OP_RC_READ_RESP_MIDDLE] = { .name = "RC_RDMA_READ_RESPONSE_MIDDLE",
		L_BTH(NR_OPF_RC | READ_RSP | MIDDLE) },
	[NR_OP_RC_READ_RESP_LAST] = { .name = "RC_RDMA_READ_RESPONSE_LAST",
		L_AETH(NR_OPF_RC | READ_RSP | NR_OPF_ACK | NR_OPF_LAST) },
	[NR_OP_RC_READ_RESP_ONLY] = { .name = "RC_RDMA_READ_RESPONSE_ONLY",
		L_AETH(NR_OPF_RC | READ_RSP | NR_OPF_ACK | NR_OPF_ONLY) },
	[NR_OP_RC_ACK] = { .name = "RC_ACKNOWLEDGE",
		L_AETH(NR_OPF_RC | NR_OPF_RESP | NR_OPF_ACK | NR_OPF_ONLY) },
	[NR_OP_RC_ATOMIC_ACK] = { .name = "RC_ATOMIC_ACKNOWLEDGE",
		.mask = NR_OPF_RC | NR_OPF_RESP | NR_OPF_ACK | NR_OPF_ATOMIC | NR_OPF_ONLY |
			NR_OPF_AETH | NR_OPF_ATMACK,
		.length = BTH + AETH + ATMACK,
		.offset = { [NR_EXT_AETH] = BTH, [NR_EXT_ATMACK] = BTH + AETH,
			    [NR_EXT_PAYLOAD] = BTH + AETH + ATMACK } },
	[NR_OP_RC_CMP_SWAP] = { .name = "RC_COMPARE_SWAP",
		.mask = NR_OPF_RC | NR_OPF_REQ | NR_OPF_ATOMIC | NR_OPF_ONLY | NR_OPF_ATMETH,
		.length = BTH + ATMETH,
		.offset = { [NR_EXT_ATMETH] = BTH, [NR_EXT_PAYLOAD] = BTH + ATMETH } },
	[NR_OP_RC_FETCH_ADD] = { .name = "RC_FETCH_ADD",
		.mask = NR_OPF_RC | NR_OPF_REQ | NR_OPF_ATOMIC | NR_OPF_ONLY | NR_OPF_ATMETH,
		.length = BTH + ATMETH,
		.offset = { [NR_EXT_ATMETH] = BTH, [NR_EXT_PAYLOAD] = BTH + ATMETH } },
	[NR_OP_RC_SEND_LAST_INV] = { .name = "RC_SEND_LAST_WITH_INVALIDATE",
		L_IETH(NR_OPF_RC | SEND_REQ | NR_OPF_LAST) },
	[NR_OP_RC_SEND_ONLY_INV] = { .name = "RC_SEND_ONLY_WITH_INVALIDATE",
		L_IETH(NR_OPF_RC | SEND_REQ | NR_OPF_ONLY) },

	SEND_WRITE_OPS(0x20, NR_OPF_UC, "UC_"),

	[NR_OP_UD_SEND_ONLY] = { .name = "UD_SEND_ONLY",
		L_DETH(NR_OPF_UD | SEND_REQ | NR_OPF_ONLY) },
	[NR_OP_UD_SEND_ONLY_IMM] = { .name = "UD_SEND_ONLY_WITH_IMMEDIATE",
		L_DETH_IMM(NR_OPF_UD | SEND_REQ | NR_OPF_ONLY) },

	/* BTH (BECN set by the sender) + 16 reserved bytes + ICRC, no payload. */
	[NR_OP_CNP] = { .name = "CNP", .mask = NR_OPF_CNP, .length = BTH + CNP_RSV,
		.offset = { [NR_EXT_PAYLOAD] = BTH + CNP_RSV } },
};

const char *nr_opcode_name(uint8_t op)
{
	const struct nr_opcode_info *i = nr_opcode_info(op);

	return i ? i->name : "UNKNOWN";
}
