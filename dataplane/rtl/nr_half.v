// SPDX-License-Identifier: BSD-3-Clause
//
// The 16-bit element types (jobs of DTYPE bf16 or fp16, control/fpga/FPGA.md):
// conversions to and from FP32, combinational, bit-identical to the software
// engine's scalar rule (dataplane/engine/agg_sum.h, agg_half_scalar.c):
//   nr_half_widen  h -> FP32 exactly: bf16 by a shift (its bits are FP32's top
//                  16; a NaN keeps its payload, quiet or not); fp16 with
//                  subnormals normalized, a NaN quieted with its payload kept
//                  (nr_bf16_widen, nr_fp16_widen);
//   nr_half_round  FP32 -> h once, round to nearest even, subnormals kept:
//                  bf16 by integer rounding of the FP32 bits
//                  ((u + 0x7FFF + u[16]) >> 16; a NaN keeps its top 16 bits,
//                  quieted; a finite sum past bf16's range becomes Inf); fp16
//                  as IEEE 754 (65520 and up overflow to Inf, subnormal
//                  results rounded at their own ulp, a NaN keeps the top 10
//                  bits of its payload, quieted) (nr_bf16_round, nr_fp16_round).
// The sum between them is nr_fp32_add.v's, in FP32: 16-bit values are never
// added in 16 bits.
`default_nettype none

module nr_half_widen (
    input  wire [15:0] h,
    input  wire        fp16,          // 0 bf16, 1 fp16
    output reg  [31:0] f
);
    wire       s = h[15];
    wire [4:0] e = h[14:10];
    wire [9:0] m = h[9:0];

    // leading zeros of a nonzero 10-bit fp16 subnormal significand (0..9)
    function [3:0] lzc10(input [9:0] v);
        integer i;
        reg found;
        begin
            lzc10 = 4'd9;
            found = 1'b0;
            for (i = 9; i >= 0; i = i - 1)
                if (!found && v[i]) begin
                    lzc10 = 4'd9 - i[3:0];
                    found = 1'b1;
                end
        end
    endfunction

    reg [3:0]  lz;
    reg [10:0] mn;        // the subnormal significand, its leading one at bit 10
    always @* begin
        lz = lzc10(m);
        mn = {1'b0, m} << (lz + 4'd1);
        if (!fp16)
            f = {h, 16'd0};
        else if (e == 5'h1f)             // Inf, or NaN quieted with its payload
            f = {s, 8'hff, m != 10'd0, m[8:0], 13'd0};
        else if (e != 5'd0)              // normal: rebias 15 -> 127
            f = {s, {3'd0, e} + 8'd112, m, 13'd0};
        else if (m == 10'd0)             // zero
            f = {s, 31'd0};
        else                             // subnormal m x 2^-24, normalized
            f = {s, 8'd112 - {4'd0, lz}, mn[9:0], 13'd0};
    end
endmodule

module nr_half_round (
    input  wire [31:0] f,
    input  wire        fp16,          // 0 bf16, 1 fp16
    output reg  [15:0] h
);
    wire        s = f[31];
    wire [30:0] ax = f[30:0];
    wire        nan = ax > 31'h7f80_0000;

    // bf16: round the FP32 bits at bit 16, ties to even
    wire [31:0] bsum = f + 32'h0000_7fff + {31'd0, f[16]};
    // fp16 normal: rebias (127 -> 15), round at bit 13, ties to even
    wire [30:0] r = ax - 31'h3800_0000;
    wire [30:0] rsum = r + 31'h0000_0fff + {30'd0, r[13]};
    // fp16 subnormal result: the significand shifted right by 126 - exponent
    // (14..24), rounded on the bits shifted out
    wire [7:0]  ex = ax[30:23];
    wire [7:0]  sh = 8'd126 - ex;     // 14..24 where it is used
    wire [23:0] sig = {1'b1, ax[22:0]};
    reg  [47:0] w;                    // sig << 24 >> sh: q in 47:24, the rest below
    reg  [10:0] q;
    reg         rb, st;
    always @* begin
        w = {sig, 24'd0} >> sh[4:0];
        q = w[34:24];
        rb = w[23];
        st = w[22:0] != 23'd0;
        if (!fp16) begin
            if (nan)
                h = f[31:16] | 16'h0040;
            else
                h = bsum[31:16];
        end else if (nan)                       // top 10 payload bits, quieted
            h = {s, 6'b111111, ax[21:13]};
        else if (ax >= 31'h477f_f000)           // 65520 and up, Inf: Inf
            h = {s, 15'h7c00};
        else if (ax >= 31'h3880_0000)           // normal
            h = {s, rsum[27:13]};
        else if (ax <= 31'h3300_0000)           // at most 2^-25: zero (ties to even)
            h = {s, 15'd0};
        else                                    // subnormal
            h = {s, 4'd0, q + {10'd0, rb && (st || q[0])}};
    end
endmodule

`default_nettype wire
