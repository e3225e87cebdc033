// SPDX-License-Identifier: MIT
#include "nic/rss.h"

#include "nic/steer.h"

namespace devmemsim
{

namespace
{

constexpr uint32_t kAddrs = DMS_NIC_RSS_F_IP_SRC | DMS_NIC_RSS_F_IP_DST;
constexpr uint32_t kPorts = DMS_NIC_RSS_F_L4_SRC | DMS_NIC_RSS_F_L4_DST;

bool is_ipv6(unsigned cls)
{
	return cls >= DMS_NIC_RSS_CLASS_TCP6;
}

bool has_ports(unsigned cls)
{
	return cls != DMS_NIC_RSS_CLASS_IP4 && cls != DMS_NIC_RSS_CLASS_IP6;
}

// Append one source/destination pair of n bytes each, as the context's
// transform says when both halves are selected, else what is selected.
size_t put_pair(uint8_t *out, const uint8_t *src, const uint8_t *dst, size_t n, bool want_src,
		bool want_dst, uint32_t xfrm)
{
	size_t len = 0;
	if (want_src && want_dst && xfrm != DMS_NIC_RSS_XFRM_NONE) {
		for (size_t i = 0; i < n; i++) {
			uint8_t x = src[i] ^ dst[i];
			out[i] = xfrm == DMS_NIC_RSS_XFRM_SYM_OR_XOR ? src[i] | dst[i] : x;
			out[n + i] = x;
		}
		return 2 * n;
	}
	for (size_t i = 0; want_src && i < n; i++)
		out[len++] = src[i];
	for (size_t i = 0; want_dst && i < n; i++)
		out[len++] = dst[i];
	return len;
}

} // namespace

uint32_t rss_class_fields(unsigned cls)
{
	if (cls >= DMS_NIC_RSS_CLASSES)
		return 0;
	return kAddrs | (has_ports(cls) ? kPorts : 0) |
	       (is_ipv6(cls) ? DMS_NIC_RSS_F_FLOW_LABEL : 0);
}

RssContext::RssContext()
{
	for (unsigned cls = 0; cls < DMS_NIC_RSS_CLASSES; cls++)
		fields[cls] = rss_class_fields(cls) & (kAddrs | kPorts);
}

bool rss_class(const Parsed &p, unsigned *cls)
{
	if (p.l3 == L3::None)
		return false;
	const bool v6 = p.l3 == L3::Ipv6;
	if (p.l4 == L4::Tcp)
		*cls = v6 ? DMS_NIC_RSS_CLASS_TCP6 : DMS_NIC_RSS_CLASS_TCP4;
	else if (p.l4 == L4::Udp)
		*cls = v6 ? DMS_NIC_RSS_CLASS_UDP6 : DMS_NIC_RSS_CLASS_UDP4;
	else
		*cls = v6 ? DMS_NIC_RSS_CLASS_IP6 : DMS_NIC_RSS_CLASS_IP4;
	return true;
}

size_t rss_input(const RssContext &c, const Parsed &p, uint32_t flow_label,
		 uint8_t (&in)[kRssInputMax])
{
	unsigned cls;
	if (!rss_class(p, &cls))
		return 0;
	const uint32_t f = c.fields[cls] & rss_class_fields(cls);
	const size_t alen = is_ipv6(cls) ? 16 : 4;
	size_t n = put_pair(in, p.src.data(), p.dst.data(), alen, f & DMS_NIC_RSS_F_IP_SRC,
			    f & DMS_NIC_RSS_F_IP_DST, c.xfrm);
	const uint8_t sport[2] = {static_cast<uint8_t>(p.sport >> 8),
				  static_cast<uint8_t>(p.sport)};
	const uint8_t dport[2] = {static_cast<uint8_t>(p.dport >> 8),
				  static_cast<uint8_t>(p.dport)};
	n += put_pair(in + n, sport, dport, 2, f & DMS_NIC_RSS_F_L4_SRC, f & DMS_NIC_RSS_F_L4_DST,
		      c.xfrm);
	if (f & DMS_NIC_RSS_F_FLOW_LABEL) {
		const uint32_t label = flow_label & 0xfffff;
		for (int shift = 24; shift >= 0; shift -= 8)
			in[n++] = static_cast<uint8_t>(label >> shift);
	}
	return n;
}

bool rss_hash(const RssContext &c, const Parsed &p, uint32_t flow_label, uint32_t *hash)
{
	uint8_t in[kRssInputMax];
	const size_t n = rss_input(c, p, flow_label, in);
	if (!n)
		return false;
	*hash = toeplitz(c.key.data(), c.key.size(), in, n);
	return true;
}

} // namespace devmemsim
