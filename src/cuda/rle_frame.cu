// cuda/rle_frame.cu: see rle_frame.hpp. The encoder's own work is the RLE
// encoder (bandwidth-bound passes, rle_gpu.hpp) plus one warp-per-chunk pass
// that reads each chunk once more to hash it (XXH3 by a warp, xxh3_warp.cuh)
// and copies it only when it is stored raw (shared with rle+huffman); the
// decoder (rle, rle+huffman, raw u64 frames) ends with the same warp hash over
// the decoded chunk.
#include "cuda/rle_frame.hpp"

#include <algorithm>
#include <vector>

#include "cuda/chunk_copy.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/rle_common.cuh"
#include "cuda/xxh3_warp.cuh"

namespace vlec::cuda {

namespace {

using rle_detail::align4;
using rle_detail::chunk_raw_bytes;

struct EncodeTemp {
  uint32_t* runs;
  uint32_t* stored;
  uint64_t* payload_offsets;  // [chunks + 1]
  uint64_t* run_offsets;      // [chunks + 1]
  uint8_t* rle_temp;
  std::size_t rle_temp_bytes;
};

EncodeTemp carve_encode(void* base, uint64_t elements, unsigned w, uint32_t C, RleStrategy s, std::size_t* used) {
  const uint64_t chunks = rle_chunk_count(elements, C);
  TempCarver t{static_cast<uint8_t*>(base)};
  EncodeTemp e;
  e.runs = t.take<uint32_t>(std::max<uint64_t>(chunks, 1));
  e.stored = t.take<uint32_t>(std::max<uint64_t>(chunks, 1));
  e.payload_offsets = t.take<uint64_t>(chunks + 1);
  e.run_offsets = t.take<uint64_t>(chunks + 1);
  e.rle_temp_bytes = rle_encode_temp_bytes(elements, w, C, s);
  e.rle_temp = t.take<uint8_t>(e.rle_temp_bytes);
  *used = (t.used + 255) & ~std::size_t{255};
  return e;
}

// One warp per chunk: a chunk that coding does not shrink is copied raw (with
// its zero padding to 4 bytes); every chunk's original bytes are hashed and
// its index entry written: (stored_bytes, runs, XXH3) or (raw size, 0, XXH3).
__global__ void rle_entries_kernel(const uint8_t* __restrict__ in, uint64_t elements, unsigned w, uint32_t C,
                                   uint64_t chunks, const uint32_t* runs, const uint32_t* stored,
                                   const uint64_t* offsets, uint8_t* frame, const uint64_t* layout) {
  uint8_t* index = frame + layout[0];
  uint8_t* payload = frame + layout[1];
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = uint64_t{gridDim.x} * blockDim.x / 32;
  for (uint64_t c = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; c < chunks; c += warps) {
    const uint64_t raw = chunk_raw_bytes(c, elements, C, w);
    const uint8_t* src = in + c * C * w;
    const uint32_t coded = stored[c];
    const bool keep = coded < raw;
    if (!keep) warp_copy_chunk_padded(src, payload + offsets[c], raw, lane);
    const uint64_t hash = warp_hash(src, raw, lane);
    if (lane == 0) {
      uint32_t* e = reinterpret_cast<uint32_t*>(index + 16 * c);
      e[0] = keep ? coded : static_cast<uint32_t>(raw);
      e[1] = keep ? runs[c] : 0;
      e[2] = static_cast<uint32_t>(hash);
      e[3] = static_cast<uint32_t>(hash >> 32);
    }
  }
}

unsigned warp_grid(uint64_t chunks) {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return static_cast<unsigned>(std::min<uint64_t>((chunks + 7) / 8, uint64_t(sms) * 8));
}

// Per chunk: where it is in the frame payload (offsets, stored: the padding
// check), where rle_decode reads it (dec_offsets, dec_stored: the same arrays
// for rle; for rle+huffman a staging buffer that the Huffman parts decode
// into, laid out as rle payloads), and the status of the Huffman parts.
struct DecodeTemp {
  uint64_t* offsets;
  uint64_t* checksums;
  uint32_t* stored;
  uint32_t* runs;
  uint32_t* status;
  uint64_t* dec_offsets;
  uint32_t* dec_stored;
  uint32_t* part_status;   // null for rle
  uint8_t* staged;         // rle+huffman: the decoded runs
  uint64_t staged_bytes;
  RleHuffmanTables tables;
  std::size_t total;
};

// rle+huffman: chunk c's runs staged as an rle payload (values, zero padding,
// lengths) of payload_bytes(R, w), or its raw bytes.
uint64_t staged_size(const format::ParsedFrame& f, uint64_t c) {
  const format::FrameHeader& h = f.header;
  const uint64_t raw = h.chunk_elements_of(c) * h.width;
  const format::ChunkEntry& e = f.index[c];
  // A corrupt run count above N is rejected before anything is staged.
  return e.stored_bytes == raw ? raw : rle_detail::payload_bytes(std::min<uint64_t>(e.aux, raw / h.width), h.width);
}

DecodeTemp carve_decode(void* base, const format::ParsedFrame& f) {
  const uint64_t chunks = f.header.chunks();
  const bool two = f.header.codec == Codec::rle_huffman;
  TempCarver t{static_cast<uint8_t*>(base)};
  const uint64_t n = std::max<uint64_t>(chunks, 1);
  DecodeTemp d{};
  d.offsets = t.take<uint64_t>(n);
  d.checksums = t.take<uint64_t>(n);
  d.stored = t.take<uint32_t>(n);
  d.runs = t.take<uint32_t>(n);
  d.status = t.take<uint32_t>(n);
  d.dec_offsets = d.offsets;
  d.dec_stored = d.stored;
  if (two) {
    d.dec_offsets = t.take<uint64_t>(n);
    d.dec_stored = t.take<uint32_t>(n);
    d.part_status = t.take<uint32_t>(n);
    for (uint64_t c = 0; c < chunks; ++c) d.staged_bytes += align4(staged_size(f, c));
    d.staged = t.take<uint8_t>(std::max<uint64_t>(d.staged_bytes, 16));
    for (int k = 0; k < 2; ++k) {
      d.tables.canon[k] = t.take<uint32_t>(3 * kRleHuffmanCanonSlots);
      d.tables.sorted[k] = t.take<uint32_t>(65536);
    }
  }
  d.total = (t.used + 255) & ~std::size_t{255};
  return d;
}

// After rle_decode, one warp per chunk whose runs decoded: the payload padding
// after the chunk (to the next 4-byte boundary; after the last chunk, to the
// payload's end) must be zero, and the decoded bytes must match the checksum.
// rle_decode has checked offset + stored_bytes <= payload_bytes for it.
__global__ void rle_verify_kernel(const uint8_t* payload, uint64_t payload_bytes, DecodeTemp t, uint64_t chunks,
                                  const uint8_t* out, uint64_t elements, unsigned w, uint32_t C) {
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = uint64_t{gridDim.x} * blockDim.x / 32;
  for (uint64_t c = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; c < chunks; c += warps) {
    if (t.part_status && t.part_status[c] != kRleOk && t.status[c] == kRleOk) {  // uniform across the warp
      if (lane == 0) t.status[c] = t.part_status[c];
      continue;
    }
    if (t.status[c] != kRleOk) continue;
    const uint64_t from = t.offsets[c] + t.stored[c];
    const uint64_t to = c + 1 == chunks ? payload_bytes : min(align4(from), payload_bytes);
    bool ok = true;
    for (uint64_t i = from + lane; i < to; i += 32) ok = ok && payload[i] == 0;
    const bool padding_ok = __all_sync(kFullMaskXxh, ok);
    const uint64_t raw = chunk_raw_bytes(c, elements, C, w);
    const uint64_t hash = warp_hash(out + c * C * w, raw, lane);
    if (lane == 0) t.status[c] = !padding_ok ? kRleChunkPadding : hash != t.checksums[c] ? kRleChecksum : kRleOk;
  }
}

const char* rle_status_text(uint32_t s) {
  switch (s) {
    case kRleBadRunCount: return "its run count is invalid";
    case kRleBadSize: return "its size does not match its run count";
    case kRleOutOfBounds: return "it lies outside the payload";
    case kRleBadPadding: return "padding between its values and lengths is not zero";
    case kRleBadLengths: return "its run lengths do not add up to its element count";
    case kRleChunkPadding: return "padding is not zero";
    case kRleHuffmanSize: return "its size or value word count is invalid";
    case kRleHuffmanWords: return "its Huffman words do not match its symbols";
    case kRleHuffmanCode: return "invalid Huffman code";
    default: return "the stream is corrupt";
  }
}

}  // namespace

std::size_t rle_frame_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements, RleStrategy s) {
  std::size_t used = 0;
  carve_encode(nullptr, elements, width, chunk_elements, s, &used);
  return used;
}

