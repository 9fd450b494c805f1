// SPDX-License-Identifier: BSD-3-Clause
//
// nr_store: the slot store, block RAMs with one synchronous port each (nr_ram).
//   pay   payload store, POOL_BYTES: contribution i of slot s of a job at
//         byte base + (s x N + i) x MTU, word-aligned payload (frame bytes
//         pay_off.. realigned); in ordered mode the sum replaces rank 0's
//         contribution, in streaming mode rank 0's buffer accumulates
//   hdr   frame headers of held packets, 128 bytes an entry at index
//         base / 256 + s x N + i: frame bytes 0..119 (up to the payload)
//         and, in words 30..31, the 8 frame bytes around the pad
//   desc  one word an entry: where the headers are (nr_core packs it)
//   meta  slot state, one entry a slot at index base / 256 + s
// Every job's region is disjoint (nr_regs allocates it), and MTU >= 256 keeps
// the header and meta indices of a job inside base / 256 .. (base + size) / 256.
`default_nettype none

module nr_store #(
    parameter integer POOL_BYTES = 1048576,
    parameter integer MW = 132                 // meta entry bits
) (
    input  wire          clk,
    input  wire [29:0]   pay_addr,             // word address
    input  wire          pay_we,
    input  wire [31:0]   pay_wdata,
    output wire [31:0]   pay_rdata,
    input  wire [29:0]   hdr_addr,             // word address (entry x 32 + word)
    input  wire          hdr_we,
    input  wire [31:0]   hdr_wdata,
    output wire [31:0]   hdr_rdata,
    input  wire [23:0]   desc_addr,
    input  wire          desc_we,
    input  wire [31:0]   desc_wdata,
    output wire [31:0]   desc_rdata,
    input  wire [23:0]   meta_addr,
    input  wire          meta_we,
    input  wire [MW-1:0] meta_wdata,
    output wire [MW-1:0] meta_rdata
);
    localparam integer PW = POOL_BYTES / 4;        // payload words
    localparam integer NE = POOL_BYTES / 256;      // header, desc and meta entries
    nr_ram #(.W(32), .D(PW), .AW(30)) u_pay (.clk(clk), .addr(pay_addr), .we(pay_we),
        .wdata(pay_wdata), .rdata(pay_rdata));
    nr_ram #(.W(32), .D(NE * 32), .AW(30)) u_hdr (.clk(clk), .addr(hdr_addr), .we(hdr_we),
        .wdata(hdr_wdata), .rdata(hdr_rdata));
    nr_ram #(.W(32), .D(NE), .AW(24)) u_desc (.clk(clk), .addr(desc_addr), .we(desc_we),
        .wdata(desc_wdata), .rdata(desc_rdata));
    nr_ram #(.W(MW), .D(NE), .AW(24)) u_meta (.clk(clk), .addr(meta_addr), .we(meta_we),
        .wdata(meta_wdata), .rdata(meta_rdata));
endmodule

`default_nettype wire
