// cuda/frame_decode.hpp: decoding one frame on the GPU. The header area is
// parsed and checked on the host (format::parse_frame_header); the payload
// is on the device; the kernels check every chunk's sizes, padding, codes
// and checksum, and the status is read back once per frame. Huffman and raw
// frames go to the Huffman decoder, rle frames to rle_frame.hpp's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/decode_tables_gpu.hpp"
#include "cuda/huffman_decode.hpp"
#include "format/frame.hpp"

namespace vlec::cuda {

// Whether the GPU decoder handles this frame's codec and element type.
bool frame_decodable(const format::FrameHeader& h);

// Whether the frame goes to the run-length decoder (rle, rle+huffman, raw
// u64), not to prepare_frame_decode's Huffman decoder.
bool rle_path(const format::FrameHeader& h);

std::size_t frame_decode_temp_bytes(const format::ParsedFrame& frame);

class HostWrites;

// Enqueue the decode of `frame` (header parsed on the host) from d_payload
// into d_out (elements * width bytes, 16-byte aligned). `writes`, if given,
// stages the host-to-device uploads (chunk descriptors, decode tables)
// through pinned memory that it keeps until the caller has waited for the
// stream (a caller decoding many frames on a few streams: an upload from
// pageable memory may wait for the frame before it on its stream).
void decode_frame_device(const format::ParsedFrame& frame, const uint8_t* d_payload, void* d_out, void* d_temp,
                         std::size_t temp_bytes, cudaStream_t stream, HostWrites* writes = nullptr);

// The two halves of decode_frame_device (Huffman and raw frames), for
// benchmarks that time the kernel alone and for callers that decode many
// frames: upload the chunk descriptors and build the decode tables on the
// GPU (returns the kernel's arguments; an empty frame gives chunk_count 0),
// then launch_huffman_decode(args). With `builds`, the tables' build is only
// staged there, for the caller to launch with other frames' (before the
// decode kernels, on their stream or one they wait for).
HuffmanDecodeArgs prepare_frame_decode(const format::ParsedFrame& frame, const uint8_t* d_payload, void* d_out,
                                       void* d_temp, std::size_t temp_bytes, cudaStream_t stream,
                                       HostWrites* writes = nullptr, DecodeTableBuilds* builds = nullptr);

// prepare_frame_decode in two halves, for a caller that decodes many
// frames: the host's work (chunk descriptors, the table plan and the
// codebook's upload words), which makes no CUDA call, so frames may be
// staged on several threads; then, on one thread, the uploads and the
// table build's staging (as prepare_frame_decode does).
struct StagedFrameDecode {
  HuffmanDecodeArgs args{};  // chunk_count 0: an empty frame, nothing to enqueue
  void* descs_device = nullptr;
  std::vector<ChunkDesc> descs;
  StagedTableBuild table;  // empty for a raw frame
};
// With slots (frame_decode_descs_bytes and frame_decode_table_bytes of
// them), the descriptors and the build's job are written to the
// caller's pinned upload memory, where the decode reads them from once it is
// copied (`descs` stays empty, `args.chunks` is the slot's device address,
// the table's build is placed): no vectors to fill and copy again.
StagedFrameDecode stage_frame_decode(const format::ParsedFrame& frame, const uint8_t* d_payload, void* d_out,
                                     void* d_temp, std::size_t temp_bytes, const HostSlot& descs_slot = {},
                                     const HostSlot& table_slot = {});
// The bytes of stage_frame_decode's two slots for this (Huffman or raw) frame.
std::size_t frame_decode_descs_bytes(const format::ParsedFrame& frame);
std::size_t frame_decode_table_bytes(const format::ParsedFrame& frame);
HuffmanDecodeArgs enqueue_frame_decode(StagedFrameDecode&& staged, cudaStream_t stream, HostWrites* writes = nullptr,
                                       DecodeTableBuilds* builds = nullptr);

// After the stream completed: throws the CPU decoder's error for the first bad chunk.
void check_frame_decode(const format::ParsedFrame& frame, const void* d_temp);

// The same in two halves, for a caller that decodes many frames and reads
// all their statuses with one wait: the device address of the frame's
// per-chunk status words (4 bytes a chunk, header.chunks() of them) in
// d_temp, and the check of a host copy of them.
const uint32_t* frame_decode_status(const format::ParsedFrame& frame, const void* d_temp);
void check_frame_status(const format::ParsedFrame& frame, const uint32_t* status);

}  // namespace vlec::cuda
