// tests/test_gpu_rle.cpp: the GPU run-length coder (src/cuda/rle_gpu.hpp)
// against the CPU reference (rle::encode_runs laid out as docs/FORMAT.md §6 and
// cpu/frame_compress.cpp write it): for every width, both strategies, chunk
// sizes from 1 to 2^20 and awkward sizes, on data shaped like real data (byte
// runs, the sparse volume, skewed bytes), runs longer than 65,536, one repeated
// value and alternating values (no runs at all), the run counts, stored sizes,
// offsets, packed payload and value/length streams must equal the CPU's byte
// for byte; the GPU decoder must restore CPU payloads exactly, and on corrupt
// payloads (bad R, bad size, bad padding, lengths not adding up, truncation,
// random damage) it must report a non-zero status exactly where the CPU reader
// throws, never crash. Every case prints its seed. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/rle_gpu.hpp"
#include "rle/rle.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;
using cuda::RleStrategy;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU: CUDA backend not built or no device"

uint64_t align4(uint64_t x) { return (x + 3) / 4 * 4; }

// What the CPU writes for an rle frame before choosing raw storage.
struct Coded {
  std::vector<uint32_t> runs, stored;
  std::vector<uint64_t> payload_offsets, run_offsets;
  std::vector<uint8_t> payload, values;
  std::vector<uint16_t> lengths;
};

Coded cpu_encode(const std::vector<uint8_t>& data, unsigned w, uint32_t C) {
  const uint64_t n = data.size() / w, chunks = (n + C - 1) / C;
  Coded e;
  e.payload_offsets.push_back(0);
  e.run_offsets.push_back(0);
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint64_t m = std::min<uint64_t>(C, n - c * C);
    const uint8_t* p = data.data() + c * C * w;
    const std::size_t R = rle::count_runs(p, m, w);
    std::vector<uint8_t> vals(R * w);
    std::vector<uint16_t> lens(R);
    EXPECT_EQ(rle::encode_runs(p, m, w, vals.data(), lens.data()), R);
    std::vector<uint8_t> coded(align4(rle::payload_bytes(R, w)), 0);
    std::memcpy(coded.data(), vals.data(), vals.size());
    std::memcpy(coded.data() + rle::lengths_offset(R, w), lens.data(), 2 * R);
    e.runs.push_back(static_cast<uint32_t>(R));
    e.stored.push_back(static_cast<uint32_t>(rle::payload_bytes(R, w)));
    e.payload.insert(e.payload.end(), coded.begin(), coded.end());
    e.values.insert(e.values.end(), vals.begin(), vals.end());
    e.lengths.insert(e.lengths.end(), lens.begin(), lens.end());
    e.payload_offsets.push_back(e.payload.size());
    e.run_offsets.push_back(e.lengths.size());
  }
  return e;
}

template <typename T>
std::vector<T> download(const T* d, std::size_t count) {
  std::vector<T> h(count);
  if (count) CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// `payload_only`: no separate value and length streams (as rle frames encode;
// the chunked encoder then stores byte runs four at a time).
Coded gpu_encode(const uint8_t* d_in, uint64_t n, unsigned w, uint32_t C, RleStrategy s, bool payload_only = false) {
  const uint64_t chunks = cuda::rle_chunk_count(n, C);
  const std::size_t cap = std::max<std::size_t>(cuda::rle_payload_capacity(n, w, C), 16);
  DeviceBuffer<uint32_t> runs(chunks + 1), stored(chunks + 1);
  DeviceBuffer<uint64_t> poff(chunks + 1), roff(chunks + 1);
  DeviceBuffer<uint8_t> payload(cap), values(std::max<uint64_t>(n * w, 16));
  DeviceBuffer<uint16_t> lengths(std::max<uint64_t>(n, 8));
  CUDA_CHECK(cudaMemset(payload.get(), 0xA5, cap));  // poison: every payload byte must be written
  DeviceBuffer<uint8_t> temp(std::max<std::size_t>(cuda::rle_encode_temp_bytes(n, w, C, s), 1));
  cuda::RleEncodeArgs a;
  a.in = d_in;
  a.elements = n;
  a.width = w;
  a.chunk_elements = C;
  a.runs = runs.get();
  a.stored_bytes = stored.get();
  a.payload_offsets = poff.get();
  a.run_offsets = roff.get();
  a.payload = payload.get();
  a.values = payload_only ? nullptr : values.get();
  a.lengths = payload_only ? nullptr : lengths.get();
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cuda::rle_encode(a, temp.get(), temp.size(), stream, s);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaStreamDestroy(stream));
  Coded g;
  g.runs = download(runs.get(), chunks);
  g.stored = download(stored.get(), chunks);
  g.payload_offsets = download(poff.get(), chunks + 1);
  g.run_offsets = download(roff.get(), chunks + 1);
  g.payload = download(payload.get(), std::min<uint64_t>(g.payload_offsets.back(), cap));
  if (!payload_only) {
    g.values = download(values.get(), std::min<uint64_t>(g.run_offsets.back(), n) * w);
    g.lengths = download(lengths.get(), std::min<uint64_t>(g.run_offsets.back(), n));
  }
  return g;
}

