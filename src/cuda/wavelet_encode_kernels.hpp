// cuda/wavelet_encode_kernels.hpp: the data kernels of the GPU wavelet
// encoder (cuda/wavelet_encode.cu; docs/FORMAT.md §10):
//  * split: interleaved u8/u16 samples -> int32 planes, with the RCT on
//    planes 0-2 (the CPU's split_planes, one thread per pixel);
//  * swap16: a byte-swapped copy of u16 samples, which the samples checksum
//    hashes when the frame decompresses to big-endian samples;
//  * tops, histogram: the statistics of each subband box: its largest
//    zigzag value (atomicMax; where every level splits x and y of a 2D
//    image the forward 5/3 takes the tops as it stores the coefficients,
//    dwt53_gpu.hpp BandTops, and tops_kernel does not run) and its
//    histogram at k0 = smallest_shift(top) (the kernel reads the top from
//    device memory, so both are enqueued at once; shared-memory counters
//    where the bins fit, global atomics above), from which
//    cuda/wavelet_shift_gpu.hpp evaluates the shift rule;
//  * symbols: per group, z >> k as u8 or u16, the low bits packed LSB-first
//    (each tile ORs its values' bits into shared words, stores the words it
//    covers whole and ORs the two it shares with neighbouring tiles into
//    global memory), and the number of symbol runs.
// Every kernel but split works on tiles of up to kTileValues consecutive
// coefficients of one box (coefficient order: x, then y, then z): box b's
// tiles are numbered from b.tile0 (number_tiles), and a block finds its
// tile's box from that number, so no tile straddles a box, consecutive
// threads read consecutive x of a row, and no tile list crosses PCIe (the
// host built and uploaded 32,768 tiles twice per u16 8192^2 image: ~0.3 ms
// of the host's time on the H100 machine).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
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
  uint32_t tile0 = 0;   // the number of the box's first tile (number_tiles)
};

// Sets every box's tile0 (boxes in order, ceil(n / kTileValues) tiles each)
// and returns the number of tiles.
uint32_t number_tiles(EncodeBox* boxes, std::size_t count);

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
// for the listed boxes (launch_histogram zeroes the bins each uses first; it
// reads only their tops).
// `boxes` (box_count of them, numbered by number_tiles) hold tile_count tiles.
void launch_tops(const PlaneGeometry& g, const EncodeBox* boxes, uint32_t box_count, uint32_t tile_count,
                 uint32_t* tops, cudaStream_t stream);
void launch_histogram(const PlaneGeometry& g, const EncodeBox* boxes, uint32_t box_count, uint32_t tile_count,
                      const uint32_t* tops, unsigned long long* hist, cudaStream_t stream);
// Symbols and low bits of every group; runs[group] (zeroed before) += the
// values that start a run (differ from the value before in the group).
// row_tiles: the kernel with a straight path for whole tiles inside one row
// of their box (mostly_row_tiles decides from the host's copy of the boxes).
void launch_symbols(const PlaneGeometry& g, const EncodeBox* boxes, uint32_t box_count, uint32_t tile_count,
                    const EncodeGroup* groups, unsigned long long* runs, bool row_tiles, cudaStream_t stream);
// Whether at least half of the boxes' tiles lie in boxes whose rows are
// whole tiles (and symbols_row_tiles is set).
bool mostly_row_tiles(const EncodeBox* boxes, std::size_t count);
// Whether the symbols kernel may take whole tiles inside one row of their
// box by its straight path (true, the default: where they are at least half
// of the tiles) or walks every tile (the benchmark and a test compare). Not
// thread-safe.
extern bool symbols_row_tiles;
// Consecutive tiles a block of the symbols kernel takes (4 by default since
// session 34; at least 1): a run of one box's tiles needs its box, fields
// and position found once, where a block a tile spent about half the
// kernel's instructions on finding them (Nsight Compute, H200). The
// benchmark and a test compare. Not thread-safe.
extern unsigned symbols_block_tiles;

