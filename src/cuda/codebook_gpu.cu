// cuda/codebook_gpu.cu: see codebook_gpu.hpp. The kernels:
//   small_codebook_kernel  (capacity <= 1,024) one block does it all in shared
//                          memory: cub::BlockRadixSort on the counts (only as
//                          many bits as the largest count has), generate_cl,
//                          limiter, policy, lengths, generate_cw, serialization.
//   iota_kernel + cub::DeviceRadixSort (larger capacities): symbols ranked by
//                          (count desc, symbol asc); the sort is stable, so
//                          equal counts keep symbol order; zero counts sort last.
//   generate_cl_kernel     one 1024-thread block: the phases of generate_cl.hpp
//                          (node weights in L2, tiles of 4,096 merged nodes
//                          copied to shared memory with cp.async, parents in
//                          shared memory), depths, bl_count, and the limiter
//                          for every candidate limit.
//   policy_kernel          per rank: the length under every candidate and its
//                          coded bits (block sums, one u64 atomic per block:
//                          exact, as addition mod 2^64 is associative), packed
//                          lengths scattered to symbols; the last block picks
//                          the limit and the canonical first codes.
//   count_kernel           per symbol: the chosen length; per block, codes of
//                          each length and present groups (warp match + shared
//                          atomics); alphabet size; clears the serialized bytes.
//   generate_cw_kernel     Tian's GenerateCW for canonical codes: a symbol's
//                          code is the first code of its length plus the number
//                          of same-length symbols before it (earlier blocks:
//                          from count_kernel; earlier warps: a shared scan;
//                          earlier lanes: __match_any_sync); serialized fields
//                          go where a prefix count of present groups puts
//                          them, OR-ed in with atomics.
// Why it is fast: no host round trip; every O(alphabet) pass is coalesced and
// grid-wide; the one sequential part, the phase loop, costs two __syncthreads,
// one L2 round trip and two overlapped shared-memory binary searches per tile
// (a few dozen tiles).
#include "cuda/codebook_gpu.hpp"

#include <atomic>
#include <utility>

#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "cuda/cuda_check.hpp"
#include "cuda/generate_cl.hpp"

