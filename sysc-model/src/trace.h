// SPDX-License-Identifier: MIT
// The model's trace hook: what a device did and why it dropped something,
// as one line of text per event, handed to the host (QEMU turns it into
// the devmemsim_model trace event). Formatting only happens while a sink
// is attached, so a disabled trace costs one branch.
#pragma once

#include <cstdarg>
#include <cstdio>

namespace devmemsim
{

// Where trace lines go: set through the C ABI (dms_node_set_trace).
struct TraceSink {
	void (*fn)(void *opaque, unsigned dev, const char *line) = nullptr;
	void *opaque = nullptr;
};

// A device's tracer: dev is its enum dms_dev value.
class Tracer
{
public:
	explicit Tracer(unsigned dev) : dev_(dev) {}

	void attach(const TraceSink *sink) { sink_ = sink; }
	bool enabled() const { return sink_ && sink_->fn; }

	void operator()(const char *fmt, ...) const __attribute__((format(printf, 2, 3)))
	{
		if (!enabled())
			return;
		char line[256];
		va_list ap;
		va_start(ap, fmt);
		std::vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		sink_->fn(sink_->opaque, dev_, line);
	}

private:
	unsigned dev_;
	const TraceSink *sink_ = nullptr;
};

} // namespace devmemsim
