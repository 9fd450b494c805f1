// SPDX-License-Identifier: BSD-3-Clause
//
// nr_core: slot control, the aggregation engine of dataplane/engine/agg_input.c as
// a sequencer over one frame at a time.  For each received frame: parse
// (nr_parse), drop runts, oversize and malformed RoCEv2, check the ICRC
// (nr_icrc over the frame buffer), look the connection up (nr_lookup), then
// the engine's verdicts in the engine's order:
//   unregistered      forward (an IPv4 RC WRITE counts unknown_conn)
//   ACK side          from another source than the receiver: spoofed, drop;
//                     snoop ACK / NAK-sequence-error, release slots, forward
//   data side         spoofed: drop; responses from the sender forwarded;
//                     job failed, not a WRITE: drop; else the slot
//                     of g = PSN - IPSN (extended to 48 bits against
//                     next_release): dup / stale / occupied / bad length /
//                     opcode, length and tag mismatch, resend from the
//                     stored result, or contribute: headers and payload into
//                     the slot store (nr_store), ordered (kept per rank) or
//                     streaming (added on arrival with nr_fp32_add)
//   completion        slots emitted in sequence order: ordered mode sums the
//                     N contributions in rank order, then each connection's
//                     result goes out through nr_emit, rank order
// 16-bit jobs (bf16, fp16: nr_half.v): every element is widened to FP32 and
// summed by the same adder; ordered mode keeps the contributions as they
// came and sums each word's two elements in rank order (acc, acc2) at
// emission, streaming mode adds each element on arrival into an FP32
// accumulator of two words a payload word (rank 0's and rank 1's buffers);
// the sum is rounded once, when the slot is emitted, into rank 0's buffer,
// where emission and resends read it.
// Counters as the engine counts them (nr_regs); job failures (tag mismatch,
// progress timeout on tick_ms) set the job's STATE and FAIL_CODE.
// Slot indices never need a division: a packet is within pool of
// next_release or it is stale or occupied (see the DATA0 state).
`default_nettype none
`include "nr_defs.vh"