namespace vlec::cuda {

namespace {

using namespace cl;

constexpr uint32_t kFull = 0xFFFFFFFFu;
constexpr uint32_t kMaxCapacity = 65536;
constexpr uint32_t kSmallCapacity = 1024;  // one-kernel path up to here
constexpr int kSmallThreads = 256;
constexpr int kClThreads = 1024, kClItems = 4, kClTile = kClThreads * kClItems;
constexpr int kRankThreads = 256;   // policy_kernel
constexpr int kSymThreads = 1024;   // symbols per block of count_kernel and generate_cw_kernel
constexpr uint32_t kGroupSlot = kSlots;  // per-block counts: [0..24] lengths, [25] present groups

struct Plan {
  uint32_t m, error, ncand, choice, max_length, alphabet_size, done;
  uint32_t valid[kCandidates], limits[kCandidates];
  uint32_t bound[kCandidates][kSlots];  // codes of length <= l under each candidate
  uint32_t next[kSlots];                 // canonical first code of each length (chosen)
  unsigned long long bits[kCandidates];
};

struct CodesShared {
  uint32_t wcount[32][33];   // per warp, per length: codes in the warp
  uint32_t wprefix[32][33];  // per warp, per length: codes in earlier warps of the tile
  uint32_t gflag[64], gprefix[64];
};

__device__ __forceinline__ uint64_t warp_sum(uint64_t v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFull, v, o);
  return v;
}

// Threads 0..3: the limited length counts of each candidate limit.
__device__ void plan_candidates(uint32_t tid, uint32_t m, uint32_t fixed_limit, bool error, const uint32_t* bl,
                                Plan& p) {
  if (tid < kCandidates) {
    const uint32_t ncand = fixed_limit ? 1 : kCandidates;
    const uint32_t L = fixed_limit ? fixed_limit : auto_limit(tid);
    const bool valid = !error && tid < ncand && (uint64_t{1} << L) >= m;
    uint32_t counts[kSlots] = {};
    if (valid) limit_counts(bl, L, counts);
    uint32_t acc = 0;
    for (uint32_t l = 0; l < kSlots; ++l) p.bound[tid][l] = acc += counts[l];
    p.valid[tid] = valid;
    p.limits[tid] = L;
    p.bits[tid] = 0;
  }
  if (tid == 0) {
    p.m = m;
    p.error = error;
    p.ncand = fixed_limit ? 1 : kCandidates;
    p.choice = 0;
    p.max_length = 0;
    p.alphabet_size = 0;
    p.done = 0;
  }
}

// One thread: keep a candidate, its longest length and first codes.
__device__ void plan_choose(Plan& p, const uint64_t* bits) {
  const uint32_t c = choose_candidate(p.ncand, p.valid, bits);
  uint32_t cnt[kSlots];
  uint32_t longest = 0;
  cnt[0] = 0;
  for (uint32_t l = 1; l < kSlots; ++l) {
    cnt[l] = p.bound[c][l] - p.bound[c][l - 1];
    if (cnt[l]) longest = l;
  }
  canonical_next(cnt, p.next);
  p.choice = c;
  p.max_length = longest;
}

// Packed lengths of rank r under every valid candidate (5 bits each), and their bits.
__device__ __forceinline__ uint32_t rank_lengths(const uint32_t (*bound)[kSlots], const uint32_t* valid, uint32_t r,
                                                 uint64_t count, uint64_t* bits) {
  uint32_t packed = 0;
  for (uint32_t c = 0; c < kCandidates; ++c)
    if (valid[c]) {
      const uint32_t l = len_of_rank(bound[c], r);
      bits[c] += count * l;
      packed |= l << (5 * c);
    }
  return packed;
}

__device__ __forceinline__ void or_bits(uint32_t* stream, uint64_t bit, uint32_t value, uint32_t width) {
  const uint32_t w = static_cast<uint32_t>(bit >> 5), o = static_cast<uint32_t>(bit & 31);
  atomicOr(&stream[w], value << o);
  if (o + width > 32) atomicOr(&stream[w + 1], value >> (32 - o));
}

// generate_cw and serialization of NT consecutive symbols, one per thread.
// base[l]: codes of length l before the tile; base[kGroupSlot]: present groups
// before it. stream: the serialized bitstream (byte 8), already zero.
template <int NT>
__device__ void generate_cw_tile(uint32_t s, uint32_t l, bool in_range, const uint32_t* base, const uint32_t* next,
                           uint32_t groups, uint32_t fbits, uint32_t* stream, uint32_t* entry_out,
                           CodesShared& sh) {
  constexpr uint32_t W = NT / 32;
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t same = __match_any_sync(kFull, l);
  const uint32_t before = __popc(same & ((1u << lane) - 1));
  sh.wcount[warp][lane] = 0;
  __syncwarp();
  if (before == 0) sh.wcount[warp][l] = __popc(same);
  const uint32_t nz = __ballot_sync(kFull, l != 0);
  if (lane == 0) {
    sh.gflag[2 * warp] = (nz & 0xFFFFu) != 0;
    sh.gflag[2 * warp + 1] = (nz >> 16) != 0;
  }
  __syncthreads();
  for (uint32_t len = warp; len < 32; len += W) {  // exclusive scan over the warps, one length per warp
    const uint32_t v = lane < W ? sh.wcount[lane][len] : 0;
    uint32_t inc = v;
    for (uint32_t o = 1; o < 32; o <<= 1) {
      const uint32_t n = __shfl_up_sync(kFull, inc, o);
      if (lane >= o) inc += n;
    }
    if (lane < W) sh.wprefix[lane][len] = inc - v;
  }
  if (warp == 0) {
    const uint32_t f0 = lane < W ? sh.gflag[2 * lane] : 0, f1 = lane < W ? sh.gflag[2 * lane + 1] : 0;
    uint32_t inc = f0 + f1;
    for (uint32_t o = 1; o < 32; o <<= 1) {
      const uint32_t n = __shfl_up_sync(kFull, inc, o);
      if (lane >= o) inc += n;
    }
    if (lane < W) {
      sh.gprefix[2 * lane] = inc - f0 - f1;
      sh.gprefix[2 * lane + 1] = inc - f1;
    }
  }
  __syncthreads();
  if (in_range) {
    uint32_t entry = 0;
    if (l) {
      const uint32_t code = next[l] + base[l] + sh.wprefix[warp][l] + before;
      entry = (l << 24) | reverse_bits(code, l);
      const uint32_t present_before = base[kGroupSlot] + sh.gprefix[2 * warp + (lane >> 4)];
      or_bits(stream, field_bit(groups, present_before, s, fbits), l, fbits);
    }
    entry_out[s] = entry;
  }
  if ((lane & 15) == 0 && sh.gflag[2 * warp + (lane >> 4)]) atomicOr(&stream[s >> 9], 1u << ((s >> 4) & 31));
}

// Codes of each length and present groups in the tile generate_cw_tile just did.
template <int NT>
__device__ uint32_t tile_total(const CodesShared& sh, uint32_t slot) {
  constexpr uint32_t W = NT / 32;
  if (slot < kSlots) return sh.wprefix[W - 1][slot] + sh.wcount[W - 1][slot];
  if (slot == kGroupSlot) return sh.gprefix[2 * W - 1] + sh.gflag[2 * W - 1];
  return 0;
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

// ---- the one-kernel path ---------------------------------------------------

template <int NT, int ITEMS>
__global__ void __launch_bounds__(NT) small_codebook_kernel(const uint64_t* hist, uint32_t cap, uint32_t fixed_limit,
                                                            DeviceCodebookOut out) {
  constexpr uint32_t N = NT * ITEMS, IPT = 4, T = NT * IPT;
  using Sort = cub::BlockRadixSort<uint64_t, NT, ITEMS, uint32_t>;
  struct Chunks { uint64_t A[T], B[T]; };
  union Work {
    typename Sort::TempStorage sort;
    Chunks cl;  // generate_cl's tiles; depths alias them afterwards
    CodesShared codes;
  };
  __shared__ Work u;
  __shared__ uint64_t keys[N], inner_w[N];
  __shared__ uint32_t ranked[N];
  __shared__ uint16_t parent[N];
  __shared__ uint8_t leafkids[N], lengths[N];
  __shared__ ClShared cls;
  __shared__ Plan plan;
  __shared__ unsigned long long s_max, s_bits[kCandidates];
  __shared__ uint32_t s_m, s_alpha, base[32];
  const uint32_t tid = threadIdx.x, lane = tid & 31;

  uint64_t k[ITEMS];
  uint32_t v[ITEMS];
  uint64_t kmax = 0;
  for (int i = 0; i < ITEMS; ++i) {
    const uint32_t idx = tid * ITEMS + i;
    k[i] = idx < cap ? hist[idx] : 0;
    v[i] = idx;
    kmax = k[i] > kmax ? k[i] : kmax;
  }
  if (tid == 0) s_max = 0, s_m = 0, s_alpha = 0;
  __syncthreads();
  for (int o = 16; o > 0; o >>= 1) {
    const uint64_t other = __shfl_down_sync(kFull, kmax, o);
    kmax = other > kmax ? other : kmax;
  }
  if (lane == 0) atomicMax(&s_max, static_cast<unsigned long long>(kmax));
  __syncthreads();
  const int end_bit = s_max ? 64 - __clzll(static_cast<long long>(s_max)) : 1;
  Sort(u.sort).SortDescending(k, v, 0, end_bit);  // stable: equal counts stay in symbol order
  uint32_t nz = 0;
  for (int i = 0; i < ITEMS; ++i) {
    keys[tid * ITEMS + i] = k[i];
    ranked[tid * ITEMS + i] = v[i];
    nz += k[i] != 0;
  }
  if (nz) atomicAdd(&s_m, nz);
  __syncthreads();

  const uint32_t m = s_m;
  const bool error = fixed_limit != 0 && (uint64_t{1} << fixed_limit) < m;
  if (!error)
    generate_cl_block<NT, IPT, false>(keys, m, inner_w, leafkids, parent, u.cl.A, u.cl.B,
                               reinterpret_cast<uint8_t*>(u.cl.A), cls);
  __syncthreads();
  plan_candidates(tid, m, fixed_limit, error, cls.bl, plan);
  if (tid < kCandidates) s_bits[tid] = 0;
  __syncthreads();

  uint64_t bits[kCandidates] = {};
  for (uint32_t r = tid; r < m; r += NT) rank_lengths(plan.bound, plan.valid, r, keys[r], bits);
  for (uint32_t c = 0; c < kCandidates; ++c) {
    const uint64_t b = warp_sum(bits[c]);
    if (lane == 0 && b) atomicAdd(&s_bits[c], static_cast<unsigned long long>(b));
  }
  __syncthreads();
  if (tid == 0) {
    const uint64_t b[kCandidates] = {s_bits[0], s_bits[1], s_bits[2], s_bits[3]};
    plan_choose(plan, b);
  }
  __syncthreads();

  const uint32_t* bound = plan.bound[plan.choice];
  for (uint32_t r = tid; r < N; r += NT) {
    const uint32_t sym = ranked[r];
    if (sym < cap) lengths[sym] = static_cast<uint8_t>(r < m ? len_of_rank(bound, r) : 0);
  }
  __syncthreads();
  uint32_t alpha = 0;
  for (uint32_t s = tid; s < cap; s += NT) {
    out.lengths[s] = lengths[s];
    if (lengths[s]) alpha = s + 1;
  }
  if (alpha) atomicMax(&s_alpha, alpha);
  const uint32_t words = static_cast<uint32_t>(serialized_capacity(cap) / 4);
  uint32_t* ser = reinterpret_cast<uint32_t*>(out.serialized);
  for (uint32_t w = tid; w < words; w += NT) ser[w] = 0;
  if (tid < 32) base[tid] = 0;
  __syncthreads();

  const uint32_t n = s_alpha, fbits = field_bits(plan.max_length), groups = group_count(n);
  for (uint32_t s0 = 0; s0 < cap; s0 += NT) {
    const uint32_t s = s0 + tid;
    generate_cw_tile<NT>(s, s < cap ? lengths[s] : 0, s < cap, base, plan.next, groups, fbits, ser + 2,
                   out.encode_entry, u.codes);
    __syncthreads();
    if (tid < 32) base[tid] += tile_total<NT>(u.codes, tid);
    __syncthreads();
  }
  if (tid == 0) write_header(out, error, n, plan.max_length, base[kGroupSlot], m);
}

// ---- the multi-kernel path -------------------------------------------------

__global__ void iota_kernel(uint32_t* v, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = i;
}

__global__ void __launch_bounds__(kClThreads, 1)
    generate_cl_kernel(const uint64_t* keys_desc, uint32_t cap, uint32_t fixed_limit, uint64_t* inner_w,
                       uint8_t* leafkids, Plan* plan) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ ClShared cls;
  uint64_t* A = reinterpret_cast<uint64_t*>(smem);
  uint64_t* B = A + kClTile;
  uint16_t* parent = reinterpret_cast<uint16_t*>(B + kClTile);
  const uint32_t tid = threadIdx.x;
  // m = the number of non-zero counts: a 1024-way search for the first zero.
  const uint32_t S = (cap + kClThreads - 1) / kClThreads;
  const uint32_t c1 = __syncthreads_count(tid * S < cap && keys_desc[min_u32(cap, tid * S + S) - 1] != 0);
  const uint32_t j = c1 * S + tid;
  const uint32_t m = min_u32(cap, c1 * S + __syncthreads_count(tid < S && j < cap && keys_desc[j] != 0));
  const bool error = fixed_limit != 0 && (uint64_t{1} << fixed_limit) < m;
  if (!error)
    generate_cl_block<kClThreads, kClItems, true>(keys_desc, m, inner_w, leafkids, parent, A, B, smem, cls);
  plan_candidates(tid, m, fixed_limit, error, cls.bl, *plan);
}

__global__ void __launch_bounds__(kRankThreads)
    policy_kernel(const uint64_t* keys_desc, const uint32_t* ranked, uint32_t cap, Plan* plan, uint32_t* packed) {
  __shared__ uint32_t bound[kCandidates][kSlots], valid[kCandidates];
  __shared__ unsigned long long sums[kCandidates];
  const uint32_t tid = threadIdx.x, lane = tid & 31;
  if (tid < kCandidates * kSlots) bound[tid / kSlots][tid % kSlots] = plan->bound[tid / kSlots][tid % kSlots];
  if (tid < kCandidates) valid[tid] = plan->valid[tid], sums[tid] = 0;
  __syncthreads();
  const uint32_t m = plan->m, r = blockIdx.x * kRankThreads + tid;
  uint64_t bits[kCandidates] = {};
  if (r < cap) packed[ranked[r]] = r < m ? rank_lengths(bound, valid, r, keys_desc[r], bits) : 0;
  for (uint32_t c = 0; c < kCandidates; ++c) {
    const uint64_t b = warp_sum(bits[c]);
    if (lane == 0 && b) atomicAdd(&sums[c], static_cast<unsigned long long>(b));
  }
  __syncthreads();
  if (tid == 0) {
    for (uint32_t c = 0; c < kCandidates; ++c)
      if (sums[c]) atomicAdd(&plan->bits[c], sums[c]);
    __threadfence();
    if (atomicAdd(&plan->done, 1u) == gridDim.x - 1) {  // the last block: every block's sums are in
      __threadfence();
      uint64_t b[kCandidates];
      for (uint32_t c = 0; c < kCandidates; ++c) b[c] = *static_cast<volatile unsigned long long*>(&plan->bits[c]);
      plan_choose(*plan, b);
    }
  }
}

__global__ void __launch_bounds__(kSymThreads)
    count_kernel(const uint32_t* packed, uint32_t cap, Plan* plan, uint8_t* lengths, uint32_t* blockcounts,
                 uint32_t* ser_words, uint32_t ser_nwords) {
  __shared__ uint32_t cnt[32], smax;
  const uint32_t tid = threadIdx.x, lane = tid & 31, s = blockIdx.x * kSymThreads + tid;
  if (tid < 32) cnt[tid] = 0;
  if (tid == 0) smax = 0;
  for (uint32_t w = s; w < ser_nwords; w += gridDim.x * kSymThreads) ser_words[w] = 0;
  __syncthreads();
  const uint32_t l = s < cap ? (packed[s] >> (5 * plan->choice)) & 31u : 0;
  if (s < cap) lengths[s] = static_cast<uint8_t>(l);
  const uint32_t same = __match_any_sync(kFull, l);
  if ((same & ((1u << lane) - 1)) == 0) atomicAdd(&cnt[l], __popc(same));
  const uint32_t nz = __ballot_sync(kFull, l != 0);
  if (lane == 0 && nz) {
    atomicAdd(&cnt[kGroupSlot], ((nz & 0xFFFFu) != 0) + ((nz >> 16) != 0));
    atomicMax(&smax, s + 32 - __clz(nz));  // 1 + the warp's last symbol with a code
  }
  __syncthreads();
  if (tid < 32) blockcounts[blockIdx.x * 32 + tid] = cnt[tid];
  if (tid == 0 && smax) atomicMax(&plan->alphabet_size, smax);
}

__global__ void __launch_bounds__(kSymThreads)
    generate_cw_kernel(const uint8_t* lengths, uint32_t cap, const Plan* plan, const uint32_t* blockcounts,
                 DeviceCodebookOut out) {
  __shared__ CodesShared sh;
  __shared__ uint32_t base[32], next[kSlots];
  const uint32_t tid = threadIdx.x, b = blockIdx.x, s = b * kSymThreads + tid;
  if (tid < 32) {
    uint32_t acc = 0;
    for (uint32_t i = 0; i < b; ++i) acc += blockcounts[i * 32 + tid];
    base[tid] = acc;
  }
  if (tid < kSlots) next[tid] = plan->next[tid];
  __syncthreads();
  const uint32_t n = plan->alphabet_size, fbits = field_bits(plan->max_length);
  generate_cw_tile<kSymThreads>(s, s < cap ? lengths[s] : 0, s < cap, base, next, group_count(n), fbits,
                          reinterpret_cast<uint32_t*>(out.serialized) + 2, out.encode_entry, sh);
  if (b == 0 && tid == 0) {
    uint32_t present_groups = 0;
    for (uint32_t i = 0; i < gridDim.x; ++i) present_groups += blockcounts[i * 32 + kGroupSlot];
    write_header(out, plan->error, n, plan->max_length, present_groups, plan->m);
  }
}

int current_device() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// CUB's temporary bytes for the sort (a host-side query), remembered per thread.
std::size_t cub_sort_bytes(uint32_t cap) {
  thread_local uint32_t last_cap = ~0u;
  thread_local int last_device = -1;
  thread_local std::size_t last_bytes = 0;
  const int device = current_device();
  if (cap != last_cap || device != last_device) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, static_cast<const uint64_t*>(nullptr),
                                                         static_cast<uint64_t*>(nullptr),
                                                         static_cast<const uint32_t*>(nullptr),
                                                         static_cast<uint32_t*>(nullptr), static_cast<int>(cap)));
    last_cap = cap, last_device = device, last_bytes = bytes;
  }
  return last_bytes;
}

