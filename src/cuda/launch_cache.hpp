// cuda/launch_cache.hpp: a kernel's resident blocks on the current device,
// asked of the runtime once per kernel, block size and device and then kept.
// The wavelet writer enqueues ~16 frame encodes a call, each launching three
// encoder kernels: an occupancy query per launch cost the host more than the
// launch itself on the H100 machine. The Huffman encoders and decoder and the
// one-pass rle encoder size their persistent grids with it.
#pragma once

#include <cstddef>

namespace vlec::cuda {

// Multiprocessors of the current device times the blocks of `threads`
// threads (and `smem` bytes of dynamic shared memory) of `kernel` one can
// hold (at least one).
unsigned resident_blocks(const void* kernel, int threads, std::size_t smem = 0);

}  // namespace vlec::cuda
