// SPDX-License-Identifier: BSD-3-Clause
//
// nr_lookup: connection lookup, the engine's (daddr, QPN) table
// (dataplane/engine/agg_input.c) as a content-addressed match over the connection
// entries the loaded jobs own: data side (DST_IP, DST_QPN) and ACK side
// (SRC_IP, SRC_QPN).  JOB_LOAD refuses a QP that a loaded job uses in either
// role, so at most one entry matches; the lowest wins all the same.
`default_nettype none

module nr_lookup #(
    parameter integer NC = 32
) (
    input  wire [31:0]      daddr,
    input  wire [23:0]      qpn,
    input  wire [NC-1:0]    conn_live,
    input  wire [NC*6-1:0]  conn_job,
    input  wire [NC*9-1:0]  conn_rank,
    input  wire [NC*32-1:0] conn_sip,
    input  wire [NC*32-1:0] conn_dip,
    input  wire [NC*24-1:0] conn_sqpn,
    input  wire [NC*24-1:0] conn_dqpn,
    input  wire [NC*24-1:0] conn_ipsn,
    output reg              hit,
    output reg              ack_side,
    output reg  [5:0]       job,
    output reg  [8:0]       rank,
    output reg  [31:0]      sip,       // the connection's sender
    output reg  [31:0]      dip,       // and receiver
    output reg  [23:0]      ipsn
);
    integer e;
    reg dm, am;
    always @* begin
        hit = 1'b0; ack_side = 1'b0; job = 6'd0; rank = 9'd0;
        sip = 32'd0; dip = 32'd0; ipsn = 24'd0;
        for (e = NC - 1; e >= 0; e = e - 1) begin
            dm = conn_live[e] && conn_dip[e*32 +: 32] == daddr && conn_dqpn[e*24 +: 24] == qpn;
            am = conn_live[e] && conn_sip[e*32 +: 32] == daddr && conn_sqpn[e*24 +: 24] == qpn;
            if (dm || am) begin
                hit = 1'b1;
                ack_side = !dm;
                job = conn_job[e*6 +: 6];
                rank = conn_rank[e*9 +: 9];
                sip = conn_sip[e*32 +: 32];
                dip = conn_dip[e*32 +: 32];
                ipsn = conn_ipsn[e*24 +: 24];
            end
        end
    end
endmodule

`default_nettype wire
