// cuda/encode_warp_batch.cu: the warp encoder over many frames in one grid
// (WarpEncodeBatch, huffman_encode.hpp): a launch per K and table for all
// of them, where the one-frame kernel takes three a frame. A block finds its
// frame, then runs the one-frame kernel's code (encode_warp.cuh) on it.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "common/safety.hpp"
#include "cuda/encode_warp.cuh"
#include "cuda/launch_cache.hpp"

namespace vlec::cuda {

namespace {

// Several frames in one grid (WarpEncodeBatch): a block finds its frame by
// the frames' first blocks, then codes that frame's chunks as if the grid
// were the frame's alone. Each frame keeps its own tickets and look-back
// state, so no frame waits on another's chunks.
template <typename Sym, unsigned K, bool kShared>
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
  encode_warp_frame<Sym, K, kShared>(a, static_cast<uint32_t>(blockIdx.x - f.first_block),
                                     static_cast<uint32_t>(f.blocks));
}

// The batch kernels a class launches: K = 4, 2 and 1 for each table (the
// kernels whose K or table does not match a frame's return at once, as in
// launch_for_each_table).
std::vector<const void*> batch_kernels(const WarpEncodeBatch::Class& c) {
  std::vector<const void*> kernels;
  const auto add = [&](auto sym, auto shared) {
    using Sym = decltype(sym);
    constexpr bool kShared = decltype(shared)::value;
    kernels.push_back(reinterpret_cast<const void*>(encode_warp_batch_kernel<Sym, 4, kShared>));
    kernels.push_back(reinterpret_cast<const void*>(encode_warp_batch_kernel<Sym, 2, kShared>));
    kernels.push_back(reinterpret_cast<const void*>(encode_warp_batch_kernel<Sym, 1, kShared>));
  };
  if (c.width == 1) {
    add(uint8_t{}, std::false_type{});  // bytes: EncodeTable, all in shared memory
  } else {
    if (c.global) add(uint16_t{}, std::false_type{});
    if (c.shared) add(uint16_t{}, std::true_type{});
  }
  return kernels;
}

}  // namespace

WarpEncodeBatch plan_encode_warp_batch(const std::vector<HuffmanEncodeArgs>& frames) {
  struct Keyed {
    HuffmanEncodeArgs a;
    TableLaunches tables;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(frames.size());
  for (HuffmanEncodeArgs a : frames) {
    VLEC_REQUIRE(a.width == 1 || a.width == 2, "the warp encoder's batch takes u8 or u16 symbols, not ", a.width,
                 "-byte ones");
    VLEC_REQUIRE(a.chunk_count > 0 && a.warp_slots != nullptr,
                 "a frame in the warp encoder's batch has chunks and its scratch slots");
    const TableLaunches tables = choose_tables(a);
    keyed.push_back({a, tables});
  }
  const auto key = [](const Keyed& k) { return 4 * k.a.width + 2 * k.tables.global + k.tables.shared; };
  std::stable_sort(keyed.begin(), keyed.end(), [&](const Keyed& x, const Keyed& y) { return key(x) < key(y); });
  WarpEncodeBatch b;
  for (std::size_t i = 0; i < keyed.size();) {
    WarpEncodeBatch::Class c{keyed[i].a.width, keyed[i].tables.global, keyed[i].tables.shared,
                             static_cast<uint32_t>(b.frames.size()), 0, 0};
    unsigned resident = ~0u;
    for (const void* k : batch_kernels(c)) resident = std::min(resident, resident_blocks(k, kWarps * 32));
    for (; i < keyed.size() && key(keyed[i]) == key(keyed[c.first]); ++i) {
      const HuffmanEncodeArgs& a = keyed[i].a;
      const uint64_t blocks = std::min<uint64_t>({a.chunk_count, encode_warp_count(a.chunk_count) / kWarps, resident});
      b.frames.push_back({a, c.blocks, blocks});
      c.blocks += blocks;
      ++c.count;
    }
    b.classes.push_back(c);
  }
  return b;
}

void launch_encode_warp_batch(const WarpEncodeBatch& batch, const WarpEncodeBatchFrame* d_frames,
                              cudaStream_t stream) {
  for (const WarpEncodeBatch::Class& c : batch.classes) {
    VLEC_REQUIRE(c.blocks <= INT32_MAX, "a warp encoder batch of ", c.blocks, " blocks");
    const WarpEncodeBatchFrame* frames = d_frames + c.first;
    uint32_t count = c.count;
    void* args[] = {&frames, &count};
    for (const void* k : batch_kernels(c))
      CUDA_CHECK(cudaLaunchKernel(k, dim3(static_cast<unsigned>(c.blocks)), dim3(kWarps * 32), args, 0, stream));
  }
}

}  // namespace vlec::cuda
