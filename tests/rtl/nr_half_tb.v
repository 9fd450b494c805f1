// SPDX-License-Identifier: BSD-3-Clause
//
// The 16-bit conversions of dataplane/rtl/nr_half.v side by side, one top
// for Verilator (tests/rtl/test_half.cpp holds them to the engine's rule).
`default_nettype none

module nr_half_tb (
    input  wire [15:0] h,
    input  wire [31:0] f,
    input  wire        fp16,
    output wire [31:0] wf,        // h widened
    output wire [15:0] rh         // f rounded
);
    nr_half_widen u_widen (.h(h), .fp16(fp16), .f(wf));
    nr_half_round u_round (.f(f), .fp16(fp16), .h(rh));
endmodule

`default_nettype wire
