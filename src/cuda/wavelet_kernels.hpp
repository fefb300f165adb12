// cuda/wavelet_kernels.hpp: the two data kernels of the GPU wavelet decoder
// (cuda/wavelet_decode.cu):
//  * scatter: every coefficient of every group at once (but the details of
//    a 2D frame's level 1, which the inverse 5/3 reads from the symbols
//    itself: coded_detail_bands below), a block per tile of 4,096
//    consecutive ones. The tile's subband box comes from one binary search
//    over the box table (a few dozen entries, L1-resident; per coefficient
//    only in tiles that straddle a box edge). A thread rebuilds
//    z = (symbol << k) | low from the decoded symbols and the packed low
//    bits (two aligned 32-bit loads), checks that z fits 32 bits, unzigzags
//    and writes the coefficient to its place in the plane. Consecutive
//    threads take consecutive x of a box row, so reads and writes coalesce.
//    Block 0 also checks every group's low-bit padding (zero after the last
//    value), whichever kernel reads the group's values.
//  * join: one thread per pixel: inverse RCT (modular, as on the CPU), range
//    check, interleave the planes, byte order.
// Data errors go to device words (atomicMin of the first position), read
// once by the host after the stream completes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/dwt53_gpu.hpp"

namespace vlec::cuda::wavelet_gpu {

struct GroupDesc {
  uint64_t first = 0;     // first coefficient of the group in the concatenation of all groups
  uint64_t n = 0;         // coefficients
  const uint8_t* symbols = nullptr;  // decoded embedded frame (16-byte aligned)
  const uint8_t* low = nullptr;      // packed low bits in the stream (8-byte aligned)
  uint64_t low_bytes = 0;
  uint32_t width = 1;     // symbol bytes
  uint32_t shift = 0;
};

struct BoxDesc {
  uint64_t first = 0;       // first coefficient of the box in the concatenation of the boxes scattered
  uint64_t index0 = 0;      // the box's first coefficient's index in its group
  uint64_t plane_base = 0;  // plane * pixels
  uint64_t x0 = 0, y0 = 0, z0 = 0, nx = 1, ny = 1, nz = 1;
  uint32_t group = 0;
};

// Error words (uint64, set to ~0 before the kernels run).
enum StatusWord : unsigned {
  kStatusWide = 0,      // (group << 40) | coefficient: z does not fit 32 bits
  kStatusPadding = 1,   // group whose low-bit padding is not zero
  kStatusRange = 2,     // pixel with a sample outside the sample type
  kStatusDwt = 3,       // 3 + plane: the inverse transform's error word
  kStatusHash = 7,      // the samples checksum (a value, not an error)
  kStatusWords = 8,
};

struct ScatterArgs {
  const GroupDesc* groups = nullptr;
  uint32_t group_count = 0;  // every group's low-bit padding is checked here
  const BoxDesc* boxes = nullptr;  // the boxes to scatter (those the inverse does not read from symbols)
  uint32_t box_count = 0;
  uint64_t total = 0;  // coefficients of those boxes
  uint64_t width = 0, height = 0;  // plane shape (x, y extents)
  int32_t* coeffs = nullptr;       // all planes, plane p at p * pixels
  unsigned long long* status = nullptr;
};
void launch_scatter(const ScatterArgs& a, cudaStream_t stream);

struct JoinArgs {
  const int32_t* planes = nullptr;  // reconstructed samples, plane p at p * pixels
  uint64_t pixels = 0;
  unsigned planes_count = 1;
  unsigned sample_bytes = 1;  // 1 or 2
  bool rct = false;
  bool big_endian = false;
  uint8_t* out = nullptr;  // 16-byte aligned
  unsigned long long* status = nullptr;
};
void launch_join(const JoinArgs& a, cudaStream_t stream);

// Benchmark hook (bench/wavelet_gpu_bench.cu): when set, the decoder
// records events[0..5] on its stream at the start of the enqueue, after the
// embedded frames, the scatter, the inverse transform, the join and the
// checksum, so the parts can be timed in the real pipeline. Not thread-safe;
// null (the default) records nothing.
struct PhaseEvents {
  static constexpr unsigned kCount = 6;
  cudaEvent_t events[kCount];
  // Host clock (steady_clock, ns) when events[0] was recorded and when the
  // embedded frames' decodes were all enqueued: the host's share of phase 0.
  int64_t host_start_ns = 0, host_enqueued_ns = 0;
  // Between them, the host clock after each of its steps: the coded levels
  // planned, the decodes staged (table plans, chunk descriptors), the
  // uploads enqueued, the tables' build launched, the batch staged.
  static constexpr unsigned kHostMarks = 5;
  int64_t host_mark_ns[kHostMarks] = {};
  // The whole call (device::wavelet_decompress) on the host clock: entry,
  // plan made, the end's wait returned, results checked.
  int64_t host_call_ns = 0, host_planned_ns = 0, host_synced_ns = 0, host_done_ns = 0;
  // Inside the plan (host_call_ns .. host_planned_ns), the host clock after:
  // the first read of the header area (a copy and its wait), the wavelet
  // header parsed, round 1 of the embedded headers' reads, round 2 (where
  // no group needs it, at once), the embedded headers checked. The temp
  // layout follows until host_planned_ns.
  static constexpr unsigned kPlanMarks = 5;
  int64_t plan_mark_ns[kPlanMarks] = {};
};
extern PhaseEvents* phase_events;

// The decoder's host work per group (embedded headers parsed and checked,
// decodes staged) goes to several threads when it counts at least this many
// header-area bytes or codebook symbols (2^17 by default: below it starting
// threads costs more than they save). Tests set 0 to take the threaded path
// on small frames.
extern uint64_t parallel_group_work;

// Whether the decoder's inverse 5/3 reads the detail subbands of its finest
// 2D levels straight from the decoded symbols (dwt53_gpu.hpp,
// CodedDetails) instead of the scatter writing them as int32 first (the
// default; the benchmark times both). Not thread-safe.
extern bool coded_detail_bands;
// How many 2D levels, from level 1, the inverse reads that way (the coarser
// ones go through the scatter), and how many values a band of a level
// above 1 must hold for it to be read that way. 3 and 2^20 by default:
// levels 2 and 3 read from the symbols take the inverse longer (level 2
// 0.055 -> 0.078 ms at u16 8192^2), but the scatter, left with the low
// band and levels 4 and up, shrinks by more there: the whole decode 4-5 %
// faster at 8192^2 (bands of 2048^2 and 1024^2), alternated; at 2048^2
// and 512^2 (bands of 512^2 and less) levels 1-3 were 2-6 % slower than
// level 1 alone (H100, session 19). Not thread-safe.
extern unsigned coded_detail_levels;
extern uint64_t coded_level_min_samples;

// Whether the decoder decodes the groups' Huffman frames with one launch per
// kernel shape (huffman_decode.hpp, the default) or one launch a group on
// the side streams, as before (benchmarks time both). Not thread-safe.
extern bool batched_group_decode;
// Whether the decoder checks the embedded frames' chunk checksums only when
// another check of the frame fails (true, the default: the samples checksum
// covers every symbol; a frame that fails is decoded again with them, for
// the CPU decoder's error), or in every decode (the benchmark compares).
// Not thread-safe.
extern bool deferred_chunk_checks;
// Whether the decoder's plan reads the embedded frames' headers with one
// cudaMemcpyBatchAsync a round (true, the default) or one cudaMemcpyAsync
// a group (the probe compares).
extern bool batched_header_reads;
// With batched_header_reads: whether the second round (the header areas
// the first did not hold: wide codebooks, up to tens of KiB a group) is
// batched too, or only the first. Batched was as fast or faster on all
// three of wavelet_gpu_bench's images in three calls (session 17); the
// benchmark compares.
extern bool batched_area_reads;
// Whether the plan reads speculatively: the frame's first 4 KiB at once
// (its fixed header and, mostly, its whole header area), and each group's
// fixed header together with as much of its header area as the vlec
// writer's frames with small codebooks have; the groups whose areas are
// larger are read again. false: a round for the fixed headers, then one for
// the areas, at each of the two levels (four waits). The benchmark compares.
extern bool speculative_header_reads;
// With speculative_header_reads: whether the plan's reads go in one round
// trip, a kernel copying the first 4 KiB and every group's embedded header
// area into mapped pinned memory (cuda/wavelet_header_gather.hpp; the
// default), or as the two rounds of copies above. The benchmark compares.
extern bool gathered_header_reads;
// The wavelet writer: whether its payload copies are enqueued before the
// wait for the frames' sizes (cuda/wavelet_payload_copy.hpp; the default,
// with speculative_huffman_frames) or after the host has laid the payload
// out. The benchmark compares. Not thread-safe.
extern bool early_payload_copies;
// The Tuning (dwt53_gpu.hpp) the codec's 5/3 transforms take, encoder and
// decoder: the defaults, which the benchmark and the tests change one field
// at a time (min_warps 0 keeps pairs_per_warp at every level; the coded
// inverse's raw prefetch off, at every chain length, or with the window
// kernel everywhere). Not thread-safe.
extern dwt::Tuning dwt_tuning;

}  // namespace vlec::cuda::wavelet_gpu
