// cuda/codebook_gpu.cu: see codebook_gpu.hpp. One kernel launch per codebook.
//
// Where the time went before (H100: 54 / 69 / 188 / 339 us enqueued, 51 / 67 /
// 172 / 306 us as a graph, for 256 / 1,024 / 8,192 / 65,536 symbols with 22 /
// 24 / 27 / 30 phases; counted from the code and ptxas/SASS):
//   launches   1 kernel up to 1,024 symbols; above: iota, CUB onesweep on
//              64-bit keys (2 memsets, histogram, exclusive sum, then 8 x
//              (memset + onesweep): 20 stream operations for 4-8 significant
//              bytes), generate_cl, policy, count, generate_cw: 25 in all, each
//              ~1.5-3 us of launch latency on a dependent stream.
//   phases     per tile: a window copy (shared->shared, or global->shared with
//              an L2 round trip of ~1 k cycles on the large path), 2
//              __syncthreads, and EVERY thread (256 or 1,024) running two
//              lockstep binary searches (count of leaves <= t, merge path)
//              over the whole 1,024/4,096 window: ~10-12 dependent steps of
//              three scattered 8-byte shared loads, 8-36 k loads a tile that
//              keep the shared pipe busy 1-3.5 k cycles, where a Laplace
//              phase melds a few dozen (256 symbols) to a few thousand nodes.
//              ~0.6-1 us a phase on one block (22 x), ~3 us a tile on the
//              large path (28 tiles at 8,192, 47 at 65,536): the bulk.
//   depths     1 __syncthreads per phase.
//   limiter    4 candidates on lanes 0-3 of one warp (divergent, so one after
//              another), each with 128-entry scans, a 128-step local-memory
//              accumulation and u64 divisions.
// Now (one launch; S = symbols per block; phases and tiles for the timing
// histogram: 22/24/27/30 phases, 22/24/27/47 tiles, 0 copied windows):
//   layout     <= 1,024 symbols: 256 threads, everything in shared memory;
//              <= 8,192: one 1,024-thread block, everything in shared memory
//              (176 KiB); above: a cluster of ceil(cap/8,192) <= 8 blocks of
//              1,024 threads (224 KiB each, distributed shared memory).
//   sort       8-bit LSD radix in shared memory, ceil(bits/8) passes for the
//              largest count's actual width (3 below 2^24, 8 at most): per
//              pass a __match_any_sync rank per warp, a scan over the warps
//              per digit, cluster-wide digit offsets (2 cluster barriers) and
//              a scatter. In a cluster each block first puts its keys in
//              their final order in shared memory, so that its scatter
//              through distributed shared memory writes runs of consecutive
//              slots, not 8 random remote stores a thread
//              (set_codebook_staged_sort switches back, for timing). A rank
//              by counting (each of 256 threads against every key) was
//              measured slower than 3 radix passes at 256 symbols (9.8 k
//              against 4.3 k cycles).
//   tree       up to kWarpTreeMax (1,024) present symbols, resident: ONE warp
//              (warp_tree.hpp), GenerateCL's phases under __syncwarp, each
//              phase from one register window of 32 leaves and 32 nodes, 32
//              merged nodes a round (ballots and shuffles, no data-dependent
//              branch per node), in 32-bit weights when the counts total
//              below 2^32; depths by pointer jumping over the whole block.
//              Measured on the H100 (clock64): the CPU's two-queue loop on
//              one thread takes ~190 cycles a merge (48 k cycles at 256
//              symbols); a warp round of up to 32 merged nodes ~850 cycles
//              and a phase's own steps ~800, all latency of one warp's
//              dependent instructions (~5 cycles each): 27.8 k cycles for the
//              Laplace 256 (22 phases). Skewed trees (a pair or two a phase)
//              are cheaper serially, so that loop does trees of up to 128
//              symbols and finishes the skewed tails (warp_tree.hpp's
//              hand_to_serial).
//   phases     above (block tiles, generate_cl.hpp): ONE __syncthreads per
//              tile, no window copy, no global round trip: resident
//              leaves/nodes, or (cluster) a leaf ring refilled with cp.async
//              one tile ahead and a node ring in shared memory (a tile whose
//              internal queue outgrew the ring copies its window from global
//              memory: 0 times for the timing histogram, <= 12 for uniform
//              random 65,536). Only threads whose nodes can be <= t search
//              (one load tells the rest), 4-ary merge-path search (6 loads a
//              round in flight: ~log4 P rounds), two-deep register heads for
//              the meld. Measured: ~3.8 k cycles a tile resident (8,192),
//              ~6.5 k streaming (65,536): 1,024 threads' searches load the
//              shared-memory pipe; fewer threads with longer melds (16 or 32
//              nodes a thread) were slower still (a meld step ~330 cycles).
//   depths     4 nodes a thread a round, loads batched; the phases near the
//              root (<= 32 nodes) by warp 0 alone under __syncwarp.
//   limiter    candidate c on warp c, length l on lane l: the counts above the
//              limit and the Kraft sum by shuffles, bound[] by a warp scan;
//              only the rare Kraft loop (limit_excess) runs on one lane.
//   post       lengths of a run of ranks per thread by two searches per
//              candidate; canonical codes and serialization of ITEMS tiles in
//              two barriers (a scan over ITEMS x warps per length), not two
//              per tile; all of it spread over the cluster's blocks.
// Kernel stages (codebook_kernel<NT, ITEMS, kCluster>; block b of the
// cluster owns symbols and ranks [bS, bS + S)):
//   1. counts into shared memory; cluster-wide largest count and present m
//      (and, in one block, whether the counts total below 2^32).
//   2. radix sort by (count desc, symbol asc): block b ends up holding ranks
//      [bS, bS + S) (keys and symbols).
//   3. the tree on block 0: warp_tree_block (resident, m <= kWarpTreeMax) or
//      generate_cl (generate_cl.hpp): resident layout (the leaves are the
//      sorted keys, reversed in place) for one block, streaming layout
//      (sorted keys through global memory, node weights, parents and leaf
//      counts in global memory, parents copied back for the depth pass) for a
//      cluster. Then bl_count, and the four candidates' limited counts.
//   4. per rank: each candidate's length and coded bits; every block sums
//      every block's bits and picks the same candidate; lengths scattered to
//      the blocks that own the symbols.
//   5. per symbol: lengths out; per length, codes before each warp (a scan
//      over ITEMS x warps, then over the blocks before); canonical codes,
//      encode entries and the serialized fields (OR-ed in with atomics over a
//      zeroed stream); block 0 writes the header.
// Resources (ptxas, sm_90): <256,1> 55 registers, <256,4> 64, <1024,8> 64, all
// without spills or stack; cluster <1024,8> 64 registers and 120 bytes of
// spills (keys held across a sort pass's cluster barrier). Shared memory:
// 12.6 / 22 / 176 / 224 KiB dynamic + 3.0 KiB static (2.7 in the cluster
// kernel: its 224 KiB leave 3 KiB of the 227 KiB a block may have).
#include "cuda/codebook_gpu.hpp"

