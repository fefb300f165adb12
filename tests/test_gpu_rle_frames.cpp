// tests/test_gpu_rle_frames.cpp: whole `rle` and `rle+huffman` frames on the
// GPU (vlec::device::compress / decompress, cuda/rle_frame.hpp,
// cuda/rle_huffman_frame.cu, cuda/rle_huffman_decode.cu)
// against the CPU backend. Over every width, both RLE strategies, chunk sizes
// from 128 to 2^20 and odd input sizes, on data shaped like real data (byte
// runs, the sparse volume, quantization codes, skewed bytes, noise whose
// chunks are stored raw), empty input, one element, one repeated value (runs
// longer than 65,536), alternating values, and for rle+huffman fixed code
// length limits: the GPU frame must equal the
// CPU's compress() byte for byte (the frame buffer is poisoned first, so every
// byte must be written), the GPU must decode its own and the CPU's streams,
// and the CPU the GPU's. Corrupted and truncated streams must be rejected by
// the GPU decoder with the CPU's error code (GpuRleFrames.CorruptionIsReported,
// run under compute-sanitizer memcheck by scripts/gpu-check.sh). Every case
// prints its seed. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/checksum.hpp"
#include "cpu/frame_codec.hpp"
#include "cuda/cuda_check.hpp"
#include "test_util.hpp"
#include "vlec/device.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

const DecompressOptions kGpu{0, Backend::cuda};
const DecompressOptions kCpu{0, Backend::cpu};

using test::cpu_frame;

// One rle frame written by device::compress; the frame buffer is poisoned.
std::vector<uint8_t> gpu_frame(const std::vector<uint8_t>& data, DType t, uint32_t chunk,
                               device::RleStrategy strategy, Codec codec = Codec::rle, unsigned limit = 0) {
  const uint64_t n = data.size() / dtype_bytes(t);
  device::CompressOptions o;
  o.codec = codec;
  o.max_code_length = limit;
  o.dtype = t;
  o.chunk_elements = chunk;
  o.rle_strategy = strategy;
  DeviceBuffer<uint8_t> in(std::max<std::size_t>(data.size(), 16)), frame(device::compress_capacity(n, o)),
      temp(std::max<std::size_t>(device::compress_temp_bytes(n, o), 16));
  DeviceBuffer<uint64_t> result(2);
  if (!data.empty()) CUDA_CHECK(cudaMemcpy(in.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(frame.get(), 0xA5, frame.size()));
  device::compress(in.get(), n, frame.get(), frame.size(), result.get(), result.get() + 1, temp.get(), temp.size(),
                   nullptr, o);
  uint64_t r[2] = {0, 0};
  CUDA_CHECK(cudaMemcpy(r, result.get(), sizeof r, cudaMemcpyDeviceToHost));
  EXPECT_EQ(r[1], ~0ull);
  EXPECT_LE(r[0], frame.size());
  std::vector<uint8_t> out(std::min<uint64_t>(r[0], frame.size()));
  if (!out.empty()) CUDA_CHECK(cudaMemcpy(out.data(), frame.get(), out.size(), cudaMemcpyDeviceToHost));
  return out;
}

// device::decompress of a stream uploaded to the GPU.
std::vector<uint8_t> gpu_decode(const std::vector<uint8_t>& s) {
  DeviceBuffer<uint8_t> d_s(std::max<std::size_t>(s.size(), 16));
  if (!s.empty()) CUDA_CHECK(cudaMemcpy(d_s.get(), s.data(), s.size(), cudaMemcpyHostToDevice));
  const uint64_t bytes = device::decompressed_size(d_s.get(), s.size());
  DeviceBuffer<uint8_t> out(std::max<uint64_t>(bytes, 16)),
      temp(std::max<std::size_t>(device::decompress_temp_bytes(d_s.get(), s.size()), 16));
  const std::size_t got = device::decompress(d_s.get(), s.size(), out.get(), out.size(), temp.get(), temp.size(), nullptr);
  EXPECT_EQ(got, bytes);
  std::vector<uint8_t> h(got);
  if (got) CUDA_CHECK(cudaMemcpy(h.data(), out.get(), got, cudaMemcpyDeviceToHost));
  return h;
}

std::size_t first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return i;
  return n;
}

