// SPDX-License-Identifier: BSD-3-Clause
//
// nr_agg_top: the netreduce aggregator (control/fpga/FPGA.md).  One clock; rst is
// synchronous, active high.  Ports:
//   s_axil_*   the register file (nr_regs), 128 KiB of AXI4-Lite
//   rx_*       frames in: AXI4-Stream, 32-bit beats, byte 0 in bits 7:0,
//              tuser = ingress port (first beat)
//   tx_*       frames out, same format, tuser = {kind, port}: kind 0 a frame
//              forwarded unchanged, 1 a result, 2 a resent result
//   tick_ms    one pulse a millisecond (progress timeouts)
// (port groups and the buses between blocks: nr_defs.vh)
// Blocks, one a role: nr_regs (registers, commands, counters), nr_rx
// (reception), nr_core (slot control, with nr_parse, nr_icrc, nr_lookup,
// nr_store (the slot store, nr_ram) and nr_fp32_add (the sum) inside), nr_emit
// (result emission).
`default_nettype none
`include "nr_defs.vh"

module nr_agg_top #(
    parameter integer NJ = 4,
    parameter integer NC = 32,
    parameter integer NR = 8,
    parameter integer MAX_MTU = 4096,
    parameter integer POOL_BYTES = 1048576,
    parameter integer FRAME_MAX = 4352,
    parameter [31:0]  CAP_FLAGS = 32'd15     // ordered | streaming | bf16 | fp16 (FPGA.md)
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        tick_ms,
    `NR_AXIL_PORTS(wire),
    `NR_RX_PORTS,
    `NR_TX_PORTS(wire),
    output wire        idle          // no frame held, none being processed or sent, no
                                     // command being serviced
);
    wire soft_rst, enabled;
    wire rst_dp = rst || soft_rst;

    wire [NJ*`JT_W-1:0] jobs;
    wire [NC*`CT_W-1:0] conns;
    wire [NJ*24-1:0] next_emit, next_release;
    wire        fail_v, ea_v, db_v, dc_v, ld_req, ld_unload, ld_ack, cmd_busy;
    wire [5:0]  fail_job, ld_job;
    wire [2:0]  fail_code;
    wire [6:0]  ea_job;
    wire [4:0]  ea_idx;
    wire [15:0] ea_amt, db_amt;
    wire [3:0]  db_idx, dc_idx;

    nr_regs #(.NJ(NJ), .NC(NC), .NR(NR), .MAX_MTU(MAX_MTU), .POOL_BYTES(POOL_BYTES),
              .CAP_FLAGS(CAP_FLAGS)) u_regs (
        .clk(clk), .rst(rst),
        .s_axil_awaddr(s_axil_awaddr), .s_axil_awvalid(s_axil_awvalid),
        .s_axil_awready(s_axil_awready), .s_axil_wdata(s_axil_wdata),
        .s_axil_wstrb(s_axil_wstrb), .s_axil_wvalid(s_axil_wvalid),
        .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp),
        .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(s_axil_bready),
        .s_axil_araddr(s_axil_araddr), .s_axil_arvalid(s_axil_arvalid),
        .s_axil_arready(s_axil_arready), .s_axil_rdata(s_axil_rdata),
        .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
        .s_axil_rready(s_axil_rready),
        .enabled(enabled), .soft_rst(soft_rst), .jobs_o(jobs), .conns_o(conns),
        .core_next_emit(next_emit), .core_next_release(next_release),
        .fail_v(fail_v), .fail_job(fail_job), .fail_code(fail_code),
        .ea_v(ea_v), .ea_job(ea_job), .ea_idx(ea_idx), .ea_amt(ea_amt),
        .db_v(db_v), .db_idx(db_idx), .db_amt(db_amt), .dc_v(dc_v), .dc_idx(dc_idx),
        .cmd_busy(cmd_busy),
        .ld_req(ld_req), .ld_job(ld_job), .ld_unload(ld_unload), .ld_ack(ld_ack));

    // frames are taken only while the datapath is enabled
    wire        f_valid, f_oversize, f_done;
    wire [12:0] f_len;
    wire [7:0]  f_port;
    wire [1023:0] f_hdr;
    wire [10:0] rx_addr;
    wire [31:0] rx_data;
    wire        rx_ready_i;
    nr_rx #(.FRAME_MAX(FRAME_MAX)) u_rx (
        .clk(clk), .rst(rst_dp), .rx_tdata(rx_tdata), .rx_tkeep(rx_tkeep), .rx_tlast(rx_tlast),
        .rx_tuser(rx_tuser), .rx_tvalid(rx_tvalid && enabled), .rx_tready(rx_ready_i),
        .f_valid(f_valid), .f_len(f_len), .f_port(f_port), .f_oversize(f_oversize),
        .f_hdr(f_hdr), .f_done(f_done), .rd_addr(rx_addr), .rd_data(rx_data));
    assign rx_tready = rx_ready_i && enabled;

    wire [29:0] e_hdr_addr, e_pay_addr;
    wire [31:0] pay_rdata, hdr_rdata;
    wire        e_start, e_busy;
    wire [`EC_W-1:0] e_cmd;
    wire [10:0] e_rx_addr;
    nr_core #(.NJ(NJ), .NC(NC), .NR(NR), .POOL_BYTES(POOL_BYTES)) u_core (
        .clk(clk), .rst(rst_dp), .tick_ms(tick_ms),
        .f_valid(f_valid), .f_len(f_len), .f_port(f_port), .f_oversize(f_oversize),
        .f_hdr(f_hdr), .f_done(f_done), .rx_addr(rx_addr), .rx_data(rx_data),
        .pay_rdata(pay_rdata), .hdr_rdata(hdr_rdata),
        .e_start(e_start), .e_cmd(e_cmd), .e_busy(e_busy), .e_rx_addr(e_rx_addr),
        .e_hdr_addr(e_hdr_addr), .e_pay_addr(e_pay_addr),
        .jobs(jobs), .conns(conns), .next_emit_o(next_emit), .next_release_o(next_release),
        .fail_v(fail_v), .fail_job(fail_job), .fail_code(fail_code),
        .ea_v(ea_v), .ea_job(ea_job), .ea_idx(ea_idx), .ea_amt(ea_amt),
        .db_v(db_v), .db_idx(db_idx), .db_amt(db_amt),
        .ld_req(ld_req), .ld_job(ld_job), .ld_unload(ld_unload), .ld_ack(ld_ack));

    nr_emit #(.FRAME_MAX(FRAME_MAX)) u_emit (
        .clk(clk), .rst(rst_dp), .start(e_start), .e_cmd(e_cmd), .busy(e_busy),
        .rx_addr(e_rx_addr), .rx_data(rx_data), .hdr_addr(e_hdr_addr), .hdr_data(hdr_rdata),
        .pay_addr(e_pay_addr), .pay_data(pay_rdata), .dc_v(dc_v), .dc_idx(dc_idx),
        .tx_tdata(tx_tdata), .tx_tkeep(tx_tkeep), .tx_tlast(tx_tlast), .tx_tuser(tx_tuser),
        .tx_tvalid(tx_tvalid), .tx_tready(tx_tready));

    assign idle = !f_valid && !e_busy && !ld_req && !cmd_busy;
endmodule

`default_nettype wire