#include <atomic>
#include <cooperative_groups.h>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "cuda/generate_cl.hpp"
#include "cuda/warp_tree.hpp"

namespace vlec::cuda {

namespace {

namespace cg = cooperative_groups;
using namespace cl;

constexpr uint32_t kFull = 0xFFFFFFFFu;
constexpr uint32_t kMaxCapacity = 65536;
constexpr uint32_t kSmallCapacity = 1024;   // 256 threads, resident
constexpr uint32_t kBlockCapacity = 8192;   // symbols of a 1024-thread block
constexpr uint32_t kMaxClusterBlocks = kMaxCapacity / kBlockCapacity;
constexpr uint32_t kIpt = 4;                // merged nodes per thread of a tile
constexpr uint32_t kStreamLeafRing = 8192;  // = 2 tiles of 1024 x 4
constexpr uint32_t kStreamNodeRing = 16384;
constexpr uint32_t kGroupSlot = kSlots;     // per-block totals: [1..24] lengths, [25] present groups,
constexpr uint32_t kAlphaSlot = kSlots + 1;  // [26] 1 + the last symbol with a code

struct Plan {
  uint32_t m, error, ncand;
  uint32_t valid[kCandidates];
  uint32_t bound[kCandidates][kSlots];  // codes of length <= l under each candidate
};

// Temporary storage of the cluster kernel (global memory).
struct Temp {
  uint64_t* keys;    // sorted counts, descending
  uint16_t* ranked;  // symbol of each rank
  uint64_t* inner;   // node weights
  uint8_t* kids;     // leaf children per node
  uint16_t* parent;  // parent per node
};

constexpr std::size_t align16(std::size_t v) { return (v + 15) / 16 * 16; }
constexpr std::size_t max_sz(std::size_t a, std::size_t b) { return a > b ? a : b; }

// Dynamic shared memory of a block (offsets in bytes). The sort's keys and
// symbols stay put in the resident layout (the leaves and the post stage
// read them); everything else is a union over the stages.
template <int NT, int ITEMS, bool kCluster>
struct Smem {
  static constexpr uint32_t S = NT * ITEMS, NW = NT / 32, T = NT * kIpt;
  static constexpr uint32_t LR = kCluster ? kStreamLeafRing : S, R = kCluster ? kStreamNodeRing : S;
  // the sort
  static constexpr std::size_t keys = 0, vals = 8 * S, wcnt = align16(vals + 2 * S), tot = wcnt + 4 * 256 * NW,
                               off = tot + 4 * 256, wsum = off + 4 * 256, stage_k = align16(wsum + 4 * 32),
                               stage_v = stage_k + 8 * S, loff = stage_v + 2 * S, lsum = loff + 4 * 256,
                               sort_end = kCluster ? lsum + 4 * 32 : stage_k;
  static constexpr std::size_t base = kCluster ? 0 : wcnt;
  // generate_cl: resident (leaves = keys) or streaming
  static constexpr std::size_t leaf = base, node = kCluster ? leaf + 8 * LR : base, bx = node + 8 * R,
                               parent = bx + (kCluster ? 8 * T : 0), kids = parent + (kCluster ? 0 : 2 * S),
                               depth = kids + (kCluster ? 0 : S), cl_end = depth + (kCluster ? 0 : S);
  // streaming: the depth pass (aliases the rings)
  static constexpr std::size_t parent_sh = 0, depth_sh = parent_sh + 2 * kMaxCapacity,
                               depth_end = kCluster ? depth_sh + kMaxCapacity : 0;
  // the post stage
  static constexpr std::size_t lens = base, wc2 = align16(lens + S), gf = wc2 + 4 * 32 * NW * ITEMS,
                               post_end = gf + 4 * 2 * NW * ITEMS;
  static constexpr std::size_t total =
      max_sz(max_sz(sort_end, cl_end), max_sz(depth_end, post_end));
  static_assert(kCluster || R * 4 >= S * 3, "resident node ring too small");
  static_assert(!kCluster || LR >= 2 * T, "leaf ring too small");
};

// Blocks whose shared memory a loop over the peers reads (unrolled, guarded).
template <bool kCluster>
constexpr uint32_t kPeerSlots = kCluster ? kMaxClusterBlocks : 1;

// The blocks that share the work: a cluster, or one block on its own.
template <bool kCluster>
struct Peers {
  uint32_t rank = 0, count = 1;
  template <class T>
  __device__ __forceinline__ T* at(T* p, uint32_t b) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kCluster) return cg::this_cluster().map_shared_rank(p, static_cast<int>(b));
#endif
    return p;
  }
  __device__ __forceinline__ void sync() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kCluster) {
      cg::this_cluster().sync();
      return;
    }
