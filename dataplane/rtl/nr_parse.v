// SPDX-License-Identifier: BSD-3-Clause
//
// nr_parse: the bounded RoCEv2 parser of proto/roce_parse.c in logic, on the
// first 128 bytes of a frame (every RoCEv2 header ends by byte 126: VLAN,
// a 60-byte IPv4 header, UDP, BTH and the longest extension headers) and its
// length.  Same classification, same evidence rule, same malformed reasons
// (enum nr_malformed), same offsets; combinational.
`default_nettype none
`include "nr_defs.vh"

module nr_parse (
    input  wire [1023:0] hdr,      // frame bytes 0..127, byte k in bits 8k+7:8k
    input  wire [12:0]   len,      // frame length in bytes
    output reg  [`PR_W-1:0] rec    // the parse record (nr_defs.vh)
);
    localparam [3:0] BAD_NONE = 4'd0, BAD_IHL = 4'd2, BAD_IP_LEN = 4'd3,
        BAD_IP_FRAGMENT = 4'd4, BAD_TRUNC_UDP = 4'd5, BAD_UDP_LEN = 4'd6,
        BAD_TRUNC_BTH = 4'd7, BAD_UNKNOWN_OPCODE = 4'd8, BAD_TVER = 4'd9,
        BAD_TRUNC_EXT = 4'd10, BAD_PAD = 4'd11, BAD_UNEXPECTED_PAYLOAD = 4'd12;

    // the header bytes, addressable by offset
    wire [7:0] hb [0:127];
    genvar gb;
    generate
        for (gb = 0; gb < 128; gb = gb + 1) begin : g_hb
            assign hb[gb] = hdr[gb*8 +: 8];
        end
    endgenerate

    // Opcode table (proto/roce_opcode.c): {defined, payload allowed, ImmDt,
    // AETH, header length (BTH and extension headers), ImmDt offset}.
    function [15:0] OPINFO(input [7:0] op);
        reg ok, pay, im, ae;
        reg [5:0] ln, io;
        begin
            ok = 1'b1; pay = 1'b0; im = 1'b0; ae = 1'b0; ln = 6'd12; io = 6'd12;
            case (op)
                8'h00, 8'h01, 8'h02, 8'h04, 8'h07, 8'h08,
                8'h20, 8'h21, 8'h22, 8'h24, 8'h27, 8'h28: pay = 1'b1;
                8'h03, 8'h05, 8'h09, 8'h23, 8'h25, 8'h29: begin pay = 1'b1; im = 1'b1; ln = 6'd16; end
                8'h06, 8'h0a, 8'h26, 8'h2a: begin pay = 1'b1; ln = 6'd28; end
                8'h0b, 8'h2b: begin pay = 1'b1; im = 1'b1; ln = 6'd32; io = 6'd28; end
                8'h0c: ln = 6'd28;
                8'h0d, 8'h0f, 8'h10: begin pay = 1'b1; ae = 1'b1; ln = 6'd16; end
                8'h0e: pay = 1'b1;
                8'h11: begin ae = 1'b1; ln = 6'd16; end
                8'h12: begin ae = 1'b1; ln = 6'd24; end
                8'h13, 8'h14: ln = 6'd40;
                8'h16, 8'h17: begin pay = 1'b1; ln = 6'd16; end
                8'h64: begin pay = 1'b1; ln = 6'd20; end
                8'h65: begin pay = 1'b1; im = 1'b1; ln = 6'd24; io = 6'd20; end
                8'h81: ln = 6'd28;
                default: ok = 1'b0;
            endcase
            OPINFO = {ok, pay, im, ae, ln, io};
        end
    endfunction
    reg        op_ok, op_pay, op_imm, op_aeth;
    reg [5:0]  op_len, op_imm_off;

    // parse_bth over [off, e): sets the transport fields; returns via regs
    reg [15:0] etype, frag, iplen_f, udplen;
    reg [13:0] ipend, bth_end;
    reg [6:0]  bth;
    reg [12:0] n, paybytes;
    reg        roce_evidence, do_bth, bth_trunc_only;
    reg [13:0] hl;
    reg [7:0]  b_vihl, b_tos, b_bth1;
    always @* begin
        rec[`PR_KIND] = 2'd0; rec[`PR_BAD] = BAD_NONE; rec[`PR_IPVER] = 3'd0; rec[`PR_HAS_VLAN] = 1'b0;
        rec[`PR_L3] = 7'd14; rec[`PR_L4] = 7'd0; rec[`PR_PAY_OFF] = 7'd0; rec[`PR_PAY_LEN] = 13'd0; rec[`PR_PEND] = 13'd0;
        rec[`PR_PAD] = 2'd0; rec[`PR_ECN] = 2'd0; rec[`PR_IHL] = 4'd0; rec[`PR_SADDR] = 32'd0; rec[`PR_DADDR] = 32'd0;
        rec[`PR_OPCODE] = 8'd0; rec[`PR_QPN] = 24'd0; rec[`PR_PSN] = 24'd0; rec[`PR_IMM] = 32'd0; rec[`PR_HAS_IMM] = 1'b0;
        rec[`PR_HAS_AETH] = 1'b0; rec[`PR_AETH_SYN] = 8'd0;
        etype = 16'd0; frag = 16'd0; iplen_f = 16'd0; udplen = 16'd0; ipend = 14'd0;
        bth_end = 14'd0; bth = 7'd0; n = 13'd0; paybytes = 13'd0; roce_evidence = 1'b0;
        do_bth = 1'b0; bth_trunc_only = 1'b0; hl = 14'd0;
        b_vihl = 8'd0; b_tos = 8'd0; b_bth1 = 8'd0;
        {op_ok, op_pay, op_imm, op_aeth, op_len, op_imm_off} = 16'd0;

        if (len >= 13'd14) begin
            etype = {hb[7'd12], hb[7'd12 + 7'd1]};
            if (etype == 16'h8100) begin
                if (len >= 13'd18) begin
                    rec[`PR_HAS_VLAN] = 1'b1;
                    rec[`PR_L3] = 7'd18;
                    etype = {hb[7'd16], hb[7'd16 + 7'd1]};
                end else
                    etype = 16'd0;
            end
            b_vihl = hb[rec[`PR_L3]];
            b_tos = hb[rec[`PR_L3] + 7'd1];
            if (etype == 16'h0800 && {6'd0, rec[`PR_L3]} + 13'd20 <= len &&
                b_vihl[7:4] == 4'd4 && hb[rec[`PR_L3] + 7'd9] == 8'd17) begin
                frag = {hb[rec[`PR_L3] + 7'd6], hb[rec[`PR_L3] + 7'd6 + 7'd1]};
                rec[`PR_IHL] = b_vihl[3:0];
                hl = {8'd0, rec[`PR_IHL], 2'b00};
                rec[`PR_L4] = rec[`PR_L3] + ((hl < 14'd20) ? 7'd20 : hl[6:0]);
                if (frag[12:0] == 13'd0 && {6'd0, rec[`PR_L4]} + 13'd4 <= len &&
                    {hb[rec[`PR_L4] + 7'd2], hb[rec[`PR_L4] + 7'd2 + 7'd1]} == 16'd4791) begin
                    roce_evidence = 1'b1;
                    rec[`PR_IPVER] = 3'd4;
                    rec[`PR_ECN] = b_tos[1:0];
                    rec[`PR_SADDR] = {hb[rec[`PR_L3] + 7'd12], hb[rec[`PR_L3] + 7'd13], hb[rec[`PR_L3] + 7'd14], hb[rec[`PR_L3] + 7'd15]};
                    rec[`PR_DADDR] = {hb[rec[`PR_L3] + 7'd16], hb[rec[`PR_L3] + 7'd17], hb[rec[`PR_L3] + 7'd18], hb[rec[`PR_L3] + 7'd19]};
                    iplen_f = {hb[rec[`PR_L3] + 7'd2], hb[rec[`PR_L3] + 7'd2 + 7'd1]};
                    ipend = {7'd0, rec[`PR_L3]} + iplen_f[13:0];
                    if (iplen_f[15:14] != 2'd0)
                        ipend = 14'h3fff;
                    if (hl < 14'd20) begin
                        rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_IHL;
                    end else if (frag[13]) begin
                        rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_IP_FRAGMENT;
                    end
                end
            end else if (etype == 16'h86dd && {6'd0, rec[`PR_L3]} + 13'd40 <= len &&
                         b_vihl[7:4] == 4'd6 && hb[rec[`PR_L3] + 7'd6] == 8'd17) begin
                rec[`PR_L4] = rec[`PR_L3] + 7'd40;
                if ({6'd0, rec[`PR_L4]} + 13'd4 <= len && {hb[rec[`PR_L4] + 7'd2], hb[rec[`PR_L4] + 7'd2 + 7'd1]} == 16'd4791) begin
                    roce_evidence = 1'b1;
                    rec[`PR_IPVER] = 3'd6;
                    rec[`PR_ECN] = b_tos[5:4];   // the low bits of the traffic class
                    iplen_f = {hb[rec[`PR_L3] + 7'd4], hb[rec[`PR_L3] + 7'd4 + 7'd1]};
                    ipend = {7'd0, rec[`PR_L4]} + iplen_f[13:0];
                    if (iplen_f[15:14] != 2'd0)
                        ipend = 14'h3fff;
                end
            end
        end

        // parse_udp
        if (roce_evidence && rec[`PR_KIND] == 2'd0) begin
            if (len - {6'd0, rec[`PR_L4]} < 13'd8) begin
                rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_TRUNC_UDP;
            end else if (ipend > {1'b0, len} || ipend < {7'd0, rec[`PR_L4]} + 14'd8) begin
                // short_frame: a cut frame names the header it ends in
                if (ipend > {1'b0, len}) begin
                    do_bth = 1'b1;
                    bth_trunc_only = 1'b1;
                    bth_end = {1'b0, len};
                end else begin
                    rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_IP_LEN;
                end
            end else begin
                udplen = {hb[rec[`PR_L4] + 7'd4], hb[rec[`PR_L4] + 7'd4 + 7'd1]};
                if (udplen != {2'b00, ipend - {7'd0, rec[`PR_L4]}}) begin
                    rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_UDP_LEN;
                end else begin
                    do_bth = 1'b1;
                    bth_end = ipend;
                end
            end
        end

        // parse_bth
        if (do_bth) begin
            bth = rec[`PR_L4] + 7'd8;
            n = bth_end[12:0] - {6'd0, bth};
            rec[`PR_OPCODE] = hb[bth];
            b_bth1 = hb[bth + 7'd1];
            {op_ok, op_pay, op_imm, op_aeth, op_len, op_imm_off} = OPINFO(rec[`PR_OPCODE]);
            if (n < 13'd16) begin
                rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_TRUNC_BTH;
            end else if (!op_ok) begin
                rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_UNKNOWN_OPCODE;
            end else if (b_bth1[3:0] != 4'd0) begin
                rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_TVER;
            end else if (n < {7'd0, op_len} + 13'd4) begin
                rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_TRUNC_EXT;
            end else begin
                rec[`PR_PAD] = b_bth1[5:4];
                rec[`PR_QPN] = {hb[bth + 7'd5], hb[bth + 7'd6], hb[bth + 7'd7]};
                rec[`PR_PSN] = {hb[bth + 7'd9], hb[bth + 7'd10], hb[bth + 7'd11]};
                rec[`PR_HAS_IMM] = op_imm;
                rec[`PR_HAS_AETH] = op_aeth;
                if (op_imm)
                    rec[`PR_IMM] = {hb[bth + op_imm_off], hb[bth + op_imm_off + 7'd1],
                           hb[bth + op_imm_off + 7'd2], hb[bth + op_imm_off + 7'd3]};
                if (op_aeth)
                    rec[`PR_AETH_SYN] = hb[bth + 7'd12];
                paybytes = n - {7'd0, op_len} - 13'd4;
                rec[`PR_PAY_OFF] = bth + {1'b0, op_len};
                rec[`PR_PEND] = bth_end[12:0];
                if ({11'd0, rec[`PR_PAD]} > paybytes) begin
                    rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_PAD;
                end else if (!op_pay && paybytes != 13'd0) begin
                    rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_UNEXPECTED_PAYLOAD;
                end else begin
                    rec[`PR_KIND] = 2'd1;
                    rec[`PR_PAY_LEN] = paybytes - {11'd0, rec[`PR_PAD]};
                end
            end
            // a truncated frame is TRUNC_BTH/TRUNC_EXT, anything else BAD_IP_LEN
            if (bth_trunc_only && !(rec[`PR_KIND] == 2'd2 && (rec[`PR_BAD] == BAD_TRUNC_BTH || rec[`PR_BAD] == BAD_TRUNC_EXT))) begin
                rec[`PR_KIND] = 2'd2; rec[`PR_BAD] = BAD_IP_LEN;
            end
            if (rec[`PR_KIND] != 2'd1) begin
                rec[`PR_PAY_OFF] = 7'd0; rec[`PR_PAY_LEN] = 13'd0; rec[`PR_PEND] = 13'd0;
            end
        end
        if (rec[`PR_KIND] == 2'd0) begin
            rec[`PR_IPVER] = 3'd0; rec[`PR_L4] = 7'd0; rec[`PR_ECN] = 2'd0; rec[`PR_SADDR] = 32'd0; rec[`PR_DADDR] = 32'd0;
            if (!rec[`PR_HAS_VLAN]) rec[`PR_L3] = 7'd14;
        end
    end
endmodule

`default_nettype wire
