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
  const std::size_t n = in.size() / from;
  std::vector<uint8_t> out(n * to, 0);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out.data() + i * to, in.data() + i * from, from < to ? from : to);
  return out;
}

inline DType generator_dtype(const std::string& name) {
  for (const gen::GeneratorInfo& g : gen::generators())
    if (g.name == name) return g.dtype;
  ADD_FAILURE() << "unknown generator " << name;
  return DType::u8;
}

// `elements` elements of type `t` from generator `name` with `seed`: the
// generator's own elements converted to `t` (u16 codes stay below 65,536 as u32).
inline std::vector<uint8_t> sample(const std::string& name, std::size_t elements, DType t, uint64_t seed) {
  const unsigned gw = static_cast<unsigned>(dtype_bytes(generator_dtype(name)));
  std::size_t bytes = elements * gw;
  if (name == "volume") {  // the volume is a cube: make one at least as large, then cut it
    std::size_t side = 1;
    while (side * side * side < elements) ++side;
    bytes = side * side * side;
  }
  std::vector<uint8_t> data = gen::make(name, bytes, seed).bytes;
  data.resize(elements * gw);
  return convert(data, gw, static_cast<unsigned>(dtype_bytes(t)));
}

}  // namespace vlec::test
