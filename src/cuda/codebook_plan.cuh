// cuda/codebook_plan.cuh: the GPU codebook kernel's small helpers
// (codebook_kernel.cuh): the counts' total test and the tree's leaves and
// arrays, the candidates' limited length counts (the plan, one warp a
// candidate, the limiter on the warp's registers), and the serialized
// codebook's bit fields and header. Included by
// codebook_kernel.cuh alone, hence the unnamed namespace.
#pragma once

#include <cstdint>

#include "cuda/codebook_gpu.hpp"
#include "cuda/codebook_layout.cuh"
#include "cuda/generate_cl.hpp"
#include "cuda/warp_index.cuh"

namespace vlec::cuda {

namespace {

// ---- the tree's inputs ---------------------------------------------------------

// A warp's counts summed (saturating) and added to *total clamped to 2^32, so
// that *total < 2^32 says whether the counts total below 2^32 (the one-warp
// tree's 32-bit weights).
__device__ __forceinline__ void add_warp_total(uint64_t sum, uint32_t lane, unsigned long long* total) {
  for (int o = 16; o > 0; o >>= 1) sum = sat_add(sum, __shfl_xor_sync(kFull, sum, o));
  if (lane == 0 && sum) atomicAdd(total, static_cast<unsigned long long>(sum < (uint64_t{1} << 32) ? sum : uint64_t{1} << 32));
}

// keys[0..m) reversed in place by the block's NT threads (the sorted counts,
// descending, become the leaves, increasing); the caller syncs after.
template <int NT>
__device__ __forceinline__ void reverse_keys(uint64_t* keys, uint32_t m) {
  for (uint32_t i = threadIdx.x; i < m / 2; i += NT) {
    const uint64_t a = keys[i], b = keys[m - 1 - i];
    keys[i] = b, keys[m - 1 - i] = a;
  }
}

// The resident tree's arguments in shared-memory layout L (the one-block
// kernel's): the leaves are keys[0..m), the sorted counts reversed in place.
template <int NT, class L>
__device__ __forceinline__ void resident_tree_args(ClArgs& g, uint64_t* keys, uint32_t m, unsigned char* smem) {
  reverse_keys<NT>(keys, m);  // the leaves, increasing
  __syncthreads();
  g.leaf = keys;
  g.node = reinterpret_cast<uint64_t*>(smem + L::node);
  g.parent = reinterpret_cast<uint16_t*>(smem + L::parent);
  g.leafkids = smem + L::kids;
  g.depth = smem + L::depth;
}

// ---- the plan -----------------------------------------------------------------

// The limiter's counts in one warp's registers, lane l holding c[l]
// (limit_excess_counts in codebook_limit.hpp): every lane runs the same loop.
struct WarpCounts {
  uint64_t& mine;
  uint32_t lane;
  __device__ uint32_t deepest_nonzero(uint32_t d) const {
    const uint32_t m = __ballot_sync(kFull, lane >= 1 && lane <= d && mine != 0);
    return m ? 31 - __clz(m) : 0;
  }
  __device__ uint64_t get(uint32_t d) const { return __shfl_sync(kFull, mine, d); }
  __device__ void add(uint32_t d, uint64_t delta) {
    if (lane == d) mine += delta;
  }
};

// Warp c (0..3): candidate c's limited length counts, lane l for length l
// (the sums over lengths by shuffles; the Kraft loop, when codes exceed the
// limit by more than they can absorb at it, on the warp's registers too).
// bound[l] = codes of length <= l, by a warp scan.
__device__ void plan_candidates(uint32_t m, uint32_t fixed_limit, bool error, const ClShared& cls, Plan& p) {
  const uint32_t tid = threadIdx.x, c = uniform_warp_index(), lane = tid & 31;
  const uint32_t ncand = fixed_limit ? 1 : kCandidates;
  if (c < kCandidates) {
    const uint32_t L = fixed_limit ? fixed_limit : auto_limit(c);
    const bool valid = !error && c < ncand && (uint64_t{1} << L) >= m;
    const uint32_t longest = valid ? cls.longest : 0, top = min_u32(longest, L);
    uint64_t cnt = lane >= 1 && lane <= top ? cls.bl[lane] : 0;
    if (longest > L) {  // warp-uniform
      uint64_t over = 0;
      for (uint32_t l = L + 1 + lane; l <= longest; l += 32) over += cls.bl[l];
      over = warp_sum64(over);
      if (lane == L) cnt += over;
      const uint64_t kraft = warp_sum64(lane >= 1 && lane <= L ? cnt << (L - lane) : 0);
      if (kraft > (uint64_t{1} << L)) {  // warp-uniform
        WarpCounts wc{cnt, lane};
        limit_excess_counts(wc, L, kraft - (uint64_t{1} << L));
      }
    }
    const uint32_t bound = warp_incl_scan(lane < kSlots ? static_cast<uint32_t>(cnt) : 0, lane);
    if (lane < kSlots) p.bound[c][lane] = bound;
    if (lane == 0) p.valid[c] = valid;
  }
  if (tid == 0) p.m = m, p.error = error, p.ncand = ncand;
}

// value (width bits) at bit `bit` of a zeroed word array (shared memory: the
// block's staged fields).
__device__ __forceinline__ void or_bits(uint32_t* words, uint32_t bit, uint32_t value, uint32_t width) {
  const uint32_t w = bit >> 5, o = bit & 31;
  atomicOr(&words[w], value << o);
  if (o + width > 32) atomicOr(&words[w + 1], value >> (32 - o));
}

__device__ void write_header(const DeviceCodebookOut& out, bool error, uint32_t n, uint32_t max_length,
                             uint32_t present_groups, uint32_t m) {
  uint32_t* w = reinterpret_cast<uint32_t*>(out.serialized);
  const uint32_t L = error || n == 0 ? 0 : max_length, fbits = field_bits(L);
  w[0] = error ? 0 : n;
  w[1] = L ? (L | fbits << 8) : 0;
  out.info[0] = error ? 0 : serialized_bytes(n, present_groups, fbits);
  out.info[1] = L;
  out.info[2] = error ? 0 : n;
  out.info[3] = m;
}

}  // namespace

}  // namespace vlec::cuda
