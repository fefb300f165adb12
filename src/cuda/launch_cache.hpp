// cuda/launch_cache.hpp: a kernel's resident blocks on the current device,
// asked of the runtime once per kernel, block size and device and then kept.
// The wavelet writer enqueues ~16 frame encodes a call, each launching three
// encoder kernels: an occupancy query per launch cost the host more than the
// launch itself on the H100 machine. The Huffman encoders and decoder and the
// one-pass rle encoder size their persistent grids with it. Likewise a
// kernel attribute (shared-memory size or carveout), set once per kernel,
// attribute and device instead of before every launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace vlec::cuda {

// Multiprocessors of the current device times the blocks of `threads`
// threads (and `smem` bytes of dynamic shared memory) of `kernel` one can
// hold (at least one).
unsigned resident_blocks(const void* kernel, int threads, std::size_t smem = 0);

// cudaFuncSetAttribute(kernel, attribute, value) on the current device,
// unless this process already set that value there.
void set_attribute_once(const void* kernel, cudaFuncAttribute attribute, int value);
template <typename Kernel>
void set_attribute_once(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  set_attribute_once(reinterpret_cast<const void*>(kernel), attribute, value);
}

}  // namespace vlec::cuda
