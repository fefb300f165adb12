// wavelet/encode.cpp: wavelet_compress(). Samples -> (RCT) -> planes ->
// 5/3 DWT per plane (multithreaded) -> groups of subbands, each zigzagged,
// split into symbol and low bits (coefficients.hpp) and coded as an ordinary
// vlec frame with the codec `auto` would pick for the symbols -> one wavelet
// frame (docs/FORMAT.md §10).
//
// The writer's choices (groups, shifts) come from one histogram per subband
// (group_io.hpp) and the integer estimate of shift_rule.hpp, which the GPU
// encoder evaluates identically; the chosen shift's histogram also feeds the
// Huffman frame coder, so no group's values are counted twice.
//
// Large groups (the finest levels: 3/4 of all coefficients in 2D) are coded
// one after the other with every thread each; the many small groups are coded
// side by side, one thread each. Output bytes never depend on the thread count.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cpu/frame_codec.hpp"
#include "vlec/dwt.hpp"
#include "vlec/vlec.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/codec.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/group_io.hpp"
#include "wavelet/samples_checksum.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::wavelet {

namespace {

constexpr std::size_t kLargeGroup = std::size_t{1} << 20;

struct CodedGroup {
  std::vector<uint8_t> frame;
  std::vector<uint8_t> low_bits;
  unsigned shift = 0;
};

// The embedded frame's codec. Runs can only pay where they are long: with
// fewer than 3 symbols per run on average, rle+huffman spends more on run
// lengths than Huffman's 1-bit minimum per symbol saves, so Huffman is taken
// without the full statistics pass of choose_codec (which would otherwise be
// the largest cost of the encoder on photographs).
Codec embedded_codec(const GroupSymbols& g, std::size_t n, unsigned threads) {
  if (g.runs * 3 > n) return Codec::huffman;
  return cpu::choose_codec(g.symbols.data(), n, g.type, threads);
}

CodedGroup code_group(const int32_t* plane, const DwtShape& shape, const std::vector<Box>& boxes,
                      const ValueStats& stats, unsigned threads, const EncoderTuning& t) {
  const std::size_t n = group_samples(boxes);
  CodedGroup out;
  std::vector<uint64_t> hist;  // the symbols' histogram at the chosen shift
  out.shift = choose_shift(stats.hist, stats.n, stats.top, t.shift_search, nullptr, &hist);
  GroupSymbols g;
  write_symbols(plane, shape, boxes, out.shift, stats.top, g);
  cpu::FrameParams p;
  p.dtype = g.type;
  p.threads = threads;
  p.chunk_elements = kDefaultChunkElements;
  p.codec = embedded_codec(g, n, threads);
  p.element_histogram = &hist;
  out.frame = cpu::compress_frame(g.symbols.data(), n, p);
  out.low_bits = std::move(g.low_bits);
  return out;
}

// The statistics of one plane's levels 1 .. first - 1 (those coded on their
// own): per detail subband, and merged per level.
struct LevelStats {
  std::vector<ValueStats> kinds;  // index = kind (1..7); n = 0 for empty subbands
  ValueStats level;
  unsigned nonempty = 0;
};

LevelStats level_stats(const int32_t* plane, const Subbands& sb, unsigned l) {
  LevelStats ls;
  ls.kinds.resize(kKinds);
  std::vector<const ValueStats*> parts;
  for (unsigned k = 1; k < kKinds; ++k) {
    const Box b = sb.detail(l, k);
    if (!b.samples()) continue;
    ls.kinds[k] = value_stats(plane, sb.shape(), {b});
    parts.push_back(&ls.kinds[k]);
  }
  ls.nonempty = static_cast<unsigned>(parts.size());
  ls.level = merge_stats(parts);
  return ls;
}

uint64_t estimated_group_bits(const ValueStats& st, const EncoderTuning& t) {
  uint64_t bits = 0;
  choose_shift(st.hist, st.n, st.top, t.shift_search, &bits);
  return shift_rule::group_bits(bits);
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

struct Plan {
  std::vector<GroupSpec> specs;
  std::vector<ValueStats> stats;  // per spec
};

Plan plan(const int32_t* coeffs, const Subbands& sb, unsigned planes, unsigned threads, const EncoderTuning& t) {
  const unsigned first = first_merged_level(sb);
  const std::size_t pixels = sb.shape().samples();
  // levels[p * first + l]: plane p, level l (1 <= l < first).
  std::vector<LevelStats> levels(std::size_t{planes} * first);
  std::vector<uint8_t> decisions(std::size_t{planes} * first, 0);
  if (first > 1) {
    const std::size_t jobs = std::size_t{planes} * (first - 1);
    parallel_for(jobs, resolve_threads(threads, jobs), [&](std::size_t j) {
      const unsigned p = static_cast<unsigned>(j / (first - 1));
      const unsigned l = static_cast<unsigned>(j % (first - 1)) + 1;
      LevelStats& ls = levels[p * first + l];
      ls = level_stats(coeffs + p * pixels, sb, l);
      if (t.grouping == Grouping::adaptive) decisions[p * first + l] = split_pays(ls, t);
    });
  }
  Plan out;
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
      out.stats[g] = parts.size() == 1 ? *parts[0] : merge_stats(parts);
      return;
    }
    out.stats[g] = value_stats(coeffs + s.plane * pixels, sb.shape(), sb.boxes(s));
  });
  return out;
}

