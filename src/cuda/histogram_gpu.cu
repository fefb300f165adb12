// cuda/histogram_gpu.cu: GPU histograms of u8/u16/u32 symbols (see
// histogram_gpu.hpp), after Gómez-Luna et al. as used by Tian et al. §IV-A:
// per-block histograms replicated in shared memory, merged into global memory.
//
// Why it is fast:
//  * Conflict-free shared atomics. A block keeps 32 copies of its histogram,
//    copy l in bank l (word = bin * 32 + l); lane l of every warp updates only
//    copy l. The 32 atomics of a warp instruction therefore always fall in 32
//    different banks and never on one address, whatever the data: hot bins
//    (30% zeros in skewed bytes, a few central SZ quantization codes) cost no
//    more than uniform data.
//  * The input streams through 16-byte read-only loads, U per thread in
//    flight, in a persistent grid-stride loop; the unaligned head and the
//    tail are counted element by element.
//  * u8: 32 copies x 256 bins x 32-bit counters = 32 KiB per block, several
//    blocks per SM; atomics never need their result.
//  * u16/u32: 32 full copies of 65,536 bins do not fit (one 32-bit copy is
//    256 KiB). Each block (one per SM, 1024 threads, 224 KiB) keeps
//      - the full alphabet once ("cold"), 16-bit counters packed two per word;
//        an atomic's old value reveals a wrapping counter, and the wrap is
//        carried exactly into the global histogram;
//      - a window of 1,536 "hot" bins replicated 32 times, 16-bit counters
//        packed two per word, flushed to global memory before they can wrap.
//    Each block places its window where the counts of its first tile are
//    densest (SZ codes crowd around the centre: quant65536 keeps 100% in
//    1,536 bins, 98% in 768), so nearly every update is conflict-free.
//  * Partial histograms merge with one 64-bit global atomic per non-zero bin.
#include "cuda/histogram_gpu.hpp"

#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <mutex>

#include "cuda/cuda_check.hpp"

