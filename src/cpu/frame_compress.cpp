// cpu/frame_compress.cpp: the CPU frame encoder. Each codec is one pass over
// the chunks on all threads (two for rle+huffman, whose codebooks come from
// the runs), followed by a single assembly copy into the frame. Huffman
// chunks are coded straight into arenas whose pages stay mapped from call to
// call (chunk_arena.hpp: no page faults or zero-fill per chunk).
#include <algorithm>
#include <cstring>
#include <memory>

#include "common/bits.hpp"
#include "common/checksum.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cpu/chunk_arena.hpp"
#include "cpu/frame_codec.hpp"
#include "huffman/chunk_codec.hpp"
#include "rle/rle.hpp"

namespace vlec::cpu {

namespace {

using format::ChunkEntry;

// A coded chunk: its bytes in `bytes`, or at arena_at in `arena` (Huffman
// chunks); neither means the chunk is stored raw.
struct ChunkOut {
  std::vector<uint8_t> bytes;
  const ArenaBytes* arena = nullptr;
  std::size_t arena_at = 0;
  ChunkEntry entry;
};

struct FrameJob {
  const uint8_t* input;
  format::FrameHeader header;
  unsigned threads;
  std::vector<ChunkOut> chunks;
  std::vector<std::unique_ptr<ChunkArena>> arenas;  // on loan until the frame is written (the job's end)

  const uint8_t* chunk_data(uint64_t c) const { return input + c * header.chunk_elements * header.width; }
  uint64_t chunk_raw_bytes(uint64_t c) const { return header.chunk_elements_of(c) * header.width; }
  void finish_chunk(uint64_t c, std::vector<uint8_t> coded, uint32_t aux) {
    if (record_chunk(c, coded.size(), aux)) chunks[c].bytes = std::move(coded);
  }
  // The chunk coded into `bytes` bytes at `at` of `arena` (0: stored raw).
  void finish_chunk_in(uint64_t c, const ArenaBytes& arena, std::size_t at, std::size_t bytes) {
    if (record_chunk(c, bytes, 0)) chunks[c].arena = &arena, chunks[c].arena_at = at;
  }

