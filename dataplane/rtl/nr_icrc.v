// SPDX-License-Identifier: BSD-3-Clause
//
// nr_icrc: the RoCEv2 invariant CRC (IBTA A17.3.3, proto/roce_icrc.h), one
// 32-bit frame word a cycle.  The CRC-32 covers 8 bytes of 0xFF (the masked
// LRH: folded into the start value NR_ICRC_INIT) and the frame bytes from the
// IP header (l3) to the ICRC (cend = end - 4), with the fields that may
// change in flight read as all ones: IPv4 TOS, TTL and header checksum (IPv6
// traffic class, flow label and hop limit), the UDP checksum, BTH byte 4.
// The ICRC is the complement of the state, stored little-endian.
//
// Used twice: the receive check (nr_core reads the frame buffer through it)
// and result regeneration (nr_emit streams the rebuilt frame through it).
// Frame word w holds bytes 4w..4w+3, byte 4w in bits 7:0; woff = 4w.
`default_nettype none

module nr_icrc (
    input  wire [31:0] crc_in,
    input  wire [31:0] word,
    input  wire [12:0] woff,
    input  wire [6:0]  l3,
    input  wire [6:0]  l4,
    input  wire        ipv6,
    input  wire [12:0] cend,
    output reg  [31:0] crc_out
);
`include "nr_crc32.vh"
    reg [7:0]  b;
    reg [12:0] o;
    integer k;
    always @* begin
        crc_out = crc_in;
        for (k = 0; k < 4; k = k + 1) begin
            o = woff + k[12:0];
            b = word[8*k +: 8];
            if (!ipv6) begin
                if (o == {6'd0, l3} + 13'd1 || o == {6'd0, l3} + 13'd8 ||
                    o == {6'd0, l3} + 13'd10 || o == {6'd0, l3} + 13'd11)
                    b = 8'hff;
            end else begin
                if (o == {6'd0, l3})
                    b = b | 8'h0f;
                if (o == {6'd0, l3} + 13'd1 || o == {6'd0, l3} + 13'd2 ||
                    o == {6'd0, l3} + 13'd3 || o == {6'd0, l3} + 13'd7)
                    b = 8'hff;
            end
            if (o == {6'd0, l4} + 13'd6 || o == {6'd0, l4} + 13'd7 || o == {6'd0, l4} + 13'd12)
                b = 8'hff;
            if (o >= {6'd0, l3} && o < cend)
                crc_out = nr_crc32_byte(crc_out, b);
        end
    end
endmodule

`default_nettype wire
