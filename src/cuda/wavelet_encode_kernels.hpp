// cuda/wavelet_encode_kernels.hpp: the data kernels of the GPU wavelet
// encoder (cuda/wavelet_encode.cu; docs/FORMAT.md §10):
//  * split: interleaved u8/u16 samples -> int32 planes, with the RCT on
//    planes 0-2 (the CPU's split_planes, one thread per pixel);
//  * swap16: a byte-swapped copy of u16 samples, which the samples checksum
//    hashes when the frame decompresses to big-endian samples;
//  * tops, histogram: the statistics of each subband box: its largest
//    zigzag value (atomicMax) and its histogram at k0 = smallest_shift(top)
//    (the kernel reads the top from device memory, so both are enqueued at
//    once; shared-memory counters where the bins fit, global atomics
//    above), from which cuda/wavelet_shift_gpu.hpp evaluates the shift rule;
//  * symbols: per group, z >> k as u8 or u16, the low bits packed LSB-first
//    (each tile ORs its values' bits into shared words, stores the words it
//    covers whole and ORs the two it shares with neighbouring tiles into
//    global memory), and the number of symbol runs.
// Every kernel but split works on tiles of up to kTileValues consecutive
// coefficients of one box (coefficient order: x, then y, then z), listed by
// the host, so no tile straddles a box and consecutive threads read
// consecutive x of a row.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace vlec::cuda::wavelet_gpu {

constexpr unsigned kEncodeThreads = 256;
constexpr unsigned kEncodeItems = 8;
constexpr uint32_t kTileValues = kEncodeThreads * kEncodeItems;
constexpr uint32_t kHistBins = 65536;  // bins per histogram slot (symbols stay below 65,536)

// A box of coefficients in the planes' array.
struct EncodeBox {
  uint64_t plane_base = 0;  // plane * pixels
  uint64_t x0 = 0, y0 = 0, z0 = 0, nx = 1, ny = 1;
  uint64_t n = 0;       // coefficients (nx * ny * nz)
  uint64_t dest = 0;    // symbols: index of the box's first value in its group
  uint64_t prev = ~0ull;  // symbols: array index of the coefficient before the box in its group (~0: the group's first)
  uint32_t group = 0;   // symbols: group index
  uint32_t slot = 0;    // stats: histogram slot and top index
};

// Tile: `count` coefficients from `start` (box-relative) of box `box`.
struct EncodeTile {
  uint64_t start = 0;
  uint32_t box = 0;
  uint32_t count = 0;
};

struct EncodeGroup {
  uint8_t* symbols = nullptr;  // n symbols of `width` bytes
  uint32_t* low = nullptr;     // low_bits_bytes(n, shift) bytes, zeroed before the kernel
  uint32_t width = 1;
  uint32_t shift = 0;
};

struct PlaneGeometry {
  const int32_t* coeffs = nullptr;  // all planes
  uint64_t width = 0, height = 0;   // plane extents in x and y
};

void launch_split(const void* samples, unsigned sample_bytes, unsigned planes, bool rct, uint64_t pixels,
                  int32_t* planar, cudaStream_t stream);

void launch_swap16(const uint16_t* in, uint16_t* out, uint64_t count, cudaStream_t stream);

// tops[box.slot] (zeroed before) = largest zigzag value; hist[box.slot * kHistBins + (z >> k0)] counted
// for the boxes of `tiles` (slots 0 .. slots - 1; launch_histogram zeroes the bins each uses first).
void launch_tops(const PlaneGeometry& g, const EncodeBox* boxes, const EncodeTile* tiles, uint32_t tile_count,
                 uint32_t* tops, cudaStream_t stream);
void launch_histogram(const PlaneGeometry& g, const EncodeBox* boxes, const EncodeTile* tiles, uint32_t tile_count,
                      uint32_t slots, const uint32_t* tops, unsigned long long* hist, cudaStream_t stream);
// Symbols and low bits of every group; runs[group] (zeroed before) += the
// values that start a run (differ from the value before in the group).
void launch_symbols(const PlaneGeometry& g, const EncodeBox* boxes, const EncodeTile* tiles, uint32_t tile_count,
                    const EncodeGroup* groups, unsigned long long* runs, cudaStream_t stream);

// Benchmark hook (bench/wavelet_gpu_bench.cu): when set, the encoder stores
// the host's steady clock (seconds) at its start and after each step: wait 1
// (checksum, transform, tops), wait 2 (the GPU's shift rule answers), the
// host's decisions, wait 3 (symbols, low bits, runs), the codec choices of
// run-heavy groups, wait 4 (embedded frames), the end of the enqueue. Not
// thread-safe; null (the default) records nothing.
struct EncodePhases {
  static constexpr unsigned kCount = 8;
  double at[kCount] = {};
};
extern EncodePhases* encode_phases;

}  // namespace vlec::cuda::wavelet_gpu
