// SPDX-License-Identifier: BSD-3-Clause
//
// nr_parse: the bounded RoCEv2 parser of proto/roce_parse.c in logic, on the
// first 128 bytes of a frame (every RoCEv2 header ends by byte 126: VLAN,
// a 60-byte IPv4 header, UDP, BTH and the longest extension headers) and its
// length.  Same classification, same evidence rule, same malformed reasons
// (enum nr_malformed), same offsets; combinational.
`default_nettype none

module nr_parse (
    input  wire [1023:0] hdr,      // frame bytes 0..127, byte k in bits 8k+7:8k
    input  wire [12:0]   len,      // frame length in bytes
    output reg  [1:0]    kind,     // 0 OTHER, 1 ROCE, 2 MALFORMED
    output reg  [3:0]    bad,      // enum nr_malformed
    output reg  [2:0]    ipver,    // 4, 6 or 0
    output reg           has_vlan,
    output reg  [6:0]    l3,
    output reg  [6:0]    l4,
    output reg  [6:0]    pay_off,
    output reg  [12:0]   pay_len,
    output reg  [12:0]   pend,     // end of the IP packet (ICRC end)
    output reg  [1:0]    pad,
    output reg  [1:0]    ecn,
    output reg  [3:0]    ihl,
    output reg  [31:0]   saddr,    // IPv4, as a number (10.0.0.1 = 0x0a000001)
    output reg  [31:0]   daddr,
    output reg  [7:0]    opcode,
    output reg  [23:0]   qpn,
    output reg  [23:0]   psn,
    output reg  [31:0]   imm,
    output reg           has_imm,
    output reg           has_aeth,
    output reg  [7:0]    aeth_syn
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
        kind = 2'd0; bad = BAD_NONE; ipver = 3'd0; has_vlan = 1'b0;
        l3 = 7'd14; l4 = 7'd0; pay_off = 7'd0; pay_len = 13'd0; pend = 13'd0;
        pad = 2'd0; ecn = 2'd0; ihl = 4'd0; saddr = 32'd0; daddr = 32'd0;
        opcode = 8'd0; qpn = 24'd0; psn = 24'd0; imm = 32'd0; has_imm = 1'b0;
        has_aeth = 1'b0; aeth_syn = 8'd0;
        etype = 16'd0; frag = 16'd0; iplen_f = 16'd0; udplen = 16'd0; ipend = 14'd0;
        bth_end = 14'd0; bth = 7'd0; n = 13'd0; paybytes = 13'd0; roce_evidence = 1'b0;
        do_bth = 1'b0; bth_trunc_only = 1'b0; hl = 14'd0;
        b_vihl = 8'd0; b_tos = 8'd0; b_bth1 = 8'd0;
        {op_ok, op_pay, op_imm, op_aeth, op_len, op_imm_off} = 16'd0;

        if (len >= 13'd14) begin
            etype = {hb[7'd12], hb[7'd12 + 7'd1]};
            if (etype == 16'h8100) begin
                if (len >= 13'd18) begin
                    has_vlan = 1'b1;
                    l3 = 7'd18;
                    etype = {hb[7'd16], hb[7'd16 + 7'd1]};
                end else
                    etype = 16'd0;
            end
            b_vihl = hb[l3];
            b_tos = hb[l3 + 7'd1];
            if (etype == 16'h0800 && {6'd0, l3} + 13'd20 <= len &&
                b_vihl[7:4] == 4'd4 && hb[l3 + 7'd9] == 8'd17) begin
                frag = {hb[l3 + 7'd6], hb[l3 + 7'd6 + 7'd1]};
                ihl = b_vihl[3:0];
                hl = {8'd0, ihl, 2'b00};
                l4 = l3 + ((hl < 14'd20) ? 7'd20 : hl[6:0]);
                if (frag[12:0] == 13'd0 && {6'd0, l4} + 13'd4 <= len &&
                    {hb[l4 + 7'd2], hb[l4 + 7'd2 + 7'd1]} == 16'd4791) begin
                    roce_evidence = 1'b1;
                    ipver = 3'd4;
                    ecn = b_tos[1:0];
                    saddr = {hb[l3 + 7'd12], hb[l3 + 7'd13], hb[l3 + 7'd14], hb[l3 + 7'd15]};
                    daddr = {hb[l3 + 7'd16], hb[l3 + 7'd17], hb[l3 + 7'd18], hb[l3 + 7'd19]};
                    iplen_f = {hb[l3 + 7'd2], hb[l3 + 7'd2 + 7'd1]};
                    ipend = {7'd0, l3} + iplen_f[13:0];
                    if (iplen_f[15:14] != 2'd0)
                        ipend = 14'h3fff;
                    if (hl < 14'd20) begin
                        kind = 2'd2; bad = BAD_IHL;
                    end else if (frag[13]) begin
                        kind = 2'd2; bad = BAD_IP_FRAGMENT;
                    end
                end
            end else if (etype == 16'h86dd && {6'd0, l3} + 13'd40 <= len &&
                         b_vihl[7:4] == 4'd6 && hb[l3 + 7'd6] == 8'd17) begin
                l4 = l3 + 7'd40;
                if ({6'd0, l4} + 13'd4 <= len && {hb[l4 + 7'd2], hb[l4 + 7'd2 + 7'd1]} == 16'd4791) begin
                    roce_evidence = 1'b1;
                    ipver = 3'd6;
                    ecn = b_tos[5:4];   // the low bits of the traffic class
                    iplen_f = {hb[l3 + 7'd4], hb[l3 + 7'd4 + 7'd1]};
                    ipend = {7'd0, l4} + iplen_f[13:0];
                    if (iplen_f[15:14] != 2'd0)
                        ipend = 14'h3fff;
                end
            end
        end

        // parse_udp
        if (roce_evidence && kind == 2'd0) begin
            if (len - {6'd0, l4} < 13'd8) begin
                kind = 2'd2; bad = BAD_TRUNC_UDP;
            end else if (ipend > {1'b0, len} || ipend < {7'd0, l4} + 14'd8) begin
                // short_frame: a cut frame names the header it ends in
                if (ipend > {1'b0, len}) begin
                    do_bth = 1'b1;
                    bth_trunc_only = 1'b1;
                    bth_end = {1'b0, len};
                end else begin
                    kind = 2'd2; bad = BAD_IP_LEN;
                end
            end else begin
                udplen = {hb[l4 + 7'd4], hb[l4 + 7'd4 + 7'd1]};
                if (udplen != {2'b00, ipend - {7'd0, l4}}) begin
                    kind = 2'd2; bad = BAD_UDP_LEN;
                end else begin
                    do_bth = 1'b1;
                    bth_end = ipend;
                end
            end
        end

        // parse_bth
        if (do_bth) begin
            bth = l4 + 7'd8;
            n = bth_end[12:0] - {6'd0, bth};
            opcode = hb[bth];
            b_bth1 = hb[bth + 7'd1];
            {op_ok, op_pay, op_imm, op_aeth, op_len, op_imm_off} = OPINFO(opcode);
            if (n < 13'd16) begin
                kind = 2'd2; bad = BAD_TRUNC_BTH;
            end else if (!op_ok) begin
                kind = 2'd2; bad = BAD_UNKNOWN_OPCODE;
            end else if (b_bth1[3:0] != 4'd0) begin
                kind = 2'd2; bad = BAD_TVER;
            end else if (n < {7'd0, op_len} + 13'd4) begin
                kind = 2'd2; bad = BAD_TRUNC_EXT;
            end else begin
                pad = b_bth1[5:4];
                qpn = {hb[bth + 7'd5], hb[bth + 7'd6], hb[bth + 7'd7]};
                psn = {hb[bth + 7'd9], hb[bth + 7'd10], hb[bth + 7'd11]};
                has_imm = op_imm;
                has_aeth = op_aeth;
                if (op_imm)
                    imm = {hb[bth + op_imm_off], hb[bth + op_imm_off + 7'd1],
                           hb[bth + op_imm_off + 7'd2], hb[bth + op_imm_off + 7'd3]};
                if (op_aeth)
                    aeth_syn = hb[bth + 7'd12];
                paybytes = n - {7'd0, op_len} - 13'd4;
                pay_off = bth + {1'b0, op_len};
                pend = bth_end[12:0];
                if ({11'd0, pad} > paybytes) begin
                    kind = 2'd2; bad = BAD_PAD;
                end else if (!op_pay && paybytes != 13'd0) begin
                    kind = 2'd2; bad = BAD_UNEXPECTED_PAYLOAD;
                end else begin
                    kind = 2'd1;
                    pay_len = paybytes - {11'd0, pad};
                end
            end
            // a truncated frame is TRUNC_BTH/TRUNC_EXT, anything else BAD_IP_LEN
            if (bth_trunc_only && !(kind == 2'd2 && (bad == BAD_TRUNC_BTH || bad == BAD_TRUNC_EXT))) begin
                kind = 2'd2; bad = BAD_IP_LEN;
            end
            if (kind != 2'd1) begin
                pay_off = 7'd0; pay_len = 13'd0; pend = 13'd0;
            end
        end
        if (kind == 2'd0) begin
            ipver = 3'd0; l4 = 7'd0; ecn = 2'd0; saddr = 32'd0; daddr = 32'd0;
            if (!has_vlan) l3 = 7'd14;
        end
    end
endmodule

`default_nettype wire