 private:
  // Chunk c's checksum and stored size: its `bytes` coded bytes (and `aux`)
  // where they are fewer than its raw bytes (true), else the raw bytes.
  bool record_chunk(uint64_t c, std::size_t bytes, uint32_t aux) {
    ChunkEntry& entry = chunks[c].entry;
    entry.checksum = checksum64(chunk_data(c), chunk_raw_bytes(c));
    const bool coded = bytes != 0 && bytes < chunk_raw_bytes(c);
    entry.stored_bytes = static_cast<uint32_t>(coded ? bytes : chunk_raw_bytes(c));
    if (coded) entry.aux = aux;
    return coded;
  }
};

// Histogram of many symbol arrays on all threads: one histogram per thread, merged.
template <typename Source>
huffman::Histogram parallel_histogram(uint64_t parts, unsigned threads, DType t, Source&& source) {
  const unsigned T = resolve_threads(threads, parts);
  std::vector<huffman::Histogram> partial(T);
  parallel_for(T, T, [&](std::size_t k) {
    for (uint64_t c = parts * k / T; c < parts * (k + 1) / T; ++c) {
      auto [data, count, first] = source(c);
      huffman::accumulate_histogram(data, count, t, partial[k], first);
    }
  });
  huffman::Histogram total;
  for (const auto& h : partial) {
    if (total.size() < h.size()) total.resize(h.size(), 0);
    for (std::size_t s = 0; s < h.size(); ++s) total[s] += h[s];
  }
  return total;
}

// Huffman-code `n` symbols into `out` (appended) within `budget_words`; false if they do not fit.
bool append_huffman(const void* symbols, DType t, std::size_t n, const huffman::EncodeTable& table,
                    std::size_t budget_words, std::vector<uint8_t>& out, uint64_t first_index) {
  thread_local std::vector<uint32_t> scratch;
  scratch.resize(budget_words + huffman::kEncodeSlackWords);
  const std::size_t words = huffman::encode_chunk(symbols, t, n, table, scratch.data(), budget_words, first_index);
  if (words == huffman::kDoesNotFit) return false;
  const std::size_t at = out.size();
  out.resize(at + 4 * words);
  std::memcpy(out.data() + at, scratch.data(), 4 * words);
  return true;
}

void compress_raw(FrameJob& job) {
  parallel_for(job.chunks.size(), job.threads, [&](std::size_t c) { job.finish_chunk(c, {}, 0); });
}

std::vector<uint8_t> compress_huffman(FrameJob& job, unsigned max_code_length, const huffman::Histogram* given) {
  const format::FrameHeader& h = job.header;
  const DType t = static_cast<DType>(h.width);
  const huffman::Histogram hist =
      given ? *given : parallel_histogram(job.chunks.size(), job.threads, t, [&](uint64_t c) {
        return std::make_tuple(static_cast<const void*>(job.chunk_data(c)), h.chunk_elements_of(c),
                               c * h.chunk_elements);
      });
  const huffman::Codebook book = huffman::build_codebook(hist, max_code_length);
  const huffman::EncodeTable table = huffman::make_encode_table(book, t);
  // A thread a range of chunks, coded straight into its arena (chunk_arena.hpp).
  const uint64_t chunks = job.chunks.size();
  const unsigned T = resolve_threads(job.threads, chunks);
  job.arenas.clear();
  for (unsigned k = 0; k < T; ++k) job.arenas.push_back(std::make_unique<ChunkArena>());
  parallel_for(T, T, [&](std::size_t k) {
    ArenaBytes& arena = job.arenas[k]->bytes();
    for (uint64_t c = chunks * k / T; c < chunks * (k + 1) / T; ++c) {
      const std::size_t at = arena.size(), budget = (job.chunk_raw_bytes(c) - 1) / 4;
      arena.resize(at + 4 * (budget + huffman::kEncodeSlackWords));  // (at stays a multiple of 4)
      const std::size_t words = huffman::encode_chunk(job.chunk_data(c), t, h.chunk_elements_of(c), table,
                                                      reinterpret_cast<uint32_t*>(arena.data() + at), budget,
                                                      c * h.chunk_elements);
      const std::size_t bytes = words == huffman::kDoesNotFit ? 0 : 4 * words;
      arena.resize(at + bytes);
      job.finish_chunk_in(c, arena, at, bytes);
    }
  });
  return huffman::serialize_codebook(book);
}

void compress_rle(FrameJob& job) {
  const unsigned w = job.header.width;
  parallel_for(job.chunks.size(), job.threads, [&](std::size_t c) {
    const uint64_t n = job.header.chunk_elements_of(c);
    const std::size_t runs = rle::count_runs(job.chunk_data(c), n, w);
    std::vector<uint8_t> coded;
    if (rle::payload_bytes(runs, w) < job.chunk_raw_bytes(c)) {
      coded.assign(rle::payload_bytes(runs, w), 0);
      std::vector<uint16_t> lengths(runs);
      rle::encode_runs(job.chunk_data(c), n, w, coded.data(), lengths.data());
      std::memcpy(coded.data() + rle::lengths_offset(runs, w), lengths.data(), 2 * runs);
    }
    job.finish_chunk(c, std::move(coded), static_cast<uint32_t>(runs));
  });
}

std::vector<uint8_t> compress_rle_huffman(FrameJob& job, unsigned max_code_length) {
  const unsigned w = job.header.width;
  const uint64_t chunks = job.chunks.size();
  // Pass 1: the runs of every chunk.
  std::vector<std::vector<uint8_t>> values(chunks);
  std::vector<std::vector<uint16_t>> lengths(chunks);
  parallel_for(chunks, job.threads, [&](std::size_t c) {
    const uint64_t n = job.header.chunk_elements_of(c);
    const std::size_t runs = rle::count_runs(job.chunk_data(c), n, w);
    values[c].resize(runs * w);
    lengths[c].resize(runs);
    rle::encode_runs(job.chunk_data(c), n, w, values[c].data(), lengths[c].data());
  });
  // Values are coded as bytes for 1-byte elements, else as u16 halves.
  const DType vt = w == 1 ? DType::u8 : DType::u16;
  const unsigned vsize = w == 1 ? 1 : 2;
  huffman::Histogram vhist = parallel_histogram(chunks, job.threads, vt, [&](uint64_t c) {
    return std::make_tuple(static_cast<const void*>(values[c].data()), values[c].size() / vsize, uint64_t{0});
  });
  huffman::Histogram lhist = parallel_histogram(chunks, job.threads, DType::u16, [&](uint64_t c) {
    return std::make_tuple(static_cast<const void*>(lengths[c].data()), lengths[c].size(), uint64_t{0});
  });
  const huffman::Codebook vbook = huffman::build_codebook(vhist, max_code_length);
  const huffman::Codebook lbook = huffman::build_codebook(lhist, max_code_length);
  const huffman::EncodeTable vtable = huffman::make_encode_table(vbook, vt);
  const huffman::EncodeTable ltable = huffman::make_encode_table(lbook, DType::u16);
  // Pass 2: [u32 value words][value words][length words] per chunk.
  parallel_for(chunks, job.threads, [&](std::size_t c) {
    const uint64_t raw = job.chunk_raw_bytes(c);
    std::vector<uint8_t> coded;
    if (raw > 4) {
      const std::size_t budget = (raw - 4 - 1) / 4;
      coded.resize(4);
      const std::size_t runs = lengths[c].size();
      bool fits = append_huffman(values[c].data(), vt, values[c].size() / vsize, vtable, budget, coded, 0);
      const std::size_t value_words = (coded.size() - 4) / 4;
      fits = fits && append_huffman(lengths[c].data(), DType::u16, runs, ltable, budget - value_words, coded, 0);
      if (fits)
        store_le32(coded.data(), static_cast<uint32_t>(value_words));
      else
        coded.clear();
    }
    job.finish_chunk(c, std::move(coded), static_cast<uint32_t>(lengths[c].size()));
    std::vector<uint8_t>().swap(values[c]);
    std::vector<uint16_t>().swap(lengths[c]);
  });
  std::vector<uint8_t> books = huffman::serialize_codebook(vbook);
  const std::vector<uint8_t> lb = huffman::serialize_codebook(lbook);
  books.insert(books.end(), lb.begin(), lb.end());
  return books;
}

// The header area (fixed header, codebooks, index); sets the frame's size.
std::vector<uint8_t> header_area(FrameJob& job, const std::vector<uint8_t>& codebooks) {
  std::vector<ChunkEntry> index(job.chunks.size());
  for (std::size_t c = 0; c < index.size(); ++c) index[c] = job.chunks[c].entry;
  return format::write_header_area(job.header, codebooks, index);
}

// The whole frame at dst (frame_bytes): header area, then every chunk with its
// zero padding, copied on all threads; nothing is written twice, so the
// caller's buffer needs no clearing first.
void write_frame(const FrameJob& job, const std::vector<uint8_t>& header, uint8_t* dst) {
  std::memcpy(dst, header.data(), header.size());
  const std::size_t chunks = job.chunks.size();
  std::vector<uint64_t> offsets(chunks + 1);
  uint64_t at = header.size();
  for (std::size_t c = 0; c < chunks; ++c) {
    offsets[c] = at;
    at += align_up(job.chunks[c].entry.stored_bytes, 4);
  }
  offsets[chunks] = at;
  parallel_for(chunks, job.threads, [&](std::size_t c) {
    const ChunkOut& out = job.chunks[c];
    const uint8_t* src = out.arena ? out.arena->data() + out.arena_at
                         : out.bytes.empty() ? job.chunk_data(c) : out.bytes.data();
    const uint32_t n = out.entry.stored_bytes;
    std::memcpy(dst + offsets[c], src, n);
    std::memset(dst + offsets[c] + n, 0, offsets[c + 1] - offsets[c] - n);
  });
  std::memset(dst + at, 0, job.header.frame_bytes - at);
}

// Codes every chunk of the frame; returns its header area (frame_bytes set).
std::vector<uint8_t> code_frame(FrameJob& job, const uint8_t* input, uint64_t elements, const FrameParams& p) {
  const unsigned w = static_cast<unsigned>(dtype_bytes(p.dtype));
  VLEC_REQUIRE(p.chunk_elements >= format::kChunkGranule && p.chunk_elements <= format::kMaxChunkElements &&
                   p.chunk_elements % format::kChunkGranule == 0,
               "chunk size ", p.chunk_elements, " must be a multiple of ", format::kChunkGranule, " between ",
               format::kChunkGranule, " and ", format::kMaxChunkElements, " elements");
  VLEC_REQUIRE(p.codec != Codec::huffman || w <= 4, "Huffman coding takes u8, u16 or u32 elements, not ",
               to_string(p.dtype));
  job.input = input;
  job.threads = p.threads;
  job.header.codec = p.codec;
  job.header.width = static_cast<uint8_t>(w);
  job.header.elements = elements;
  job.header.chunk_elements = p.chunk_elements;
  job.chunks.resize(job.header.chunks());
  std::vector<uint8_t> codebooks;
  switch (p.codec) {
    case Codec::raw: compress_raw(job); break;
    case Codec::huffman: codebooks = compress_huffman(job, p.max_code_length, p.element_histogram); break;
    case Codec::rle: compress_rle(job); break;
    case Codec::rle_huffman: codebooks = compress_rle_huffman(job, p.max_code_length); break;
    case Codec::wavelet: VLEC_REQUIRE(false, "wavelet frames are written by wavelet_compress, not the frame encoder");
  }
  return header_area(job, codebooks);
}

}  // namespace

uint64_t raw_frame_bytes(uint64_t elements, unsigned width, uint32_t chunk_elements) {
  format::FrameHeader h;
  h.elements = elements;
  h.width = static_cast<uint8_t>(width);
  h.chunk_elements = chunk_elements;
  return h.header_area_bytes() + align_up(align_up(elements * width, 4), 8);
}

std::vector<uint8_t> compress_frame(const uint8_t* input, uint64_t elements, const FrameParams& p) {
  FrameJob job{};
  const std::vector<uint8_t> header = code_frame(job, input, elements, p);
  const unsigned w = job.header.width;
  if (p.codec != Codec::raw && job.header.frame_bytes > raw_frame_bytes(elements, w, p.chunk_elements)) {
    FrameParams raw = p;
    raw.codec = Codec::raw;
    return compress_frame(input, elements, raw);
  }
  std::vector<uint8_t> frame(job.header.frame_bytes);
  write_frame(job, header, frame.data());
  return frame;
}

std::size_t compress_frame_into(const uint8_t* input, uint64_t elements, const FrameParams& p, uint8_t* out,
                                std::size_t capacity) {
  FrameJob job{};
  const std::vector<uint8_t> header = code_frame(job, input, elements, p);
  const unsigned w = job.header.width;
  if (p.codec != Codec::raw && job.header.frame_bytes > raw_frame_bytes(elements, w, p.chunk_elements)) {
    FrameParams raw = p;
    raw.codec = Codec::raw;
    return compress_frame_into(input, elements, raw, out, capacity);
  }
  SAFETY_CHECK(job.header.frame_bytes <= capacity, ErrorCode::output_too_small, "compressed stream needs ",
               job.header.frame_bytes, " bytes but the output buffer holds ", capacity);
  write_frame(job, header, out);
  return job.header.frame_bytes;
}

}  // namespace vlec::cpu
