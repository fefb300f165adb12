// cuda/wavelet_encode_layout.cu: make_layout (wavelet_encode_layout.hpp): the
// boxes in their fixed order and the temp regions, sized for the largest of
// the groupings the writer may choose (each level whole or split, the merged
// coarse groups), symbols of 2 bytes and the widest low bits per coefficient,
// and every codec's temp.
#include "cuda/wavelet_encode_layout.hpp"

#include <cub/device/device_memcpy.cuh>

#include <algorithm>
#include <map>

#include "cuda/codebook_gpu.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_device.hpp"
#include "dwt/dwt53.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_candidate_books.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_shift_gpu.hpp"
#include "wavelet/encode_plan.hpp"

namespace vlec::cuda::wavelet_layout {

namespace {

namespace wg = wavelet_gpu;
using wavelet::Box;
using wavelet::GroupSpec;
using wavelet::Subbands;

// The largest sum over groups of `bytes(n)` that any grouping the writer may
// choose gives: per plane the merged coarse group, and per level the larger
// of the whole level and its subbands one by one.
template <typename Bytes>
uint64_t grouping_bound(const Subbands& sb, unsigned planes, Bytes&& bytes) {
  std::map<std::array<unsigned, 3>, std::array<uint64_t, 2>> per;  // (plane, level, merged) -> (whole, split)
  for (int split = 0; split < 2; ++split)
    for (const GroupSpec& s : wavelet::plan_groups(sb, planes, [&](unsigned, unsigned) { return split == 1; })) {
      const bool merged = (s.mask & wavelet::kLowBandBit) != 0;
      per[{s.plane, s.level_first, merged}][split] += bytes(wavelet::group_samples(sb.boxes(s)));
    }
  uint64_t total = 0;
  for (const auto& kv : per) total += std::max(kv.second[0], kv.second[1]);
  return total;
}

}  // namespace

StatisticsLists statistics_lists(const std::vector<StatBox>& boxes, const wavelet::Subbands& sb, unsigned planes,
                                 uint64_t pixels, unsigned early_levels) {
  StatisticsLists out;
  auto add_list = [&](const std::vector<const StatBox*>& list) {
    out.at.push_back(out.boxes.size());
    for (const StatBox* s : list) {
      wavelet_gpu::EncodeBox e = encode_box(s->box, s->plane * pixels);
      e.slot = s->slot;
      out.boxes.push_back(e);
    }
  };
  std::vector<const StatBox*> late;
  for (unsigned p = 0; p < planes; ++p) {
    std::vector<std::vector<const StatBox*>> early(early_levels);
    for (const StatBox& s : boxes) {
      if (s.plane != p) continue;
      const BoxKey key = key_of(p, s.box);
      unsigned level = 0;  // 1-based level of an early list's box
      for (unsigned k = 1; k <= early_levels && !level; ++k)
        for (unsigned kind = 1; kind <= 3; ++kind)
          if (key == key_of(p, sb.detail(k, kind))) level = k;
      (level ? early[level - 1] : late).push_back(&s);
    }
    for (const auto& list : early) add_list(list);  // list p * early_levels + k - 1
  }
  add_list(late);
  out.at.push_back(out.boxes.size());
  out.tiles.resize(out.at.size() - 1);
  for (std::size_t i = 0; i + 1 < out.at.size(); ++i)
    out.tiles[i] = wavelet_gpu::number_tiles(out.boxes.data() + out.at[i], out.at[i + 1] - out.at[i]);
  return out;
}

std::size_t frame_temp_for(uint64_t n, Codec codec, DType type) {
  return round_up(device::compress_temp_bytes(n, frame_options(codec, type)));
}

std::size_t frame_temp_for(uint64_t n) {
  std::size_t most = 0;
  for (Codec c : {Codec::huffman, Codec::rle, Codec::rle_huffman, Codec::raw})
    for (DType t : {DType::u8, DType::u16}) most = std::max(most, frame_temp_for(n, c, t));
  return most;
}

Layout make_layout(const WaveletImage& im, unsigned levels) {
  Layout L;
  L.shape = DwtShape{im.width, im.height, im.depth};
  L.pixels = L.shape.samples();
  const Subbands sb(L.shape, levels);
  for (unsigned p = 0; p < im.planes; ++p) {
    std::vector<Box> bs{sb.low_band()};
    for (unsigned l = 1; l <= levels; ++l)
      for (unsigned k = 1; k < wavelet::kKinds; ++k)
        if (sb.detail(l, k).samples()) bs.push_back(sb.detail(l, k));
    for (const Box& b : bs) {
      StatBox s;
      s.plane = p;
      s.box = b;
      s.slot = L.large++;
      L.boxes.push_back(s);
    }
  }
  L.max_groups = wavelet::plan_groups(sb, im.planes, [](unsigned, unsigned) { return true; }).size();
  const GroupShifts shifts(sb, im.planes);
  L.candidates = shifts.candidates();
  L.candidate_parts = shifts.parts();
  L.scratch_bytes = shifts.temp_bytes();
  const uint64_t total = L.pixels * im.planes;
  const uint64_t frames_bytes = grouping_bound(sb, im.planes, [](uint64_t n) {
    return round_up(device::compress_capacity(n, frame_options(Codec::huffman, DType::u16)));
  });
  L.coeffs_bytes = std::max<uint64_t>(4 * total, frames_bytes);
  L.symbols_bytes = grouping_bound(sb, im.planes, [](uint64_t n) { return round_up(2 * n); });
  L.low_bytes = grouping_bound(sb, im.planes, [](uint64_t n) {
    return round_up(wavelet::low_bits_bytes(n, wavelet::kMaxShift));
  });
  L.dwt_bytes = device::dwt53_temp_bytes(L.shape, levels);
  L.hash_bytes = samples_checksum_temp_bytes(total * dtype_bytes(im.dtype), true);
  // Every group's frame its own temp (so any number of side streams may
  // code them at once), for the codec and symbol type that needs the most.
  L.frame_temp_bytes = grouping_bound(sb, im.planes, [](uint64_t n) { return frame_temp_for(n); });

  std::size_t at = 0;
  auto take = [&](std::size_t n) {
    const std::size_t here = at;
    at += round_up(std::max<std::size_t>(n, 1));
    return here;
  };
  L.status = take(8 * kStatusWords);
  L.tops = take(4 * std::size_t{L.large});
  L.runs = take(8 * L.max_groups);
  L.sizes = take(16 * L.max_groups);
  L.groups = take(sizeof(wg::EncodeGroup) * L.max_groups);
  L.stat_boxes = take(sizeof(wg::EncodeBox) * L.boxes.size());
  L.sym_boxes = take(sizeof(wg::EncodeBox) * L.boxes.size());
  L.hist = take(8 * std::size_t{wg::kHistBins} * L.large);
  L.candidates_at = take(sizeof(wg::ShiftCandidate) * L.candidates);
  L.parts_at = take(4 * L.candidate_parts);
  L.scratch = take(L.scratch_bytes);
  L.results = take(sizeof(wg::ShiftResult) * L.candidates);
  L.planar = take(im.planes > 1 ? 4 * total : 0);
  L.coeffs = take(L.coeffs_bytes);
  L.symbols = take(L.symbols_bytes);
  L.low = take(L.low_bytes);
  L.dwt = take(L.dwt_bytes);
  L.hash = take(L.hash_bytes);
  L.frame_temp = take(L.frame_temp_bytes);
  L.max_copies = 2 * L.max_groups;
  L.copy_table = take(3 * 8 * L.max_copies);  // sources, destinations, sizes
  L.copy_temp_bytes = batched_copy_temp_bytes(L.max_copies);
  L.copy_temp = take(L.copy_temp_bytes);
  L.group_hist = take(8 * std::size_t{wg::kHistBins} * L.max_groups);  // a histogram a group
  L.hist_jobs = take(sizeof(wg::GroupHistogram) * L.max_groups);
  L.book_jobs_bytes = codebook_jobs_bytes(L.max_groups);
  L.book_jobs = take(L.book_jobs_bytes);
  L.frame_batch_bytes = frame_batch_bytes(L.max_groups);
  L.frame_batch = take(L.frame_batch_bytes);
  L.candidate_books = take(wg::candidate_books_bytes(L.candidates));  // (256-byte aligned, as every region)
  L.total = at;
  return L;
}

std::size_t batched_copy_temp_bytes(std::size_t copies) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceMemcpy::Batched(nullptr, bytes, static_cast<const void* const*>(nullptr),
                                        static_cast<void* const*>(nullptr), static_cast<const uint64_t*>(nullptr),
                                        static_cast<int64_t>(copies)));
  return bytes;
}

