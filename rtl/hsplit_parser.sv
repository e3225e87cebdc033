// SPDX-License-Identifier: MIT
//
// hsplit_parser: the NIC's header-split parser as a streaming, fully
// pipelined block. It computes, for every frame, exactly what the
// behavioural model's parse_frame() (sysc-model/src/nic/parser.cc) does:
// VLAN tags, L3/L4 type and offsets, end of the IP packet, IPv4 fragment
// and header-checksum status, the 5-tuple and the header-split offset,
// with the same truncation and malformed-input rules.
//
// Input stream (no backpressure: one beat per cycle is always accepted)
//   in_valid   a beat is present
//   in_data    DATA_BYTES bytes; frame byte (beat*DATA_BYTES + i) is in
//              in_data[8*i +: 8] (lane 0 in the low bits, AXI4-Stream order)
//   in_bytes   bytes of the beat that belong to the frame (0..DATA_BYTES).
//              Every beat but the last must be full (DATA_BYTES); the last
//              may be partial and may carry 0 bytes (a 0-byte frame).
//   in_last    the beat ends the frame
// A new frame may start on the cycle after a last beat (back to back).
//
// Results, one set per frame, valid for the single cycle out_valid is high:
//   LATENCY = 3: out_valid rises on the 3rd rising edge after the edge that
//   samples the last beat (in_valid && in_last). A frame of B beats whose
//   first beat is sampled on edge 1 has its result registered on edge
//   B + 3, so it takes B + 3 clock cycles; the block accepts a new frame
//   every cycle (fully pipelined, no stalls).
//   Pipeline registers: (1) on the last beat's own edge, the captured header
//   bytes merged with that beat and the frame length; (2) L2: VLAN tags,
//   Ethertype, 74-byte L3 window; (3) L3: IPv4/IPv6 checks, checksum partial
//   sums, L4 fields; (4 = outputs) L4: TCP/UDP checks, split offset,
//   checksum fold.
//
//   out_l3        0 none, 1 IPv4, 2 IPv6
//   out_l4        0 none, 1 TCP, 2 UDP
//   out_vlans     802.1Q / 802.1ad tags consumed (0..2)
//   out_l3_off    start of the IP header (0 if the VLAN tags are truncated)
//   out_l4_off    start of the L4 header: set when the IP header is valid,
//                 not a fragment, and says TCP or UDP (even if the L4 header
//                 is then cut short); else 0
//   out_split_off end of the TCP/UDP header, 0: the frame does not split
//   out_l3_end    end of the IP packet (IPv4 total length, IPv6 40 + payload)
//   out_fragment  IPv4 MF flag or fragment offset set
//   out_csum_ok   IPv4 header checksum good (1 unless the frame is IPv4)
//   out_proto     IPv4 protocol / IPv6 next header
//   out_src/dst   addresses in network order as a big-endian number: byte 0
//                 of the address in bits [127:120]; IPv4 in [127:96], the
//                 rest 0
//   out_sport/dport  TCP/UDP ports
//   out_err_l2    frame shorter than 14 bytes or a VLAN tag is cut short
//   out_err_l3    Ethertype IPv4/IPv6 but the IP header is invalid or cut
//                 short (bad version, IHL < 5, lengths beyond the frame)
//   out_err_l4    IP says TCP/UDP (not a fragment) but the L4 header is cut
//                 short by the IP length or the TCP data offset is < 5
//
// Only bytes 12..95 are stored (the deepest byte read is
// 22 + 60 + 12 = 94: QinQ, IPv4 with 40 option bytes, TCP data offset); the
// rest of the frame only counts towards its length, kept in a 17-bit
// counter that saturates (every length compared is < 2^17).
//
// Synthesizable: no delays, no initial blocks; synchronous active-high
// reset of the control state only.

