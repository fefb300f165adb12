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
#include "cuda/backend.hpp"
#include "vlec/dwt.hpp"
#include "vlec/vlec.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/codec.hpp"
#include "wavelet/encode_plan.hpp"
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

CodedGroup code_group(const int32_t* plane, const DwtShape& shape, const std::vector<Box>& boxes,
                      const ValueStats& stats, unsigned threads, const EncoderTuning& t) {
  const std::size_t n = group_samples(boxes);
  CodedGroup out;
  std::vector<uint64_t> hist;  // the symbols' histogram at the chosen shift
  out.shift = group_shift(stats, t, &hist);
  GroupSymbols g;
  write_symbols(plane, shape, boxes, out.shift, stats.top, g);
  cpu::FrameParams p;
  p.dtype = g.type;
  p.threads = threads;
  p.chunk_elements = t.chunk_elements;
  p.codec = embedded_codec(g.runs, n, g.symbols.data(), g.type, threads);
  p.element_histogram = &hist;
  out.frame = cpu::compress_frame(g.symbols.data(), n, p);
  out.low_bits = std::move(g.low_bits);
  return out;
}

struct Encoded {
  std::vector<uint8_t> header_area;  // fixed header, section, checksum
  std::vector<CodedGroup> groups;
  uint64_t frame_bytes = 0;
};

Encoded encode(const void* samples, const WaveletImage& im, const WaveletOptions& o, const EncoderTuning& t) {
  Header h = writer_header(im, o);
  const uint64_t total = im.samples();
  VLEC_REQUIRE(samples != nullptr, "null sample buffer");
  const unsigned threads = resolve_threads(o.threads, ~std::size_t{0});
  const DwtShape shape{im.width, im.height, im.depth};
  const std::size_t pixels = shape.samples();
  const std::size_t bytes = total * dtype_bytes(im.dtype);
  // The plane loops read u16 samples as such: a misaligned caller buffer is
  // copied once (rare: allocators align).
  std::vector<uint16_t> aligned;
  if (im.dtype == DType::u16 && reinterpret_cast<uintptr_t>(samples) % alignof(uint16_t) != 0) {
    aligned.resize(total);
    std::memcpy(aligned.data(), samples, bytes);
    samples = aligned.data();
  }
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
  const EncodePlan pl = plan_encode(sb, im.planes, threads, t, [&](unsigned p, const std::vector<Box>& boxes) {
    return value_stats(coeffs + p * pixels, shape, boxes);
  });
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

  std::vector<unsigned> shifts(specs.size());
  std::vector<uint64_t> counts(specs.size()), frame_bytes(specs.size());
  for (std::size_t g = 0; g < specs.size(); ++g) {
    shifts[g] = e.groups[g].shift;
    counts[g] = group_samples(boxes[g]);
    frame_bytes[g] = e.groups[g].frame.size();
  }
  e.header_area = finish_header(h, specs, shifts, counts, frame_bytes, &e.frame_bytes);
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
  return static_cast<std::size_t>(5 * n + 16 * (n / wavelet::kEmbeddedChunkElements) + groups * (128 + 16 + 32) +
                                  prefix_bytes + 128);
}

namespace {

// Whether the frame is written by the GPU encoder (cuda/wavelet_encode.cu,
// the same bytes): with Backend::cuda (which then needs a usable GPU) or
// automatic where one is present, for shapes the device transform takes.
bool encode_on_gpu(const WaveletImage& image, Backend backend) {
  if (backend == Backend::cuda)
    SAFETY_CHECK(cuda::available(), ErrorCode::unavailable, "the CUDA backend was requested but ",
                 cuda::built() ? "no usable GPU was found" : "vlec was built without CUDA");
  return backend != Backend::cpu && cuda::available() && cuda::can_encode_wavelet(image);
}

}  // namespace

std::vector<uint8_t> wavelet_compress(const void* samples, const WaveletImage& image, const WaveletOptions& options) {
  if (encode_on_gpu(image, options.backend)) return cuda::compress_wavelet(samples, image, options);
  return wavelet::compress(samples, image, options, {});
}

std::size_t wavelet_compress(const void* samples, const WaveletImage& image, void* out, std::size_t capacity,
                             const WaveletOptions& options) {
  if (encode_on_gpu(image, options.backend)) {
    const std::vector<uint8_t> frame = cuda::compress_wavelet(samples, image, options);
    SAFETY_CHECK(frame.size() <= capacity, ErrorCode::output_too_small, "wavelet frame needs ", frame.size(),
                 " bytes but the output buffer holds ", capacity);
    VLEC_REQUIRE(out != nullptr, "null output buffer");
    std::memcpy(out, frame.data(), frame.size());
    return frame.size();
  }
  const wavelet::Encoded e = wavelet::encode(samples, image, options, {});
  SAFETY_CHECK(e.frame_bytes <= capacity, ErrorCode::output_too_small, "wavelet frame needs ", e.frame_bytes,
               " bytes but the output buffer holds ", capacity);
  VLEC_REQUIRE(out != nullptr, "null output buffer");
  wavelet::write(e, static_cast<uint8_t*>(out));
  return e.frame_bytes;
}

}  // namespace vlec
