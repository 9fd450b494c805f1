// SPDX-License-Identifier: BSD-3-Clause
//
// nr_agg_top: the netreduce aggregator (control/FPGA.md).  One clock; rst is
// synchronous, active high.  Ports:
//   s_axil_*   the register file (nr_regs), 128 KiB of AXI4-Lite
//   rx_*       frames in: AXI4-Stream, 32-bit beats, byte 0 in bits 7:0,
//              tuser = ingress port (first beat)
//   tx_*       frames out, same format, tuser = {kind, port}: kind 0 a frame
//              forwarded unchanged, 1 a result, 2 a resent result
//   tick_ms    one pulse a millisecond (progress timeouts)
// Blocks, one a role: nr_regs (registers, commands, counters), nr_rx
// (reception), nr_parse, nr_icrc, nr_lookup, nr_core (slot control), nr_store
// (slot store), nr_fp32_add (the sum), nr_emit (result emission).
`default_nettype none

module nr_agg_top #(
    parameter integer NJ = 4,
    parameter integer NC = 32,
    parameter integer NR = 8,
    parameter integer MAX_MTU = 4096,
    parameter integer POOL_BYTES = 1048576,
    parameter integer FRAME_MAX = 4352,
    parameter [31:0]  CAP_FLAGS = 32'd3
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        tick_ms,
    input  wire [16:0] s_axil_awaddr,
    input  wire        s_axil_awvalid,
    output wire        s_axil_awready,
    input  wire [31:0] s_axil_wdata,
    input  wire [3:0]  s_axil_wstrb,
    input  wire        s_axil_wvalid,
    output wire        s_axil_wready,
    output wire [1:0]  s_axil_bresp,
    output wire        s_axil_bvalid,
    input  wire        s_axil_bready,
    input  wire [16:0] s_axil_araddr,
    input  wire        s_axil_arvalid,
    output wire        s_axil_arready,
    output wire [31:0] s_axil_rdata,
    output wire [1:0]  s_axil_rresp,
    output wire        s_axil_rvalid,
    input  wire        s_axil_rready,
    input  wire [31:0] rx_tdata,
    input  wire [3:0]  rx_tkeep,
    input  wire        rx_tlast,
    input  wire [7:0]  rx_tuser,
    input  wire        rx_tvalid,
    output wire        rx_tready,
    output wire [31:0] tx_tdata,
    output wire [3:0]  tx_tkeep,
    output wire        tx_tlast,
    output wire [15:0] tx_tuser,
    output wire        tx_tvalid,
    input  wire        tx_tready,
    output wire        idle          // no frame held, none being processed or sent, no
                                     // command being serviced
);
    localparam integer MW = 124 + NR;

    wire soft_rst, enabled;
    wire rst_dp = rst || soft_rst;

    wire [NJ*2-1:0]  job_state;
    wire [NJ*9-1:0]  job_n;
    wire [NJ*4-1:0]  job_mtu_log2;
    wire [NJ-1:0]    job_mode;
    wire [NJ*32-1:0] job_key, job_timeout, job_base;
    wire [NJ*24-1:0] job_pool, next_emit, next_release;
    wire [NC-1:0]    conn_live;
    wire [NC*6-1:0]  conn_job;
    wire [NC*9-1:0]  conn_rank;
    wire [NC*32-1:0] conn_sip, conn_dip;
    wire [NC*24-1:0] conn_sqpn, conn_dqpn, conn_ipsn;
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
        .s_awaddr(s_axil_awaddr), .s_awvalid(s_axil_awvalid), .s_awready(s_axil_awready),
        .s_wdata(s_axil_wdata), .s_wstrb(s_axil_wstrb), .s_wvalid(s_axil_wvalid),
        .s_wready(s_axil_wready), .s_bresp(s_axil_bresp), .s_bvalid(s_axil_bvalid),
        .s_bready(s_axil_bready), .s_araddr(s_axil_araddr), .s_arvalid(s_axil_arvalid),
        .s_arready(s_axil_arready), .s_rdata(s_axil_rdata), .s_rresp(s_axil_rresp),
        .s_rvalid(s_axil_rvalid), .s_rready(s_axil_rready),
        .enabled(enabled), .soft_rst(soft_rst),
        .job_state_o(job_state), .job_n_o(job_n), .job_mtu_log2_o(job_mtu_log2),
        .job_mode_o(job_mode), .job_key_o(job_key), .job_timeout_o(job_timeout),
        .job_base_o(job_base), .job_pool_o(job_pool),
        .conn_live_o(conn_live), .conn_job_o(conn_job), .conn_rank_o(conn_rank),
        .conn_sip_o(conn_sip), .conn_dip_o(conn_dip), .conn_sqpn_o(conn_sqpn),
        .conn_dqpn_o(conn_dqpn), .conn_ipsn_o(conn_ipsn),
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
        .clk(clk), .rst(rst_dp), .s_tdata(rx_tdata), .s_tkeep(rx_tkeep), .s_tlast(rx_tlast),
        .s_tuser(rx_tuser), .s_tvalid(rx_tvalid && enabled), .s_tready(rx_ready_i),
        .f_valid(f_valid), .f_len(f_len), .f_port(f_port), .f_oversize(f_oversize),
        .f_hdr(f_hdr), .f_done(f_done), .rd_addr(rx_addr), .rd_data(rx_data));
    assign rx_tready = rx_ready_i && enabled;

    wire [29:0] pay_addr, hdr_addr, e_paddr, e_hdr_addr, e_pay_addr;
    wire [31:0] pay_wdata, pay_rdata, hdr_wdata, hdr_rdata, desc_wdata, desc_rdata, e_imm;
    wire        pay_we, hdr_we, desc_we, meta_we;
    wire [23:0] desc_addr, meta_addr, e_hidx;
    wire [MW-1:0] meta_wdata, meta_rdata;
    nr_store #(.POOL_BYTES(POOL_BYTES), .MW(MW)) u_store (
        .clk(clk), .pay_addr(pay_addr), .pay_we(pay_we), .pay_wdata(pay_wdata),
        .pay_rdata(pay_rdata), .hdr_addr(hdr_addr), .hdr_we(hdr_we), .hdr_wdata(hdr_wdata),
        .hdr_rdata(hdr_rdata), .desc_addr(desc_addr), .desc_we(desc_we),
        .desc_wdata(desc_wdata), .desc_rdata(desc_rdata), .meta_addr(meta_addr),
        .meta_we(meta_we), .meta_wdata(meta_wdata), .meta_rdata(meta_rdata));

    wire        e_start, e_raw, e_hsrc, e_ipv6, e_set_imm, e_set_ce, e_busy;
    wire [12:0] e_len, e_plen;
    wire [6:0]  e_pay_off, e_l3, e_l4;
    wire [1:0]  e_pad, e_kind;
    wire [3:0]  e_ihl;
    wire [7:0]  e_port;
    wire [10:0] e_rx_addr;
    nr_core #(.NJ(NJ), .NC(NC), .NR(NR), .MW(MW)) u_core (
        .clk(clk), .rst(rst_dp), .tick_ms(tick_ms),
        .f_valid(f_valid), .f_len(f_len), .f_port(f_port), .f_oversize(f_oversize),
        .f_hdr(f_hdr), .f_done(f_done), .rx_addr(rx_addr), .rx_data(rx_data),
        .pay_addr(pay_addr), .pay_we(pay_we), .pay_wdata(pay_wdata), .pay_rdata(pay_rdata),
        .hdr_addr(hdr_addr), .hdr_we(hdr_we), .hdr_wdata(hdr_wdata), .hdr_rdata(hdr_rdata),
        .desc_addr(desc_addr), .desc_we(desc_we), .desc_wdata(desc_wdata),
        .desc_rdata(desc_rdata), .meta_addr(meta_addr), .meta_we(meta_we),
        .meta_wdata(meta_wdata), .meta_rdata(meta_rdata),
        .e_start(e_start), .e_raw(e_raw), .e_len(e_len), .e_hsrc(e_hsrc), .e_hidx(e_hidx),
        .e_paddr(e_paddr), .e_plen(e_plen), .e_pay_off(e_pay_off), .e_pad(e_pad),
        .e_l3(e_l3), .e_l4(e_l4), .e_ipv6(e_ipv6), .e_ihl(e_ihl), .e_set_imm(e_set_imm),
        .e_imm(e_imm), .e_set_ce(e_set_ce), .e_port(e_port), .e_kind(e_kind),
        .e_busy(e_busy), .e_rx_addr(e_rx_addr), .e_hdr_addr(e_hdr_addr),
        .e_pay_addr(e_pay_addr),
        .job_state(job_state), .job_n(job_n), .job_mtu_log2(job_mtu_log2),
        .job_mode(job_mode), .job_key(job_key), .job_timeout(job_timeout),
        .job_base(job_base), .job_pool(job_pool), .conn_live(conn_live),
        .conn_job(conn_job), .conn_rank(conn_rank), .conn_sip(conn_sip),
        .conn_dip(conn_dip), .conn_sqpn(conn_sqpn), .conn_dqpn(conn_dqpn),
        .conn_ipsn(conn_ipsn), .next_emit_o(next_emit), .next_release_o(next_release),
        .fail_v(fail_v), .fail_job(fail_job), .fail_code(fail_code),
        .ea_v(ea_v), .ea_job(ea_job), .ea_idx(ea_idx), .ea_amt(ea_amt),
        .db_v(db_v), .db_idx(db_idx), .db_amt(db_amt),
        .ld_req(ld_req), .ld_job(ld_job), .ld_unload(ld_unload), .ld_ack(ld_ack));

    nr_emit #(.FRAME_MAX(FRAME_MAX)) u_emit (
        .clk(clk), .rst(rst_dp), .start(e_start), .e_raw(e_raw), .e_len(e_len),
        .e_hsrc(e_hsrc), .e_hidx(e_hidx), .e_paddr(e_paddr), .e_plen(e_plen),
        .e_pay_off(e_pay_off), .e_pad(e_pad), .e_l3(e_l3), .e_l4(e_l4), .e_ipv6(e_ipv6),
        .e_ihl(e_ihl), .e_set_imm(e_set_imm), .e_imm(e_imm), .e_set_ce(e_set_ce),
        .e_port(e_port), .e_kind(e_kind), .busy(e_busy),
        .rx_addr(e_rx_addr), .rx_data(rx_data), .hdr_addr(e_hdr_addr), .hdr_data(hdr_rdata),
        .pay_addr(e_pay_addr), .pay_data(pay_rdata), .dc_v(dc_v), .dc_idx(dc_idx),
        .m_tdata(tx_tdata), .m_tkeep(tx_tkeep), .m_tlast(tx_tlast), .m_tuser(tx_tuser),
        .m_tvalid(tx_tvalid), .m_tready(tx_tready));

    assign idle = !f_valid && !e_busy && !ld_req && !cmd_busy;
endmodule

`default_nettype wire
