// cuda/encode_warp_batch.cu: the warp encoder over many frames in one grid
// (WarpEncodeBatch, huffman_encode.hpp): one launch for all of them, where
// the one-frame kernel takes three a frame (one per K). A block finds its
// frame, then runs the one-frame kernel's code (encode_warp.cuh) for the
// frame's symbol width, table and K: one kernel holds all nine, so frames of
// different K run side by side instead of one launch after another.
#include <algorithm>
#include <vector>

#include "common/safety.hpp"
#include "cuda/encode_warp.cuh"
#include "cuda/launch_cache.hpp"

namespace vlec::cuda {

namespace {

// A frame's chunks with the kernel code for its K (known on the device:
// its codebook's longest code).
template <typename Sym, bool kShared>
__device__ __forceinline__ void encode_warp_frame_any_k(const HuffmanEncodeArgs& a, uint32_t block,
                                                        uint32_t blocks) {
  switch (huffman::symbols_per_step(*a.max_length)) {
    case 4: return encode_warp_frame<Sym, 4, kShared>(a, block, blocks);
    case 2: return encode_warp_frame<Sym, 2, kShared>(a, block, blocks);
    default: return encode_warp_frame<Sym, 1, kShared>(a, block, blocks);
  }
}

// Several frames in one grid (WarpEncodeBatch): a block finds its frame by
// the frames' first blocks, then codes that frame's chunks as if the grid
// were the frame's alone. Each frame keeps its own tickets and look-back
// state, so no frame waits on another's chunks.
__global__ void __launch_bounds__(kWarps * 32, 4)
    encode_warp_batch_kernel(const WarpEncodeBatchFrame* frames, uint32_t count) {
  __shared__ uint32_t s_frame;
  if (threadIdx.x == 0) {
    uint32_t lo = 0, hi = count;  // the last frame whose first block is at most this block
    while (hi - lo > 1) {
      const uint32_t mid = (lo + hi) / 2;
      if (frames[mid].first_block <= blockIdx.x) lo = mid; else hi = mid;
    }
    s_frame = lo;
  }
  __syncthreads();
  const WarpEncodeBatchFrame& f = frames[s_frame];
  const HuffmanEncodeArgs a = f.args;
  const uint32_t block = static_cast<uint32_t>(blockIdx.x - f.first_block), blocks = static_cast<uint32_t>(f.blocks);
  if (a.width == 1) return encode_warp_frame_any_k<uint8_t, false>(a, block, blocks);  // bytes: EncodeTable
  const bool shared = a.table_by_bound ? *a.alphabet_bound <= kSharedEntries : f.shared_table != 0;
  if (shared) return encode_warp_frame_any_k<uint16_t, true>(a, block, blocks);
  encode_warp_frame_any_k<uint16_t, false>(a, block, blocks);
}

}  // namespace

WarpEncodeBatch plan_encode_warp_batch(const std::vector<HuffmanEncodeArgs>& frames) {
  const unsigned resident = resident_blocks(reinterpret_cast<const void*>(encode_warp_batch_kernel), kWarps * 32);
  WarpEncodeBatch b;
  b.frames.reserve(frames.size());
  for (HuffmanEncodeArgs a : frames) {
    VLEC_REQUIRE(a.width == 1 || a.width == 2, "the warp encoder's batch takes u8 or u16 symbols, not ", a.width,
                 "-byte ones");
    VLEC_REQUIRE(a.chunk_count > 0 && a.warp_slots != nullptr,
                 "a frame in the warp encoder's batch has chunks and its scratch slots");
    const TableLaunches tables = choose_tables(a);
    const uint64_t blocks = std::min<uint64_t>({a.chunk_count, encode_warp_count(a.chunk_count) / kWarps, resident});
    b.frames.push_back({a, b.blocks, blocks, tables.shared && !tables.global ? 1u : 0u});
    b.blocks += blocks;
  }
  return b;
}

void launch_encode_warp_batch(const WarpEncodeBatch& batch, const WarpEncodeBatchFrame* d_frames,
                              cudaStream_t stream) {
  if (batch.frames.empty()) return;
  VLEC_REQUIRE(batch.blocks <= INT32_MAX && batch.frames.size() <= UINT32_MAX, "a warp encoder batch of ",
               batch.blocks, " blocks");
  encode_warp_batch_kernel<<<static_cast<unsigned>(batch.blocks), kWarps * 32, 0, stream>>>(
      d_frames, static_cast<uint32_t>(batch.frames.size()));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace vlec::cuda