// Whether the writer enqueues its groups' embedded frames from a host thread
// per side stream (true, the default) or from the calling thread alone (the
// benchmark compares the two).
extern bool threaded_frame_enqueue;
// The side streams the writer codes its groups' frames on (1 to
// kSideStreams; kEncodeSideStreams by default; the benchmark compares).
extern unsigned encode_side_streams;
// Whether the Huffman groups' codebooks are built from histograms derived
// from the statistics (true, the default) or from a histogram pass over
// each group's symbols (the benchmark and a test compare).
extern bool histograms_from_statistics;
// Whether the forward transform takes the subbands' tops as it stores them
// where every level splits x and y of a 2D image (true, the default), or a
// tops pass reads them back (the benchmark and a test compare).
extern bool tops_in_transform;
// Whether the groups' codebooks (from those histograms) are built on the
// side streams while the symbols kernel runs (true, the default), or at the
// head of each group's frame (the benchmark compares).
extern bool codebooks_beside_symbols;
// With codebooks_beside_symbols: whether the codebooks' histograms are
// prepared on the host and derived on a side stream after the symbols
// kernel's launch (true, the default since session 33), or ahead of it on
// the caller's stream (the benchmark compares). The frame is the same. Not
// thread-safe.
extern bool histograms_after_symbols_launch;
// With codebooks_beside_symbols: whether the groups' codebooks of up to
// 8,192 symbols are built by one launch per block shape from the calling
// thread (true, the default since session 34: build_codebooks_device), or
// by a launch each, on the side streams, enqueued from a host thread per
// side stream (the benchmark and a test compare). The frame is the same.
// Not thread-safe.
extern bool batched_codebooks;
// Whether every candidate group's codebook of up to 8,192 symbols is built
// on the GPU right behind the shift rule, before the host's decisions
// (true, the default since session 37: cuda/wavelet_candidate_books.hpp),
// the chosen groups' frames then pointed at their candidates' codebooks;
// or each chosen group's after the decisions (codebooks_beside_symbols and
// batched_codebooks say how). Wider groups' codebooks are built after the
// decisions either way. The frame is the same (the benchmark and a test
// compare). Not thread-safe.
extern bool codebooks_behind_shift_rule;
// With codebooks_behind_shift_rule: the largest alphabet whose codebook is
// built behind the rule (at most codebook_batch_capacity(), which ~0u, the
// default, means). A test lowers it so that some groups take their
// candidate's codebook and others not. Not thread-safe.
extern uint32_t candidate_books_max_alphabet;
// Whether the samples checksum and the finest levels' histograms run on side
// streams beside the coarser levels of the transform (true, the default), or
// all in order on the caller's stream (the benchmark compares).
extern bool overlapped_statistics;
// With overlapped_statistics: the finest levels whose histograms start as
// soon as their level is transformed (2 by default; at least 1, below the
// level count).
extern unsigned early_histogram_levels;
// With overlapped_statistics: whether the transform's levels run on a side
// stream of the greatest priority and the early histograms on one of the
// least (true, the default), so that the coarse levels' few blocks, which
// head the chain to the late list's histograms, are dispatched before the
// pending blocks of level 1's histogram; or the levels on the caller's
// stream and the early histograms on a side stream of side_streams()'
// priority, which starved the coarse levels (the benchmark compares). Not
// thread-safe.
extern bool transform_chain_first;
// Whether the narrow histogram kernel's blocks take fewer than 8 tiles
// each where a list has too few tiles for 4 blocks an SM (true, the
// default), or always 8 (the benchmark and a test compare). Not thread-safe.
extern bool histogram_tiles_by_list;
// Whether the wide histogram kernel counts two tiles of one row at once
// (four values a thread, one 16-byte load; the default) or tile by tile.
// Not thread-safe.
extern bool wide_histogram_tile_pairs;
// Whether every group's Huffman frame is enqueued right behind the symbols
// kernel, before its run count is known (true, the default: the run counts
// come back with the frames' sizes, one wait instead of two, and a
// run-heavy group whose codec is not Huffman is coded again), or only once
// the run counts have been read (the benchmark and a test compare).
extern bool speculative_huffman_frames;
// Whether the groups' Huffman frames (with speculative_huffman_frames and
// codebooks_beside_symbols) are written as one batch on the caller's
// stream, a few launches for all (true, the default: cuda/frame_batch.cu),
// or a group at a time on the side streams, five to ten launches each (the
// benchmark and a test compare). Not thread-safe.
extern bool batched_frames;

