// cuda/codebook_limit.hpp: the GPU codebook builder's length limiting (the
// CPU's limit_length_counts with its Kraft loop batched, O(limit) steps), the
// lengths of ranks under a limited code, and the choice among the automatic
// policy's candidates, equal to huffman/codebook.cpp's bit for bit;
// __host__ __device__, so the CPU tests (GenerateCl.LimiterMatchesCpu,
// GenerateCl.PipelineEmulationMatchesCpu) run the code the kernel runs.
#pragma once

#include <cstdint>

#include "cuda/generate_cl_base.hpp"

namespace vlec::cuda::cl {

// q = a / b for the limiter (b < 2^25): on the GPU a double estimate, corrected.
VLEC_HD inline uint64_t div_small(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  if (a < (uint64_t{1} << 52)) {
    uint64_t q = static_cast<uint64_t>(static_cast<double>(a) / static_cast<double>(b));
    while (q * b > a) --q;
    while ((q + 1) * b <= a) ++q;
    return q;
  }
#endif
  return a / b;
}

// huffman::limit_length_counts with its Kraft loop batched: the loop always
// splits the deepest leaf above `limit`, so the leaf it starts on is wholly
// pushed down to `limit` (2^(limit-d) - 1 rounds, net one code moved from
// level d to `limit`) before another is touched. O(limit) steps, same result.
// The Kraft loop of limit_counts once the codes longer than `limit` sit at
// `limit` (c[1..limit], u64): removes `excess` units of 2^-limit. C holds
// the counts: an array (ArrayCounts; the host, and the tests) or, on the
// GPU, one warp's registers, lane l holding c[l] (WarpCounts in
// codebook_kernel.cuh: a step is a ballot and a shuffle, where lane 0 alone
// over a shared array waited on each access: ~5 k cycles for limit 11).
template <class C>
VLEC_HD inline void limit_excess_counts(C& c, uint32_t limit, uint64_t excess) {
  uint32_t d = limit - 1;
  while (excess > 0) {
    d = c.deepest_nonzero(d);  // the deepest level <= d with codes (0: none)
    if (d == 0) {  // nothing left to split (cannot happen when 2^limit >= symbols)
      c.add(limit, 0 - excess);
      break;
    }
    const uint64_t unit = (uint64_t{1} << (limit - d)) - 1;
    uint64_t n = div_small(excess, unit);
    const uint64_t at_d = c.get(d);
    if (n > at_d) n = at_d;
    if (n) {
      c.add(d, 0 - n);
      c.add(limit, n);
      excess -= n * unit;
    } else {  // part of one leaf: split it and go on one level down
      c.add(limit, ~uint64_t{0});
      c.add(d, ~uint64_t{0});
      c.add(d + 1, 2);
      excess -= 1;
      ++d;
    }
  }
}

// Counts in an array, c[1..limit].
struct ArrayCounts {
  uint64_t* c;
  VLEC_HD uint32_t deepest_nonzero(uint32_t d) const {
    while (d >= 1 && c[d] == 0) --d;
    return d;
  }
  VLEC_HD uint64_t get(uint32_t d) const { return c[d]; }
  VLEC_HD void add(uint32_t d, uint64_t delta) { c[d] += delta; }
};

VLEC_HD inline void limit_excess(uint64_t* c, uint32_t limit, uint64_t excess) {
  ArrayCounts a{c};
  limit_excess_counts(a, limit, excess);
}

VLEC_HD inline void limit_counts(const uint32_t* bl, uint32_t longest, uint32_t limit, uint32_t* out) {
  uint64_t c[kSlots] = {};
  const uint32_t top = min_u32(longest, limit);
  for (uint32_t l = 1; l <= top; ++l) c[l] = bl[l];
  if (longest > limit) {
    uint64_t over = 0;
    for (uint32_t l = limit + 1; l <= longest; ++l) over += bl[l];
    c[limit] += over;
    uint64_t kraft = 0;
    for (uint32_t l = 1; l <= limit; ++l) kraft += c[l] << (limit - l);
    if (kraft > (uint64_t{1} << limit)) limit_excess(c, limit, kraft - (uint64_t{1} << limit));
  }
  out[0] = 0;
  for (uint32_t l = 1; l <= kMaxLen; ++l) out[l] = l <= limit ? static_cast<uint32_t>(c[l]) : 0;
}

VLEC_HD inline void limit_counts(const uint32_t* bl, uint32_t limit, uint32_t* out) {
  uint32_t longest = 0;
  for (uint32_t l = 1; l <= kMaxDepth; ++l)
    if (bl[l]) longest = l;
  limit_counts(bl, longest, limit, out);
}

// The automatic policy's candidate c (docs/FORMAT.md §4.3), in the CPU's order.
VLEC_HD inline uint32_t auto_limit(uint32_t c) { return c == 0 ? 11 : c == 1 ? 16 : 24; }

// bound[l] = codes of length <= l. The length of rank r: the least l with r < bound[l] (0: none).
VLEC_HD inline uint32_t len_of_rank(const uint32_t* bound, uint32_t r) {
  if (r >= bound[kMaxLen]) return 0;
  uint32_t lo = 1, hi = kMaxLen;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (r < bound[mid]) hi = mid; else lo = mid + 1;
  }
  return lo;
}