#endif
    __syncthreads();
  }
};

__device__ __forceinline__ uint64_t warp_sum64(uint64_t v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

__device__ __forceinline__ uint64_t warp_max64(uint64_t v) {
  for (int o = 16; o > 0; o >>= 1) {
    const uint64_t w = __shfl_xor_sync(kFull, v, o);
    v = w > v ? w : v;
  }
  return v;
}

__device__ __forceinline__ uint32_t warp_incl_scan(uint32_t v, uint32_t lane) {
  for (uint32_t o = 1; o < 32; o <<= 1) {
    const uint32_t n = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += n;
  }
  return v;
}

constexpr int kStampSlots = 16;

// Diagnostics (codebook_gpu.hpp): %globaltimer and clock64 of block 0's thread 0.
__device__ __forceinline__ void stamp(uint64_t* st, int i) {
  if (st != nullptr && threadIdx.x == 0 && blockIdx.x == 0) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    st[i] = t;
    st[kStampSlots + i] = static_cast<uint64_t>(clock64());
  }
}

// ---- the sort ---------------------------------------------------------------

// Stable LSD radix sort of the blocks' S keys each (warp w holds positions
// [w*32*ITEMS, (w+1)*32*ITEMS), item j of lane l position w*32*ITEMS + j*32 + l),
// by count descending, 8 bits a pass. A pass ranks each key within its warp
// (__match_any_sync, j-major, lane order), within the block (a scan over the
// warps per digit) and within the cluster (the digit totals of every block),
// and scatters it to its block and slot.
template <int NT, int ITEMS, bool kCluster>
__device__ void radix_sort_desc(uint64_t* keys, uint16_t* vals, uint32_t* wcnt, uint32_t* tot, uint32_t* off,
                                uint32_t* wsum, uint64_t* stage_k, uint16_t* stage_v, uint32_t* loff, uint32_t* lsum,
                                uint32_t passes, const Peers<kCluster>& peers, bool staged) {
  constexpr uint32_t S = NT * ITEMS, NW = NT / 32;
  static_assert(NT >= 256, "one thread per digit");
  static_assert(ITEMS <= 8, "a rank within the warp fits in 8 bits");
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lt = (1u << lane) - 1;
  uint32_t* wc = wcnt + warp * 256;
  for (uint32_t pass = 0; pass < passes; ++pass) {
    const uint32_t shift = 8 * pass;
    uint64_t k[ITEMS];
    uint32_t vd[ITEMS];  // symbol | digit << 16 | rank in the warp << 24
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint32_t i = warp * 32 * ITEMS + j * 32 + lane;
      k[j] = keys[i];
      vd[j] = vals[i] | (255u - static_cast<uint32_t>((k[j] >> shift) & 255u)) << 16;
    }
#pragma unroll
    for (uint32_t e = 0; e < 256; e += 32) wc[e + lane] = 0;
    __syncwarp();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const uint32_t dg = (vd[j] >> 16) & 255u, same = __match_any_sync(kFull, dg), c0 = wc[dg];
      vd[j] |= (c0 + __popc(same & lt)) << 24;
      __syncwarp();
      if ((same & lt) == 0) wc[dg] = c0 + __popc(same);
      __syncwarp();
    }
    __syncthreads();
    if (tid < 256) {  // per digit: keys in the warps before, and in the block
      uint32_t acc = 0;
#pragma unroll 8
      for (uint32_t w = 0; w < NW; ++w) {
        const uint32_t x = wcnt[w * 256 + tid];
        wcnt[w * 256 + tid] = acc;
        acc += x;
      }
      tot[tid] = acc;
    }
    peers.sync();  // every block's totals are out, and every key is in registers
    uint32_t all = 0, below = 0, incl = 0;
    if (tid < 256) {
      uint32_t x[kPeerSlots<kCluster>];
#pragma unroll
      for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) x[b] = b < peers.count ? peers.at(tot, b)[tid] : 0;
