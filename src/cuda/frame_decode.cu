// cuda/frame_decode.cu: see frame_decode.hpp.
#include "cuda/frame_decode.hpp"
#include "cuda/host_staging.hpp"

#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/huffman_decode.hpp"
#include "cuda/rle_frame.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/gpu_tables.hpp"
#include "cuda/decode_tables_gpu.hpp"

namespace vlec::cuda {

namespace {

constexpr std::size_t kAlign = 256;

struct Temp {
  ChunkDesc* descs;
  uint32_t* status;
  uint32_t* single;
  uint32_t* sub;
  void* pair;
  uint32_t* sorted;
  uint32_t* canon;
  void* upload;
  std::size_t total;
};

Temp carve(void* base, uint64_t chunks) {
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += (bytes + kAlign - 1) / kAlign * kAlign;
    return static_cast<uint8_t*>(base) + here;
  };
  Temp t;
  t.descs = reinterpret_cast<ChunkDesc*>(take(sizeof(ChunkDesc) * std::max<uint64_t>(chunks, 1)));
  t.status = reinterpret_cast<uint32_t*>(take(4 * std::max<uint64_t>(chunks, 1)));
  // The largest tables the GPU builds (decode_tables_gpu.hpp, as huffman::make_gpu_decode_tables): single 2^13
  // entries, sub kMaxSubEntries, pair 2^13 entries of 4 bytes or 2^12 of 8.
  t.single = reinterpret_cast<uint32_t*>(take(4u << 13));
  t.sub = reinterpret_cast<uint32_t*>(take(4 * huffman::kMaxSubEntries));
  t.pair = take(std::size_t{32} << 10);
  t.sorted = reinterpret_cast<uint32_t*>(take(4 * huffman::kMaxAlphabet));
  t.canon = reinterpret_cast<uint32_t*>(take(4 * 3 * kCanonSlots));
  t.upload = take(decode_table_upload_bytes(huffman::kMaxAlphabet));
  t.total = at;
  return t;
}

}  // namespace

bool frame_decodable(const format::FrameHeader& h) {
  return (h.codec == Codec::huffman && h.width <= 4) || h.codec == Codec::raw || h.codec == Codec::rle ||
         h.codec == Codec::rle_huffman;
}

// Frames the run-length decoder takes: rle, rle+huffman, and raw frames of u64
// elements (all their chunks raw, which rle_decode copies at any width; the
// Huffman decoder's raw path stops at 4-byte elements).
bool rle_path(const format::FrameHeader& h) {
  return h.codec == Codec::rle || h.codec == Codec::rle_huffman || (h.codec == Codec::raw && h.width == 8);
}

std::size_t frame_decode_temp_bytes(const format::ParsedFrame& f) {
  if (rle_path(f.header)) return rle_frame_decode_temp_bytes(f);
  return carve(nullptr, f.header.chunks()).total;
}

namespace {
void write_chunk_descs(const format::ParsedFrame& f, ChunkDesc* d) {
  for (std::size_t c = 0; c < f.index.size(); ++c) {
    ChunkDesc e{};
    e.offset = f.offsets[c];
    e.stored_bytes = f.index[c].stored_bytes;
    e.raw = f.index[c].stored_bytes == f.header.chunk_elements_of(c) * f.header.width;
    e.checksum = f.index[c].checksum;
    d[c] = e;
  }
}
}  // namespace

std::vector<ChunkDesc> chunk_descs(const format::ParsedFrame& f) {
  std::vector<ChunkDesc> d(f.index.size());
  write_chunk_descs(f, d.data());
  return d;
}

std::size_t frame_decode_descs_bytes(const format::ParsedFrame& f) { return f.header.chunks() * sizeof(ChunkDesc); }

std::size_t frame_decode_table_bytes(const format::ParsedFrame& f) {
  const format::FrameHeader& h = f.header;
  return h.chunks() && h.codec == Codec::huffman && !f.codebooks[0].empty()
             ? decode_table_upload_bytes(f.codebooks[0].alphabet_size)
             : 0;
}