// Carving of the temporary storage (multi-kernel path), 256-byte aligned
// pieces. The sort's input values (iota) are dead after the sort: the packed
// lengths reuse them.
struct Layout {
  std::size_t plan, iota, keys, ranked, inner, kids, counts, cub, cub_bytes, total;
};

Layout temp_layout(uint32_t cap) {
  Layout L{};
  auto take = [&](std::size_t bytes) { return std::exchange(L.total, L.total + (bytes + 255) / 256 * 256); };
  L.plan = take(sizeof(Plan));
  L.iota = take(4 * std::size_t{cap});
  L.keys = take(8 * std::size_t{cap});
  L.ranked = take(4 * std::size_t{cap});
  L.inner = take(8 * std::size_t{cap});
  L.kids = take(cap);
  L.counts = take(4 * 32 * ((cap + kSymThreads - 1) / kSymThreads));
  L.cub_bytes = cub_sort_bytes(cap);
  L.cub = take(L.cub_bytes);
  return L;
}

std::size_t cl_smem_bytes(uint32_t cap) { return 2 * sizeof(uint64_t) * kClTile + (2 * std::size_t{cap} + 15) / 16 * 16; }

// generate_cl_kernel's shared memory (~193 KiB at 65,536 symbols), allowed once per device.
void allow_cl_smem() {
  static std::atomic<uint64_t> done{0};
  const int device = current_device();
  const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
  if (bit && (done.load(std::memory_order_relaxed) & bit)) return;
  CUDA_CHECK(cudaFuncSetAttribute(generate_cl_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(cl_smem_bytes(kMaxCapacity))));
  done.fetch_or(bit);
}

}  // namespace

