// SPDX-License-Identifier: MIT
// Pins of a verilated (--sc) hsplit_parser, whatever its DATA_BYTES: the
// signals bound to every port and the conversions between them and the
// model's Parsed. V is the Verilator class (e.g. Vhsplit_parser).
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <systemc>
#include <type_traits>
#include <utility>

#include <verilated.h>
#include <verilated_vcd_c.h>

#include "nic/rtl_parser.h"

namespace devmemsim
{

template <class V> class HsplitPinsT : public HsplitPins
{
	// Port value types as Verilator chose them (bool, uint32_t, uint64_t
	// or sc_bv<N> by width).
	template <class P> using T = typename std::remove_reference_t<P>::data_type;
	using DataT = T<decltype(std::declval<V &>().in_data)>;
	using BytesT = T<decltype(std::declval<V &>().in_bytes)>;
	using AddrT = T<decltype(std::declval<V &>().out_src)>;

public:
	explicit HsplitPinsT(unsigned data_bytes) : db_(data_bytes), v_("hsplit_parser")
	{
		v_.clk(clk_);
		v_.rst(rst_);
		v_.in_valid(in_valid_);
		v_.in_data(in_data_);
		v_.in_bytes(in_bytes_);
		v_.in_last(in_last_);
		v_.out_valid(out_valid_);
		v_.out_l3(out_l3_);
		v_.out_l4(out_l4_);
		v_.out_vlans(out_vlans_);
		v_.out_l3_off(out_l3_off_);
		v_.out_l4_off(out_l4_off_);
		v_.out_split_off(out_split_off_);
		v_.out_l3_end(out_l3_end_);
		v_.out_fragment(out_fragment_);
		v_.out_csum_ok(out_csum_ok_);
		v_.out_proto(out_proto_);
		v_.out_src(out_src_);
		v_.out_dst(out_dst_);
		v_.out_sport(out_sport_);
		v_.out_dport(out_dport_);
		v_.out_err_l2(out_err_l2_);
		v_.out_err_l3(out_err_l3_);
		v_.out_err_l4(out_err_l4_);
	}
	~HsplitPinsT() override { trace_close(); }

	unsigned data_bytes() const override { return db_; }
	void clk(bool v) override { clk_.write(v); }
	void rst(bool v) override { rst_.write(v); }

	void beat(const uint8_t *p, unsigned bytes, bool last) override
	{
		if constexpr (std::is_integral_v<DataT>) {
			uint64_t w = 0;
			for (unsigned i = 0; i < bytes; i++)
				w |= uint64_t(p[i]) << (8 * i);
			data_ = static_cast<DataT>(w);
		} else {
			for (unsigned wi = 0; wi < (db_ + 3) / 4; wi++) {
				uint32_t w = 0;
				for (unsigned i = 0; i < 4 && 4 * wi + i < bytes; i++)
					w |= uint32_t(p[4 * wi + i]) << (8 * i);
				data_.set_word(static_cast<int>(wi), w);
			}
		}
		in_data_.write(data_);
		in_bytes_.write(static_cast<BytesT>(bytes));
		in_last_.write(last);
		in_valid_.write(true);
	}
	void idle() override
	{
		in_valid_.write(false);
		in_last_.write(false);
	}

	bool out_valid() const override { return out_valid_.read(); }

	void result(Parsed *p, RtlParseFlags *f) const override
	{
		Parsed r;
		r.l3 = static_cast<L3>(u(out_l3_));
		r.l4 = static_cast<L4>(u(out_l4_));
		r.vlans = static_cast<unsigned>(u(out_vlans_));
		r.l3_off = u(out_l3_off_);
		r.l4_off = u(out_l4_off_);
		r.split_off = u(out_split_off_);
		r.l3_end = u(out_l3_end_);
		r.fragment = u(out_fragment_);
		r.ipv4_csum_ok = u(out_csum_ok_);
		r.proto = static_cast<uint8_t>(u(out_proto_));
		addr(out_src_.read(), r.src.data());
		addr(out_dst_.read(), r.dst.data());
		r.sport = static_cast<uint16_t>(u(out_sport_));
		r.dport = static_cast<uint16_t>(u(out_dport_));
		if (p)
			*p = r;
		if (f) {
			f->err_l2 = u(out_err_l2_);
			f->err_l3 = u(out_err_l3_);
			f->err_l4 = u(out_err_l4_);
		}
	}

	void trace_open(const std::string &path) override
	{
		Verilated::traceEverOn(true);
		vcd_ = std::make_unique<VerilatedVcdC>();
		v_.trace(vcd_.get(), 99);
		vcd_->open(path.c_str());
	}
	void trace_dump(uint64_t time_ps) override
	{
		if (vcd_)
			vcd_->dump(time_ps);
	}
	void trace_flush() override
	{
		if (vcd_)
			vcd_->flush();
	}
	void trace_close() override
	{
		if (vcd_)
			vcd_->close();
		vcd_.reset();
	}

private:
	template <class S> static size_t u(const S &sig) { return static_cast<size_t>(sig.read()); }
	// Byte 0 of the address is in bits [127:120].
	static void addr(const AddrT &v, uint8_t *out)
	{
		for (int i = 0; i < 16; i++) {
			uint32_t w = v.get_word(3 - i / 4);
			out[i] = static_cast<uint8_t>(w >> (24 - 8 * (i % 4)));
		}
	}

	unsigned db_;
	DataT data_{};
	sc_core::sc_signal<bool> clk_{"clk"}, rst_{"rst"}, in_valid_{"in_valid"},
		in_last_{"in_last"};
	sc_core::sc_signal<DataT> in_data_{"in_data"};
	sc_core::sc_signal<BytesT> in_bytes_{"in_bytes"};
	sc_core::sc_signal<bool> out_valid_{"out_valid"}, out_fragment_{"out_fragment"},
		out_csum_ok_{"out_csum_ok"}, out_err_l2_{"out_err_l2"}, out_err_l3_{"out_err_l3"},
		out_err_l4_{"out_err_l4"};
	sc_core::sc_signal<uint32_t> out_l3_{"out_l3"}, out_l4_{"out_l4"}, out_vlans_{"out_vlans"},
		out_l3_off_{"out_l3_off"}, out_l4_off_{"out_l4_off"},
		out_split_off_{"out_split_off"}, out_l3_end_{"out_l3_end"}, out_proto_{"out_proto"},
		out_sport_{"out_sport"}, out_dport_{"out_dport"};
	sc_core::sc_signal<AddrT> out_src_{"out_src"}, out_dst_{"out_dst"};
	V v_;
	std::unique_ptr<VerilatedVcdC> vcd_;
};

} // namespace devmemsim
