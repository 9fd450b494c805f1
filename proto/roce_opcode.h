/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IBTA base transport opcode table (rxe_opcode.c style): for each opcode,
 * its name, flags, and the offsets of its extension headers counted from the
 * first byte of the BTH.  The parser never guesses: an opcode without an entry
 * is unknown.
 */
#ifndef NR_ROCE_OPCODE_H
#define NR_ROCE_OPCODE_H

#include <stdint.h>

enum nr_opcode {
	/* RC */
	NR_OP_RC_SEND_FIRST = 0x00,
	NR_OP_RC_SEND_MIDDLE = 0x01,
	NR_OP_RC_SEND_LAST = 0x02,
	NR_OP_RC_SEND_LAST_IMM = 0x03,
	NR_OP_RC_SEND_ONLY = 0x04,
	NR_OP_RC_SEND_ONLY_IMM = 0x05,
	NR_OP_RC_WRITE_FIRST = 0x06,
	NR_OP_RC_WRITE_MIDDLE = 0x07,
	NR_OP_RC_WRITE_LAST = 0x08,
	NR_OP_RC_WRITE_LAST_IMM = 0x09,
	NR_OP_RC_WRITE_ONLY = 0x0A,
	NR_OP_RC_WRITE_ONLY_IMM = 0x0B,
	NR_OP_RC_READ_REQ = 0x0C,
	NR_OP_RC_READ_RESP_FIRST = 0x0D,
	NR_OP_RC_READ_RESP_MIDDLE = 0x0E,
	NR_OP_RC_READ_RESP_LAST = 0x0F,
	NR_OP_RC_READ_RESP_ONLY = 0x10,
	NR_OP_RC_ACK = 0x11,
	NR_OP_RC_ATOMIC_ACK = 0x12,
	NR_OP_RC_CMP_SWAP = 0x13,
	NR_OP_RC_FETCH_ADD = 0x14,
	NR_OP_RC_SEND_LAST_INV = 0x16,
	NR_OP_RC_SEND_ONLY_INV = 0x17,
	/* UC */
	NR_OP_UC_SEND_FIRST = 0x20,
	NR_OP_UC_SEND_MIDDLE = 0x21,
	NR_OP_UC_SEND_LAST = 0x22,
	NR_OP_UC_SEND_LAST_IMM = 0x23,
	NR_OP_UC_SEND_ONLY = 0x24,
	NR_OP_UC_SEND_ONLY_IMM = 0x25,
	NR_OP_UC_WRITE_FIRST = 0x26,
	NR_OP_UC_WRITE_MIDDLE = 0x27,
	NR_OP_UC_WRITE_LAST = 0x28,
	NR_OP_UC_WRITE_LAST_IMM = 0x29,
	NR_OP_UC_WRITE_ONLY = 0x2A,
	NR_OP_UC_WRITE_ONLY_IMM = 0x2B,
	/* UD */
	NR_OP_UD_SEND_ONLY = 0x64,
	NR_OP_UD_SEND_ONLY_IMM = 0x65,
	/* Congestion notification packet (RoCEv2 annex) */
	NR_OP_CNP = 0x81,
};

/* Opcode flags: what a packet of the opcode carries and what it is. */
enum nr_op_flag {
	/* extension headers after the BTH */
	NR_OPF_RETH = 1u << 0,      /* RDMA extended header: VA, R_Key, length */
	NR_OPF_AETH = 1u << 1,      /* ACK extended header: syndrome, MSN */
	NR_OPF_IMMDT = 1u << 2,     /* immediate data */
	NR_OPF_DETH = 1u << 3,      /* datagram header (UD): Q_Key, source QP */
	NR_OPF_ATMETH = 1u << 4,    /* atomic request header */
	NR_OPF_ATMACK = 1u << 5,    /* atomic ACK header */
	NR_OPF_IETH = 1u << 6,      /* invalidate header (SEND with invalidate) */
	NR_OPF_PAYLOAD = 1u << 7,   /* may carry payload */
	/* place in a message */
	NR_OPF_FIRST = 1u << 8,
	NR_OPF_MIDDLE = 1u << 9,
	NR_OPF_LAST = 1u << 10,
	NR_OPF_ONLY = NR_OPF_FIRST | NR_OPF_LAST,
	/* what it is */
	NR_OPF_REQ = 1u << 11,      /* a request (from the requester) */
	NR_OPF_RESP = 1u << 12,     /* a response (from the responder) */
	NR_OPF_SEND = 1u << 13,
	NR_OPF_WRITE = 1u << 14,
	NR_OPF_READ = 1u << 15,
	NR_OPF_ATOMIC = 1u << 16,
	NR_OPF_ACK = 1u << 17,      /* acknowledge-class response (ACK, atomic ACK, read resp with AETH) */
	/* transport service */
	NR_OPF_RC = 1u << 18,       /* reliable connection */
	NR_OPF_UC = 1u << 19,       /* unreliable connection */
	NR_OPF_UD = 1u << 20,       /* unreliable datagram */
	NR_OPF_CNP = 1u << 21,      /* congestion notification packet (RoCEv2) */
	NR_OPF_FULL_MTU = 1u << 22, /* FIRST/MIDDLE: payload must be exactly the path MTU */
};

enum nr_ext_hdr {
	NR_EXT_RETH,
	NR_EXT_AETH,
	NR_EXT_IMMDT,
	NR_EXT_DETH,
	NR_EXT_ATMETH,
	NR_EXT_ATMACK,
	NR_EXT_IETH,
	NR_EXT_PAYLOAD,
	NR_EXT_NUM,
};

struct nr_opcode_info {
	const char *name;          /* NULL: no such opcode */
	uint32_t mask;             /* enum nr_op_flag */
	uint8_t length;            /* BTH + extension headers, bytes */
	uint8_t offset[NR_EXT_NUM]; /* from the first BTH byte; valid where mask says */
};

extern const struct nr_opcode_info nr_opcode_table[256];

/* NULL for an opcode IBTA does not define. */
static inline const struct nr_opcode_info *nr_opcode_info(uint8_t op)
{
	const struct nr_opcode_info *i = &nr_opcode_table[op];
	return i->name ? i : (const struct nr_opcode_info *)0;
}

/* "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"-style name, or "UNKNOWN". */
const char *nr_opcode_name(uint8_t op);

#endif /* NR_ROCE_OPCODE_H */
