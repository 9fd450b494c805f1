// SPDX-License-Identifier: BSD-3-Clause
//
// nr_store: the slot store, block RAMs with one synchronous port each.
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
    output reg  [31:0]   pay_rdata,
    input  wire [29:0]   hdr_addr,             // word address (entry x 32 + word)
    input  wire          hdr_we,
    input  wire [31:0]   hdr_wdata,
    output reg  [31:0]   hdr_rdata,
    input  wire [23:0]   desc_addr,
    input  wire          desc_we,
    input  wire [31:0]   desc_wdata,
    output reg  [31:0]   desc_rdata,
    input  wire [23:0]   meta_addr,
    input  wire          meta_we,
    input  wire [MW-1:0] meta_wdata,
    output reg  [MW-1:0] meta_rdata
);
    localparam integer PW = POOL_BYTES / 4;        // payload words
    localparam integer NE = POOL_BYTES / 256;      // header, desc and meta entries
    reg [31:0]   pay [0:PW-1];
    reg [31:0]   hdr [0:NE*32-1];
    reg [31:0]   desc [0:NE-1];
    reg [MW-1:0] meta [0:NE-1];

    wire [29:0] pa = pay_addr < PW ? pay_addr : 30'd0;
    wire [29:0] ha = hdr_addr < NE * 32 ? hdr_addr : 30'd0;
    wire [23:0] da = desc_addr < NE ? desc_addr : 24'd0;
    wire [23:0] ma = meta_addr < NE ? meta_addr : 24'd0;

    always @(posedge clk) begin
        if (pay_we) pay[pa] <= pay_wdata;
        pay_rdata <= pay[pa];
    end
    always @(posedge clk) begin
        if (hdr_we) hdr[ha] <= hdr_wdata;
        hdr_rdata <= hdr[ha];
    end
    always @(posedge clk) begin
        if (desc_we) desc[da] <= desc_wdata;
        desc_rdata <= desc[da];
    end
    always @(posedge clk) begin
        if (meta_we) meta[ma] <= meta_wdata;
        meta_rdata <= meta[ma];
    end
endmodule

`default_nettype wire
