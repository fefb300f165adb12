// cuda/frame_device.hpp: writing a whole Huffman, rle (or raw) frame on the
// GPU, from a codebook already on the device (Huffman), with no host round
// trip: layout, chunk encoding, the raw fallback, the header and its checksum,
// and the frame's size left in device memory for the caller. The layout,
// fallback and header steps are the same for every codec; only the chunk
// encoder differs (Huffman: huffman_encode.hpp; rle: rle_frame.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/huffman_encode.hpp"
#include "cuda/rle_gpu.hpp"
#include "vlec/types.hpp"

namespace vlec::cuda {

class HostWrites;  // cuda/host_staging.hpp

// A codebook on the device, as the GPU codebook builder leaves it.
struct DeviceCodebookView {
  const uint32_t* encode_entry = nullptr;  // (length << 24) | reversed code, per symbol
  uint32_t table_size = 0;                 // entries (256 for u8, 65,536 otherwise)
  const uint8_t* serialized = nullptr;     // docs/FORMAT.md §4.1 bytes
  const uint32_t* info = nullptr;          // [0] serialized bytes, [1] max length, [2] alphabet size
};

struct FrameEncodeArgs {
  const void* in = nullptr;   // device, 16-byte aligned
  uint64_t elements = 0;
  DType dtype = DType::u8;
  uint32_t chunk_elements = 65536;
  bool raw = false;            // write a raw frame (codec raw); the codebook is then unused
  Codec codec = Codec::huffman;  // huffman, rle or rle_huffman (with raw = false)
  DeviceCodebookView book;     // huffman only
  RleStrategy rle_strategy = RleStrategy::parle;  // rle and rle_huffman
  unsigned max_code_length = 0;                   // rle_huffman: its codebooks' limit (0 = automatic)
  uint8_t* frame = nullptr;    // device
  std::size_t frame_capacity = 0;  // at least frame_encode_capacity()
  uint64_t* frame_bytes = nullptr;  // device: the frame's size, written last
  EncodeStrategy strategy = EncodeStrategy::lanes;
  // Huffman with the lanes encoder: each chunk's XXH3-64, already taken by
  // the histogram pass (histogram_u8_chunk_hashes), or null.
  const uint64_t* chunk_checksums = nullptr;
  // If `error` is set: after the frame, *error = *bad if that is not ~0 (the
  // first element outside the alphabet), else ~1 if a codebook's fixed length
  // limit could not hold its alphabet, else ~0 (device::compress's report,
  // written by the frame's last kernel instead of one more launch). A null
  // `bad` counts as ~0.
  const uint64_t* bad = nullptr;
  uint64_t* error = nullptr;
};

// Bytes the frame buffer must hold while the frame is written: the raw
// frame's size plus two of the largest codebooks (rle+huffman has two), because the coded layout is laid
// down before the encoder knows whether the frame will fall back to raw. The
// frame finally written is never larger than the raw frame (compress_bound).
std::size_t frame_encode_capacity(uint64_t elements, unsigned width, uint32_t chunk_elements);

// Codec raw needs what huffman needs; rle adds the RLE encoder's temporaries;
// huffman with the warp encoder its scratch slots (up to 2 x kEncodeWarps
// chunks' raw bytes: encode_warp_slot_count), which `strategy` warp (the
// default, so that a temp sized without naming the strategy serves every
// encoder) includes and the others leave out.
std::size_t frame_encode_temp_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements,
                                    Codec codec = Codec::huffman, RleStrategy rle_strategy = RleStrategy::parle,
                                    EncodeStrategy strategy = EncodeStrategy::warp);

// Enqueue the whole frame on `stream`. Device-side failures (a value with no
// code) make the affected chunks raw and are reported through chunk_status:
// see frame_encode_status().
// Returns the device info words of the codebooks the frame was coded with
// (null where none): info[0] == 0 means that a fixed length limit could not
// hold the alphabet and the frame was written raw.
struct FrameEncodeBooks {
  const uint32_t* info[2] = {nullptr, nullptr};
};
FrameEncodeBooks encode_frame_device(const FrameEncodeArgs& args, void* temp, std::size_t temp_bytes,
                                     cudaStream_t stream);

// Several Huffman frames at once (frame_batch.cu): for each, the bytes
// encode_frame_device writes, in a fixed number of launches for all of them
// (the descriptors' upload, a layout block a frame, the warp encoder's batch
// in one grid for every frame, a finishing block a frame)
// where encode_frame_device makes five to ten a frame. Each frame: codec
// huffman (not raw) with its codebook built, the warp encoder, u8 or u16
// elements, its own temp of frame_encode_temp_bytes. The wavelet writer
// codes its groups so: their launches, not their work, bounded its host.
struct FrameBatchItem {
  FrameEncodeArgs args;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
};
// Device bytes of the descriptors of `frames` frames.
std::size_t frame_batch_bytes(std::size_t frames);
// d_batch: frame_batch_bytes(items.size()) bytes of device memory, written
// by one upload staged in `writes` (keep it until the stream has run).
void encode_frames_device(const std::vector<FrameBatchItem>& items, void* d_batch, std::size_t batch_bytes,
                          HostWrites& writes, cudaStream_t stream);

// After the stream has completed: 0 if every chunk coded, else the first
// chunk index + 1 whose values had no code. Reads temp (synchronous copy).
uint64_t frame_encode_status(const FrameEncodeArgs& args, const void* temp);

}  // namespace vlec::cuda