StagedFrameDecode stage_frame_decode(const format::ParsedFrame& f, const uint8_t* d_payload, void* d_out,
                                     void* d_temp, std::size_t temp_bytes, const HostSlot& descs_slot,
                                     const HostSlot& table_slot) {
  const format::FrameHeader& h = f.header;
  VLEC_REQUIRE(frame_decodable(h) && !rle_path(h), "the GPU Huffman decoder does not take ",
               to_string(h.codec), " frames");
  const uint64_t chunks = h.chunks();
  StagedFrameDecode st;
  HuffmanDecodeArgs& a = st.args;
  if (chunks == 0) return st;
  const Temp t = carve(d_temp, chunks);
  VLEC_REQUIRE(temp_bytes >= t.total, "temporary storage of ", temp_bytes, " bytes is below the ", t.total, " needed");
  if (descs_slot.host) {
    VLEC_REQUIRE(descs_slot.bytes >= frame_decode_descs_bytes(f), "chunk descriptor slot too small");
    write_chunk_descs(f, reinterpret_cast<ChunkDesc*>(descs_slot.host));
    st.descs_device = descs_slot.device;
  } else {
    st.descs = chunk_descs(f);
    st.descs_device = t.descs;
  }
  if (h.codec == Codec::huffman) {
    // The tables are built on the GPU from the codebook (decode_tables_gpu.hpp).
    const huffman::GpuTablePlan plan = huffman::plan_gpu_decode_tables(f.codebooks[0], h.width);
    VLEC_REQUIRE(plan.sub_entries <= huffman::kMaxSubEntries, "GPU decode tables larger than their temporary storage");
    st.table = DecodeTableBuilds::stage(f.codebooks[0], h.width, plan,
                                        DecodeTableRegions{t.single, t.sub, t.pair, t.sorted, t.canon, t.upload},
                                        a.table, table_slot);
  }
  a.payload = d_payload;
  a.payload_bytes = h.frame_bytes - h.header_area_bytes();
  a.chunks = static_cast<const ChunkDesc*>(st.descs_device);
  a.chunk_count = chunks;
  a.chunk_elements = h.chunk_elements;
  a.elements = h.elements;
  a.width = h.width;
  a.out = d_out;
  a.status = t.status;
  return st;
}

HuffmanDecodeArgs enqueue_frame_decode(StagedFrameDecode&& st, cudaStream_t stream, HostWrites* writes,
                                       DecodeTableBuilds* builds) {
  if (st.args.chunk_count == 0) return st.args;
  if (!st.descs.empty()) {  // (empty where the caller placed them: stage_frame_decode's slots)
    if (writes)
      writes->add(st.descs_device, st.descs, stream);
    else
      CUDA_CHECK(cudaMemcpyAsync(st.descs_device, st.descs.data(), st.descs.size() * sizeof(ChunkDesc),
                                 cudaMemcpyHostToDevice, stream));
  }
  // Built here, or with the caller's other frames' when it passes `builds`.
  DecodeTableBuilds local;
  (builds ? *builds : local).add(std::move(st.table));
  local.launch(stream, writes);
  // The host vectors may go: cudaMemcpyAsync from pageable memory returns once the data is staged.
  return st.args;
}

HuffmanDecodeArgs prepare_frame_decode(const format::ParsedFrame& f, const uint8_t* d_payload, void* d_out,
                                       void* d_temp, std::size_t temp_bytes, cudaStream_t stream,
                                       HostWrites* writes, DecodeTableBuilds* builds) {
  return enqueue_frame_decode(stage_frame_decode(f, d_payload, d_out, d_temp, temp_bytes), stream, writes, builds);
}

void decode_frame_device(const format::ParsedFrame& f, const uint8_t* d_payload, void* d_out, void* d_temp,
                         std::size_t temp_bytes, cudaStream_t stream, HostWrites* writes) {
  if (rle_path(f.header)) return decode_rle_frame(f, d_payload, d_out, d_temp, temp_bytes, stream);
  launch_huffman_decode(prepare_frame_decode(f, d_payload, d_out, d_temp, temp_bytes, stream, writes), stream);
}

const uint32_t* frame_decode_status(const format::ParsedFrame& f, const void* d_temp) {
  if (rle_path(f.header)) return rle_frame_decode_status(f, d_temp);
  return carve(const_cast<void*>(d_temp), f.header.chunks()).status;
}

void check_frame_status(const format::ParsedFrame& f, const uint32_t* status) {
  if (rle_path(f.header)) return check_rle_frame_status(f, status);
  for (uint64_t c = 0; c < f.header.chunks(); ++c)
    SAFETY_CHECK(status[c] == kChunkOk,
                 status[c] == kChunkChecksum ? ErrorCode::checksum_mismatch : ErrorCode::corrupt_stream,
                 status[c] == kChunkChecksum ? "checksum mismatch in chunk " : "chunk ", c, " of the frame at byte ",
                 f.stream_offset, ": ",
                 status[c] == kChunkWordCount  ? "its words do not match its symbols"
                 : status[c] == kChunkPadding  ? "padding is not zero"
                 : status[c] == kChunkChecksum ? "the stream is corrupt"
                                               : "invalid Huffman code");
}

void check_frame_decode(const format::ParsedFrame& f, const void* d_temp) {
  const uint64_t chunks = f.header.chunks();
  if (chunks == 0) return;
  std::vector<uint32_t> status(chunks);
  CUDA_CHECK(cudaMemcpy(status.data(), frame_decode_status(f, d_temp), 4 * chunks, cudaMemcpyDeviceToHost));
  check_frame_status(f, status.data());
}

}  // namespace vlec::cuda
