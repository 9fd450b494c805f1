// SPDX-License-Identifier: BSD-3-Clause
//
// What the aggregator's blocks share: the port groups of nr_agg_top that a
// block has too, and the layouts of the buses between blocks.  Each bus
// is one vector; a field is a range of it, named here once.
`ifndef NR_DEFS_VH
`define NR_DEFS_VH

// ---- port groups (OUT: wire, or reg in the block that drives them) --------

// the register file, AXI4-Lite (byte addresses within the 128 KiB BAR)
`define NR_AXIL_PORTS(OUT) \
    input  wire [16:0] s_axil_awaddr, \
    input  wire        s_axil_awvalid, \
    output OUT         s_axil_awready, \
    input  wire [31:0] s_axil_wdata, \
    input  wire [3:0]  s_axil_wstrb, \
    input  wire        s_axil_wvalid, \
    output OUT         s_axil_wready, \
    output wire [1:0]  s_axil_bresp, \
    output OUT         s_axil_bvalid, \
    input  wire        s_axil_bready, \
    input  wire [16:0] s_axil_araddr, \
    input  wire        s_axil_arvalid, \
    output OUT         s_axil_arready, \
    output OUT  [31:0] s_axil_rdata, \
    output wire [1:0]  s_axil_rresp, \
    output OUT         s_axil_rvalid, \
    input  wire        s_axil_rready

// frames in: AXI4-Stream, 32-bit beats, byte 0 in bits 7:0, tuser = ingress
// port (first beat)
`define NR_RX_PORTS \
    input  wire [31:0] rx_tdata, \
    input  wire [3:0]  rx_tkeep, \
    input  wire        rx_tlast, \
    input  wire [7:0]  rx_tuser, \
    input  wire        rx_tvalid, \
    output wire        rx_tready

// frames out, the same format, tuser = {kind, port}: kind 0 a frame forwarded
// unchanged, 1 a result, 2 a resent result
`define NR_TX_PORTS(OUT) \
    output OUT  [31:0] tx_tdata, \
    output OUT  [3:0]  tx_tkeep, \
    output OUT         tx_tlast, \
    output wire [15:0] tx_tuser, \
    output OUT         tx_tvalid, \
    input  wire        tx_tready

// ---- jobs: nr_regs -> nr_core, job j at jobs[j*`JT_W +: `JT_W] -------------
// (latched at JOB_LOAD; nr_regs packs them in this order, high field first)
`define JT_W        147
`define JT_STATE    1:0       // 0 free, 1 active, 2 failed
`define JT_N        10:2      // ranks
`define JT_MTU_LOG2 14:11
`define JT_MODE     15        // 1 streaming
`define JT_KEY      47:16     // result key
`define JT_TIMEOUT  79:48     // ms
`define JT_BASE     111:80    // payload store byte address
`define JT_POOL     135:112   // pool packets
`define JT_DTYPE    137:136   // element type: 0 fp32, 1 bf16, 2 fp16
`define JT_ROOM     146:138   // MTU buffers a slot takes: N, or 2 for a
                              // one-rank streaming 16-bit job (its FP32
                              // accumulator is twice the payload)

// ---- connection entries: nr_regs -> nr_core, nr_lookup, entry e at
// conns[e*`CT_W +: `CT_W] (in the lookup once its job loaded it) ----------
`define CT_W        152
`define CT_LIVE     0
`define CT_JOB      6:1
`define CT_RANK     15:7
`define CT_SIP      47:16     // IPv4 as a number (10.0.0.1 = 0x0a000001)
`define CT_DIP      79:48
`define CT_SQPN     103:80
`define CT_DQPN     127:104
`define CT_IPSN     151:128

// ---- a frame's parse record: nr_parse -> nr_core (proto/roce_pkt.h) -------
`define PR_W        227
`define PR_KIND     1:0       // 0 OTHER, 1 ROCE, 2 MALFORMED
`define PR_BAD      5:2       // enum nr_malformed
`define PR_IPVER    8:6       // 4, 6 or 0
`define PR_HAS_VLAN 9
`define PR_L3       16:10
`define PR_L4       23:17
`define PR_PAY_OFF  30:24
`define PR_PAY_LEN  43:31
`define PR_PEND     56:44     // end of the IP packet (ICRC end)
`define PR_PAD      58:57
`define PR_ECN      60:59
`define PR_IHL      64:61
`define PR_SADDR    96:65     // IPv4 as a number
`define PR_DADDR    128:97
`define PR_OPCODE   136:129
`define PR_QPN      160:137
`define PR_PSN      184:161
`define PR_IMM      216:185
`define PR_HAS_IMM  217
`define PR_HAS_AETH 218
`define PR_AETH_SYN 226:219

// ---- a slot's metadata: nr_core's entry in the store's meta RAM ------------
`define SM_X        47:0      // the sequence the slot holds (extended)
`define SM_STATE    50:48     // free, filling, complete, emitted, released
`define SM_OPCODE   58:51     // of the first contribution
`define SM_HAS_TAG  59
`define SM_ECN      60        // a contribution carried ECN-CE
`define SM_LEN      73:61     // payload bytes
`define SM_COUNT    82:74     // contributions in
`define SM_TAG      114:83
`define SM_TAG_CONN 123:115   // whose tag it is
`define SM_BITS     124       // contributor bits: [`SM_BITS +: ranks]

// ---- an emission: nr_core -> nr_emit, taken on start -----------------------
`define EC_W        154
`define EC_RAW      0         // 1: a frame of the frame buffer, unchanged
`define EC_LEN      13:1      // raw: frame length
`define EC_HSRC     14        // headers from 0 the frame buffer, 1 the header store
`define EC_HIDX     38:15     // header store entry
`define EC_PADDR    68:39     // payload store word address of the result
`define EC_PLEN     81:69     // payload bytes (whole elements: a multiple of 2)
`define EC_PAY_OFF  88:82
`define EC_PAD      90:89
`define EC_L3       97:91
`define EC_L4       104:98
`define EC_IPV6     105
`define EC_IHL      109:106
`define EC_SET_IMM  110       // ImmDt = EC_IMM
`define EC_IMM      142:111
`define EC_SET_CE   143       // ECN-CE on the result
`define EC_PORT     151:144
`define EC_KIND     153:152   // tuser kind: 0 forward, 1 result, 2 resend

`endif