std::size_t codebook_serialized_capacity(uint32_t alphabet_capacity) { return serialized_capacity(alphabet_capacity); }

std::size_t codebook_temp_bytes(uint32_t alphabet_capacity) {
  VLEC_REQUIRE(alphabet_capacity <= kMaxCapacity, "alphabet capacity ", alphabet_capacity, " exceeds ", kMaxCapacity);
  return alphabet_capacity <= kSmallCapacity ? 0 : temp_layout(alphabet_capacity).total;
}

void build_codebook_device(const uint64_t* d_hist, uint32_t cap, unsigned length_limit, void* d_temp,
                           std::size_t temp_bytes, const DeviceCodebookOut& out, cudaStream_t stream) {
  VLEC_REQUIRE(cap <= kMaxCapacity, "alphabet capacity ", cap, " exceeds ", kMaxCapacity);
  VLEC_REQUIRE(length_limit <= kMaxLen, "code length limit ", length_limit, " is above the format's maximum of ",
               kMaxLen);
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(out.serialized) % 4 == 0, "serialized output must be 4-byte aligned");
  if (cap <= kSmallCapacity) {
    if (cap <= kSmallThreads)
      small_codebook_kernel<kSmallThreads, 1><<<1, kSmallThreads, 0, stream>>>(d_hist, cap, length_limit, out);
    else
      small_codebook_kernel<kSmallThreads, 4><<<1, kSmallThreads, 0, stream>>>(d_hist, cap, length_limit, out);
    CUDA_CHECK(cudaGetLastError());
    return;
  }
  const Layout L = temp_layout(cap);
  VLEC_REQUIRE(d_temp != nullptr && temp_bytes >= L.total, "codebook temporary storage of ", temp_bytes,
               " bytes is smaller than the ", L.total, " needed");
  unsigned char* t = static_cast<unsigned char*>(d_temp);
  Plan* plan = reinterpret_cast<Plan*>(t + L.plan);
  uint32_t* iota = reinterpret_cast<uint32_t*>(t + L.iota);
  uint64_t* keys = reinterpret_cast<uint64_t*>(t + L.keys);
  uint32_t* ranked = reinterpret_cast<uint32_t*>(t + L.ranked);
  uint64_t* inner = reinterpret_cast<uint64_t*>(t + L.inner);
  uint8_t* kids = t + L.kids;
  uint32_t* packed = iota;  // free again once the sort is done
  uint32_t* counts = reinterpret_cast<uint32_t*>(t + L.counts);
  std::size_t cub_bytes = L.cub_bytes;

  iota_kernel<<<(cap + 255) / 256, 256, 0, stream>>>(iota, cap);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(t + L.cub, cub_bytes, d_hist, keys, iota, ranked,
                                                       static_cast<int>(cap), 0, 64, stream));
  const std::size_t smem = cl_smem_bytes(cap);
  allow_cl_smem();
  generate_cl_kernel<<<1, kClThreads, smem, stream>>>(keys, cap, length_limit, inner, kids, plan);
  CUDA_CHECK(cudaGetLastError());
  policy_kernel<<<(cap + kRankThreads - 1) / kRankThreads, kRankThreads, 0, stream>>>(keys, ranked, cap, plan,
                                                                                      packed);
  CUDA_CHECK(cudaGetLastError());
  const uint32_t blocks = (cap + kSymThreads - 1) / kSymThreads;
  const uint32_t ser_words = static_cast<uint32_t>(serialized_capacity(cap) / 4);
  count_kernel<<<blocks, kSymThreads, 0, stream>>>(packed, cap, plan, out.lengths, counts,
                                                   reinterpret_cast<uint32_t*>(out.serialized), ser_words);
  CUDA_CHECK(cudaGetLastError());
  generate_cw_kernel<<<blocks, kSymThreads, 0, stream>>>(out.lengths, cap, plan, counts, out);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
