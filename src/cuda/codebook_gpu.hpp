// cuda/codebook_gpu.hpp: build a Huffman codebook from a histogram that is
// already on the GPU, entirely on the GPU, giving exactly the bytes of the CPU's
// huffman::build_codebook + make_encode_table + serialize_codebook
// (docs/FORMAT.md §4). CUB-style: the caller queries and passes the temporary
// storage; nothing is allocated, everything is enqueued on the caller's
// stream, and the host neither waits nor reads anything back.
//
// Why it is fast: alphabets of up to 1,024 symbols take one kernel launch
// (block radix sort, parallel tree construction and all the rest in shared
// memory). Larger ones take a CUB radix sort, one 1024-thread block that builds
// the tree in phases (Tian et al.'s generate_cl, see generate_cl.hpp) with the
// node queues streamed through shared memory, and three grid-wide kernels for
// the O(alphabet) work (length policy, code lengths per symbol, canonical
// codes and serialization), each a handful of coalesced passes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace vlec::cuda {

struct DeviceCodebookOut {
  uint8_t* lengths;        // [alphabet_capacity] code length per symbol (0 = none)
  uint32_t* encode_entry;  // [alphabet_capacity] (length << 24) | bit-reversed code, 0 = none
                           // (as huffman::make_encode_table)
  uint8_t* serialized;     // 4-byte aligned, room for codebook_serialized_capacity(alphabet_capacity)
                           // bytes: the FORMAT §4.1 bytes, zero beyond info[0]
  uint32_t* info;          // [4]: serialized byte size, max_length, alphabet_size, present-symbol count.
                           // info[0] == 0: the fixed length limit cannot hold the present symbols
                           // (where the CPU throws); every other output is then zero.
};

// Bytes of the serialized codebook of any histogram of this capacity (<= 65,536).
std::size_t codebook_serialized_capacity(uint32_t alphabet_capacity);

// Temporary storage build_codebook_device needs (0 for capacities up to 1,024);
// pass it 256-byte aligned (as cudaMalloc returns it). A host-side query.
std::size_t codebook_temp_bytes(uint32_t alphabet_capacity);

// d_hist: [alphabet_capacity] u64 counts on the device (symbols 0..capacity-1).
// length_limit 0 = the automatic policy; otherwise 1..24. The counts must sum
// to less than 2^64 (as the CPU's construction assumes). Enqueues on `stream`;
// throws vlec::Error (invalid_argument) for a bad capacity, limit or temp
// size, and (cuda_error) if a launch fails.
void build_codebook_device(const uint64_t* d_hist, uint32_t alphabet_capacity, unsigned length_limit,
                           void* d_temp, std::size_t temp_bytes, const DeviceCodebookOut& out,
                           cudaStream_t stream);

}  // namespace vlec::cuda