// Device-side inputs of the decoder, uploaded from host vectors.
struct DecodeResult {
  std::vector<uint32_t> status;
  std::vector<uint8_t> out;
};

DecodeResult gpu_decode(const std::vector<uint8_t>& payload, uint64_t payload_bytes, const std::vector<uint64_t>& off,
                        const std::vector<uint32_t>& stored, const std::vector<uint32_t>& runs, uint64_t n,
                        unsigned w, uint32_t C) {
  const uint64_t chunks = cuda::rle_chunk_count(n, C);
  DeviceBuffer<uint8_t> d_payload(std::max<std::size_t>(payload_bytes, 16)), out(std::max<uint64_t>(n * w, 16));
  DeviceBuffer<uint64_t> d_off(chunks + 1);
  DeviceBuffer<uint32_t> d_stored(chunks + 1), d_runs(chunks + 1), status(chunks + 1);
  if (payload_bytes) CUDA_CHECK(cudaMemcpy(d_payload.get(), payload.data(), payload_bytes, cudaMemcpyHostToDevice));
  if (chunks) {
    CUDA_CHECK(cudaMemcpy(d_off.get(), off.data(), chunks * 8, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_stored.get(), stored.data(), chunks * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_runs.get(), runs.data(), chunks * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(status.get(), 0xFF, chunks * 4));
  }
  cuda::RleDecodeArgs a;
  a.payload = d_payload.get();
  a.payload_bytes = payload_bytes;
  a.offsets = d_off.get();
  a.stored_bytes = d_stored.get();
  a.runs = d_runs.get();
  a.elements = n;
  a.width = w;
  a.chunk_elements = C;
  a.out = out.get();
  a.status = status.get();
  cuda::rle_decode(a, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());  // a fault here is a failure of the test
  return {download(status.get(), chunks), download(out.get(), n * w)};
}

// The CPU reader's verdict on one chunk (cpu/frame_decompress.cpp), plus the
// bounds that a frame's index check provides. Returns true and fills `out` if valid.
bool cpu_decode_chunk(const std::vector<uint8_t>& payload, uint64_t payload_bytes, uint64_t off, uint32_t stored,
                      uint32_t R, uint64_t m, unsigned w, uint8_t* out) {
  if (off % 4 || off > payload_bytes || stored > payload_bytes - off) return false;
  const uint8_t* src = payload.data() + off;
  if (stored == m * w) {
    if (R != 0) return false;
    std::memcpy(out, src, stored);
    return true;
  }
  if (R < 1 || R > m || stored != rle::payload_bytes(R, w)) return false;
  for (std::size_t i = std::size_t{R} * w; i < rle::lengths_offset(R, w); ++i)
    if (src[i]) return false;
  try {
    rle::decode_runs(src, src + rle::lengths_offset(R, w), R, w, m, out);
  } catch (const Error&) {
    return false;
  }
  return true;
}

// Test data: bytes `b` become elements b * K (K odd, truncated to the width),
// a bijection, so byte runs stay runs and every byte of a wide element varies.
std::vector<uint8_t> widen(const std::vector<uint8_t>& bytes, unsigned w) {
  std::vector<uint8_t> out(bytes.size() * w);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const uint64_t v = bytes[i] * 0x9E3779B97F4A7C15ull;
    std::memcpy(out.data() + i * w, &v, w);
  }
  return out;
}

std::vector<uint8_t> make_bytes(const std::string& kind, std::size_t n, uint64_t seed) {
  if (kind == "runs" || kind == "volume" || kind == "skewed") return test::sample(kind, n, DType::u8, seed);
  std::vector<uint8_t> b(n);
  std::mt19937_64 rng(seed);
  if (kind == "equal") std::fill(b.begin(), b.end(), static_cast<uint8_t>(rng() | 1));
  if (kind == "alternating")
    for (std::size_t i = 0; i < n; ++i) b[i] = i % 2 ? 0x5A : 0xC3;
  if (kind == "long_runs") {  // runs of 60,000 to 200,000: most are split at 65,536
    std::size_t i = 0;
    uint8_t v = 1;
    while (i < n) {
      const std::size_t len = 60000 + rng() % 140001;
      std::fill(b.begin() + i, b.begin() + std::min(n, i + len), v);
      i += len;
      v = static_cast<uint8_t>(v + 1 + rng() % 200);
    }
  }
  return b;
}