`timescale 1ns / 1ps
// The precision (1 ps) equals SystemC's default time resolution, which a
// verilated --sc model requires; the block itself has no delays.

module hsplit_parser #(
    parameter int DATA_BYTES = 64
) (
    input  logic                                 clk,
    input  logic                                 rst,
    input  logic                                 in_valid,
    input  logic [DATA_BYTES*8-1:0]              in_data,
    input  logic [$clog2(DATA_BYTES+1)-1:0]      in_bytes,
    input  logic                                 in_last,
    output logic                                 out_valid,
    output logic [1:0]                           out_l3,
    output logic [1:0]                           out_l4,
    output logic [1:0]                           out_vlans,
    output logic [4:0]                           out_l3_off,
    output logic [6:0]                           out_l4_off,
    output logic [7:0]                           out_split_off,
    output logic [16:0]                          out_l3_end,
    output logic                                 out_fragment,
    output logic                                 out_csum_ok,
    output logic [7:0]                           out_proto,
    output logic [127:0]                         out_src,
    output logic [127:0]                         out_dst,
    output logic [15:0]                          out_sport,
    output logic [15:0]                          out_dport,
    output logic                                 out_err_l2,
    output logic                                 out_err_l3,
    output logic                                 out_err_l4
);

  localparam int HDR_LO = 12;  // first byte kept: the Ethertype (MACs are not needed)
  localparam int HDR_BYTES = 96;  // end of the bytes kept for parsing
  localparam int LEN_W = 17;  // frame length counter (saturating)
  // Beats that carry header bytes, and a beat counter that stops there.
  localparam int HDR_BEATS = (HDR_BYTES + DATA_BYTES - 1) / DATA_BYTES;
  localparam int BEAT_W = $clog2(HDR_BEATS + 1);
  localparam int W3 = 74;  // L3 window: 60-byte IPv4 header + 14 L4 bytes
  localparam logic [LEN_W-1:0] LEN_MAX = {LEN_W{1'b1}};

  localparam logic [1:0] L3_NONE = 2'd0, L3_IPV4 = 2'd1, L3_IPV6 = 2'd2;
  localparam logic [1:0] L4_NONE = 2'd0, L4_TCP = 2'd1, L4_UDP = 2'd2;
  localparam logic [15:0] ETH_IPV4 = 16'h0800, ETH_IPV6 = 16'h86dd;
  localparam logic [15:0] ETH_VLAN = 16'h8100, ETH_QINQ = 16'h88a8;
  localparam logic [7:0] IP_TCP = 8'd6, IP_UDP = 8'd17;

  // ------------------------------------------------------------------
  // Capture: header bytes of the frame in progress and its length.

  logic [HDR_BYTES-1:HDR_LO][7:0] hdr_q;  // indexed by frame byte
  logic [BEAT_W-1:0] beat_q;
  logic [LEN_W-1:0] len_q;

  logic [LEN_W:0] len_sum;
  logic [LEN_W-1:0] len_next;
  assign len_sum  = {1'b0, len_q} + (LEN_W + 1)'(in_bytes);
  assign len_next = len_sum[LEN_W] ? LEN_MAX : len_sum[LEN_W-1:0];

  // Header bytes as they stand once this beat is in: beat b carries frame
  // bytes [b*DATA_BYTES, (b+1)*DATA_BYTES), of which [HDR_LO, HDR_BYTES)
  // are kept.
  logic [HDR_BYTES-1:HDR_LO][7:0] hdr_new;
  for (genvar b = 0; b < HDR_BEATS; b++) begin : g_beat
    localparam int LO = (b * DATA_BYTES > HDR_LO) ? b * DATA_BYTES : HDR_LO;
    localparam int HI = ((b + 1) * DATA_BYTES < HDR_BYTES) ? (b + 1) * DATA_BYTES : HDR_BYTES;
    if (HI > LO) begin : g_bytes
      assign hdr_new[HI-1:LO] = (beat_q == BEAT_W'(b)) ?
          in_data[8*(HI-b*DATA_BYTES)-1:8*(LO-b*DATA_BYTES)] : hdr_q[HI-1:LO];
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      beat_q <= '0;
      len_q  <= '0;
    end else if (in_valid) begin
      if (in_last) begin
        beat_q <= '0;
        len_q  <= '0;
      end else begin
        if (beat_q != BEAT_W'(HDR_BEATS)) beat_q <= beat_q + 1'b1;
        len_q <= len_next;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (in_valid) hdr_q <= hdr_new;
  end

  // Lanes that never carry a stored byte (the MAC addresses, or bytes past
  // HDR_BYTES of a wide beat) are only counted.
  function automatic bit lane_used(input int lane);
    for (int b = lane; b < HDR_BYTES; b += DATA_BYTES) if (b >= HDR_LO) return 1'b1;
    return 1'b0;
  endfunction
  for (genvar i = 0; i < DATA_BYTES; i++) begin : g_lane
    if (!lane_used(i)) begin : g_unused
      /* verilator lint_off UNUSEDSIGNAL */
      logic unused_lane;
      assign unused_lane = ^in_data[8*i+:8];
      /* verilator lint_on UNUSEDSIGNAL */
    end
  end

  // ------------------------------------------------------------------
  // Stage 1: the frame's header bytes and length. Bytes beyond the end of
  // a short frame are stale (from earlier frames): every use of a byte
  // below is qualified by a length check that puts it inside the frame,
  // as in parse_frame(), and the differential tests would see otherwise.

  logic s1_valid;
  logic [HDR_BYTES-1:HDR_LO][7:0] s1_hdr;
  logic [LEN_W-1:0] s1_len;

  always_ff @(posedge clk) begin
    if (rst) s1_valid <= 1'b0;
    else s1_valid <= in_valid && in_last;
  end

  always_ff @(posedge clk) begin
    if (in_valid && in_last) begin
      s1_hdr <= hdr_new;
      s1_len <= len_next;
    end
  end

  // ------------------------------------------------------------------
  // Stage 2 logic: L2. Up to two VLAN tags (0x8100 or 0x88a8, in any
  // order); a tag needs its 4 bytes and the next Ethertype present.

  function automatic logic [15:0] be16(input logic [7:0] hi, input logic [7:0] lo);
    return {hi, lo};
  endfunction

  logic [15:0] t0, t1, t2;
  logic t0_tag, t1_tag;
  logic l2_ok;  // Ethertype reached: l3_off is set
  logic [1:0] l2_vlans;
  logic [1:0] l2_sel;  // 0: L3 at 14, 1: at 18, 2: at 22
  logic [15:0] l2_type;

  assign t0 = be16(s1_hdr[12], s1_hdr[13]);
  assign t1 = be16(s1_hdr[16], s1_hdr[17]);
  assign t2 = be16(s1_hdr[20], s1_hdr[21]);
  assign t0_tag = (t0 == ETH_VLAN) || (t0 == ETH_QINQ);
  assign t1_tag = (t1 == ETH_VLAN) || (t1 == ETH_QINQ);

  always_comb begin
    l2_ok = 1'b0;
    l2_vlans = 2'd0;
    l2_sel = 2'd0;
    l2_type = t0;
    if (s1_len >= LEN_W'(14)) begin
      if (!t0_tag) begin
        l2_ok = 1'b1;
      end else if (s1_len >= LEN_W'(18)) begin
        l2_vlans = 2'd1;
        l2_sel   = 2'd1;
        l2_type  = t1;
        if (!t1_tag) begin
          l2_ok = 1'b1;
        end else if (s1_len >= LEN_W'(22)) begin
          l2_ok = 1'b1;
          l2_vlans = 2'd2;
          l2_sel = 2'd2;
          l2_type = t2;
        end
      end
    end
  end

  logic [W3-1:0][7:0] l2_w3;
  always_comb begin
    case (l2_sel)
      2'd1: l2_w3 = s1_hdr[18+:W3];
      2'd2: l2_w3 = s1_hdr[22+:W3];
      default: l2_w3 = s1_hdr[14+:W3];
    endcase
  end

  logic s2_valid;
  logic [LEN_W-1:0] s2_len;
  logic s2_l2_ok, s2_is4, s2_is6;
  logic [1:0] s2_vlans;
  logic [4:0] s2_l3_off;
  logic [W3-1:0][7:0] s2_w3;

  always_ff @(posedge clk) begin
    if (rst) s2_valid <= 1'b0;
    else s2_valid <= s1_valid;
  end

  always_ff @(posedge clk) begin
    if (s1_valid) begin
      s2_len <= s1_len;
      s2_l2_ok <= l2_ok;
      s2_is4 <= l2_ok && l2_type == ETH_IPV4;
      s2_is6 <= l2_ok && l2_type == ETH_IPV6;
      s2_vlans <= l2_vlans;
      s2_l3_off <= l2_ok ? 5'd14 + {l2_sel, 2'b00} : 5'd0;
      s2_w3 <= l2_w3;
    end
  end

  // ------------------------------------------------------------------
  // Stage 3 logic: L3.

  logic [LEN_W-1:0] off3;
  logic [5:0] ihl;
  logic [15:0] v4_total, v6_payload;
  logic [13:0] v4_frag;  // MF flag and fragment offset
  logic v4_ok, v6_ok;
  logic [LEN_W-1:0] l3_end;

  assign off3 = LEN_W'(s2_l3_off);
  assign ihl = {s2_w3[0][3:0], 2'b00};
  assign v4_total = be16(s2_w3[2], s2_w3[3]);
  assign v4_frag = {s2_w3[6][5:0], s2_w3[7]};
  assign v6_payload = be16(s2_w3[4], s2_w3[5]);

  assign v4_ok = s2_is4 && s2_len >= off3 + LEN_W'(20) && s2_w3[0][7:4] == 4'd4 &&
      ihl >= 6'd20 && s2_len >= off3 + LEN_W'(ihl) && v4_total >= 16'(ihl) &&
      s2_len >= off3 + LEN_W'(v4_total);
  assign v6_ok = s2_is6 && s2_len >= off3 + LEN_W'(40) && s2_w3[0][7:4] == 4'd6 &&
      s2_len >= off3 + LEN_W'(40) + LEN_W'(v6_payload);
  assign l3_end = v4_ok ? off3 + LEN_W'(v4_total) :
      v6_ok ? off3 + LEN_W'(40) + LEN_W'(v6_payload) : '0;

  logic l3_frag;
  logic [7:0] l3_proto;
  logic [127:0] l3_src, l3_dst;
  assign l3_frag = v4_ok && (v4_frag[13] || v4_frag[12:0] != 13'd0);
  assign l3_proto = v4_ok ? s2_w3[9] : v6_ok ? s2_w3[6] : 8'd0;
  always_comb begin
    l3_src = '0;
    l3_dst = '0;
    if (v4_ok) begin
      l3_src[127:96] = {s2_w3[12], s2_w3[13], s2_w3[14], s2_w3[15]};
      l3_dst[127:96] = {s2_w3[16], s2_w3[17], s2_w3[18], s2_w3[19]};
    end else if (v6_ok) begin
      for (int i = 0; i < 16; i++) begin
        l3_src[127-8*i-:8] = s2_w3[8+i];
        l3_dst[127-8*i-:8] = s2_w3[24+i];
      end
    end
  end

  // IPv4 header checksum over IHL*4 bytes: 5 partial sums of 6 words,
  // words beyond the header masked out.
  logic [4:0][18:0] l3_psum;
  always_comb begin
    for (int g = 0; g < 5; g++) begin
      l3_psum[g] = '0;
      for (int k = 6 * g; k < 6 * g + 6; k++)
        if (k < 2 * int'(s2_w3[0][3:0])) l3_psum[g] = l3_psum[g] + 19'(be16(s2_w3[2*k], s2_w3[2*k+1]));
    end
  end

  // L4 fields from the end of the IP header (IHL*4, or 40): ports (bytes
  // 0..3) and the TCP data offset (high nibble of byte 12).
  logic [3:0] l4_words;
  logic [31:0] l3_ports;
  logic [3:0] l3_doff;
  assign l4_words = v6_ok ? 4'd10 : s2_w3[0][3:0];
  always_comb begin
    l3_ports = '0;
    l3_doff = '0;
    for (int k = 5; k <= 15; k++)
      if (l4_words == 4'(k)) begin
        l3_ports = {s2_w3[4*k], s2_w3[4*k+1], s2_w3[4*k+2], s2_w3[4*k+3]};
        l3_doff = s2_w3[4*k+12][7:4];
      end
  end

  logic l3_tcp, l3_udp;
  assign l3_tcp = (v4_ok || v6_ok) && !l3_frag && l3_proto == IP_TCP;
  assign l3_udp = (v4_ok || v6_ok) && !l3_frag && l3_proto == IP_UDP;

  logic s3_valid;
  logic [1:0] s3_vlans;
  logic [4:0] s3_l3_off;
  logic [1:0] s3_l3;
  logic [LEN_W-1:0] s3_l3_end;
  logic s3_frag, s3_tcp, s3_udp, s3_err_l2, s3_err_l3;
  logic [7:0] s3_proto;
  logic [127:0] s3_src, s3_dst;
  logic [4:0][18:0] s3_psum;
  logic [6:0] s3_l4_off;
  logic [31:0] s3_ports;
  logic [3:0] s3_doff;

  always_ff @(posedge clk) begin
    if (rst) s3_valid <= 1'b0;
    else s3_valid <= s2_valid;
  end

  always_ff @(posedge clk) begin
    if (s2_valid) begin
      s3_vlans <= s2_vlans;
      s3_l3_off <= s2_l3_off;
      s3_l3 <= v4_ok ? L3_IPV4 : v6_ok ? L3_IPV6 : L3_NONE;
      s3_l3_end <= l3_end;
      s3_frag <= l3_frag;
      s3_proto <= l3_proto;
      s3_src <= l3_src;
      s3_dst <= l3_dst;
      s3_psum <= l3_psum;
      s3_tcp <= l3_tcp;
      s3_udp <= l3_udp;
      s3_l4_off <= 7'(s2_l3_off) + {1'b0, l4_words, 2'b00};
      s3_ports <= l3_ports;
      s3_doff <= l3_doff;
      s3_err_l2 <= !s2_l2_ok;
      s3_err_l3 <= (s2_is4 || s2_is6) && !v4_ok && !v6_ok;
    end
  end

  // ------------------------------------------------------------------
  // Stage 4 logic: L4 and the checksum fold.

  logic [LEN_W-1:0] off4;
  logic [5:0] doff;
  logic tcp_ok, udp_ok;
  assign off4 = LEN_W'(s3_l4_off);
  assign doff = {s3_doff, 2'b00};
  assign tcp_ok = s3_tcp && s3_l3_end >= off4 + LEN_W'(20) && doff >= 6'd20 &&
      s3_l3_end >= off4 + LEN_W'(doff);
  assign udp_ok = s3_udp && s3_l3_end >= off4 + LEN_W'(8);

  logic [20:0] csum_sum;
  logic [16:0] csum_f1;
  logic [15:0] csum_f2;
  assign csum_sum = 21'(s3_psum[0]) + 21'(s3_psum[1]) + 21'(s3_psum[2]) +
      21'(s3_psum[3]) + 21'(s3_psum[4]);
  assign csum_f1 = 17'(csum_sum[15:0]) + 17'(csum_sum[20:16]);
  assign csum_f2 = csum_f1[15:0] + 16'(csum_f1[16]);

  always_ff @(posedge clk) begin
    if (rst) out_valid <= 1'b0;
    else out_valid <= s3_valid;
  end

  always_ff @(posedge clk) begin
    if (s3_valid) begin
      out_l3 <= s3_l3;
      out_l4 <= tcp_ok ? L4_TCP : udp_ok ? L4_UDP : L4_NONE;
      out_vlans <= s3_vlans;
      out_l3_off <= s3_l3_off;
      out_l4_off <= (s3_tcp || s3_udp) ? s3_l4_off : 7'd0;
      out_split_off <= tcp_ok ? 8'(s3_l4_off) + 8'(doff) : udp_ok ? 8'(s3_l4_off) + 8'd8 : 8'd0;
      out_l3_end <= s3_l3_end;
      out_fragment <= s3_frag;
      out_csum_ok <= s3_l3 != L3_IPV4 || csum_f2 == 16'hffff;
      out_proto <= s3_proto;
      out_src <= s3_src;
      out_dst <= s3_dst;
      out_sport <= (tcp_ok || udp_ok) ? s3_ports[31:16] : 16'd0;
      out_dport <= (tcp_ok || udp_ok) ? s3_ports[15:0] : 16'd0;
      out_err_l2 <= s3_err_l2;
      out_err_l3 <= s3_err_l3;
      out_err_l4 <= (s3_tcp || s3_udp) && !tcp_ok && !udp_ok;
    end
  end

endmodule
