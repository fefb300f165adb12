// cuda/backend.cu: the CUDA backend behind the host-buffer API. A frame is
// copied to the GPU, decoded there, and copied back; the chunk checksums are
// verified on the host, on all cores, against the decoded data.
#include <vector>

#include "common/checksum.hpp"
#include "common/parallel.hpp"
#include "cuda/backend.hpp"
#include "cuda/decode_tables.hpp"

namespace vlec::cuda {

bool built() { return true; }

bool available() {
  static const bool ok = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();  // clear the sticky "no device" error
      return false;
    }
    cudaDeviceProp prop{};
    return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major >= 7;
  }();
  return ok;
}

bool can_decode(const format::ParsedFrame& f) {
  return (f.header.codec == Codec::huffman || f.header.codec == Codec::raw) && f.header.width <= 4;
}

std::vector<ChunkDesc> chunk_descs(const format::ParsedFrame& f) {  // declared in huffman_decode.hpp
  std::vector<ChunkDesc> d(f.index.size());
  for (std::size_t c = 0; c < d.size(); ++c) {
    d[c].offset = f.offsets[c];
    d[c].stored_bytes = f.index[c].stored_bytes;
    d[c].raw = f.index[c].stored_bytes == f.header.chunk_elements_of(c) * f.header.width;
  }
  return d;
}

void decompress_frame(const format::ParsedFrame& f, uint8_t* out) {
  const format::FrameHeader& h = f.header;
  const uint64_t chunks = h.chunks();
  if (chunks == 0) return;
  const uint64_t payload_bytes = h.frame_bytes - h.header_area_bytes();
  const uint64_t out_bytes = h.elements * h.width;
  const std::vector<ChunkDesc> descs = chunk_descs(f);
  huffman::Codebook none;
  DeviceTables tables(h.codec == Codec::huffman ? f.codebooks[0] : none);
  DeviceBuffer<uint8_t> d_payload(payload_bytes), d_out(out_bytes);
  DeviceBuffer<ChunkDesc> d_chunks(chunks);
  DeviceBuffer<uint32_t> d_status(chunks);
  CUDA_CHECK(cudaMemcpy(d_payload.get(), f.payload, payload_bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_chunks.get(), descs.data(), chunks * sizeof(ChunkDesc), cudaMemcpyHostToDevice));
  HuffmanDecodeArgs a{};
  a.payload = d_payload.get();
  a.chunks = d_chunks.get();
  a.chunk_count = chunks;
  a.chunk_elements = h.chunk_elements;
  a.elements = h.elements;
  a.width = h.width;
  a.out = d_out.get();
  a.status = d_status.get();
  a.table = tables.view();
  if (h.codec == Codec::raw) a.table.bits = 0;  // every chunk is raw; the table is never read
  launch_huffman_decode(a, 0);
  std::vector<uint32_t> status(chunks);
  CUDA_CHECK(cudaMemcpy(status.data(), d_status.get(), chunks * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out, d_out.get(), out_bytes, cudaMemcpyDeviceToHost));
  for (uint64_t c = 0; c < chunks; ++c)
    SAFETY_CHECK(status[c] == kChunkOk, ErrorCode::corrupt_stream, "chunk ", c, " of the frame at byte ",
                 f.stream_offset, ": ",
                 status[c] == kChunkWordCount ? "its words do not match its symbols"
                 : status[c] == kChunkPadding ? "padding bits are not zero"
                                              : "invalid Huffman code");
  parallel_for(chunks, 0, [&](std::size_t c) {
    const uint64_t raw = h.chunk_elements_of(c) * h.width;
    SAFETY_CHECK(checksum64(out + c * uint64_t{h.chunk_elements} * h.width, raw) == f.index[c].checksum,
                 ErrorCode::checksum_mismatch, "checksum mismatch in chunk ", c, " of the frame at byte ",
                 f.stream_offset, ": the stream is corrupt");
  });
}

}  // namespace vlec::cuda
