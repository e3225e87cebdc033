// SPDX-License-Identifier: MIT
// Structure-aware help for libFuzzer: now and then the next input is a
// valid frame of a random header combination (tests/rtl/gen.h), possibly
// mutated, so that the deep paths (TCP/UDP over every L3 variant) are
// reached from the first run; otherwise libFuzzer's own mutations.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "gen.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
					  unsigned int seed)
{
	static const std::vector<gen::Frame> valid = [] {
		std::vector<gen::Frame> v;
		for (size_t payload : {0, 2, 30})
			for (gen::Frame &f : gen::combinations(payload))
				v.push_back(std::move(f));
		return v;
	}();
	std::mt19937_64 rng(seed);
	if (rng() % 8)
		return LLVMFuzzerMutate(data, size, max_size);
	gen::Frame f = valid[rng() % valid.size()];
	if (rng() % 2)
		f = gen::mutate(std::move(f), rng);
	const size_t n = std::min(f.size(), max_size);
	std::memcpy(data, f.data(), n);
	return n;
}
