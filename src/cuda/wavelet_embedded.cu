// cuda/wavelet_embedded.cu: see wavelet_embedded.hpp.
#include "cuda/wavelet_embedded.hpp"

#include <algorithm>
#include <vector>

#include "cuda/codebook_gpu.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_device.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/encode_plan.hpp"

namespace vlec::cuda {

namespace {

constexpr std::size_t kAlign = 256;
constexpr uint32_t kMaxAlphabet = 65536;

std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Carve {
  std::size_t frame_temp, entries, serialized, info, total;
};

Carve carve(uint64_t n, DType t) {
  Carve c{};
  const unsigned w = static_cast<unsigned>(dtype_bytes(t));
  c.frame_temp = 0;
  c.entries = round_up(frame_encode_temp_bytes(n, w, wavelet::kEmbeddedChunkElements));
  c.serialized = c.entries + round_up(4 * std::size_t{kMaxAlphabet});
  c.info = c.serialized + round_up(codebook_serialized_capacity(kMaxAlphabet));
  c.total = c.info + kAlign;
  return c;
}

__global__ void no_error_kernel(uint64_t* error) { *error = ~0ull; }

}  // namespace

std::size_t embedded_huffman_temp_bytes(uint64_t n, DType t) { return carve(n, t).total; }

void encode_embedded_huffman(const void* symbols, uint64_t n, DType t, const huffman::Codebook& book, uint8_t* frame,
                             std::size_t capacity, uint64_t* result, void* temp, std::size_t temp_bytes,
                             cudaStream_t stream, HostWrites& writes) {
  const Carve c = carve(n, t);
  VLEC_REQUIRE(temp_bytes >= c.total, "temporary storage of ", temp_bytes, " bytes is below the ", c.total, " needed");
  VLEC_REQUIRE(book.alphabet_size >= 1 && book.alphabet_size <= (t == DType::u8 ? 256u : kMaxAlphabet),
               "embedded codebook of ", book.alphabet_size, " symbols for ", to_string(t), " symbols");
  auto* base = static_cast<uint8_t*>(temp);
  // The entries of the alphabet only: a symbol at or above it has no code,
  // and the encoder treats it so (EncodeTable reads nothing past `size`).
  std::vector<uint32_t> entries(book.alphabet_size, 0);
  for (uint32_t s = 0; s < book.alphabet_size; ++s)
    if (book.lengths[s]) entries[s] = (uint32_t{book.lengths[s]} << 24) | book.codes[s];
  const std::vector<uint8_t> serialized = huffman::serialize_codebook(book);
  const uint32_t present = static_cast<uint32_t>(
      std::count_if(book.lengths.begin(), book.lengths.end(), [](uint8_t l) { return l != 0; }));
  const std::vector<uint32_t> info = {static_cast<uint32_t>(serialized.size()), book.max_length, book.alphabet_size,
                                      present};
  writes.add(base + c.entries, entries, stream);
  writes.add(base + c.serialized, serialized, stream);
  writes.add(base + c.info, info, stream);
  FrameEncodeArgs a;
  a.in = symbols;
  a.elements = n;
  a.dtype = t;
  a.chunk_elements = wavelet::kEmbeddedChunkElements;
  a.codec = Codec::huffman;
  a.book = {reinterpret_cast<const uint32_t*>(base + c.entries), book.alphabet_size, base + c.serialized,
            reinterpret_cast<const uint32_t*>(base + c.info)};
  a.frame = frame;
  a.frame_capacity = capacity;
  a.frame_bytes = result;
  encode_frame_device(a, base + c.frame_temp, c.entries - c.frame_temp, stream);
  no_error_kernel<<<1, 1, 0, stream>>>(result + 1);
  CUDA_CHECK(cudaGetLastError());
}

device::CompressOptions embedded_frame_options(Codec codec, DType type) {
  device::CompressOptions o;
  o.codec = codec;
  o.dtype = type;
  o.chunk_elements = wavelet::kEmbeddedChunkElements;
  return o;
}

void encode_embedded_frames(const std::vector<EmbeddedGroup>& groups, uint64_t* sizes, uint8_t* temp,
                            std::size_t temp_per_stream, cudaStream_t stream, HostWrites& writes) {
  const std::vector<cudaStream_t>& side = side_streams();
  CallEvents events;
  const std::size_t used = std::min<std::size_t>(side.size(), groups.size());
  fork_side_streams(events, stream, used);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const EmbeddedGroup& j = groups[g];
    const device::CompressOptions fo = embedded_frame_options(j.codec, j.type);
    const std::size_t s = g % side.size();
    uint8_t* frame_temp = temp + s * temp_per_stream;
    const uint32_t alphabet = (j.stats->top >> j.shift) + 1;
    if (j.codec == Codec::huffman && j.n > 0 && alphabet <= kHostCodebookSymbols) {
      // The CPU writer's codebook, from the histogram the host holds.
      std::vector<uint64_t> hist;
      wavelet::histogram_at_shift(j.stats->hist, j.stats->top, j.shift, hist);
      encode_embedded_huffman(j.symbols, j.n, j.type, huffman::build_codebook(hist, 0), j.frame,
                              device::compress_capacity(j.n, fo), sizes + 2 * g, frame_temp, temp_per_stream, side[s],
                              writes);
      continue;
    }
    device::compress(j.symbols, j.n, j.frame, device::compress_capacity(j.n, fo), sizes + 2 * g, sizes + 2 * g + 1,
                     frame_temp, temp_per_stream, side[s], fo);
  }
  join_side_streams(events, stream, used);
}

}  // namespace vlec::cuda
