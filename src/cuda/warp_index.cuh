// cuda/warp_index.cuh: the calling warp's index in its block, as a value the
// compiler knows to be the same in every lane of the warp.
//
// Why it matters: nvcc's divergence analysis does not see that
// threadIdx.x / 32 is warp-uniform, so everything derived from it (a chunk
// number, its size, the bounds of a row loop) counts as possibly divergent,
// and every ballot and shuffle inside such a loop is then preceded by a
// convergence test (a uniform move and BRA.DIV), and warp-uniform counters
// (a chunk's next word) are kept in vector registers. Read from lane 0 by a
// shuffle, the index is uniform by construction: the tests disappear and the
// counters move to the uniform datapath (SASS, sm_90: the Huffman decoder's
// byte step went from ~39 to ~25 instructions together with its row windows).
#pragma once

#if defined(__CUDACC__)  // (included by headers that host code shares)
namespace vlec::cuda {

__device__ __forceinline__ unsigned uniform_warp_index() { return __shfl_sync(0xFFFFFFFFu, threadIdx.x / 32, 0); }

}  // namespace vlec::cuda
#endif
