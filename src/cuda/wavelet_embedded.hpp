// cuda/wavelet_embedded.hpp: a wavelet group's embedded Huffman frame coded
// on the GPU with a codebook built on the host.
//
// Why: the host already holds each group's exact histogram (the statistics
// behind the writer's decisions), and the CPU writer builds its codebook
// from that histogram. Building it on the host too (microseconds for the
// few hundred symbols of an 8-bit image) and uploading only the entries of
// its alphabet replaces the GPU histogram and GPU codebook of every group,
// which cost 25-120 us a group, and gives the same bytes by construction.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <vector>

#include "huffman/codebook.hpp"
#include "vlec/device.hpp"
#include "vlec/types.hpp"
#include "wavelet/group_io.hpp"

namespace vlec::cuda {

class HostWrites;

// The options of a group's embedded frame (FORMAT §10.6).
device::CompressOptions embedded_frame_options(Codec codec, DType type);

// One group's embedded frame to write: its symbols (device), their codec,
// the statistics and shift behind them (for the host-built codebook), and
// where the frame goes (device, device::compress_capacity() bytes).
struct EmbeddedGroup {
  const void* symbols = nullptr;
  uint64_t n = 0;
  DType type = DType::u8;
  Codec codec = Codec::huffman;
  const wavelet::ValueStats* stats = nullptr;
  unsigned shift = 0;
  uint8_t* frame = nullptr;
};

// Every group's embedded frame, round robin on the side streams (forked from
// and joined to `stream`), each with `temp_per_stream` bytes of temp at
// temp + s * temp_per_stream. sizes[2g] gets group g's frame size,
// sizes[2g + 1] ~0 or device::compress's error. Huffman groups of at most
// kHostCodebookSymbols symbol values take the host-built codebook; the rest
// go through device::compress (GPU histogram and codebook).
void encode_embedded_frames(const std::vector<EmbeddedGroup>& groups, uint64_t* sizes, uint8_t* temp,
                            std::size_t temp_per_stream, cudaStream_t stream, HostWrites& writes);
// Wider alphabets (16-bit images) keep the GPU codebook: the host's serial
// builder would not beat it there.
constexpr uint32_t kHostCodebookSymbols = 4096;

// Device temp bytes encode_embedded_huffman() needs for `n` symbols of type `t`.
std::size_t embedded_huffman_temp_bytes(uint64_t n, DType t);

// Enqueue on `stream`: the codebook's upload (staged by `writes`, which the
// caller keeps until it has waited for the stream), then the frame of the
// `n` symbols at `symbols` (device) in wavelet::kEmbeddedChunkElements-element
// chunks at `frame` (device, device::compress_capacity() bytes). result[0]
// gets the frame's size, result[1] ~0 (device::compress's "no error").
void encode_embedded_huffman(const void* symbols, uint64_t n, DType t, const huffman::Codebook& book, uint8_t* frame,
                             std::size_t capacity, uint64_t* result, void* temp, std::size_t temp_bytes,
                             cudaStream_t stream, HostWrites& writes);

}  // namespace vlec::cuda
