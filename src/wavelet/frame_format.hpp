// wavelet/frame_format.hpp: the section and payload layout of a wavelet frame
// (docs/FORMAT.md §10): the wavelet header, the group table, the container
// prefix, and the reader that checks all of them before any group is decoded.
//
// Every group's embedded frame and low-bit area lie at offsets stored in the
// table (and checked to be the contiguous layout), so a decoder can start on
// every group at once, on the CPU or the GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/frame.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/layout.hpp"

namespace vlec::wavelet {

constexpr std::size_t kHeaderBytes = 48;      // the wavelet header
constexpr std::size_t kGroupEntryBytes = 32;  // one group table entry
constexpr uint8_t kFlagRct = 1;
constexpr uint8_t kFlagBigEndian = 2;
constexpr uint8_t kFlagSegmentedChecksum = 4;  // samples checksum per 64 KiB segment (samples_checksum.hpp)
constexpr unsigned kMaxPlanes = 4;

struct Group {
  GroupSpec spec;
  unsigned shift = 0;
  uint64_t frame_offset = 0;  // payload-relative
  uint64_t frame_bytes = 0;
  uint64_t bits_offset = 0;   // payload-relative
  uint64_t samples = 0;       // coefficients (reader: from the layout)
};

struct Header {
  WaveletImage image;
  unsigned levels = 0;
  bool rct = false;
  bool big_endian = false;
  bool segmented_checksum = true;  // flag bit 2; writers always set it, readers accept both
  std::vector<uint8_t> prefix;
  uint64_t samples_checksum = 0;
  std::vector<Group> groups;
};

// The section (wavelet header, table, prefix, zero padding to 4 bytes).
std::vector<uint8_t> write_section(const Header& h);

// A parsed and checked wavelet frame. `payload` points into the caller's
// stream, which holds the whole frame.
struct ParsedWavelet {
  format::FrameHeader frame;
  Header header;
  const uint8_t* payload = nullptr;
  uint64_t payload_bytes = 0;
  uint64_t stream_offset = 0;
  // Decompressed size: prefix plus samples.
  uint64_t output_bytes() const {
    return header.prefix.size() + frame.elements * frame.width;
  }
};

// Checks the fixed header, the header checksum, the wavelet header, the group
// table (coverage, offsets, sizes) and that the stream holds the whole frame.
// Embedded frames are checked when decoded (decode.cpp).
ParsedWavelet parse_wavelet_frame(const uint8_t* data, std::size_t available, uint64_t stream_offset);

// Samples of an image, with overflow checks (throws with `code`).
uint64_t checked_samples(const WaveletImage& image, ErrorCode code);

}  // namespace vlec::wavelet
