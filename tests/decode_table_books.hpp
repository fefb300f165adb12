// tests/decode_table_books.hpp: codebooks that exercise every shape of the
// GPU decoder's tables (K = 4, 2 and 1; pair tables kept and dropped; codes
// longer than the single table; one symbol; the largest alphabet; the
// longest codes), for the tests of huffman::plan_gpu_decode_tables (CPU) and
// of the tables the GPU builds (cuda/decode_tables_gpu.hpp).
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "huffman/codebook.hpp"

namespace vlec::test {

struct NamedBook {
  std::string name;
  huffman::Codebook book;
};

inline std::vector<NamedBook> decode_table_books(std::mt19937_64& rng) {
  std::vector<NamedBook> books;
  auto add = [&](const std::string& name, const huffman::Histogram& h, unsigned limit = 0) {
    books.push_back({name + (limit ? " limit " + std::to_string(limit) : ""), huffman::build_codebook(h, limit)});
  };
  huffman::Histogram skewed(256, 0);
  for (unsigned s = 0; s < 256; ++s) skewed[s] = 1 + (uint64_t{1} << 40 >> std::min(40u, s / 2 + s % 3));
  add("skewed bytes", skewed);
  for (unsigned limit : {8u, 9u, 11u, 12u, 16u, 24u}) add("skewed bytes", skewed, limit);
  for (uint32_t bins : {1024u, 4096u, 65536u}) {
    huffman::Histogram q(bins, 0);
    for (uint32_t s = 0; s < bins; ++s) {
      const uint32_t d = s > bins / 2 ? s - bins / 2 : bins / 2 - s;
      q[s] = 1 + static_cast<uint64_t>(1e12 * std::exp(-0.02 * d * (bins == 1024 ? 8 : 1)));
    }
    add("quant" + std::to_string(bins), q);
  }
  // Fibonacci counts: the deepest trees, clamped by the limiter to 24 bits.
  huffman::Histogram fib(60, 0);
  uint64_t a = 1, b = 1;
  for (auto& c : fib) c = a, a = b, b += c;
  add("fibonacci", fib);
  add("fibonacci", fib, 17);
  // Random counts over many alphabet sizes (odd ones, gaps, the largest).
  for (uint32_t n : {2u, 3u, 5u, 17u, 255u, 256u, 300u, 1000u, 4097u, 65536u}) {
    huffman::Histogram h(n, 0);
    for (uint32_t s = 0; s < n; ++s)
      h[s] = rng() % 3 == 0 && n > 3 ? 0 : 1 + rng() % (rng() % 2 ? 1000 : 1000000);
    add("random " + std::to_string(n), h);
  }
  // Equal counts: every code of one or two lengths.
  for (uint32_t n : {2u, 4u, 7u, 64u, 65536u}) add("equal " + std::to_string(n), huffman::Histogram(n, 5));
  huffman::Histogram one(256, 0);
  one[200] = 5;
  add("one symbol", one);
  return books;
}

}  // namespace vlec::test
