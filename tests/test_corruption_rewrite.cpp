// tests/test_corruption_rewrite.cpp: header fields rewritten under a
// recomputed header checksum (so that the field checks themselves must catch
// them), chunk aux fields, and the caller's output buffer: too small, or
// left after a failed decode. The streams and readers are those of
// corruption_util.hpp.
#include <gtest/gtest.h>

#include "corruption_util.hpp"

namespace vlec {
namespace {

using namespace corruption;

// A rewrite of the header area: a name, the edit, and the one error code it
// must raise (or any corruption code).
struct Rewrite {
  std::string name;
  std::function<void(Bytes&)> edit;
  std::optional<ErrorCode> code;
  bool same_data_ok = false;  // the rewritten frame is valid and holds the same data
};

std::vector<Rewrite> header_rewrites(const Case& c) {
  const format::FrameHeader& h = c.header;
  std::vector<Rewrite> v;
  auto set8 = [](std::size_t at, uint8_t x) { return [=](Bytes& s) { s[at] = x; }; };
  auto set32 = [](std::size_t at, uint32_t x) { return [=](Bytes& s) { store_le32(s.data() + at, x); }; };
  auto set64 = [](std::size_t at, uint64_t x) { return [=](Bytes& s) { store_le64(s.data() + at, x); }; };
  v.push_back({"magic", set8(0, 'v'), ErrorCode::bad_magic});
  v.push_back({"elements + 1", set64(8, h.elements + 1), {}});
  v.push_back({"elements - 1", set64(8, h.elements - 1), {}});
  v.push_back({"elements + chunk_elements", set64(8, h.elements + h.chunk_elements), {}});
  v.push_back({"elements = 0", set64(8, 0), {}});
  for (uint32_t ce : {h.chunk_elements + 128, h.chunk_elements - 128, 2 * h.chunk_elements, 128u * 1024})
    if (ce >= 128 && ce != h.chunk_elements) v.push_back({"chunk_elements = " + std::to_string(ce), set32(16, ce), {}});
  for (uint32_t ce : {0u, 100u, 64u, h.chunk_elements + 1, (1u << 24) + 128})
    v.push_back({"chunk_elements = " + std::to_string(ce), set32(16, ce), ErrorCode::corrupt_stream});
  for (unsigned codec = 0; codec <= 4; ++codec) {
    if (codec == static_cast<unsigned>(h.codec)) continue;
    // A raw frame relabelled rle is a valid rle frame whose chunks are all stored raw.
    const bool valid = codec == static_cast<unsigned>(Codec::rle) && all_chunks_raw(c);
    v.push_back({"codec = " + std::to_string(codec), set8(6, static_cast<uint8_t>(codec)),
                 codec == 4 ? std::optional(ErrorCode::corrupt_stream) : std::nullopt, valid});
  }
  for (unsigned width : {1u, 2u, 3u, 4u, 8u, 16u, 0u})
    if (width != h.width)
      v.push_back({"width = " + std::to_string(width), set8(7, static_cast<uint8_t>(width)), {}});
  v.push_back({"codebooks_bytes + 4", set32(20, h.codebooks_bytes + 4), {}});
  v.push_back({"codebooks_bytes + 8", set32(20, h.codebooks_bytes + 8), {}});
  if (h.codebooks_bytes >= 4) v.push_back({"codebooks_bytes - 4", set32(20, h.codebooks_bytes - 4), {}});
  v.push_back({"codebooks_bytes + 2", set32(20, h.codebooks_bytes + 2), ErrorCode::corrupt_stream});
  v.push_back({"frame_bytes + 8", set64(24, h.frame_bytes + 8), {}});
  v.push_back({"frame_bytes - 8", set64(24, h.frame_bytes - 8), {}});
  v.push_back({"frame_bytes + 4", set64(24, h.frame_bytes + 4), ErrorCode::corrupt_stream});
  v.push_back({"frame_bytes = 0", set64(24, 0), ErrorCode::corrupt_stream});
  for (std::size_t at = 40; at < 48; ++at)
    v.push_back({"reserved byte " + std::to_string(at) + " = 1", set8(at, 1), ErrorCode::corrupt_stream});
  for (uint32_t f : {2u, 0x80000000u, 3u})
    v.push_back({"required_features = " + std::to_string(f), set32(32, f), ErrorCode::unsupported_version});
  // Bit 0 announces the wavelet codec; on another codec it is damage.
  v.push_back({"required_features = 1", set32(32, 1), ErrorCode::corrupt_stream});
  v.push_back({"format major 2", set8(4, 2), ErrorCode::unsupported_version});
  v.push_back({"format major 255", set8(4, 255), ErrorCode::unsupported_version});
  v.push_back({"format major 0", set8(4, 0), ErrorCode::corrupt_stream});
  const std::size_t pad_begin = index_entry_at(c, c.index.size());
  const std::size_t pad_end = h.header_area_bytes() - format::kChecksumBytes;
  if (pad_begin < pad_end) v.push_back({"header padding byte", set8(pad_begin, 1), ErrorCode::corrupt_stream});
  for (std::size_t k = 0; k < c.index.size(); ++k) {
    const std::size_t at = index_entry_at(c, k);
    const uint32_t stored = c.index[k].stored_bytes;
    const std::string chunk = "chunk " + std::to_string(k) + (chunk_is_raw(c, k) ? " (raw)" : " (coded)");
    v.push_back({chunk + " stored_bytes + 4", set32(at, stored + 4), {}});
    v.push_back({chunk + " stored_bytes - 4", set32(at, stored - 4), {}});
    v.push_back({chunk + " stored_bytes + 1", set32(at, stored + 1), {}});
    v.push_back({chunk + " stored_bytes - 1", set32(at, stored - 1), {}});
    v.push_back({chunk + " stored_bytes = 0", set32(at, 0), ErrorCode::corrupt_stream});
    v.push_back({chunk + " checksum + 1", set64(at + 8, c.index[k].checksum + 1), ErrorCode::checksum_mismatch});
  }
  return v;
}

void check_rewrite(const Case& c, const Rewrite& rw, Report& report, bool all_readers = true) {
  Bytes bad = c.stream;
  rw.edit(bad);
  reseal(bad);
  Expect e;
  e.capacity = rewrite_capacity(c);
  e.allow_output_too_small = claimed_bytes(bad) > e.capacity;
  e.allow_same_data = rw.same_data_ok;
  e.all_readers = all_readers;
  const Result r = check_rejected(bad, c.data, e);
  if (!r.problems.empty()) report.fail(rw.name + ": " + r.problems);
  else if (rw.code && r.code && *r.code != *rw.code)
    report.fail(rw.name + ": decompress() threw " + std::string(to_string(*r.code)) + ", expected " +
                std::string(to_string(*rw.code)));
}

TEST(Corruption, RewrittenHeaderFieldsAreRejected) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Report report(c.name + " rewritten fields");
    for (const Rewrite& rw : header_rewrites(c)) check_rewrite(c, rw, report);
  }
}