namespace vlec::cuda {
namespace {

// ---- the one place `automatic` is decided (set from bench/histogram_bench.cu on an H100)
constexpr HistogramMethod kAutomaticU8 = HistogramMethod::replicated_shared;
constexpr HistogramMethod kAutomaticU16 = HistogramMethod::replicated_shared;
constexpr HistogramMethod kAutomaticU32 = HistogramMethod::replicated_shared;

using ull = unsigned long long;
constexpr uint64_t kNoBadIndex = ~uint64_t{0};

// ---- tuning
constexpr int kU8Threads = 512, kU8Unroll = 4, kU8MinBlocks = 3;  // 42 registers, 32 KiB shared per block
constexpr int kWideThreads = 1024, kWideUnroll = 4;                // one block per SM: 64 B in flight per thread
constexpr uint32_t kCopies = 32;                                   // one histogram copy per lane
constexpr uint32_t kColdWords = kHistogramBins / 2;                // full alphabet, 16-bit counters
constexpr uint32_t kHotBins = 1536, kHotRows = kHotBins / 2;       // replicated window, 16-bit counters
constexpr uint32_t kSegmentBins = kHistogramBins / kWideThreads;   // window placement granularity: 64
static_assert(kSegmentBins * kWideThreads == kHistogramBins && kSegmentBins == 2 * kCopies,
              "choose_window: thread t sums the 32 cold words of segment t");
constexpr std::size_t kWideSmem = (kColdWords + kHotRows * kCopies) * 4 + 32 * 8 + 16;  // 229,648 bytes
// u8 copies count in 32 bits and are merged once, at the end: a launch covers
// at most 2^36 elements, so a copy (1/32 of a block's share) stays below 2^31.
constexpr uint64_t kU8LaunchElements = uint64_t{1} << 36;
constexpr uint64_t kSliceLaunchElements = uint64_t{1} << 31;  // global_atomic: 32-bit slice counters
constexpr uint64_t kCubPieceElements = uint64_t{1} << 30;     // cub: int offsets, 32-bit counters
constexpr uint32_t kSlicesU8 = 64, kSlicesWide = 8;

uint32_t alphabet_of(DType t) { return t == DType::u8 ? 256u : kHistogramBins; }

// The input as an unaligned head, 16-byte vectors and a tail (element counts).
struct Split {
  uint64_t head = 0, nvec = 0, tail = 0;
};
Split split_input(const void* p, uint64_t n, unsigned width) {
  Split s;
  const uint64_t misalign = (16 - reinterpret_cast<uintptr_t>(p) % 16) % 16;
  s.head = std::min<uint64_t>(n, misalign / width);
  const unsigned per_vec = 16 / width;
  s.nvec = (n - s.head) / per_vec;
  s.tail = n - s.head - s.nvec * per_vec;
  return s;
}

// ---- device helpers

// The elements of the 16-byte vector q (little-endian).
template <typename T>
__device__ __forceinline__ void unpack(const uint4& q, uint32_t (&v)[16 / sizeof(T)]) {
  constexpr int kBits = 8 * sizeof(T), kPerWord = 4 / sizeof(T);
  const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (int i = 0; i < 4 * kPerWord; ++i)
    v[i] = kBits == 32 ? w[i] : (w[i / kPerWord] >> (kBits * (i % kPerWord))) & ((1u << (kBits & 31)) - 1);
}

// Calls f(value, element index) for each element of q, whose first element has index `first`.
template <typename T, typename F>
__device__ __forceinline__ void visit_vec(const uint4& q, uint64_t first, F&& f) {
  uint32_t v[16 / sizeof(T)];
  unpack<T>(q, v);
#pragma unroll
  for (int j = 0; j < 16 / int(sizeof(T)); ++j) f(v[j], first + j);
}

// The vectors from `first_vec` on, then the head and the tail, grid-stride.
// After the full tiles (fewer than a tile left) a thread gets at most kUnroll
// vectors and one head and one tail element: the hot flush cadence counts on it.
template <typename T, typename F>
__device__ __forceinline__ void visit_rest(const T* in, const Split& s, uint64_t first_vec, F&& f) {
  constexpr unsigned kPerVec = 16 / sizeof(T);
  const uint64_t gtid = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x, stride = uint64_t{gridDim.x} * blockDim.x;
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  for (uint64_t v = first_vec + gtid; v < s.nvec; v += stride) visit_vec<T>(__ldg(vec + v), s.head + v * kPerVec, f);
  for (uint64_t i = gtid; i < s.head; i += stride) f(uint32_t{in[i]}, i);
  const uint64_t tail0 = s.head + s.nvec * kPerVec;
  for (uint64_t i = gtid; i < s.tail; i += stride) f(uint32_t{in[tail0 + i]}, tail0 + i);
}

__device__ __forceinline__ void report_bad(uint64_t* d_bad, uint64_t my_bad) {
  if (my_bad != kNoBadIndex) atomicMin(reinterpret_cast<ull*>(d_bad), ull{my_bad});
}

// ---- kernels

__global__ void init_kernel(uint64_t* hist, uint64_t* bad) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < kHistogramBins; i += gridDim.x * blockDim.x) hist[i] = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) *bad = kNoBadIndex;
}

