// gen/generators.hpp: deterministic sample data for tests and benchmarks.
//
// Each generator imitates one kind of data an entropy coder meets in practice
// (skewed bytes, byte runs, text, SZ-style quantization codes, a sparse density
// volume, incompressible noise). Output depends only on (name, bytes, seed):
// the generators use their own PRNG and samplers rather than
// std::*_distribution, whose output differs between standard libraries, so a
// benchmark or a failing test can be reproduced on any machine from its seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vlec/types.hpp"

namespace vlec::gen {

struct Sample {
  std::string name;            // generator name
  vlec::DType dtype;           // element type of `bytes`
  std::vector<uint8_t> bytes;  // little-endian elements
  size_t elements() const { return bytes.size() / static_cast<size_t>(dtype); }
};

struct GeneratorInfo {
  std::string name;
  vlec::DType dtype;
  std::string description;
};

// All generators, in a fixed order (the order the CLI and benchmarks list them).
const std::vector<GeneratorInfo>& generators();

// Generates `bytes` bytes rounded down to whole elements. The volume is the
// exception: it is always a cube, of side 512 when bytes == 0 and otherwise of
// the largest side n with n^3 <= bytes. Throws std::invalid_argument for an
// unknown name. Thread-safe: no global mutable state.
Sample make(const std::string& name, size_t bytes, uint64_t seed);

// Little-endian elements of `from` bytes widened or narrowed to `to` bytes
// (zero-extended or truncated), so that one generator feeds every element type.
std::vector<uint8_t> convert_width(const std::vector<uint8_t>& in, unsigned from, unsigned to);

// `elements` elements of type `t` from generator `name` with `seed`: the
// generator's own elements converted to `t` (u16 codes stay below 65,536 as
// u32); the volume's cube is made at least that large, then cut. What the
// tests, the fuzz seeds and the benchmarks feed the codecs. Throws
// std::invalid_argument for an unknown name.
std::vector<uint8_t> make_elements(const std::string& name, size_t elements, vlec::DType t, uint64_t seed);

}  // namespace vlec::gen
