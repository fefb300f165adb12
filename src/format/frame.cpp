// format/frame.cpp: see frame.hpp. Field offsets follow docs/FORMAT.md §2-3.
#include "format/frame.hpp"

#include <algorithm>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "common/safety.hpp"

namespace vlec::format {

namespace {

constexpr uint32_t kMaxCodebooksBytes = 1u << 20;  // two 65,536-symbol codebooks fit easily

bool valid_width(unsigned w) { return w == 1 || w == 2 || w == 4 || w == 8; }

}  // namespace

uint64_t FrameHeader::header_area_bytes() const {
  return align_up(kFixedHeaderBytes + codebooks_bytes + chunks() * kIndexEntryBytes, 8) + kChecksumBytes;
}

unsigned codebook_count(Codec c) {
  return c == Codec::huffman ? 1 : c == Codec::rle_huffman ? 2 : 0;
}

uint32_t codebook_alphabet_limit(Codec c, unsigned width, unsigned which) {
  if (c == Codec::rle_huffman && which == 1) return huffman::kMaxAlphabet;  // run lengths
  return width == 1 ? 256 : huffman::kMaxAlphabet;
}

uint64_t payload_bytes(const std::vector<ChunkEntry>& index) {
  uint64_t total = 0;
  for (const ChunkEntry& e : index) total += align_up(e.stored_bytes, 4);
  return align_up(total, 8);
}

std::vector<uint8_t> write_header_area(FrameHeader& h, const std::vector<uint8_t>& codebooks,
                                       const std::vector<ChunkEntry>& index) {
  return write_header_area(h, codebooks, index, payload_bytes(index));
}

std::vector<uint8_t> write_header_area(FrameHeader& h, const std::vector<uint8_t>& codebooks,
                                       const std::vector<ChunkEntry>& index, uint64_t payload) {
  h.codebooks_bytes = static_cast<uint32_t>(codebooks.size());
  const uint64_t area = h.header_area_bytes();
  h.frame_bytes = area + payload;
  std::vector<uint8_t> out(area, 0);
  uint8_t* p = out.data();
  store_le32(p + 0, kMagic);
  p[4] = h.major;
  p[5] = h.minor;
  p[6] = static_cast<uint8_t>(h.codec);
  p[7] = h.width;
  store_le64(p + 8, h.elements);
  store_le32(p + 16, h.chunk_elements);
  store_le32(p + 20, h.codebooks_bytes);
  store_le64(p + 24, h.frame_bytes);
  store_le32(p + 32, h.required_features);
  store_le32(p + 36, h.optional_features);
  // bytes 40..47 reserved, zero
  std::copy(codebooks.begin(), codebooks.end(), out.begin() + kFixedHeaderBytes);
  uint8_t* e = p + kFixedHeaderBytes + codebooks.size();
  for (const ChunkEntry& c : index) {
    store_le32(e, c.stored_bytes);
    store_le32(e + 4, c.aux);
    store_le64(e + 8, c.checksum);
    e += kIndexEntryBytes;
  }
  store_le64(p + area - kChecksumBytes, checksum64(p, area - kChecksumBytes));
  return out;
}

FrameHeader read_fixed_header(const uint8_t* d, std::size_t available, uint64_t at) {
  SAFETY_CHECK(available >= kFixedHeaderBytes, ErrorCode::truncated_stream, "stream ends inside the ",
               "frame header at byte ", at, " (", available, " of ", kFixedHeaderBytes, " bytes)");
  SAFETY_CHECK(load_le32(d) == kMagic, ErrorCode::bad_magic, "no vlec frame at byte ", at,
               " (bad magic number)");
  FrameHeader h;
  h.major = d[4];
  h.minor = d[5];
  SAFETY_CHECK(h.major <= kFormatMajor, ErrorCode::unsupported_version, "frame at byte ", at,
               " has format version ", unsigned{h.major}, ".", unsigned{h.minor},
               ", newer than this reader's ", unsigned{kFormatMajor}, ".", unsigned{kReaderMinor});
  SAFETY_CHECK(h.major >= 1, ErrorCode::corrupt_stream, "frame at byte ", at, " has format version 0");
  h.required_features = load_le32(d + 32);
  SAFETY_CHECK((h.required_features & ~kFeatureWavelet) == 0, ErrorCode::unsupported_version, "frame at byte ", at,
               " requires features 0x", std::hex, h.required_features, std::dec,
               " that this reader does not know");
  SAFETY_CHECK(d[6] <= 4, ErrorCode::corrupt_stream, "frame at byte ", at, " has unknown codec ", unsigned{d[6]});
  h.codec = static_cast<Codec>(d[6]);
  const bool wavelet = h.codec == Codec::wavelet;
  // The wavelet codec is exactly what required bit 0 announces: one without
  // the other is a damaged header, not a newer writer.
  SAFETY_CHECK(wavelet == ((h.required_features & kFeatureWavelet) != 0), ErrorCode::corrupt_stream, "frame at byte ",
               at, wavelet ? " has codec wavelet without required feature bit 0"
                           : " sets required feature bit 0 (wavelet) but not codec wavelet");
  SAFETY_CHECK(!wavelet || h.minor >= kFormatMinorWavelet, ErrorCode::corrupt_stream, "wavelet frame at byte ", at,
               " claims format version 1.", unsigned{h.minor});
  h.width = d[7];
  SAFETY_CHECK(valid_width(h.width), ErrorCode::corrupt_stream, "frame at byte ", at,
               " has invalid element width ", unsigned{h.width});
  SAFETY_CHECK(h.codec != Codec::huffman || h.width <= 4, ErrorCode::corrupt_stream, "frame at byte ", at,
               " is Huffman-coded with ", unsigned{h.width}, "-byte elements");
  SAFETY_CHECK(!wavelet || h.width <= 2, ErrorCode::corrupt_stream, "wavelet frame at byte ", at, " has ",
               unsigned{h.width}, "-byte samples");
  h.elements = load_le64(d + 8);
  h.chunk_elements = load_le32(d + 16);
  h.codebooks_bytes = load_le32(d + 20);
  h.frame_bytes = load_le64(d + 24);
  h.optional_features = load_le32(d + 36);
  SAFETY_CHECK(load_le64(d + 40) == 0, ErrorCode::corrupt_stream, "frame at byte ", at,
               " has non-zero reserved header bytes");
  SAFETY_CHECK(h.elements <= (uint64_t{1} << 56) / h.width, ErrorCode::corrupt_stream, "frame at byte ", at,
               " claims an impossible element count ", h.elements);
  if (wavelet) {
    // No chunks of its own (chunk_elements 0, so no index); the section holds
    // the wavelet header, the group table and the container prefix (§10).
    SAFETY_CHECK(h.chunk_elements == 0, ErrorCode::corrupt_stream, "wavelet frame at byte ", at,
                 " has chunk size ", h.chunk_elements, " (must be 0)");
    SAFETY_CHECK(h.codebooks_bytes % 4 == 0 && h.codebooks_bytes <= kMaxCodebooksBytes && h.codebooks_bytes >= 48,
                 ErrorCode::corrupt_stream, "wavelet frame at byte ", at, " has invalid section size ",
                 h.codebooks_bytes);
    SAFETY_CHECK(h.frame_bytes % 8 == 0 && h.frame_bytes >= h.header_area_bytes(), ErrorCode::corrupt_stream,
                 "frame at byte ", at, " has invalid frame size ", h.frame_bytes);
    return h;
  }
  SAFETY_CHECK(h.chunk_elements >= kChunkGranule && h.chunk_elements <= kMaxChunkElements &&
                   h.chunk_elements % kChunkGranule == 0,
               ErrorCode::corrupt_stream, "frame at byte ", at, " has invalid chunk size ", h.chunk_elements);
  const unsigned books = codebook_count(h.codec);
  SAFETY_CHECK(h.codebooks_bytes % 4 == 0 && h.codebooks_bytes <= kMaxCodebooksBytes &&
                   h.codebooks_bytes >= 8 * books && (books > 0 || h.codebooks_bytes == 0),
               ErrorCode::corrupt_stream, "frame at byte ", at, " has invalid codebook section size ",
               h.codebooks_bytes);
  SAFETY_CHECK(h.frame_bytes % 8 == 0 && h.frame_bytes >= h.header_area_bytes(), ErrorCode::corrupt_stream,
               "frame at byte ", at, " has invalid frame size ", h.frame_bytes);
  return h;
}

ParsedFrame parse_frame(const uint8_t* d, std::size_t available, uint64_t at) {
  ParsedFrame f = parse_frame_header(d, available, available, at);
  check_payload_padding(f);
  return f;
}

void check_payload_padding(const ParsedFrame& f) {
  // Alignment padding between chunks and at the end must be zero, so that no
  // bit of a frame escapes every check.
  const uint64_t at = f.stream_offset;
  const uint64_t used = f.offsets.empty() ? 0 : f.offsets.back() + align_up(f.index.back().stored_bytes, 4);
  for (uint64_t c = 0; c < f.index.size(); ++c)
    for (uint64_t i = f.offsets[c] + f.index[c].stored_bytes; i < f.offsets[c] + align_up(f.index[c].stored_bytes, 4); ++i)
      SAFETY_CHECK(f.payload[i] == 0, ErrorCode::corrupt_stream, "padding after chunk ", c, " of the frame at byte ",
                   at, " is not zero");
  for (uint64_t i = used; i < f.header.frame_bytes - f.header.header_area_bytes(); ++i)
    SAFETY_CHECK(f.payload[i] == 0, ErrorCode::corrupt_stream, "payload padding of the frame at byte ", at,
                 " is not zero");
}

ParsedFrame parse_frame_header(const uint8_t* d, std::size_t available, std::size_t stream_available, uint64_t at,
                               bool huffman_codes) {
  ParsedFrame f;
  f.stream_offset = at;
  f.header = read_fixed_header(d, available, at);
  const FrameHeader& h = f.header;
  SAFETY_CHECK(h.codec != Codec::wavelet, ErrorCode::unsupported_version, "frame at byte ", at,
               " is a wavelet frame, which only vlec::decompress reads (not this decoder)");
  const uint64_t area = h.header_area_bytes();
  SAFETY_CHECK(available >= area, ErrorCode::truncated_stream, "stream ends inside the header of the frame at byte ", at);
  SAFETY_CHECK(checksum64(d, area - kChecksumBytes) == load_le64(d + area - kChecksumBytes),
               ErrorCode::checksum_mismatch, "header checksum mismatch in the frame at byte ", at);
  // Codebooks.
  std::size_t pos = kFixedHeaderBytes;
  const std::size_t books_end = kFixedHeaderBytes + h.codebooks_bytes;
  for (unsigned b = 0; b < codebook_count(h.codec); ++b) {
    pos += huffman::parse_codebook(d + pos, books_end - pos, codebook_alphabet_limit(h.codec, h.width, b),
                                   f.codebooks[b], huffman_codes || h.codec != Codec::huffman);
  }
  SAFETY_CHECK(pos == books_end, ErrorCode::corrupt_stream, "codebook section of the frame at byte ", at,
               " has ", books_end - pos, " stray bytes");
  // Index, and the payload offsets it implies.
  const uint64_t chunks = h.chunks();
  f.index.resize(chunks);
  f.offsets.resize(chunks);
  // One test an entry on the way (the GPU decoders read every index on the
  // host before their first launch); an entry that fails it is checked
  // again field by field for the error.
  const bool runs_codec = h.codec == Codec::rle || h.codec == Codec::rle_huffman;
  const uint64_t full_raw = uint64_t{h.chunk_elements} * h.width;
  uint64_t offset = 0;
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint8_t* e = d + books_end + c * kIndexEntryBytes;
    ChunkEntry& entry = f.index[c];
    entry.stored_bytes = load_le32(e);
    entry.aux = load_le32(e + 4);
    entry.checksum = load_le64(e + 8);
    const uint64_t raw = c + 1 < chunks ? full_raw : h.chunk_elements_of(c) * h.width;
    if (uint64_t{entry.stored_bytes} - 1 >= raw || (entry.aux != 0 && !(runs_codec && entry.stored_bytes < raw))) {
      SAFETY_CHECK(entry.stored_bytes >= 1 && entry.stored_bytes <= raw, ErrorCode::corrupt_stream, "chunk ", c,
                   " of the frame at byte ", at, " has invalid stored size ", entry.stored_bytes);
      SAFETY_CHECK(runs_codec && entry.stored_bytes < raw, ErrorCode::corrupt_stream, "chunk ", c,
                   " of the frame at byte ", at, " has a non-zero aux field");
    }
    f.offsets[c] = offset;
    offset += align_up(entry.stored_bytes, 4);
  }
  for (uint64_t i = books_end + chunks * kIndexEntryBytes; i < area - kChecksumBytes; ++i)
    SAFETY_CHECK(d[i] == 0, ErrorCode::corrupt_stream, "header padding of the frame at byte ", at, " is not zero");
  SAFETY_CHECK(align_up(offset, 8) == h.frame_bytes - area, ErrorCode::corrupt_stream, "frame at byte ", at,
               " has payload size ", h.frame_bytes - area, " but its index describes ", align_up(offset, 8));
  SAFETY_CHECK(stream_available >= h.frame_bytes, ErrorCode::truncated_stream, "stream ends inside the frame at byte ",
               at, " (", stream_available, " of ", h.frame_bytes, " bytes)");
  f.payload = d + area;  // valid only where the payload is in `d` (parse_frame)
  return f;
}

}  // namespace vlec::format
