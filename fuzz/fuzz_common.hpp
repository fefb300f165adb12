// fuzz/fuzz_common.hpp: what both libFuzzer targets do with an input: feed it
// to every CPU reader of the public API, accept vlec::Error (and only that),
// and check that the readers agree with each other. Anything else -- another
// exception, a sanitizer report, a hang, a huge allocation -- is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "format/frame.hpp"
#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"

namespace vlec::fuzz {

// A stream that claims more than this is decoded into a buffer of
// kSmallCapacity bytes (it must then fail with output_too_small or a
// corruption error) instead of into a vector of the claimed size: a valid rle
// frame of a few KiB may legitimately claim gigabytes.
constexpr uint64_t kMaxDecodeBytes = uint64_t{8} << 20;
constexpr std::size_t kSmallCapacity = std::size_t{1} << 20;

[[noreturn]] inline void finding(const char* what, unsigned long long a = 0, unsigned long long b = 0) {
  std::fprintf(stderr, "==FUZZ FINDING== %s (%llu, %llu)\n", what, a, b);
  std::abort();
}

inline void exercise(const uint8_t* d, std::size_t n) {
  DecompressOptions o;
  o.threads = 1;
  o.backend = Backend::cpu;

  bool inspected = false;
  uint64_t inspect_bytes = 0;
  try {
    const StreamInfo info = inspect(d, n);
    inspected = true;
    inspect_bytes = info.decompressed_bytes;
  } catch (const Error&) {
  }
  try {
    (void)frame_size(d, n);
  } catch (const Error&) {
  }
  try {
    (void)wavelet_image(d, n);
  } catch (const Error&) {
  }
  bool sized = false;
  uint64_t claimed = 0;
  try {
    claimed = decompressed_size(d, n);
    sized = true;
  } catch (const Error&) {
  }
  // inspect() reads more than decompressed_size() (a wavelet frame's embedded
  // frame headers, wavelet/decode.cpp frame_info), so it may refuse what
  // decompressed_size() accepts, but not the other way round; and a stream
  // that decompresses passed every check inspect() makes.
  if (inspected && !sized) finding("inspect() accepts a stream that decompressed_size() rejects");
  if (inspected && claimed != inspect_bytes) finding("inspect() and decompressed_size() disagree on size", claimed, inspect_bytes);

  if (sized && claimed <= kMaxDecodeBytes) {
    try {
      const std::vector<uint8_t> out = decompress(d, n, o);
      if (out.size() != claimed) finding("vector decompress() size differs from decompressed_size()", out.size(), claimed);
      if (!inspected) finding("decompress() accepted a stream that inspect() rejects", out.size(), 0);
    } catch (const Error&) {
    }
  } else {
    // Exactly kSmallCapacity bytes on the heap, so that ASan sees any write past it.
    const std::unique_ptr<uint8_t[]> buf(new uint8_t[kSmallCapacity]);
    try {
      const std::size_t w = decompress(d, n, buf.get(), kSmallCapacity, o);
      if (!sized) finding("decompress() accepted a stream that decompressed_size() rejects", w, 0);
      if (w != claimed) finding("decompress() size differs from decompressed_size()", w, claimed);
      if (!inspected) finding("decompress() accepted a stream that inspect() rejects", w, 0);
    } catch (const Error&) {
    }
  }
}

// Rewrite the header checksum of the frame at `at` (and, for a wavelet frame,
// of every embedded frame its group table points at) over the header area as
// the fixed header describes it, like tests/corruption_util.hpp's reseal():
// a rewritten field then passes the checksum and must be caught by the field
// checks. Returns the frame's claimed size, or 0 where the fixed header is
// refused (nothing to seal: the readers reject it before any checksum).
inline uint64_t reseal_frame(std::vector<uint8_t>& s, std::size_t at, int depth = 0) {
  format::FrameHeader h;
  try {
    h = format::read_fixed_header(s.data() + at, s.size() - at, at);
  } catch (const Error&) {
    return 0;
  }
  const uint64_t area = h.header_area_bytes();
  if (area > s.size() - at) return 0;
  if (h.codec == Codec::wavelet && depth == 0) {
    // Section at frame offset 48: wavelet header (48 bytes, group count at
    // byte 28), then 32-byte group entries (frame_offset at byte 8).
    const uint8_t* sec = s.data() + at + format::kFixedHeaderBytes;
    const uint64_t groups = load_le32(sec + 28);
    const uint64_t payload_at = at + area;
    for (uint64_t g = 0; g < groups && 48 + 32 * (g + 1) <= h.codebooks_bytes; ++g) {
      const uint64_t fo = load_le64(sec + 48 + 32 * g + 8);
      if (payload_at < s.size() && fo < s.size() - payload_at) reseal_frame(s, payload_at + fo, depth + 1);
    }
  }
  store_le64(s.data() + at + area - format::kChecksumBytes,
             checksum64(s.data() + at, area - format::kChecksumBytes));
  return h.frame_bytes;
}

inline void reseal_stream(std::vector<uint8_t>& s) {
  std::size_t at = 0;
  for (int frames = 0; frames < 64 && at < s.size(); ++frames) {
    const uint64_t fb = reseal_frame(s, at);
    if (fb == 0 || fb > s.size() - at) break;
    at += fb;
  }
}

}  // namespace vlec::fuzz