module nr_core #(
    parameter integer NJ = 4,
    parameter integer NC = 32,
    parameter integer NR = 8,
    parameter integer POOL_BYTES = 1048576,
    parameter integer MW = 124 + NR            // slot metadata bits
) (
    input  wire          clk,
    input  wire          rst,
    input  wire          tick_ms,
    // the received frame (nr_rx)
    input  wire          f_valid,
    input  wire [12:0]   f_len,
    input  wire [7:0]    f_port,
    input  wire          f_oversize,
    input  wire [1023:0] f_hdr,
    output wire          f_done,
    output wire [10:0]   rx_addr,
    input  wire [31:0]   rx_data,
    // the slot store's read data (nr_emit reads it while it has the addresses)
    output wire [31:0]   pay_rdata,
    output wire [31:0]   hdr_rdata,
    // emission (nr_emit)
    output reg           e_start,
    output reg  [`EC_W-1:0] e_cmd,     // the emission (nr_defs.vh), with e_start
    input  wire          e_busy,
    input  wire [10:0]   e_rx_addr,
    input  wire [29:0]   e_hdr_addr,
    input  wire [29:0]   e_pay_addr,
    // jobs and connections (nr_regs)
    input  wire [NJ*`JT_W-1:0] jobs,      // each job's view (nr_defs.vh)
    input  wire [NC*`CT_W-1:0] conns,     // the connection entries
    output wire [NJ*24-1:0] next_emit_o,
    output wire [NJ*24-1:0] next_release_o,
    output reg              fail_v,
    output reg  [5:0]       fail_job,
    output reg  [2:0]       fail_code,
    output reg              ea_v,
    output reg  [6:0]       ea_job,
    output reg  [4:0]       ea_idx,
    output reg  [15:0]      ea_amt,
    output reg              db_v,
    output reg  [3:0]       db_idx,
    output reg  [15:0]      db_amt,
    input  wire             ld_req,
    input  wire [5:0]       ld_job,
    input  wire             ld_unload,
    output wire             ld_ack
);
    // engine counters (NR_FOREACH_ENGINE_CTR) and dataplane counters (FPGA.md)
    localparam [4:0] C_AGGREGATED = 0, C_COMPLETED = 1, C_EMITTED = 2, C_RELEASED = 3,
        C_DUP_RESENT = 4, C_DUP_DROPPED = 5, C_STALE = 6, C_OCCUPIED = 7, C_LEN_MISMATCH = 8,
        C_BAD_LEN = 9, C_OPCODE_MISMATCH = 10, C_TAG_MISMATCH = 11, C_UNKNOWN_CONN = 12,
        C_SPOOFED = 13, C_NOT_WRITE = 14, C_JOB_FAILED_DROP = 15, C_ACKS_SNOOPED = 16,
        C_ACK_IGNORED = 17, C_JOB_TIMEOUTS = 18, C_PSN_CONFLICT = 29;
    localparam [3:0] D_RX = 0, D_FORWARDED = 2, D_HELD = 3, D_RESENT = 4, D_RESULTS = 5,
        D_RUNT = 6, D_OVERSIZE = 7, D_MALFORMED = 8, D_BAD_ICRC = 9, D_ENGINE_DROP = 10;
    localparam [2:0] SL_FREE = 0, SL_FILLING = 1, SL_COMPLETE = 2, SL_EMITTED = 3, SL_RELEASED = 4;
    localparam [31:0] ICRC_INIT = 32'hDEBB20E3;

    localparam [5:0] S_IDLE = 0, S_LD = 1, S_LD_ACK = 2, S_LD_WAIT = 3, S_TMO = 4,
        S_P0 = 5, S_P1 = 6, S_CHK = 7, S_CHK_END = 8, S_ROUTE = 9, S_ACK = 10,
        S_REL = 11, S_REL_W1 = 12, S_REL_W2 = 13, S_FWD = 14, S_EWAIT = 15, S_DROP = 16,
        S_D0 = 17, S_D_W1 = 18, S_D_W2 = 19, S_D1 = 20, S_CP_HDR = 21, S_CP_PRE = 22,
        S_CP_PRE_W = 23, S_CP_A = 24, S_CP_W1 = 25, S_CP_W2 = 26, S_CP_DONE = 27,
        S_ER0 = 28, S_ER_W1 = 29, S_ER_W2 = 30, S_ER1 = 31, S_SUM_A = 32, S_SUM_W1 = 33,
        S_SUM_W2 = 34, S_SUM_WR = 35, S_EM_D = 36, S_EM_DW1 = 37, S_EM_DW2 = 38,
        S_EM_GO = 39, S_EM_WAIT = 40, S_ER_DONE = 41, S_RESEND = 42, S_FIN = 43,
        S_CMP_END = 44, S_CP_H = 45, S_CP_HW1 = 46, S_CP_HW2 = 47, S_SUM_W3 = 48,
        S_RN_A = 49, S_RN_W1 = 50, S_RN_W2 = 51, S_RN_W3 = 52;


    reg [5:0] st, ret;     // ret: where S_EWAIT and S_ER* go back to

    // ---- per-job runtime state ------------------------------------------------
    reg [47:0] r_ne [0:NJ-1];       // next_emit (extended sequence)
    reg [47:0] r_nr [0:NJ-1];       // next_release
    reg [23:0] r_rs [0:NJ-1];       // next_release mod pool
    reg [23:0] r_es [0:NJ-1];       // next_emit mod pool
    reg [23:0] r_busy [0:NJ-1];     // slots FILLING or COMPLETE
    reg [31:0] r_prog [0:NJ-1];     // ms of the last progress
    reg [47:0] r_ack [0:NJ*NR-1];   // per connection: every sequence below is ACKed
    reg [31:0] now_ms;

    genvar gj;
    generate
        for (gj = 0; gj < NJ; gj = gj + 1) begin : g_ne
            assign next_emit_o[gj*24 +: 24] = r_ne[gj][23:0];
            assign next_release_o[gj*24 +: 24] = r_nr[gj][23:0];
        end
    endgenerate

    // ---- parse and lookup -----------------------------------------------------
    wire [`PR_W-1:0] f_rec;          // the held frame's parse record (nr_defs.vh)
    nr_parse u_parse (.hdr(f_hdr), .len(f_len), .rec(f_rec));
    reg  [`PR_W-1:0] pr;             // ... taken when its processing starts
    wire [12:0] p_pay_len = pr[`PR_PAY_LEN];
    wire [7:0]  p_syn = pr[`PR_AETH_SYN];

    wire        k_hit_w, k_ack_w;
    wire [`CT_W-1:0] k_ent;
    nr_lookup #(.NC(NC)) u_lookup (.daddr(pr[`PR_DADDR]), .qpn(pr[`PR_QPN]), .conns(conns), .hit(k_hit_w),
        .ack_side(k_ack_w), .ent(k_ent));
    reg        k_hit, k_ack;
    reg [5:0]  cj;                   // the job
    reg [8:0]  ci;                   // the connection (rank)
    reg [31:0] k_sip, k_dip;
    reg [23:0] k_ipsn;

    // the job's parameters
    wire [`JT_W-1:0] jv = jobs[cj*`JT_W +: `JT_W];
    wire [1:0]  jstate = jv[`JT_STATE];
    wire [8:0]  jn = jv[`JT_N];
    wire [3:0]  jlog = jv[`JT_MTU_LOG2];
    wire        jstream = jv[`JT_MODE];
    wire [31:0] jkey = jv[`JT_KEY];
    wire [31:0] jbase = jv[`JT_BASE];
    wire [23:0] jpool = jv[`JT_POOL];
    wire        jhalf = jv[`JT_DTYPE] != 2'd0;      // 16-bit elements
    wire        jfp16 = jv[`JT_DTYPE] == 2'd2;
    wire [8:0]  jroom = jv[`JT_ROOM];
    wire [23:0] mb = jbase[31:8];               // header/meta index base
    wire [13:0] jmtu = 14'd1 << jlog;

    wire rc_write = pr[`PR_OPCODE] >= 8'h06 && pr[`PR_OPCODE] <= 8'h0b;
    wire rc_resp = pr[`PR_OPCODE] >= 8'h0d && pr[`PR_OPCODE] <= 8'h12;   // NR_OPF_RESP

    // ---- the ICRC check -----------------------------------------------------------
    reg [31:0] crc, stored;
    reg [10:0] cw_issue, cw_data;   // words asked for / arrived
    reg        cpend, cpend2;
    wire [31:0] crc_next;
    nr_icrc u_icrc (.crc_in(crc), .word(rx_data), .woff({cw_data, 2'b00}), .l3(pr[`PR_L3]),
                    .l4(pr[`PR_L4]), .ipv6(pr[`PR_IPVER] == 3'd6), .cend(pr[`PR_PEND] - 13'd4), .crc_out(crc_next));
    reg [31:0] stored_next;
    reg [12:0] sb;
    integer kk;
    always @* begin
        stored_next = stored;
        for (kk = 0; kk < 4; kk = kk + 1) begin
            sb = {cw_data, 2'b00} + kk[12:0];
            if (sb >= pr[`PR_PEND] - 13'd4 && sb < pr[`PR_PEND])
                stored_next[8*(sb - (pr[`PR_PEND] - 13'd4)) +: 8] = rx_data[8*kk +: 8];
        end
    end

    // ---- slot arithmetic ------------------------------------------------------------
    reg [47:0] x;                   // extended sequence of the packet
    reg [23:0] si;                  // its slot in the job
    reg        d_neg;
    reg [MW-1:0] m;                 // the slot's metadata, kept for the states after a read
    // the metadata as it comes out of the store (decisions in S_D1, S_ER1)
    // the slot store (nr_store): payload, headers, descriptors, slot metadata
    wire [29:0]   pay_addr, hdr_addr;
    reg  [23:0]   desc_addr, meta_addr;
    reg           pay_we, hdr_we, desc_we, meta_we;
    reg  [31:0]   pay_wdata, hdr_wdata, desc_wdata;
    wire [31:0]   desc_rdata;
    reg  [MW-1:0] meta_wdata;
    wire [MW-1:0] meta_rdata;
    nr_store #(.POOL_BYTES(POOL_BYTES), .MW(MW)) u_store (
        .clk(clk), .pay_addr(pay_addr), .pay_we(pay_we), .pay_wdata(pay_wdata),
        .pay_rdata(pay_rdata), .hdr_addr(hdr_addr), .hdr_we(hdr_we), .hdr_wdata(hdr_wdata),
        .hdr_rdata(hdr_rdata), .desc_addr(desc_addr), .desc_we(desc_we),
        .desc_wdata(desc_wdata), .desc_rdata(desc_rdata), .meta_addr(meta_addr),
        .meta_we(meta_we), .meta_wdata(meta_wdata), .meta_rdata(meta_rdata));

    // the metadata of the slot read (meta_rdata) and of the one held (m): `SM_*
    wire [NR-1:0] r_bits = meta_rdata[`SM_BITS +: NR];
    wire [12:0] m_len = m[`SM_LEN];
    function [MW-1:0] meta_pack(input [47:0] px, input [2:0] ps, input [7:0] pop, input pht,
                                input pec, input [12:0] pln, input [8:0] pc, input [31:0] ptg,
                                input [8:0] ptc, input [NR-1:0] pb);
        meta_pack = {pb, ptc, ptg, pc, pln, pec, pht, pop, ps, px};
    endfunction

    // payload word address of rank r of slot s: (base + (s x room + r) x MTU) / 4
    // (room = N but for a one-rank streaming 16-bit job: 2)
    function [29:0] pw(input [23:0] s, input [8:0] r);
        reg [35:0] k;
        begin
            k = {12'd0, s} * {27'd0, jroom} + {27'd0, r};
            pw = jbase[31:2] + (k[29:0] << (jlog - 4'd2));
        end
    endfunction
    // header / desc entry of rank r of slot s
    function [23:0] hx(input [23:0] s, input [8:0] r);
        reg [35:0] k;
        begin
            k = {12'd0, s} * {27'd0, jroom} + {27'd0, r};
            hx = mb + k[23:0];
        end
    endfunction

    // ---- working registers ---------------------------------------------------------
    reg [29:0] c_pay_addr, c_hdr_addr;
    reg [10:0] c_rx_addr;
    reg        take;                 // this contribution takes the slot
    reg        occ, mbit;            // the slot holds x; this rank is in
    reg [29:0] pbase;                // payload destination (word address)
    reg [MW-1:0] m_new;
    reg [10:0] n_issue, n_done, n_words;
    reg [10:0] q;                    // frame word holding payload bytes 0-1
    reg [31:0] prev, acc;
    reg [31:0] acc2;                 // 16-bit: the sum of the words' high elements
    reg [31:0] hw;                   // streaming 16-bit: the payload word being added
    reg [10:0] wj;                   // payload word
    reg [8:0]  rr;                   // rank in loops
    reg [23:0] hidx;
    reg [5:0]  tj;                   // timeout scan
    wire [`JT_W-1:0] tv = jobs[tj*`JT_W +: `JT_W];
    reg        tick_pend;
    reg [47:0] low;
    reg        accum;                // streaming add into rank 0's buffer
    reg        wide;                 // streaming 16-bit: a payload word is two FP32
                                     // accumulator words (2 wj, 2 wj + 1)
    reg        cmp, differs;         // a held contribution's duplicate: compare, not store
    integer    i;

    // payload words of the packet and of the slot: a 16-bit job's last word
    // may hold one element (the other half is the frame's pad, never emitted)
    wire [10:0] p_words = p_pay_len[12:2] + {10'd0, p_pay_len[1:0] != 2'd0};
    wire [10:0] m_words = m_len[12:2] + {10'd0, m_len[1:0] != 2'd0};
    wire        p_last = wj + 11'd1 == p_words;
    // payload word wj of the frame, realigned
    wire [31:0] in_word = {rx_data[15:0], prev[31:16]};

    // 16-bit elements into FP32 (one widener): streaming, the arriving word's
    // low element (S_CP_W2) and high element (S_CP_HW2); ordered, the stored
    // contribution's low (S_SUM_W2) and high (S_SUM_W3)
    wire [15:0] wid_h = st == S_CP_W2 ? in_word[15:0] : st == S_CP_HW2 ? hw[31:16] :
                        st == S_SUM_W3 ? pay_rdata[31:16] : pay_rdata[15:0];
    wire [31:0] wid_y;
    nr_half_widen u_widen (.h(wid_h), .fp16(jfp16), .f(wid_y));
    // and back, once, at emission (S_SUM_WR): the two elements of a result word
    wire [15:0] rnd_lo, rnd_hi;
    nr_half_round u_rnd_lo (.f(acc), .fp16(jfp16), .h(rnd_lo));
    nr_half_round u_rnd_hi (.f(acc2), .fp16(jfp16), .h(rnd_hi));

    // the adder: streaming (S_CP_W2, S_CP_HW2) stored + arriving; ordered
    // (S_SUM_W2, S_SUM_W3) the sum of the ranks before + this rank's
    wire [31:0] add_y;
    wire [31:0] add_a = (st == S_CP_W2 || st == S_CP_HW2) ? pay_rdata : st == S_SUM_W3 ? acc2 : acc;
    wire [31:0] add_b = jhalf ? wid_y : st == S_CP_W2 ? in_word : pay_rdata;
    nr_fp32_add u_add (.a(add_a), .b(add_b), .y(add_y));

    // read ports: nr_emit's while it runs
    assign rx_addr = e_busy ? e_rx_addr : c_rx_addr;
    assign pay_addr = e_busy ? e_pay_addr : c_pay_addr;
    assign hdr_addr = e_busy ? e_hdr_addr : c_hdr_addr;
    assign f_done = st == S_FIN;
    assign ld_ack = st == S_LD_ACK;

    // the lowest ACK mark of the job's connections, and next_emit
    always @* begin
        low = r_ne[cj];
        for (i = 0; i < NR; i = i + 1)
            if (i < jn && r_ack[cj * NR + i] < low)
                low = r_ack[cj * NR + i];
    end

    // ACK snooping arithmetic
    wire [23:0] ag0 = pr[`PR_PSN] - k_ipsn;
    wire        a_is_ack = p_syn[7:5] == 3'b000;
    wire        a_is_seq = p_syn == 8'h60;
    wire [23:0] ag = a_is_ack ? ag0 + 24'd1 : ag0;
    wire [47:0] a_old = r_ack[cj * NR + ci];
    wire [23:0] a_dd = ag - a_old[23:0];
    wire [47:0] a_mark = a_old + {{24{a_dd[23]}}, a_dd};

    // data arithmetic
    wire [23:0] d_g = pr[`PR_PSN] - k_ipsn;
    wire [23:0] d_dd = d_g - r_nr[cj][23:0];
    wire [47:0] d_d = {{24{d_dd[23]}}, d_dd};
    wire [24:0] d_abs = d_dd[23] ? {1'b0, -d_dd} : {1'b0, d_dd};

    task ctr_e(input [4:0] idx, input [6:0] job, input [15:0] amt);
        begin
            ea_v <= 1'b1; ea_idx <= idx; ea_job <= job; ea_amt <= amt;
        end
    endtask
    task ctr_d(input [3:0] idx, input [15:0] amt);
        begin
            db_v <= 1'b1; db_idx <= idx; db_amt <= amt;
        end
    endtask

    always @(posedge clk) begin
        ea_v <= 1'b0;
        db_v <= 1'b0;
        fail_v <= 1'b0;
        e_start <= 1'b0;
        pay_we <= 1'b0;
        hdr_we <= 1'b0;
        desc_we <= 1'b0;
        meta_we <= 1'b0;
        if (tick_ms) begin
            now_ms <= now_ms + 32'd1;
            tick_pend <= 1'b1;
        end
        if (rst) begin
            st <= S_IDLE;
            now_ms <= 32'd0;
            tick_pend <= 1'b0;
            cmp <= 1'b0;
            cj <= 6'd0;
            ci <= 9'd0;
            c_rx_addr <= 11'd0;
            c_pay_addr <= 30'd0;
            c_hdr_addr <= 30'd0;
            meta_addr <= 24'd0;
            desc_addr <= 24'd0;
            for (i = 0; i < NJ; i = i + 1) begin
                r_ne[i] <= 48'd0; r_nr[i] <= 48'd0; r_rs[i] <= 24'd0; r_es[i] <= 24'd0;
                r_busy[i] <= 24'd0; r_prog[i] <= 32'd0;
            end
            for (i = 0; i < NJ * NR; i = i + 1)
                r_ack[i] <= 48'd0;
        end else begin
            case (st)
            // ---- between frames: job setup, timeouts, then the next frame ----------
            S_IDLE: begin
                if (ld_req) begin
                    cj <= ld_job;
                    n_issue <= 11'd0;
                    wj <= 11'd0;
                    st <= ld_unload ? S_LD_ACK : S_LD;
                    if (!ld_unload) begin
                        r_ne[ld_job] <= 48'd0; r_nr[ld_job] <= 48'd0;
                        r_rs[ld_job] <= 24'd0; r_es[ld_job] <= 24'd0;
                        r_busy[ld_job] <= 24'd0; r_prog[ld_job] <= now_ms;
                        for (i = 0; i < NR; i = i + 1)
                            r_ack[ld_job * NR + i] <= 48'd0;
                    end
                    hidx <= 24'd0;
                end else if (tick_pend) begin
                    tick_pend <= tick_ms;
                    tj <= 6'd0;
                    st <= S_TMO;
                end else if (f_valid) begin
                    st <= S_P0;
                end
            end
            S_LD: begin
                // every slot of the job FREE
                meta_addr <= mb + hidx;
                meta_wdata <= {MW{1'b0}};
                meta_we <= 1'b1;
                hidx <= hidx + 24'd1;
                if (hidx + 24'd1 >= jpool)
                    st <= S_LD_ACK;
            end
            S_LD_ACK: st <= S_LD_WAIT;
            S_LD_WAIT: if (!ld_req) st <= S_IDLE;
            S_TMO: begin
                if (tj >= NJ) begin
                    st <= S_IDLE;
                end else begin
                    if (tv[`JT_STATE] == 2'd1 &&
                        (r_busy[tj] != 24'd0 || r_ne[tj] != r_nr[tj]) &&
                        now_ms - r_prog[tj] >= tv[`JT_TIMEOUT]) begin
                        fail_v <= 1'b1; fail_job <= tj; fail_code <= 3'd1;
                        ctr_e(C_JOB_TIMEOUTS, {1'b0, tj}, 16'd1);
                    end
                    tj <= tj + 6'd1;
                end
            end

            // ---- a frame: parse, ICRC, lookup ------------------------------------------
            S_P0: begin
                pr <= f_rec;
                ctr_d(D_RX, 16'd1);
                st <= S_P1;
            end
            S_P1: begin
                if (f_oversize) begin
                    ctr_d(D_OVERSIZE, 16'd1);
                    st <= S_FIN;
                end else if (f_len < 13'd14) begin
                    ctr_d(D_RUNT, 16'd1);
                    st <= S_FIN;
                end else if (pr[`PR_KIND] == 2'd0) begin
                    st <= S_FWD;
                end else if (pr[`PR_KIND] == 2'd2) begin
                    ctr_d(D_MALFORMED, 16'd1);
                    st <= S_FIN;
                end else begin
                    crc <= ICRC_INIT;
                    stored <= 32'd0;
                    cw_issue <= 11'd0;
                    cw_data <= 11'd0;
                    cpend <= 1'b0;
                    cpend2 <= 1'b0;
                    n_words <= (pr[`PR_PEND] + 13'd3) >> 2;
                    st <= S_CHK;
                end
            end
            S_CHK: begin
                if (cw_issue < n_words) begin
                    c_rx_addr <= cw_issue;
                    cw_issue <= cw_issue + 11'd1;
                end
                cpend <= cw_issue < n_words;
                cpend2 <= cpend;
                if (cpend2) begin
                    crc <= crc_next;
                    stored <= stored_next;
                    cw_data <= cw_data + 11'd1;
                    if (cw_data + 11'd1 == n_words)
                        st <= S_CHK_END;
                end
            end
            S_CHK_END: begin
                if (~crc != stored) begin
                    ctr_d(D_BAD_ICRC, 16'd1);
                    st <= S_FIN;
                end else
                    st <= S_ROUTE;
                k_hit <= k_hit_w; k_ack <= k_ack_w; cj <= k_ent[`CT_JOB]; ci <= k_ent[`CT_RANK];
                k_sip <= k_ent[`CT_SIP]; k_dip <= k_ent[`CT_DIP]; k_ipsn <= k_ent[`CT_IPSN];
            end
            S_ROUTE: begin
                if (pr[`PR_IPVER] != 3'd4 || !k_hit || cj >= NJ || ci >= jn) begin
                    if (pr[`PR_IPVER] == 3'd4 && rc_write)
                        ctr_e(C_UNKNOWN_CONN, NJ, 16'd1);
                    st <= S_FWD;
                end else if (k_ack) begin
                    // any frame to the sender's QP from anyone but its
                    // receiver is forged: dropped, never snooped (a forged
                    // NAK would send the sender back, an error NAK kill it)
                    if (pr[`PR_SADDR] != k_dip) begin
                        ctr_e(C_SPOOFED, {1'b0, cj}, 16'd1);
                        st <= S_DROP;
                    end else if (!pr[`PR_HAS_AETH] || jstate != 2'd1)
                        st <= S_FWD;
                    else
                        st <= S_ACK;
                end else if (pr[`PR_SADDR] != k_sip) begin
                    ctr_e(C_SPOOFED, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (rc_resp) begin
                    // a response (READ response, ACK, atomic ACK) from its
                    // peer to the QP as a requester: forwarded untouched
                    st <= S_FWD;
                end else if (jstate != 2'd1) begin
                    ctr_e(C_JOB_FAILED_DROP, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (!rc_write) begin
                    ctr_e(C_NOT_WRITE, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else
                    st <= S_D0;
            end
            S_DROP: begin
                ctr_d(D_ENGINE_DROP, 16'd1);
                st <= S_FIN;
            end
            S_FWD: begin
                e_start <= 1'b1;
                e_cmd[`EC_RAW] <= 1'b1;
                e_cmd[`EC_LEN] <= f_len;
                e_cmd[`EC_PORT] <= f_port;
                e_cmd[`EC_KIND] <= 2'd0;
                ctr_d(D_FORWARDED, 16'd1);
                ret <= S_FIN;
                st <= S_EWAIT;
            end
            S_EWAIT: if (!e_start && !e_busy) st <= ret;

            // ---- ACK snooping and release ----------------------------------------------
            S_ACK: begin
                if (!a_is_ack && !a_is_seq) begin
                    ctr_e(C_ACKS_SNOOPED, {1'b0, cj}, 16'd1);
                    st <= S_FWD;
                end else if (a_dd[23] || a_mark > r_ne[cj]) begin
                    ctr_e(C_ACK_IGNORED, {1'b0, cj}, 16'd1);
                    st <= S_FWD;
                end else begin
                    ctr_e(C_ACKS_SNOOPED, {1'b0, cj}, 16'd1);
                    if (a_mark > a_old) begin
                        r_ack[cj * NR + ci] <= a_mark;
                        r_prog[cj] <= now_ms;
                        st <= (a_old == r_nr[cj]) ? S_REL : S_FWD;
                    end else
                        st <= S_FWD;
                end
            end
            S_REL: begin
                if (r_nr[cj] < low) begin
                    meta_addr <= mb + r_rs[cj];
                    st <= S_REL_W1;
                end else
                    st <= S_FWD;
            end
            S_REL_W1: st <= S_REL_W2;
            S_REL_W2: begin
                meta_wdata <= {meta_rdata[MW-1:51], SL_RELEASED, meta_rdata[47:0]};
                meta_we <= 1'b1;
                ctr_e(C_RELEASED, {1'b0, cj}, 16'd1);
                r_nr[cj] <= r_nr[cj] + 48'd1;
                r_rs[cj] <= (r_rs[cj] + 24'd1 == jpool) ? 24'd0 : r_rs[cj] + 24'd1;
                st <= S_REL;
            end

            // ---- data: the slot, then the verdict ------------------------------------
            S_D0: begin
                x <= r_nr[cj] + d_d;
                d_neg <= d_dd[23];
                if (!d_dd[23] && {1'b0, d_dd} >= {1'b0, jpool}) begin
                    ctr_e(C_OCCUPIED, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (d_dd[23] && d_abs > {1'b0, jpool}) begin
                    // x + pool was released: it took this slot after x
                    ctr_e(C_STALE, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else begin
                    if (!d_dd[23])
                        si <= ({1'b0, r_rs[cj]} + {1'b0, d_dd} >= {1'b0, jpool}) ?
                              r_rs[cj] + d_dd - jpool : r_rs[cj] + d_dd;
                    else
                        si <= (d_abs > {1'b0, r_rs[cj]}) ? r_rs[cj] + jpool - d_abs[23:0] :
                              r_rs[cj] - d_abs[23:0];
                    st <= S_D_W1;
                end
            end
            S_D_W1: begin
                meta_addr <= mb + si;
                st <= S_D_W2;
            end
            S_D_W2: st <= S_D1;
            S_D1: begin
                m <= meta_rdata;
                occ = meta_rdata[`SM_STATE] != SL_FREE && meta_rdata[`SM_X] == x;
                mbit = r_bits[ci[$clog2(NR)-1:0]];
                take = !(meta_rdata[`SM_STATE] == SL_FILLING && meta_rdata[`SM_X] == x);
                if (occ && ((meta_rdata[`SM_STATE] == SL_FILLING && mbit) || meta_rdata[`SM_STATE] == SL_COMPLETE)) begin
                    // a contribution the slot holds: ordered mode keeps it as it
                    // came, so a second, different frame is a conflict (S_CMP_END)
                    if (jstream) begin
                        ctr_e(C_DUP_DROPPED, {1'b0, cj}, 16'd1);
                        st <= S_DROP;
                    end else begin
                        differs <= pr[`PR_OPCODE] != meta_rdata[`SM_OPCODE] || p_pay_len != meta_rdata[`SM_LEN] ||
                                   (meta_rdata[`SM_HAS_TAG] && pr[`PR_IMM] != meta_rdata[`SM_TAG]);
                        if (pr[`PR_OPCODE] != meta_rdata[`SM_OPCODE] || p_pay_len != meta_rdata[`SM_LEN] ||
                            (meta_rdata[`SM_HAS_TAG] && pr[`PR_IMM] != meta_rdata[`SM_TAG]) || p_words == 11'd0)
                            st <= S_CMP_END;
                        else begin
                            cmp <= 1'b1;
                            accum <= 1'b0;
                            wide <= 1'b0;
                            pbase <= pw(si, ci);
                            q <= (pr[`PR_PAY_OFF] - 7'd2) >> 2;
                            wj <= 11'd0;
                            st <= S_CP_PRE;
                        end
                    end
                end else if (occ && meta_rdata[`SM_STATE] != SL_FILLING) begin
                    // EMITTED or RELEASED: answer with the stored result
                    if (pr[`PR_OPCODE] != meta_rdata[`SM_OPCODE]) begin
                        ctr_e(C_OPCODE_MISMATCH, {1'b0, cj}, 16'd1);
                        st <= S_DROP;
                    end else if (p_pay_len != meta_rdata[`SM_LEN]) begin
                        ctr_e(C_LEN_MISMATCH, {1'b0, cj}, 16'd1);
                        st <= S_DROP;
                    end else begin
                        ctr_e(C_DUP_RESENT, {1'b0, cj}, 16'd1);
                        st <= S_RESEND;
                    end
                end else if (!occ && d_neg) begin
                    ctr_e(C_STALE, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (!occ && meta_rdata[`SM_STATE] != SL_FREE && meta_rdata[`SM_STATE] != SL_RELEASED) begin
                    ctr_e(C_OCCUPIED, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (p_pay_len == 13'd0 || {1'b0, p_pay_len} > jmtu ||
                             (jhalf ? p_pay_len[0] : p_pay_len[1:0] != 2'd0)) begin
                    // not a whole number of the job's elements, or over the MTU
                    ctr_e(C_BAD_LEN, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (!take && pr[`PR_OPCODE] != meta_rdata[`SM_OPCODE]) begin
                    ctr_e(C_OPCODE_MISMATCH, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (!take && p_pay_len != meta_rdata[`SM_LEN]) begin
                    ctr_e(C_LEN_MISMATCH, {1'b0, cj}, 16'd1);
                    st <= S_DROP;
                end else if (!take && meta_rdata[`SM_HAS_TAG] && pr[`PR_IMM] != meta_rdata[`SM_TAG]) begin
                    ctr_e(C_TAG_MISMATCH, {1'b0, cj}, 16'd1);
                    fail_v <= 1'b1; fail_job <= cj; fail_code <= 3'd2;
                    st <= S_DROP;
                end else begin
                    // admitted: the slot's new metadata is written once the
                    // payload is in (S_CP_DONE)
                    if (take) begin
                        m_new <= meta_pack(x, SL_FILLING, pr[`PR_OPCODE], pr[`PR_HAS_IMM], pr[`PR_ECN] == 2'b11,
                                           p_pay_len, 9'd1, pr[`PR_IMM], ci,
                                           {{(NR-1){1'b0}}, 1'b1} << ci);
                        r_busy[cj] <= r_busy[cj] + 24'd1;
                    end else
                        m_new <= meta_pack(meta_rdata[`SM_X], SL_FILLING, meta_rdata[`SM_OPCODE], meta_rdata[`SM_HAS_TAG],
                                           meta_rdata[`SM_ECN] | (pr[`PR_ECN] == 2'b11), meta_rdata[`SM_LEN], meta_rdata[`SM_COUNT] + 9'd1,
                                           meta_rdata[`SM_TAG], meta_rdata[`SM_TAG_CONN],
                                           r_bits | ({{(NR-1){1'b0}}, 1'b1} << ci));
                    // streaming: rank 0's buffer takes the first and adds the rest
                    // (16-bit: widened, into two FP32 words a payload word)
                    accum <= jstream && !take;
                    wide <= jstream && jhalf;
                    pbase <= jstream ? pw(si, 9'd0) : pw(si, ci);
                    ctr_e(C_AGGREGATED, {1'b0, cj}, 16'd1);
                    r_prog[cj] <= now_ms;
                    hidx <= hx(si, ci);
                    n_issue <= 11'd0;
                    n_done <= 11'd0;
                    cpend <= 1'b0;
                    cpend2 <= 1'b0;
                    st <= S_CP_HDR;
                end
            end

            // ---- a contribution into the slot store ----------------------------------
            S_CP_HDR: begin
                // frame words 0..29, then the two around the pad, to entry words 0..31
                if (n_issue < 11'd32) begin
                    c_rx_addr <= n_issue < 11'd30 ? n_issue :
                        ((({6'd0, pr[`PR_PAY_OFF]} + p_pay_len - 13'd2) >> 2) + {12'd0, n_issue[0]});
                    n_issue <= n_issue + 11'd1;
                end
                cpend <= n_issue < 11'd32;
                cpend2 <= cpend;
                if (cpend2) begin
                    c_hdr_addr <= {hidx, 5'd0} + {19'd0, n_done};
                    hdr_wdata <= rx_data;
                    hdr_we <= 1'b1;
                    n_done <= n_done + 11'd1;
                    if (n_done == 11'd31) begin
                        desc_addr <= hidx;
                        desc_wdata <= {2'd0, pr[`PR_L4], pr[`PR_PAD], pr[`PR_PAY_OFF], pr[`PR_IHL], pr[`PR_HAS_VLAN],
                                       pr[`PR_IPVER] == 3'd6, f_port};
                        desc_we <= 1'b1;
                        cpend <= 1'b0;
                        cpend2 <= 1'b0;
                        q <= (pr[`PR_PAY_OFF] - 7'd2) >> 2;
                        wj <= 11'd0;
                        st <= S_CP_PRE;
                    end
                end
            end
            S_CP_PRE: begin
                c_rx_addr <= q;
                st <= S_CP_PRE_W;
                n_issue <= 11'd0;
            end
            S_CP_PRE_W: begin
                n_issue <= n_issue + 11'd1;
                if (n_issue == 11'd1) begin
                    prev <= rx_data;
                    st <= S_CP_A;
                end
            end
            S_CP_A: begin
                // payload word wj = frame bytes pay_off + 4 wj .. + 3
                c_rx_addr <= q + 11'd1 + wj;
                c_pay_addr <= pbase + (wide ? {18'd0, wj, 1'b0} : {19'd0, wj});
                st <= S_CP_W1;
            end
            S_CP_W1: st <= S_CP_W2;
            S_CP_W2: begin
                if (wide)
                    pay_wdata <= accum ? add_y : wid_y;     // the low element
                else if (accum)
                    pay_wdata <= add_y;
                else
                    pay_wdata <= in_word;
                pay_we <= !cmp;
                // the payload's bytes only (a lone last element: its half word)
                if (cmp && (p_last && p_pay_len[1] ? pay_rdata[15:0] != in_word[15:0] :
                            pay_rdata != in_word))
                    differs <= 1'b1;
                prev <= rx_data;
                hw <= in_word;
                if (wide && !(p_last && p_pay_len[1]))
                    st <= S_CP_H;                           // then the high element
                else begin
                    wj <= wj + 11'd1;
                    if (p_last)
                        st <= cmp ? S_CMP_END : S_CP_DONE;
                    else
                        st <= S_CP_A;
                end
            end
            S_CP_H: begin
                // the low element's write happens now
                c_pay_addr <= pbase + {18'd0, wj, 1'b1};
                st <= S_CP_HW1;
            end
            S_CP_HW1: st <= S_CP_HW2;
            S_CP_HW2: begin
                pay_wdata <= accum ? add_y : wid_y;
                pay_we <= 1'b1;
                wj <= wj + 11'd1;
                st <= p_last ? S_CP_DONE : S_CP_A;
            end
            S_CMP_END: begin
                cmp <= 1'b0;
                if (differs) begin
                    // two frames for one held contribution: fail the job
                    ctr_e(C_PSN_CONFLICT, {1'b0, cj}, 16'd1);
                    fail_v <= 1'b1; fail_job <= cj; fail_code <= 3'd5;
                end else
                    ctr_e(C_DUP_DROPPED, {1'b0, cj}, 16'd1);
                st <= S_DROP;
            end
            S_CP_DONE: begin
                // the write of the last word happens now; move to the next address after
                meta_addr <= mb + si;
                meta_we <= 1'b1;
                ctr_d(D_HELD, 16'd1);
                if (m_new[82:74] == jn) begin
                    meta_wdata <= {m_new[MW-1:51], SL_COMPLETE, m_new[47:0]};
                    ctr_e(C_COMPLETED, {1'b0, cj}, 16'd1);
                    ret <= S_FIN;
                    st <= (m_new[47:0] == r_ne[cj]) ? S_ER0 : S_FIN;
                end else begin
                    meta_wdata <= m_new;
                    st <= S_FIN;
                end
            end

            // ---- emission of completed slots in sequence order ---------------------
            S_ER0: begin
                meta_addr <= mb + r_es[cj];
                si <= r_es[cj];
                st <= S_ER_W1;
            end
            S_ER_W1: st <= S_ER_W2;
            S_ER_W2: st <= S_ER1;
            S_ER1: begin
                m <= meta_rdata;
                if (meta_rdata[`SM_STATE] == SL_COMPLETE && meta_rdata[`SM_X] == r_ne[cj]) begin
                    wj <= 11'd0;
                    rr <= 9'd0;
                    st <= !jstream ? S_SUM_A : jhalf ? S_RN_A : S_EM_D;
                    rr <= 9'd0;
                end else
                    st <= ret;
            end
            S_SUM_A: begin
                // word wj of rank rr
                c_pay_addr <= pw(si, rr) + {19'd0, wj};
                st <= S_SUM_W1;
            end
            S_SUM_W1: st <= S_SUM_W2;
            S_SUM_W2: begin
                // 16-bit: the word's low element (its high one in S_SUM_W3)
                if (rr == 9'd0)
                    acc <= jhalf ? wid_y : pay_rdata;
                else
                    acc <= add_y;
                if (jhalf)
                    st <= S_SUM_W3;
                else if (rr + 9'd1 == jn)
                    st <= S_SUM_WR;
                else begin
                    rr <= rr + 9'd1;
                    st <= S_SUM_A;
                end
            end
            S_SUM_W3: begin
                // the read data stay: the address has not moved
                if (rr == 9'd0)
                    acc2 <= wid_y;
                else
                    acc2 <= add_y;
                if (rr + 9'd1 == jn)
                    st <= S_SUM_WR;
                else begin
                    rr <= rr + 9'd1;
                    st <= S_SUM_A;
                end
            end
            S_SUM_WR: begin
                // the result word into rank 0's buffer (16-bit: both elements
                // rounded, from the FP32 sums)
                c_pay_addr <= pw(si, 9'd0) + {19'd0, wj};
                pay_wdata <= jhalf ? {rnd_hi, rnd_lo} : acc;
                pay_we <= 1'b1;
                rr <= 9'd0;
                if (wj + 11'd1 == m_words)
                    st <= S_EM_D;
                else begin
                    wj <= wj + 11'd1;
                    st <= jstream ? S_RN_A : S_SUM_A;
                end
            end
            // streaming 16-bit at emission: result word wj is accumulator words
            // 2 wj and 2 wj + 1 rounded (S_SUM_WR), written over word wj (the
            // accumulator words below 2 wj are read already)
            S_RN_A: begin
                c_pay_addr <= pw(si, 9'd0) + {18'd0, wj, 1'b0};
                st <= S_RN_W1;
            end
            S_RN_W1: begin
                c_pay_addr <= pw(si, 9'd0) + {18'd0, wj, 1'b1};
                st <= S_RN_W2;
            end
            S_RN_W2: begin
                acc <= pay_rdata;
                st <= S_RN_W3;
            end
            S_RN_W3: begin
                acc2 <= pay_rdata;
                st <= S_SUM_WR;
            end
            S_EM_D: begin
                desc_addr <= hx(si, rr);
                st <= S_EM_DW1;
            end
            S_EM_DW1: st <= S_EM_DW2;
            S_EM_DW2: st <= S_EM_GO;
            S_EM_GO: begin
                e_start <= 1'b1;
                e_cmd[`EC_RAW] <= 1'b0;
                e_cmd[`EC_HSRC] <= 1'b1;
                e_cmd[`EC_HIDX] <= hx(si, rr);
                e_cmd[`EC_PADDR] <= pw(si, 9'd0);
                e_cmd[`EC_PLEN] <= m_len;
                e_cmd[`EC_PORT] <= desc_rdata[7:0];
                e_cmd[`EC_IPV6] <= desc_rdata[8];
                e_cmd[`EC_L3] <= desc_rdata[9] ? 7'd18 : 7'd14;
                e_cmd[`EC_IHL] <= desc_rdata[13:10];
                e_cmd[`EC_PAY_OFF] <= desc_rdata[20:14];
                e_cmd[`EC_PAD] <= desc_rdata[22:21];
                e_cmd[`EC_L4] <= desc_rdata[29:23];
                e_cmd[`EC_SET_IMM] <= m[`SM_HAS_TAG];
                e_cmd[`EC_IMM] <= m[`SM_TAG] ^ jkey;
                e_cmd[`EC_SET_CE] <= m[`SM_ECN];
                e_cmd[`EC_KIND] <= 2'd1;
                st <= S_EM_WAIT;
            end
            S_EM_WAIT: if (!e_start && !e_busy) begin
                if (rr + 9'd1 == jn)
                    st <= S_ER_DONE;
                else begin
                    rr <= rr + 9'd1;
                    st <= S_EM_D;
                end
            end
            S_ER_DONE: begin
                meta_addr <= mb + si;
                meta_wdata <= {m[MW-1:51], SL_EMITTED, m[47:0]};
                meta_we <= 1'b1;
                ctr_e(C_EMITTED, {1'b0, cj}, {7'd0, jn});
                ctr_d(D_RESULTS, {7'd0, jn});
                r_busy[cj] <= r_busy[cj] - 24'd1;
                r_ne[cj] <= r_ne[cj] + 48'd1;
                r_es[cj] <= (r_es[cj] + 24'd1 == jpool) ? 24'd0 : r_es[cj] + 24'd1;
                st <= S_ER0;
            end

            // ---- a duplicate of an emitted slot: the stored result ------------------
            S_RESEND: begin
                e_start <= 1'b1;
                e_cmd[`EC_RAW] <= 1'b0;
                e_cmd[`EC_HSRC] <= 1'b0;
                e_cmd[`EC_PADDR] <= pw(si, 9'd0);
                e_cmd[`EC_PLEN] <= p_pay_len;
                e_cmd[`EC_PORT] <= f_port;
                e_cmd[`EC_IPV6] <= 1'b0;
                e_cmd[`EC_L3] <= pr[`PR_L3];
                e_cmd[`EC_IHL] <= pr[`PR_IHL];
                e_cmd[`EC_PAY_OFF] <= pr[`PR_PAY_OFF];
                e_cmd[`EC_PAD] <= pr[`PR_PAD];
                e_cmd[`EC_L4] <= pr[`PR_L4];
                e_cmd[`EC_SET_IMM] <= m[`SM_HAS_TAG];
                e_cmd[`EC_IMM] <= m[`SM_TAG] ^ jkey;
                e_cmd[`EC_SET_CE] <= m[`SM_ECN];
                e_cmd[`EC_KIND] <= 2'd2;
                ctr_d(D_RESENT, 16'd1);
                ret <= S_FIN;
                st <= S_EWAIT;
            end
            S_FIN: st <= S_IDLE;
            default: st <= S_IDLE;
            endcase
        end
    end
endmodule

`default_nettype wire