// With overlapped_statistics: whether the samples checksum starts late
// (true, the default), once the shift rule's kernels are done, while the
// host waits for their answers and decides (once step 1 is done where
// shift_rule_behind_statistics is false), or from the start, beside the
// transform (the benchmark and a test compare); either way its word is read
// with the frames' sizes. Not thread-safe.
extern bool late_samples_checksum;

// Whether the shift rule is enqueued right behind step 1's statistics
// (true, the default since session 33: its kernels take the tops on the
// GPU) or after a host wait for step 1 (the old wait 1, kept for the
// benchmark's alternation). The frame is the same. Not thread-safe.
extern bool shift_rule_behind_statistics;

// Benchmark hook (bench/wavelet_gpu_bench.cu): when set, the encoder stores
// the host's steady clock (seconds) at each of its points (EncodePoint), and
// records gpu[point] on the caller's stream there if the caller created it.
// A step's GPU span is gpu[its enqueued point] - gpu[the point before its
// enqueue began]; its wait on the host, at[done] - at[enqueued]. Not
// thread-safe; null (the default) records nothing.
enum EncodePoint : unsigned {
  kStart,
  kStatsEnqueued,  // step 1: checksum, transform, tops, histograms
  kStatsRead,      // wait 1 until session 33 (the tops); now right after kStatsEnqueued
  kShiftsEnqueued,
  kShiftsRead,     // wait 2
  kDecided,        // the writer's decisions (host)
  kSymbolsEnqueued,
  kSymbolsRead,    // wait 3
  kCodecsChosen,   // run-heavy groups' codec choices
  kFramesEnqueued,
  kFramesRead,     // wait 4
  kEnd,            // header area and copies enqueued
  kEncodePoints
};
struct EncodePhases {
  static constexpr unsigned kCount = kEncodePoints;
  static constexpr unsigned kGroups = 64;  // groups whose own work is timed (the first 64)
  double at[kCount] = {};
  cudaEvent_t gpu[kCount] = {};
  // Per group g, if the caller created them: recorded on its side stream
  // before its codebook is built (with the codebooks beside the symbols
  // kernel), after it, and after its frame's work is enqueued.
  cudaEvent_t book_begin[kGroups] = {}, book_end[kGroups] = {}, frame_end[kGroups] = {};
  // If the caller created them: recorded before and after the candidates'
  // codebooks built behind the shift rule (codebooks_behind_shift_rule).
  cudaEvent_t candidate_books_begin = nullptr, candidate_books_end = nullptr;
  unsigned candidate_book_groups = 0;  // groups of the last compress coded with their candidate's codebook
  unsigned stream_of[kGroups] = {};  // the side stream each group went to
  uint64_t count[kGroups] = {};      // its symbols
  unsigned groups = 0;               // groups of the last compress
  // Step 1 of plane 0, if the caller created them: recorded after each 5/3
  // level (on the caller's stream), after each early level's histograms
  // (on their side stream) and after the late list's (on the caller's).
  static constexpr unsigned kLevels = 8;
  cudaEvent_t level_end[kLevels] = {}, early_end[kLevels] = {};
  cudaEvent_t late_end = nullptr;
};
extern EncodePhases* encode_phases;

}  // namespace vlec::cuda::wavelet_gpu
