// cuda/rle_common.cuh: device helpers shared by the GPU run-length encoders
// and decoder (rle_gpu.hpp): element types by width, unaligned-safe value
// stores/loads in the §6 payload (values start on a 4-byte boundary, so an
// 8-byte value is moved as two words), and the zero padding of a chunk.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/safety.hpp"
#include "cuda/rle_gpu.hpp"

namespace vlec::cuda::rle_detail {

constexpr uint32_t kMaxRun = 65536;

__host__ __device__ inline uint64_t align4(uint64_t x) { return (x + 3) & ~uint64_t{3}; }

__host__ __device__ inline uint64_t lengths_offset(uint64_t runs, unsigned w) { return align4(runs * w); }
__host__ __device__ inline uint64_t payload_bytes(uint64_t runs, unsigned w) {
  return lengths_offset(runs, w) + 2 * runs;
}

// Raw size of chunk c (chunk_elements C) of a input of `elements` elements.
__host__ __device__ inline uint64_t chunk_raw_bytes(uint64_t c, uint64_t elements, uint32_t C, unsigned w) {
  const uint64_t first = c * C;
  return (elements - first < C ? elements - first : C) * w;
}

// Whether the encoder writes chunk c's runs into the packed payload: not when
// the frame stores the chunk raw (RleEncodeArgs::skip_raw_chunks).
__device__ __forceinline__ bool writes_payload(const RleEncodeArgs& a, uint64_t c, unsigned w) {
  return a.payload &&
         !(a.skip_raw_chunks && a.stored_bytes[c] >= chunk_raw_bytes(c, a.elements, a.chunk_elements, w));
}

// Store / load a value at a 4-byte aligned chunk payload + r * sizeof(T).
template <typename T>
__device__ __forceinline__ void store_value(uint8_t* p, T v) {
  if constexpr (sizeof(T) == 8) {
    reinterpret_cast<uint32_t*>(p)[0] = static_cast<uint32_t>(v);
    reinterpret_cast<uint32_t*>(p)[1] = static_cast<uint32_t>(v >> 32);
  } else {
    *reinterpret_cast<T*>(p) = v;
  }
}
template <typename T>
__device__ __forceinline__ T load_value(const uint8_t* p) {
  if constexpr (sizeof(T) == 8) {
    const uint32_t* q = reinterpret_cast<const uint32_t*>(p);
    return static_cast<uint64_t>(q[0]) | (static_cast<uint64_t>(q[1]) << 32);
  } else {
    return *reinterpret_cast<const T*>(p);
  }
}

// Zero the bytes of a chunk payload (at a 4-aligned `chunk`) that carry no run:
// between the values and the length codes, and after the length codes up to
// the next 4-byte boundary. Any thread may call it; it touches at most 5 bytes.
__device__ __forceinline__ void write_padding(uint8_t* chunk, uint32_t runs, unsigned w) {
  const uint64_t vend = uint64_t{runs} * w, lo = lengths_offset(runs, w);
  for (uint64_t i = vend; i < lo; ++i) chunk[i] = 0;
  const uint64_t end = lo + 2ull * runs;
  for (uint64_t i = end; i < align4(end); ++i) chunk[i] = 0;
}

}  // namespace vlec::cuda::rle_detail

namespace vlec::cuda {
// Host side, rle_gpu.cu: the scans over chunks shared by both encoders (exclusive
// sums of align4(stored_bytes) and of runs into payload_offsets / run_offsets).
// With a.skip_raw_chunks, a chunk stored raw counts align4(its raw size).
std::size_t rle_offsets_temp_bytes(uint64_t chunks);
void rle_offsets(const RleEncodeArgs& a, uint64_t chunks, void* d_temp, std::size_t temp_bytes, cudaStream_t stream);

// The strategies, rle_encode_parle.cu and rle_encode_chunked.cu.
std::size_t rle_parle_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements);
void rle_encode_parle(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream);
std::size_t rle_chunked_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements);
void rle_encode_chunked(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream);
std::size_t rle_chunked_onepass_temp_bytes(uint64_t elements, uint32_t chunk_elements);
void rle_encode_chunked_onepass(const RleEncodeArgs& a, void* d_temp, std::size_t temp_bytes, cudaStream_t stream);

// Carve aligned pieces out of caller temp storage.
struct TempCarver {
  uint8_t* base;
  std::size_t used = 0;
  template <typename T>
  T* take(std::size_t count) {
    used = (used + 255) & ~std::size_t{255};
    T* p = reinterpret_cast<T*>(base ? base + used : nullptr);
    used += count * sizeof(T);
    return p;
  }
};
}  // namespace vlec::cuda
