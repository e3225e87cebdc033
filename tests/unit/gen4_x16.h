// SPDX-License-Identifier: MIT
// Payload rates of one direction of a Gen4 x16 link, derived here rather
// than taken from pcie/link.cc, for the fabric tests to check it against:
// the raw rate after 128b/130b, less Ack/UpdateFC DLLPs (8 bytes per 168
// each) and SKPs (4 per 1538).
#pragma once

namespace gen4_x16
{

inline const double kTlpBps = 16e9 * 16 * 128 / 130 / 8 * (1 - 16.0 / 168 - 4.0 / 1538);
// 64-bit writes at MPS 256: 256 payload bytes per 280 on the wire.
inline const double kLinkBps = kTlpBps * 256 / 280;
// Read completions: 64-byte RCB pieces with 12-byte headers and 8 of framing.
inline const double kCplBps = kTlpBps * 64 / (64 + 20);

} // namespace gen4_x16