// The full check for one input: bytes equal the CPU's for both strategies,
// and every cross decode gives the input back.
void check_roundtrip(const std::vector<uint8_t>& data, DType t, uint32_t chunk, Codec codec = Codec::rle,
                     unsigned limit = 0) {
  SCOPED_TRACE(std::string(to_string(codec)) + " limit " + std::to_string(limit));
  const std::vector<uint8_t> cpu = cpu_frame(data, t, chunk, codec, limit);
  for (device::RleStrategy s : {device::RleStrategy::parle, device::RleStrategy::chunked}) {
    SCOPED_TRACE(s == device::RleStrategy::parle ? "parle" : "chunked");
    const std::vector<uint8_t> gpu = gpu_frame(data, t, chunk, s, codec, limit);
    ASSERT_EQ(gpu.size(), cpu.size());
    ASSERT_TRUE(gpu == cpu) << "first difference at byte " << first_difference(gpu, cpu);
  }
  ASSERT_EQ(gpu_decode(cpu), data);
  ASSERT_EQ(decompress(cpu.data(), cpu.size(), kGpu), data);
  ASSERT_EQ(decompress(cpu.data(), cpu.size(), kCpu), data);
}

TEST(GpuRleFrames, MatchCpuOverTheMatrix) {
  REQUIRE_GPU();
  for (auto [gen, t] : {std::pair{"runs", DType::u8}, std::pair{"volume", DType::u8}, std::pair{"skewed", DType::u8},
                        std::pair{"uniform", DType::u8}, std::pair{"quant1024", DType::u16},
                        std::pair{"runs", DType::u16}, std::pair{"volume", DType::u32},
                        std::pair{"runs", DType::u64}, std::pair{"uniform", DType::u64}}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{127}, std::size_t{128}, std::size_t{4097},
                          std::size_t{65537}, std::size_t{300007}}) {
      const uint64_t seed = test::base_seed() + n;
      const std::vector<uint8_t> data = test::sample(gen, n, t, seed);
      for (uint32_t chunk : {128u, 4096u, 65536u, 1u << 20}) {
        SCOPED_TRACE(std::string(gen) + " " + std::string(to_string(t)) + " n " + std::to_string(n) + " chunk " +
                     std::to_string(chunk) + " seed " + std::to_string(seed));
        check_roundtrip(data, t, chunk);
        check_roundtrip(data, t, chunk, Codec::rle_huffman);
      }
    }
  }
}

TEST(GpuRleFrames, EdgeCases) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 17;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64}) {
    const unsigned w = static_cast<unsigned>(dtype_bytes(t));
    SCOPED_TRACE(std::string(to_string(t)));
    // Empty input, one element.
    for (Codec codec : {Codec::rle, Codec::rle_huffman}) {
    check_roundtrip({}, t, 4096, codec);
    std::vector<uint8_t> one(w);
    for (auto& b : one) b = static_cast<uint8_t>(rng() | 1);
    check_roundtrip(one, t, 128, codec);
    // One value everywhere: runs of 65,536 and a remainder in chunks up to 2^20,
    // including chunks made of one run of exactly 65,536.
    std::vector<uint8_t> same(w * ((std::size_t{1} << 20) + 3 * 65536 + 5));
    for (std::size_t i = 0; i < same.size(); ++i) same[i] = static_cast<uint8_t>(0xC3 ^ (i % w));
    for (uint32_t chunk : {65536u, 131072u, 1u << 20, 1u << 24}) check_roundtrip(same, t, chunk, codec);
    // Alternating values: no runs, every chunk stored raw.
    std::vector<uint8_t> alt(w * 70001);
    for (std::size_t i = 0; i < alt.size(); ++i) alt[i] = static_cast<uint8_t>((i / w) % 2 ? 0x5A : 0xA5);
    check_roundtrip(alt, t, 4096, codec);
    // Coded and raw chunks interleaved; the largest values; runs that end on
    // chunk boundaries and cross them; long runs between noise.
    std::vector<uint8_t> mix(w * 500000);
    std::size_t i = 0;
    for (int seg = 0; i < mix.size() / w; ++seg) {
      const std::size_t len = seg % 3 == 0 ? 4096 : seg % 3 == 1 ? 1 + rng() % 200000 : 1 + rng() % 64;
      const bool noise = seg % 5 == 2;
      uint64_t v = seg % 7 == 0 ? ~uint64_t{0} : rng();
      for (std::size_t k = 0; k < len && i < mix.size() / w; ++k, ++i) {
        if (noise) v = rng();
        std::memcpy(mix.data() + i * w, &v, w);
      }
    }
    for (uint32_t chunk : {128u, 4096u, 65536u, 1u << 20}) check_roundtrip(mix, t, chunk, codec);
    for (unsigned limit : {11u, 16u, 24u})  // 11 bits cannot code the u16 halves of the noise
      if (limit != 11 || w == 1) check_roundtrip(mix, t, 65536, Codec::rle_huffman, limit);
    }
  }
}

