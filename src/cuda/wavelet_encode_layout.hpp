// cuda/wavelet_encode_layout.hpp: what the GPU wavelet writer
// (wavelet_encode.cu) sizes from the image's shape alone, before it sees a
// sample: every subband box's statistics slot, and its temporary storage as
// regions, each large enough for every grouping and codec the writer may
// choose (the temp query cannot see the data). Kept apart from the writer's
// steps so that each file stays one concern.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "cuda/dwt53_gpu.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "vlec/device.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/vlec.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/encode_plan.hpp"
#include "wavelet/layout.hpp"

namespace vlec::cuda::wavelet_layout {

constexpr std::size_t kAlign = 256;
constexpr std::size_t kMaxAxis = std::size_t{1} << 30;  // the device transform's limit
constexpr unsigned kStatusHash = 0, kStatusDwt = 1, kStatusWords = 8;

inline uint64_t round_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

inline device::CompressOptions frame_options(Codec codec, DType type) {
  device::CompressOptions o;
  o.codec = codec;
  o.dtype = type;
  o.chunk_elements = wavelet::kEmbeddedChunkElements;
  return o;
}

// Every subband box of every plane, in a fixed order (plane, low band, then
// levels 1..L, kinds 1..7), with its histogram slot (also its top's index).
// Every box is counted on the GPU: the shift rule runs there too, so no
// box's values or bins go to the host (small boxes were counted on the host
// until the rule moved).
struct StatBox {
  unsigned plane = 0;
  wavelet::Box box;
  uint32_t slot = 0;
};

using BoxKey = std::array<uint64_t, 7>;
inline BoxKey key_of(unsigned plane, const wavelet::Box& b) { return {plane, b.x0, b.y0, b.z0, b.nx, b.ny, b.nz}; }

// Per plane, the words of each level's subband tops (dwt::BandTops) when
// every level splits x and y of a 2D image (and wavelet_gpu::tops_in_transform);
// else none. `slot_of` gives a box's slot, `tops` the device array of tops.
std::vector<std::vector<dwt::BandTops>> transform_tops(const wavelet::Subbands& sb, uint64_t depth, unsigned planes,
                                                       const std::map<BoxKey, uint32_t>& slot_of, uint32_t* tops);

// A box's descriptor for the encoder's tile kernels, in the plane starting at `plane_base`.
wavelet_gpu::EncodeBox encode_box(const wavelet::Box& b, uint64_t plane_base);

// The boxes' histogram lists of step 1: for each plane, its level 1 ..
// early_levels details (a list a level, counted as soon as that level is
// transformed), then every other box of every plane; each list's tiles are
// numbered from 0. List i is boxes[at[i], at[i + 1]), of tiles[i] tiles.
struct StatisticsLists {
  std::vector<wavelet_gpu::EncodeBox> boxes;
  std::vector<std::size_t> at;
  std::vector<uint32_t> tiles;
};
StatisticsLists statistics_lists(const std::vector<StatBox>& boxes, const wavelet::Subbands& sb, unsigned planes,
                                 uint64_t pixels, unsigned early_levels);

// The data-independent sizes of one image's encode.
struct Layout {
  DwtShape shape;
  uint64_t pixels = 0;
  std::vector<StatBox> boxes;
  uint32_t large = 0;         // boxes (histogram slots)
  std::size_t candidates = 0, candidate_parts = 0, scratch_bytes = 0;  // GroupShifts' sizes
  std::size_t max_groups = 0;
  // Region offsets and sizes.
  std::size_t status = 0, tops = 0, runs = 0, sizes = 0, groups = 0, stat_boxes = 0, sym_boxes = 0, hist = 0,
              candidates_at = 0, parts_at = 0, scratch = 0, results = 0, planar = 0, coeffs = 0, symbols = 0, low = 0,
              dwt = 0, hash = 0, frame_temp = 0, copy_table = 0, copy_temp = 0, group_hist = 0, hist_jobs = 0,
              book_jobs = 0, frame_batch = 0, candidate_books = 0;
  std::size_t coeffs_bytes = 0, symbols_bytes = 0, low_bytes = 0, dwt_bytes = 0, hash_bytes = 0,
              copy_temp_bytes = 0, total = 0;
  std::size_t frame_temp_bytes = 0;  // every group's frame temp, one after another
  std::size_t max_copies = 0;  // the payload's pieces: a frame and low bits per group
  std::size_t frame_batch_bytes = 0;  // the frames' batch descriptors (cuda/frame_batch.cu)
  std::size_t book_jobs_bytes = 0;    // the codebooks' batch descriptors (codebook_gpu.hpp)
};

// Temp of one group's embedded frame of n symbols: with this codec and
// symbol type, and the most any of them needs. Each group's frame has its
// own temp (frame_temp_bytes bounds their sum for any grouping).
std::size_t frame_temp_for(uint64_t n, Codec codec, DType type);
std::size_t frame_temp_for(uint64_t n);

// The layout of one image's encode with `levels` levels.
Layout make_layout(const WaveletImage& im, unsigned levels);

// cub::DeviceMemcpy::Batched's temp for `copies` buffers (wavelet_encode.cu
// moves the payload's pieces into the frame with one batched copy).
std::size_t batched_copy_temp_bytes(std::size_t copies);

}  // namespace vlec::cuda::wavelet_layout
