// SPDX-License-Identifier: MIT
// The NIC's RSS registers (context 0's RSS_KEY/RSS_INDIR and the v1.6
// context window) and queue selection: the flow steering table, then the
// RSS context a rule names or context 0.
#include "devmemsim/nic_regs.h"
#include "nic/nic.h"
#include "nic/rss.h"

namespace devmemsim
{

namespace
{

bool in_range(uint32_t off, uint32_t first, uint32_t end)
{
	return off >= first && off < end;
}

uint32_t key_word(const RssContext &c, uint32_t word)
{
	const uint8_t *k = &c.key[4 * word];
	return k[0] | k[1] << 8 | k[2] << 16 | static_cast<uint32_t>(k[3]) << 24;
}

void set_key_word(RssContext &c, uint32_t word, uint32_t val)
{
	for (unsigned b = 0; b < 4; b++)
		c.key[4 * word + b] = static_cast<uint8_t>(val >> (8 * b));
}

bool indir_size_ok(uint32_t n)
{
	return n && n <= DMS_NIC_RSS_INDIR_SIZE && !(n & (n - 1));
}

// The IPv6 header's flow label (bits 19:0); 0 for IPv4.
uint32_t flow_label(const Parsed &p, const uint8_t *frame)
{
	if (p.l3 != L3::Ipv6)
		return 0;
	const uint8_t *ip = frame + p.l3_off;
	return (ip[1] & 0xfu) << 16 | ip[2] << 8 | ip[3];
}

} // namespace

// Registers of context c's key and table at the given bases: false if off
// is none of them.
static bool table_read(const RssContext &c, uint32_t off, uint32_t key0, uint32_t indir0,
		       uint32_t *val)
{
	if (in_range(off, key0, key0 + 4 * DMS_NIC_RSS_KEY_WORDS)) {
		*val = key_word(c, (off - key0) / 4);
		return true;
	}
	if (in_range(off, indir0, indir0 + 4 * DMS_NIC_RSS_INDIR_SIZE)) {
		*val = c.indir[(off - indir0) / 4];
		return true;
	}
	return false;
}

static bool table_write(RssContext &c, uint32_t off, uint32_t key0, uint32_t indir0, uint32_t val)
{
	if (in_range(off, key0, key0 + 4 * DMS_NIC_RSS_KEY_WORDS)) {
		set_key_word(c, (off - key0) / 4, val);
		return true;
	}
	if (in_range(off, indir0, indir0 + 4 * DMS_NIC_RSS_INDIR_SIZE)) {
		c.indir[(off - indir0) / 4] = val;
		return true;
	}
	return false;
}

bool Nic::rss_read(uint32_t off, uint32_t *val) const
{
	const RssContext &c = rss_[rss_sel_];
	if (table_read(rss_[0], off, DMS_NIC_REG_RSS_KEY(0), DMS_NIC_REG_RSS_INDIR(0), val) ||
	    table_read(c, off, DMS_NIC_REG_RSS_CTX_KEY(0), DMS_NIC_REG_RSS_CTX_INDIR(0), val))
		return true;
	if (in_range(off, DMS_NIC_REG_RSS_CTX_KEY_EXT(0),
		     DMS_NIC_REG_RSS_CTX_KEY_EXT(DMS_NIC_RSS_KEY_EXT_WORDS))) {
		*val = key_word(c,
				DMS_NIC_RSS_KEY_WORDS + (off - DMS_NIC_REG_RSS_CTX_KEY_EXT(0)) / 4);
		return true;
	}
	if (in_range(off, DMS_NIC_REG_RSS_CTX_FIELDS(0),
		     DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASSES))) {
		*val = c.fields[(off - DMS_NIC_REG_RSS_CTX_FIELDS(0)) / 4];
		return true;
	}
	switch (off) {
	case DMS_NIC_REG_RSS_CTX_SEL:
		*val = rss_sel_;
		return true;
	case DMS_NIC_REG_RSS_CTX_NUM:
		*val = DMS_NIC_RSS_CONTEXTS;
		return true;
	case DMS_NIC_REG_RSS_ERR:
		*val = static_cast<uint32_t>(c_.rss_err);
		return true;
	case DMS_NIC_REG_RSS_CTX_INDIR_SIZE:
		*val = c.indir_size;
		return true;
	case DMS_NIC_REG_RSS_CTX_XFRM:
		*val = c.xfrm;
		return true;
	case DMS_NIC_REG_RSS_NT_CTX:
		*val = (nt_stage_.rss ? DMS_NIC_RSS_NT_EN : 0) | nt_stage_.rss_ctx;
		return true;
	default:
		return false;
	}
}

