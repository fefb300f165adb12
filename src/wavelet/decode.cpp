// wavelet/decode.cpp: decoding of a wavelet frame that parse_wavelet_frame()
// has checked. Each group's embedded frame goes through the ordinary frame
// reader and CPU decoder (all of its checks and chunk checksums), its symbols
// are joined with the low bits and scattered into the plane's coefficients;
// then the inverse DWT, the inverse RCT, and the checksum of the samples, so
// that nothing is reported as decoded unless it is exactly what was coded.
#include <algorithm>
#include <cstring>
#include <memory>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cpu/frame_codec.hpp"
#include "vlec/dwt.hpp"
#include "wavelet/codec.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/group_io.hpp"
#include "wavelet/samples_checksum.hpp"

namespace vlec::wavelet {

namespace {

constexpr std::size_t kLargeGroup = std::size_t{1} << 20;

// The embedded frame of group g: its header area parsed and checked against
// the table (the payload's padding is decode_group's to check).
format::ParsedFrame embedded_frame(const ParsedWavelet& w, std::size_t g) {
  const Group& gr = w.header.groups[g];
  const uint8_t* at = w.payload + gr.frame_offset;
  const uint64_t where = w.stream_offset + w.frame.header_area_bytes() + gr.frame_offset;
  format::ParsedFrame f = format::parse_frame_header(at, gr.frame_bytes, gr.frame_bytes, where);
  SAFETY_CHECK(f.header.frame_bytes == gr.frame_bytes, ErrorCode::corrupt_stream, "wavelet group ", g,
               " has an embedded frame of ", f.header.frame_bytes, " bytes where its table says ", gr.frame_bytes);
  SAFETY_CHECK(f.header.width <= 2 && f.header.elements == gr.samples, ErrorCode::corrupt_stream, "wavelet group ",
               g, " holds ", f.header.elements, " elements of ", unsigned{f.header.width}, " bytes where ",
               gr.samples, " symbols of 1 or 2 bytes belong");
  return f;
}

// Group g from its parsed embedded frame `f` (parse_frame's remaining
// check, the payload's padding, first).
void decode_group(const ParsedWavelet& w, std::size_t g, const format::ParsedFrame& f, const DwtShape& shape,
                  const Subbands& sb, int32_t* planes, unsigned threads) {
  const Group& gr = w.header.groups[g];
  format::check_payload_padding(f);
  std::vector<uint8_t> symbols(gr.samples * f.header.width);
  cpu::decompress_frame(f, symbols.data(), threads);
  combine_into(symbols.data(), f.header.width, w.payload + gr.bits_offset, gr.samples, gr.shift, shape,
               sb.boxes(gr.spec), planes + gr.spec.plane * shape.samples());
}

}  // namespace

void decompress(const ParsedWavelet& w, uint8_t* out, unsigned threads) {
  const Header& h = w.header;
  const DwtShape shape{h.image.width, h.image.height, h.image.depth};
  const std::size_t pixels = shape.samples();
  threads = resolve_threads(threads, ~std::size_t{0});
  // No zero fill: the groups cover every coefficient exactly once (the
  // reader checked the coverage), so each is written before it is read.
  std::unique_ptr<int32_t[]> plane_buffer(new int32_t[w.frame.elements]);
  int32_t* const planes = plane_buffer.get();
  const Subbands sb(shape, h.levels);
  // Every group's embedded header area is checked first, in group order, as
  // the GPU reader does: with damage in several groups, the error is the
  // lowest damaged header's on both backends, whatever order the groups are
  // decoded in (large ones first, each on all threads; the rest side by side).
  std::vector<format::ParsedFrame> frames(h.groups.size());
  for (std::size_t g = 0; g < h.groups.size(); ++g) frames[g] = embedded_frame(w, g);
  std::vector<std::size_t> small;
  for (std::size_t g = 0; g < h.groups.size(); ++g) {
    if (h.groups[g].samples >= kLargeGroup)
      decode_group(w, g, frames[g], shape, sb, planes, threads);
    else
      small.push_back(g);
  }
  parallel_for(small.size(), resolve_threads(threads, small.size()),
               [&](std::size_t i) { decode_group(w, small[i], frames[small[i]], shape, sb, planes, 1); });

  DwtOptions d;
  d.levels = h.levels;
  d.threads = threads;
  for (unsigned p = 0; p < h.image.planes; ++p) {
    int32_t* plane = planes + p * pixels;
    try {
      dwt53_inverse_inplace(plane, plane, shape, d);
    } catch (const Error& e) {
      // Coefficients no forward transform produced: damage the chunk
      // checksums did not catch (they cover symbols, not low bits).
      if (e.code() != ErrorCode::invalid_argument) throw;
      SAFETY_CHECK(false, ErrorCode::corrupt_stream, "wavelet frame at byte ", w.stream_offset,
                   ": plane ", p, " does not invert: ", e.what());
    }
  }
  if (!h.prefix.empty()) std::memcpy(out, h.prefix.data(), h.prefix.size());
  uint8_t* samples = out + h.prefix.size();
  join_planes(planes, h.image, h.rct, h.big_endian, samples, threads);
  const std::size_t bytes = w.frame.elements * w.frame.width;
  const uint64_t sum = h.segmented_checksum ? segmented_checksum(samples, bytes, false, threads)
                                            : whole_checksum(samples, bytes, false);
  SAFETY_CHECK(sum == h.samples_checksum,
               ErrorCode::checksum_mismatch, "checksum mismatch in the samples of the wavelet frame at byte ",
               w.stream_offset, ": the stream is corrupt");
}

FrameInfo frame_info(const ParsedWavelet& w) {
  FrameInfo fi{};
  fi.codec = Codec::wavelet;
  fi.dtype = static_cast<DType>(w.frame.width);
  fi.elements = w.frame.elements;
  fi.chunk_elements = 0;
  fi.chunks = w.header.groups.size();  // groups, each an embedded frame
  for (std::size_t g = 0; g < w.header.groups.size(); ++g) {
    const format::ParsedFrame f = embedded_frame(w, g);
    fi.raw_chunks += f.header.codec == Codec::raw;
    fi.max_code_length = std::max(fi.max_code_length, f.codebooks[0].max_length);
    fi.alphabet_size = std::max(fi.alphabet_size, f.codebooks[0].alphabet_size);
  }
  fi.frame_bytes = w.frame.frame_bytes;
  fi.header_bytes = w.frame.header_area_bytes();
  fi.format_major = w.frame.major;
  fi.format_minor = w.frame.minor;
  return fi;
}

}  // namespace vlec::wavelet
