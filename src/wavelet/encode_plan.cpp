// wavelet/encode_plan.cpp: see encode_plan.hpp. The per-level statistics
// pass runs on all threads (one job per plane and level); everything else is
// small host work over a few dozen groups.
#include "wavelet/encode_plan.hpp"

#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cpu/frame_codec.hpp"
#include "format/frame.hpp"
#include "vlec/dwt.hpp"
#include "vlec/vlec.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::wavelet {

namespace {

// The statistics of one plane's levels 1 .. first - 1 (those coded on their
// own): per detail subband, and merged per level.
struct LevelStats {
  std::vector<ValueStats> kinds;  // index = kind (1..7); n = 0 for empty subbands
  ValueStats level;
  unsigned nonempty = 0;
};

LevelStats level_stats(unsigned plane, const Subbands& sb, unsigned l, const BoxStatsFn& stats_of, bool unions) {
  LevelStats ls;
  ls.kinds.resize(kKinds);
  std::vector<const ValueStats*> parts;
  std::vector<Box> boxes;
  for (unsigned k = 1; k < kKinds; ++k) {
    const Box b = sb.detail(l, k);
    if (!b.samples()) continue;
    ls.kinds[k] = stats_of(plane, {b});
    parts.push_back(&ls.kinds[k]);
    boxes.push_back(b);
  }
  ls.nonempty = static_cast<unsigned>(parts.size());
  ls.level = unions && !boxes.empty() ? stats_of(plane, boxes) : merge_stats(parts);
  return ls;
}

// The shift rule for `st`, answered once per search setting (ValueStats' cache).
void settle_shift(const ValueStats& st, const EncoderTuning& t) {
  if (st.cached_search == t.shift_search) return;
  st.cached_shift = choose_shift(st.hist, st.n, st.top, t.shift_search, &st.cached_bits);
  st.cached_search = t.shift_search;
}

uint64_t estimated_group_bits(const ValueStats& st, const EncoderTuning& t) {
  settle_shift(st, t);
  return shift_rule::group_bits(st.cached_bits);
}

// Whether coding each detail subband of a level with its own codebook is
// estimated to be smaller than one codebook for the whole level: it is where
// the subbands' statistics differ (HL/LH/HH of photographs with strong
// orientation) and the level is large enough to pay for the extra codebooks.
bool split_pays(const LevelStats& ls, const EncoderTuning& t) {
  if (ls.nonempty < 2) return false;
  uint64_t split = 0;
  for (unsigned k = 1; k < kKinds; ++k)
    if (ls.kinds[k].n) split += estimated_group_bits(ls.kinds[k], t);
  return shift_rule::split_pays(split, ls.nonempty, estimated_group_bits(ls.level, t));
}

}  // namespace

Header writer_header(const WaveletImage& im, const WaveletOptions& o) {
  checked_samples(im, ErrorCode::invalid_argument);
  VLEC_REQUIRE(o.container_prefix.size() <= kWaveletMaxPrefixBytes, "container prefix of ", o.container_prefix.size(),
               " bytes is above ", kWaveletMaxPrefixBytes);
  VLEC_REQUIRE(!o.big_endian_output || im.dtype == DType::u16, "big-endian output needs u16 samples");
  Header h;
  h.image = im;
  h.levels = effective_levels(DwtShape{im.width, im.height, im.depth}, o.levels ? o.levels : kAutoLevels);
  h.rct = o.colour_transform && im.planes >= 3;
  h.big_endian = o.big_endian_output;
  h.prefix = o.container_prefix;
  h.segmented_checksum = true;
  return h;
}

