// cuda/frame_steps.cuh: the steps of writing a frame on the GPU around its
// chunk encoder (frame_device.cu gives their order), as device functions,
// and the temp they share. frame_device.cu launches them for one frame (a
// kernel a step, or a small frame's finish in one block), frame_batch.cu for
// many frames at once (a block a frame). The grid-stride steps take their
// block and the grid's size, so that one block can run them for its frame.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/safety.hpp"
#include "cuda/chunk_copy.cuh"
#include "cuda/frame_device.hpp"
#include "cuda/rle_frame.hpp"
#include "cuda/xxh3_warp.cuh"
#include "format/frame.hpp"

namespace vlec::cuda {
namespace {

struct FrameState {
  uint64_t index_offset;
  uint64_t payload_offset;
  uint64_t frame_bytes;
  uint32_t raw;             // 1: the frame is written raw
  uint32_t codebooks_bytes;
};

struct Temp {
  FrameState* state;
  unsigned long long* scan_status;
  unsigned int* ticket;
  uint32_t* chunk_status;
  uint64_t* checksums;
  unsigned long long* block_sums;
  uint64_t blocks_per_chunk;
  uint8_t* rle;  // the rle chunk encoder's temporaries (codec rle only)
  std::size_t rle_bytes;
  uint32_t* warp_slots;  // the warp Huffman encoder's scratch slots (codec huffman only)
};

constexpr std::size_t kAlign = 256;

inline Temp carve(void* temp, uint64_t chunks, uint64_t blocks_per_chunk, std::size_t rle_bytes,
                  std::size_t warp_slot_bytes, std::size_t* total) {
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += (bytes + kAlign - 1) / kAlign * kAlign;
    return static_cast<uint8_t*>(temp) + here;
  };
  Temp t;
  t.state = reinterpret_cast<FrameState*>(take(sizeof(FrameState)));
  t.ticket = reinterpret_cast<unsigned int*>(take(sizeof(unsigned int)));
  t.scan_status = reinterpret_cast<unsigned long long*>(take(8 * std::max<uint64_t>(chunks, 1)));
  t.chunk_status = reinterpret_cast<uint32_t*>(take(4 * std::max<uint64_t>(chunks, 1)));
  t.checksums = reinterpret_cast<uint64_t*>(take(8 * std::max<uint64_t>(chunks, 1)));
  // Block sums: the chunks' during encoding, the header's afterwards (the
  // header is at most 1/8 of the input, plus two codebooks of at most 41 KiB).
  t.block_sums = reinterpret_cast<unsigned long long*>(take(64 * (chunks * blocks_per_chunk + 128)));
  t.blocks_per_chunk = blocks_per_chunk;
  t.rle_bytes = rle_bytes;
  t.rle = rle_bytes ? take(rle_bytes) : nullptr;
  t.warp_slots = warp_slot_bytes ? reinterpret_cast<uint32_t*>(take(warp_slot_bytes)) : nullptr;
  if (total) *total = at;
  return t;
}

inline uint64_t chunks_of(uint64_t elements, uint32_t chunk_elements) {
  return (elements + chunk_elements - 1) / chunk_elements;
}

__device__ uint64_t align8(uint64_t v) { return (v + 7) / 8 * 8; }

// Layout (one block): the index's and the payload's offsets, and the
// codebook section: none for rle (book.info is null), one for huffman, two
// for rle+huffman (book2: the lengths'). The look-back state is zeroed here
// where the caller asks (zero_scan, zero_ticket), not by two memsets.
__device__ void lay_out(const DeviceCodebookView& book, const DeviceCodebookView& book2, uint64_t chunks,
                        uint8_t* frame, FrameState* st, bool raw, unsigned long long* zero_scan,
                        unsigned int* zero_ticket) {
  if (zero_scan) {
    for (uint64_t i = threadIdx.x; i < max(chunks, uint64_t{1}); i += blockDim.x) zero_scan[i] = 0;
    if (threadIdx.x == 0) *zero_ticket = 0;
  }
  // No codebook (a fixed limit too short for the alphabet): write raw.
  raw = raw || (book.info && book.info[0] == 0) || (book2.info && book2.info[0] == 0);
  const uint32_t cb1 = raw || !book.info ? 0 : book.info[0];
  const uint32_t cb = cb1 + (raw || !book2.info ? 0 : book2.info[0]);
  if (threadIdx.x == 0) {
    st->codebooks_bytes = cb;
    st->index_offset = format::kFixedHeaderBytes + cb;
    st->payload_offset = align8(format::kFixedHeaderBytes + cb + 16 * chunks) + 8;
    st->raw = raw;
  }
  for (uint32_t i = threadIdx.x; i < cb; i += blockDim.x)
    frame[format::kFixedHeaderBytes + i] = i < cb1 ? book.serialized[i] : book2.serialized[i - cb1];
}

// Bytes the coded chunks take in the payload (Σ align(stored_bytes, 4)): the
// Huffman encoder's last inclusive look-back prefix, or the rle encoder's total.
__device__ uint64_t payload_used(const unsigned long long* scan_status, const uint64_t* rle_total, uint64_t chunks) {
  if (rle_total) return *rle_total;
  return chunks ? scan_status[chunks - 1] >> 2 : 0;
}

// Keep the coded frame unless it is larger than the raw one (one thread).
__device__ void decide(const unsigned long long* scan_status, const uint64_t* rle_total, uint64_t chunks,
                       uint64_t raw_payload, FrameState* st) {
  const uint64_t payload = align8(payload_used(scan_status, rle_total, chunks));
  const uint64_t coded = st->payload_offset + payload;
  const uint64_t raw = align8(format::kFixedHeaderBytes + 16 * chunks) + 8 + raw_payload;
  if (st->raw || coded > raw) {
    st->raw = 1;
    st->codebooks_bytes = 0;
    st->index_offset = format::kFixedHeaderBytes;
    st->payload_offset = align8(format::kFixedHeaderBytes + 16 * chunks) + 8;
    st->frame_bytes = raw;
  } else {
    st->frame_bytes = coded;
  }
}

// The steps after the chunk encoder, as device functions: each is one
// kernel of a large frame's sequence (spread over the grid), and
// finish_in_one_block runs them all in one block (their grid-stride loops
// then cover everything with block 0 of a grid of 1).

// A raw frame: one warp per chunk copies and hashes it, and writes its index entry.
__device__ void raw_copy(const uint8_t* in, uint64_t bytes, uint64_t chunk_bytes, uint64_t chunks, uint8_t* frame,
                         const FrameState* st, uint64_t block, uint64_t grid_blocks) {
  if (!st->raw) return;
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = grid_blocks * blockDim.x / 32;
  for (uint64_t c = (block * blockDim.x + threadIdx.x) / 32; c < chunks; c += warps) {
    const uint64_t n = min(chunk_bytes, bytes - c * chunk_bytes);
    const uint8_t* src = in + c * chunk_bytes;
    uint8_t* dst = frame + st->payload_offset + c * chunk_bytes;
    warp_copy_chunk_padded(src, dst, n, lane);
    const uint64_t hash = warp_hash(src, n, lane);
    if (lane == 0) {
      uint32_t* e = reinterpret_cast<uint32_t*>(frame + st->index_offset + 16 * c);
      e[0] = static_cast<uint32_t>(n);
      e[1] = 0;
      e[2] = static_cast<uint32_t>(hash);
      e[3] = static_cast<uint32_t>(hash >> 32);
    }
  }
}

// The fixed header and all padding; codec and width from the host.
__device__ void header(uint8_t* frame, const FrameState* st, uint8_t codec, uint8_t width, uint64_t elements,
                       uint32_t chunk_elements, uint64_t chunks, uint64_t payload_used) {
  const uint64_t index_end = st->index_offset + 16 * chunks;
  for (uint64_t i = index_end + threadIdx.x; i < st->payload_offset - 8; i += blockDim.x) frame[i] = 0;
  if (st->raw)  // a coded frame's payload tail is zeroed by payload_tail_kernel
    for (uint64_t i = st->payload_offset + payload_used + threadIdx.x; i < st->frame_bytes; i += blockDim.x)
      frame[i] = 0;
  if (threadIdx.x == 0) {
    uint32_t* h = reinterpret_cast<uint32_t*>(frame);
    h[0] = format::kMagic;
    frame[4] = format::kFormatMajor;
    frame[5] = format::kFormatMinor;
    frame[6] = st->raw ? static_cast<uint8_t>(Codec::raw) : codec;
    frame[7] = width;
    h[2] = static_cast<uint32_t>(elements), h[3] = static_cast<uint32_t>(elements >> 32);
    h[4] = chunk_elements;
    h[5] = st->codebooks_bytes;
    h[6] = static_cast<uint32_t>(st->frame_bytes), h[7] = static_cast<uint32_t>(st->frame_bytes >> 32);
    h[8] = h[9] = h[10] = h[11] = 0;  // required, optional features, reserved
  }
}

// The coded frame's payload padding: after the last chunk, up to a multiple of 8.
__device__ void payload_tail(uint8_t* frame, const FrameState* st, const unsigned long long* scan_status,
                             const uint64_t* rle_total, uint64_t chunks) {
  if (st->raw || chunks == 0) return;
  const uint64_t used = payload_used(scan_status, rle_total, chunks);
  for (uint64_t i = st->payload_offset + used + threadIdx.x; i < st->frame_bytes; i += blockDim.x) frame[i] = 0;
}

// Header checksum, part 1: the sums of every whole 1 KiB block, one warp each.
__device__ void header_sums(const uint8_t* frame, const FrameState* st, unsigned long long* sums, uint64_t block,
                            uint64_t grid_blocks) {
  const uint64_t len = st->payload_offset - 8;
  if (len <= 240) return;
  const uint64_t blocks = (len - 1) / xxh3::kBlock;
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = grid_blocks * blockDim.x / 32;
  const uint64_t* w64 = reinterpret_cast<const uint64_t*>(frame);
  for (uint64_t b = (block * blockDim.x + threadIdx.x) / 32; b < blocks; b += warps) {
    const uint64_t sum = warp_block_sum<false>(w64, b, lane);
    if (lane < 8) sums[8 * b + lane] = sum;
  }
}

// Header checksum, part 2 (one block): fold the block sums in order (staged
// through shared memory, so the sequential fold does not wait on global
// loads), finish, store; then publish the frame's size.
constexpr unsigned kFoldStage = 2048;  // words per staged piece
__device__ void header_fold(uint8_t* frame, const FrameState* st, const unsigned long long* sums,
                            uint64_t* frame_bytes_out, unsigned long long* s) {
  constexpr unsigned kStage = kFoldStage;
  const unsigned lane = threadIdx.x % 32;
  const uint64_t len = st->payload_offset - 8;
  const uint64_t words = len > 240 ? 8 * ((len - 1) / xxh3::kBlock) : 0;
  uint64_t acc = 0;
  if (threadIdx.x < 8) {
    uint64_t init[8];
    xxh3::init_acc(init);
    for (unsigned i = 0; i < 8; ++i)
      if (threadIdx.x == i) acc = init[i];
  }
  for (uint64_t piece = 0; piece < words; piece += kStage) {
    const uint64_t n = min(uint64_t{kStage}, words - piece);
    __syncthreads();
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) s[i] = sums[piece + i];
    __syncthreads();
    if (threadIdx.x < 8)
      for (uint64_t b = 0; b < n / 8; ++b) acc = xxh3::scramble(acc + s[8 * b + threadIdx.x], threadIdx.x);
  }
  if (threadIdx.x >= 32) return;
  const uint64_t hash = len <= 240 ? (lane == 0 ? xxh3::hash64_short(frame, len) : 0) : finish_long_warp(acc, frame, len, lane);
  if (lane == 0) {
    uint32_t* c = reinterpret_cast<uint32_t*>(frame + len);
    c[0] = static_cast<uint32_t>(hash);
    c[1] = static_cast<uint32_t>(hash >> 32);
    *frame_bytes_out = st->frame_bytes;
  }
}