#pragma unroll
      for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) {
        all += x[b];
        below += b < peers.rank ? x[b] : 0;
      }
      incl = warp_incl_scan(all, lane);
      if (lane == 31) wsum[warp] = incl;
    }
    __syncthreads();
    if (tid < 256) {
      uint32_t before = 0;
      for (uint32_t w = 0; w < warp; ++w) before += wsum[w];
      off[tid] = before + incl - all + below;  // the digit's first slot for this block, cluster-wide
    }
    auto scatter_from_registers = [&] {
      __syncthreads();
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const uint32_t dg = (vd[j] >> 16) & 255u, pos = off[dg] + wc[dg] + (vd[j] >> 24);
        const uint32_t dst = pos / S, slot = pos % S;
        peers.at(keys, dst)[slot] = k[j];
        peers.at(vals, dst)[slot] = static_cast<uint16_t>(vd[j]);
      }
    };
    if constexpr (kCluster) {
      if (staged) {
        // The block's keys in their final order first (shared memory), so that
        // the cluster-wide scatter writes runs of consecutive slots: loff[d] =
        // the block's keys of digits before d.
        uint32_t mine = 0, lincl = 0;
        if (tid < 256) {
          mine = tot[tid];
          lincl = warp_incl_scan(mine, lane);
          if (lane == 31) lsum[warp] = lincl;
        }
        __syncthreads();
        if (tid < 256) {
          uint32_t before = 0;
          for (uint32_t w = 0; w < warp; ++w) before += lsum[w];
          loff[tid] = before + lincl - mine;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const uint32_t dg = (vd[j] >> 16) & 255u, lp = loff[dg] + wc[dg] + (vd[j] >> 24);
          stage_k[lp] = k[j];
          stage_v[lp] = static_cast<uint16_t>(vd[j]);
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const uint32_t i = j * NT + tid;
          const uint64_t kk = stage_k[i];
          const uint32_t dg = 255u - static_cast<uint32_t>((kk >> shift) & 255u), pos = off[dg] + (i - loff[dg]);
          peers.at(keys, pos / S)[pos % S] = kk;
          peers.at(vals, pos / S)[pos % S] = stage_v[i];
        }
      } else {
        scatter_from_registers();
      }
    } else {
      scatter_from_registers();
    }
    peers.sync();
  }
}

// ---- the plan -----------------------------------------------------------------

// Warp c (0..3): candidate c's limited length counts, lane l for length l
// (the sums over lengths by shuffles; only the rare Kraft loop, when codes
// exceed the limit by more than they can absorb at it, runs on one lane, on
// a shared copy). bound[l] = codes of length <= l, by a warp scan.
__device__ void plan_candidates(uint32_t m, uint32_t fixed_limit, bool error, const ClShared& cls, Plan& p,
                                uint64_t (*scratch)[kSlots]) {
  const uint32_t tid = threadIdx.x, c = tid >> 5, lane = tid & 31;
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
      if (kraft > (uint64_t{1} << L)) {
        if (lane < kSlots) scratch[c][lane] = cnt;
        __syncwarp();
        if (lane == 0) limit_excess(scratch[c], L, kraft - (uint64_t{1} << L));
        __syncwarp();
        cnt = lane < kSlots ? scratch[c][lane] : 0;
      }
    }
    const uint32_t bound = warp_incl_scan(lane < kSlots ? static_cast<uint32_t>(cnt) : 0, lane);
    if (lane < kSlots) p.bound[c][lane] = bound;
    if (lane == 0) p.valid[c] = valid;
  }
  if (tid == 0) p.m = m, p.error = error, p.ncand = ncand;
}

