// cuda/histogram_common.cuh: what the GPU histogram's methods share (see
// histogram_gpu.hpp): the tuning constants, the input split into an unaligned
// head, 16-byte vectors and a tail, and the device helpers that unpack the
// vectors and visit the rest grid-stride, so that every kernel reads its input
// through wide read-only loads. Included by histogram_gpu.cu alone (one
// translation unit, no relocatable device code), hence the unnamed namespace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/histogram_gpu.hpp"

namespace vlec::cuda {
namespace {

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

// Before a pass that counts u8 or u16 elements (every value in the alphabet)
// into d_hist: the counters zeroed, and no element outside the alphabet.
inline void clear_counts(uint64_t* d_hist, uint64_t* d_bad_index, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(d_hist, 0, kHistogramBins * sizeof(uint64_t), stream));
  CUDA_CHECK(cudaMemsetAsync(d_bad_index, 0xFF, sizeof(uint64_t), stream));
}

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

// The u8 kernels' block histogram: kCopies copies of 256 32-bit counters,
// copy l (lane l's) in bank l: counter (bin, lane) at byte bin * 128 + lane * 4.
// threads: the block's (a constant where the kernel has one).
__device__ __forceinline__ void zero_byte_copies(uint32_t* sh, uint32_t threads) {
  for (uint32_t i = threadIdx.x; i < 256 * kCopies / 4; i += threads)
    reinterpret_cast<uint4*>(sh)[i] = make_uint4(0, 0, 0, 0);
}
// The four bytes of `w` counted in the lane's copy (lane4 = lane * 4): one
// shift and one LOP3 a byte.
__device__ __forceinline__ void count_byte_word(char* base, uint32_t lane4, uint32_t w) {
  atomicAdd(reinterpret_cast<uint32_t*>(base + (((w << 7) & 0x7F80u) | lane4)), 1u);
  atomicAdd(reinterpret_cast<uint32_t*>(base + (((w >> 1) & 0x7F80u) | lane4)), 1u);
  atomicAdd(reinterpret_cast<uint32_t*>(base + (((w >> 9) & 0x7F80u) | lane4)), 1u);
  atomicAdd(reinterpret_cast<uint32_t*>(base + (((w >> 17) & 0x7F80u) | lane4)), 1u);
}
// After the block's last count (and a barrier): the copies' sums added to the
// global histogram, one 64-bit atomic a non-zero bin.
__device__ __forceinline__ void add_byte_copies(const uint32_t* sh, uint64_t* hist, uint32_t threads) {
  for (uint32_t bin = threadIdx.x; bin < 256; bin += threads) {
    uint32_t sum = 0;
#pragma unroll 8
    for (uint32_t j = 0; j < kCopies; ++j) sum += sh[bin * kCopies + ((j + bin) & 31)];  // rotated: no conflicts
    if (sum) atomicAdd(reinterpret_cast<ull*>(hist + bin), ull{sum});
  }
}

__device__ __forceinline__ void report_bad(uint64_t* d_bad, uint64_t my_bad) {
  if (my_bad != kNoBadIndex) atomicMin(reinterpret_cast<ull*>(d_bad), ull{my_bad});
}

}  // namespace
}  // namespace vlec::cuda