// device::compress's report (FrameEncodeArgs::error), one thread.
__device__ void report(const uint64_t* bad, const uint32_t* info, const uint32_t* info2, uint64_t* error) {
  const uint64_t first_bad = bad ? *bad : ~0ull;  // null: no histogram pass (codecs without a codebook of the input)
  *error = first_bad != ~0ull ? first_bad : (info && info[0] == 0) || (info2 && info2[0] == 0) ? ~1ull : ~0ull;
}

struct ReportArgs {
  const uint64_t* bad;
  const uint32_t* info[2];
  uint64_t* error;  // null: no report
};

// A frame's whole finish in one block of 256 threads (a small frame's, or
// each frame's of a batch): decide, raw copy, header and padding, header
// checksum, report. `s`: kFoldStage words of shared memory.
struct FinishArgs {
  const unsigned long long* scan_status;
  const uint64_t* rle_total;
  uint64_t chunks, raw_payload, bytes, chunk_bytes, elements;
  const uint8_t* in;
  uint8_t* frame;
  FrameState* st;
  unsigned long long* block_sums;
  uint64_t* frame_bytes_out;
  uint32_t chunk_elements;
  uint8_t codec, width;
  const uint64_t* bad;  // the report, if error is set
  const uint32_t* info[2];
  uint64_t* error;
};
__device__ void finish_in_one_block(const FinishArgs& a, unsigned long long* s) {
  if (threadIdx.x == 0) decide(a.scan_status, a.rle_total, a.chunks, a.raw_payload, a.st);
  __syncthreads();
  if (a.chunks > 0) raw_copy(a.in, a.bytes, a.chunk_bytes, a.chunks, a.frame, a.st, 0, 1);
  header(a.frame, a.st, a.codec, a.width, a.elements, a.chunk_elements, a.chunks, a.bytes);
  payload_tail(a.frame, a.st, a.scan_status, a.rle_total, a.chunks);
  __syncthreads();  // every header byte is written before it is hashed
  header_sums(a.frame, a.st, a.block_sums, 0, 1);
  __syncthreads();
  header_fold(a.frame, a.st, a.block_sums, a.frame_bytes_out, s);
  if (a.error && threadIdx.x == 0) report(a.bad, a.info[0], a.info[1], a.error);
}