__device__ __forceinline__ void or_bits(uint32_t* stream, uint64_t bit, uint32_t value, uint32_t width) {
  const uint32_t w = static_cast<uint32_t>(bit >> 5), o = static_cast<uint32_t>(bit & 31);
  atomicOr(&stream[w], value << o);
  if (o + width > 32) atomicOr(&stream[w + 1], value >> (32 - o));
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

// ---- the kernel ---------------------------------------------------------------

template <int NT, int ITEMS, bool kCluster>
__global__ void __launch_bounds__(NT, 1)
    codebook_kernel(const uint64_t* hist, uint32_t cap, uint32_t fixed_limit, DeviceCodebookOut out, Temp tmp,
                    uint64_t* stamps, uint32_t staged_sort) {
  using L = Smem<NT, ITEMS, kCluster>;
  constexpr uint32_t S = L::S, NW = L::NW;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ ClShared cls;
  __shared__ Plan plan;
  __shared__ uint64_t s_limit[kCandidates][kSlots];  // the Kraft loop's counts
  __shared__ unsigned long long s_max, s_total, s_bits[kCandidates];
  __shared__ uint32_t s_nz, s_m, s_passes, s_choice, s_maxlen, s_alpha, s_groups, s_n;
  __shared__ uint32_t s_next[kSlots], s_btot[32], s_base[32];
  uint64_t* keys = reinterpret_cast<uint64_t*>(smem + L::keys);
  uint16_t* vals = reinterpret_cast<uint16_t*>(smem + L::vals);
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, lt = (1u << lane) - 1;
  Peers<kCluster> peers;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (kCluster) peers.rank = cg::this_cluster().block_rank(), peers.count = cg::this_cluster().num_blocks();
#else
  if constexpr (kCluster) __trap();  // clusters need sm_90
#endif
  const uint32_t bS = peers.rank * S;
  stamp(stamps, 0);

  // 1. Counts in symbol order; the largest count and the present symbols, cluster-wide.
  if (tid == 0) s_max = 0, s_nz = 0, s_alpha = 0, s_total = 0;
  for (uint32_t c = tid; c < kCandidates; c += NT) s_bits[c] = 0;
  uint64_t mx = 0, sum = 0;
  uint32_t nz = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * NT + tid, sym = bS + i;
    const uint64_t c = sym < cap ? hist[sym] : 0;
    keys[i] = c;
    vals[i] = static_cast<uint16_t>(sym);
    mx = c > mx ? c : mx;
    nz += c != 0;
    sum = sat_add(sum, c);
  }
  __syncthreads();
  mx = warp_max64(mx);
  for (int o = 16; o > 0; o >>= 1) nz += __shfl_xor_sync(kFull, nz, o);
  if constexpr (!kCluster) {  // the total, clamped to 2^32 a warp: is it below 2^32 (warp_tree_block)?
    for (int o = 16; o > 0; o >>= 1) sum = sat_add(sum, __shfl_xor_sync(kFull, sum, o));
    if (lane == 0 && sum) atomicAdd(&s_total, static_cast<unsigned long long>(sum < (uint64_t{1} << 32) ? sum : uint64_t{1} << 32));
  }
  if (lane == 0) {
    if (mx) atomicMax(&s_max, static_cast<unsigned long long>(mx));
    if (nz) atomicAdd(&s_nz, nz);
  }
  peers.sync();
  if (tid == 0) {
    uint64_t all_max = 0;
    uint32_t all_nz = 0;
#pragma unroll
    for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) {  // every block's loads in flight together
      const uint64_t x = b < peers.count ? *peers.at(&s_max, b) : 0;
      all_max = x > all_max ? x : all_max;
      all_nz += b < peers.count ? *peers.at(&s_nz, b) : 0;
    }
    s_m = all_nz;
    s_passes = (64 - __clzll(static_cast<long long>(all_max)) + 7) / 8;
  }
  __syncthreads();
  const uint32_t m = s_m;
  const bool error = fixed_limit != 0 && (uint64_t{1} << fixed_limit) < m;
  stamp(stamps, 1);

  // 2. Sort: block b holds ranks [bS, bS + S).
  radix_sort_desc<NT, ITEMS, kCluster>(keys, vals, reinterpret_cast<uint32_t*>(smem + L::wcnt),
                                       reinterpret_cast<uint32_t*>(smem + L::tot),
                                       reinterpret_cast<uint32_t*>(smem + L::off),
                                       reinterpret_cast<uint32_t*>(smem + L::wsum),
                                       reinterpret_cast<uint64_t*>(smem + L::stage_k),
                                       reinterpret_cast<uint16_t*>(smem + L::stage_v),
                                       reinterpret_cast<uint32_t*>(smem + L::loff),
                                       reinterpret_cast<uint32_t*>(smem + L::lsum), s_passes, peers,
                                       staged_sort != 0);
  stamp(stamps, 2);

  // 3. The tree (block 0) and the plan.
  ClArgs g{};
  g.m = m;
  if constexpr (kCluster) {
    for (uint32_t i = tid; i < S; i += NT)
      if (bS + i < cap) tmp.keys[bS + i] = keys[i], tmp.ranked[bS + i] = vals[i];
    peers.sync();
    g.keys_desc = tmp.keys;
    g.leaf = reinterpret_cast<uint64_t*>(smem + L::leaf);
    g.node = reinterpret_cast<uint64_t*>(smem + L::node);
    g.bx = reinterpret_cast<uint64_t*>(smem + L::bx);
    g.inner_w = tmp.inner;
    g.parent = tmp.parent;
    g.leafkids = tmp.kids;
    g.parent_sh = reinterpret_cast<uint16_t*>(smem + L::parent_sh);
    g.depth = smem + L::depth_sh;
  } else {
    for (uint32_t i = tid; i < m / 2; i += NT) {  // the leaves, increasing: keys reversed in place
      const uint64_t a = keys[i], b = keys[m - 1 - i];
      keys[i] = b, keys[m - 1 - i] = a;
    }
    __syncthreads();
    g.leaf = keys;
    g.node = reinterpret_cast<uint64_t*>(smem + L::node);
    g.parent = reinterpret_cast<uint16_t*>(smem + L::parent);
    g.leafkids = smem + L::kids;
    g.depth = smem + L::depth;
  }
  stamp(stamps, 3);
  if (peers.rank == 0) {
    if (!error) {
      if constexpr (kCluster) {
        generate_cl_block<NT, kIpt, L::LR, L::R, kCluster>(g, cls);
      } else if (m <= kWarpTreeMax) {
        warp_tree_block<NT>(g, L::R - 1, s_total < (uint64_t{1} << 32), cls);
      } else if constexpr (S > kWarpTreeMax) {
        generate_cl_block<NT, kIpt, L::LR, L::R, kCluster>(g, cls);
      }
    }
    stamp(stamps, 4);
    plan_candidates(m, fixed_limit, error, cls, plan, s_limit);
  }
  peers.sync();
  if (peers.rank != 0) {  // the plan, from block 0
    const uint32_t* src = reinterpret_cast<const uint32_t*>(peers.at(&plan, 0));
    uint32_t* dst = reinterpret_cast<uint32_t*>(&plan);
    for (uint32_t i = tid; i < sizeof(Plan) / 4; i += NT) dst[i] = src[i];
    __syncthreads();
  }
  stamp(stamps, 5);

  // 4. Per rank: every candidate's lengths and coded bits; the choice; lengths to their symbols' blocks.
  const uint32_t r0 = bS + tid * ITEMS;
  uint64_t key[ITEMS];
  uint32_t sym[ITEMS], packed[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t r = r0 + j;
    if constexpr (kCluster) {
      key[j] = r < m ? tmp.keys[r] : 0;
      sym[j] = r < cap ? tmp.ranked[r] : 0;
    } else {
      key[j] = r < m ? keys[m - 1 - r] : 0;
      sym[j] = vals[r];
    }
    packed[j] = 0;
  }
