// cuda/huffman_encode.cu: dispatch to the encoder strategies by name.
#include "common/safety.hpp"
#include "cuda/encode_kernels.cuh"

namespace vlec::cuda {

void launch_huffman_encode(const HuffmanEncodeArgs& args, EncodeStrategy strategy, cudaStream_t stream) {
  switch (strategy) {
    case EncodeStrategy::lanes: return launch_encode_lanes(args, stream);
    case EncodeStrategy::pavle: return launch_encode_pavle(args, stream);
    case EncodeStrategy::reduce_shuffle: return launch_encode_reduce_shuffle(args, stream);
    case EncodeStrategy::warp: return launch_encode_warp(args, stream);
  }
  VLEC_REQUIRE(false, "this encoder strategy is not built yet");
}

}  // namespace vlec::cuda
