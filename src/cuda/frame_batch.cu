// cuda/frame_batch.cu: many Huffman frames written at once (frame_device.hpp,
// encode_frames_device), each byte for byte what encode_frame_device writes
// for it alone.
//
// Why: a frame of a dozen chunks is a few microseconds of GPU work but five
// to ten launches (layout, three chunk encoders for K = 4, 2, 1, the
// finishing steps), and the wavelet writer codes a dozen or more such
// frames a call. Their enqueue, even from a host thread per side stream, took
// longer than the symbols kernel they ran behind (0.27 ms against 0.24 on
// the H200 at 8192^2), so the GPU waited for the host. Here the frames'
// descriptors go up in one copy and every step is one launch for all of
// them: a layout block a frame, the warp encoder's batch (one grid per
// symbol width and table, a launch per K: encode_warp.cu), and a finishing
// block a frame (decide, raw fallback, header, header checksum). Each frame
// keeps its own temp, look-back state and tickets, so frames never wait on
// each other's chunks.
#include <cstring>
#include <vector>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_steps.cuh"
#include "cuda/host_staging.hpp"

namespace vlec::cuda {

namespace {

// One frame's layout and finish (the warp encoder's part is a
// WarpEncodeBatchFrame of its own); the layout's frame, state and chunk
// count are the finish's.
struct FrameBatchEntry {
  DeviceCodebookView book;
  unsigned long long* scan_status;  // zeroed by the layout block, with the ticket
  unsigned int* ticket;
  FinishArgs finish;
};

__global__ void __launch_bounds__(256) batch_layout_kernel(const FrameBatchEntry* entries) {
  const FrameBatchEntry& e = entries[blockIdx.x];
  lay_out(e.book, DeviceCodebookView{}, e.finish.chunks, e.finish.frame, e.finish.st, false, e.scan_status, e.ticket);
}

__global__ void __launch_bounds__(256) batch_finish_kernel(const FrameBatchEntry* entries) {
  __shared__ unsigned long long s[kFoldStage];
  finish_in_one_block(entries[blockIdx.x].finish, s);
}

std::size_t entries_bytes(std::size_t frames) { return (frames * sizeof(FrameBatchEntry) + 15) / 16 * 16; }

}  // namespace

std::size_t frame_batch_bytes(std::size_t frames) {
  return entries_bytes(frames) + frames * sizeof(WarpEncodeBatchFrame);
}

void encode_frames_device(const std::vector<FrameBatchItem>& items, void* d_batch, std::size_t batch_bytes,
                          HostWrites& writes, cudaStream_t stream) {
  const std::size_t n = items.size();
  if (n == 0) return;
  VLEC_REQUIRE(n <= INT32_MAX && batch_bytes >= frame_batch_bytes(n) && reinterpret_cast<uintptr_t>(d_batch) % 16 == 0,
               "a frame batch's descriptors need ", frame_batch_bytes(n), " bytes, 16-byte aligned");
  std::vector<FrameBatchEntry> entries(n);
  std::vector<HuffmanEncodeArgs> coded;  // the frames with chunks
  for (std::size_t i = 0; i < n; ++i) {
    const FrameEncodeArgs& a = items[i].args;
    const unsigned width = check_frame_args(a);
    VLEC_REQUIRE(!a.raw && a.codec == Codec::huffman && a.strategy == EncodeStrategy::warp && width <= 2,
                 "a frame batch takes Huffman frames of u8 or u16 elements, coded by the warp encoder");
    VLEC_REQUIRE(a.book.encode_entry && a.book.serialized && a.book.info, "a frame in a batch needs its codebook");
    const uint64_t chunks = chunks_of(a.elements, a.chunk_elements);
    std::size_t need = 0;
    const Temp t = carve(items[i].temp, chunks, blocks_per_chunk_of(Codec::huffman, a.chunk_elements, width), 0,
                         warp_slot_bytes_of(Codec::huffman, EncodeStrategy::warp, chunks, width, a.chunk_elements),
                         &need);
    VLEC_REQUIRE(items[i].temp_bytes >= need, "temporary storage of ", items[i].temp_bytes, " bytes is below the ",
                 need, " needed");
    FrameEncodeBooks used;
    used.info[0] = a.book.info;
    entries[i] = {a.book, t.scan_status, t.ticket, finish_args_of(a, t, Codec::huffman, width, chunks, nullptr, used)};
    if (chunks > 0) coded.push_back(huffman_args_of(a, t, width, chunks));
  }
  const WarpEncodeBatch batch = plan_encode_warp_batch(coded);
  std::vector<uint8_t> host(frame_batch_bytes(n));
  std::memcpy(host.data(), entries.data(), n * sizeof(FrameBatchEntry));
  std::memcpy(host.data() + entries_bytes(n), batch.frames.data(), batch.frames.size() * sizeof(WarpEncodeBatchFrame));
  writes.add_bytes(d_batch, host.data(), host.size(), stream);
  const auto* d_entries = static_cast<const FrameBatchEntry*>(d_batch);
  batch_layout_kernel<<<static_cast<unsigned>(n), 256, 0, stream>>>(d_entries);
  CUDA_CHECK(cudaGetLastError());
  launch_encode_warp_batch(
      batch, reinterpret_cast<const WarpEncodeBatchFrame*>(static_cast<uint8_t*>(d_batch) + entries_bytes(n)), stream);
  batch_finish_kernel<<<static_cast<unsigned>(n), 256, 0, stream>>>(d_entries);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
