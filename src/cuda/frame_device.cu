// cuda/frame_device.cu: see frame_device.hpp. The sequence on the stream:
//   1. layout: where the index and the payload go (they depend on the
//      codebook's serialized size, known only on the device), codebook copy;
//   2. the chunk encoder: Huffman chunks place themselves by decoupled
//      look-back; rle chunks are placed by a scan of their sizes (rle_frame.cu);
//   3. decide: keep the coded frame, or fall back to a raw frame if coding
//      made it larger (the CPU backend's rule, docs/FORMAT.md §8), then in
//      the same block the fixed header and every padding byte;
//   4. raw copy (only for a raw frame): chunks copied and hashed;
//   5. header checksum: block sums in parallel, one warp folds them (and
//      writes device::compress's report).
// A frame of at most 64 chunks does 3-5 in one block (finish_small_kernel);
// one of at most 4,096 chunks has its look-back state zeroed by the layout
// kernel instead of two memsets. Launches, not work, bounded the encode of
// a wavelet frame's many groups.
#include <algorithm>
#include <vector>

#include "cuda/chunk_copy.cuh"
#include "cuda/cuda_check.hpp"
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

Temp carve(void* temp, uint64_t chunks, uint64_t blocks_per_chunk, std::size_t rle_bytes, std::size_t warp_slot_bytes,
           std::size_t* total) {
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

uint64_t chunks_of(uint64_t elements, uint32_t chunk_elements) { return (elements + chunk_elements - 1) / chunk_elements; }

__device__ uint64_t align8(uint64_t v) { return (v + 7) / 8 * 8; }

// The codebook section: none for rle (book.info is null), one for huffman,
// two for rle+huffman (book2: the lengths').
__global__ void layout_kernel(DeviceCodebookView book, DeviceCodebookView book2, uint64_t chunks, uint8_t* frame,
                              FrameState* st, bool raw, unsigned long long* zero_scan, unsigned int* zero_ticket) {
  // The look-back state of a frame of few chunks is zeroed here, not by two memsets.
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
// kernel of a large frame's sequence (spread over the grid), and the small
// frame's finish_small_kernel runs them all in one block (their grid-stride
// loops then cover everything with blockIdx 0 and gridDim 1).

// A raw frame: one warp per chunk copies and hashes it, and writes its index entry.
__device__ void raw_copy(const uint8_t* in, uint64_t bytes, uint64_t chunk_bytes, uint64_t chunks, uint8_t* frame,
                         const FrameState* st) {
  if (!st->raw) return;
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = uint64_t{gridDim.x} * blockDim.x / 32;
  for (uint64_t c = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; c < chunks; c += warps) {
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
__device__ void header_sums(const uint8_t* frame, const FrameState* st, unsigned long long* sums) {
  const uint64_t len = st->payload_offset - 8;
  if (len <= 240) return;
  const uint64_t blocks = (len - 1) / xxh3::kBlock;
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = uint64_t{gridDim.x} * blockDim.x / 32;
  const uint64_t* w64 = reinterpret_cast<const uint64_t*>(frame);
  for (uint64_t b = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; b < blocks; b += warps) {
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

// decide, then the fixed header, padding and payload tail: one block, one
// launch (they were three; a launch costs a few microseconds, and a wavelet
// frame's groups are a dozen frames). raw_copy follows: it writes only the
// raw payload and index entries, none of the bytes these write.
__global__ void decide_header_kernel(const unsigned long long* scan_status, const uint64_t* rle_total,
                                     uint64_t chunks, uint64_t raw_payload, FrameState* st, uint8_t* frame,
                                     uint8_t codec, uint8_t width, uint64_t elements, uint32_t chunk_elements) {
  if (threadIdx.x == 0) decide(scan_status, rle_total, chunks, raw_payload, st);
  __syncthreads();  // st as decided, for the whole block
  header(frame, st, codec, width, elements, chunk_elements, chunks, elements * width);
  payload_tail(frame, st, scan_status, rle_total, chunks);
}
__global__ void raw_copy_kernel(const uint8_t* in, uint64_t bytes, uint64_t chunk_bytes, uint64_t chunks,
                                uint8_t* frame, const FrameState* st) {
  raw_copy(in, bytes, chunk_bytes, chunks, frame, st);
}
__global__ void header_sums_kernel(const uint8_t* frame, const FrameState* st, unsigned long long* sums) {
  header_sums(frame, st, sums);
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

// The header checksum's fold, and the report (one launch fewer).
__global__ void header_fold_kernel(uint8_t* frame, const FrameState* st, const unsigned long long* sums,
                                   uint64_t* frame_bytes_out, ReportArgs r) {
  __shared__ unsigned long long s[kFoldStage];
  if (r.error && threadIdx.x == 0) report(r.bad, r.info[0], r.info[1], r.error);
  header_fold(frame, st, sums, frame_bytes_out, s);
}

// A small frame's whole finish in one block of 256 threads: six launches
// cost more than the work (a wavelet frame's groups are mostly a few
// chunks each, and their enqueue, not the GPU, bounded their encode).
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
__global__ void __launch_bounds__(256) finish_small_kernel(const FinishArgs a) {
  __shared__ unsigned long long s[kFoldStage];
  if (threadIdx.x == 0) decide(a.scan_status, a.rle_total, a.chunks, a.raw_payload, a.st);
  __syncthreads();
  if (a.chunks > 0) raw_copy(a.in, a.bytes, a.chunk_bytes, a.chunks, a.frame, a.st);
  header(a.frame, a.st, a.codec, a.width, a.elements, a.chunk_elements, a.chunks, a.bytes);
  payload_tail(a.frame, a.st, a.scan_status, a.rle_total, a.chunks);
  __syncthreads();  // every header byte is written before it is hashed
  header_sums(a.frame, a.st, a.block_sums);
  __syncthreads();
  header_fold(a.frame, a.st, a.block_sums, a.frame_bytes_out, s);
  if (a.error && threadIdx.x == 0) report(a.bad, a.info[0], a.info[1], a.error);
}

// Frames of at most this many chunks finish in one block.
constexpr uint64_t kSmallFrameChunks = 64;
constexpr uint64_t kZeroInLayoutChunks = 4096;

}  // namespace

std::size_t frame_encode_capacity(uint64_t elements, unsigned width, uint32_t chunk_elements) {
  constexpr std::size_t kLargestCodebook = 8 + 4096 / 8 + 4096 * 16 * 5 / 8;  // 65,536 symbols, 5-bit lengths
  const uint64_t chunks = chunks_of(elements, chunk_elements);
  return (format::kFixedHeaderBytes + 16 * chunks + 7) / 8 * 8 + 8 + (elements * width + 7) / 8 * 8 +
         2 * kLargestCodebook + 8;
}

namespace {

// Block sums per chunk: the Huffman encoder's chunk hashes need them; for rle
// (hashed by warps) they only hold the header's, at most one block per 64 chunks.
uint64_t blocks_per_chunk_of(Codec codec, uint32_t chunk_elements, unsigned width) {
  return codec == Codec::rle || codec == Codec::rle_huffman ? 1 : (uint64_t{chunk_elements} * width + 1023) / 1024;
}

// The warp encoder's slots (huffman frames coded by it; encode_warp.cu): at
// most 2 x kEncodeWarps chunks' raw bytes.
std::size_t warp_slot_bytes_of(Codec codec, EncodeStrategy strategy, uint64_t chunks, unsigned width,
                               uint32_t chunk_elements) {
  return codec == Codec::huffman && strategy == EncodeStrategy::warp
             ? 4 * encode_warp_slot_count(chunks) * encode_warp_slot_words(chunk_elements, width)
             : 0;
}

std::size_t rle_temp_of(Codec codec, uint64_t elements, unsigned width, uint32_t chunk_elements, RleStrategy s) {
  if (codec == Codec::rle) return rle_frame_encode_temp_bytes(elements, width, chunk_elements, s);
  if (codec == Codec::rle_huffman) return rle_huffman_encode_temp_bytes(elements, width, chunk_elements, s);
  return 0;
}

}  // namespace

std::size_t frame_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements, Codec codec,
                                    RleStrategy rle_strategy, EncodeStrategy strategy) {
  std::size_t total = 0;
  const uint64_t chunks = chunks_of(elements, chunk_elements);
  carve(nullptr, chunks, blocks_per_chunk_of(codec, chunk_elements, width),
        rle_temp_of(codec, elements, width, chunk_elements, rle_strategy),
        warp_slot_bytes_of(codec, strategy, chunks, width, chunk_elements), &total);
  return total;
}

FrameEncodeBooks encode_frame_device(const FrameEncodeArgs& a, void* temp, std::size_t temp_bytes,
                                     cudaStream_t stream) {
  const unsigned width = static_cast<unsigned>(dtype_bytes(a.dtype));
  VLEC_REQUIRE(a.chunk_elements >= format::kChunkGranule && a.chunk_elements % format::kChunkGranule == 0 &&
                   a.chunk_elements <= format::kMaxChunkElements,
               "invalid chunk size ", a.chunk_elements);
  const Codec codec = a.raw ? Codec::raw : a.codec;
  VLEC_REQUIRE(codec != Codec::huffman || width <= 4, "GPU Huffman encoding takes u8, u16 or u32 elements");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(a.in) % 16 == 0 && reinterpret_cast<uintptr_t>(a.frame) % 8 == 0,
               "device buffers must be 16-byte (input) and 8-byte (frame) aligned");
  const uint64_t chunks = chunks_of(a.elements, a.chunk_elements);
  VLEC_REQUIRE(a.frame_capacity >= frame_encode_capacity(a.elements, width, a.chunk_elements),
               "frame buffer of ", a.frame_capacity, " bytes is below the ",
               frame_encode_capacity(a.elements, width, a.chunk_elements), " needed while encoding");
  const uint64_t blocks_per_chunk = blocks_per_chunk_of(codec, a.chunk_elements, width);
  std::size_t need = 0;
  const Temp t = carve(temp, chunks, blocks_per_chunk,
                       rle_temp_of(codec, a.elements, width, a.chunk_elements, a.rle_strategy),
                       warp_slot_bytes_of(codec, a.strategy, chunks, width, a.chunk_elements), &need);
  VLEC_REQUIRE(temp_bytes >= need, "temporary storage of ", temp_bytes, " bytes is below the ", need, " needed");
  const bool small = chunks <= kSmallFrameChunks;
  // The look-back state of up to kZeroInLayoutChunks chunks (32 KiB) is
  // zeroed by layout_kernel's block, not by two memsets.
  const bool zero_in_layout = chunks <= kZeroInLayoutChunks;
  if (!zero_in_layout) {
    CUDA_CHECK(cudaMemsetAsync(t.ticket, 0, sizeof(unsigned int), stream));
    CUDA_CHECK(cudaMemsetAsync(t.scan_status, 0, 8 * std::max<uint64_t>(chunks, 1), stream));
  }
  RleFrameEncodeArgs r;
  r.in = a.in;
  r.elements = a.elements;
  r.width = width;
  r.chunk_elements = a.chunk_elements;
  r.strategy = a.rle_strategy;
  r.frame = a.frame;
  r.layout = &t.state->index_offset;  // index_offset, payload_offset are adjacent
  FrameEncodeBooks used;
  DeviceCodebookView book, book2;
  if (codec == Codec::huffman) {
    book = a.book;
    used.info[0] = a.book.info;
  } else if (codec == Codec::rle_huffman) {
    const RleHuffmanBooks b = rle_huffman_prepare(r, a.max_code_length, t.rle, t.rle_bytes, stream);
    book = {b.entries[0], b.table_size[0], b.serialized[0], b.info[0]};
    book2 = {b.entries[1], b.table_size[1], b.serialized[1], b.info[1]};
    used.info[0] = b.info[0], used.info[1] = b.info[1];
  }
  layout_kernel<<<1, 256, 0, stream>>>(book, book2, chunks, a.frame, t.state, a.raw,
                                       zero_in_layout ? t.scan_status : nullptr, zero_in_layout ? t.ticket : nullptr);
  CUDA_CHECK(cudaGetLastError());
  const uint64_t* rle_total = nullptr;
  if (codec == Codec::rle) {
    // No codebook: the index and the payload are where a raw frame has them.
    r.index_offset = format::kFixedHeaderBytes;
    r.payload_offset = (format::kFixedHeaderBytes + 16 * chunks + 7) / 8 * 8 + 8;
    rle_total = encode_rle_chunks(r, t.rle, t.rle_bytes, stream);
  } else if (codec == Codec::rle_huffman) {
    rle_total = encode_rle_huffman_chunks(r, t.rle, t.rle_bytes, stream);
  } else if (codec == Codec::huffman && chunks > 0) {
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
    e.blocks_per_chunk = blocks_per_chunk;
    e.chunk_status = t.chunk_status;
    e.checksums = t.checksums;
    e.given_checksums =
        a.strategy == EncodeStrategy::lanes || a.strategy == EncodeStrategy::warp ? a.chunk_checksums : nullptr;
    e.warp_slots = t.warp_slots;
    launch_huffman_encode(e, a.strategy, stream);
  }
  const uint64_t raw_payload = (a.elements * width + 7) / 8 * 8;
  const uint64_t chunk_bytes = uint64_t{a.chunk_elements} * width;
  if (small) {
    FinishArgs f;
    f.scan_status = t.scan_status;
    f.rle_total = rle_total;
    f.chunks = chunks;
    f.raw_payload = raw_payload;
    f.bytes = a.elements * width;
    f.chunk_bytes = chunk_bytes;
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
    finish_small_kernel<<<1, 256, 0, stream>>>(f);
    CUDA_CHECK(cudaGetLastError());
    return used;
  }
  decide_header_kernel<<<1, 256, 0, stream>>>(t.scan_status, rle_total, chunks, raw_payload, t.state, a.frame,
                                               static_cast<uint8_t>(codec), static_cast<uint8_t>(width), a.elements,
                                               a.chunk_elements);
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (chunks > 0) {
    const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>((chunks + 7) / 8, uint64_t(sms) * 8));
    raw_copy_kernel<<<blocks, 256, 0, stream>>>(static_cast<const uint8_t*>(a.in), a.elements * width, chunk_bytes,
                                                chunks, a.frame, t.state);
  }
  header_sums_kernel<<<static_cast<unsigned>(sms) * 4, 256, 0, stream>>>(a.frame, t.state, t.block_sums);
  header_fold_kernel<<<1, 256, 0, stream>>>(a.frame, t.state, t.block_sums, a.frame_bytes,
                                            ReportArgs{a.bad, {used.info[0], used.info[1]}, a.error});
  CUDA_CHECK(cudaGetLastError());
  return used;
}

uint64_t frame_encode_status(const FrameEncodeArgs& a, const void* temp) {
  const uint64_t chunks = chunks_of(a.elements, a.chunk_elements);
  if (a.raw || a.codec != Codec::huffman || chunks == 0) return 0;
  const unsigned width = static_cast<unsigned>(dtype_bytes(a.dtype));
  const Temp t = carve(const_cast<void*>(temp), chunks, blocks_per_chunk_of(Codec::huffman, a.chunk_elements, width),
                       0, 0, nullptr);
  std::vector<uint32_t> status(chunks);
  CUDA_CHECK(cudaMemcpy(status.data(), t.chunk_status, 4 * chunks, cudaMemcpyDeviceToHost));
  for (uint64_t c = 0; c < chunks; ++c)
    if (status[c] != kEncodeOk) return c + 1;
  return 0;
}

}  // namespace vlec::cuda
