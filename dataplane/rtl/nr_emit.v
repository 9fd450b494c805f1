// SPDX-License-Identifier: BSD-3-Clause
//
// nr_emit: where frames leave.  Two kinds of job:
//   raw     a frame from the frame buffer, unchanged (forwarded traffic);
//   result  the box's rewrite (dataplane/dpdk/dp_emit.c) of a result or a resent
//           duplicate: a connection's own headers (from the header store, or
//           the received frame for a resend), the slot's result as payload,
//           the pad bytes, ImmDt = tag ^ key, ECN-CE set when a contribution
//           carried it and the frame is ECN-capable (ECT(0)/ECT(1); never on
//           Not-ECT, RFC 3168; IPv4 header checksum recomputed), UDP checksum 0, the
//           frame cut at its ICRC (no Ethernet trailer) and a new ICRC.
// A result is built in the transmit buffer (byte-enable writes), then
// streamed out through nr_icrc, the ICRC bytes put in as they pass.
// Out: AXI4-Stream like nr_rx's, tuser = {kind, port}: kind 0 forwarded,
// 1 result, 2 resend (the box routes results and forwards differently).
`default_nettype none
`include "nr_defs.vh"

module nr_emit #(
    parameter integer FRAME_MAX = 4352
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        start,
    input  wire [`EC_W-1:0] e_cmd,   // the emission (nr_defs.vh), taken on start
    output wire        busy,
    // read ports (nr_core hands them over while busy)
    output reg  [10:0] rx_addr,
    input  wire [31:0] rx_data,
    output reg  [29:0] hdr_addr,
    input  wire [31:0] hdr_data,
    output reg  [29:0] pay_addr,
    input  wire [31:0] pay_data,
    output reg         dc_v,
    output reg  [3:0]  dc_idx,
    // frames out
    `NR_TX_PORTS(reg)
);
    localparam integer WORDS = FRAME_MAX / 4;
    localparam [3:0] S_IDLE = 4'd0, S_H = 4'd1, S_T = 4'd2, S_P = 4'd3, S_P_LAST = 4'd4,
        S_F = 4'd5, S_O_RD = 4'd6, S_O_WAIT = 4'd8, S_O_DATA = 4'd7;
    localparam [31:0] ICRC_INIT = 32'hDEBB20E3;   // state after the 8 0xFF LRH bytes

    reg [3:0]  st;
    reg [`EC_W-1:0] c;                 // the emission under way
    reg [12:0] fend;
    wire [12:0] plen = c[`EC_PLEN];
    // payload words (a 16-bit job's payload may end in half a word)
    wire [10:0] pwords = plen[12:2] + {10'd0, plen[1:0] != 2'd0};
    wire [31:0] imm = c[`EC_IMM];
    reg [7:0]  tos;
    reg [31:0] csum;

    assign busy = st != S_IDLE;
    assign tx_tuser = {6'd0, c[`EC_KIND], c[`EC_PORT]};

    // the transmit buffer: byte-enable writes, one synchronous read port
    reg [31:0] txb [0:WORDS-1];
    reg [10:0] tw_addr, tr_addr;
    reg [3:0]  tw_be;
    reg [31:0] tw_data;
    reg [31:0] tr_data;
    always @(posedge clk) begin
        if (tw_be[0]) txb[tw_addr][7:0] <= tw_data[7:0];
        if (tw_be[1]) txb[tw_addr][15:8] <= tw_data[15:8];
        if (tw_be[2]) txb[tw_addr][23:16] <= tw_data[23:16];
        if (tw_be[3]) txb[tw_addr][31:24] <= tw_data[31:24];
        tr_data <= txb[tr_addr];
    end

    // counters of the copy loops
    reg [10:0] n_issue, n_done, n_words;   // words asked for, words written, total
    reg        pend_v, pend2;              // a read in flight: address, then data
    reg [31:0] prev;
    reg [10:0] q;                          // transmit word holding payload bytes 0-1
    reg [2:0]  fx;                         // fix-up step
    reg [10:0] ow;                         // output word
    reg [31:0] crc;

    // the IPv4 header checksum over the copied header (nr_ipv4_cksum)
    function [31:0] hw_sum(input [31:0] acc, input [31:0] w, input [12:0] woff);
        reg [12:0] o0, o1;
        reg [15:0] h0, h1;
        begin
            o0 = woff;
            o1 = woff + 13'd2;
            h0 = {w[7:0], w[15:8]};
            h1 = {w[23:16], w[31:24]};
            if (o0 == {6'd0, c[`EC_L3]}) h0[1:0] = 2'b11;
            if (o1 == {6'd0, c[`EC_L3]}) h1[1:0] = 2'b11;
            hw_sum = acc;
            if (o0 >= {6'd0, c[`EC_L3]} && o0 < {6'd0, c[`EC_L3]} + {7'd0, c[`EC_IHL], 2'b00} && o0 != {6'd0, c[`EC_L3]} + 13'd10)
                hw_sum = hw_sum + {16'd0, h0};
            if (o1 >= {6'd0, c[`EC_L3]} && o1 < {6'd0, c[`EC_L3]} + {7'd0, c[`EC_IHL], 2'b00} && o1 != {6'd0, c[`EC_L3]} + 13'd10)
                hw_sum = hw_sum + {16'd0, h1};
        end
    endfunction
    wire [31:0] cs1 = {16'd0, csum[15:0]} + {16'd0, csum[31:16]};
    wire [31:0] cs2 = {16'd0, cs1[15:0]} + {16'd0, cs1[31:16]};
    wire [15:0] ip_ck = ~cs2[15:0];

    // output word: the ICRC goes in as it passes
    wire [12:0] cend = fend - 13'd4;
    wire [31:0] o_src = c[`EC_RAW] ? rx_data : tr_data;
    wire [31:0] crc_next;
    nr_icrc u_icrc (.crc_in(crc), .word(o_src), .woff({ow, 2'b00}), .l3(c[`EC_L3]), .l4(c[`EC_L4]),
                    .ipv6(c[`EC_IPV6]), .cend(cend), .crc_out(crc_next));
    wire [31:0] icrc = ~crc_next;
    reg [31:0] o_word;
    reg [3:0]  o_keep;
    reg [12:0] ob;
    integer k;
    always @* begin
        o_word = o_src;
        for (k = 0; k < 4; k = k + 1) begin
            ob = {ow, 2'b00} + k[12:0];
            o_keep[k] = ob < fend;
            if (!c[`EC_RAW] && ob >= cend && ob < fend)
                o_word[8*k +: 8] = icrc[8*(ob - cend) +: 8];
        end
    end

    always @(posedge clk) begin
        dc_v <= 1'b0;
        tw_be <= 4'd0;
        if (rst) begin
            st <= S_IDLE;
            tx_tvalid <= 1'b0;
            tx_tlast <= 1'b0;
            tx_tkeep <= 4'd0;
            tx_tdata <= 32'd0;
            c <= {`EC_W{1'b0}};
            rx_addr <= 11'd0;
            hdr_addr <= 30'd0;
            pay_addr <= 30'd0;
            tr_addr <= 11'd0;
        end else begin
            case (st)
            S_IDLE: if (start) begin
                c <= e_cmd;
                csum <= 32'd0;
                tos <= 8'd0;
                crc <= ICRC_INIT;
                ow <= 11'd0;
                n_issue <= 11'd0;
                n_done <= 11'd0;
                pend_v <= 1'b0;
                pend2 <= 1'b0;
                q <= (e_cmd[`EC_PAY_OFF] - 7'd2) >> 2;
                if (e_cmd[`EC_RAW]) begin
                    fend <= e_cmd[`EC_LEN];
                    st <= S_O_RD;
                end else begin
                    fend <= {6'd0, e_cmd[`EC_PAY_OFF]} + e_cmd[`EC_PLEN] + {11'd0, e_cmd[`EC_PAD]} + 13'd4;
                    // headers: the entry's 30 words, or the received frame whole
                    n_words <= e_cmd[`EC_HSRC] ? 11'd30 :
                        ((({6'd0, e_cmd[`EC_PAY_OFF]} + e_cmd[`EC_PLEN] + {11'd0, e_cmd[`EC_PAD]} + 13'd4 + 13'd3) >> 2));
                    st <= S_H;
                end
            end
            S_H: begin
                // copy header words: read n_issue, write what arrived
                if (n_issue < n_words) begin
                    rx_addr <= n_issue;
                    hdr_addr <= {c[`EC_HIDX], 5'd0} + {19'd0, n_issue};
                    n_issue <= n_issue + 11'd1;
                end
                pend_v <= n_issue < n_words;
                pend2 <= pend_v;
                if (pend2) begin
                    tw_addr <= n_done;
                    tw_data <= c[`EC_HSRC] ? hdr_data : rx_data;
                    tw_be <= 4'hf;
                    csum <= hw_sum(csum, c[`EC_HSRC] ? hdr_data : rx_data, {n_done, 2'b00});
                    if ({n_done, 2'b00} == {6'd0, c[`EC_L3]} - 13'd2)
                        tos <= c[`EC_HSRC] ? hdr_data[31:24] : rx_data[31:24];
                    n_done <= n_done + 11'd1;
                    if (n_done + 11'd1 == n_words) begin
                        n_issue <= 11'd0;
                        n_done <= 11'd0;
                        pend_v <= 1'b0;
                        pend2 <= 1'b0;
                        st <= c[`EC_HSRC] ? S_T : S_P;
                    end
                end
            end
            S_T: begin
                // the pad bytes, from entry words 30-31, behind the payload
                if (n_issue < 11'd2) begin
                    hdr_addr <= {c[`EC_HIDX], 5'd0} + 30'd30 + {29'd0, n_issue[0]};
                    n_issue <= n_issue + 11'd1;
                end
                pend_v <= n_issue < 11'd2;
                pend2 <= pend_v;
                if (pend2) begin
                    tw_addr <= ((({6'd0, c[`EC_PAY_OFF]} + plen - 13'd2) >> 2)) + {10'd0, n_done[0]};
                    tw_data <= hdr_data;
                    tw_be <= n_done[0] ? 4'hf : 4'hc;
                    n_done <= n_done + 11'd1;
                    if (n_done[0]) begin
                        n_issue <= 11'd0;
                        n_done <= 11'd0;
                        pend_v <= 1'b0;
                        pend2 <= 1'b0;
                        st <= S_P;
                    end
                end
            end
            S_P: begin
                // payload words, realigned by 2 bytes into the frame
                if (n_issue < pwords) begin
                    pay_addr <= c[`EC_PADDR] + {19'd0, n_issue};
                    n_issue <= n_issue + 11'd1;
                end
                pend_v <= n_issue < pwords;
                pend2 <= pend_v;
                if (pend2) begin
                    tw_addr <= q + n_done;
                    tw_data <= {pay_data[15:0], prev[31:16]};
                    tw_be <= n_done == 11'd0 ? 4'hc : 4'hf;
                    prev <= pay_data;
                    n_done <= n_done + 11'd1;
                    if (n_done + 11'd1 == pwords)
                        st <= S_P_LAST;
                end
            end
            S_P_LAST: begin
                // the last word's high half; none when the payload ends in
                // half a word (those bytes are the pad, S_T)
                tw_addr <= q + n_done;
                tw_data <= {16'd0, prev[31:16]};
                tw_be <= plen[1] ? 4'h0 : 4'h3;
                fx <= 3'd0;
                st <= S_F;
            end
            S_F: begin
                fx <= fx + 3'd1;
                case (fx)
                3'd0: begin   // ImmDt bytes 0-1 (frame pay_off - 4, - 3)
                    tw_addr <= ({6'd0, c[`EC_PAY_OFF]} - 13'd6) >> 2;
                    tw_data <= {imm[23:16], imm[31:24], 16'd0};
                    tw_be <= c[`EC_SET_IMM] ? 4'hc : 4'h0;
                end
                3'd1: begin   // ImmDt bytes 2-3
                    tw_addr <= ({6'd0, c[`EC_PAY_OFF]} - 13'd2) >> 2;
                    tw_data <= {16'd0, imm[7:0], imm[15:8]};
                    tw_be <= c[`EC_SET_IMM] ? 4'h3 : 4'h0;
                end
                3'd2: begin   // UDP checksum 0
                    tw_addr <= ({6'd0, c[`EC_L4]} + 13'd6) >> 2;
                    tw_data <= 32'd0;
                    tw_be <= 4'h3;
                end
                3'd3: begin   // ECN-CE in the TOS byte
                    tw_addr <= ({6'd0, c[`EC_L3]} - 13'd2) >> 2;
                    tw_data <= {tos | 8'h03, 24'd0};
                    tw_be <= (c[`EC_SET_CE] && !c[`EC_IPV6] && tos[1:0] != 2'b11 && tos[1:0] != 2'b00) ? 4'h8 : 4'h0;
                    if (c[`EC_SET_CE] && !c[`EC_IPV6] && tos[1:0] != 2'b11 && tos[1:0] != 2'b00 && c[`EC_KIND] == 2'd1) begin
                        dc_v <= 1'b1;
                        dc_idx <= 4'd11;          // ecn_marked
                    end
                end
                default: begin  // the IPv4 header checksum
                    tw_addr <= ({6'd0, c[`EC_L3]} + 13'd10) >> 2;
                    tw_data <= {16'd0, ip_ck[7:0], ip_ck[15:8]};
                    tw_be <= (c[`EC_SET_CE] && !c[`EC_IPV6] && tos[1:0] != 2'b11 && tos[1:0] != 2'b00) ? 4'h3 : 4'h0;
                    st <= S_O_RD;
                end
                endcase
            end
            S_O_RD: begin
                rx_addr <= ow;
                tr_addr <= ow;
                st <= S_O_WAIT;
                tx_tvalid <= 1'b0;
            end
            S_O_WAIT: st <= S_O_DATA;    // address in, then data out of the RAM
            S_O_DATA: begin
                // data of word ow is here (two cycles after its address was set)
                if (!tx_tvalid) begin
                    tx_tvalid <= 1'b1;
                    tx_tdata <= o_word;
                    tx_tkeep <= o_keep;
                    tx_tlast <= {ow, 2'b00} + 13'd4 >= fend;
                end else if (tx_tready) begin
                    tx_tvalid <= 1'b0;
                    crc <= crc_next;
                    if (tx_tlast) begin
                        dc_v <= 1'b1;
                        dc_idx <= 4'd1;           // tx
                        st <= S_IDLE;
                    end else begin
                        ow <= ow + 11'd1;
                        st <= S_O_RD;
                    end
                end
            end
            default: st <= S_IDLE;
            endcase
        end
    end
endmodule

`default_nettype wire
