// wavelet/frame_format.cpp: see frame_format.hpp. Offsets and field rules
// follow docs/FORMAT.md §10.1-10.3 exactly; every field read from a stream is
// checked with SAFETY_CHECK before it is used.
#include "wavelet/frame_format.hpp"

#include <algorithm>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "common/safety.hpp"
#include "wavelet/coefficients.hpp"

namespace vlec::wavelet {

namespace {

constexpr uint64_t kMaxExtent = uint64_t{1} << 56;

}  // namespace

uint64_t checked_samples(const WaveletImage& im, ErrorCode code) {
  SAFETY_CHECK(im.width >= 1 && im.height >= 1 && im.depth >= 1, code, "wavelet image ", im.width, " x ", im.height,
               " x ", im.depth, " is empty");
  SAFETY_CHECK(im.planes >= 1 && im.planes <= kMaxPlanes, code, "wavelet image has ", im.planes,
               " planes (1 to 4 allowed)");
  SAFETY_CHECK(im.dtype == DType::u8 || im.dtype == DType::u16, code, "wavelet images hold u8 or u16 samples, not ",
               to_string(im.dtype));
  uint64_t n = im.planes;
  for (uint64_t e : {uint64_t{im.width}, uint64_t{im.height}, uint64_t{im.depth}}) {
    SAFETY_CHECK(e < kMaxExtent && n <= kMaxExtent / e, code, "wavelet image ", im.width, " x ", im.height, " x ",
                 im.depth, " x ", im.planes, " planes is too large");
    n *= e;
  }
  SAFETY_CHECK(n <= kMaxExtent / dtype_bytes(im.dtype), code, "wavelet image is too large");
  return n;
}

std::vector<uint8_t> write_section(const Header& h) {
  const std::size_t bytes = align_up(kHeaderBytes + kGroupEntryBytes * h.groups.size() + h.prefix.size(), 4);
  std::vector<uint8_t> out(bytes, 0);
  uint8_t* p = out.data();
  store_le64(p + 0, h.image.width);
  store_le64(p + 8, h.image.height);
  store_le64(p + 16, h.image.depth);
  p[24] = static_cast<uint8_t>(h.image.planes);
  p[25] = static_cast<uint8_t>(h.levels);
  p[26] = static_cast<uint8_t>((h.rct ? kFlagRct : 0) | (h.big_endian ? kFlagBigEndian : 0) |
                                     (h.segmented_checksum ? kFlagSegmentedChecksum : 0));
  store_le32(p + 28, static_cast<uint32_t>(h.groups.size()));
  store_le32(p + 32, static_cast<uint32_t>(h.prefix.size()));
  store_le64(p + 40, h.samples_checksum);
  uint8_t* e = p + kHeaderBytes;
  for (const Group& g : h.groups) {
    e[0] = static_cast<uint8_t>(g.spec.plane);
    e[1] = static_cast<uint8_t>(g.spec.level_first);
    e[2] = static_cast<uint8_t>(g.spec.level_last);
    e[3] = g.spec.mask;
    e[4] = static_cast<uint8_t>(g.shift);
    store_le64(e + 8, g.frame_offset);
    store_le64(e + 16, g.frame_bytes);
    store_le64(e + 24, g.bits_offset);
    e += kGroupEntryBytes;
  }
  std::copy(h.prefix.begin(), h.prefix.end(), e);
  return out;
}

ParsedWavelet parse_wavelet_frame(const uint8_t* d, std::size_t available, uint64_t at) {
  ParsedWavelet w;
  w.stream_offset = at;
  w.frame = format::read_fixed_header(d, available, at);
  const format::FrameHeader& f = w.frame;
  SAFETY_CHECK(f.codec == Codec::wavelet, ErrorCode::invalid_argument, "frame at byte ", at, " is a ",
               to_string(f.codec), " frame, not a wavelet frame");
  const uint64_t area = f.header_area_bytes();
  SAFETY_CHECK(available >= area, ErrorCode::truncated_stream, "stream ends inside the header of the frame at byte ",
               at);
  SAFETY_CHECK(checksum64(d, area - format::kChecksumBytes) == load_le64(d + area - format::kChecksumBytes),
               ErrorCode::checksum_mismatch, "header checksum mismatch in the frame at byte ", at);
  const uint8_t* s = d + format::kFixedHeaderBytes;
  const uint64_t section = f.codebooks_bytes;  // >= kHeaderBytes (read_fixed_header)
  Header& h = w.header;
  h.image.width = load_le64(s + 0);
  h.image.height = load_le64(s + 8);
  h.image.depth = load_le64(s + 16);
  h.image.planes = s[24];
  h.image.dtype = static_cast<DType>(f.width);
  h.levels = s[25];
  const uint8_t flags = s[26];
  const uint32_t groups = load_le32(s + 28);
  const uint32_t prefix = load_le32(s + 32);
  h.samples_checksum = load_le64(s + 40);
  const uint64_t samples = checked_samples(h.image, ErrorCode::corrupt_stream);
  SAFETY_CHECK(samples == f.elements, ErrorCode::corrupt_stream, "wavelet frame at byte ", at, " has ", samples,
               " samples by its shape but element count ", f.elements);
  SAFETY_CHECK(s[27] == 0 && load_le32(s + 36) == 0 && (flags & ~(kFlagRct | kFlagBigEndian | kFlagSegmentedChecksum)) == 0,
               ErrorCode::corrupt_stream, "wavelet frame at byte ", at, " has non-zero reserved header bits");
  h.rct = flags & kFlagRct;
  h.big_endian = flags & kFlagBigEndian;
  h.segmented_checksum = flags & kFlagSegmentedChecksum;
  SAFETY_CHECK(!h.rct || h.image.planes >= 3, ErrorCode::corrupt_stream, "wavelet frame at byte ", at,
               " applies the colour transform to ", h.image.planes, " planes");
  SAFETY_CHECK(!h.big_endian || f.width == 2, ErrorCode::corrupt_stream, "wavelet frame at byte ", at,
               " stores u8 samples big-endian");
  const DwtShape shape{h.image.width, h.image.height, h.image.depth};
  SAFETY_CHECK(h.levels <= kDwtMaxLevels && h.levels <= effective_levels(shape, h.levels), ErrorCode::corrupt_stream,
               "wavelet frame at byte ", at, " has ", h.levels, " levels, more than its shape allows");
  SAFETY_CHECK(prefix <= kWaveletMaxPrefixBytes, ErrorCode::corrupt_stream, "wavelet frame at byte ", at,
               " has a container prefix of ", prefix, " bytes");
  // The table and prefix fill the section exactly, up to 3 zero bytes.
  const uint64_t used = kHeaderBytes + uint64_t{kGroupEntryBytes} * groups + prefix;
  SAFETY_CHECK(groups >= 1 && align_up(used, 4) == section, ErrorCode::corrupt_stream, "wavelet frame at byte ", at,
               " has ", groups, " groups and a ", prefix, "-byte prefix, which do not fill its ", section,
               "-byte section");
  for (uint64_t i = used; i < section; ++i)
    SAFETY_CHECK(s[i] == 0, ErrorCode::corrupt_stream, "section padding of the frame at byte ", at, " is not zero");
  for (uint64_t i = format::kFixedHeaderBytes + section; i < area - format::kChecksumBytes; ++i)
    SAFETY_CHECK(d[i] == 0, ErrorCode::corrupt_stream, "header padding of the frame at byte ", at, " is not zero");
  h.prefix.assign(s + kHeaderBytes + kGroupEntryBytes * groups, s + used);

  // Group table: fields, coverage, then the contiguous payload layout.
  w.payload_bytes = f.frame_bytes - area;
  h.groups.resize(groups);
  std::vector<GroupSpec> specs(groups);
  for (uint32_t g = 0; g < groups; ++g) {
    const uint8_t* e = s + kHeaderBytes + uint64_t{kGroupEntryBytes} * g;
    Group& gr = h.groups[g];
    gr.spec.plane = e[0];
    gr.spec.level_first = e[1];
    gr.spec.level_last = e[2];
    gr.spec.mask = e[3];
    gr.shift = e[4];
    SAFETY_CHECK(e[5] == 0 && e[6] == 0 && e[7] == 0, ErrorCode::corrupt_stream, "wavelet group ", g,
                 " of the frame at byte ", at, " has non-zero reserved bytes");
    SAFETY_CHECK(gr.shift <= 24, ErrorCode::corrupt_stream, "wavelet group ", g, " of the frame at byte ", at,
                 " has shift ", gr.shift);
    gr.frame_offset = load_le64(e + 8);
    gr.frame_bytes = load_le64(e + 16);
    gr.bits_offset = load_le64(e + 24);
    specs[g] = gr.spec;
  }
  const Subbands sb(shape, h.levels);
  check_coverage(specs, sb, h.image.planes);
  uint64_t next = 0;
  for (uint32_t g = 0; g < groups; ++g) {
    Group& gr = h.groups[g];
    gr.samples = group_samples(sb.boxes(gr.spec));
    SAFETY_CHECK(gr.frame_offset == next && gr.frame_bytes >= format::kFixedHeaderBytes && gr.frame_bytes % 8 == 0 &&
                     gr.frame_bytes <= w.payload_bytes - next,
                 ErrorCode::corrupt_stream, "wavelet group ", g, " of the frame at byte ", at,
                 " has an invalid embedded frame at ", gr.frame_offset, " (", gr.frame_bytes, " bytes)");
    next += gr.frame_bytes;
    const uint64_t bits = low_bits_bytes(gr.samples, gr.shift);
    SAFETY_CHECK(gr.bits_offset == next && bits <= w.payload_bytes - next, ErrorCode::corrupt_stream,
                 "wavelet group ", g, " of the frame at byte ", at, " has invalid low bits at ", gr.bits_offset);
    next += bits;
  }
  SAFETY_CHECK(next == w.payload_bytes, ErrorCode::corrupt_stream, "wavelet frame at byte ", at, " has payload size ",
               w.payload_bytes, " but its groups describe ", next);
  SAFETY_CHECK(available >= f.frame_bytes, ErrorCode::truncated_stream, "stream ends inside the frame at byte ", at,
               " (", available, " of ", f.frame_bytes, " bytes)");
  w.payload = d + area;
  return w;
}

}  // namespace vlec::wavelet