// A refused write changes nothing; it is counted and traced.
void Nic::rss_refuse(uint32_t off, uint32_t val)
{
	c_.rss_err++;
	trace_("rss: 0x%04x = 0x%x refused (context %u)", off, val, rss_sel_);
}

bool Nic::rss_write(uint32_t off, uint32_t val)
{
	RssContext &c = rss_[rss_sel_];
	if (table_write(rss_[0], off, DMS_NIC_REG_RSS_KEY(0), DMS_NIC_REG_RSS_INDIR(0), val) ||
	    table_write(c, off, DMS_NIC_REG_RSS_CTX_KEY(0), DMS_NIC_REG_RSS_CTX_INDIR(0), val))
		return true;
	if (in_range(off, DMS_NIC_REG_RSS_CTX_KEY_EXT(0),
		     DMS_NIC_REG_RSS_CTX_KEY_EXT(DMS_NIC_RSS_KEY_EXT_WORDS))) {
		set_key_word(c, DMS_NIC_RSS_KEY_WORDS + (off - DMS_NIC_REG_RSS_CTX_KEY_EXT(0)) / 4,
			     val);
		return true;
	}
	if (in_range(off, DMS_NIC_REG_RSS_CTX_FIELDS(0),
		     DMS_NIC_REG_RSS_CTX_FIELDS(DMS_NIC_RSS_CLASSES))) {
		const unsigned cls = (off - DMS_NIC_REG_RSS_CTX_FIELDS(0)) / 4;
		c.fields[cls] = val & rss_class_fields(cls);
		return true;
	}
	switch (off) {
	case DMS_NIC_REG_RSS_CTX_SEL:
		if (val < DMS_NIC_RSS_CONTEXTS)
			rss_sel_ = val;
		else
			rss_refuse(off, val);
		return true;
	case DMS_NIC_REG_RSS_CTX_INDIR_SIZE:
		if (indir_size_ok(val))
			c.indir_size = val;
		else
			rss_refuse(off, val);
		return true;
	case DMS_NIC_REG_RSS_CTX_XFRM:
		if (val <= DMS_NIC_RSS_XFRM_SYM_OR_XOR)
			c.xfrm = val;
		else
			rss_refuse(off, val);
		return true;
	case DMS_NIC_REG_RSS_NT_CTX:
		nt_stage_.rss = val & DMS_NIC_RSS_NT_EN;
		nt_stage_.rss_ctx = static_cast<uint8_t>(val & DMS_NIC_RSS_NT_CTX_MASK);
		return true;
	default:
		return false;
	}
}

// The rule's context must exist for NT_COMMIT to take the staged rule.
bool Nic::rss_rule_ok(const NtupleRule &r)
{
	if (!r.rss || r.rss_ctx < DMS_NIC_RSS_CONTEXTS)
		return true;
	rss_refuse(DMS_NIC_REG_RSS_NT_CTX, r.rss_ctx);
	return false;
}

// The first matching ntuple rule picks a queue, or a context whose table
// entry is added to its queue; without one, context 0's table. The hash a
// completion reports is the one of the context that steered the frame.
unsigned Nic::select_queue(const Parsed &p, const uint8_t *frame, uint32_t *hash, bool *hashed)
{
	const NtupleRule *rule = nullptr;
	if (rx_ctrl_ & DMS_NIC_RX_NTUPLE) {
		for (const NtupleRule &r : ntuple_)
			if (ntuple_match(r, p)) {
				rule = &r;
				break;
			}
	}
	const RssContext &ctx = rss_[rule && rule->rss ? rule->rss_ctx : 0];
	const bool rss = (rx_ctrl_ & DMS_NIC_RX_RSS) && p.l3 != L3::None;
	*hashed = rss && rss_hash(ctx, p, flow_label(p, frame), hash);
	const uint32_t entry = rss_entry(ctx, *hashed ? *hash : 0);
	uint64_t qi = 0;
	if (rule)
		qi = uint64_t(rule->queue) + (rule->rss ? entry : 0);
	else if (rss)
		qi = entry;
	return qi < nq_ ? static_cast<unsigned>(qi) : 0;
}

} // namespace devmemsim
