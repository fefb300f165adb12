// tests/test_util.hpp: helpers shared by the tests: seeded data, element-type
// conversions, the CPU reference frame, and a seed that every test prints so
// a failure reproduces.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cpu/frame_codec.hpp"
#include "gen/generators.hpp"
#include "vlec/types.hpp"

namespace vlec::test {

// The base seed: VLEC_TEST_SEED in the environment overrides it.
inline uint64_t base_seed() {
  static const uint64_t seed = [] {
    const char* s = std::getenv("VLEC_TEST_SEED");
    return s ? std::strtoull(s, nullptr, 0) : uint64_t{20261121};
  }();
  return seed;
}

// A per-test seed derived from the base seed and a salt, printed so a
// failure reproduces (VLEC_TEST_SEED=<base> reruns it).
inline uint64_t seed_for(uint64_t salt) {
  const uint64_t s = base_seed() * 1000003 + salt;
  std::cout << "[   seed   ] " << s << std::endl;
  return s;
}

// The CPU backend's frame of `data` (elements of type t): the reference the
// GPU encoder tests compare against byte for byte.
inline std::vector<uint8_t> cpu_frame(const std::vector<uint8_t>& data, DType t, uint32_t chunk,
                                      Codec codec = Codec::rle, unsigned limit = 0) {
  cpu::FrameParams p;
  p.codec = codec;
  p.dtype = t;
  p.chunk_elements = chunk;
  p.max_code_length = limit;
  return cpu::compress_frame(data.data(), data.size() / dtype_bytes(t), p);
}

// Widen or narrow little-endian elements from one width to another (values are
// zero-extended or truncated), so one generator feeds every element type.
inline std::vector<uint8_t> convert(const std::vector<uint8_t>& in, unsigned from, unsigned to) {
  return gen::convert_width(in, from, to);
}

// `elements` elements of type `t` from generator `name` with `seed`
// (gen::make_elements: the generator's own elements converted to `t`).
inline std::vector<uint8_t> sample(const std::string& name, std::size_t elements, DType t, uint64_t seed) {
  return gen::make_elements(name, elements, t, seed);
}

}  // namespace vlec::test
