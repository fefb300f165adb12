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

#include "cuda/cuda_check.hpp"
#include "cuda/frame_steps.cuh"

namespace vlec::cuda {

namespace {

// The codebook section: none for rle (book.info is null), one for huffman,
// two for rle+huffman (book2: the lengths').
__global__ void layout_kernel(DeviceCodebookView book, DeviceCodebookView book2, uint64_t chunks, uint8_t* frame,
                              FrameState* st, bool raw, unsigned long long* zero_scan, unsigned int* zero_ticket) {
  lay_out(book, book2, chunks, frame, st, raw, zero_scan, zero_ticket);
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
  raw_copy(in, bytes, chunk_bytes, chunks, frame, st, blockIdx.x, gridDim.x);
}
__global__ void header_sums_kernel(const uint8_t* frame, const FrameState* st, unsigned long long* sums) {
  header_sums(frame, st, sums, blockIdx.x, gridDim.x);
}

// The header checksum's fold, and the report (one launch fewer).
__global__ void header_fold_kernel(uint8_t* frame, const FrameState* st, const unsigned long long* sums,
                                   uint64_t* frame_bytes_out, ReportArgs r) {
  __shared__ unsigned long long s[kFoldStage];
  if (r.error && threadIdx.x == 0) report(r.bad, r.info[0], r.info[1], r.error);
  header_fold(frame, st, sums, frame_bytes_out, s);
}

// A small frame's whole finish in one block: six launches cost more than the
// work (a wavelet frame's groups are mostly a few chunks each, and their
// enqueue, not the GPU, bounded their encode).
__global__ void __launch_bounds__(256) finish_small_kernel(const FinishArgs a) {
  __shared__ unsigned long long s[kFoldStage];
  finish_in_one_block(a, s);
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
  const unsigned width = check_frame_args(a);
  const Codec codec = a.raw ? Codec::raw : a.codec;
  const uint64_t chunks = chunks_of(a.elements, a.chunk_elements);
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
    HuffmanEncodeArgs e = huffman_args_of(a, t, width, chunks);
    launch_huffman_encode(e, a.strategy, stream);
  }
  const uint64_t raw_payload = (a.elements * width + 7) / 8 * 8;
  const uint64_t chunk_bytes = uint64_t{a.chunk_elements} * width;
  if (small) {
    const FinishArgs f = finish_args_of(a, t, codec, width, chunks, rle_total, used);
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
