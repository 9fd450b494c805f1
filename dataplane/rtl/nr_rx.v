// SPDX-License-Identifier: BSD-3-Clause
//
// nr_rx: frame reception.  One frame at a time from an AXI4-Stream (32-bit
// beats, byte 0 of the frame in bits 7:0, tkeep contiguous from bit 0, tuser
// = ingress port on the first beat) into the frame buffer; the first 128
// bytes also land in a register file for the parser.  A frame longer than
// FRAME_MAX is taken in whole but flagged (dropped as oversize by nr_core).
// tready is low while nr_core holds a frame.
`default_nettype none
`include "nr_defs.vh"

module nr_rx #(
    parameter integer FRAME_MAX = 4352          // bytes, multiple of 4
) (
    input  wire          clk,
    input  wire          rst,
    `NR_RX_PORTS,
    // the held frame
    output reg           f_valid,
    output reg  [12:0]   f_len,
    output reg  [7:0]    f_port,
    output reg           f_oversize,
    output wire [1023:0] f_hdr,
    input  wire          f_done,
    // frame buffer read port (synchronous: data one cycle after the address)
    input  wire [10:0]   rd_addr,
    output reg  [31:0]   rd_data
);
    localparam integer WORDS = FRAME_MAX / 4;
    reg [31:0] buf_mem [0:WORDS-1];
    reg [31:0] hdr_w [0:31];
    reg [13:0] cnt;            // bytes so far
    reg        first;

    genvar g;
    generate
        for (g = 0; g < 32; g = g + 1) begin : g_hdr
            assign f_hdr[g*32 +: 32] = hdr_w[g];
        end
    endgenerate

    assign rx_tready = !f_valid && !rst;

    wire [2:0] kbytes = {2'b00, rx_tkeep[0]} + {2'b00, rx_tkeep[1]} + {2'b00, rx_tkeep[2]} +
                        {2'b00, rx_tkeep[3]};
    wire [11:0] widx = cnt[13:2];

    always @(posedge clk) begin
        rd_data <= buf_mem[rd_addr < WORDS ? rd_addr : 11'd0];
        if (rx_tvalid && rx_tready && cnt < FRAME_MAX)
            buf_mem[widx] <= rx_tdata;
    end

    integer i;
    always @(posedge clk) begin
        if (rst) begin
            f_valid <= 1'b0;
            f_len <= 13'd0;
            f_port <= 8'd0;
            f_oversize <= 1'b0;
            cnt <= 14'd0;
            first <= 1'b1;
            for (i = 0; i < 32; i = i + 1)
                hdr_w[i] <= 32'd0;
        end else begin
            if (f_done) begin
                f_valid <= 1'b0;
                for (i = 0; i < 32; i = i + 1)
                    hdr_w[i] <= 32'd0;
            end
            if (rx_tvalid && rx_tready) begin
                if (first)
                    f_port <= rx_tuser;
                first <= rx_tlast;
                if (widx < 12'd32)
                    hdr_w[widx[4:0]] <= rx_tdata & {{8{rx_tkeep[3]}}, {8{rx_tkeep[2]}},
                                                   {8{rx_tkeep[1]}}, {8{rx_tkeep[0]}}};
                if (rx_tlast) begin
                    f_valid <= 1'b1;
                    f_len <= (cnt + {11'd0, kbytes} > FRAME_MAX) ? 13'd0 : cnt[12:0] + {10'd0, kbytes};
                    f_oversize <= cnt + {11'd0, kbytes} > FRAME_MAX;
                    cnt <= 14'd0;
                end else if (cnt < 14'h3ff0)
                    cnt <= cnt + {11'd0, kbytes};
            end
        end
    end
endmodule

`default_nettype wire