// Streams of several frames (the host API cuts every 256 MiB; here frames are
// concatenated by hand) decode on the GPU.
TEST(GpuRleFrames, SeveralFramesAndHostApi) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 23;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<uint8_t> a = test::sample("volume", 200000, DType::u8, seed);
  const std::vector<uint8_t> b = test::sample("runs", 123456 * 2, DType::u8, seed + 1);  // 16-byte multiple
  std::vector<uint8_t> s = gpu_frame(b, DType::u16, 4096, device::RleStrategy::automatic);
  const std::vector<uint8_t> s2 = gpu_frame(a, DType::u8, 65536, device::RleStrategy::automatic);
  s.insert(s.end(), s2.begin(), s2.end());
  std::vector<uint8_t> both = b;
  both.insert(both.end(), a.begin(), a.end());
  ASSERT_EQ(gpu_decode(s), both);
  ASSERT_EQ(decompress(s.data(), s.size(), kCpu), both);
  // The host API with --backend cuda: the CPU's bytes, decoded on the GPU.
  for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64}) {
    const std::vector<uint8_t> data = test::sample("runs", 100003, t, seed + 2);
    CompressOptions o;
    o.codec = CodecChoice::rle;
    o.dtype = t;
    o.chunk_elements = 16384;
    o.backend = Backend::cpu;
    const std::vector<uint8_t> cpu = compress(data.data(), data.size(), o);
    o.backend = Backend::cuda;
    const std::vector<uint8_t> gpu = compress(data.data(), data.size(), o);
    ASSERT_TRUE(gpu == cpu) << to_string(t);
    ASSERT_EQ(decompress(gpu.data(), gpu.size(), kGpu), data);
  }
}

constexpr ErrorCode kNoError = static_cast<ErrorCode>(0);

// rle+huffman through the host API with --backend cuda: the CPU's bytes,
// decoded on the GPU.
TEST(GpuRleFrames, RleHuffmanHostApi) {
  REQUIRE_GPU();
  for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64}) {
    const uint64_t seed = test::base_seed() + 31;
    SCOPED_TRACE(std::string(to_string(t)) + " seed " + std::to_string(seed));
    const std::vector<uint8_t> data = test::sample("volume", 100003, t, seed);
    CompressOptions h;
    h.codec = CodecChoice::rle_huffman;
    h.dtype = t;
    h.chunk_elements = 4096;
    h.backend = Backend::cpu;
    const std::vector<uint8_t> cpu = compress(data.data(), data.size(), h);
    h.backend = Backend::cuda;
    const std::vector<uint8_t> gpu = compress(data.data(), data.size(), h);
    ASSERT_TRUE(gpu == cpu);
    ASSERT_EQ(decompress(gpu.data(), gpu.size(), kGpu), data);
    ASSERT_EQ(gpu_decode(gpu), data);
  }
}

ErrorCode error_of(const std::vector<uint8_t>& s, const DecompressOptions& o) {
  try {
    decompress(s.data(), s.size(), o);
  } catch (const Error& e) {
    return e.code();
  }
  return kNoError;
}

