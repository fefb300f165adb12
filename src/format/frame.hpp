// format/frame.hpp: reading and writing the frame container of docs/FORMAT.md:
// the fixed header, the codebook section, the chunk index and the header
// checksum. Codec payloads are handled by the codec modules.
//
// parse_frame() is the gate every decoder passes through: it checks every
// header field, verifies the header checksum before trusting the index, and
// turns the index into validated payload offsets, so that the chunk decoders
// downstream only ever see in-bounds, size-consistent chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "huffman/codebook.hpp"
#include "vlec/types.hpp"

namespace vlec::format {

constexpr uint32_t kMagic = 0x43454C56;  // bytes "VLEC"
constexpr uint8_t kFormatMajor = 1;
constexpr uint8_t kFormatMinor = 0;        // what huffman, rle and raw frames are written with
constexpr uint8_t kFormatMinorWavelet = 1;  // wavelet frames need a 1.1 reader
constexpr uint8_t kReaderMinor = 1;         // the newest minor version this reader knows
// Required-feature bits (docs/FORMAT.md §2.2): a reader rejects a frame that
// sets a bit it does not know.
constexpr uint32_t kFeatureWavelet = 1u << 0;  // codec 4: a wavelet frame (§10)
constexpr std::size_t kFixedHeaderBytes = 48;
constexpr std::size_t kIndexEntryBytes = 16;
constexpr std::size_t kChecksumBytes = 8;
constexpr uint32_t kChunkGranule = 128;           // chunk_elements is a multiple of this
constexpr uint32_t kMaxChunkElements = 1u << 24;  // keeps every chunk under 4 GiB

struct FrameHeader {
  uint8_t major = kFormatMajor;
  uint8_t minor = kFormatMinor;
  Codec codec = Codec::raw;
  uint8_t width = 1;             // element width in bytes
  uint64_t elements = 0;
  uint32_t chunk_elements = 0;
  uint32_t codebooks_bytes = 0;  // size of the codebook section (wavelet: of the wavelet section)
  uint64_t frame_bytes = 0;      // whole frame, headers included
  uint32_t required_features = 0;
  uint32_t optional_features = 0;

  uint64_t chunks() const { return chunk_elements ? (elements + chunk_elements - 1) / chunk_elements : 0; }
  uint64_t chunk_elements_of(uint64_t c) const {
    const uint64_t first = c * chunk_elements;
    return elements - first < chunk_elements ? elements - first : chunk_elements;
  }
  // Header, codebooks, index and checksum: where the payload begins.
  uint64_t header_area_bytes() const;
};

struct ChunkEntry {
  uint32_t stored_bytes = 0;  // bytes of this chunk's payload (before 4-byte alignment)
  uint32_t aux = 0;           // codec-specific: number of runs for rle and rle+huffman
  uint64_t checksum = 0;      // XXH3-64 of the chunk's original data
};

// Number of codebooks a codec's frames carry: values (and run lengths).
unsigned codebook_count(Codec c);
// Largest alphabet each codebook of a codec may have for an element width.
uint32_t codebook_alphabet_limit(Codec c, unsigned width, unsigned which);

// Serialize a frame's header area (fixed header, codebooks, index, checksum)
// given the header fields, the serialized codebooks and the index. Sets
// h.frame_bytes from the payload size. Returns the bytes to write before the payload.
std::vector<uint8_t> write_header_area(FrameHeader& h, const std::vector<uint8_t>& codebooks,
                                       const std::vector<ChunkEntry>& index);
// The same with a payload of `payload` bytes that is not described by an
// index (wavelet frames: the section is passed as `codebooks`).
std::vector<uint8_t> write_header_area(FrameHeader& h, const std::vector<uint8_t>& codebooks,
                                       const std::vector<ChunkEntry>& index, uint64_t payload);
uint64_t payload_bytes(const std::vector<ChunkEntry>& index);

// Check the fixed header at `data` (at least kFixedHeaderBytes available).
// Wavelet frames pass this check; their sections are read by wavelet/.
// `stream_offset` is the frame's position in the stream, for error messages.
FrameHeader read_fixed_header(const uint8_t* data, std::size_t available, uint64_t stream_offset);

struct ParsedFrame {
  FrameHeader header;
  huffman::Codebook codebooks[2];
  std::vector<ChunkEntry> index;
  std::vector<uint64_t> offsets;  // payload-relative start of each chunk
  const uint8_t* payload = nullptr;
  uint64_t stream_offset = 0;
};

// Parse and validate a whole frame (header area checksum included; chunk
// contents are checked later by their decoders and checksums).
ParsedFrame parse_frame(const uint8_t* data, std::size_t available, uint64_t stream_offset);

// The same checks without the payload: `data` holds at least the header area
// (`available` bytes), the stream holds `stream_available` bytes from the
// frame's start. The payload's padding is then for the caller to check (the
// GPU decoder does). ParsedFrame::payload is not meaningful.
// `huffman_codes` false: a Huffman frame's codebook has its lengths checked
// but no codes assigned (the GPU decoder derives them on the device).
ParsedFrame parse_frame_header(const uint8_t* data, std::size_t available, std::size_t stream_available,
                               uint64_t stream_offset, bool huffman_codes = true);

// The rest of parse_frame's checks, on a frame parse_frame_header read from
// the whole frame in memory (payload meaningful): every padding byte of the
// payload is zero.
void check_payload_padding(const ParsedFrame& frame);

}  // namespace vlec::format
