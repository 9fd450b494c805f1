// SPDX-License-Identifier: BSD-3-Clause
//
// nr_regs: the register file of control/fpga/FPGA.md (control/fpga/fpga_regs.h) on
// AXI4-Lite, with the command engine (JOB_LOAD / JOB_UNLOAD: every check of
// FPGA.md in its order, pool allocation, the load handshake with nr_core)
// and the counters.
//
// Storage: job registers as written by the driver; a job's datapath view
// (N, MTU, mode, key, timeout, pool) is latched at JOB_LOAD so rewriting the
// registers of a loaded job cannot disturb it.  Connection entries are used
// by the lookup once their job loaded them (a write to an entry's CTRL takes
// it out of the lookup).  Counters are 64-bit, one pair per engine counter
// per job and globally, and the dataplane counters at 0xf100 (FPGA.md).
//
// Pool: a job takes N_CONNS x pool packets x MTU bytes of payload store
// (pool packets = POOL_MSGS x ceil(MSG_SIZE / MTU)), one contiguous region,
// first fit; headers live in a store of half that size at the same index
// (nr_store).  A one-rank streaming job of a 16-bit DTYPE takes two MTU
// buffers a packet (its FP32 accumulator is twice the payload).
`default_nettype none
`include "nr_defs.vh"