// Rewrite an index entry of the first frame and its header checksum, so that
// the header passes and the chunk decoder itself must notice.
uint32_t codebooks_bytes(const std::vector<uint8_t>& s) {
  uint32_t cb = 0;
  std::memcpy(&cb, s.data() + 20, 4);
  return cb;
}

std::vector<uint8_t> with_entry(std::vector<uint8_t> s, uint64_t header_bytes, uint64_t c, uint32_t stored,
                                uint32_t aux) {
  uint8_t* e = s.data() + 48 + codebooks_bytes(s) + 16 * c;
  std::memcpy(e, &stored, 4);
  std::memcpy(e + 4, &aux, 4);
  const uint64_t h = checksum64(s.data(), header_bytes - 8);
  std::memcpy(s.data() + header_bytes - 8, &h, 8);
  return s;
}

TEST(GpuRleFrames, CorruptionIsReported) {
  REQUIRE_GPU();
  const uint64_t seed = test::base_seed() + 99;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (auto [codec, t] : {std::pair{Codec::rle, DType::u8}, std::pair{Codec::rle, DType::u16},
                          std::pair{Codec::rle, DType::u64}, std::pair{Codec::rle_huffman, DType::u8},
                          std::pair{Codec::rle_huffman, DType::u16}, std::pair{Codec::rle_huffman, DType::u64}}) {
    SCOPED_TRACE(std::string(to_string(codec)) + " " + std::string(to_string(t)));
    // Runs with some noise chunks (stored raw) and an odd-sized last chunk.
    std::vector<uint8_t> data = test::sample("runs", 40001, t, seed);
    const unsigned w = static_cast<unsigned>(dtype_bytes(t));
    for (std::size_t i = 8192 * w; i < 12288 * w; ++i) data[i] = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> s = gpu_frame(data, t, 4096, device::RleStrategy::automatic, codec);
    ASSERT_EQ(s, cpu_frame(data, t, 4096, codec));
    const StreamInfo info = inspect(s.data(), s.size());
    ASSERT_EQ(info.frames[0].codec, codec);
    // rle+huffman codes u16 noise below its raw size (its halves' codes are
    // shorter than 16 bits in this frame's codebook), so only the others have raw chunks.
    if (codec == Codec::rle || t == DType::u8) ASSERT_GT(info.frames[0].raw_chunks, 0u);
    ASSERT_LT(info.frames[0].raw_chunks, info.frames[0].chunks);
    const uint64_t header = info.frames[0].header_bytes;
    ASSERT_EQ(gpu_decode(s), data);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<uint8_t> bad = s;
      const std::size_t at = header + rng() % (s.size() - header);
      bad[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      const ErrorCode cpu = error_of(bad, kCpu);
      EXPECT_NE(cpu, kNoError) << "flip at byte " << at;
      EXPECT_EQ(error_of(bad, kGpu), cpu) << "flip at byte " << at;
    }
    // Index entries that pass the header checksum but not the chunk decoder:
    // wrong run counts for coded chunks, a run count on a raw chunk.
    std::vector<uint8_t> idx(16 * info.frames[0].chunks);
    std::memcpy(idx.data(), s.data() + 48 + codebooks_bytes(s), idx.size());
    for (uint64_t c = 0; c < info.frames[0].chunks; ++c) {
      uint32_t stored, aux;
      std::memcpy(&stored, idx.data() + 16 * c, 4);
      std::memcpy(&aux, idx.data() + 16 * c + 4, 4);
      for (uint32_t bad_aux : {0u, aux + 1, aux - 1, 5000u}) {
        if (bad_aux == aux) continue;
        const std::vector<uint8_t> bad = with_entry(s, header, c, stored, bad_aux);
        const ErrorCode cpu = error_of(bad, kCpu);
        EXPECT_NE(cpu, kNoError) << "chunk " << c << " aux " << bad_aux;
        EXPECT_EQ(error_of(bad, kGpu), cpu) << "chunk " << c << " aux " << bad_aux;
      }
    }
    for (std::size_t cut : {std::size_t{0}, std::size_t{10}, std::size_t(header), s.size() / 2, s.size() - 1})
      EXPECT_THROW(gpu_decode(std::vector<uint8_t>(s.begin(), s.begin() + cut)), Error) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