// Block sums per chunk: the Huffman encoder's chunk hashes need them; for rle
// (hashed by warps) they only hold the header's, at most one block per 64 chunks.
inline uint64_t blocks_per_chunk_of(Codec codec, uint32_t chunk_elements, unsigned width) {
  return codec == Codec::rle || codec == Codec::rle_huffman ? 1 : (uint64_t{chunk_elements} * width + 1023) / 1024;
}

// The warp encoder's slots (huffman frames coded by it; encode_warp.cu): at
// most 2 x kEncodeWarps chunks' raw bytes.
inline std::size_t warp_slot_bytes_of(Codec codec, EncodeStrategy strategy, uint64_t chunks, unsigned width,
                                      uint32_t chunk_elements) {
  return codec == Codec::huffman && strategy == EncodeStrategy::warp
             ? 4 * encode_warp_slot_count(chunks) * encode_warp_slot_words(chunk_elements, width)
             : 0;
}

inline std::size_t rle_temp_of(Codec codec, uint64_t elements, unsigned width, uint32_t chunk_elements,
                               RleStrategy s) {
  if (codec == Codec::rle) return rle_frame_encode_temp_bytes(elements, width, chunk_elements, s);
  if (codec == Codec::rle_huffman) return rle_huffman_encode_temp_bytes(elements, width, chunk_elements, s);
  return 0;
}

