// SPDX-License-Identifier: BSD-3-Clause
// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), one byte: the step
// of zlib's crc32 and ISA-L's crc32_gzip_refl on the uncomplemented state.
function [31:0] nr_crc32_byte(input [31:0] c, input [7:0] b);
    integer k;
    reg [31:0] r;
    begin
        r = c ^ {24'd0, b};
        for (k = 0; k < 8; k = k + 1)
            r = r[0] ? ((r >> 1) ^ 32'hEDB88320) : (r >> 1);
        nr_crc32_byte = r;
    end
endfunction
