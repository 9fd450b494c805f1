// SPDX-License-Identifier: BSD-3-Clause
//
// nr_fp32_add: IEEE 754 binary32 addition, combinational, bit-identical to
// the software engine's element add acc + src (dataplane/engine/agg_sum.h), which is
// x86's addss with the accumulator as first operand under the default MXCSR:
//   - round to nearest, ties to even; subnormal inputs and outputs kept (no
//     flush to zero, no denormals-are-zero);
//   - a NaN a gives a quieted (payload kept, bit 22 set); else a NaN b gives
//     b quieted; Inf - Inf gives the default NaN 0xFFC00000;
//   - an exact zero sum of operands of opposite signs is +0; -0 + -0 = -0;
//   - overflow gives Inf of the sum's sign.
// a is the running sum (earlier ranks), b the next contribution.
// Method: the larger magnitude is L, the other is aligned to it with guard,
// round and sticky bits (27-bit significands), added or subtracted,
// normalized (never below the smallest exponent: subnormal results stay
// subnormal) and rounded once.
`default_nettype none

module nr_fp32_add (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output reg  [31:0] y
);
    wire       sa = a[31], sb = b[31];
    wire [7:0] ea = a[30:23], eb = b[30:23];
    wire [22:0] fa = a[22:0], fb = b[22:0];
    wire a_nan = (ea == 8'hff) && (fa != 23'd0);
    wire b_nan = (eb == 8'hff) && (fb != 23'd0);
    wire a_inf = (ea == 8'hff) && (fa == 23'd0);
    wire b_inf = (eb == 8'hff) && (fb == 23'd0);

    // significands with the hidden bit, effective exponents (subnormals: 1)
    wire [23:0] xa = {ea != 8'd0, fa};
    wire [23:0] xb = {eb != 8'd0, fb};
    wire [7:0] Ea = (ea == 8'd0) ? 8'd1 : ea;
    wire [7:0] Eb = (eb == 8'd0) ? 8'd1 : eb;
    wire b_bigger = (Eb > Ea) || ((Eb == Ea) && (xb > xa));

    wire        sL = b_bigger ? sb : sa;
    wire        sS = b_bigger ? sa : sb;
    wire [7:0]  EL = b_bigger ? Eb : Ea;
    wire [7:0]  ES = b_bigger ? Ea : Eb;
    wire [23:0] xL = b_bigger ? xb : xa;
    wire [23:0] xS = b_bigger ? xa : xb;
    wire [7:0]  d  = EL - ES;
    wire        sub = sL ^ sS;

    // the smaller significand aligned: 24 bits + guard + round + sticky
    reg [26:0] al;
    reg [50:0] sh;
    always @* begin
        sh = {xS, 27'd0} >> d;
        if (d > 8'd26) begin
            al = {26'd0, xS != 24'd0};
        end else begin
            al = {sh[50:25], sh[24:0] != 25'd0};
        end
    end

    wire [26:0] L = {xL, 3'b000};
    wire [27:0] sum  = {1'b0, L} + {1'b0, al};
    wire [26:0] diff = L - al;
    wire [7:0]  lim = EL - 8'd1;     // left shifts allowed before exponent 1

    // leading zeros of diff (27 bits)
    function [4:0] lzc27(input [26:0] v);
        integer i;
        reg found;
        begin
            lzc27 = 5'd27;
            found = 1'b0;
            for (i = 26; i >= 0; i = i - 1)
                if (!found && v[i]) begin
                    lzc27 = 5'd26 - i[4:0];
                    found = 1'b1;
                end
        end
    endfunction

    reg [26:0] n;        // normalized significand + G, R, S
    reg [9:0]  E;        // exponent of n[26] (may reach 255 + 1)
    reg [4:0]  lz, shl;
    reg [24:0] mr;       // rounded significand (24 bits + carry)
    reg        up, zero;
    reg [9:0]  Er;
    always @* begin
        zero = 1'b0;
        lz = 5'd0;
        shl = 5'd0;
        if (!sub) begin
            if (sum[27]) begin
                n = {sum[27:2], sum[1] | sum[0]};
                E = {2'b00, EL} + 10'd1;
            end else begin
                n = sum[26:0];
                E = {2'b00, EL};
            end
        end else begin
            lz = lzc27(diff);
            zero = (diff == 27'd0);
            // never below exponent 1: the result then stays subnormal
            shl = ({3'b000, lz} > lim) ? lim[4:0] : lz;
            n = diff << shl;
            E = {2'b00, EL} - {5'b0, shl};
        end
        // round to nearest even on G, R, S
        up = n[2] & (n[1] | n[0] | n[3]);
        mr = {1'b0, n[26:3]} + {24'd0, up};
        Er = E;
        if (mr[24]) begin
            mr = {1'b0, mr[24:1]};
            Er = E + 10'd1;
        end
        if (a_nan)
            y = a | 32'h0040_0000;
        else if (b_nan)
            y = b | 32'h0040_0000;
        else if (a_inf && b_inf && (sa != sb))
            y = 32'hffc0_0000;
        else if (a_inf)
            y = a;
        else if (b_inf)
            y = b;
        else if (sub && zero)
            y = 32'h0000_0000;
        else if (Er >= 10'd255)
            y = {sL, 8'hff, 23'd0};
        else if (!mr[23])
            y = {sL, 8'd0, mr[22:0]};          // subnormal (or zero)
        else
            y = {sL, Er[7:0], mr[22:0]};
    end
endmodule

`default_nettype wire