// u8, replicated_shared: 32 conflict-free copies of 256 32-bit counters.
__global__ void __launch_bounds__(kU8Threads, kU8MinBlocks)
    replicated_u8_kernel(const uint8_t* in, Split s, uint64_t* hist) {
  __shared__ uint32_t sh[256 * kCopies];
  for (uint32_t i = threadIdx.x; i < 256 * kCopies / 4; i += kU8Threads)
    reinterpret_cast<uint4*>(sh)[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();
  // Byte offset of (bin, lane) = bin * 128 + lane * 4: one shift and one LOP3 per byte of input.
  char* base = reinterpret_cast<char*>(sh);
  const uint32_t lane4 = (threadIdx.x & 31) * 4;
  auto count = [=](uint32_t v, uint64_t) { atomicAdd(reinterpret_cast<uint32_t*>(base + ((v << 7) | lane4)), 1u); };
  auto count_word = [=](uint32_t w) {
    atomicAdd(reinterpret_cast<uint32_t*>(base + (((w << 7) & 0x7F80u) | lane4)), 1u);
    atomicAdd(reinterpret_cast<uint32_t*>(base + (((w >> 1) & 0x7F80u) | lane4)), 1u);
    atomicAdd(reinterpret_cast<uint32_t*>(base + (((w >> 9) & 0x7F80u) | lane4)), 1u);
    atomicAdd(reinterpret_cast<uint32_t*>(base + (((w >> 17) & 0x7F80u) | lane4)), 1u);
  };

  constexpr uint64_t kTile = uint64_t{kU8Threads} * kU8Unroll;
  const uint64_t full_tiles = s.nvec / kTile;
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  for (uint64_t t = blockIdx.x; t < full_tiles; t += gridDim.x) {
    const uint4* p = vec + t * kTile + threadIdx.x;
    uint4 q[kU8Unroll];
#pragma unroll
    for (int k = 0; k < kU8Unroll; ++k) q[k] = __ldg(p + k * kU8Threads);
#pragma unroll
    for (int k = 0; k < kU8Unroll; ++k) {
      count_word(q[k].x);
      count_word(q[k].y);
      count_word(q[k].z);
      count_word(q[k].w);
    }
  }
  visit_rest(in, s, full_tiles * kTile, count);
  __syncthreads();
  for (uint32_t bin = threadIdx.x; bin < 256; bin += kU8Threads) {
    uint32_t sum = 0;
#pragma unroll 8
    for (uint32_t j = 0; j < kCopies; ++j) sum += sh[bin * kCopies + ((j + bin) & 31)];  // rotated: no conflicts
    if (sum) atomicAdd(reinterpret_cast<ull*>(hist + bin), ull{sum});
  }
}

// Adds a cold counter's wrap to the global histogram. The 16-bit half of bin v
// in `old` (the word before the increment) was 0xFFFF: bin v gains 65,536.
// The carry out of an even bin's low half lands in the high half (bin v + 1) as
// a spurious +1, which the global histogram takes back; if that made the high
// half wrap too (old == 0xFFFFFFFF), bin v + 1 also gains 65,536.
__device__ __noinline__ void cold_wrapped(uint64_t* hist, uint32_t v, uint32_t old) {
  atomicAdd(reinterpret_cast<ull*>(hist + v), 65536ull);
  if (!(v & 1)) atomicAdd(reinterpret_cast<ull*>(hist + v + 1), old == 0xFFFFFFFFu ? 65535ull : ~0ull);
}

// Flushes the hot window (rows of 32 lane copies, two bins per word) into the
// global histogram, zeroing it if `reset`. Called by all threads of the block.
__device__ void flush_hot(uint32_t* hot, uint32_t lo, uint64_t* hist, bool reset) {
  __syncthreads();
  for (uint32_t r = threadIdx.x; r < kHotRows; r += kWideThreads) {
    uint32_t even = 0, odd = 0;
#pragma unroll 8
    for (uint32_t j = 0; j < kCopies; ++j) {
      uint32_t* w = hot + r * kCopies + ((j + r) & 31);  // rotated: no bank conflicts
      even += *w & 0xFFFFu;
      odd += *w >> 16;
      if (reset) *w = 0;
    }
    if (even) atomicAdd(reinterpret_cast<ull*>(hist + lo + 2 * r), ull{even});
    if (odd) atomicAdd(reinterpret_cast<ull*>(hist + lo + 2 * r + 1), ull{odd});
  }
  __syncthreads();
}

// Picks the hot window from the counts of the block's first tile (all in the
// cold histogram): the 1,536 bins, starting at a multiple of 64, that hold the
// most of them. The hot region serves as scratch; it is zeroed afterwards.
__device__ uint32_t choose_window(const uint32_t* cold, uint32_t* hot, ull* scratch) {
  __syncthreads();
  const uint32_t t = threadIdx.x;  // segment t: bins [64 t, 64 t + 64) = cold words [32 t, 32 t + 32)
  uint32_t seg = 0;
#pragma unroll 8
  for (uint32_t j = 0; j < kSegmentBins / 2; ++j) {
    const uint32_t w = cold[t * (kSegmentBins / 2) + ((j + t) & 31)];
    seg += (w & 0xFFFFu) + (w >> 16);
  }
  hot[t] = seg;
  __syncthreads();
  constexpr uint32_t kSegs = kHotBins / kSegmentBins;
  ull key = 0;  // (count in the window << 32) | ~start: the densest window, the lowest on ties
  if (t + kSegs <= kWideThreads) {
    uint32_t win = 0;
    for (uint32_t j = 0; j < kSegs; ++j) win += hot[t + j];
    key = (ull{win} << 32) | (~t);
  }
  for (int o = 16; o; o >>= 1) key = max(key, __shfl_xor_sync(0xFFFFFFFFu, key, o));
  if ((t & 31) == 0) scratch[t >> 5] = key;
  __syncthreads();
  if (t < 32) {
    key = scratch[t];
    for (int o = 16; o; o >>= 1) key = max(key, __shfl_xor_sync(0xFFFFFFFFu, key, o));
    if (t == 0) scratch[32] = key;
  }
  __syncthreads();
  const uint32_t lo = (~static_cast<uint32_t>(scratch[32])) * kSegmentBins;
  for (uint32_t i = t; i < kHotRows * kCopies / 4; i += kWideThreads) reinterpret_cast<uint4*>(hot)[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();
  return lo;
}

// u16/u32, replicated_shared: a replicated hot window plus the full alphabet
// once, 16-bit counters (see the top of the file).
template <typename T>
__global__ void __launch_bounds__(kWideThreads, 1)
    replicated_wide_kernel(const T* in, Split s, uint64_t* hist, uint64_t* d_bad) {
  extern __shared__ uint4 smem_vec[];
  uint32_t* cold = reinterpret_cast<uint32_t*>(smem_vec);
  uint32_t* hot = cold + kColdWords;
  ull* scratch = reinterpret_cast<ull*>(hot + kHotRows * kCopies);
  for (uint32_t i = threadIdx.x; i < kColdWords / 4; i += kWideThreads) smem_vec[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();

  // Byte offsets from the start of shared memory: cold word of bin v at (v >> 1) * 4;
  // hot word of window bin d and lane l at 128 KiB + (d >> 1) * 128 + l * 4.
  char* const base = reinterpret_cast<char*>(smem_vec);
  const uint32_t hot_lane4 = (kColdWords * 4) | ((threadIdx.x & 31) * 4);
  uint32_t lo = 0, hot_bins = 0;  // no window until the first tile is counted
  uint64_t my_bad = kNoBadIndex;
  auto hot_add = [=](uint32_t d) {  // d < kHotBins; +1 in the low or high half
    atomicAdd(reinterpret_cast<uint32_t*>(base + (((d << 6) & ~127u) | hot_lane4)), (d & 1) * 0xFFFFu + 1);
  };
  auto count = [&](uint32_t v, uint64_t index) {
    const uint32_t d = v - lo;
    if (d < hot_bins) {
      hot_add(d);
    } else if (sizeof(T) == 4 && v >= kHistogramBins) {
      my_bad = min(my_bad, index);
    } else {
      const uint32_t odd = v & 1;
      const uint32_t old = atomicAdd(reinterpret_cast<uint32_t*>(base + ((v << 1) & ~3u)), odd * 0xFFFFu + 1);
      if ((old << (16 - 16 * odd)) >= 0xFFFF0000u) cold_wrapped(hist, v, old);  // its half was 0xFFFF
    }
  };
  // A whole warp's vectors in the window (the common case for concentrated
  // data) take the straight path: 7 instructions and one atomic per element.
  auto count_vec = [&](const uint4& q, uint64_t first) {
    constexpr int kPerVec = 16 / sizeof(T);
    uint32_t v[kPerVec];
    unpack<T>(q, v);
    bool all_hot = true;
#pragma unroll
    for (int j = 0; j < kPerVec; ++j) all_hot &= v[j] - lo < hot_bins;
    if (__all_sync(0xFFFFFFFFu, all_hot)) {
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) hot_add(v[j] - lo);
    } else {
#pragma unroll
      for (int j = 0; j < kPerVec; ++j) count(v[j], first + j);
    }
  };

  constexpr unsigned kPerVec = 16 / sizeof(T);
  constexpr uint64_t kTile = uint64_t{kWideThreads} * kWideUnroll;
  // A hot counter gains at most 32 warps x kWideUnroll x kPerVec per tile, one
  // more tile's worth in visit_rest, and 2 per warp for the head and tail.
  constexpr uint32_t kPerTile = kCopies * kWideUnroll * kPerVec;
  constexpr uint32_t kFlushTiles = (0xFFFFu - 2 * 32) / kPerTile - 1;
  static_assert((kFlushTiles + 1) * kPerTile + 64 <= 0xFFFFu, "hot counters must not wrap");

  const uint64_t full_tiles = s.nvec / kTile;
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  uint32_t since_flush = 0;
  for (uint64_t t = blockIdx.x; t < full_tiles; t += gridDim.x) {
    const uint64_t v0 = t * kTile + threadIdx.x;
    uint4 q[kWideUnroll];
#pragma unroll
    for (int k = 0; k < kWideUnroll; ++k) q[k] = __ldg(vec + v0 + k * kWideThreads);
#pragma unroll
    for (int k = 0; k < kWideUnroll; ++k) count_vec(q[k], s.head + (v0 + k * kWideThreads) * kPerVec);
    if (hot_bins == 0) {  // block-uniform: the first tile was the sample
      lo = choose_window(cold, hot, scratch);
      hot_bins = kHotBins;
    } else if (++since_flush == kFlushTiles) {
      flush_hot(hot, lo, hist, true);
      since_flush = 0;
    }
  }
  visit_rest(in, s, full_tiles * kTile, count);
  if (hot_bins) flush_hot(hot, lo, hist, false);
  else __syncthreads();
  for (uint32_t k = threadIdx.x; k < kColdWords; k += kWideThreads) {
    const uint32_t w = cold[k];
    if (w & 0xFFFFu) atomicAdd(reinterpret_cast<ull*>(hist + 2 * k), ull{w & 0xFFFFu});
    if (w >> 16) atomicAdd(reinterpret_cast<ull*>(hist + 2 * k + 1), ull{w >> 16});
  }
  report_bad(d_bad, my_bad);
}

// global_atomic: 32-bit global atomics into slice blockIdx % slices.
template <typename T>
__global__ void global_atomic_kernel(const T* in, Split s, uint64_t index_base, uint32_t* slices, uint32_t nslices,
                                     uint32_t alphabet, uint64_t* d_bad) {
  uint32_t* slice = slices + uint64_t{blockIdx.x % nslices} * alphabet;
  uint64_t my_bad = kNoBadIndex;
  visit_rest(in, s, 0, [&](uint32_t v, uint64_t i) {
    if (sizeof(T) < 4 || v < kHistogramBins) atomicAdd(slice + v, 1u);
    else my_bad = min(my_bad, index_base + i);
  });
  report_bad(d_bad, my_bad);
}

// hist[b] += sum of the slices' counters of bin b; the slices are zeroed.
__global__ void add_slices_kernel(uint32_t* slices, uint32_t nslices, uint32_t alphabet, uint64_t* hist) {
  for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < alphabet; b += gridDim.x * blockDim.x) {
    uint64_t sum = 0;
    for (uint32_t k = 0; k < nslices; ++k) {
      sum += slices[uint64_t{k} * alphabet + b];
      slices[uint64_t{k} * alphabet + b] = 0;
    }
    hist[b] += sum;
  }
}

// Only the first out-of-alphabet index of u32 input (for the cub method).
__global__ void find_bad_kernel(const uint32_t* in, Split s, uint64_t* d_bad) {
  uint64_t my_bad = kNoBadIndex;
  visit_rest(in, s, 0, [&](uint32_t v, uint64_t i) {
    if (v >= kHistogramBins) my_bad = min(my_bad, i);
  });
  report_bad(d_bad, my_bad);
}

// ---- host side

struct DeviceInfo {
  bool ready = false;
  int sms = 0, u8_blocks = 0, wide_blocks = 0;  // resident blocks per SM; wide: 0 without 224 KiB per block
};

const DeviceInfo& device_info() {
  static std::mutex mutex;
  static DeviceInfo info[64];
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  VLEC_REQUIRE(dev >= 0 && dev < 64, "device number ", dev, " out of range");
  std::lock_guard<std::mutex> lock(mutex);
  DeviceInfo& d = info[dev];
  if (!d.ready) {
    CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev));
    // Streaming loads do not need L1: give the SM all the shared memory it can have.
    CUDA_CHECK(cudaFuncSetAttribute(replicated_u8_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d.u8_blocks, replicated_u8_kernel, kU8Threads, 0));
    int optin = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (static_cast<std::size_t>(optin) >= kWideSmem) {
      for (const void* k : {reinterpret_cast<const void*>(replicated_wide_kernel<uint16_t>),
                            reinterpret_cast<const void*>(replicated_wide_kernel<uint32_t>)})
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kWideSmem)));
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d.wide_blocks, replicated_wide_kernel<uint16_t>,
                                                               kWideThreads, kWideSmem));
    }
    d.ready = true;
  }
  return d;
}