struct Encoded {
  std::vector<uint8_t> header_area;  // fixed header, section, checksum
  std::vector<CodedGroup> groups;
  uint64_t frame_bytes = 0;
};

Encoded encode(const void* samples, const WaveletImage& im, const WaveletOptions& o, const EncoderTuning& t) {
  const uint64_t total = checked_samples(im, ErrorCode::invalid_argument);
  VLEC_REQUIRE(samples != nullptr, "null sample buffer");
  VLEC_REQUIRE(o.container_prefix.size() <= kWaveletMaxPrefixBytes, "container prefix of ", o.container_prefix.size(),
               " bytes is above ", kWaveletMaxPrefixBytes);
  VLEC_REQUIRE(!o.big_endian_output || im.dtype == DType::u16, "big-endian output needs u16 samples");
  const unsigned threads = resolve_threads(o.threads, ~std::size_t{0});
  const DwtShape shape{im.width, im.height, im.depth};
  const std::size_t pixels = shape.samples();
  Header h;
  h.image = im;
  h.levels = effective_levels(shape, o.levels ? o.levels : kAutoLevels);
  h.rct = o.colour_transform && im.planes >= 3;
  h.big_endian = o.big_endian_output;
  h.prefix = o.container_prefix;
  const std::size_t bytes = total * dtype_bytes(im.dtype);
  // The plane loops read u16 samples as such: a misaligned caller buffer is
  // copied once (rare: allocators align).
  std::vector<uint16_t> aligned;
  if (im.dtype == DType::u16 && reinterpret_cast<uintptr_t>(samples) % alignof(uint16_t) != 0) {
    aligned.resize(total);
    std::memcpy(aligned.data(), samples, bytes);
    samples = aligned.data();
  }
  h.segmented_checksum = true;
  h.samples_checksum = segmented_checksum(static_cast<const uint8_t*>(samples), bytes, h.big_endian, threads);

  // Planes, then their coefficients (no zero fill: every value is written).
  std::unique_ptr<int32_t[]> coeff_buffer(new int32_t[total]);
  int32_t* const coeffs = coeff_buffer.get();
  {
    DwtOptions d;
    d.levels = h.levels;
    d.threads = threads;
    if (im.planes == 1) {  // the samples are the plane: transform them directly
      if (im.dtype == DType::u8)
        dwt53_forward(static_cast<const uint8_t*>(samples), coeffs, shape, d);
      else
        dwt53_forward(static_cast<const uint16_t*>(samples), coeffs, shape, d);
    } else if (im.dtype == DType::u8) {
      std::unique_ptr<int16_t[]> planar(new int16_t[total]);
      split_planes(static_cast<const uint8_t*>(samples), im, h.rct, planar.get(), threads);
      for (unsigned p = 0; p < im.planes; ++p) dwt53_forward(planar.get() + p * pixels, coeffs + p * pixels, shape, d);
    } else {
      std::unique_ptr<int32_t[]> planar(new int32_t[total]);
      split_planes(samples, im, h.rct, planar.get(), threads);
      for (unsigned p = 0; p < im.planes; ++p) dwt53_forward(planar.get() + p * pixels, coeffs + p * pixels, shape, d);
    }
  }

  const Subbands sb(shape, h.levels);
  const Plan pl = plan(coeffs, sb, im.planes, threads, t);
  const std::vector<GroupSpec>& specs = pl.specs;
  Encoded e;
  e.groups.resize(specs.size());
  std::vector<std::vector<Box>> boxes(specs.size());
  std::vector<std::size_t> small;
  for (std::size_t g = 0; g < specs.size(); ++g) {
    boxes[g] = sb.boxes(specs[g]);
    if (group_samples(boxes[g]) >= kLargeGroup)
      e.groups[g] = code_group(coeffs + specs[g].plane * pixels, shape, boxes[g], pl.stats[g], threads, t);
    else
      small.push_back(g);
  }
  parallel_for(small.size(), resolve_threads(threads, small.size()), [&](std::size_t i) {
    const std::size_t g = small[i];
    e.groups[g] = code_group(coeffs + specs[g].plane * pixels, shape, boxes[g], pl.stats[g], 1, t);
  });

  uint64_t at = 0;
  for (std::size_t g = 0; g < specs.size(); ++g) {
    Group gr;
    gr.spec = specs[g];
    gr.shift = e.groups[g].shift;
    gr.frame_offset = at;
    gr.frame_bytes = e.groups[g].frame.size();
    at += gr.frame_bytes;
    gr.bits_offset = at;
    at += e.groups[g].low_bits.size();
    h.groups.push_back(gr);
  }
  format::FrameHeader f;
  f.minor = format::kFormatMinorWavelet;
  f.codec = Codec::wavelet;
  f.width = static_cast<uint8_t>(dtype_bytes(im.dtype));
  f.elements = total;
  f.chunk_elements = 0;
  f.required_features = format::kFeatureWavelet;
  e.header_area = format::write_header_area(f, write_section(h), {}, at);
  e.frame_bytes = f.frame_bytes;
  return e;
}