// len_of_rank by five probes (16, 8, 4, 2, 1: the largest l with bound[l] <=
// r, bound[0] being 0) and no data-dependent loop, so that a thread's
// independent ranks interleave (the cluster kernel's stage 5: eight random
// ranks a thread).
VLEC_HD inline uint32_t len_of_rank_probes(const uint32_t* bound, uint32_t r) {
  uint32_t l = 0;
#pragma unroll
  for (uint32_t step = 16; step >= 1; step >>= 1)
    if (l + step <= kMaxLen && bound[l + step] <= r) l += step;
  return l < kMaxLen ? l + 1 : 0;
}

// Lengths of ranks r0..r0+N-1 (consecutive, so non-decreasing): the first
// and the last by probes (two independent chains), then, where they differ,
// one pass over the bounds between them: rank r's length is l0 plus the
// bounds in [l0, l_last) at or below r (the bounds do not decrease). Each
// step of that pass is one load and N compares, none waiting on the step
// before, where a walk per rank waits on a load a step (stage 4 of the
// codebook kernel: a warp of ranks 0..255 of a 42-symbol alphabet,
// ~11 k cycles with binary searches and walks).
template <uint32_t N>
VLEC_HD inline void lens_of_ranks(const uint32_t* bound, uint32_t r0, uint32_t (&len)[N]) {
  if constexpr (N == 1) {  // one search, not two of the same rank
    len[0] = len_of_rank_probes(bound, r0);
    return;
  }
  const uint32_t first = len_of_rank_probes(bound, r0), last = len_of_rank_probes(bound, r0 + N - 1);
  for (uint32_t i = 0; i < N; ++i) len[i] = first;
  if (first == last) return;
  // last == 0: ranks past the codes (r >= bound[kMaxLen]) come out kMaxLen + 1, then 0.
  const uint32_t hi = last == 0 ? kMaxLen + 1 : last;
  for (uint32_t l = first; l < hi; ++l) {
    const uint32_t b = bound[l];
    for (uint32_t i = 0; i < N; ++i) len[i] += r0 + i >= b;
  }
  if (last == 0)
    for (uint32_t i = 0; i < N; ++i) len[i] = len[i] > kMaxLen ? 0 : len[i];
}

// The candidate build_codebook keeps: a fixed limit is candidate 0; otherwise the
// first valid one within B24 + B24 / kAutoLimitSlack (u64 arithmetic, as on the
// CPU: huffman::kAutoLimitSlack), else 24.
VLEC_HD inline uint32_t choose_candidate(uint32_t ncand, const uint32_t* valid, const uint64_t* bits) {
  if (ncand == 1) return 0;
  const uint64_t base = bits[kCandidates - 1], bound = base + base / kAutoLimitSlack;
  for (uint32_t c = 0; c < kCandidates; ++c)
    if (valid[c] && bits[c] <= bound) return c;
  return kCandidates - 1;
}

}  // namespace vlec::cuda::cl