// The method that runs: `automatic` resolved, and replicated_shared for u16/u32
// replaced by global_atomic on a GPU without 224 KiB of shared memory per block.
HistogramMethod effective_method(DType t, HistogramMethod m) {
  m = resolve_histogram_method(t, m);
  if (m == HistogramMethod::replicated_shared && t != DType::u8 && device_info().wide_blocks == 0)
    m = HistogramMethod::global_atomic;
  return m;
}

std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

// f(T{}) with T the element type of t.
template <typename F>
decltype(auto) with_type(DType t, F&& f) {
  if (t == DType::u8) return f(uint8_t{});
  if (t == DType::u16) return f(uint16_t{});
  return f(uint32_t{});
}

// CUB's even-bin histogram of n elements: levels 0, 1, ..., alphabet into 32-bit counts.
template <typename T>
cudaError_t cub_histogram(void* temp, std::size_t& bytes, const T* in, unsigned* counts, uint64_t n,
                          cudaStream_t stream) {
  const int bins = sizeof(T) == 1 ? 256 : static_cast<int>(kHistogramBins);
  return cub::DeviceHistogram::HistogramEven(temp, bytes, in, counts, bins + 1, 0, bins, static_cast<int>(n), stream);
}

std::size_t temp_bytes_for(uint64_t elements, DType t, HistogramMethod m) {
  if (m == HistogramMethod::global_atomic)
    return std::size_t{t == DType::u8 ? kSlicesU8 : kSlicesWide} * alphabet_of(t) * 4;
  if (m != HistogramMethod::cub || elements == 0) return 0;
  std::size_t b = 0;
  for (uint64_t n : {std::min(elements, kCubPieceElements), elements % kCubPieceElements}) {  // full and last piece
    std::size_t piece = 0;
    if (n) with_type(t, [&](auto tag) {
      CUDA_CHECK(cub_histogram<decltype(tag)>(nullptr, piece, nullptr, nullptr, n, nullptr));
    });
    b = std::max(b, piece);
  }
  return align256(std::size_t{alphabet_of(t)} * 4) + align256(b);
}

