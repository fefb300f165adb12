// cuda/device_compress.cu: the device compression pipeline behind
// vlec/device.hpp: GPU histogram, GPU codebook, GPU frame encoder (Huffman),
// or the GPU run-length frame encoder (rle; rle+huffman builds its two
// codebooks from the runs inside the frame encoder), all on one stream with
// no host round trip in between.
#include "vlec/device.hpp"

#include <algorithm>

#include "cuda/codebook_gpu.hpp"
#include "cuda/device_compress.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/histogram_gpu.hpp"

namespace vlec::device {

namespace {

constexpr std::size_t kAlign = 256;


Codec frame_codec(Codec c) { return c == Codec::raw ? Codec::huffman : c; }

struct Layout {
  std::size_t hist, bad, hist_temp, book_temp, lengths, entries, serialized, info, chunk_sums, frame_temp, total;
  std::size_t hist_temp_bytes, book_temp_bytes, frame_temp_bytes;
};

uint32_t alphabet_capacity(DType t) { return t == DType::u8 ? 256 : 65536; }

// The codebook's capacity: the type's alphabet, or the caller's bound on it.
uint32_t codebook_capacity(DType t, uint32_t bound) {
  return bound ? std::min(bound, alphabet_capacity(t)) : alphabet_capacity(t);
}

// The frame encoder's strategy for the options (its temp is sized for it);
// `automatic` is cuda::default_encode_strategy.
cuda::EncodeStrategy encode_strategy(const CompressOptions& o) {
  switch (o.encoder) {
    case Encoder::lanes: return cuda::EncodeStrategy::lanes;
    case Encoder::pavle: return cuda::EncodeStrategy::pavle;
    case Encoder::reduce_shuffle: return cuda::EncodeStrategy::reduce_shuffle;
    case Encoder::warp: return cuda::EncodeStrategy::warp;
    case Encoder::automatic: break;
  }
  return cuda::default_encode_strategy(o.chunk_elements);
}

// Whether stage 1 takes the chunks' checksums with the histogram
// (histogram_u8_chunk_hashes, histogram_u16_chunk_hashes), so that the lanes
// encoder does not hash: u8 or u16 elements counted by stage 1 and coded by
// the lanes encoder, in chunks of whole KiB (bytes: up to 64 KiB, every
// chunk size the CLI picks for bytes; u16: up to u16_hashed_chunk_max_bytes,
// where it measured faster).
bool hash_with_histogram(const void* d_in, const CompressOptions& o) {
  if (!cuda::hash_chunks_with_histogram || o.codec != Codec::huffman ||
      encode_strategy(o) != cuda::EncodeStrategy::lanes)
    return false;
  if (o.dtype == DType::u8) return cuda::histogram_chunk_hashes_fit(d_in, o.chunk_elements);
  return o.dtype == DType::u16 && uint64_t{2} * o.chunk_elements <= cuda::u16_hashed_chunk_max_bytes &&
         cuda::histogram_u16_chunk_hashes_fit(d_in, static_cast<uint32_t>(2 * o.chunk_elements));
}

cuda::RleStrategy rle_strategy(uint64_t elements, const CompressOptions& o) {
  switch (o.rle_strategy) {
    case RleStrategy::parle: return cuda::RleStrategy::parle;
    case RleStrategy::chunked: return cuda::RleStrategy::chunked;
    case RleStrategy::automatic: break;
  }
  return cuda::default_rle_strategy(elements, o.chunk_elements);
}

Layout layout(uint64_t elements, const CompressOptions& o, uint32_t bound = 0) {
  const unsigned w = static_cast<unsigned>(dtype_bytes(o.dtype));
  const uint32_t cap = codebook_capacity(o.dtype, bound);
  Layout l{};
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += (bytes + kAlign - 1) / kAlign * kAlign;
    return here;
  };
  l.hist_temp_bytes = o.codec == Codec::huffman ? cuda::histogram_temp_bytes(elements, o.dtype) : 0;
  l.book_temp_bytes = o.codec == Codec::huffman ? cuda::codebook_temp_bytes(cap) : 0;
  l.frame_temp_bytes = cuda::frame_encode_temp_bytes(elements, w, o.chunk_elements, frame_codec(o.codec),
                                                     rle_strategy(elements, o), encode_strategy(o));
  l.hist = take(8 * cuda::kHistogramBins);
  l.bad = take(8);
  l.hist_temp = take(l.hist_temp_bytes);
  l.book_temp = take(l.book_temp_bytes);
  l.lengths = take(cap);
  l.entries = take(4 * std::size_t{cap});
  l.serialized = take(cuda::codebook_serialized_capacity(cap));
  l.info = take(16);
  const uint64_t chunks = o.chunk_elements ? (elements + o.chunk_elements - 1) / o.chunk_elements : 0;
  l.chunk_sums = take(o.codec == Codec::huffman && (o.dtype == DType::u8 || o.dtype == DType::u16) ? 8 * chunks : 0);
  l.frame_temp = take(l.frame_temp_bytes);
  l.total = at;
  return l;
}

}  // namespace