const uint64_t* encode_rle_chunks(const RleFrameEncodeArgs& a, void* temp, std::size_t temp_bytes,
                                  cudaStream_t stream) {
  std::size_t need = 0;
  const EncodeTemp t = carve_encode(temp, a.elements, a.width, a.chunk_elements, a.strategy, &need);
  VLEC_REQUIRE(temp_bytes >= need, "temporary storage of ", temp_bytes, " bytes is below the ", need, " needed");
  VLEC_REQUIRE(a.payload_offset % 8 == 0, "the rle payload must start at a multiple of 8 bytes");
  RleEncodeArgs e = rle_chunk_encode_args(a, t.runs, t.stored, t.payload_offsets, t.run_offsets);
  e.payload = a.frame + a.payload_offset;
  e.skip_raw_chunks = true;
  rle_encode(e, t.rle_temp, t.rle_temp_bytes, stream, a.strategy);
  write_chunk_entries(a, t.runs, t.stored, t.payload_offsets, stream);
  return t.payload_offsets + rle_chunk_count(a.elements, a.chunk_elements);
}

void write_chunk_entries(const RleFrameEncodeArgs& a, const uint32_t* runs, const uint32_t* stored,
                         const uint64_t* offsets, cudaStream_t stream) {
  VLEC_REQUIRE(a.layout, "the chunk entries need the frame layout on the device");
  const uint64_t chunks = rle_chunk_count(a.elements, a.chunk_elements);
  if (chunks == 0) return;
  rle_entries_kernel<<<warp_grid(chunks), 256, 0, stream>>>(static_cast<const uint8_t*>(a.in), a.elements, a.width,
                                                            a.chunk_elements, chunks, runs, stored, offsets, a.frame,
                                                            a.layout);
  CUDA_CHECK(cudaGetLastError());
}