template <typename F>
void for_each_launch(uint64_t elements, uint64_t max_elements, F&& f) {
  for (uint64_t off = 0; off < elements; off += max_elements) f(off, std::min(max_elements, elements - off));
}

unsigned grid_for(uint64_t work_units, int blocks_per_sm) {
  const uint64_t cap = uint64_t(std::max(1, device_info().sms)) * std::max(1, blocks_per_sm);
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(cap, work_units)));
}

// Enqueues method m (resolved) on `elements` > 0 elements at `in`, after init_kernel.
template <typename T>
void launch(const T* in, uint64_t elements, HistogramMethod m, uint64_t* d_hist, uint64_t* d_bad, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream) {
  const uint32_t alphabet = sizeof(T) == 1 ? 256u : kHistogramBins;
  if (m == HistogramMethod::replicated_shared) {
    if constexpr (sizeof(T) == 1) {
      for_each_launch(elements, kU8LaunchElements, [&](uint64_t off, uint64_t len) {
        const Split s = split_input(in + off, len, 1);
        const unsigned grid = grid_for(s.nvec / (kU8Threads * kU8Unroll), device_info().u8_blocks);
        replicated_u8_kernel<<<grid, kU8Threads, 0, stream>>>(in + off, s, d_hist);
        CUDA_CHECK(cudaGetLastError());
      });
    } else {
      const Split s = split_input(in, elements, sizeof(T));
      const unsigned grid = grid_for(s.nvec / (kWideThreads * kWideUnroll), device_info().wide_blocks);
      replicated_wide_kernel<T><<<grid, kWideThreads, kWideSmem, stream>>>(in, s, d_hist, d_bad);
      CUDA_CHECK(cudaGetLastError());
    }
  } else if (m == HistogramMethod::global_atomic) {
    const uint32_t nslices = sizeof(T) == 1 ? kSlicesU8 : kSlicesWide;
    uint32_t* slices = static_cast<uint32_t*>(d_temp);
    CUDA_CHECK(cudaMemsetAsync(slices, 0, temp_bytes, stream));
    for_each_launch(elements, kSliceLaunchElements, [&](uint64_t off, uint64_t len) {
      const Split s = split_input(in + off, len, sizeof(T));
      global_atomic_kernel<T><<<grid_for((s.nvec + 255) / 256, 8), 256, 0, stream>>>(in + off, s, off, slices,
                                                                                    nslices, alphabet, d_bad);
      CUDA_CHECK(cudaGetLastError());
      add_slices_kernel<<<(alphabet + 255) / 256, 256, 0, stream>>>(slices, nslices, alphabet, d_hist);
      CUDA_CHECK(cudaGetLastError());
    });
  } else {  // cub
    unsigned* counts = static_cast<unsigned*>(d_temp);
    const std::size_t counts_bytes = align256(std::size_t{alphabet} * 4);
    for_each_launch(elements, kCubPieceElements, [&](uint64_t off, uint64_t len) {
      std::size_t size = temp_bytes - counts_bytes;
      CUDA_CHECK(cub_histogram(static_cast<char*>(d_temp) + counts_bytes, size, in + off, counts, len, stream));
      add_slices_kernel<<<(alphabet + 255) / 256, 256, 0, stream>>>(counts, 1, alphabet, d_hist);
      CUDA_CHECK(cudaGetLastError());
    });
    if constexpr (sizeof(T) == 4) {  // CUB skips values >= 65,536 silently: find the first one
      const Split s = split_input(in, elements, 4);
      find_bad_kernel<<<grid_for((s.nvec + 255) / 256, 8), 256, 0, stream>>>(in, s, d_bad);
      CUDA_CHECK(cudaGetLastError());
    }
  }
}

}  // namespace

