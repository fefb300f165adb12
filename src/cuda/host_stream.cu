// cuda/host_stream.cu: see host_stream.hpp.
//
// Why it is fast: the GPU never waits for the host and the host never waits
// for the GPU except for one small read per piece (the index entries, whose
// sizes say how many payload bytes to copy back). Two slots, each with its
// own stream, device buffers and pinned staging, alternate: the copy engine
// moves slot 0's piece while the SMs encode slot 1's and the host threads
// fill or empty the pinned buffers. Pageable memory is never the source or
// target of a cudaMemcpyAsync (that would serialize on the driver's own
// staging); the host's copies into and out of pinned memory run on all
// threads.
#include "cuda/host_stream.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cpu/frame_codec.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/histogram_gpu.hpp"
#include "cuda/huffman_encode.hpp"
#include "huffman/chunk_codec.hpp"
#include "huffman/codebook.hpp"

namespace vlec::cuda {

namespace {

constexpr unsigned kSlots = 2;

uint64_t whole_chunks(uint64_t piece_bytes, uint64_t chunk_bytes) {
  const uint64_t want = piece_bytes ? piece_bytes : kDefaultPieceBytes;
  return std::max<uint64_t>(1, want / chunk_bytes);
}

uint64_t align_to(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// One slot of the encoder: buffers for a piece of up to `chunks` chunks.
struct EncodeSlot {
  Stream stream;
  SlotBuffer<uint8_t> in, frame, work;
  PinnedBuffer<uint8_t> staged_in, staged_payload;
  PinnedBuffer<uint64_t> staged_hist;
  PinnedBuffer<uint32_t> staged_index;  // 4 words per chunk: the index entries
  uint64_t* hist = nullptr;             // device, kHistogramBins + 1 (the last: bad index)
  void* hist_temp = nullptr;
  std::size_t hist_temp_bytes = 0;
  unsigned long long* scan_status = nullptr;
  unsigned int* ticket = nullptr;
  uint32_t* chunk_status = nullptr;
  uint64_t* checksums = nullptr;
  unsigned long long* block_sums = nullptr;

  EncodeSlot(uint64_t piece_bytes, uint64_t chunks, uint64_t blocks_per_chunk, std::size_t hist_temp_bytes_)
      : in(piece_bytes),
        frame(16 * chunks + piece_bytes + 4 * chunks + 64),
        staged_in(piece_bytes),
        staged_payload(piece_bytes + 4 * chunks),
        staged_hist(kHistogramBins + 1),
        staged_index(4 * chunks),
        hist_temp_bytes(hist_temp_bytes_) {
    constexpr std::size_t kAlign = 256;
    std::size_t at = 0;
    auto take = [&](std::size_t bytes) {
      const std::size_t here = at;
      at += align_to(bytes, kAlign);
      return here;
    };
    const std::size_t h = take(8 * (kHistogramBins + 1)), ht = take(hist_temp_bytes), ss = take(8 * chunks),
                      tk = take(4), cs = take(4 * chunks), ck = take(8 * chunks),
                      bs = take(64 * chunks * blocks_per_chunk);
    work.resize(at);
    uint8_t* w = work.get();
    hist = reinterpret_cast<uint64_t*>(w + h);
    hist_temp = hist_temp_bytes ? w + ht : nullptr;
    scan_status = reinterpret_cast<unsigned long long*>(w + ss);
    ticket = reinterpret_cast<unsigned int*>(w + tk);
    chunk_status = reinterpret_cast<uint32_t*>(w + cs);
    checksums = reinterpret_cast<uint64_t*>(w + ck);
    block_sums = reinterpret_cast<unsigned long long*>(w + bs);
  }
};

}  // namespace

bool stream_in_pieces(uint64_t bytes) {
  if (bytes > 4 * kDefaultPieceBytes) return true;  // 256 MiB
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  // A whole-input call holds the input, a frame of about its size and temp.
  return 3 * bytes > free_bytes;
}

std::size_t compress_huffman_streamed(const uint8_t* input, uint64_t elements, DType dtype, uint32_t chunk_elements,
                                      unsigned max_code_length, unsigned threads, uint8_t* out, std::size_t capacity,
                                      uint64_t piece_bytes) {
  const unsigned w = static_cast<unsigned>(dtype_bytes(dtype));
  if (elements == 0) {  // nothing to stream: the CPU writes the empty frame
    cpu::FrameParams p;
    p.codec = Codec::huffman;
    p.dtype = dtype;
    p.chunk_elements = chunk_elements;
    p.max_code_length = max_code_length;
    return cpu::compress_frame_into(input, 0, p, out, capacity);
  }
  VLEC_REQUIRE(w <= 4, "Huffman coding takes u8, u16 or u32 elements, not ", to_string(dtype));
  VLEC_REQUIRE(chunk_elements >= format::kChunkGranule && chunk_elements <= format::kMaxChunkElements &&
                   chunk_elements % format::kChunkGranule == 0,
               "chunk size ", chunk_elements, " must be a multiple of ", format::kChunkGranule, " between ",
               format::kChunkGranule, " and ", format::kMaxChunkElements, " elements");
  const uint64_t chunk_bytes = uint64_t{chunk_elements} * w;
  const uint64_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  const uint64_t piece_chunks = whole_chunks(piece_bytes, chunk_bytes);
  const uint64_t pieces = (chunks + piece_chunks - 1) / piece_chunks;
  const uint64_t piece_elements = piece_chunks * chunk_elements;
  const uint64_t blocks_per_chunk = (chunk_bytes + 1023) / 1024;
  const uint32_t table_size = dtype == DType::u8 ? 256 : 65536;
  const uint32_t bins = table_size;  // a u32 value above 65,535 is reported, not counted

  std::vector<EncodeSlot*> slots;
  std::vector<std::unique_ptr<EncodeSlot>> owned;
  // On every exit (errors included) the slots' streams finish before their buffers go.
  struct Drain {
    std::vector<EncodeSlot*>& slots;
    ~Drain() {
      for (EncodeSlot* s : slots) cudaStreamSynchronize(s->stream.get());
    }
  } drain{slots};
  for (unsigned s = 0; s < std::min<uint64_t>(kSlots, std::max<uint64_t>(pieces, 1)); ++s) {
    owned.push_back(std::make_unique<EncodeSlot>(piece_elements * w, piece_chunks, blocks_per_chunk,
                                                 histogram_temp_bytes(piece_elements, dtype)));
    slots.push_back(owned.back().get());
  }
  auto piece_span = [&](uint64_t p, uint64_t& first, uint64_t& n) {
    first = p * piece_elements;
    n = std::min(piece_elements, elements - first);
  };
  // Stage piece p into slot s and copy it to the device (the slot's stream
  // is idle: its last use was waited for).
  // Pieces [0, resident) stay on the device between the passes, as many as
  // the free device memory holds beside the slots (keeping a margin): an
  // input that fits crosses PCIe once; the rest is uploaded again in pass 2.
  DeviceBuffer<uint8_t> resident_area;
  uint64_t resident = 0;
  {
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const uint64_t margin = uint64_t{512} << 20;
    const uint64_t piece_stride = piece_elements * w;
    if (free_bytes > margin && pieces > 1) {
      resident = std::min<uint64_t>(pieces, (free_bytes - margin) / piece_stride);
      try {
        if (resident) resident_area.resize(resident == pieces ? elements * w : resident * piece_stride);
      } catch (const Error&) {  // fragmented or taken meanwhile: stream every piece twice
        cudaGetLastError();
        resident = 0;
      }
    }
  }
  auto device_piece = [&](uint64_t p, EncodeSlot& s) {
    return p < resident ? resident_area.get() + p * piece_elements * w : s.in.get();
  };
  auto upload = [&](uint64_t p, EncodeSlot& s) {
    uint64_t first, n;
    piece_span(p, first, n);
    parallel_copy(s.staged_in.get(), input + first * w, n * w, threads);
    CUDA_CHECK(cudaMemcpyAsync(device_piece(p, s), s.staged_in.get(), n * w, cudaMemcpyHostToDevice,
                               s.stream.get()));
    return n;
  };

  // Pass 1: the histogram of the whole input, piece by piece.
  huffman::Histogram hist(bins, 0);
  auto add_histogram = [&](uint64_t p, EncodeSlot& s) {
    s.stream.sync();
    const uint64_t* h = s.staged_hist.get();
    const uint64_t bad = h[kHistogramBins];
    SAFETY_CHECK(bad == ~0ull, ErrorCode::value_out_of_alphabet, "value ",
                 [&] {
                   uint32_t v = 0;
                   std::memcpy(&v, input + (p * piece_elements + bad) * w, 4);
                   return v;
                 }(),
                 " at element ", p * piece_elements + bad,
                 " is outside the Huffman alphabet (values must be below 65536)");
    for (uint32_t b = 0; b < bins; ++b) hist[b] += h[b];
  };
  for (uint64_t p = 0; p < pieces; ++p) {
    EncodeSlot& s = *slots[p % slots.size()];
    if (p >= slots.size()) add_histogram(p - slots.size(), s);
    const uint64_t n = upload(p, s);
    histogram_device(device_piece(p, s), n, dtype, s.hist, s.hist + kHistogramBins, s.hist_temp, s.hist_temp_bytes,
                     s.stream.get());
    CUDA_CHECK(cudaMemcpyAsync(s.staged_hist.get(), s.hist, 8 * bins, cudaMemcpyDeviceToHost, s.stream.get()));
    CUDA_CHECK(cudaMemcpyAsync(s.staged_hist.get() + kHistogramBins, s.hist + kHistogramBins, 8,
                               cudaMemcpyDeviceToHost, s.stream.get()));
  }
  for (uint64_t p = pieces > slots.size() ? pieces - slots.size() : 0; p < pieces; ++p)
    add_histogram(p, *slots[p % slots.size()]);

  // The codebook, by the CPU backend's builder (its errors included).
  const huffman::Codebook book = huffman::build_codebook(hist, max_code_length);
  const std::vector<uint8_t> serialized = huffman::serialize_codebook(book);
  const std::vector<uint32_t> entries = huffman::make_encode_table(book, dtype).entry;  // table_size entries
  DeviceBuffer<uint32_t> d_entries(table_size + 8);
  const uint32_t info[4] = {static_cast<uint32_t>(serialized.size()), book.max_length, book.alphabet_size, 0};
  const uint64_t layout[2] = {0, 16 * piece_chunks};  // a piece's index, then its payload
  CUDA_CHECK(cudaMemcpy(d_entries.get(), entries.data(), 4 * table_size, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_entries.get() + table_size, info, sizeof info, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_entries.get() + table_size + 4, layout, sizeof layout, cudaMemcpyHostToDevice));

  format::FrameHeader h;
  h.codec = Codec::huffman;
  h.width = static_cast<uint8_t>(w);
  h.elements = elements;
  h.chunk_elements = chunk_elements;
  h.codebooks_bytes = static_cast<uint32_t>(serialized.size());
  const uint64_t payload_at = h.header_area_bytes();
  const uint64_t raw_bytes = cpu::raw_frame_bytes(elements, w, chunk_elements);
  auto write_raw = [&] {
    cpu::FrameParams raw;
    raw.codec = Codec::raw;
    raw.dtype = dtype;
    raw.chunk_elements = chunk_elements;
    raw.threads = threads;
    return cpu::compress_frame_into(input, elements, raw, out, capacity);
  };

  // Pass 2: encode each piece; its index entries come back first, then as
  // many payload bytes as they say.
  std::vector<format::ChunkEntry> index(chunks);
  uint64_t payload = 0;  // bytes of payload placed so far
  bool too_large = false;  // the coded frame outgrew the raw frame: it will be raw
  std::vector<uint64_t> piece_payload(pieces, 0);
  auto read_index = [&](uint64_t p, EncodeSlot& s) {  // then enqueue the payload copy
    s.stream.sync();
    const uint64_t c0 = p * piece_chunks, pc = std::min(piece_chunks, chunks - c0);
    uint64_t bytes = 0;
    for (uint64_t c = 0; c < pc; ++c) {
      const uint32_t* e = s.staged_index.get() + 4 * c;
      index[c0 + c] = {e[0], e[1], uint64_t{e[2]} | uint64_t{e[3]} << 32};
      bytes += align_to(e[0], 4);
    }
    piece_payload[p] = bytes;
    CUDA_CHECK(cudaMemcpyAsync(s.staged_payload.get(), s.frame.get() + layout[1], bytes, cudaMemcpyDeviceToHost,
                               s.stream.get()));
  };
  auto place_payload = [&](uint64_t p, EncodeSlot& s) {
    s.stream.sync();
    const uint64_t bytes = piece_payload[p];
    too_large = too_large || payload_at + align_to(payload + bytes, 8) > raw_bytes;
    if (!too_large) {
      SAFETY_CHECK(payload_at + payload + bytes <= capacity, ErrorCode::output_too_small,
                   "compressed stream needs more than ", payload_at + payload + bytes,
                   " bytes but the output buffer holds ", capacity);
      parallel_copy(out + payload_at + payload, s.staged_payload.get(), bytes, threads);
    }
    payload += bytes;
  };
  for (uint64_t p = 0; p < pieces; ++p) {
    const unsigned si = static_cast<unsigned>(p % slots.size());
    EncodeSlot& s = *slots[si];
    if (p >= slots.size()) place_payload(p - slots.size(), s);
    if (too_large) break;  // the frame will be raw: stop coding
    uint64_t first, n;
    piece_span(p, first, n);
    if (p >= resident) upload(p, s);
    const uint64_t pc = (n + chunk_elements - 1) / chunk_elements;
    CUDA_CHECK(cudaMemsetAsync(s.ticket, 0, 4, s.stream.get()));
    CUDA_CHECK(cudaMemsetAsync(s.scan_status, 0, 8 * pc, s.stream.get()));
    HuffmanEncodeArgs e{};
    e.in = device_piece(p, s);
    e.elements = n;
    e.width = w;
    e.chunk_elements = chunk_elements;
    e.chunk_count = pc;
    e.encode_entry = d_entries.get();
    e.table_size = table_size;
    e.max_length = d_entries.get() + table_size + 1;
    e.alphabet_bound = d_entries.get() + table_size + 2;
    e.frame = s.frame.get();
    e.layout = reinterpret_cast<const uint64_t*>(d_entries.get() + table_size + 4);
    e.scan = {s.scan_status, s.ticket};
    e.block_sums = s.block_sums;
    e.blocks_per_chunk = blocks_per_chunk;
    e.chunk_status = s.chunk_status;
    e.checksums = s.checksums;
    launch_huffman_encode(e, EncodeStrategy::lanes, s.stream.get());
    CUDA_CHECK(cudaMemcpyAsync(s.staged_index.get(), s.frame.get(), 16 * pc, cudaMemcpyDeviceToHost,
                               s.stream.get()));
    // The other slot's index has landed by now or soon: start its payload copy.
    if (p >= 1) read_index(p - 1, *slots[(p - 1) % slots.size()]);
  }
  if (!too_large) {
    if (pieces >= 1) read_index(pieces - 1, *slots[(pieces - 1) % slots.size()]);
    for (uint64_t p = pieces > slots.size() ? pieces - slots.size() : 0; p < pieces; ++p)
      place_payload(p, *slots[p % slots.size()]);
  }
  for (EncodeSlot* s : slots) s->stream.sync();  // nothing in flight on the buffers about to go
  if (too_large) return write_raw();
  const std::vector<uint8_t> header = format::write_header_area(h, serialized, index);
  SAFETY_CHECK(h.frame_bytes <= capacity, ErrorCode::output_too_small, "compressed stream needs ", h.frame_bytes,
               " bytes but the output buffer holds ", capacity);
  std::memcpy(out, header.data(), header.size());
  std::memset(out + payload_at + payload, 0, h.frame_bytes - payload_at - payload);
  return h.frame_bytes;
}

namespace {

// Chunks [c0, c1) of a parsed frame as a frame of their own: the same
// header fields and codebooks, the index and offsets rebased, the payload
// from chunk c0's start to chunk c1's (to the frame's end for the last
// slice, whose padding the decoder checks).
// Without `codebooks` the slice is only good for sizing its temp storage
// (which depends on the header and the index alone).
format::ParsedFrame slice_frame(const format::ParsedFrame& f, uint64_t c0, uint64_t c1, bool codebooks = true) {
  format::ParsedFrame s;
  s.header = f.header;
  s.header.elements = std::min(f.header.elements, c1 * f.header.chunk_elements) - c0 * f.header.chunk_elements;
  if (codebooks) {
    s.codebooks[0] = f.codebooks[0];
    s.codebooks[1] = f.codebooks[1];
  }
  s.index.assign(f.index.begin() + c0, f.index.begin() + c1);
  s.offsets.resize(c1 - c0);
  for (uint64_t c = c0; c < c1; ++c) s.offsets[c - c0] = f.offsets[c] - f.offsets[c0];
  const uint64_t frame_payload = f.header.frame_bytes - f.header.header_area_bytes();
  const uint64_t end = c1 == f.header.chunks() ? frame_payload : f.offsets[c1];
  s.header.frame_bytes = s.header.header_area_bytes() + (end - f.offsets[c0]);
  s.payload = f.payload + f.offsets[c0];
  s.stream_offset = f.stream_offset;
  return s;
}

struct DecodeSlot {
  Stream stream;
  SlotBuffer<uint8_t> payload, out, temp;
  std::size_t temp_bytes;
  PinnedBuffer<uint8_t> staged_payload, staged_out;
  format::ParsedFrame slice;
  uint64_t first_chunk = 0;
  DecodeSlot(uint64_t payload_bytes, uint64_t out_bytes, std::size_t temp_bytes)
      : payload(std::max<uint64_t>(payload_bytes, 16)),
        out(std::max<uint64_t>(out_bytes, 16)),
        temp(temp_bytes),
        temp_bytes(temp_bytes),
        staged_payload(payload_bytes),
        staged_out(out_bytes) {}
};

}  // namespace

void decompress_frame_streamed(const format::ParsedFrame& f, uint8_t* out, unsigned threads, uint64_t piece_bytes) {
  const format::FrameHeader& h = f.header;
  const uint64_t chunks = h.chunks();
  if (chunks == 0) return;
  const uint64_t chunk_bytes = uint64_t{h.chunk_elements} * h.width;
  const uint64_t piece_chunks = whole_chunks(piece_bytes, chunk_bytes);
  const uint64_t slices = (chunks + piece_chunks - 1) / piece_chunks;
  // Buffers for the largest slice (host-only queries).
  uint64_t payload_max = 0;
  std::size_t temp_max = 0;
  for (uint64_t i = 0; i < slices; ++i) {
    const uint64_t c0 = i * piece_chunks, c1 = std::min(chunks, c0 + piece_chunks);
    const uint64_t end = c1 == chunks ? h.frame_bytes - h.header_area_bytes() : f.offsets[c1];
    payload_max = std::max(payload_max, end - f.offsets[c0]);
    temp_max = std::max(temp_max, frame_decode_temp_bytes(slice_frame(f, c0, c1, false)));
  }
  const uint64_t out_max = std::min(piece_chunks * h.chunk_elements, h.elements) * h.width;
  std::vector<std::unique_ptr<DecodeSlot>> slots;
  struct Drain {  // on every exit the streams finish before their buffers go
    std::vector<std::unique_ptr<DecodeSlot>>& slots;
    ~Drain() {
      for (auto& s : slots) cudaStreamSynchronize(s->stream.get());
    }
  } drain{slots};
  for (unsigned s = 0; s < std::min<uint64_t>(kSlots, slices); ++s)
    slots.push_back(std::make_unique<DecodeSlot>(payload_max, out_max, temp_max));

  auto finish = [&](DecodeSlot& s) {
    s.stream.sync();
    try {
      check_frame_decode(s.slice, s.temp.get());
    } catch (const Error& e) {
      if (s.first_chunk == 0) throw;
      throw Error(e.code(), std::string(e.what()) + " (chunk numbers counted from chunk " +
                                std::to_string(s.first_chunk) + " of the frame)");
    }
    const uint64_t at = s.first_chunk * chunk_bytes;
    parallel_copy(out + at, s.staged_out.get(), s.slice.header.elements * h.width, threads);
  };
  for (uint64_t i = 0; i < slices; ++i) {
    DecodeSlot& s = *slots[i % slots.size()];
    if (i >= slots.size()) finish(s);
    const uint64_t c0 = i * piece_chunks, c1 = std::min(chunks, c0 + piece_chunks);
    s.slice = slice_frame(f, c0, c1);
    s.first_chunk = c0;
    const uint64_t payload = s.slice.header.frame_bytes - s.slice.header.header_area_bytes();
    const uint64_t out_bytes = s.slice.header.elements * h.width;
    parallel_copy(s.staged_payload.get(), s.slice.payload, payload, threads);
    CUDA_CHECK(cudaMemcpyAsync(s.payload.get(), s.staged_payload.get(), payload, cudaMemcpyHostToDevice,
                               s.stream.get()));
    decode_frame_device(s.slice, s.payload.get(), s.out.get(), s.temp.get(), s.temp_bytes, s.stream.get());
    CUDA_CHECK(cudaMemcpyAsync(s.staged_out.get(), s.out.get(), out_bytes, cudaMemcpyDeviceToHost, s.stream.get()));
  }
  for (uint64_t i = slices > slots.size() ? slices - slots.size() : 0; i < slices; ++i)
    finish(*slots[i % slots.size()]);
}

}  // namespace vlec::cuda