module nr_regs #(
    parameter integer NJ = 4,                 // job slots
    parameter integer NC = 32,                // connection entries
    parameter integer NR = 8,                 // ranks per job
    parameter integer MAX_MTU = 4096,
    parameter integer POOL_BYTES = 1048576,   // payload store, bytes
    parameter [31:0]  CAP_FLAGS = 32'd15      // ordered | streaming | bf16 | fp16
) (
    input  wire        clk,
    input  wire        rst,
    `NR_AXIL_PORTS(reg),
    // to the datapath
    output reg              enabled,
    output reg              soft_rst,             // CTRL.RESET: one cycle
    output wire [NJ*`JT_W-1:0] jobs_o,    // each job's view (nr_defs.vh)
    output wire [NC*`CT_W-1:0] conns_o,   // the connection entries (nr_defs.vh)
    // from the datapath
    input  wire [NJ*24-1:0] core_next_emit,
    input  wire [NJ*24-1:0] core_next_release,
    input  wire             fail_v,
    input  wire [5:0]       fail_job,
    input  wire [2:0]       fail_code,
    input  wire             ea_v,                 // engine counter (job and global)
    input  wire [6:0]       ea_job,               // >= NJ: global only
    input  wire [4:0]       ea_idx,               // NR_FOREACH_ENGINE_CTR order
    input  wire [15:0]      ea_amt,
    input  wire             db_v,                 // dataplane counter (global)
    input  wire [3:0]       db_idx,
    input  wire [15:0]      db_amt,
    input  wire             dc_v,                 // dataplane counter from nr_emit
    input  wire [3:0]       dc_idx,
    output wire             cmd_busy,             // a command is being serviced
    output reg              ld_req,               // job (un)load: nr_core sets up
    output reg  [5:0]       ld_job,
    output reg              ld_unload,
    input  wire             ld_ack
);
    localparam integer NECTR = 19;              // the engine's counters 0..18 ...
    localparam integer C_CONFLICT = 29;         // ... and psn_conflict (the monitor's 19..26, the bindings' 27-28 are not kept)
    localparam integer NDCTR = 12;              // dataplane counters
    localparam [31:0] MAGIC = 32'h4146524e, VERSION = 32'h0001_0001;
    localparam [3:0] E_NONE = 4'd0, E_BAD_OP = 4'd1, E_BAD_INDEX = 4'd2, E_SLOT_BUSY = 4'd3,
        E_SLOT_FREE = 4'd4, E_BAD_FIELD = 4'd5, E_BAD_CONN = 4'd6, E_CONN_COUNT = 4'd7,
        E_NO_POOL = 4'd8, E_CONN_CLASH = 4'd9, E_DISABLED = 4'd10;

    assign s_axil_bresp = 2'b00;
    assign s_axil_rresp = 2'b00;

    // ---- state -------------------------------------------------------------
    reg        ready;
    reg [31:0] cmd_reg, cmd_status, cmd_info;
    reg [31:0] pool_used, jobs_loaded;

    // job registers (as written) and state
    reg [31:0] j_n [0:NJ-1], j_mtu [0:NJ-1], j_msg [0:NJ-1], j_poolm [0:NJ-1];
    reg [31:0] j_tmo [0:NJ-1], j_mode [0:NJ-1], j_key [0:NJ-1], j_tag [0:NJ-1];
    reg [31:0] j_dt [0:NJ-1];
    reg [1:0]  j_state [0:NJ-1];
    reg [2:0]  j_fail [0:NJ-1];
    // latched at JOB_LOAD
    reg [8:0]  l_n [0:NJ-1];
    reg [3:0]  l_mtu_log2 [0:NJ-1];
    reg        l_mode [0:NJ-1];
    reg [1:0]  l_dt [0:NJ-1];
    reg [8:0]  l_room [0:NJ-1];
    reg [31:0] l_key [0:NJ-1], l_tmo [0:NJ-1], l_base [0:NJ-1], l_size [0:NJ-1];
    reg [23:0] l_pool [0:NJ-1];

    // connection entries
    reg [31:0] c_ctrl [0:NC-1], c_rank [0:NC-1], c_sip [0:NC-1], c_dip [0:NC-1];
    reg [31:0] c_sq [0:NC-1], c_dq [0:NC-1], c_ipsn [0:NC-1];
    reg [31:0] c_smh [0:NC-1], c_sml [0:NC-1], c_dmh [0:NC-1], c_dml [0:NC-1];
    reg        c_lk [0:NC-1];

    // counters
    reg [63:0] gctr [0:NECTR-1];
    reg [63:0] dctr [0:NDCTR-1];
    reg [63:0] jctr [0:NJ*NECTR-1];
    reg [63:0] gconf;
    reg [63:0] jconf [0:NJ-1];

    genvar gj, gc;
    generate
        for (gj = 0; gj < NJ; gj = gj + 1) begin : g_job_o
            // the fields of `JT_*, high field first
            assign jobs_o[gj*`JT_W +: `JT_W] = {l_room[gj], l_dt[gj], l_pool[gj], l_base[gj],
                l_tmo[gj], l_key[gj], l_mode[gj], l_mtu_log2[gj], l_n[gj], j_state[gj]};
        end
        for (gc = 0; gc < NC; gc = gc + 1) begin : g_conn_o
            // the fields of `CT_*, high field first
            assign conns_o[gc*`CT_W +: `CT_W] = {c_ipsn[gc][23:0], c_dq[gc][23:0], c_sq[gc][23:0],
                c_dip[gc], c_sip[gc], c_rank[gc][8:0], c_ctrl[gc][5:0], c_lk[gc] && c_ctrl[gc][31]};
        end
    endgenerate

    // ---- AXI-Lite read ---------------------------------------------------------
    function [31:0] rd_reg(input [16:0] a);
        integer j, e, i;
        reg [63:0] v;
        begin
            rd_reg = 32'd0;
            v = 64'd0;
            if (a < 17'h40) begin
                case (a[5:2])
                    4'h0: rd_reg = MAGIC;
                    4'h1: rd_reg = VERSION;
                    4'h2: rd_reg = NJ;
                    4'h3: rd_reg = NC;
                    4'h4: rd_reg = POOL_BYTES;
                    4'h5: rd_reg = NR;
                    4'h6: rd_reg = MAX_MTU;
                    4'h7: rd_reg = CAP_FLAGS;
                    4'h8: rd_reg = {29'd0, 1'b0, enabled, ready};
                    4'h9: rd_reg = {31'd0, enabled};
                    4'ha: rd_reg = pool_used;
                    4'hb: rd_reg = jobs_loaded;
                    default: rd_reg = 32'd0;
                endcase
            end else if (a < 17'h4c) begin
                case (a[3:2])
                    2'd0: rd_reg = cmd_reg;
                    2'd1: rd_reg = cmd_status;
                    default: rd_reg = cmd_info;
                endcase
            end else if (a >= 17'h1000 && a < 17'h2000) begin
                j = a[11:6];
                if (j < NJ) begin
                    case (a[5:2])
                        4'h0: rd_reg = {30'd0, j_state[j]};
                        4'h1: rd_reg = j_n[j];
                        4'h2: rd_reg = j_mtu[j];
                        4'h3: rd_reg = j_msg[j];
                        4'h4: rd_reg = j_poolm[j];
                        4'h5: rd_reg = j_tmo[j];
                        4'h6: rd_reg = j_mode[j];
                        4'h7: rd_reg = j_key[j];
                        4'h8: rd_reg = j_tag[j];
                        4'h9: rd_reg = j_state[j] != 2'd0 ? {8'd0, core_next_emit[j*24 +: 24]} : 32'd0;
                        4'ha: rd_reg = j_state[j] != 2'd0 ? {8'd0, core_next_release[j*24 +: 24]} : 32'd0;
                        4'hb: rd_reg = {29'd0, j_fail[j]};
                        4'hc: rd_reg = jctr[j*NECTR + 1][31:0];     // COMPLETED
                        4'hd: rd_reg = jctr[j*NECTR + 1][63:32];
                        4'he: rd_reg = j_dt[j];
                        default: rd_reg = 32'd0;
                    endcase
                end
            end else if (a >= 17'h2000 && a < 17'hf000) begin
                e = (a - 17'h2000) >> 6;
                if (e < NC) begin
                    case (a[5:2])
                        4'h0: rd_reg = c_ctrl[e];
                        4'h1: rd_reg = c_rank[e];
                        4'h2: rd_reg = c_sip[e];
                        4'h3: rd_reg = c_dip[e];
                        4'h4: rd_reg = c_sq[e];
                        4'h5: rd_reg = c_dq[e];
                        4'h6: rd_reg = c_ipsn[e];
                        4'h7: rd_reg = c_smh[e];
                        4'h8: rd_reg = c_sml[e];
                        4'h9: rd_reg = c_dmh[e];
                        4'ha: rd_reg = c_dml[e];
                        default: rd_reg = 32'd0;
                    endcase
                end
            end else if (a >= 17'hf000 && a < 17'hf100) begin
                i = a[7:3];
                if (i < NECTR) v = gctr[i];
                else if (i == C_CONFLICT) v = gconf;
                rd_reg = a[2] ? v[63:32] : v[31:0];
            end else if (a >= 17'hf100 && a < 17'hf200) begin
                i = a[7:3];
                if (i < NDCTR) v = dctr[i];
                rd_reg = a[2] ? v[63:32] : v[31:0];
            end else if (a >= 17'h10000) begin
                j = a[15:8];
                i = a[7:3];
                if (j < NJ && i < NECTR) v = jctr[j*NECTR + i];
                else if (j < NJ && i == C_CONFLICT) v = jconf[j];
                rd_reg = a[2] ? v[63:32] : v[31:0];
            end
        end
    endfunction

    always @(posedge clk) begin
        if (rst) begin
            s_axil_arready <= 1'b0;
            s_axil_rvalid <= 1'b0;
            s_axil_rdata <= 32'd0;
        end else begin
            s_axil_arready <= 1'b0;
            if (s_axil_rvalid && s_axil_rready)
                s_axil_rvalid <= 1'b0;
            if (s_axil_arvalid && !s_axil_rvalid && !s_axil_arready) begin
                s_axil_arready <= 1'b1;
                s_axil_rvalid <= 1'b1;
                s_axil_rdata <= rd_reg({s_axil_araddr[16:2], 2'b00});
            end
        end
    end

    // ---- command engine ------------------------------------------------------
    localparam [3:0] C_IDLE = 4'd0, C_CHECK = 4'd1, C_ENT = 4'd2, C_CLASH = 4'd3,
        C_COUNT = 4'd4, C_POOL = 4'd5, C_FIT = 4'd6, C_LOAD = 4'd7, C_UNLOAD = 4'd8,
        C_DONE = 4'd9;
    reg [3:0]  cst;
    assign cmd_busy = cst != C_IDLE;
    reg [7:0]  c_op, c_tag;
    reg [15:0] c_idx;
    reg [5:0]  cj;                     // the job slot (c_idx when < NJ)
    reg [3:0]  c_err;
    reg [31:0] c_inf;
    integer    ce, co, cf, ck;         // entry, other entry, fit candidate, fit check
    reg [8:0]  c_count;
    reg [NR-1:0] c_seen;
    reg [47:0] c_need;
    reg [3:0]  c_log2;
    reg [8:0]  c_room;
    reg [23:0] c_pkts;
    reg [31:0] c_cand;
    reg        c_ok;

    // the write port of the AXI side, visible to the command engine
    wire        aw_fire = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid && !s_axil_awready;
    wire [16:0] wa = {s_axil_awaddr[16:2], 2'b00};

    function [3:0] log2_mtu(input [31:0] m);
        begin
            case (m)
                32'd256: log2_mtu = 4'd8;
                32'd512: log2_mtu = 4'd9;
                32'd1024: log2_mtu = 4'd10;
                32'd2048: log2_mtu = 4'd11;
                32'd4096: log2_mtu = 4'd12;
                default: log2_mtu = 4'd0;
            endcase
        end
    endfunction

    function ent_ok(input integer e);
        begin
            ent_ok = c_sip[e] != 32'd0 && c_dip[e] != 32'd0 &&
                     c_sq[e] != 32'd0 && c_sq[e] <= 32'hffffff &&
                     c_dq[e] != 32'd0 && c_dq[e] <= 32'hffffff &&
                     c_ipsn[e] <= 32'hffffff && c_smh[e] <= 32'hffff && c_dmh[e] <= 32'hffff;
        end
    endfunction

    function clash(input integer a, input integer b);
        begin
            clash = (c_sip[a] == c_sip[b] && c_sq[a] == c_sq[b]) ||
                    (c_sip[a] == c_dip[b] && c_sq[a] == c_dq[b]) ||
                    (c_dip[a] == c_sip[b] && c_dq[a] == c_sq[b]) ||
                    (c_dip[a] == c_dip[b] && c_dq[a] == c_dq[b]);
        end
    endfunction

    integer i, k, t;
    reg [31:0] per;
    reg [55:0] prod;

    // What hardware reset and CTRL.RESET both empty: the job registers and
    // states, the connection entries, every counter.
    task clear_tables;
        begin
            for (t = 0; t < NJ; t = t + 1) begin
                j_n[t] <= 0; j_mtu[t] <= 0; j_msg[t] <= 0; j_poolm[t] <= 0;
                j_tmo[t] <= 0; j_mode[t] <= 0; j_key[t] <= 0; j_tag[t] <= 0;
                j_dt[t] <= 0; j_state[t] <= 2'd0; j_fail[t] <= 3'd0;
            end
            for (t = 0; t < NC; t = t + 1) begin
                c_ctrl[t] <= 0; c_rank[t] <= 0; c_sip[t] <= 0; c_dip[t] <= 0; c_sq[t] <= 0;
                c_dq[t] <= 0; c_ipsn[t] <= 0; c_smh[t] <= 0; c_sml[t] <= 0; c_dmh[t] <= 0;
                c_dml[t] <= 0; c_lk[t] <= 1'b0;
            end
            for (t = 0; t < NECTR; t = t + 1) gctr[t] <= 64'd0;
            for (t = 0; t < NDCTR; t = t + 1) dctr[t] <= 64'd0;
            for (t = 0; t < NJ * NECTR; t = t + 1) jctr[t] <= 64'd0;
            gconf <= 64'd0;
            for (t = 0; t < NJ; t = t + 1) jconf[t] <= 64'd0;
        end
    endtask

    always @(posedge clk) begin
        soft_rst <= 1'b0;
        if (rst) begin
            s_axil_awready <= 1'b0;
            s_axil_wready <= 1'b0;
            s_axil_bvalid <= 1'b0;
            enabled <= 1'b0;
            ready <= 1'b1;
            cmd_reg <= 32'd0;
            cmd_status <= 32'd0;
            cmd_info <= 32'd0;
            pool_used <= 32'd0;
            jobs_loaded <= 32'd0;
            cst <= C_IDLE;
            ld_req <= 1'b0;
            ld_unload <= 1'b0;
            ld_job <= 6'd0;
            for (i = 0; i < NJ; i = i + 1) begin
                l_n[i] <= 0; l_mtu_log2[i] <= 0; l_mode[i] <= 0; l_dt[i] <= 0; l_room[i] <= 0; l_key[i] <= 0;
                l_tmo[i] <= 0; l_base[i] <= 0; l_size[i] <= 0; l_pool[i] <= 0;
            end
            clear_tables;
        end else begin
            s_axil_awready <= 1'b0;
            s_axil_wready <= 1'b0;
            if (s_axil_bvalid && s_axil_bready)
                s_axil_bvalid <= 1'b0;

            // counters from the datapath
            if (ea_v && ea_idx < NECTR) begin
                gctr[ea_idx] <= gctr[ea_idx] + {48'd0, ea_amt};
                if (ea_job < NJ)
                    jctr[ea_job * NECTR + ea_idx] <= jctr[ea_job * NECTR + ea_idx] + {48'd0, ea_amt};
            end
            if (ea_v && ea_idx == C_CONFLICT) begin
                gconf <= gconf + {48'd0, ea_amt};
                if (ea_job < NJ)
                    jconf[ea_job] <= jconf[ea_job] + {48'd0, ea_amt};
            end
            if (db_v && db_idx < NDCTR)
                dctr[db_idx] <= dctr[db_idx] + {48'd0, db_amt};
            if (dc_v && dc_idx < NDCTR && !(db_v && db_idx == dc_idx))
                dctr[dc_idx] <= dctr[dc_idx] + 64'd1;
            if (fail_v && fail_job < NJ && j_state[fail_job] == 2'd1) begin
                j_state[fail_job] <= 2'd2;
                j_fail[fail_job] <= fail_code;
            end

            // register writes (one a time: AW and W together)
            if (aw_fire) begin
                s_axil_awready <= 1'b1;
                s_axil_wready <= 1'b1;
                s_axil_bvalid <= 1'b1;
                if (wa == 17'h024) begin
                    if (s_axil_wdata[1]) begin
                        // RESET: tables, counters, pool; ENABLE cleared
                        soft_rst <= 1'b1;
                        enabled <= 1'b0;
                        pool_used <= 32'd0;
                        jobs_loaded <= 32'd0;
                        cmd_status <= {cmd_status[31:2], 2'd0};
                        cst <= C_IDLE;
                        ld_req <= 1'b0;
                        clear_tables;
                    end else
                        enabled <= s_axil_wdata[0] && ready;
                end else if (wa == 17'h040) begin
                    cmd_reg <= s_axil_wdata;
                    if (cst == C_IDLE) begin
                        c_op <= s_axil_wdata[7:0];
                        c_tag <= s_axil_wdata[15:8];
                        c_idx <= s_axil_wdata[31:16];
                        cj <= s_axil_wdata[21:16];
                        cmd_status <= {8'd0, s_axil_wdata[15:8], 8'd0, 8'd1};
                        cst <= C_CHECK;
                    end
                end else if (wa >= 17'h1000 && wa < 17'h2000) begin
                    if (wa[11:6] < NJ) begin
                        case (wa[5:2])
                            4'h1: j_n[wa[11:6]] <= s_axil_wdata;
                            4'h2: j_mtu[wa[11:6]] <= s_axil_wdata;
                            4'h3: j_msg[wa[11:6]] <= s_axil_wdata;
                            4'h4: j_poolm[wa[11:6]] <= s_axil_wdata;
                            4'h5: j_tmo[wa[11:6]] <= s_axil_wdata;
                            4'h6: j_mode[wa[11:6]] <= s_axil_wdata;
                            4'h7: j_key[wa[11:6]] <= s_axil_wdata;
                            4'h8: j_tag[wa[11:6]] <= s_axil_wdata;
                            4'he: j_dt[wa[11:6]] <= s_axil_wdata;
                            default: ;
                        endcase
                    end
                end else if (wa >= 17'h2000 && wa < 17'hf000) begin
                    k = (wa - 17'h2000) >> 6;
                    if (k < NC) begin
                        case (wa[5:2])
                            4'h0: begin c_ctrl[k] <= s_axil_wdata; c_lk[k] <= 1'b0; end
                            4'h1: c_rank[k] <= s_axil_wdata;
                            4'h2: c_sip[k] <= s_axil_wdata;
                            4'h3: c_dip[k] <= s_axil_wdata;
                            4'h4: c_sq[k] <= s_axil_wdata;
                            4'h5: c_dq[k] <= s_axil_wdata;
                            4'h6: c_ipsn[k] <= s_axil_wdata;
                            4'h7: c_smh[k] <= s_axil_wdata;
                            4'h8: c_sml[k] <= s_axil_wdata;
                            4'h9: c_dmh[k] <= s_axil_wdata;
                            4'ha: c_dml[k] <= s_axil_wdata;
                            default: ;
                        endcase
                    end
                end
            end

            // the command engine
            case (cst)
            C_IDLE: ;
            C_CHECK: begin
                c_err <= E_NONE;
                c_inf <= 32'd0;
                ce <= 0;
                c_count <= 9'd0;
                c_seen <= {NR{1'b0}};
                if (c_op == 8'h01) begin
                    if (!enabled) begin
                        c_err <= E_DISABLED; cst <= C_DONE;
                    end else if (c_idx >= NJ) begin
                        c_err <= E_BAD_INDEX; cst <= C_DONE;
                    end else if (j_state[cj] != 2'd0) begin
                        c_err <= E_SLOT_BUSY; cst <= C_DONE;
                    end else if (j_n[cj] < 1 || j_n[cj] > NR) begin
                        c_err <= E_BAD_FIELD; c_inf <= 32'h04; cst <= C_DONE;
                    end else if (log2_mtu(j_mtu[cj]) == 4'd0 || j_mtu[cj] > MAX_MTU) begin
                        c_err <= E_BAD_FIELD; c_inf <= 32'h08; cst <= C_DONE;
                    end else if (j_dt[cj] > 2 || (j_dt[cj] != 0 && !CAP_FLAGS[j_dt[cj][1:0] + 2'd1])) begin
                        // 0 fp32, or a 16-bit type the device has (CAP_FLAGS bit 2 bf16, 3 fp16)
                        c_err <= E_BAD_FIELD; c_inf <= 32'h38; cst <= C_DONE;
                    end else if (j_dt[cj] != 0 ? (j_msg[cj] < 2 || j_msg[cj][0]) :
                                 (j_msg[cj] < 4 || j_msg[cj][1:0] != 2'd0)) begin
                        // a whole number of elements
                        c_err <= E_BAD_FIELD; c_inf <= 32'h0c; cst <= C_DONE;
                    end else if (j_poolm[cj] < 2 || j_poolm[cj][0]) begin
                        c_err <= E_BAD_FIELD; c_inf <= 32'h10; cst <= C_DONE;
                    end else if (j_tmo[cj] < 1) begin
                        c_err <= E_BAD_FIELD; c_inf <= 32'h14; cst <= C_DONE;
                    end else if (j_mode[cj] > 1 || !CAP_FLAGS[j_mode[cj][0]]) begin
                        c_err <= E_BAD_FIELD; c_inf <= 32'h18; cst <= C_DONE;
                    end else
                        cst <= C_ENT;
                end else if (c_op == 8'h02) begin
                    if (c_idx >= NJ) begin
                        c_err <= E_BAD_INDEX; cst <= C_DONE;
                    end else if (j_state[cj] == 2'd0) begin
                        c_err <= E_SLOT_FREE; cst <= C_DONE;
                    end else begin
                        ld_req <= 1'b1; ld_job <= cj; ld_unload <= 1'b1;
                        cst <= C_UNLOAD;
                    end
                end else begin
                    c_err <= E_BAD_OP; cst <= C_DONE;
                end
            end
            C_ENT: begin
                // one valid entry a visit; entries of this slot are checked and
                // then compared with every entry of a loaded job (C_CLASH)
                if (ce >= NC) begin
                    cst <= C_COUNT;
                end else if (!c_ctrl[ce][31]) begin
                    ce <= ce + 1;
                end else if (c_ctrl[ce][15:0] >= NJ) begin
                    c_err <= E_BAD_CONN; c_inf <= ce; cst <= C_DONE;
                end else if (c_ctrl[ce][15:0] != {10'd0, cj}) begin
                    if (j_state[c_ctrl[ce][5:0]] == 2'd0) begin
                        c_err <= E_BAD_CONN; c_inf <= ce; cst <= C_DONE;
                    end else
                        ce <= ce + 1;
                end else if (c_rank[ce] >= j_n[cj] || c_seen[c_rank[ce][8:0]] || !ent_ok(ce)) begin
                    c_err <= E_BAD_CONN; c_inf <= ce; cst <= C_DONE;
                end else begin
                    c_seen[c_rank[ce][8:0]] <= 1'b1;
                    c_count <= c_count + 9'd1;
                    co <= 0;
                    cst <= C_CLASH;
                end
            end
            C_CLASH: begin
                if (co >= NC) begin
                    ce <= ce + 1;
                    cst <= C_ENT;
                end else begin
                    if (co != ce && c_ctrl[co][31] && c_ctrl[co][15:0] != {10'd0, cj} &&
                        c_ctrl[co][15:0] < NJ && j_state[c_ctrl[co][5:0]] != 2'd0 && clash(ce, co)) begin
                        c_err <= E_CONN_CLASH; c_inf <= ce; cst <= C_DONE;
                    end
                    co <= co + 1;
                end
            end
            C_COUNT: begin
                if ({23'd0, c_count} != j_n[cj]) begin
                    c_err <= E_CONN_COUNT; c_inf <= {23'd0, c_count}; cst <= C_DONE;
                end else begin
                    // pool packets = POOL_MSGS x ceil(MSG_SIZE / MTU); bytes = room x
                    // that x MTU, room = N but 2 for a one-rank streaming 16-bit job
                    c_log2 <= log2_mtu(j_mtu[cj]);
                    c_room <= (j_mode[cj][0] && j_dt[cj] != 0 && j_n[cj] == 32'd1) ? 9'd2 : j_n[cj][8:0];
                    per = (j_msg[cj] + j_mtu[cj] - 32'd1) >> log2_mtu(j_mtu[cj]);
                    prod = {24'd0, j_poolm[cj]} * {32'd0, per[23:0]};
                    if (prod >= 56'h1000000 || per >= 32'h1000000) begin
                        c_need <= 48'hffff_ffff_ffff;
                        c_pkts <= 24'hffffff;
                    end else begin
                        c_pkts <= prod[23:0];
                        c_need <= ({24'd0, prod[23:0]} *
                                   {39'd0, (j_mode[cj][0] && j_dt[cj] != 0 && j_n[cj] == 32'd1) ? 9'd2 : j_n[cj][8:0]})
                                  << log2_mtu(j_mtu[cj]);
                    end
                    cst <= C_POOL;
                end
            end
            C_POOL: begin
                if (c_need > {16'd0, POOL_BYTES[31:0] - pool_used}) begin
                    c_err <= E_NO_POOL; c_inf <= POOL_BYTES[31:0] - pool_used; cst <= C_DONE;
                end else begin
                    cf <= -1;            // candidate: 0, then the end of each loaded job
                    ck <= 0;
                    c_cand <= 32'd0;
                    c_ok <= 1'b1;
                    cst <= C_FIT;
                end
            end
            C_FIT: begin
                // first fit: check candidate c_cand against every loaded job
                if (ck < NJ) begin
                    if (j_state[ck] != 2'd0 && ck != cj &&
                        {16'd0, c_cand} < {16'd0, l_base[ck]} + {16'd0, l_size[ck]} &&
                        {16'd0, l_base[ck]} < {16'd0, c_cand} + c_need)
                        c_ok <= 1'b0;
                    ck <= ck + 1;
                end else if (c_ok && {16'd0, c_cand} + c_need <= POOL_BYTES) begin
                    ld_req <= 1'b1; ld_job <= cj; ld_unload <= 1'b0;
                    l_n[cj] <= j_n[cj][8:0];
                    l_mtu_log2[cj] <= c_log2;
                    l_mode[cj] <= j_mode[cj][0];
                    l_dt[cj] <= j_dt[cj][1:0];
                    l_room[cj] <= c_room;
                    l_key[cj] <= j_key[cj];
                    l_tmo[cj] <= j_tmo[cj];
                    l_base[cj] <= c_cand;
                    l_size[cj] <= c_need[31:0];
                    l_pool[cj] <= c_pkts;
                    cst <= C_LOAD;
                end else if (cf + 1 >= NJ) begin
                    c_err <= E_NO_POOL; c_inf <= POOL_BYTES[31:0] - pool_used; cst <= C_DONE;
                end else begin
                    cf <= cf + 1;
                    ck <= 0;
                    c_ok <= j_state[cf + 1] != 2'd0 && (cf + 1) != cj;
                    c_cand <= l_base[cf + 1] + l_size[cf + 1];
                end
            end
            C_LOAD: begin
                if (ld_ack) begin
                    ld_req <= 1'b0;
                    j_state[cj] <= 2'd1;
                    j_fail[cj] <= 3'd0;
                    for (i = 0; i < NECTR; i = i + 1) jctr[cj * NECTR + i] <= 64'd0;
                    jconf[cj] <= 64'd0;
                    for (i = 0; i < NC; i = i + 1)
                        if (c_ctrl[i][31] && c_ctrl[i][15:0] == {10'd0, cj})
                            c_lk[i] <= 1'b1;
                    pool_used <= pool_used + c_need[31:0];
                    jobs_loaded <= jobs_loaded + 32'd1;
                    cst <= C_DONE;
                end
            end
            C_UNLOAD: begin
                if (ld_ack) begin
                    ld_req <= 1'b0;
                    for (i = 0; i < NC; i = i + 1)
                        if (c_ctrl[i][31] && c_ctrl[i][15:0] == {10'd0, cj}) begin
                            c_ctrl[i] <= 0; c_rank[i] <= 0; c_sip[i] <= 0; c_dip[i] <= 0;
                            c_sq[i] <= 0; c_dq[i] <= 0; c_ipsn[i] <= 0; c_smh[i] <= 0;
                            c_sml[i] <= 0; c_dmh[i] <= 0; c_dml[i] <= 0; c_lk[i] <= 1'b0;
                        end
                    j_n[cj] <= 0; j_mtu[cj] <= 0; j_msg[cj] <= 0; j_poolm[cj] <= 0;
                    j_tmo[cj] <= 0; j_mode[cj] <= 0; j_key[cj] <= 0; j_tag[cj] <= 0;
                    j_dt[cj] <= 0; j_state[cj] <= 2'd0; j_fail[cj] <= 3'd0;
                    for (i = 0; i < NECTR; i = i + 1) jctr[cj * NECTR + i] <= 64'd0;
                    jconf[cj] <= 64'd0;
                    pool_used <= pool_used - l_size[cj];
                    jobs_loaded <= jobs_loaded - 32'd1;
                    l_size[cj] <= 32'd0;
                    cst <= C_DONE;
                end
            end
            C_DONE: begin
                cmd_info <= c_inf;
                cmd_status <= {8'd0, c_tag, 4'd0, c_err, 6'd0, (c_err != E_NONE) ? 2'd3 : 2'd2};
                cst <= C_IDLE;
            end
            default: cst <= C_IDLE;
            endcase
        end
    end
endmodule

`default_nettype wire