// The chunks of `coded` as a frame stores them: raw where coding does not pay.
Coded as_framed(const Coded& coded, const std::vector<uint8_t>& data, unsigned w, uint32_t C) {
  const uint64_t n = data.size() / w, chunks = coded.runs.size();
  Coded f;
  f.payload_offsets.push_back(0);
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint64_t m = std::min<uint64_t>(C, n - c * C), raw = m * w;
    const uint8_t* src = coded.payload.data() + coded.payload_offsets[c];
    uint32_t stored = coded.stored[c], runs = coded.runs[c];
    if (stored >= raw) {
      src = data.data() + c * C * w;
      stored = static_cast<uint32_t>(raw);
      runs = 0;
    }
    f.runs.push_back(runs);
    f.stored.push_back(stored);
    f.payload.insert(f.payload.end(), src, src + stored);
    f.payload.resize(align4(f.payload.size()), 0);
    f.payload_offsets.push_back(f.payload.size());
  }
  return f;
}

constexpr unsigned kWidths[] = {1, 2, 4, 8};
constexpr uint32_t kChunks[] = {1, 7, 128, 65536, 1u << 20};
constexpr std::size_t kSizes[] = {0, 1, 2, 31, 65535, 65537, 1000003};
constexpr RleStrategy kStrategies[] = {RleStrategy::parle, RleStrategy::chunked};