std::size_t compress_capacity(uint64_t elements, const CompressOptions& o) {
  return cuda::frame_encode_capacity(elements, static_cast<unsigned>(dtype_bytes(o.dtype)), o.chunk_elements);
}

std::size_t compress_temp_bytes(uint64_t elements, const CompressOptions& o) { return layout(elements, o).total; }

namespace {

// What the pipeline's stages share: the checks, the temp layout, the codebook's place.
struct Stages {
  Layout l;
  uint8_t* t;
  uint32_t cap;  // codebook capacity (Huffman)
  Stages(uint64_t elements, void* d_temp, std::size_t temp_bytes, const CompressOptions& o, uint32_t bound)
      : l(layout(elements, o, bound)), t(static_cast<uint8_t*>(d_temp)), cap(codebook_capacity(o.dtype, bound)) {
    VLEC_REQUIRE(o.codec != Codec::huffman || o.dtype != DType::u64, "Huffman coding takes u8, u16 or u32 elements");
    VLEC_REQUIRE((o.codec != Codec::rle && o.codec != Codec::rle_huffman) ||
                     rle_strategy(elements, o) != cuda::RleStrategy::parle || elements <= UINT32_MAX,
                 "the parle RLE strategy takes fewer than 2^32 elements");
    VLEC_REQUIRE(temp_bytes >= l.total, "temporary storage of ", temp_bytes, " bytes is below the ", l.total,
                 " needed");
  }
  cuda::DeviceCodebookOut book() const {
    return {t + l.lengths, reinterpret_cast<uint32_t*>(t + l.entries), t + l.serialized,
            reinterpret_cast<uint32_t*>(t + l.info)};
  }
  uint64_t* bad() const { return reinterpret_cast<uint64_t*>(t + l.bad); }
  uint64_t* chunk_sums() const { return reinterpret_cast<uint64_t*>(t + l.chunk_sums); }
};

// Stage 1 of a Huffman frame: the histogram (unless `given_hist` holds it:
// `bound` counts) and the codebook, into the temp.
void codebook_stage(const Stages& st, const void* d_in, uint64_t elements, const CompressOptions& o,
                    const uint64_t* given_hist, cudaStream_t s) {
  const uint64_t* hist = given_hist;
  if (!hist) {
    uint64_t* counted = reinterpret_cast<uint64_t*>(st.t + st.l.hist);
    const bool hashed = hash_with_histogram(d_in, o);
    if (hashed && o.dtype == DType::u8)
      cuda::histogram_u8_chunk_hashes(d_in, elements, o.chunk_elements, counted, st.bad(), st.chunk_sums(), s);
    else if (hashed)
      cuda::histogram_u16_chunk_hashes(d_in, elements, static_cast<uint32_t>(2 * o.chunk_elements), counted, st.bad(),
                                       st.chunk_sums(), s);
    else
      cuda::histogram_device(d_in, elements, o.dtype, counted, st.bad(), st.t + st.l.hist_temp, st.l.hist_temp_bytes,
                             s);
    hist = counted;
  }
  cuda::build_codebook_device(hist, st.cap, o.max_code_length, st.t + st.l.book_temp, st.l.book_temp_bytes, st.book(),
                              s);
}

// Stage 2: the frame (Huffman with the codebook stage 1 left in the temp;
// `counted`: stage 1 counted the histogram, whose first element outside the
// alphabet the report gives).
cuda::FrameEncodeArgs frame_args(const Stages& st, const void* d_in, uint64_t elements, void* d_frame,
                                 std::size_t frame_capacity, uint64_t* d_frame_bytes, uint64_t* d_error,
                                 const CompressOptions& o, bool counted) {
  cuda::FrameEncodeArgs f;
  f.in = d_in;
  f.elements = elements;
  f.dtype = o.dtype;
  f.chunk_elements = o.chunk_elements;
  f.frame = static_cast<uint8_t*>(d_frame);
  f.frame_capacity = frame_capacity;
  f.frame_bytes = d_frame_bytes;
  f.strategy = encode_strategy(o);
  f.codec = frame_codec(o.codec);
  f.rle_strategy = rle_strategy(elements, o);
  f.max_code_length = o.max_code_length;
  f.bad = nullptr;  // no histogram pass: nothing outside an alphabet
  if (o.codec != Codec::huffman) {
    f.raw = o.codec == Codec::raw;
  } else {
    const cuda::DeviceCodebookOut book = st.book();
    f.book = {book.encode_entry, st.cap, book.serialized, book.info};
    if (counted) f.bad = st.bad();
    if (counted && hash_with_histogram(d_in, o)) f.chunk_checksums = st.chunk_sums();  // stage 1 took them
  }
  // *d_error (~0 all well; ~1 the fixed length limit cannot hold the data's
  // alphabet, the frame then raw; else the first element outside the
  // alphabet) is written by the frame encoder's last kernel.
  f.error = d_error;
  return f;
}
void frame_stage(const Stages& st, const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
                 uint64_t* d_frame_bytes, uint64_t* d_error, const CompressOptions& o, bool counted, cudaStream_t s) {
  cuda::encode_frame_device(frame_args(st, d_in, elements, d_frame, frame_capacity, d_frame_bytes, d_error, o, counted),
                            st.t + st.l.frame_temp, st.l.frame_temp_bytes, s);
}

// `given_hist`, if not null, holds the data's histogram (`bound` counts) for a
// Huffman frame: no histogram pass, and no check for elements outside it.
void compress_pipeline(const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
                       uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp, std::size_t temp_bytes,
                       cudaStream_t stream, const CompressOptions& o, uint32_t bound,
                       const uint64_t* given_hist = nullptr) {
  const Stages st(elements, d_temp, temp_bytes, o, bound);
  if (o.codec == Codec::huffman) codebook_stage(st, d_in, elements, o, given_hist, stream);
  frame_stage(st, d_in, elements, d_frame, frame_capacity, d_frame_bytes, d_error, o,
              o.codec == Codec::huffman && !given_hist, stream);
}

}  // namespace

