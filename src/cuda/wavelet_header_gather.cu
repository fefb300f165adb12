// cuda/wavelet_header_gather.cu: see wavelet_header_gather.hpp.
//
// The host buffer's layout (offsets in bytes):
//   [0, kTop)             the frame's first bytes
//   [kTableAt, +16)       u32 groups the kernel followed, u32 0
//   [kTableAt + 16, ...)  per group 16 bytes: u64 src, u32 bytes, u32 place
//   [kPiecesAt, kEnd)     the pieces, each at an 8-byte aligned place
// Every block derives the same pieces from the frame (a few hundred bytes
// from L2) and copies its share of their 8-byte words, found by a binary
// search over the pieces' places; block 0 writes the table.
#include "cuda/wavelet_header_gather.hpp"

#include <cub/block/block_scan.cuh>

#include <algorithm>

#include "common/bits.hpp"
#include "cuda/cuda_check.hpp"
#include "format/frame.hpp"
#include "wavelet/frame_format.hpp"

namespace vlec::cuda::wavelet_decode {

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kBlocks = 64;
constexpr uint32_t kMaxGroups = 1024;  // beyond: no pieces (the plan reads with copies)
constexpr unsigned kPerThread = kMaxGroups / kThreads;
constexpr std::size_t kTop = 4096;
constexpr std::size_t kTableAt = kTop;
constexpr std::size_t kPiecesAt = kTableAt + 16 + 16 * std::size_t{kMaxGroups};
constexpr std::size_t kEnd = std::size_t{1} << 20;  // pieces past it are cut (the plan reads the rest)
static_assert(kPiecesAt % 16 == 0, "pieces start 8-byte aligned");

constexpr uint64_t kFixed = format::kFixedHeaderBytes;
constexpr uint64_t kTableStart = format::kFixedHeaderBytes + wavelet::kHeaderBytes;  // the group table
static_assert(kFixed == 48 && kTableStart == 96 && wavelet::kGroupEntryBytes == 32 && format::kIndexEntryBytes == 16 &&
                  format::kChecksumBytes == 8,
              "the kernel reads the layout of docs/FORMAT.md §3 and §10");

// A little-endian field of n bytes at p (any alignment: a damaged offset may
// point anywhere).
__device__ uint64_t field(const uint8_t* p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

__device__ uint64_t align8(uint64_t v) { return (v + 7) & ~uint64_t{7}; }

__global__ void __launch_bounds__(kThreads) gather_kernel(const uint8_t* __restrict__ f, uint64_t bytes,
                                                          uint8_t* __restrict__ host) {
  using Scan = cub::BlockScan<uint64_t, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint64_t s_src[kMaxGroups + 1], s_at[kMaxGroups + 1];
  __shared__ uint32_t s_len[kMaxGroups + 1];
  __shared__ uint32_t s_groups;
  __shared__ uint64_t s_payload;
  const unsigned t = threadIdx.x;
  if (t == 0) {
    // The wavelet header's group count and where the payload starts: its
    // header area, with no chunks (a wavelet frame's chunk size is 0).
    uint32_t groups = 0;
    uint64_t payload = 0;
    if (bytes >= kTableStart && field(f + 16, 4) == 0) {
      payload = align8(kFixed + field(f + 20, 4)) + 8;
      groups = static_cast<uint32_t>(field(f + kFixed + 28, 4));
      if (groups > kMaxGroups || kTableStart + 32 * uint64_t{groups} > bytes || payload > bytes) groups = 0;
    }
    s_groups = groups;
    s_payload = payload;
  }
  __syncthreads();
  const uint32_t G = s_groups;
  // Each thread's groups: where each embedded frame starts and how many of
  // its bytes to take (its header area, within its frame and the frame).
  uint64_t len[kPerThread], sum = 0;
#pragma unroll
  for (unsigned k = 0; k < kPerThread; ++k) {
    const uint32_t g = t * kPerThread + k;
    len[k] = 0;
    if (g >= G) continue;
    const uint8_t* e = f + kTableStart + 32 * uint64_t{g};
    const uint64_t offset = field(e + 8, 8), frame_bytes = field(e + 16, 8);
    const uint64_t src = s_payload + offset;
    if (offset < bytes && src < bytes && bytes - src >= kFixed) {
      const uint8_t* h = f + src;
      const uint64_t elements = field(h + 8, 8), chunk = field(h + 16, 4);
      const uint64_t chunks = chunk ? std::min<uint64_t>(elements / chunk + (elements % chunk != 0), bytes) : 0;
      const uint64_t area = align8(kFixed + field(h + 20, 4) + 16 * chunks) + 8;
      len[k] = std::min({area, frame_bytes, bytes - src});
    }
    s_src[g + 1] = src;
    sum += align8(len[k]);
  }
  uint64_t before;
  Scan(scan).ExclusiveSum(sum, before);
  uint64_t at = kPiecesAt + before;
#pragma unroll
  for (unsigned k = 0; k < kPerThread; ++k) {
    const uint32_t g = t * kPerThread + k;
    if (g >= G) continue;
    s_at[g + 1] = at;
    s_len[g + 1] = static_cast<uint32_t>(at < kEnd ? std::min<uint64_t>(len[k], kEnd - at) : 0);
    at += align8(len[k]);
  }
  if (t == 0) s_src[0] = 0, s_at[0] = 0, s_len[0] = static_cast<uint32_t>(std::min<uint64_t>(bytes, uint64_t{kTop}));
  __syncthreads();
  if (blockIdx.x == 0) {
    if (t == 0) {
      reinterpret_cast<uint32_t*>(host + kTableAt)[0] = G;
      reinterpret_cast<uint32_t*>(host + kTableAt)[1] = 0;
    }
    for (uint32_t g = t; g < G; g += kThreads) {
      uint8_t* e = host + kTableAt + 16 + 16 * std::size_t{g};
      reinterpret_cast<uint64_t*>(e)[0] = s_src[g + 1];
      reinterpret_cast<uint32_t*>(e)[2] = s_len[g + 1];
      reinterpret_cast<uint32_t*>(e)[3] = static_cast<uint32_t>(std::min<uint64_t>(s_at[g + 1], uint64_t{kEnd}));
    }
  }
  // The pieces' words, one a thread: word w is host bytes [8w, 8w + 8).
  const uint64_t words = (std::min<uint64_t>(s_at[G] + s_len[G], uint64_t{kEnd}) + 7) / 8;
  for (uint64_t w = blockIdx.x * uint64_t{kThreads} + t; w < words; w += uint64_t{gridDim.x} * kThreads) {
    uint32_t lo = 0, hi = G;  // the last piece placed at or before 8w
    while (lo < hi) {
      const uint32_t mid = (lo + hi + 1) / 2;
      if (s_at[mid] <= 8 * w) lo = mid;
      else hi = mid - 1;
    }
    const uint64_t in = 8 * w - s_at[lo];
    if (in >= s_len[lo]) continue;  // padding, or the table's region
    const uint64_t src = s_src[lo] + in;
    const unsigned n = static_cast<unsigned>(std::min<uint64_t>(8, s_len[lo] - in));
    if (n == 8 && src % 8 == 0) {
      *reinterpret_cast<uint64_t*>(host + 8 * w) = __ldg(reinterpret_cast<const unsigned long long*>(f + src));
    } else {
      for (unsigned i = 0; i < n; ++i) host[8 * w + i] = f[src + i];
    }
  }
  __threadfence_system();
}

}  // namespace

bool gather_headers(const uint8_t* d_frame, std::size_t bytes, cudaStream_t stream, GatheredHeaders& out) {
  out.buffer.resize(kEnd);
  void* device_view = nullptr;
  if (cudaHostGetDevicePointer(&device_view, out.buffer.get(), 0) != cudaSuccess) {
    (void)cudaGetLastError();  // not mapped: not a sticky error
    return false;
  }
  gather_kernel<<<kBlocks, kThreads, 0, stream>>>(d_frame, bytes, static_cast<uint8_t*>(device_view));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const uint8_t* h = out.buffer.get();
  out.top = h;
  out.top_bytes = std::min<std::size_t>(bytes, kTop);
  const uint32_t groups = std::min(load_le32(h + kTableAt), kMaxGroups);
  out.pieces.assign(groups, {});
  for (uint32_t g = 0; g < groups; ++g) {
    const uint8_t* e = h + kTableAt + 16 + 16 * std::size_t{g};
    GatheredHeaders::Piece& p = out.pieces[g];
    const std::size_t len = load_le32(e + 8), place = load_le32(e + 12);
    p.src = load_le64(e);
    if (place >= kPiecesAt && place <= kEnd && len <= kEnd - place) p.bytes = len, p.data = h + place;
  }
  return true;
}

}  // namespace vlec::cuda::wavelet_decode
