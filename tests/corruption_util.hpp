// tests/corruption_util.hpp: the damaged-stream machinery shared by the
// corruption tests (test_corruption.cpp: flips, truncations, frames;
// test_corruption_rewrite.cpp: rewritten headers and the caller's buffer).
// The streams under test, every reader fed each damaged stream, and the
// header resealing that makes the field checks, not the checksum, catch a
// rewritten field.
#pragma once

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


namespace vlec::corruption {


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

inline Case make_case(const CaseSpec& spec, uint64_t seed) {
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

inline const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> v;
    for (std::size_t i = 0; i < std::size(kSpecs); ++i) v.push_back(make_case(kSpecs[i], test::base_seed() + 1000 * (i + 1)));
    return v;
  }();
  return all;
}

inline const Case& find_case(CodecChoice codec, DType t) {
  for (const Case& c : cases())
    if (c.spec.codec == codec && c.spec.dtype == t) return c;
  throw std::logic_error("no such case");
}

inline bool chunk_is_raw(const Case& c, std::size_t k) {
  return c.index[k].stored_bytes == c.header.chunk_elements_of(k) * c.header.width;
}

inline bool all_chunks_raw(const Case& c) {
  for (std::size_t k = 0; k < c.index.size(); ++k)
    if (!chunk_is_raw(c, k)) return false;
  return true;
}

inline std::size_t index_entry_at(const Case& c, std::size_t k) {
  return format::kFixedHeaderBytes + c.header.codebooks_bytes + format::kIndexEntryBytes * k;
}

// Where byte `off` of a single-frame stream lies, in words.
inline std::string region_of(const Case& c, std::size_t off) {
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
inline bool parse_reads(const Case& c, std::size_t off) {
  if (off < c.header.header_area_bytes()) return true;
  for (std::size_t k = 0; k < c.index.size(); ++k)
    if (off >= c.chunk_at[k] && off < c.chunk_at[k] + c.index[k].stored_bytes) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Feeding a damaged stream to every reader.

inline bool is_corruption_code(ErrorCode e) {
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
inline std::size_t vector_bound(std::size_t original) { return 2 * original + 65536; }

inline Result check_rejected(const Bytes& bad, const Bytes& original, const Expect& e) {
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
inline void reseal(Bytes& s, std::size_t at = 0) {
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
inline uint64_t claimed_bytes(const Bytes& s) {
  if (s.size() < format::kFixedHeaderBytes) return 0;
  const uint64_t elements = load_le64(s.data() + 8);
  return s[7] && elements > ~uint64_t{0} / s[7] ? ~uint64_t{0} : elements * s[7];
}

// Output capacity for rewritten headers: room for the original data widened
// to 8-byte elements, so that a changed width still reaches the chunk decoders.
inline std::size_t rewrite_capacity(const Case& c) { return 8 * c.data.size() + 4096; }

// ---------------------------------------------------------------------------
}  // namespace vlec::corruption
