// tests/test_corruption.cpp: a damaged stream is always refused with a
// vlec::Error, never a crash, a hang, or wrong data reported as success.
//
// Small streams of every codec (several chunks of 128 to 512 elements, a final
// partial chunk, at least one chunk stored raw) go through every single-bit
// flip and every truncation; then concatenated frames, trailing garbage, header
// fields rewritten under a recomputed header checksum (so that the field
// checks themselves, not the checksum, must catch them), and the caller's
// output buffer. Every reader of the API is fed each damaged stream:
// decompress() into a buffer and into a vector, inspect(), decompressed_size()
// and frame_size(). Buffers are sized exactly, so that under AddressSanitizer
// any read or write outside them is reported.
#include <gtest/gtest.h>

#include "corruption_util.hpp"

namespace vlec {
namespace {

using namespace corruption;

TEST(Corruption, StreamsHaveTheIntendedShape) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::printf("[ stream   ] %s\n", c.name.c_str());
    const StreamInfo info = inspect(c.stream.data(), c.stream.size());
    ASSERT_EQ(info.frames.size(), 1u);
    const FrameInfo& f = info.frames[0];
    EXPECT_EQ(std::string(to_string(f.codec)), std::string(to_string(c.spec.codec)))
        << "the frame fell back to another codec";
    EXPECT_GE(f.chunks, 3u);
    EXPECT_NE(c.spec.elements % c.spec.chunk_elements, 0u) << "no partial final chunk";
    EXPECT_GE(f.raw_chunks, 1u) << "no chunk stored raw";
    if (c.spec.codec != CodecChoice::raw) EXPECT_LT(f.raw_chunks, f.chunks) << "no chunk coded";
    EXPECT_EQ(decompress(c.stream.data(), c.stream.size(), DecompressOptions{1, Backend::cpu}), c.data);
  }
}

TEST(Corruption, EverySingleBitFlipIsRejected) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Report report(c.name + " bit flips");
    Bytes bad = c.stream;
    std::size_t flips = 0, skipped = 0;
    for (std::size_t off = 0; off < bad.size(); ++off) {
      for (unsigned bit = 0; bit < 8; ++bit, ++flips) {
        Expect e;
        e.inspect_must_throw = parse_reads(c, off);
        e.capacity = c.data.size();
        e.threads = flips % 53 == 0 ? 4 : 1;  // now and then through the thread pool's error path
        e.all_readers = flips % 8 == 0;
        bad[off] ^= static_cast<uint8_t>(1u << bit);
        const Result r = check_rejected(bad, c.data, e);
        bad[off] ^= static_cast<uint8_t>(1u << bit);
        skipped += r.vector_skipped;
        if (!r.problems.empty())
          report.fail("offset " + std::to_string(off) + " bit " + std::to_string(bit) + " (" + region_of(c, off) +
                      "): " + r.problems);
      }
    }
    ASSERT_EQ(bad, c.stream);
    EXPECT_EQ(skipped, 0u) << "single flips in a small stream should never claim a huge output";
  }
}

TEST(Corruption, EveryTruncationIsRejected) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Report report(c.name + " truncations");
    for (std::size_t len = 0; len < c.stream.size(); ++len) {
      const Bytes cut(c.stream.begin(), c.stream.begin() + len);  // exactly len bytes on the heap
      Expect e;
      e.inspect_must_throw = true;
      e.size_must_throw = true;
      e.capacity = c.data.size();
      e.threads = len % 37 == 0 ? 4 : 1;
      e.all_readers = len % 8 == 0;
      const Result r = check_rejected(cut, c.data, e);
      if (!r.problems.empty()) report.fail("prefix of " + std::to_string(len) + " bytes: " + r.problems);
    }
  }
}

TEST(Corruption, DamageInTheSecondOfTwoFramesIsRejected) {
  const Case& a = find_case(CodecChoice::huffman, DType::u8);
  const Case& b = find_case(CodecChoice::rle_huffman, DType::u16);
  SCOPED_TRACE("frame 1: " + a.name + "; frame 2: " + b.name);
  Bytes both = a.stream;
  both.insert(both.end(), b.stream.begin(), b.stream.end());
  Bytes data = a.data;
  data.insert(data.end(), b.data.begin(), b.data.end());
  ASSERT_EQ(decompress(both.data(), both.size(), DecompressOptions{1, Backend::cpu}), data);
  const std::size_t at = a.stream.size();
  {
    Report report("two frames, bit flips in the second");
    Bytes bad = both;
    for (std::size_t off = at; off < bad.size(); ++off) {
      for (unsigned bit = 0; bit < 8; ++bit) {
        Expect e;
        e.inspect_must_throw = parse_reads(b, off - at);
        e.capacity = data.size();
        e.threads = (off + bit) % 41 == 0 ? 4 : 1;
        e.all_readers = (off + bit) % 8 == 0;
        bad[off] ^= static_cast<uint8_t>(1u << bit);
        const Result r = check_rejected(bad, data, e);
        bad[off] ^= static_cast<uint8_t>(1u << bit);
        if (!r.problems.empty())
          report.fail("offset " + std::to_string(off) + " bit " + std::to_string(bit) + " (frame 2, " +
                      region_of(b, off - at) + "): " + r.problems);
      }
    }
  }
  {
    Report report("two frames, truncations");
    for (std::size_t len = 0; len < both.size(); ++len) {
      const Bytes cut(both.begin(), both.begin() + len);
      if (len == at) {  // exactly the first frame: a valid stream of its own
        EXPECT_EQ(decompress(cut.data(), cut.size(), DecompressOptions{1, Backend::cpu}), a.data);
        continue;
      }
      Expect e;
      e.inspect_must_throw = true;
      e.size_must_throw = true;
      e.capacity = data.size();
      const Result r = check_rejected(cut, data, e);
      if (!r.problems.empty()) report.fail("prefix of " + std::to_string(len) + " bytes: " + r.problems);
    }
  }
  // No partial success: the first frame decodes into the buffer, then the
  // damaged second frame must still fail the whole call.
  for (std::size_t cut : {std::size_t{1}, std::size_t{8}, b.stream.size() / 2}) {
    Bytes out(data.size());
    EXPECT_THROW(decompress(both.data(), both.size() - cut, out.data(), out.size(), {1, Backend::cpu}), Error)
        << "second frame short by " << cut << " bytes";
  }
}

TEST(Corruption, TrailingGarbageIsRejected) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<std::pair<std::string, Bytes>> tails = {
        {"one zero byte", Bytes{0}},
        {"one byte 'V'", Bytes{'V'}},
        {"8 zero bytes", Bytes(8, 0)},
        {"the first 20 bytes", Bytes(c.stream.begin(), c.stream.begin() + 20)},
        {"the first 48 bytes (a whole fixed header)", Bytes(c.stream.begin(), c.stream.begin() + 48)},
        {"the stream less its last byte", Bytes(c.stream.begin(), c.stream.end() - 1)},
    };
    for (const auto& [what, tail] : tails) {
      Bytes bad = c.stream;
      bad.insert(bad.end(), tail.begin(), tail.end());
      Expect e;
      e.inspect_must_throw = true;
      e.size_must_throw = true;
      e.capacity = 2 * c.data.size();
      const Result r = check_rejected(bad, c.data, e);
      EXPECT_TRUE(r.problems.empty()) << "after appending " << what << ": " << r.problems;
    }
  }
}

}  // namespace
}  // namespace vlec