void compress(const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
              uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp, std::size_t temp_bytes, Stream stream,
              const CompressOptions& o) {
  compress_pipeline(d_in, elements, d_frame, frame_capacity, d_frame_bytes, d_error, d_temp, temp_bytes, stream, o,
                    0);
}

}  // namespace vlec::device

namespace vlec::cuda {

void compress_bounded_alphabet(const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
                               uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp, std::size_t temp_bytes,
                               cudaStream_t stream, const device::CompressOptions& o, uint32_t alphabet) {
  VLEC_REQUIRE(alphabet >= 1, "an alphabet bound of at least one symbol");
  device::compress_pipeline(d_in, elements, d_frame, frame_capacity, d_frame_bytes, d_error, d_temp, temp_bytes,
                            stream, o, alphabet);
}

void build_codebook_from_histogram(const uint64_t* d_hist, uint64_t elements, void* d_temp, std::size_t temp_bytes,
                                   cudaStream_t stream, const device::CompressOptions& o, uint32_t alphabet) {
  VLEC_REQUIRE(alphabet >= 1 && d_hist != nullptr, "a histogram of at least one symbol");
  VLEC_REQUIRE(o.codec == Codec::huffman, "a given histogram makes a Huffman frame");
  const device::Stages st(elements, d_temp, temp_bytes, o, alphabet);
  device::codebook_stage(st, nullptr, elements, o, d_hist, stream);
}

std::optional<CodebookJob> codebook_job_from_histogram(const uint64_t* d_hist, uint64_t elements, void* d_temp,
                                                       std::size_t temp_bytes, const device::CompressOptions& o,
                                                       uint32_t alphabet) {
  VLEC_REQUIRE(alphabet >= 1 && d_hist != nullptr, "a histogram of at least one symbol");
  VLEC_REQUIRE(o.codec == Codec::huffman, "a given histogram makes a Huffman frame");
  const device::Stages st(elements, d_temp, temp_bytes, o, alphabet);
  if (st.cap > codebook_batch_capacity()) return std::nullopt;
  return CodebookJob{d_hist, st.cap, o.max_code_length, st.book()};
}

namespace {

// A codebook built outside the frame's temp, as the frame reads it.
void use_book(FrameEncodeArgs& args, const device::Stages& st, const DeviceCodebookOut* book) {
  if (!book) return;
  VLEC_REQUIRE(book->encode_entry && book->serialized && book->info, "a given codebook needs its tables");
  args.book = {book->encode_entry, st.cap, book->serialized, book->info};
}

}  // namespace

void encode_with_built_codebook(const void* d_in, uint64_t elements, void* d_frame, std::size_t frame_capacity,
                                uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp, std::size_t temp_bytes,
                                cudaStream_t stream, const device::CompressOptions& o, uint32_t alphabet,
                                const DeviceCodebookOut* book) {
  VLEC_REQUIRE(o.codec == Codec::huffman, "a built codebook makes a Huffman frame");
  const device::Stages st(elements, d_temp, temp_bytes, o, alphabet);
  FrameEncodeArgs args = device::frame_args(st, d_in, elements, d_frame, frame_capacity, d_frame_bytes, d_error, o,
                                            false);
  use_book(args, st, book);
  encode_frame_device(args, st.t + st.l.frame_temp, st.l.frame_temp_bytes, stream);
}

std::optional<FrameBatchItem> built_codebook_frame(const void* d_in, uint64_t elements, void* d_frame,
                                                   std::size_t frame_capacity, uint64_t* d_frame_bytes,
                                                   uint64_t* d_error, void* d_temp, std::size_t temp_bytes,
                                                   const device::CompressOptions& o, uint32_t alphabet,
                                                   const DeviceCodebookOut* book) {
  VLEC_REQUIRE(o.codec == Codec::huffman, "a built codebook makes a Huffman frame");
  const device::Stages st(elements, d_temp, temp_bytes, o, alphabet);
  FrameBatchItem item;
  item.args = device::frame_args(st, d_in, elements, d_frame, frame_capacity, d_frame_bytes, d_error, o, false);
  use_book(item.args, st, book);
  if (item.args.strategy != EncodeStrategy::warp || dtype_bytes(o.dtype) > 2) return std::nullopt;
  item.temp = st.t + st.l.frame_temp;
  item.temp_bytes = st.l.frame_temp_bytes;
  return item;
}

void compress_with_histogram(const void* d_in, uint64_t elements, const uint64_t* d_hist, void* d_frame,
                             std::size_t frame_capacity, uint64_t* d_frame_bytes, uint64_t* d_error, void* d_temp,
                             std::size_t temp_bytes, cudaStream_t stream, const device::CompressOptions& o,
                             uint32_t alphabet) {
  VLEC_REQUIRE(alphabet >= 1 && d_hist != nullptr, "a histogram of at least one symbol");
  VLEC_REQUIRE(o.codec == Codec::huffman, "a given histogram makes a Huffman frame");
  device::compress_pipeline(d_in, elements, d_frame, frame_capacity, d_frame_bytes, d_error, d_temp, temp_bytes,
                            stream, o, alphabet, d_hist);
}

}  // namespace vlec::cuda
