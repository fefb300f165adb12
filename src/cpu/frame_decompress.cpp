// cpu/frame_decompress.cpp: the CPU frame decoder. parse_frame() has already
// validated the header, the codebooks and the index; here every chunk is
// decoded on its own thread straight into the output, its codec-specific
// sizes checked before use, and its checksum verified on the decoded data.
#include <cstring>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cpu/frame_codec.hpp"
#include "huffman/chunk_codec.hpp"
#include "rle/rle.hpp"

namespace vlec::cpu {

namespace {

struct Tables {
  huffman::DecodeTable values, lengths;
};

void decode_rle_chunk(const uint8_t* src, uint32_t stored, uint32_t runs, unsigned w, uint64_t n, uint8_t* out,
                      uint64_t c) {
  SAFETY_CHECK(runs >= 1 && runs <= n && stored == rle::payload_bytes(runs, w), ErrorCode::corrupt_stream,
               "rle chunk ", c, " has ", runs, " runs but ", stored, " bytes");
  for (std::size_t i = std::size_t{runs} * w; i < rle::lengths_offset(runs, w); ++i)
    SAFETY_CHECK(src[i] == 0, ErrorCode::corrupt_stream, "padding in rle chunk ", c, " is not zero");
  rle::decode_runs(src, src + rle::lengths_offset(runs, w), runs, w, n, out);
}

void decode_rle_huffman_chunk(const uint8_t* src, uint32_t stored, uint32_t runs, unsigned w, uint64_t n,
                              const Tables& tables, uint8_t* out, uint64_t c) {
  SAFETY_CHECK(runs >= 1 && runs <= n && stored >= 4 && stored % 4 == 0, ErrorCode::corrupt_stream,
               "rle+huffman chunk ", c, " has invalid size ", stored, " or run count ", runs);
  const uint64_t words = (stored - 4) / 4;
  const uint32_t value_words = load_le32(src);
  SAFETY_CHECK(value_words <= words, ErrorCode::corrupt_stream, "rle+huffman chunk ", c, " claims ",
               value_words, " value words of ", words);
  const DType vt = w == 1 ? DType::u8 : DType::u16;
  const uint64_t value_symbols = w == 1 ? runs : uint64_t{runs} * w / 2;
  thread_local std::vector<uint8_t> values;
  thread_local std::vector<uint16_t> lengths;
  values.resize(std::size_t{runs} * w);
  lengths.resize(runs);
  huffman::decode_chunk(src + 4, value_words, value_symbols, tables.values, vt, values.data());
  huffman::decode_chunk(src + 4 + 4 * value_words, words - value_words, runs, tables.lengths, DType::u16,
                        lengths.data());
  rle::decode_runs(values.data(), reinterpret_cast<const uint8_t*>(lengths.data()), runs, w, n, out);
}

}  // namespace

void decompress_frame(const format::ParsedFrame& f, uint8_t* out, unsigned threads) {
  const format::FrameHeader& h = f.header;
  const unsigned w = h.width;
  Tables tables;
  // Only the pair table of the symbol width each codebook decodes is built.
  const unsigned value_bytes = h.codec == Codec::rle_huffman ? (w == 1 ? 1 : 2) : w;
  if (format::codebook_count(h.codec) >= 1)
    tables.values = huffman::make_decode_table(f.codebooks[0], 11, value_bytes);
  if (format::codebook_count(h.codec) >= 2) tables.lengths = huffman::make_decode_table(f.codebooks[1], 11, 2);
  parallel_for(f.index.size(), threads, [&](std::size_t c) {
    const format::ChunkEntry& e = f.index[c];
    const uint64_t n = h.chunk_elements_of(c);
    const uint64_t raw = n * w;
    const uint8_t* src = f.payload + f.offsets[c];
    uint8_t* dst = out + c * uint64_t{h.chunk_elements} * w;
    try {
    if (e.stored_bytes == raw) {
      std::memcpy(dst, src, raw);
    } else {
      switch (h.codec) {
        case Codec::raw:
          SAFETY_CHECK(false, ErrorCode::corrupt_stream, "chunk ", c, " of a raw frame is not stored raw");
          break;
        case Codec::huffman:
          SAFETY_CHECK(e.stored_bytes % 4 == 0, ErrorCode::corrupt_stream, "Huffman chunk ", c,
                       " size is not a whole number of words");
          huffman::decode_chunk(src, e.stored_bytes / 4, n, tables.values, static_cast<DType>(w), dst);
          break;
        case Codec::rle: decode_rle_chunk(src, e.stored_bytes, e.aux, w, n, dst, c); break;
        case Codec::rle_huffman:
          decode_rle_huffman_chunk(src, e.stored_bytes, e.aux, w, n, tables, dst, c);
          break;
        case Codec::wavelet:  // parse_frame() never lets one through
          SAFETY_CHECK(false, ErrorCode::corrupt_stream, "chunk ", c, " belongs to a wavelet frame");
          break;
      }
    }
    } catch (const Error& err) {
      if (err.code() != ErrorCode::corrupt_stream) throw;
      SAFETY_CHECK(false, ErrorCode::corrupt_stream, "chunk ", c, " of the frame at byte ", f.stream_offset, ": ",
                   err.what());
    }
    SAFETY_CHECK(checksum64(dst, raw) == e.checksum, ErrorCode::checksum_mismatch, "checksum mismatch in chunk ",
                 c, " of the frame at byte ", f.stream_offset, ": the stream is corrupt");
  });
}

}  // namespace vlec::cpu