#pragma unroll
  for (uint32_t c = 0; c < kCandidates; ++c) {
    uint64_t bits = 0;
    if (plan.valid[c]) {
      uint32_t len[ITEMS];
      lens_of_ranks(plan.bound[c], r0, len);
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) packed[j] |= len[j] << (5 * c), bits += key[j] * len[j];
    }
    bits = warp_sum64(bits);
    if (lane == 0 && bits) atomicAdd(&s_bits[c], static_cast<unsigned long long>(bits));
  }
  stamp(stamps, 8);
  peers.sync();
  if (tid == 0) {
    uint64_t bits[kCandidates] = {};
#pragma unroll
    for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b)
      for (uint32_t c = 0; c < kCandidates; ++c) bits[c] += b < peers.count ? peers.at(s_bits, b)[c] : 0;
    const uint32_t c = choose_candidate(plan.ncand, plan.valid, bits);
    uint32_t cnt[kSlots], longest = 0;
    cnt[0] = 0;
    for (uint32_t l = 1; l < kSlots; ++l) {
      cnt[l] = plan.bound[c][l] - plan.bound[c][l - 1];
      if (cnt[l]) longest = l;
    }
    canonical_next(cnt, s_next);
    s_choice = c;
    s_maxlen = longest;
  }
  __syncthreads();
  stamp(stamps, 9);
  uint8_t* lens = smem + L::lens;
  {
    const uint32_t shift = 5 * s_choice;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
      if (r0 + j < cap) peers.at(lens, sym[j] / S)[sym[j] % S] = static_cast<uint8_t>((packed[j] >> shift) & 31u);
  }
  peers.sync();
  stamp(stamps, 6);

  // 5. Per symbol (tile j: symbols bS + j*NT + tid): lengths out, codes per
  // length and present groups before each warp, then the codes.
  uint32_t* wc2 = reinterpret_cast<uint32_t*>(smem + L::wc2);  // [ITEMS][NW][32]
  uint32_t* gf = reinterpret_cast<uint32_t*>(smem + L::gf);    // [ITEMS][2 * NW]
  uint32_t len[ITEMS], before[ITEMS], gmask = 0, amax = 0;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) wc2[(j * NW + warp) * 32 + lane] = 0;
  __syncwarp();
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t i = j * NT + tid, s = bS + i;
    len[j] = s < cap ? lens[i] : 0;
    if (s < cap) out.lengths[s] = static_cast<uint8_t>(len[j]);
    const uint32_t same = __match_any_sync(kFull, len[j]);
    before[j] = __popc(same & lt);
    if (before[j] == 0) wc2[(j * NW + warp) * 32 + len[j]] = __popc(same);
    const uint32_t nzm = __ballot_sync(kFull, len[j] != 0);
    if (lane == 0) {
      gf[j * 2 * NW + 2 * warp] = (nzm & 0xFFFFu) != 0;
      gf[j * 2 * NW + 2 * warp + 1] = (nzm >> 16) != 0;
    }
    if ((lane < 16 ? (nzm & 0xFFFFu) : (nzm >> 16)) != 0) gmask |= 1u << j;
    if (nzm) amax = max_u32(amax, s - lane + 32 - __clz(nzm));  // 1 + the warp's last symbol with a code
  }
  if (amax) atomicMax(&s_alpha, amax);
  __syncthreads();
  stamp(stamps, 10);
  // Exclusive scans in place: task l-1 (l = 1..24) over wc2[.][.][l], task 24 over gf.
  for (uint32_t task = warp; task <= kMaxLen; task += NW) {
    const bool groups = task == kMaxLen;
    const uint32_t n = groups ? 2 * NW * ITEMS : NW * ITEMS, per = (n + 31) / 32;
    const uint32_t e0 = min_u32(lane * per, n), e1 = min_u32(e0 + per, n);
    uint32_t* a = groups ? gf : wc2 + task + 1;
    const uint32_t stride = groups ? 1 : 32;
    uint32_t sum = 0;
    for (uint32_t e = e0; e < e1; ++e) sum += a[e * stride];
    const uint32_t incl = warp_incl_scan(sum, lane);
    uint32_t acc = incl - sum;
    for (uint32_t e = e0; e < e1; ++e) {
      const uint32_t x = a[e * stride];
      a[e * stride] = acc;
      acc += x;
    }
    if (lane == 31) s_btot[groups ? kGroupSlot : task + 1] = incl;
  }
  if (tid == 0) s_btot[0] = 0, s_btot[kAlphaSlot] = s_alpha;
  {  // zero this block's share of the serialized bytes (the ORs come after the barrier)
    uint32_t* words = reinterpret_cast<uint32_t*>(out.serialized);
    const uint32_t nwords = serialized_capacity(cap) / 4, per = (nwords + peers.count - 1) / peers.count;
    const uint32_t w0 = min_u32(peers.rank * per, nwords), w1 = min_u32(w0 + per, nwords);
    for (uint32_t w = w0 + tid; w < w1; w += NT) words[w] = 0;
  }
  peers.sync();
  if (tid <= kAlphaSlot) {
    uint32_t below = 0, all = 0, top = 0;
#pragma unroll
    for (uint32_t b = 0; b < kPeerSlots<kCluster>; ++b) {
      const uint32_t x = b < peers.count ? peers.at(s_btot, b)[tid] : 0;
      below += b < peers.rank ? x : 0;
      all += x;
      top = max_u32(top, x);
    }
    s_base[tid] = below;
    if (tid == kGroupSlot) s_groups = all;
    if (tid == kAlphaSlot) s_n = top;
  }
  __syncthreads();
  stamp(stamps, 11);
  const uint32_t n = s_n, fbits = field_bits(s_maxlen), groups = group_count(n);
  uint32_t* stream = reinterpret_cast<uint32_t*>(out.serialized) + 2;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const uint32_t s = bS + j * NT + tid, l = len[j];
    if (s >= cap) continue;
    uint32_t entry = 0;
    if (l) {
      const uint32_t code = s_next[l] + s_base[l] + wc2[(j * NW + warp) * 32 + l] + before[j];
      entry = (l << 24) | reverse_bits(code, l);
      const uint32_t present_before = s_base[kGroupSlot] + gf[j * 2 * NW + 2 * warp + (lane >> 4)];
      or_bits(stream, field_bit(groups, present_before, s, fbits), l, fbits);
    }
    out.encode_entry[s] = entry;
    if ((lane & 15) == 0 && (gmask >> j & 1)) atomicOr(&stream[s >> 9], 1u << ((s >> 4) & 31));
  }
  if (peers.rank == 0 && tid == 0) write_header(out, error, n, s_maxlen, s_groups, m);
  stamp(stamps, 7);
  if constexpr (kCluster) peers.sync();  // no block leaves while another may read its shared memory
}