// The aux field of a chunk's index entry: the run count for rle and
// rle+huffman chunks, unused (written as zero) for raw and Huffman chunks. A
// changed aux must be refused whatever the chunk.
TEST(Corruption, RewrittenChunkAuxIsRejected) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Report report(c.name + " rewritten aux");
    for (std::size_t k = 0; k < c.index.size(); ++k) {
      const std::size_t at = index_entry_at(c, k) + 4;
      const uint32_t aux = c.index[k].aux;
      const std::string chunk = "chunk " + std::to_string(k) + (chunk_is_raw(c, k) ? " (raw)" : " (coded)") +
                                " aux " + std::to_string(aux) + " -> ";
      for (uint32_t x : {aux + 1, aux - 1, aux ^ 0x80000000u, aux ^ 0x10000u})
        check_rewrite(c, {chunk + std::to_string(x), [=](Bytes& s) { store_le32(s.data() + at, x); }, {}}, report);
    }
  }
}

// Every bit of the header area flipped and the header checksum recomputed:
// the field checks and the codebook parser must catch each, or the frame must
// still decode to exactly the original data, which only fields that do not
// change the data may allow: the minor version, the optional features, the
// codec of a frame whose chunks are all raw (raw and rle read alike), and the
// aux of a coded Huffman chunk (that one fails in RewrittenChunkAuxIsRejected).
TEST(Corruption, ResealedHeaderBitFlipsAreRejected) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Report report(c.name + " resealed header flips");
    const std::size_t area = c.header.header_area_bytes() - format::kChecksumBytes;
    for (std::size_t off = 0; off < area; ++off) {
      // The aux field of a coded Huffman chunk, which the decoder ignores:
      // left to RewrittenChunkAuxIsRejected, so that it fails in one place.
      const std::size_t k = (off - index_entry_at(c, 0)) / format::kIndexEntryBytes;
      const bool huffman_aux = c.header.codec == Codec::huffman && off >= index_entry_at(c, 0) && k < c.index.size() &&
                               (off - index_entry_at(c, k)) >= 4 && (off - index_entry_at(c, k)) < 8 &&
                               !chunk_is_raw(c, k);
      for (unsigned bit = 0; bit < 8; ++bit) {
        Rewrite rw;
        rw.name = "offset " + std::to_string(off) + " bit " + std::to_string(bit) + " (" + region_of(c, off) + ")";
        rw.edit = [=](Bytes& s) { s[off] ^= static_cast<uint8_t>(1u << bit); };
        rw.same_data_ok = off == 5 || (off >= 36 && off < 40) ||
                          (off == 6 && bit == 1 && all_chunks_raw(c)) ||  // raw <-> rle, every chunk raw
                          huffman_aux;
        check_rewrite(c, rw, report, (off + bit) % 8 == 0);
      }
    }
  }
}

