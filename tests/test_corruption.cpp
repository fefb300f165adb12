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

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "format/frame.hpp"
#include "test_util.hpp"
#include "vlec/vlec.hpp"

namespace vlec {
namespace {

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------
// The streams under test.

struct CaseSpec {
  const char* generator;
  DType dtype;
  CodecChoice codec;
  std::size_t elements;
  uint32_t chunk_elements;
  int noise_chunk;  // chunk overwritten with uniform noise so that it is stored raw; -1: none
};

// Each has several chunks and a partial final chunk; each has a chunk stored
// raw: a noise chunk, or a final chunk of 1 to 3 elements, too small to code
// (where noise would lengthen the codes or inflate the codebook until the
// whole frame falls back to raw). Huffman on u8 takes 512-element chunks: in
// 256 bytes the 32-lane layout rarely saves enough to pay for the codebook.
// StreamsHaveTheIntendedShape checks all this, so that a change to the
// encoder cannot quietly make these streams test less.
const CaseSpec kSpecs[] = {
    {"text", DType::u8, CodecChoice::raw, 700, 256, -1},
    {"quant1024", DType::u16, CodecChoice::raw, 333, 128, -1},
    {"skewed", DType::u8, CodecChoice::huffman, 1539, 512, 1},
    {"quant1024", DType::u16, CodecChoice::huffman, 641, 128, -1},
    {"quant1024", DType::u32, CodecChoice::huffman, 385, 128, -1},
    {"runs", DType::u8, CodecChoice::rle, 1500, 256, 3},
    {"runs", DType::u16, CodecChoice::rle, 700, 128, 1},
    {"runs", DType::u32, CodecChoice::rle, 500, 128, 2},
    {"runs", DType::u64, CodecChoice::rle, 300, 128, 0},
    {"runs", DType::u8, CodecChoice::rle_huffman, 1200, 256, 2},
    {"runs", DType::u16, CodecChoice::rle_huffman, 641, 128, -1},
    {"runs", DType::u32, CodecChoice::rle_huffman, 513, 128, -1},
    {"runs", DType::u64, CodecChoice::rle_huffman, 385, 128, -1},
};

struct Case {
  CaseSpec spec;
  uint64_t seed = 0;
  std::string name;  // codec, type, generator, sizes and seed: for traces
  Bytes data;
  Bytes stream;
  format::FrameHeader header;
  std::vector<format::ChunkEntry> index;
  std::vector<uint64_t> chunk_at;  // stream offset of each chunk's payload
};

Case make_case(const CaseSpec& spec, uint64_t seed) {
  Case c;
  c.spec = spec;
  c.seed = seed;
  const std::size_t w = dtype_bytes(spec.dtype);
  c.data = test::sample(spec.generator, spec.elements, spec.dtype, seed);
  if (spec.noise_chunk >= 0) {
    // Huffman codes values below 65,536 only, and wide noise would bloat any
    // Huffman codebook: noise bytes, zero-extended, for the Huffman codecs.
    const bool huff = spec.codec == CodecChoice::huffman || spec.codec == CodecChoice::rle_huffman;
    const std::size_t nw = huff ? 1 : w;
    const std::size_t first = std::size_t{spec.chunk_elements} * spec.noise_chunk;
    const std::size_t count = std::min<std::size_t>(spec.chunk_elements, spec.elements - first);
    const Bytes noise = test::convert(test::sample("uniform", count * nw, DType::u8, seed + 1),
                                      static_cast<unsigned>(nw), static_cast<unsigned>(w));
    std::copy(noise.begin(), noise.end(), c.data.begin() + first * w);
  }
  CompressOptions o;
  o.codec = spec.codec;
  o.dtype = spec.dtype;
  o.chunk_elements = spec.chunk_elements;
  o.threads = 1;
  o.backend = Backend::cpu;
  c.stream = compress(c.data.data(), c.data.size(), o);
  const format::ParsedFrame f = format::parse_frame(c.stream.data(), c.stream.size(), 0);
  c.header = f.header;
  c.index = f.index;
  for (uint64_t off : f.offsets) c.chunk_at.push_back(c.header.header_area_bytes() + off);
  c.name = std::string(to_string(spec.codec)) + "/" + std::string(to_string(spec.dtype)) + " " + spec.generator +
           " n=" + std::to_string(spec.elements) + " chunk=" + std::to_string(spec.chunk_elements) +
           " noise_chunk=" + std::to_string(spec.noise_chunk) + " seed=" + std::to_string(seed) + " (" +
           std::to_string(c.stream.size()) + "-byte stream)";
  return c;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> v;
    for (std::size_t i = 0; i < std::size(kSpecs); ++i) v.push_back(make_case(kSpecs[i], test::base_seed() + 1000 * (i + 1)));
    return v;
  }();
  return all;
}

const Case& find_case(CodecChoice codec, DType t) {
  for (const Case& c : cases())
    if (c.spec.codec == codec && c.spec.dtype == t) return c;
  throw std::logic_error("no such case");
}

bool chunk_is_raw(const Case& c, std::size_t k) {
  return c.index[k].stored_bytes == c.header.chunk_elements_of(k) * c.header.width;
}

bool all_chunks_raw(const Case& c) {
  for (std::size_t k = 0; k < c.index.size(); ++k)
    if (!chunk_is_raw(c, k)) return false;
  return true;
}

std::size_t index_entry_at(const Case& c, std::size_t k) {
  return format::kFixedHeaderBytes + c.header.codebooks_bytes + format::kIndexEntryBytes * k;
}

// Where byte `off` of a single-frame stream lies, in words.
std::string region_of(const Case& c, std::size_t off) {
  const std::size_t books_end = format::kFixedHeaderBytes + c.header.codebooks_bytes;
  const std::size_t index_end = books_end + format::kIndexEntryBytes * c.index.size();
  const std::size_t area = c.header.header_area_bytes();
  if (off < format::kFixedHeaderBytes) return "fixed header byte " + std::to_string(off);
  if (off < books_end) return "codebook section byte " + std::to_string(off - format::kFixedHeaderBytes);
  if (off < index_end) {
    const std::size_t k = (off - books_end) / format::kIndexEntryBytes, in = (off - books_end) % format::kIndexEntryBytes;
    return "index entry " + std::to_string(k) + (in < 4 ? " stored_bytes" : in < 8 ? " aux" : " checksum");
  }
  if (off < area - format::kChecksumBytes) return "header padding";
  if (off < area) return "header checksum";
  for (std::size_t k = 0; k < c.index.size(); ++k) {
    if (off < c.chunk_at[k] + c.index[k].stored_bytes && off >= c.chunk_at[k])
      return "payload of chunk " + std::to_string(k) + (chunk_is_raw(c, k) ? " (raw)" : " (coded)") + " byte " +
             std::to_string(off - c.chunk_at[k]);
  }
  return "payload padding";
}

// Whether parse_frame() (and so inspect()) reads byte `off`: the header area
// and the zero padding of the payload; only chunk contents are left to the
// decoders and chunk checksums.
bool parse_reads(const Case& c, std::size_t off) {
  if (off < c.header.header_area_bytes()) return true;
  for (std::size_t k = 0; k < c.index.size(); ++k)
    if (off >= c.chunk_at[k] && off < c.chunk_at[k] + c.index[k].stored_bytes) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Feeding a damaged stream to every reader.

bool is_corruption_code(ErrorCode e) {
  return e == ErrorCode::bad_magic || e == ErrorCode::unsupported_version || e == ErrorCode::corrupt_stream ||
         e == ErrorCode::truncated_stream || e == ErrorCode::checksum_mismatch;
}

struct Expect {
  bool inspect_must_throw = false;   // parse_frame() reads the damaged bytes
  bool size_must_throw = false;      // decompressed_size() reads enough to notice
  bool allow_same_data = false;      // a rewrite that leaves a valid frame of the same data may decode
  bool allow_output_too_small = false;
  std::size_t capacity = 0;          // caller's buffer for decompress()
  unsigned threads = 1;
  bool all_readers = true;           // false: the vector decompress() only where it differs
};

struct Result {
  std::string problems;  // empty if every reader behaved
  std::optional<ErrorCode> code;  // what decompress() into the buffer threw
  bool vector_skipped = false;
};

// A vector decompress() of a stream whose headers claim more than this is
// skipped (see FlippedElementCountInALargeStreamIsAVlecError).
std::size_t vector_bound(std::size_t original) { return 2 * original + 65536; }

Result check_rejected(const Bytes& bad, const Bytes& original, const Expect& e) {
  Result r;
  auto note = [&](const std::string& s) { r.problems += (r.problems.empty() ? "" : "; ") + s; };
  auto code_ok = [&](ErrorCode code) {
    return is_corruption_code(code) || (e.allow_output_too_small && code == ErrorCode::output_too_small);
  };
  auto describe = [](const Error& err) { return std::string(to_string(err.code())) + " (" + err.what() + ")"; };
  const DecompressOptions opt{e.threads, Backend::cpu};
  {  // Into the caller's buffer, exactly e.capacity bytes on the heap (left uninitialized: cheaper).
    const std::unique_ptr<uint8_t[]> out(new uint8_t[std::max<std::size_t>(e.capacity, 1)]);
    try {
      const std::size_t n = decompress(bad.data(), bad.size(), out.get(), e.capacity, opt);
      const bool same = n == original.size() && std::equal(original.begin(), original.end(), out.get());
      if (!(e.allow_same_data && same))
        note("decompress() returned " + std::to_string(n) + " bytes without an error (" +
             (same ? "the original data" : "WRONG DATA") + ")");
    } catch (const Error& err) {
      r.code = err.code();
      if (!code_ok(err.code())) note("decompress() threw " + describe(err));
    } catch (const std::exception& x) {
      note(std::string("decompress() threw a non-vlec exception: ") + x.what());
    }
  }
  bool size_known = false;
  uint64_t claimed = 0;
  try {
    claimed = decompressed_size(bad.data(), bad.size());
    size_known = true;
    if (e.size_must_throw) note("decompressed_size() returned " + std::to_string(claimed));
  } catch (const Error& err) {
    if (!is_corruption_code(err.code())) note("decompressed_size() threw " + describe(err));
  } catch (const std::exception& x) {
    note(std::string("decompressed_size() threw a non-vlec exception: ") + x.what());
  }
  // Into a vector it sizes itself. That call begins with decompressed_size()
  // and then decodes as above: it is run where the sizing differs from above
  // (a size was claimed and it is not the original's), else on a sample.
  const bool vector_call = e.all_readers || (size_known && claimed != original.size());
  if (!vector_call) {
  } else if (!size_known || claimed <= vector_bound(original.size())) {
    try {
      const Bytes out = decompress(bad.data(), bad.size(), opt);
      const bool same = out == original;
      if (!(e.allow_same_data && same))
        note("vector decompress() returned " + std::to_string(out.size()) + " bytes without an error (" +
             (same ? "the original data" : "WRONG DATA") + ")");
    } catch (const Error& err) {
      if (!is_corruption_code(err.code())) note("vector decompress() threw " + describe(err));
    } catch (const std::exception& x) {
      note(std::string("vector decompress() threw a non-vlec exception: ") + x.what());
    }
  } else {
    r.vector_skipped = true;
  }
  try {
    const StreamInfo info = inspect(bad.data(), bad.size());
    if (e.inspect_must_throw) note("inspect() accepted it (" + std::to_string(info.frames.size()) + " frames)");
  } catch (const Error& err) {
    if (!is_corruption_code(err.code())) note("inspect() threw " + describe(err));
  } catch (const std::exception& x) {
    note(std::string("inspect() threw a non-vlec exception: ") + x.what());
  }
  try {
    (void)frame_size(bad.data(), bad.size());
  } catch (const Error& err) {
    if (!is_corruption_code(err.code())) note("frame_size() threw " + describe(err));
  } catch (const std::exception& x) {
    note(std::string("frame_size() threw a non-vlec exception: ") + x.what());
  }
  return r;
}

// Reports the first few failures of a loop in full and counts the rest, so a
// systematic bug does not bury the log under thousands of messages.
class Report {
 public:
  explicit Report(std::string what) : what_(std::move(what)) {}
  Report(const Report&) = delete;
  ~Report() {
    if (failures_ > kShown) ADD_FAILURE() << what_ << ": " << failures_ - kShown << " more failures not shown ("
                                          << failures_ << " in all)";
  }
  void fail(const std::string& msg) {
    if (failures_++ < kShown) ADD_FAILURE() << what_ << ": " << msg;
  }
  std::size_t failures() const { return failures_; }

 private:
  static constexpr std::size_t kShown = 10;
  std::string what_;
  std::size_t failures_ = 0;
};

// Rewrite the header checksum of the frame at `at` over its header area as the
// fixed header now describes it, so that a rewritten field passes the checksum
// and must be caught by the field checks. A fixed header that its own checks
// refuse has no area to seal and is left as it is.
void reseal(Bytes& s, std::size_t at = 0) {
  try {
    const format::FrameHeader h = format::read_fixed_header(s.data() + at, s.size() - at, at);
    const uint64_t area = h.header_area_bytes();
    if (area <= s.size() - at)
      store_le64(s.data() + at + area - format::kChecksumBytes, checksum64(s.data() + at, area - format::kChecksumBytes));
  } catch (const Error&) {
  }
}

// What the (rewritten) fixed header claims to decompress to, for deciding
// whether output_too_small is a fair answer.
uint64_t claimed_bytes(const Bytes& s) {
  if (s.size() < format::kFixedHeaderBytes) return 0;
  const uint64_t elements = load_le64(s.data() + 8);
  return s[7] && elements > ~uint64_t{0} / s[7] ? ~uint64_t{0} : elements * s[7];
}

// Output capacity for rewritten headers: room for the original data widened
// to 8-byte elements, so that a changed width still reaches the chunk decoders.
std::size_t rewrite_capacity(const Case& c) { return 8 * c.data.size() + 4096; }

// ---------------------------------------------------------------------------

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
