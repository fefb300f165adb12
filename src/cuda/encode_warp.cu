// cuda/encode_warp.cu: the "warp" GPU Huffman encoder's kernel, one frame a
// grid (its device code and why it is fast: encode_warp.cuh).
#include "common/safety.hpp"
#include "cuda/encode_warp.cuh"

namespace vlec::cuda {

namespace {

// One kernel per K and table, as the lanes encoder's (launch_for_each_table
// says which launch); the warps take chunks by ticket until none is left.
// Deferred placement: a warp places the chunk it coded before only after
// coding the next (in its other slot), so the predecessors' sizes are long
// published when it walks back. Placed at once, a chunk's walk waited on
// predecessors still coding: a third of the kernel's warp time went to the
// look-back's spin (Nsight Compute, H200, skewed bytes), and deferring took
// 7-12 % off the encode (docs/ARCHITECTURE.md, session 31).
template <typename Sym, unsigned K, bool kShared>
__global__ void __launch_bounds__(kWarps * 32, 4) encode_warp_kernel(const HuffmanEncodeArgs a) {
  encode_warp_frame<Sym, K, kShared>(a, blockIdx.x, gridDim.x);
}

}  // namespace

// The tables as the lanes encoder picks them (launch_for_each_table); a
// block per 8 chunks, no more blocks than the GPU holds at once nor than
// encode_warp_count allows (the scratch has slots for those).
void launch_encode_warp(const HuffmanEncodeArgs& args, cudaStream_t stream) {
  VLEC_REQUIRE(args.chunk_count == 0 || args.warp_slots != nullptr,
               "the warp encoder needs its scratch slots (frame_encode_temp_bytes)");
  const uint64_t max_blocks = encode_warp_count(args.chunk_count) / kWarps;
  launch_for_each_table(
      args, stream,
      [](auto sym, auto k, auto shared) {
        return encode_warp_kernel<decltype(sym), decltype(k)::value, decltype(shared)::value>;
      },
      max_blocks);
}

}  // namespace vlec::cuda
