// cuda/histogram_gpu.hpp: the symbol histogram of u8/u16/u32 elements on the
// GPU, the first stage of Huffman encoding (Tian et al., "Revisiting Huffman
// coding: toward extreme performance on modern GPU architectures", §IV-A).
//
// CUB-style interface: the caller passes device temporary storage sized by
// histogram_temp_bytes(); nothing is allocated inside, every operation is
// enqueued on the caller's stream, and the host never waits for the device.
//
// Methods (design and reasons in histogram_replicated.cuh and histogram_gpu.cu):
//   replicated_shared  per-block histograms replicated in shared memory, one
//                      copy per warp lane (so shared atomics never conflict),
//                      merged into the global histogram (Gómez-Luna et al.).
//                      u16/u32 keep a "hot window" of 1,536 bins replicated and
//                      the full alphabet once, with 16-bit packed counters.
//   global_atomic      the simple fallback: 32-bit global atomics on a few
//                      slices of the histogram, summed by a second kernel.
//   cub                cub::DeviceHistogram::HistogramEven, the baseline.
//   automatic          the fastest measured method for the element type: one
//                      table, kAutomaticMethod in histogram_gpu.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "vlec/types.hpp"

namespace vlec::cuda {

enum class HistogramMethod { automatic, replicated_shared, global_atomic, cub };

constexpr uint32_t kHistogramBins = 65536;  // d_hist always has this many u64 entries

const char* to_string(HistogramMethod m);

// The method `automatic` stands for with element type `t` (m itself otherwise).
HistogramMethod resolve_histogram_method(DType t, HistogramMethod m);

// Bytes of device temporary storage histogram_device() needs for these
// arguments (0 is a valid answer: then d_temp may be null). t must be u8, u16
// or u32. A host-only computation: no device work, no synchronization.
std::size_t histogram_temp_bytes(uint64_t elements, DType t, HistogramMethod m = HistogramMethod::automatic);

// Histogram of `elements` elements of type `t` at device address d_in (aligned
// to the element width; any length, any 16-byte misalignment).
//   d_hist:      device, kHistogramBins u64 counters; zeroed and filled by the call.
//   d_bad_index: device, one u64; set to the index of the first element whose
//                value is >= 65,536 (only u32 input can have one), or ~0ull if
//                none. Elements that are out of the alphabet are not counted.
//   d_temp:      device temporary storage of temp_bytes >= histogram_temp_bytes(...).
// Everything is enqueued on `stream`; the call returns without waiting.
// Throws vlec::Error(invalid_argument) on bad arguments and (cuda_error) when a
// launch fails.
void histogram_device(const void* d_in, uint64_t elements, DType t, uint64_t* d_hist, uint64_t* d_bad_index,
                      void* d_temp, std::size_t temp_bytes, cudaStream_t stream,
                      HistogramMethod m = HistogramMethod::automatic);

// The byte histogram of a Huffman frame's input together with the XXH3-64 of
// each of its chunks (chunk c: bytes [c * chunk_bytes, ...), the last one
// shorter), in one pass (histogram_chunk_hash.cu): device::compress's first
// stage with the lanes encoder, which then does not hash. Needs d_in 8-byte
// aligned and chunk_bytes a multiple of 1,024 up to kMaxHashedChunkBytes
// (histogram_chunk_hashes_fit). d_hist (kHistogramBins counters) and
// d_bad_index (set to ~0: bytes are never outside the alphabet) as for
// histogram_device; d_checksums: ceil(bytes / chunk_bytes) words. No
// temporary storage; enqueued on `stream`.
constexpr uint32_t kMaxHashedChunkBytes = 65536;
// Whether device::compress takes its u8 and u16 chunks' checksums this way
// (true, the default) or leaves them to the encoder. Not thread-safe; the
// benchmarks compare.
inline bool hash_chunks_with_histogram = true;
// Which kernel takes them: every warp on whole chunks up to this chunk size
// in bytes, eight load warps and a fold warp a block above it. H200, 1 GiB
// of skewed bytes, same call (bench/results/2026-11-28-h200-session28-u8-
// chunk-hash-by-warps.log): at 16 KiB chunks 0.495 -> 0.436 ms, full
// compress 485 -> 492 GB/s; at 64 KiB 0.398 -> 0.415 ms, 601 -> 596. Not
// thread-safe; a variable so that the benchmark and tests take both.
inline uint32_t u8_chunk_hash_by_warps_max_bytes = 16384;
bool histogram_chunk_hashes_fit(const void* d_in, uint32_t chunk_bytes);
void histogram_u8_chunk_hashes(const void* d_in, uint64_t bytes, uint32_t chunk_bytes, uint64_t* d_hist,
                               uint64_t* d_bad_index, uint64_t* d_checksums, cudaStream_t stream);

// The same for u16 elements (histogram_chunk_hash_u16.cu): the histogram of
// `elements` symbols and the XXH3-64 of each chunk of chunk_bytes bytes (the
// last one shorter). Needs d_in 8-byte aligned, chunk_bytes a multiple of
// 1,024, and a GPU that gives a block the u16 histogram's 224 KiB of shared
// memory (histogram_u16_chunk_hashes_fit). No temporary storage.
bool histogram_u16_chunk_hashes_fit(const void* d_in, uint32_t chunk_bytes);
void histogram_u16_chunk_hashes(const void* d_in, uint64_t elements, uint32_t chunk_bytes, uint64_t* d_hist,
                                uint64_t* d_bad_index, uint64_t* d_checksums, cudaStream_t stream);
// device::compress takes u16 chunks' checksums this way up to this chunk size
// in bytes. Measured on the H200 (1 GiB, full compress against the encoder
// hashing, bench/results/2026-11-28-h200-session28-u16-chunk-hash-*): at
// 32 KiB chunks quant1024 760 -> 778 GB/s, quant65536 530 -> 556; at 128 KiB
// chunks 871 -> 842 and 589 -> 591: there the encoder's hash costs less
// (~0.065 ms a GiB) than this pass adds to the plain histogram (~0.11 ms).
// A variable, so that a benchmark can time every chunk size both ways (the
// H100, whose histogram is bound by DRAM reads, is yet to be measured).
// Not thread-safe.
inline uint32_t u16_hashed_chunk_max_bytes = 32768;

}  // namespace vlec::cuda
