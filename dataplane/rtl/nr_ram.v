// SPDX-License-Identifier: BSD-3-Clause
//
// nr_ram: one memory of D words of W bits with one synchronous port: the
// read data is there a cycle after the address, a write stores wdata (and
// reads the old word).  The shape synthesis maps to block RAM.  An address
// past the end reads and writes word 0.
`default_nettype none

module nr_ram #(
    parameter integer W = 32,
    parameter integer D = 1024,
    parameter integer AW = 30
) (
    input  wire          clk,
    input  wire [AW-1:0] addr,
    input  wire          we,
    input  wire [W-1:0]  wdata,
    output reg  [W-1:0]  rdata
);
    reg [W-1:0] mem [0:D-1];
    wire [AW-1:0] a = addr < D ? addr : {AW{1'b0}};

    always @(posedge clk) begin
        if (we) mem[a] <= wdata;
        rdata <= mem[a];
    end
endmodule

`default_nettype wire