// ---- the host side --------------------------------------------------------------

int current_device() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// Per kernel: the dynamic shared memory attribute, set once per device.
template <int NT, int ITEMS, bool kCluster>
void allow_smem() {
  static std::atomic<uint64_t> done{0};
  const int device = current_device();
  const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
  if (bit && (done.load(std::memory_order_relaxed) & bit)) return;
  if (kCluster) {
    int major = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    VLEC_REQUIRE(major >= 9, "the GPU codebook builder needs compute capability 9.0 for alphabets above ",
                 kBlockCapacity, " symbols");
  }
  CUDA_CHECK(cudaFuncSetAttribute(codebook_kernel<NT, ITEMS, kCluster>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(Smem<NT, ITEMS, kCluster>::total)));
  done.fetch_or(bit);
}

// Carving of the temporary storage (cluster kernel), 256-byte aligned pieces.
struct TempLayout {
  std::size_t keys, ranked, inner, kids, parent, total;
};

TempLayout temp_layout(uint32_t cap) {
  TempLayout L{};
  auto take = [&](std::size_t bytes) { return std::exchange(L.total, L.total + (bytes + 255) / 256 * 256); };
  L.keys = take(8 * std::size_t{cap});
  L.ranked = take(2 * std::size_t{cap});
  L.inner = take(8 * std::size_t{cap});
  L.kids = take(std::size_t{cap});
  L.parent = take(2 * std::size_t{cap});
  return L;
}