std::size_t rle_frame_decode_temp_bytes(const format::ParsedFrame& f) { return carve_decode(nullptr, f).total; }

void decode_rle_frame(const format::ParsedFrame& f, const uint8_t* d_payload, void* d_out, void* d_temp,
                      std::size_t temp_bytes, cudaStream_t stream) {
  const format::FrameHeader& h = f.header;
  VLEC_REQUIRE(h.codec == Codec::rle || h.codec == Codec::rle_huffman || h.codec == Codec::raw,
               "decode_rle_frame takes rle, rle+huffman and raw frames, not ", to_string(h.codec));
  const uint64_t chunks = h.chunks();
  if (chunks == 0) return;
  const DecodeTemp t = carve_decode(d_temp, f);
  VLEC_REQUIRE(temp_bytes >= t.total, "temporary storage of ", temp_bytes, " bytes is below the ", t.total, " needed");
  std::vector<uint64_t> checksums(chunks), dec_offsets;
  std::vector<uint32_t> stored(chunks), runs(chunks), dec_stored;
  for (uint64_t c = 0; c < chunks; ++c) {
    checksums[c] = f.index[c].checksum;
    stored[c] = f.index[c].stored_bytes;
    runs[c] = f.index[c].aux;
  }
  // Pageable sources: each copy returns once its data is staged, so the vectors may go.
  CUDA_CHECK(cudaMemcpyAsync(t.offsets, f.offsets.data(), 8 * chunks, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(t.checksums, checksums.data(), 8 * chunks, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(t.stored, stored.data(), 4 * chunks, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(t.runs, runs.data(), 4 * chunks, cudaMemcpyHostToDevice, stream));
  const uint64_t payload_bytes = h.frame_bytes - h.header_area_bytes();
  RleDecodeArgs d;
  d.payload = d_payload;
  d.payload_bytes = payload_bytes;
  if (h.codec == Codec::rle_huffman) {
    dec_offsets.resize(chunks);
    dec_stored.resize(chunks);
    uint64_t at = 0;
    for (uint64_t c = 0; c < chunks; ++c) {
      dec_offsets[c] = at;
      dec_stored[c] = static_cast<uint32_t>(staged_size(f, c));
      at += align4(dec_stored[c]);
    }
    CUDA_CHECK(cudaMemcpyAsync(t.dec_offsets, dec_offsets.data(), 8 * chunks, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(t.dec_stored, dec_stored.data(), 4 * chunks, cudaMemcpyHostToDevice, stream));
    RleHuffmanTables tables = t.tables;
    upload_rle_huffman_tables(f, tables, stream);
    RleHuffmanPartsArgs p;
    p.payload = d_payload;
    p.payload_bytes = payload_bytes;
    p.offsets = t.offsets;
    p.stored = t.stored;
    p.runs = t.runs;
    p.staged = t.staged;
    p.staged_offsets = t.dec_offsets;
    p.chunks = chunks;
    p.elements = h.elements;
    p.chunk_elements = h.chunk_elements;
    p.width = h.width;
    p.tables = tables;
    p.status = t.part_status;
    decode_rle_huffman_parts(p, stream);
    d.payload = t.staged;
    d.payload_bytes = t.staged_bytes;
    d.raw_iff_no_runs = true;  // a staged chunk of exactly the raw size may hold runs
  }
  d.offsets = t.dec_offsets;
  d.stored_bytes = t.dec_stored;
  d.runs = t.runs;
  d.elements = h.elements;
  d.width = h.width;
  d.chunk_elements = h.chunk_elements;
  d.out = d_out;
  d.status = t.status;
  rle_decode(d, stream);
  rle_verify_kernel<<<warp_grid(chunks), 256, 0, stream>>>(d_payload, payload_bytes, t, chunks,
                                                           static_cast<const uint8_t*>(d_out), h.elements, h.width,
                                                           h.chunk_elements);
  CUDA_CHECK(cudaGetLastError());
}

const uint32_t* rle_frame_decode_status(const format::ParsedFrame& f, const void* d_temp) {
  return carve_decode(const_cast<void*>(d_temp), f).status;
}

void check_rle_frame_status(const format::ParsedFrame& f, const uint32_t* status) {
  for (uint64_t c = 0; c < f.header.chunks(); ++c) {
    SAFETY_CHECK(status[c] != kRleChecksum, ErrorCode::checksum_mismatch, "checksum mismatch in chunk ", c,
                 " of the frame at byte ", f.stream_offset, ": the stream is corrupt");
    SAFETY_CHECK(status[c] == kRleOk, ErrorCode::corrupt_stream, "chunk ", c, " of the frame at byte ",
                 f.stream_offset, ": ", rle_status_text(status[c]));
  }
}

}  // namespace vlec::cuda