// The checks every frame's arguments pass before anything is enqueued; the
// element width.
inline unsigned check_frame_args(const FrameEncodeArgs& a) {
  const unsigned width = static_cast<unsigned>(dtype_bytes(a.dtype));
  VLEC_REQUIRE(a.chunk_elements >= format::kChunkGranule && a.chunk_elements % format::kChunkGranule == 0 &&
                   a.chunk_elements <= format::kMaxChunkElements,
               "invalid chunk size ", a.chunk_elements);
  const Codec codec = a.raw ? Codec::raw : a.codec;
  VLEC_REQUIRE(codec != Codec::huffman || width <= 4, "GPU Huffman encoding takes u8, u16 or u32 elements");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(a.in) % 16 == 0 && reinterpret_cast<uintptr_t>(a.frame) % 8 == 0,
               "device buffers must be 16-byte (input) and 8-byte (frame) aligned");
  VLEC_REQUIRE(a.frame_capacity >= frame_encode_capacity(a.elements, width, a.chunk_elements),
               "frame buffer of ", a.frame_capacity, " bytes is below the ",
               frame_encode_capacity(a.elements, width, a.chunk_elements), " needed while encoding");
  return width;
}

// A Huffman frame's chunk encoder arguments (its codebook in a.book).
inline HuffmanEncodeArgs huffman_args_of(const FrameEncodeArgs& a, const Temp& t, unsigned width, uint64_t chunks) {
  HuffmanEncodeArgs e{};
  e.in = a.in;
  e.elements = a.elements;
  e.width = width;
  e.chunk_elements = a.chunk_elements;
  e.chunk_count = chunks;
  e.encode_entry = a.book.encode_entry;
  e.table_size = a.book.table_size;
  e.max_length = a.book.info + 1;
  e.alphabet_bound = a.book.info + 2;
  e.frame = a.frame;
  e.layout = &t.state->index_offset;  // index_offset, payload_offset are adjacent
  e.scan = {t.scan_status, t.ticket};
  e.block_sums = t.block_sums;
  e.blocks_per_chunk = t.blocks_per_chunk;
  e.chunk_status = t.chunk_status;
  e.checksums = t.checksums;
  e.given_checksums =
      a.strategy == EncodeStrategy::lanes || a.strategy == EncodeStrategy::warp ? a.chunk_checksums : nullptr;
  e.warp_slots = t.warp_slots;
  return e;
}

// finish_in_one_block's arguments for a frame (rle_total: the rle encoders'
// payload size; `used`: the codebooks the frame was coded with).
inline FinishArgs finish_args_of(const FrameEncodeArgs& a, const Temp& t, Codec codec, unsigned width,
                                 uint64_t chunks, const uint64_t* rle_total, const FrameEncodeBooks& used) {
  FinishArgs f;
  f.scan_status = t.scan_status;
  f.rle_total = rle_total;
  f.chunks = chunks;
  f.raw_payload = (a.elements * width + 7) / 8 * 8;
  f.bytes = a.elements * width;
  f.chunk_bytes = uint64_t{a.chunk_elements} * width;
  f.elements = a.elements;
  f.in = static_cast<const uint8_t*>(a.in);
  f.frame = a.frame;
  f.st = t.state;
  f.block_sums = t.block_sums;
  f.frame_bytes_out = a.frame_bytes;
  f.chunk_elements = a.chunk_elements;
  f.codec = static_cast<uint8_t>(codec);
  f.width = static_cast<uint8_t>(width);
  f.bad = a.bad;
  f.info[0] = used.info[0];
  f.info[1] = used.info[1];
  f.error = a.error;
  return f;
}

}  // namespace
}  // namespace vlec::cuda