EncodePlan plan_encode(const Subbands& sb, unsigned planes, unsigned threads, const EncoderTuning& t,
                       const BoxStatsFn& stats_of, bool unions) {
  const unsigned first = first_merged_level(sb);
  // levels[p * first + l]: plane p, level l (1 <= l < first).
  std::vector<LevelStats> levels(std::size_t{planes} * first);
  std::vector<uint8_t> decisions(std::size_t{planes} * first, 0);
  if (first > 1) {
    const std::size_t jobs = std::size_t{planes} * (first - 1);
    parallel_for(jobs, resolve_threads(threads, jobs), [&](std::size_t j) {
      const unsigned p = static_cast<unsigned>(j / (first - 1));
      const unsigned l = static_cast<unsigned>(j % (first - 1)) + 1;
      LevelStats& ls = levels[p * first + l];
      ls = level_stats(p, sb, l, stats_of, unions);
      if (t.grouping == Grouping::adaptive) decisions[p * first + l] = split_pays(ls, t);
    });
  }
  EncodePlan out;
  out.specs = plan_groups(sb, planes, [&](unsigned p, unsigned l) {
    switch (t.grouping) {
      case Grouping::per_level: return false;
      case Grouping::split_finest: return l <= 2;
      case Grouping::adaptive: break;
    }
    return decisions[p * first + l] != 0;
  });
  // Each group's statistics: taken from the level pass where the group is a
  // level or one subband of it, counted here for the merged coarse groups.
  out.stats.resize(out.specs.size());
  const std::size_t groups = out.specs.size();
  parallel_for(groups, resolve_threads(threads, groups), [&](std::size_t g) {
    const GroupSpec& s = out.specs[g];
    if (s.level_first == s.level_last && s.level_first >= 1 && s.level_first < first && !(s.mask & kLowBandBit)) {
      const LevelStats& ls = levels[s.plane * first + s.level_first];
      if (s.mask == 0xFE) {
        out.stats[g] = ls.level;
        return;
      }
      std::vector<const ValueStats*> parts;
      for (unsigned k = 1; k < kKinds; ++k)
        if ((s.mask >> k) & 1 && ls.kinds[k].n) parts.push_back(&ls.kinds[k]);
      out.stats[g] = parts.size() == 1 ? *parts[0] : unions ? stats_of(s.plane, sb.boxes(s)) : merge_stats(parts);
      return;
    }
    out.stats[g] = stats_of(s.plane, sb.boxes(s));
  });
  return out;
}

unsigned group_shift(const ValueStats& stats, const EncoderTuning& t, std::vector<uint64_t>* hist_out) {
  settle_shift(stats, t);
  if (hist_out) histogram_at_shift(stats.hist, stats.top, stats.cached_shift, *hist_out);
  return stats.cached_shift;
}

Codec embedded_codec(uint64_t runs, uint64_t n, const uint8_t* symbols, DType type, unsigned threads) {
  if (runs_pick_huffman(runs, n)) return Codec::huffman;
  return cpu::choose_codec(symbols, n, type, threads);
}

std::vector<uint8_t> finish_header(Header& h, const std::vector<GroupSpec>& specs,
                                   const std::vector<unsigned>& shifts, const std::vector<uint64_t>& samples,
                                   const std::vector<uint64_t>& frame_bytes, uint64_t* frame_bytes_out) {
  h.groups.clear();
  uint64_t at = 0;
  for (std::size_t g = 0; g < specs.size(); ++g) {
    Group gr;
    gr.spec = specs[g];
    gr.shift = shifts[g];
    gr.frame_offset = at;
    gr.frame_bytes = frame_bytes[g];
    at += gr.frame_bytes;
    gr.bits_offset = at;
    at += low_bits_bytes(samples[g], shifts[g]);
    gr.samples = samples[g];
    h.groups.push_back(gr);
  }
  format::FrameHeader f;
  f.minor = format::kFormatMinorWavelet;
  f.codec = Codec::wavelet;
  f.width = static_cast<uint8_t>(dtype_bytes(h.image.dtype));
  f.elements = h.image.samples();
  f.chunk_elements = 0;
  f.required_features = format::kFeatureWavelet;
  std::vector<uint8_t> area = format::write_header_area(f, write_section(h), {}, at);
  *frame_bytes_out = f.frame_bytes;
  return area;
}

}  // namespace vlec::wavelet
