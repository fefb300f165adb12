// cuda/rle_encode_parle.cu: the `parle` GPU run-length encoder: Balevic's
// Parallel Run-Length Encoding ("Fine-grain parallelization of entropy coding
// on GPGPUs", 2009) as written up by Ooms, with one thread per element.
//
// PARLE's steps and where they are here:
//   backward mask  element i starts a run when i == 0, i starts a chunk (runs
//                  never cross chunks) or in[i] != in[i-1];
//   scan + compact cub::DeviceSelect::If over the element indices with the
//                  backward mask as predicate: a single pass (block scans plus
//                  decoupled look-back) writes the run starts densely, the
//                  mask and its scan never touch memory;
//   scatter        run r covers [start[r], start[r+1]); its value is
//                  in[start[r]], its length code start[r+1] - start[r] - 1.
// Our format adds two things PARLE lacks: per-chunk output and runs split at
// 65,536. parle_runs_kernel finds each chunk's first run (the run starting at
// the chunk's first element) and counts, per chunk, the extra runs that
// splitting adds; a chunk's R is its natural runs plus those extras. The run
// index of a natural run in a chunk without long runs is its index minus the
// chunk's first; the rare chunks with long runs are written by one block each,
// whose BlockScan of the pieces per run gives every piece its index.
//
// Why it is fast: every step is a bandwidth-bound pass (the select reads the
// input once and its mask costs no memory), work does not depend on the chunk
// size (a block-per-chunk encoder idles on tiny chunks), and the scatter is
// proportional to the number of runs, not elements. Its cost against chunked:
// 4 bytes per run written by the select and read twice, plus a gather of the
// run values (see default_rle_strategy in rle_gpu.cu).
#include <thrust/iterator/counting_iterator.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/rle_gpu.hpp"

namespace vlec::cuda {

namespace {

using namespace rle_detail;

constexpr int kBlock = 256;

// PARLE's backward mask as a selection predicate over element indices.
template <typename T>
struct BackwardMask {
  const T* in;
  uint32_t C;
  __device__ bool operator()(uint32_t i) const { return i % C == 0 || in[i] != in[i - 1]; }
};

struct ParleTemp {
  uint32_t* heads;       // [elements]: run starts (natural runs), ascending
  uint32_t* num_heads;   // [1]
  uint32_t* first_head;  // [chunks + 1]: index in heads of each chunk's first run; last = num_heads
  uint32_t* extras;      // [chunks]: runs added by the 65,536 split
  void* scan_temp;       // cub temporary storage (select, then the offsets scans)
  std::size_t scan_bytes;
};

template <typename T>
std::size_t select_temp_bytes(uint64_t elements, uint32_t C) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, thrust::counting_iterator<uint32_t>(0),
                                   static_cast<uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr),
                                   static_cast<int64_t>(elements), BackwardMask<T>{nullptr, C}));
  return bytes;
}

// Lay the temporaries out in d_temp (null: only measure); *used = bytes taken.
ParleTemp carve(void* d_temp, uint64_t elements, uint32_t C, std::size_t* used) {
  const uint64_t chunks = rle_chunk_count(elements, C);
  TempCarver t{static_cast<uint8_t*>(d_temp)};
  ParleTemp p;
  p.heads = t.take<uint32_t>(elements);
  p.num_heads = t.take<uint32_t>(1);
  p.first_head = t.take<uint32_t>(chunks + 1);
  p.extras = t.take<uint32_t>(chunks);
  p.scan_bytes = std::max({select_temp_bytes<uint8_t>(elements, C), select_temp_bytes<uint16_t>(elements, C),
                           select_temp_bytes<uint32_t>(elements, C), select_temp_bytes<uint64_t>(elements, C),
                           rle_offsets_temp_bytes(chunks)});
  p.scan_temp = t.take<uint8_t>(p.scan_bytes);
  *used = t.used;
  return p;
}

// One thread per natural run: each chunk's first run, and the extra runs of splitting.
__global__ void parle_runs_kernel(ParleTemp p, uint64_t elements, uint32_t C, uint64_t chunks) {
  const uint32_t nh = *p.num_heads;
  for (uint64_t h = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; h < nh; h += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t start = p.heads[h];
    const uint64_t end = h + 1 < nh ? p.heads[h + 1] : elements;
    const uint64_t chunk = start / C;
    if (start % C == 0) p.first_head[chunk] = static_cast<uint32_t>(h);
    if (h + 1 == nh) p.first_head[chunks] = nh;
    const uint64_t len = end - start;
    if (len > kMaxRun) atomicAdd(&p.extras[chunk], static_cast<uint32_t>((len - 1) / kMaxRun));
  }
}

// One thread per chunk: R and the stored size.
__global__ void parle_count_kernel(ParleTemp p, uint64_t chunks, unsigned w, uint32_t* runs, uint32_t* stored) {
  const uint64_t c = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x;
  if (c >= chunks) return;
  const uint32_t R = p.first_head[c + 1] - p.first_head[c] + p.extras[c];
  runs[c] = R;
  stored[c] = static_cast<uint32_t>(payload_bytes(R, w));
}

// One thread per chunk: the payload's zero padding.
__global__ void parle_pad_kernel(uint64_t chunks, unsigned w, RleEncodeArgs a) {
  const uint64_t c = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x;
  if (c < chunks && writes_payload(a, c, w)) write_padding(a.payload + a.payload_offsets[c], a.runs[c], w);
}

