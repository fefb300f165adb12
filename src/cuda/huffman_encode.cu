// cuda/huffman_encode.cu: dispatch to the encoder strategies by name.
#include "common/safety.hpp"
#include "cuda/encode_kernels.cuh"

namespace vlec::cuda {

void launch_huffman_encode(const HuffmanEncodeArgs& args, EncodeStrategy strategy, cudaStream_t stream) {
  switch (strategy) {
    case EncodeStrategy::lanes: return launch_encode_lanes(args, stream);
    case EncodeStrategy::pavle:
    case EncodeStrategy::reduce_shuffle: break;
  }
  VLEC_REQUIRE(false, "this encoder strategy is not built yet");
}

}  // namespace vlec::cuda