TEST(Corruption, OutputBufferTooSmall) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::size_t n = c.data.size();
    for (std::size_t cap : {std::size_t{0}, std::size_t{1}, n / 2, n - 1}) {
      Bytes out(cap);  // exact: an overrun is an ASan report
      try {
        decompress(c.stream.data(), c.stream.size(), out.data(), cap, {1, Backend::cpu});
        ADD_FAILURE() << "capacity " << cap << " of " << n << ": no error";
      } catch (const Error& err) {
        EXPECT_EQ(err.code(), ErrorCode::output_too_small) << "capacity " << cap << ": " << err.what();
      }
      // Nothing is written past the capacity the caller gave.
      Bytes guarded(cap + 64, 0xA5);
      EXPECT_THROW(decompress(c.stream.data(), c.stream.size(), guarded.data(), cap, {1, Backend::cpu}), Error);
      EXPECT_TRUE(std::all_of(guarded.begin() + cap, guarded.end(), [](uint8_t x) { return x == 0xA5; }))
          << "capacity " << cap << ": bytes written past it";
    }
    EXPECT_THROW(decompress(c.stream.data(), c.stream.size(), nullptr, 0, {1, Backend::cpu}), Error);
  }
  // Two frames: the first fits, the second does not.
  const Case& a = find_case(CodecChoice::rle, DType::u8);
  const Case& b = find_case(CodecChoice::huffman, DType::u16);
  Bytes both = a.stream;
  both.insert(both.end(), b.stream.begin(), b.stream.end());
  for (std::size_t cap : {a.data.size(), a.data.size() + b.data.size() - 1}) {
    Bytes guarded(cap + 64, 0xA5);
    try {
      decompress(both.data(), both.size(), guarded.data(), cap, {1, Backend::cpu});
      ADD_FAILURE() << "two frames into " << cap << " bytes: no error";
    } catch (const Error& err) {
      EXPECT_EQ(err.code(), ErrorCode::output_too_small) << err.what();
    }
    EXPECT_TRUE(std::all_of(guarded.begin() + cap, guarded.end(), [](uint8_t x) { return x == 0xA5; }));
  }
}

// A corrupt chunk decoded into the caller's buffer: the call throws (nothing
// is reported as decoded) and writes nothing beyond the buffer, on one thread
// and on several.
TEST(Corruption, FailedDecodeIntoCallersBuffer) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    for (std::size_t k = 0; k < c.index.size(); ++k) {
      for (unsigned threads : {1u, 4u}) {
        Bytes bad = c.stream;
        bad[c.chunk_at[k] + c.index[k].stored_bytes / 2] ^= 0x10;
        Bytes guarded(c.data.size() + 64, 0xA5);
        try {
          const std::size_t n = decompress(bad.data(), bad.size(), guarded.data(), c.data.size(), {threads, Backend::cpu});
          ADD_FAILURE() << "chunk " << k << " damaged, " << threads << " threads: returned " << n << " bytes";
        } catch (const Error& err) {
          EXPECT_TRUE(is_corruption_code(err.code())) << err.what();
        }
        EXPECT_TRUE(std::all_of(guarded.begin() + c.data.size(), guarded.end(), [](uint8_t x) { return x == 0xA5; }))
            << "chunk " << k << ": bytes written past the buffer";
      }
    }
  }
}

// The vector decompress() sizes its output with decompressed_size(), which
// reads fixed headers without verifying their checksum. In a stream large
// enough for its header area to stay within frame_bytes, one flipped bit of
// the element count then claims terabytes: the call must still fail with a
// vlec::Error (the header checksum no longer matches), not std::bad_alloc or
// an allocator abort. Run in a child process, since the failure mode can be
// an abort (AddressSanitizer's allocation-size-too-big).
TEST(Corruption, FlippedElementCountInALargeStreamIsAVlecError) {
  const uint64_t seed = test::base_seed() + 99;
  SCOPED_TRACE("quant65536 as u64, 40000 elements, raw, chunk 2^24, seed " + std::to_string(seed));
  const Bytes data = test::sample("quant65536", 40000, DType::u64, seed);
  CompressOptions o;
  o.codec = CodecChoice::raw;
  o.dtype = DType::u64;
  o.chunk_elements = format::kMaxChunkElements;
  o.threads = 1;
  Bytes bad = compress(data.data(), data.size(), o);
  bad[8 + 38 / 8] ^= static_cast<uint8_t>(1u << (38 % 8));  // elements += 2^38: 2 TiB of u64
  // The damage is in the header: decompress() into a buffer and inspect() notice.
  Bytes out(data.size());
  EXPECT_THROW(decompress(bad.data(), bad.size(), out.data(), out.size(), {1, Backend::cpu}), Error);
  EXPECT_THROW(inspect(bad.data(), bad.size()), Error);
  auto child = [&] {
    try {
      const Bytes v = decompress(bad.data(), bad.size(), DecompressOptions{1, Backend::cpu});
      std::fprintf(stderr, "vector decompress() returned %zu bytes without an error\n", v.size());
      std::_Exit(2);
    } catch (const Error& err) {
      std::fprintf(stderr, "vlec::Error %s\n", err.what());
      std::_Exit(is_corruption_code(err.code()) ? 0 : 3);
    } catch (const std::exception& x) {
      std::fprintf(stderr, "vector decompress() threw a non-vlec exception: %s\n", x.what());
      std::_Exit(4);
    }
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace vlec
