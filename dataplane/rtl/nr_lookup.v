// SPDX-License-Identifier: BSD-3-Clause
//
// nr_lookup: connection lookup, the engine's (daddr, QPN) table
// (dataplane/engine/agg_input.c) as a content-addressed match over the connection
// entries the loaded jobs own: data side (DST_IP, DST_QPN) and ACK side
// (SRC_IP, SRC_QPN).  JOB_LOAD refuses a QP that a loaded job uses in either
// role, so at most one entry matches; the lowest wins all the same.
`default_nettype none
`include "nr_defs.vh"

module nr_lookup #(
    parameter integer NC = 32
) (
    input  wire [31:0]        daddr,
    input  wire [23:0]        qpn,
    input  wire [NC*`CT_W-1:0] conns,     // the entries (nr_defs.vh)
    output reg                hit,
    output reg                ack_side,
    output reg  [`CT_W-1:0]   ent        // the matching entry
);
    integer e;
    reg [`CT_W-1:0] c;
    reg dm, am;
    always @* begin
        hit = 1'b0; ack_side = 1'b0; ent = {`CT_W{1'b0}};
        for (e = NC - 1; e >= 0; e = e - 1) begin
            c = conns[e*`CT_W +: `CT_W];
            dm = c[`CT_LIVE] && c[`CT_DIP] == daddr && c[`CT_DQPN] == qpn;
            am = c[`CT_LIVE] && c[`CT_SIP] == daddr && c[`CT_SQPN] == qpn;
            if (dm || am) begin
                hit = 1'b1;
                ack_side = !dm;
                ent = c;
            end
        end
    end
endmodule

`default_nettype wire