void write(const Encoded& e, uint8_t* out) {
  uint8_t* p = out;
  std::memcpy(p, e.header_area.data(), e.header_area.size());
  p += e.header_area.size();
  for (const CodedGroup& g : e.groups) {
    std::memcpy(p, g.frame.data(), g.frame.size());
    p += g.frame.size();
    if (!g.low_bits.empty()) std::memcpy(p, g.low_bits.data(), g.low_bits.size());
    p += g.low_bits.size();
  }
}

}  // namespace

std::vector<uint8_t> compress(const void* samples, const WaveletImage& image, const WaveletOptions& options,
                              const EncoderTuning& tuning) {
  const Encoded e = encode(samples, image, options, tuning);
  std::vector<uint8_t> out(e.frame_bytes);
  write(e, out.data());
  return out;
}

}  // namespace vlec::wavelet

namespace vlec {

std::size_t wavelet_compress_bound(const WaveletImage& image, std::size_t prefix_bytes) {
  const uint64_t n = wavelet::checked_samples(image, ErrorCode::invalid_argument);
  // Per coefficient at most 2 bytes of raw symbol and 24 low bits; per group
  // at most a raw frame's header, index and padding (docs/FORMAT.md §10.7).
  const uint64_t groups = uint64_t{image.planes} * (1 + 7 * kDwtMaxLevels);
  return static_cast<std::size_t>(5 * n + 16 * (n / kDefaultChunkElements) + groups * (128 + 16 + 32) +
                                  prefix_bytes + 128);
}

std::vector<uint8_t> wavelet_compress(const void* samples, const WaveletImage& image, const WaveletOptions& options) {
  return wavelet::compress(samples, image, options, {});
}

std::size_t wavelet_compress(const void* samples, const WaveletImage& image, void* out, std::size_t capacity,
                             const WaveletOptions& options) {
  const wavelet::Encoded e = wavelet::encode(samples, image, options, {});
  SAFETY_CHECK(e.frame_bytes <= capacity, ErrorCode::output_too_small, "wavelet frame needs ", e.frame_bytes,
               " bytes but the output buffer holds ", capacity);
  VLEC_REQUIRE(out != nullptr, "null output buffer");
  wavelet::write(e, static_cast<uint8_t*>(out));
  return e.frame_bytes;
}

}  // namespace vlec
