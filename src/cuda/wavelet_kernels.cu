// cuda/wavelet_kernels.cu: see wavelet_kernels.hpp.
#include "cuda/wavelet_kernels.hpp"

#include <algorithm>

#include "cuda/cuda_check.hpp"

namespace vlec::cuda::wavelet_gpu {

PhaseEvents* phase_events = nullptr;
uint64_t parallel_group_work = uint64_t{1} << 17;
bool batched_group_decode = true;
bool deferred_chunk_checks = true;
bool batched_header_reads = true;
bool batched_area_reads = true;
bool speculative_header_reads = true;
bool gathered_header_reads = true;
bool early_payload_copies = true;
dwt::Tuning dwt_tuning;
bool coded_detail_bands = true;
unsigned coded_detail_levels = 3;
uint64_t coded_level_min_samples = uint64_t{1} << 20;

namespace {

constexpr unsigned kThreads = 256;
constexpr uint64_t kMaxBlocks = uint64_t{1} << 20;
// 16 values a thread (tiles of 4,096, two block barriers each): the scatter
// of a u16 8192^2 image's low band and levels 2+ took 0.005 ms less than
// with 8 on all three benchmark images, and 32 was no better than 8 (H100,
// bench/results/2026-11-27-h100-session15-scatter-tile-*).
constexpr unsigned kScatterPerThread = 16;
constexpr uint64_t kScatterTile = uint64_t{kThreads} * kScatterPerThread;

unsigned blocks_for(uint64_t items) {
  return static_cast<unsigned>(std::clamp<uint64_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Whether the bits of the low-bit area after the group's last value are zero.
__device__ bool padding_zero(const uint8_t* low, uint64_t low_bytes, uint64_t end_bit) {
  uint64_t byte = end_bit / 8;
  if (end_bit % 8 != 0) {
    if ((low[byte] >> (end_bit % 8)) != 0) return false;
    ++byte;
  }
  for (; byte < low_bytes; ++byte)
    if (low[byte] != 0) return false;
  return true;
}

// The last box in [lo, hi) that starts at or before j (boxes are sorted by
// `first` and non-empty; boxes[lo].first <= j).
__device__ __forceinline__ uint32_t find_box(const BoxDesc* boxes, uint32_t lo, uint32_t hi, uint64_t j) {
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (boxes[mid].first <= j) lo = mid; else hi = mid;
  }
  return lo;
}

// The value of coefficient j (of the concatenation of all groups), which
// lies in box b, with the checks of its low bits and width.
__device__ __forceinline__ int32_t coefficient_value(const ScatterArgs& a, const BoxDesc& b, uint64_t j) {
  const GroupDesc g = a.groups[b.group];
  const uint64_t i = j - b.first + b.index0;
  const uint64_t symbol = g.width == 1 ? uint64_t{g.symbols[i]}
                                       : uint64_t{reinterpret_cast<const uint16_t*>(g.symbols)[i]};
  uint64_t z = symbol;
  if (g.shift != 0) {
    // Value i's bits start at i * k; k <= 24, so they lie within the 64-bit
    // window of two aligned words (bit % 32 + k <= 55).
    const uint64_t bit = i * g.shift;
    const uint32_t* words = reinterpret_cast<const uint32_t*>(g.low);
    const uint64_t w = bit / 32;
    uint64_t window = words[w];
    if ((w + 2) * 4 <= g.low_bytes) window |= uint64_t{words[w + 1]} << 32;
    z = (symbol << g.shift) | ((window >> (bit % 32)) & ((uint64_t{1} << g.shift) - 1));
  }
  if (z > 0xFFFFFFFFull)
    atomicMin(&a.status[kStatusWide],
              static_cast<unsigned long long>((uint64_t{b.group} << 40) | min(i, (uint64_t{1} << 40) - 1)));
  const uint32_t zz = static_cast<uint32_t>(z);
  return static_cast<int32_t>((zz >> 1) ^ (0u - (zz & 1)));
}

__device__ __forceinline__ void store_coefficient(const ScatterArgs& a, const BoxDesc& b, uint64_t x, uint64_t y,
                                                  uint64_t zc, int32_t c) {
  a.coeffs[b.plane_base + b.x0 + x + a.width * (b.y0 + y + a.height * (b.z0 + zc))] = c;
}

// Coefficient j, which lies in box `box`: its position by division.
__device__ __forceinline__ void scatter_one(const ScatterArgs& a, uint32_t box, uint64_t j) {
  const BoxDesc b = a.boxes[box];
  const int32_t c = coefficient_value(a, b, j);
  const uint64_t local = j - b.first;
  uint64_t x, y, zc;
  if (b.nx * b.ny * b.nz <= 0xFFFFFFFFull) {  // 32-bit division, the usual case
    const uint32_t l = static_cast<uint32_t>(local), nx = static_cast<uint32_t>(b.nx),
                   ny = static_cast<uint32_t>(b.ny);
    const uint32_t row = l / nx;
    x = l - row * nx, y = row % ny, zc = row / ny;
  } else {
    const uint64_t row = local / b.nx;
    x = local - row * b.nx, y = row % b.ny, zc = row / b.ny;
  }
  store_coefficient(a, b, x, y, zc, c);
}

// A tile wholly inside box b, four consecutive coefficients a thread (quad
// q of the tile: thread q % kThreads, round q / kThreads), so that a thread
// loads its four symbols with one 8-byte load where the group's symbols are
// aligned, their low bits from one window of up to four words, and stores
// its four coefficients with one 16-byte store where they lie in one row at
// an aligned place (one scalar load and store a coefficient, and two word
// loads for the low bits, kept the scatter at ~45 % of the bandwidth).
__device__ __forceinline__ void scatter_tile_quads(const ScatterArgs& a, uint32_t box, const BoxDesc& b, uint64_t t0) {
  const GroupDesc g = a.groups[b.group];
  const uint32_t k = g.shift;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(g.low);
  const uint64_t low_words = g.low_bytes / 4;
#pragma unroll
  for (unsigned r = 0; r < kScatterPerThread / 4; ++r) {
    const uint64_t j0 = t0 + 4 * (uint64_t{r} * kThreads + threadIdx.x);
    if (j0 >= a.total) return;
    const uint64_t i0 = j0 - b.first + b.index0;
    const unsigned count = static_cast<unsigned>(min(uint64_t{4}, a.total - j0));
    if (count < 4) {  // the last coefficients of all: one at a time
      for (unsigned m = 0; m < count; ++m) scatter_one(a, box, j0 + m);
      continue;
    }
    uint32_t sym[4];
    if (g.width == 2 && i0 % 4 == 0) {
      const uint2 v = *reinterpret_cast<const uint2*>(g.symbols + 2 * i0);
      sym[0] = v.x & 0xFFFF, sym[1] = v.x >> 16, sym[2] = v.y & 0xFFFF, sym[3] = v.y >> 16;
    } else if (g.width == 1 && i0 % 4 == 0) {
      const uint32_t v = *reinterpret_cast<const uint32_t*>(g.symbols + i0);
      for (unsigned m = 0; m < 4; ++m) sym[m] = (v >> (8 * m)) & 0xFF;
    } else {
      for (unsigned m = 0; m < 4; ++m)
        sym[m] = g.width == 1 ? g.symbols[i0 + m] : reinterpret_cast<const uint16_t*>(g.symbols)[i0 + m];
    }
    int32_t c[4];
    if (k != 0) {
      // The four values' bits: [i0 k, i0 k + 4k), at most 96 bits from bit
      // (i0 k) % 32 of word w0: four words (those past the area read 0).
      const uint64_t bit0 = i0 * k, w0 = bit0 / 32;
      uint32_t win[5];
#pragma unroll
      for (unsigned w = 0; w < 5; ++w) win[w] = w0 + w < low_words ? words[w0 + w] : 0u;
      const uint32_t off0 = static_cast<uint32_t>(bit0 % 32), mask = (uint32_t{1} << k) - 1;
#pragma unroll
      for (unsigned m = 0; m < 4; ++m) {
        const uint32_t bit = off0 + m * k, w = bit / 32, off = bit % 32;
        const uint32_t lo = w == 0 ? win[0] : w == 1 ? win[1] : w == 2 ? win[2] : win[3];
        const uint32_t hi = w == 0 ? win[1] : w == 1 ? win[2] : w == 2 ? win[3] : win[4];
        const uint64_t z = (uint64_t{sym[m]} << k) | (__funnelshift_r(lo, hi, off) & mask);
        if (z > 0xFFFFFFFFull)
          atomicMin(&a.status[kStatusWide],
                    static_cast<unsigned long long>((uint64_t{b.group} << 40) | min(i0 + m, (uint64_t{1} << 40) - 1)));
        const uint32_t zz = static_cast<uint32_t>(z);
        c[m] = static_cast<int32_t>((zz >> 1) ^ (0u - (zz & 1)));
      }
    } else {
#pragma unroll
      for (unsigned m = 0; m < 4; ++m) c[m] = static_cast<int32_t>((sym[m] >> 1) ^ (0u - (sym[m] & 1)));
    }
    const uint64_t local = j0 - b.first, row = local / b.nx, x = local - row * b.nx, zc = row / b.ny,
                   y = row - zc * b.ny;
    const uint64_t at = b.plane_base + b.x0 + x + a.width * (b.y0 + y + a.height * (b.z0 + zc));
    if (x + 3 < b.nx && at % 4 == 0) {
      *reinterpret_cast<int4*>(a.coeffs + at) = make_int4(c[0], c[1], c[2], c[3]);
    } else if (x + 3 < b.nx) {
      for (unsigned m = 0; m < 4; ++m) a.coeffs[at + m] = c[m];
    } else {
      for (unsigned m = 0; m < 4; ++m) {
        const uint64_t l = local + m, rr = l / b.nx, xx = l - rr * b.nx, zz = rr / b.ny, yy = rr - zz * b.ny;
        store_coefficient(a, b, xx, yy, zz, c[m]);
      }
    }
  }
}

// One block per tile of kScatterTile consecutive coefficients: the block
// finds the boxes of the tile's first and last coefficient (a thread a box,
// or one thread's binary search above kThreads boxes); when they are the
// same box (all but the few tiles that straddle a box edge), no thread
// searches at all and each takes four consecutive coefficients at a time
// (scatter_tile_quads; a division per four, where dividing for every
// coefficient took 0.59 ms for a u16 8192^2 image's 67 M); otherwise a
// thread takes every kThreads-th coefficient and searches only between the
// two boxes.
__global__ void __launch_bounds__(kThreads) scatter_kernel(ScatterArgs a) {
  __shared__ uint32_t tile_boxes[2];
  if (blockIdx.x == 0)  // every group's low-bit padding, whoever reads its values
    for (uint32_t gi = threadIdx.x; gi < a.group_count; gi += kThreads) {
      const GroupDesc g = a.groups[gi];
      if (g.shift != 0 && !padding_zero(g.low, g.low_bytes, g.n * g.shift))
        atomicMin(&a.status[kStatusPadding], static_cast<unsigned long long>(gi));
    }
  for (uint64_t t0 = uint64_t{blockIdx.x} * kScatterTile; t0 < a.total; t0 += uint64_t{gridDim.x} * kScatterTile) {
    __syncthreads();  // the previous tile's readers of tile_boxes are done
    const uint64_t last = min(t0 + kScatterTile, a.total) - 1;
    if (a.box_count <= kThreads) {
      // Thread t looks at box t alone: one load each, where one thread's two
      // binary searches were a chain of dependent loads per tile.
      if (threadIdx.x < a.box_count) {
        const uint64_t begin = a.boxes[threadIdx.x].first;
        const uint64_t end = threadIdx.x + 1 < a.box_count ? a.boxes[threadIdx.x + 1].first : ~0ull;
        if (begin <= t0 && t0 < end) tile_boxes[0] = threadIdx.x;
        if (begin <= last && last < end) tile_boxes[1] = threadIdx.x;
      }
    } else if (threadIdx.x == 0) {
      const uint32_t first_box = find_box(a.boxes, 0, a.box_count, t0);
      tile_boxes[0] = first_box;
      tile_boxes[1] = find_box(a.boxes, first_box, a.box_count, last);
    }
    __syncthreads();
    const uint32_t b0 = tile_boxes[0], b1 = tile_boxes[1];
    if (b0 == b1) {  // the whole tile in one box (all but the few at box edges)
      const BoxDesc b = a.boxes[b0];
      scatter_tile_quads(a, b0, b, t0);
      continue;
    }
    for (unsigned r = 0; r < kScatterPerThread; ++r) {
      const uint64_t j = t0 + uint64_t{r} * kThreads + threadIdx.x;
      if (j >= a.total) break;
      scatter_one(a, b0 == b1 ? b0 : find_box(a.boxes, b0, b1 + 1, j), j);
    }
  }
}

template <typename T, unsigned P>
__global__ void __launch_bounds__(kThreads) join_kernel(JoinArgs a) {
  constexpr int32_t kMax = sizeof(T) == 1 ? 255 : 65535;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < a.pixels; i += stride) {
    int32_t v[P];
#pragma unroll
    for (unsigned p = 0; p < P; ++p) v[p] = a.planes[p * a.pixels + i];
    if constexpr (P >= 3) {
      if (a.rct) {
        // Modular, as on the CPU: any int32 input is defined; the range check
        // rejects what no encoder produced.
        const int32_t y = v[0], cb = v[1], cr = v[2];
        const int32_t g = static_cast<int32_t>(static_cast<uint32_t>(y) -
                                               static_cast<uint32_t>((static_cast<int64_t>(cb) + cr) >> 2));
        v[0] = static_cast<int32_t>(static_cast<uint32_t>(cr) + static_cast<uint32_t>(g));
        v[1] = g;
        v[2] = static_cast<int32_t>(static_cast<uint32_t>(cb) + static_cast<uint32_t>(g));
      }
    }
    bool in_range = true;
#pragma unroll
    for (unsigned p = 0; p < P; ++p) in_range &= v[p] >= 0 && v[p] <= kMax;
    if (!in_range) atomicMin(&a.status[kStatusRange], static_cast<unsigned long long>(i));
    T* o = reinterpret_cast<T*>(a.out) + i * P;
#pragma unroll
    for (unsigned p = 0; p < P; ++p) {
      T t = static_cast<T>(v[p]);
      if (sizeof(T) == 2 && a.big_endian) t = static_cast<T>((t >> 8) | (t << 8));
      o[p] = t;
    }
  }
}

template <typename T>
void launch_join_typed(const JoinArgs& a, cudaStream_t stream) {
  const unsigned grid = blocks_for(a.pixels);
  switch (a.planes_count) {
    case 1: join_kernel<T, 1><<<grid, kThreads, 0, stream>>>(a); break;
    case 2: join_kernel<T, 2><<<grid, kThreads, 0, stream>>>(a); break;
    case 3: join_kernel<T, 3><<<grid, kThreads, 0, stream>>>(a); break;
    default: join_kernel<T, 4><<<grid, kThreads, 0, stream>>>(a); break;
  }
}

}  // namespace

void launch_scatter(const ScatterArgs& a, cudaStream_t stream) {
  if (a.total == 0 && a.group_count == 0) return;
  const unsigned tiles =
      static_cast<unsigned>(std::clamp<uint64_t>((a.total + kScatterTile - 1) / kScatterTile, 1, kMaxBlocks));
  scatter_kernel<<<tiles, kThreads, 0, stream>>>(a);
  CUDA_CHECK(cudaGetLastError());
}

void launch_join(const JoinArgs& a, cudaStream_t stream) {
  VLEC_REQUIRE(a.planes_count >= 1 && a.planes_count <= 4, "1 to 4 planes");
  if (a.pixels == 0) return;
  if (a.sample_bytes == 1) launch_join_typed<uint8_t>(a, stream);
  else launch_join_typed<uint16_t>(a, stream);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda::wavelet_gpu
