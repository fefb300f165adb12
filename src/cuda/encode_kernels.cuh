// cuda/encode_kernels.cuh: entry points of the encoder strategies, each in
// its own file, dispatched by launch_huffman_encode (huffman_encode.cu).
#pragma once

#include "cuda/huffman_encode.hpp"

namespace vlec::cuda {

void launch_encode_lanes(const HuffmanEncodeArgs& a, cudaStream_t stream);
void launch_encode_pavle(const HuffmanEncodeArgs& a, cudaStream_t stream);
void launch_encode_reduce_shuffle(const HuffmanEncodeArgs& a, cudaStream_t stream);
void launch_encode_warp(const HuffmanEncodeArgs& a, cudaStream_t stream);

}  // namespace vlec::cuda
