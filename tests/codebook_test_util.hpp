// tests/codebook_test_util.hpp: what the codebook tests on the CPU
// (test_generate_cl.cpp, the GPU's steps emulated) and on the GPU
// (test_codebook_gpu.cpp) share: histograms shaped like real and adversarial
// counts, the CPU's codebook in the device's output form, the comparison, the
// length limits worth trying for a histogram, and the two-queue tree kept
// node by node.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cuda/generate_cl.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/codebook.hpp"
#include "vlec/error.hpp"
#include "vlec/vlec.hpp"

namespace vlec::codebook_test {

using huffman::Histogram;
namespace cl = cuda::cl;

// ---- histograms --------------------------------------------------------------

constexpr int kKinds = 10;
const char* const kKindNames[kKinds] = {"random", "all-equal", "small-set", "near-2^40", "fibonacci",
                                        "powers-of-2", "skewed", "huge-random", "sparse", "geometric-tail"};

inline Histogram make_histogram(std::mt19937_64& rng, int kind, uint32_t cap) {
  Histogram h(cap, 0);
  const uint64_t eq = 1 + rng() % 1000;
  const uint64_t set[3] = {1 + rng() % 5, 1 + rng() % 50, 1 + rng() % 500};
  const double width = 1.0 + static_cast<double>(cap) / (4 + rng() % 60);
  for (uint32_t s = 0; s < cap; ++s) {
    uint64_t& c = h[s];
    switch (kind) {
      case 0: c = rng() % 1000; break;
      case 1: c = eq; break;
      case 2: c = set[rng() % 3]; break;
      case 3: c = (uint64_t{1} << 40) - rng() % 4096; break;
      case 4: c = 0; break;
      case 5: c = uint64_t{1} << (rng() % 24); break;
      case 6: c = 1 + static_cast<uint64_t>(1e7 * std::exp(-std::fabs(s - cap / 2.0) / width)); break;
      case 7: c = 1 + rng() % (uint64_t{1} << 40); break;
      case 8: c = rng() % 97 == 0 ? 1 + rng() % 100000 : 0; break;
      default: c = 1 + static_cast<uint64_t>(1e12 * std::exp(-static_cast<double>(s) / (1 + rng() % 40))); break;
    }
  }
  if (kind == 4) {  // Fibonacci counts on random symbols: the deepest trees, the limiter at work
    uint64_t a = 1, b = 1;
    for (uint32_t i = 0; i < std::min<uint32_t>(cap, 80 + rng() % 10); ++i) {
      h[rng() % cap] = a;
      const uint64_t c = a + b;
      a = b;
      b = c;
    }
    for (uint32_t s = 0; s < cap; ++s)
      if (!h[s] && rng() % 4 == 0) h[s] = 1 + rng() % 3;
  }
  if (kind != 1 && kind != 3 && rng() % 4 == 0)  // holes
    for (uint32_t s = 0; s < cap; ++s)
      if (rng() % 3 == 0) h[s] = 0;
  return h;
}

inline uint32_t random_capacity(std::mt19937_64& rng, uint32_t max_cap) {
  const double lg = std::log2(static_cast<double>(max_cap));
  return std::max<uint32_t>(1, std::min<uint32_t>(max_cap, static_cast<uint32_t>(std::exp2(lg * (rng() % 10001) / 10000.0))));
}

// GpuCodebook.Timing's histogram: quantization-code-like, Laplace around the
// middle, every symbol present.
inline Histogram timing_histogram(uint32_t cap) {
  Histogram h(cap);
  for (uint32_t s = 0; s < cap; ++s)
    h[s] = 1 + static_cast<uint64_t>(4e6 * std::exp(-std::fabs(s - cap / 2.0) / (cap / 24.0)));
  return h;
}

// The present counts in rank order (count desc, symbol asc).
inline std::vector<uint64_t> keys_desc(const Histogram& h) {
  std::vector<uint64_t> k;
  for (uint32_t s : huffman::rank_symbols(h)) k.push_back(h[s]);
  return k;
}

// A codebook in the device's output form: lengths, encode entries, the
// serialized bytes and the four info words.
struct BuiltCodebook {
  std::vector<uint8_t> lengths;
  std::vector<uint32_t> entry;
  std::vector<uint8_t> serialized;  // serialized-capacity bytes
  uint32_t info[4] = {};
};

// The CPU's answer in the device's output form; info[0] == 0 where the CPU throws.
inline BuiltCodebook cpu_codebook(const Histogram& h, unsigned limit) {
  const uint32_t cap = static_cast<uint32_t>(h.size());
  BuiltCodebook out;
  out.lengths.assign(cap, 0);
  out.entry.assign(cap, 0);
  out.serialized.assign(cl::serialized_capacity(cap), 0);
  const std::vector<uint32_t> ranked = huffman::rank_symbols(h);
  out.info[3] = static_cast<uint32_t>(ranked.size());
  huffman::Codebook book;
  try {
    book = huffman::build_codebook(h, limit);
  } catch (const Error&) {
    return out;
  }
  const huffman::EncodeTable table = huffman::make_encode_table(book, DType::u16);
  for (uint32_t s = 0; s < cap; ++s) {
    out.lengths[s] = s < book.alphabet_size ? book.lengths[s] : 0;
    out.entry[s] = table.entry[s];
  }
  const std::vector<uint8_t> bytes = huffman::serialize_codebook(book);
  std::copy(bytes.begin(), bytes.end(), out.serialized.begin());
  out.info[0] = static_cast<uint32_t>(bytes.size());
  out.info[1] = book.max_length;
  out.info[2] = book.alphabet_size;
  return out;
}

inline void expect_same(const BuiltCodebook& got, const BuiltCodebook& want) {
  ASSERT_EQ(got.info[0], want.info[0]) << "serialized size";
  ASSERT_EQ(got.info[1], want.info[1]) << "max length";
  ASSERT_EQ(got.info[2], want.info[2]) << "alphabet size";
  ASSERT_EQ(got.info[3], want.info[3]) << "present symbols";
  for (std::size_t s = 0; s < want.lengths.size(); ++s) {
    ASSERT_EQ(got.lengths[s], want.lengths[s]) << "length of symbol " << s;
    ASSERT_EQ(got.entry[s], want.entry[s]) << "encode entry of symbol " << s;
  }
  for (std::size_t i = 0; i < want.serialized.size(); ++i)
    ASSERT_EQ(got.serialized[i], want.serialized[i]) << "serialized byte " << i;
}

// Limits to try: automatic, the candidates, and ones the tree forces to act.
inline std::vector<unsigned> limits_for(std::mt19937_64& rng, const Histogram& h) {
  const huffman::LengthCounts bl = huffman::huffman_length_counts(h);
  unsigned longest = 0, m = 0, need = 1;
  for (unsigned l = 1; l <= huffman::kMaxTreeDepth; ++l)
    if (bl[l]) longest = l, m += bl[l];
  while ((1u << need) < m) ++need;
  std::vector<unsigned> out{0, 11 + static_cast<unsigned>(rng() % 2), rng() % 2 ? 16u : 24u};
  if (longest > need) out.push_back(need + static_cast<unsigned>(rng() % std::min(longest - need, 25u - need)));
  out.push_back(need);
  if (need > 1 && rng() % 4 == 0) out.push_back(need - 1);  // too short: the CPU throws, the GPU reports info[0] == 0
  for (unsigned& l : out) l = std::min(l, huffman::kMaxCodeLength);
  return out;
}

// ---- trees -------------------------------------------------------------------

// The two-queue loop of huffman_length_counts, keeping its tree.
struct TwoQueueTree {
  std::vector<uint16_t> parent;
  std::vector<uint8_t> leafkids;
  std::vector<uint64_t> inner_w;
};
inline TwoQueueTree two_queue_tree(const std::vector<uint64_t>& desc) {
  const std::size_t m = desc.size();
  TwoQueueTree t;
  if (m < 2) return t;
  std::vector<uint64_t> leaf(desc.rbegin(), desc.rend());
  t.parent.assign(m - 1, 0xFFFF);
  t.leafkids.assign(m - 1, 0);
  t.inner_w.assign(m - 1, 0);
  std::size_t li = 0, ii = 0;
  for (std::size_t k = 0; k + 1 < m; ++k) {
    uint64_t sum = 0;
    for (int pick = 0; pick < 2; ++pick) {
      if (li < m && (ii >= k || leaf[li] <= t.inner_w[ii])) {
        sum += leaf[li++];
        ++t.leafkids[k];
      } else {
        sum += t.inner_w[ii];
        t.parent[ii++] = static_cast<uint16_t>(k);
      }
    }
    t.inner_w[k] = sum;
  }
  return t;
}

// Whether the counts total below 2^32 (the warp tree then runs in 32-bit weights).
inline bool total_below_2_32(const std::vector<uint64_t>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) {
    if (c >= (uint64_t{1} << 32) - total) return false;
    total += c;
  }
  return true;
}

}  // namespace vlec::codebook_test