template <typename T>
__device__ __forceinline__ void put_run(const RleEncodeArgs& a, uint64_t chunk, uint32_t r, T v, uint16_t code) {
  constexpr unsigned w = sizeof(T);
  if (writes_payload(a, chunk, w)) {
    uint8_t* vals = a.payload + a.payload_offsets[chunk];
    store_value<T>(vals + uint64_t{r} * w, v);
    reinterpret_cast<uint16_t*>(vals + lengths_offset(a.runs[chunk], w))[r] = code;
  }
  if (a.values) {
    const uint64_t at = a.run_offsets[chunk] + r;
    reinterpret_cast<T*>(a.values)[at] = v;
    a.lengths[at] = code;
  }
}

// PARLE's scatter, one thread per natural run, for chunks without long runs.
template <typename T>
__global__ void parle_scatter_kernel(const T* __restrict__ in, ParleTemp p, uint64_t elements, uint32_t C,
                                     RleEncodeArgs a) {
  const uint32_t nh = *p.num_heads;
  for (uint64_t h = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; h < nh; h += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t start = p.heads[h];
    const uint64_t chunk = start / C;
    if (p.extras[chunk] != 0) continue;
    const uint64_t end = h + 1 < nh ? p.heads[h + 1] : elements;
    put_run<T>(a, chunk, static_cast<uint32_t>(h - p.first_head[chunk]), in[start],
               static_cast<uint16_t>(end - start - 1));
  }
}

// One block per chunk that has runs longer than 65,536: a BlockScan of the
// pieces of each natural run gives every piece its index.
template <typename T>
__global__ __launch_bounds__(kBlock) void parle_long_kernel(const T* __restrict__ in, ParleTemp p, uint64_t elements,
                                                            uint32_t C, uint64_t chunks, RleEncodeArgs a) {
  using Scan = cub::BlockScan<uint32_t, kBlock>;
  __shared__ typename Scan::TempStorage scan_temp;
  const uint32_t nh = *p.num_heads;
  for (uint64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    if (p.extras[chunk] == 0) continue;
    const uint32_t h0 = p.first_head[chunk], h1 = p.first_head[chunk + 1];
    uint32_t carry = 0;
    for (uint64_t t = h0; t < h1; t += kBlock) {
      const uint64_t h = t + threadIdx.x;
      uint32_t pieces = 0;
      uint64_t start = 0, len = 0;
      if (h < h1) {
        start = p.heads[h];
        len = (h + 1 < nh ? p.heads[h + 1] : elements) - start;
        pieces = static_cast<uint32_t>((len + kMaxRun - 1) / kMaxRun);
      }
      uint32_t r, total;
      __syncthreads();
      Scan(scan_temp).ExclusiveSum(pieces, r, total);
      r += carry;
      if (h < h1) {
        const T v = in[start];
        for (uint32_t k = 0; k < pieces; ++k, len -= kMaxRun)
          put_run<T>(a, chunk, r + k, v, static_cast<uint16_t>(std::min<uint64_t>(len, kMaxRun) - 1));
      }
      carry += total;
    }
  }
}

unsigned stride_grid(unsigned blocks_per_sm) {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return static_cast<unsigned>(sms) * blocks_per_sm;
}

template <typename T>
void launch(const RleEncodeArgs& a, void* d_temp, cudaStream_t stream) {
  const uint64_t n = a.elements, chunks = rle_chunk_count(n, a.chunk_elements);
  const uint32_t C = a.chunk_elements;
  const T* in = static_cast<const T*>(a.in);
  std::size_t used = 0;
  ParleTemp p = carve(d_temp, n, C, &used);
  CUDA_CHECK(cudaMemsetAsync(p.extras, 0, chunks * sizeof(uint32_t), stream));
  std::size_t bytes = p.scan_bytes;
  CUDA_CHECK(cub::DeviceSelect::If(p.scan_temp, bytes, thrust::counting_iterator<uint32_t>(0), p.heads, p.num_heads,
                                   static_cast<int64_t>(n), BackwardMask<T>{in, C}, stream));
  const unsigned grid = stride_grid(8);
  parle_runs_kernel<<<grid, kBlock, 0, stream>>>(p, n, C, chunks);
  CUDA_CHECK(cudaGetLastError());
  const unsigned chunk_grid = static_cast<unsigned>((chunks + kBlock - 1) / kBlock);
  parle_count_kernel<<<chunk_grid, kBlock, 0, stream>>>(p, chunks, sizeof(T), a.runs, a.stored_bytes);
  CUDA_CHECK(cudaGetLastError());
  rle_offsets(a, chunks, p.scan_temp, p.scan_bytes, stream);
  if (!a.payload && !a.values) return;
  if (a.payload) {
    parle_pad_kernel<<<chunk_grid, kBlock, 0, stream>>>(chunks, sizeof(T), a);
    CUDA_CHECK(cudaGetLastError());
  }
  parle_scatter_kernel<T><<<grid, kBlock, 0, stream>>>(in, p, n, C, a);
  CUDA_CHECK(cudaGetLastError());
  if (C > kMaxRun) {  // only chunks longer than 65,536 can hold a run that must be split
    parle_long_kernel<T><<<static_cast<unsigned>(std::min<uint64_t>(chunks, grid)), kBlock, 0, stream>>>(
        in, p, n, C, chunks, a);
    CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

std::size_t rle_parle_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements) {
  VLEC_REQUIRE(elements <= UINT32_MAX, "the parle RLE encoder takes fewer than 2^32 elements, got ", elements);
  std::size_t used = 0;
  carve(nullptr, elements, chunk_elements, &used);
  return used;
}

void rle_encode_parle(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  switch (a.width) {
    case 1: launch<uint8_t>(a, d_temp, stream); break;
    case 2: launch<uint16_t>(a, d_temp, stream); break;
    case 4: launch<uint32_t>(a, d_temp, stream); break;
    case 8: launch<uint64_t>(a, d_temp, stream); break;
  }
}

}  // namespace vlec::cuda