std::atomic<uint64_t*> g_stamps{nullptr};
std::atomic<uint32_t> g_staged_sort{1};

template <int NT, int ITEMS>
void launch_single(const uint64_t* d_hist, uint32_t cap, unsigned limit, const DeviceCodebookOut& out,
                   cudaStream_t stream) {
  allow_smem<NT, ITEMS, false>();
  codebook_kernel<NT, ITEMS, false><<<1, NT, Smem<NT, ITEMS, false>::total, stream>>>(d_hist, cap, limit, out, Temp{},
                                                                                      g_stamps.load(), g_staged_sort.load());
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::size_t codebook_serialized_capacity(uint32_t alphabet_capacity) { return serialized_capacity(alphabet_capacity); }

std::size_t codebook_temp_bytes(uint32_t alphabet_capacity) {
  VLEC_REQUIRE(alphabet_capacity <= kMaxCapacity, "alphabet capacity ", alphabet_capacity, " exceeds ", kMaxCapacity);
  return alphabet_capacity <= kBlockCapacity ? 0 : temp_layout(alphabet_capacity).total;
}

void set_codebook_profile(uint64_t* d_stamps) { g_stamps.store(d_stamps); }

void set_codebook_staged_sort(bool staged) { g_staged_sort.store(staged ? 1 : 0); }

void build_codebook_device(const uint64_t* d_hist, uint32_t cap, unsigned length_limit, void* d_temp,
                           std::size_t temp_bytes, const DeviceCodebookOut& out, cudaStream_t stream) {
  VLEC_REQUIRE(cap <= kMaxCapacity, "alphabet capacity ", cap, " exceeds ", kMaxCapacity);
  VLEC_REQUIRE(length_limit <= kMaxLen, "code length limit ", length_limit, " is above the format's maximum of ",
               kMaxLen);
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(out.serialized) % 4 == 0, "serialized output must be 4-byte aligned");
  if (cap <= 256) return launch_single<256, 1>(d_hist, cap, length_limit, out, stream);
  if (cap <= kSmallCapacity) return launch_single<256, 4>(d_hist, cap, length_limit, out, stream);
  if (cap <= kBlockCapacity) return launch_single<1024, 8>(d_hist, cap, length_limit, out, stream);
  const TempLayout L = temp_layout(cap);
  VLEC_REQUIRE(d_temp != nullptr && temp_bytes >= L.total, "codebook temporary storage of ", temp_bytes,
               " bytes is smaller than the ", L.total, " needed");
  unsigned char* t = static_cast<unsigned char*>(d_temp);
  const Temp tmp{reinterpret_cast<uint64_t*>(t + L.keys), reinterpret_cast<uint16_t*>(t + L.ranked),
                 reinterpret_cast<uint64_t*>(t + L.inner), t + L.kids, reinterpret_cast<uint16_t*>(t + L.parent)};
  allow_smem<1024, 8, true>();
  const uint32_t blocks = (cap + kBlockCapacity - 1) / kBlockCapacity;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(1024);
  cfg.dynamicSmemBytes = Smem<1024, 8, true>::total;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = blocks;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, codebook_kernel<1024, 8, true>, d_hist, cap, static_cast<uint32_t>(length_limit),
                                out, tmp, g_stamps.load(), g_staged_sort.load()));
}

}  // namespace vlec::cuda
