// api/api.cpp: the public host-buffer API. It validates the caller's
// arguments, picks backend and codec, and walks the frames of a stream; the
// coding itself is done by the CPU backend (cpu/) or the CUDA backend (cuda/).
#include <algorithm>
#include <cstring>
#include <memory>

#include "common/bits.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cpu/frame_codec.hpp"
#include "cuda/backend.hpp"
#include "format/frame.hpp"
#include "vlec/vlec.hpp"
#include "vlec/wavelet.hpp"
#include "wavelet/codec.hpp"

namespace vlec {

namespace {

// Typed chunk loops need element-aligned buffers; a misaligned caller buffer
// is copied once into an aligned one (rare: malloc and cudaMallocHost align).
bool aligned(const void* p, std::size_t width) { return reinterpret_cast<uintptr_t>(p) % width == 0; }

uint32_t chunk_elements_of(const CompressOptions& o) {
  return o.chunk_elements ? o.chunk_elements : kDefaultChunkElements;
}

bool use_cuda(Backend b) {
  if (b == Backend::cuda) {
    SAFETY_CHECK(cuda::available(), ErrorCode::unavailable, "the CUDA backend was requested but ",
                 cuda::built() ? "no usable GPU was found" : "vlec was built without CUDA");
    return true;
  }
  return b == Backend::automatic && cuda::available();
}

Codec resolve_codec(const void* input, std::size_t bytes, const CompressOptions& o) {
  switch (o.codec) {
    case CodecChoice::raw: return Codec::raw;
    case CodecChoice::huffman: return Codec::huffman;
    case CodecChoice::rle: return Codec::rle;
    case CodecChoice::rle_huffman: return Codec::rle_huffman;
    case CodecChoice::wavelet: return Codec::wavelet;
    case CodecChoice::automatic: break;
  }
  return cpu::choose_codec(static_cast<const uint8_t*>(input), bytes / dtype_bytes(o.dtype), o.dtype, o.threads);
}

// Walks the frames of a stream: `visit` gets each ordinary frame (parsed and
// checked), `visit_wavelet` each wavelet frame (parsed and checked).
template <typename Visit, typename VisitWavelet>
void for_each_frame(const uint8_t* s, std::size_t bytes, Visit&& visit, VisitWavelet&& visit_wavelet) {
  uint64_t at = 0;
  SAFETY_CHECK(bytes > 0, ErrorCode::truncated_stream, "empty input is not a vlec stream");
  while (at < bytes) {
    if (format::read_fixed_header(s + at, bytes - at, at).codec == Codec::wavelet) {
      const wavelet::ParsedWavelet w = wavelet::parse_wavelet_frame(s + at, bytes - at, at);
      visit_wavelet(w);
      at += w.frame.frame_bytes;
      continue;
    }
    const format::ParsedFrame f = format::parse_frame(s + at, bytes - at, at);
    visit(f);
    at += f.header.frame_bytes;
  }
}

// vlec::compress with CodecChoice::wavelet: the input as a 1D signal.
WaveletImage signal_of(std::size_t bytes, const CompressOptions& o) {
  VLEC_REQUIRE(o.dtype == DType::u8 || o.dtype == DType::u16, "the wavelet codec takes u8 or u16 samples, not ",
               to_string(o.dtype));
  VLEC_REQUIRE(bytes % dtype_bytes(o.dtype) == 0, "input of ", bytes, " bytes is not a whole number of ",
               to_string(o.dtype), " elements");
  WaveletImage im;
  im.width = bytes / dtype_bytes(o.dtype);
  im.dtype = o.dtype;
  return im;
}

WaveletOptions wavelet_options_of(const CompressOptions& o) {
  WaveletOptions w;
  w.threads = o.threads;
  w.backend = o.backend;
  return w;
}

}  // namespace

std::size_t compress_bound(std::size_t input_bytes, const CompressOptions& o) {
  const std::size_t w = dtype_bytes(o.dtype);
  const std::size_t raw = cpu::raw_frame_bytes(input_bytes / w, static_cast<unsigned>(w), chunk_elements_of(o));
  if (o.codec == CodecChoice::wavelet && input_bytes >= w)
    return std::max(raw, wavelet_compress_bound(signal_of(input_bytes, o), 0));
  return raw;
}

namespace {

// Checks the arguments, aligns the input if needed, resolves the codec; then
// `gpu(input, params)` or `cpu(input, params)` writes the frame.
template <typename Gpu, typename Cpu>
auto compress_with(const void* input, std::size_t bytes, const CompressOptions& o, Gpu&& gpu, Cpu&& cpu) {
  const std::size_t w = dtype_bytes(o.dtype);
  VLEC_REQUIRE(bytes % w == 0, "input of ", bytes, " bytes is not a whole number of ", to_string(o.dtype),
               " elements");
  VLEC_REQUIRE(input != nullptr || bytes == 0, "null input buffer");
  VLEC_REQUIRE(o.max_code_length <= huffman::kMaxCodeLength, "maximum code length ", o.max_code_length,
               " is above ", huffman::kMaxCodeLength);
  std::vector<uint8_t> copy;
  if (!aligned(input, w)) {
    copy.assign(static_cast<const uint8_t*>(input), static_cast<const uint8_t*>(input) + bytes);
    input = copy.data();
  }
  cpu::FrameParams p;
  p.codec = resolve_codec(input, bytes, o);
  p.dtype = o.dtype;
  p.chunk_elements = chunk_elements_of(o);
  p.max_code_length = o.max_code_length;
  p.threads = o.threads;
  if (use_cuda(o.backend) && cuda::can_encode(p.codec, p.dtype)) return gpu(static_cast<const uint8_t*>(input), p);
  // The rle codecs, and every codec without a GPU, on the CPU: the same bytes.
  return cpu(static_cast<const uint8_t*>(input), p);
}

}  // namespace

std::vector<uint8_t> compress(const void* input, std::size_t bytes, const CompressOptions& o) {
  if (o.codec == CodecChoice::wavelet) return wavelet_compress(input, signal_of(bytes, o), wavelet_options_of(o));
  const uint64_t elements = bytes / dtype_bytes(o.dtype);
  return compress_with(
      input, bytes, o,
      [&](const uint8_t* in, const cpu::FrameParams& p) {
        if (cuda::stream_in_pieces(bytes)) {
          // Through the GPU in pieces (Huffman), or on the CPU: the same bytes.
          if (p.codec != Codec::huffman) return cpu::compress_frame(in, elements, p);
          const std::size_t bound = compress_bound(bytes, o);
          std::unique_ptr<uint8_t[]> frame(new uint8_t[bound]);  // not zeroed: every byte is written
          const std::size_t n = cuda::compress_huffman_streamed(in, elements, p.dtype, p.chunk_elements,
                                                                p.max_code_length, p.threads, frame.get(), bound);
          return std::vector<uint8_t>(frame.get(), frame.get() + n);
        }
        return cuda::compress_frame(in, elements, p.codec, p.dtype, p.chunk_elements, p.max_code_length);
      },
      [&](const uint8_t* in, const cpu::FrameParams& p) { return cpu::compress_frame(in, elements, p); });
}

std::size_t compress(const void* input, std::size_t bytes, void* out, std::size_t capacity,
                     const CompressOptions& o) {
  if (o.codec == CodecChoice::wavelet)
    return wavelet_compress(input, signal_of(bytes, o), out, capacity, wavelet_options_of(o));
  const uint64_t elements = bytes / dtype_bytes(o.dtype);
  return compress_with(
      input, bytes, o,
      [&](const uint8_t* in, const cpu::FrameParams& p) {
        if (cuda::stream_in_pieces(bytes)) {
          // Straight into the caller's buffer, piece by piece (Huffman), or on the CPU.
          if (p.codec == Codec::huffman)
            return cuda::compress_huffman_streamed(in, elements, p.dtype, p.chunk_elements, p.max_code_length,
                                                   p.threads, static_cast<uint8_t*>(out), capacity);
          return cpu::compress_frame_into(in, elements, p, static_cast<uint8_t*>(out), capacity);
        }
        const std::vector<uint8_t> frame =
            cuda::compress_frame(in, elements, p.codec, p.dtype, p.chunk_elements, p.max_code_length);
        SAFETY_CHECK(frame.size() <= capacity, ErrorCode::output_too_small, "compressed stream needs ",
                     frame.size(), " bytes but the output buffer holds ", capacity);
        std::memcpy(out, frame.data(), frame.size());
        return frame.size();
      },
      [&](const uint8_t* in, const cpu::FrameParams& p) {
        // Straight into the caller's buffer: no second copy of the frame.
        return cpu::compress_frame_into(in, elements, p, static_cast<uint8_t*>(out), capacity);
      });
}

uint64_t frame_size(const void* data, std::size_t available) {
  return format::read_fixed_header(static_cast<const uint8_t*>(data), available, 0).frame_bytes;
}

StreamInfo inspect(const void* stream, std::size_t bytes) {
  StreamInfo info;
  for_each_frame(static_cast<const uint8_t*>(stream), bytes, [&](const format::ParsedFrame& f) {
    FrameInfo fi{};
    const format::FrameHeader& h = f.header;
    fi.codec = h.codec;
    fi.dtype = static_cast<DType>(h.width);
    fi.elements = h.elements;
    fi.chunk_elements = h.chunk_elements;
    fi.chunks = h.chunks();
    for (uint64_t c = 0; c < fi.chunks; ++c)
      fi.raw_chunks += f.index[c].stored_bytes == h.chunk_elements_of(c) * h.width;
    fi.frame_bytes = h.frame_bytes;
    fi.header_bytes = h.header_area_bytes();
    fi.max_code_length = f.codebooks[0].max_length;
    fi.alphabet_size = f.codebooks[0].alphabet_size;
    fi.format_major = h.major;
    fi.format_minor = h.minor;
    info.frames.push_back(fi);
    info.elements += h.elements;
    info.decompressed_bytes += h.elements * h.width;
  }, [&](const wavelet::ParsedWavelet& w) {
    info.frames.push_back(wavelet::frame_info(w));
    info.elements += w.frame.elements;
    info.decompressed_bytes += w.output_bytes();
  });
  info.stream_bytes = bytes;
  return info;
}

uint64_t decompressed_size(const void* stream, std::size_t bytes) {
  // Each frame's header checksum is verified before its element count is
  // believed, so a corrupt count cannot make a caller allocate a huge buffer.
  uint64_t total = 0;
  for_each_frame(static_cast<const uint8_t*>(stream), bytes,
                 [&](const format::ParsedFrame& f) { total += f.header.elements * f.header.width; },
                 [&](const wavelet::ParsedWavelet& w) { total += w.output_bytes(); });
  return total;
}

std::size_t decompress(const void* stream, std::size_t bytes, void* out, std::size_t capacity,
                       const DecompressOptions& o) {
  const bool gpu = use_cuda(o.backend);
  std::size_t written = 0;
  for_each_frame(static_cast<const uint8_t*>(stream), bytes, [&](const format::ParsedFrame& f) {
    const uint64_t n = f.header.elements * f.header.width;
    SAFETY_CHECK(n <= capacity - written, ErrorCode::output_too_small, "decompressed data needs more than the ",
                 capacity, " bytes of the output buffer");
    uint8_t* dst = static_cast<uint8_t*>(out) + written;
    std::vector<uint8_t> copy;
    if (!aligned(dst, f.header.width)) copy.resize(n);
    uint8_t* target = copy.empty() ? dst : copy.data();
    if (gpu && cuda::can_decode(f) && cuda::stream_in_pieces(n))
      cuda::decompress_frame_streamed(f, target, o.threads);
    else if (gpu && cuda::can_decode(f))
      cuda::decompress_frame(f, target);
    else
      cpu::decompress_frame(f, target, o.threads);
    if (!copy.empty()) std::memcpy(dst, copy.data(), n);
    written += n;
  }, [&](const wavelet::ParsedWavelet& w) {
    // With a GPU, wavelet frames decode there (cuda/wavelet_decode.cu: same
    // bytes and errors); axes of 2^30 samples or more decode on the CPU.
    const uint64_t n = w.output_bytes();
    SAFETY_CHECK(n <= capacity - written, ErrorCode::output_too_small, "decompressed data needs more than the ",
                 capacity, " bytes of the output buffer");
    if (gpu && cuda::can_decode_wavelet(w))
      cuda::decompress_wavelet(w, static_cast<uint8_t*>(out) + written);
    else
      wavelet::decompress(w, static_cast<uint8_t*>(out) + written, o.threads);
    written += n;
  });
  return written;
}

std::vector<uint8_t> decompress(const void* stream, std::size_t bytes, const DecompressOptions& o) {
  std::vector<uint8_t> out(decompressed_size(stream, bytes));
  decompress(stream, bytes, out.data(), out.size(), o);
  return out;
}

Codec choose_codec(const void* input, std::size_t bytes, DType dtype) {
  CompressOptions o;
  o.dtype = dtype;
  VLEC_REQUIRE(bytes % dtype_bytes(dtype) == 0, "input is not a whole number of elements");
  std::vector<uint8_t> copy;
  if (!aligned(input, dtype_bytes(dtype))) {
    copy.assign(static_cast<const uint8_t*>(input), static_cast<const uint8_t*>(input) + bytes);
    input = copy.data();
  }
  return resolve_codec(input, bytes, o);
}

bool cuda_available() { return cuda::available(); }

WaveletImage wavelet_image(const void* stream, std::size_t bytes) {
  VLEC_REQUIRE(stream != nullptr || bytes == 0, "null stream");
  return wavelet::parse_wavelet_frame(static_cast<const uint8_t*>(stream), bytes, 0).header.image;
}

}  // namespace vlec