class GpuRle : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuRle, EncodeMatchesCpuAndDecodeRestores) {
  REQUIRE_GPU();
  const std::string kind = GetParam();
  for (std::size_t n : kSizes) {
    const uint64_t seed = test::base_seed() + n;
    const std::vector<uint8_t> bytes = make_bytes(kind, n, seed);
    for (unsigned w : kWidths) {
      const std::vector<uint8_t> data = widen(bytes, w);
      DeviceBuffer<uint8_t> d_in(std::max<std::size_t>(data.size(), 16));
      if (!data.empty()) CUDA_CHECK(cudaMemcpy(d_in.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
      for (uint32_t C : kChunks) {
        if (C == 1 && n > 65537 && w > 1) continue;  // a million one-element chunks: once (u8) is enough
        const Coded cpu = cpu_encode(data, w, C);
        for (RleStrategy s : kStrategies) {
          SCOPED_TRACE(kind + " n " + std::to_string(n) + " width " + std::to_string(w) + " chunk " +
                       std::to_string(C) + " " + cuda::to_string(s) + " seed " + std::to_string(seed));
          const Coded gpu = gpu_encode(d_in.get(), n, w, C, s);
          ASSERT_EQ(gpu.runs, cpu.runs);
          ASSERT_EQ(gpu.stored, cpu.stored);
          ASSERT_EQ(gpu.payload_offsets, cpu.payload_offsets);
          ASSERT_EQ(gpu.run_offsets, cpu.run_offsets);
          ASSERT_TRUE(gpu.payload == cpu.payload)
              << "first difference at byte "
              << (std::mismatch(gpu.payload.begin(), gpu.payload.end(), cpu.payload.begin()).first -
                  gpu.payload.begin());
          ASSERT_TRUE(gpu.values == cpu.values);
          ASSERT_TRUE(gpu.lengths == cpu.lengths);
          const Coded alone = gpu_encode(d_in.get(), n, w, C, s, true);
          ASSERT_EQ(alone.runs, cpu.runs);
          ASSERT_EQ(alone.payload_offsets, cpu.payload_offsets);
          ASSERT_TRUE(alone.payload == cpu.payload)
              << "payload only: first difference at byte "
              << (std::mismatch(alone.payload.begin(), alone.payload.end(), cpu.payload.begin()).first -
                  alone.payload.begin());
        }
        SCOPED_TRACE(kind + " decode n " + std::to_string(n) + " width " + std::to_string(w) + " chunk " +
                     std::to_string(C) + " seed " + std::to_string(seed));
        // Decode what a frame holds: a chunk whose coding is not smaller than
        // its raw bytes is stored raw (R = 0), as cpu/frame_compress.cpp does;
        // a stored size equal to the raw size always means raw (FORMAT.md §6).
        const Coded framed = as_framed(cpu, data, w, C);
        const DecodeResult d = gpu_decode(framed.payload, framed.payload.size(), framed.payload_offsets,
                                          framed.stored, framed.runs, n, w, C);
        ASSERT_EQ(d.status, std::vector<uint32_t>(cpu.runs.size(), cuda::kRleOk));
        ASSERT_TRUE(d.out == data);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Data, GpuRle,
                         ::testing::Values("runs", "volume", "skewed", "long_runs", "equal", "alternating"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// A frame writer stores incompressible chunks raw: the decoder copies them.
TEST(GpuRleDecode, RawChunksAreCopied) {
  REQUIRE_GPU();
  const unsigned w = 2;
  const uint32_t C = 1000;
  const std::vector<uint8_t> data = widen(make_bytes("alternating", 2500, 1), w);
  std::vector<uint8_t> payload(align4(data.size()), 0);
  std::memcpy(payload.data(), data.data(), data.size());
  const std::vector<uint64_t> off = {0, 2000, 4000};
  const std::vector<uint32_t> stored = {2000, 2000, 1000}, runs = {0, 0, 0};
  const DecodeResult d = gpu_decode(payload, payload.size(), off, stored, runs, 2500, w, C);
  EXPECT_EQ(d.status, std::vector<uint32_t>(3, cuda::kRleOk));
  EXPECT_TRUE(d.out == data);
  const DecodeResult bad = gpu_decode(payload, payload.size(), off, stored, {0, 1, 0}, 2500, w, C);
  EXPECT_EQ(bad.status, (std::vector<uint32_t>{cuda::kRleOk, cuda::kRleBadRunCount, cuda::kRleOk}));
}

// Each kind of damage, on chunks of every width, gives its own status.
TEST(GpuRleDecode, CorruptChunksReportTheirError) {
  REQUIRE_GPU();
  for (unsigned w : kWidths) {
    const uint64_t seed = test::base_seed() + w;
    SCOPED_TRACE("width " + std::to_string(w) + " seed " + std::to_string(seed));
    const uint32_t C = 4096;
    const uint64_t n = 8 * C;
    std::vector<uint8_t> data = widen(make_bytes("runs", n, seed), w);
    std::memset(data.data() + 5 * C * w, 0, C * w);  // chunk 5: one run
    const Coded e = cpu_encode(data, w, C);
    auto expect = [&](const char* what, std::vector<uint8_t> payload, uint64_t payload_bytes,
                      std::vector<uint32_t> stored, std::vector<uint32_t> runs, unsigned chunk, uint32_t status) {
      SCOPED_TRACE(what);
      const DecodeResult d = gpu_decode(payload, payload_bytes, e.payload_offsets, stored, runs, n, w, C);
      for (unsigned c = 0; c < d.status.size(); ++c) EXPECT_EQ(d.status[c], c == chunk ? status : 0u) << "chunk " << c;
    };
    expect("valid", e.payload, e.payload.size(), e.stored, e.runs, 99, 0);
    auto runs = e.runs;
    runs[1] = 0;
    expect("R = 0", e.payload, e.payload.size(), e.stored, runs, 1, cuda::kRleBadRunCount);
    runs = e.runs;
    runs[2] = C + 1;
    expect("R > N", e.payload, e.payload.size(), e.stored, runs, 2, cuda::kRleBadRunCount);
    runs = e.runs;
    runs[3] -= 1;
    expect("R - 1", e.payload, e.payload.size(), e.stored, runs, 3, cuda::kRleBadSize);
    auto stored = e.stored;
    stored[4] += 2;
    expect("stored + 2", e.payload, e.payload.size(), stored, e.runs, 4, cuda::kRleBadSize);
    // Padding: chunk 5 has one run, so 4 - w % 4 padding bytes for w < 4.
    if (w < 4) {
      auto p = e.payload;
      p[e.payload_offsets[5] + w] = 1;
      expect("padding", p, p.size(), e.stored, e.runs, 5, cuda::kRleBadPadding);
    }
    auto lengths_at = [&](unsigned c) { return e.payload_offsets[c] + rle::lengths_offset(e.runs[c], w); };
    {
      auto p = e.payload;  // one run one element longer: the sum passes N
      p[lengths_at(6)] += 1;
      expect("lengths + 1", p, p.size(), e.stored, e.runs, 6, cuda::kRleBadLengths);
      p = e.payload;  // one element short
      uint8_t* code = &p[lengths_at(6) + 2 * (e.runs[6] - 1)];
      if (code[0] == 0 && code[1] == 0) code = &p[lengths_at(6)];
      for (int k = 0; k < 64 && code[0] == 0 && code[1] == 0; ++k) code += 2;
      if (code[0]) code[0] -= 1; else code[0] = 0xFF, code[1] -= 1;
      expect("lengths - 1", p, p.size(), e.stored, e.runs, 6, cuda::kRleBadLengths);
      p = e.payload;  // chunk 5's single run of N: code 0xFFFF says 65,536
      p[lengths_at(5)] = 0xFF;
      p[lengths_at(5) + 1] = 0xFF;
      expect("run of 65,536 in a chunk of 4,096", p, p.size(), e.stored, e.runs, 5, cuda::kRleBadLengths);
    }
    // Truncation: the last chunk runs past the payload.
    expect("truncated", e.payload, e.payload_offsets[7] + e.stored[7] - 1, e.stored, e.runs, 7,
           cuda::kRleOutOfBounds);
  }
}

// Random damage to payload, run counts and sizes: the GPU agrees with the CPU
// reader chunk by chunk, and restores every chunk that the CPU accepts.
TEST(GpuRleDecode, RandomDamageAgreesWithCpu) {
  REQUIRE_GPU();
  for (unsigned w : kWidths) {
    for (uint32_t C : {7u, 300u, 70000u}) {
      const uint64_t seed = test::base_seed() + 1000 * w + C;
      SCOPED_TRACE("width " + std::to_string(w) + " chunk " + std::to_string(C) + " seed " + std::to_string(seed));
      std::mt19937_64 rng(seed);
      const uint64_t n = 5 * uint64_t{C} + 3;
      const std::vector<uint8_t> data = widen(make_bytes(C > 65536 ? "long_runs" : "runs", n, seed), w);
      const Coded e = cpu_encode(data, w, C);
      for (int trial = 0; trial < 40; ++trial) {
        auto p = e.payload;
        auto stored = e.stored;
        auto runs = e.runs;
        const unsigned damage = static_cast<unsigned>(rng() % 4);
        const unsigned flips = 1 + static_cast<unsigned>(rng() % 4);
        for (unsigned k = 0; k < flips && !p.empty(); ++k) {
          const unsigned c = static_cast<unsigned>(rng() % runs.size());
          if (damage == 0) p[rng() % p.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
          if (damage == 1) runs[c] = static_cast<uint32_t>(rng() % (2 * runs[c] + 2));
          if (damage == 2) stored[c] = static_cast<uint32_t>(rng() % (2 * stored[c] + 8));
          if (damage == 3) runs[c] ^= 1u << (rng() % 32), stored[c] ^= 1u << (rng() % 32);
        }
        const uint64_t payload_bytes = p.size() - (rng() % 3 == 0 ? rng() % 16 : 0);
        const DecodeResult d = gpu_decode(p, payload_bytes, e.payload_offsets, stored, runs, n, w, C);
        for (unsigned c = 0; c < runs.size(); ++c) {
          const uint64_t m = std::min<uint64_t>(C, n - uint64_t{c} * C);
          std::vector<uint8_t> out(m * w);
          const bool ok = cpu_decode_chunk(p, payload_bytes, e.payload_offsets[c], stored[c], runs[c], m, w,
                                           out.data());
          ASSERT_EQ(d.status[c] == 0, ok) << "trial " << trial << " damage " << damage << " chunk " << c
                                           << " status " << d.status[c];
          if (ok)
            ASSERT_TRUE(std::equal(out.begin(), out.end(), d.out.begin() + uint64_t{c} * C * w))
                << "trial " << trial << " chunk " << c;
        }
      }
    }
  }
}

TEST(GpuRleApi, RejectsBadArguments) {
  EXPECT_THROW(cuda::rle_encode_temp_bytes(100, 3, 16, RleStrategy::chunked), Error);
  EXPECT_THROW(cuda::rle_encode_temp_bytes(100, 1, 0, RleStrategy::parle), Error);
  EXPECT_THROW(cuda::rle_encode_temp_bytes(uint64_t{1} << 33, 1, 65536, RleStrategy::parle), Error);
  EXPECT_EQ(cuda::default_rle_strategy(1000, 65536), RleStrategy::chunked);
  EXPECT_EQ(cuda::default_rle_strategy(1000, 7), RleStrategy::chunked);
  EXPECT_EQ(cuda::default_rle_strategy(1000, 65537), RleStrategy::parle);
  EXPECT_EQ(cuda::default_rle_strategy(uint64_t{1} << 33, 1 << 20), RleStrategy::chunked);
  EXPECT_EQ(cuda::default_rle_strategy(uint64_t{1} << 33, 7), RleStrategy::chunked);
}

}  // namespace
}  // namespace vlec

#else  // a build without the CUDA backend

TEST(GpuRle, NotBuilt) { GTEST_SKIP() << "vlec was built without the CUDA backend"; }

#endif