const char* to_string(HistogramMethod m) {
  static const char* const kNames[] = {"automatic", "replicated_shared", "global_atomic", "cub"};
  return static_cast<unsigned>(m) < 4 ? kNames[static_cast<unsigned>(m)] : "?";
}

HistogramMethod resolve_histogram_method(DType t, HistogramMethod m) {
  if (m != HistogramMethod::automatic) return m;
  return t == DType::u8 ? kAutomaticU8 : t == DType::u16 ? kAutomaticU16 : kAutomaticU32;
}

std::size_t histogram_temp_bytes(uint64_t elements, DType t, HistogramMethod m) {
  VLEC_REQUIRE(t == DType::u8 || t == DType::u16 || t == DType::u32,
               "the GPU histogram takes u8, u16 or u32 elements, not ", to_string(t));
  return temp_bytes_for(elements, t, effective_method(t, m));
}

void histogram_device(const void* d_in, uint64_t elements, DType t, uint64_t* d_hist, uint64_t* d_bad_index,
                      void* d_temp, std::size_t temp_bytes, cudaStream_t stream, HistogramMethod m) {
  VLEC_REQUIRE(t == DType::u8 || t == DType::u16 || t == DType::u32,
               "the GPU histogram takes u8, u16 or u32 elements, not ", to_string(t));
  const unsigned width = static_cast<unsigned>(dtype_bytes(t));
  VLEC_REQUIRE(d_hist && d_bad_index && reinterpret_cast<uintptr_t>(d_hist) % 8 == 0 &&
                   reinterpret_cast<uintptr_t>(d_bad_index) % 8 == 0,
               "histogram_device needs d_hist and d_bad_index, 8-byte aligned");
  VLEC_REQUIRE(elements == 0 || d_in, "histogram_device: null input with ", elements, " elements");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(d_in) % width == 0, "histogram_device: input not aligned to its ",
               width, "-byte elements");
  m = effective_method(t, m);
  const std::size_t need = temp_bytes_for(elements, t, m);
  VLEC_REQUIRE(temp_bytes >= need && (need == 0 || d_temp), "histogram_device: ", need,
               " bytes of temporary storage needed, ", temp_bytes, " given");

  init_kernel<<<32, 256, 0, stream>>>(d_hist, d_bad_index);
  CUDA_CHECK(cudaGetLastError());
  if (elements == 0) return;
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    launch(static_cast<const T*>(d_in), elements, m, d_hist, d_bad_index, d_temp, need, stream);
  });
}

}  // namespace vlec::cuda