std::vector<std::vector<dwt::BandTops>> transform_tops(const wavelet::Subbands& sb, uint64_t depth, unsigned planes,
                                                       const std::map<BoxKey, uint32_t>& slot_of, uint32_t* tops) {
  const unsigned levels = sb.levels();
  if (!wavelet_gpu::tops_in_transform || levels == 0 || depth != 1) return {};
  // The transform's levels are the frame's (its level events and tops are indexed by them).
  VLEC_REQUIRE(vlec::dwt::level_extents(sb.shape(), levels).size() == levels + 1,
               "the wavelet writer's level count differs from the transform's");
  for (unsigned k = 1; k <= levels; ++k)  // level k's input splits x and y
    if (sb.detail(k, 1).nx == 0 || sb.detail(k, 2).ny == 0) return {};
  std::vector<std::vector<dwt::BandTops>> out(planes, std::vector<dwt::BandTops>(levels));
  for (unsigned p = 0; p < planes; ++p)
    for (unsigned k = 1; k <= levels; ++k) {
      dwt::BandTops& b = out[p][k - 1];
      if (k == levels) b.band[0] = tops + slot_of.at(key_of(p, sb.low_band()));
      for (unsigned kind = 1; kind <= 3; ++kind) b.band[kind] = tops + slot_of.at(key_of(p, sb.detail(k, kind)));
    }
  return out;
}

wavelet_gpu::EncodeBox encode_box(const wavelet::Box& b, uint64_t plane_base) {
  wavelet_gpu::EncodeBox e;
  e.plane_base = plane_base;
  e.x0 = b.x0, e.y0 = b.y0, e.z0 = b.z0, e.nx = b.nx, e.ny = b.ny;
  e.n = b.samples();
  return e;
}

}  // namespace vlec::cuda::wavelet_layout
