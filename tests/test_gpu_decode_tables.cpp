// tests/test_gpu_decode_tables.cpp: the decode tables the GPU builds from a
// codebook (cuda/decode_tables_gpu.hpp) against the host's construction
// (huffman::make_gpu_decode_tables), entry for entry: single table, second
// level, pair table, canonical arrays and symbols in canonical order, for
// every shape of codebook (tests/decode_table_books.hpp) and symbol width,
// many codebooks built by one launch as the wavelet decoder builds them.
// Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/decode_tables_gpu.hpp"
#include "decode_table_books.hpp"
#include "huffman/gpu_tables.hpp"
#include "test_util.hpp"

namespace vlec {
namespace {

using cuda::DeviceBuffer;

// Device regions for one codebook's tables, filled with a poison byte so
// that an entry the builder forgets is seen.
struct Regions {
  DeviceBuffer<uint32_t> single{1u << 13}, sub{huffman::kMaxSubEntries}, sorted{huffman::kMaxAlphabet},
      canon{3 * cuda::kCanonSlots};
  DeviceBuffer<uint64_t> pair{1u << 13};
  DeviceBuffer<uint8_t> upload{cuda::decode_table_upload_bytes(huffman::kMaxAlphabet)};
  Regions() {
    CUDA_CHECK(cudaMemset(single.get(), 0xA5, 4u << 13));
    CUDA_CHECK(cudaMemset(sub.get(), 0xA5, 4 * huffman::kMaxSubEntries));
    CUDA_CHECK(cudaMemset(sorted.get(), 0xA5, 4 * huffman::kMaxAlphabet));
    CUDA_CHECK(cudaMemset(canon.get(), 0xA5, 4 * 3 * cuda::kCanonSlots));
    CUDA_CHECK(cudaMemset(pair.get(), 0xA5, 8u << 13));
  }
  cuda::DecodeTableRegions view() {
    return {single.get(), sub.get(), pair.get(), sorted.get(), canon.get(), upload.get()};
  }
};

template <typename T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  if (n) CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

void expect_tables_equal(const huffman::Codebook& book, unsigned width, const cuda::DeviceDecodeTable& d,
                         Regions& r) {
  const huffman::GpuDecodeTables g = huffman::make_gpu_decode_tables(book, width);
  const huffman::GpuTablePlan plan = huffman::plan_gpu_decode_tables(book, width);
  ASSERT_EQ(d.single, r.single.get());
  EXPECT_EQ(d.single_bits, g.gpu_single_bits);
  EXPECT_EQ(d.single_bits, plan.gpu_single_bits);
  EXPECT_EQ(d.max_length, book.max_length);
  EXPECT_EQ(d.use_pairs, g.use_pairs);
  EXPECT_EQ(d.pair != nullptr, g.use_pairs);
  EXPECT_EQ(download(r.single.get(), g.single.size()), g.single);
  EXPECT_EQ(download(r.sub.get(), g.cpu.sub.size()), g.cpu.sub);
  EXPECT_EQ(download(r.sorted.get(), g.cpu.sorted.size()), g.cpu.sorted);
  const std::vector<uint32_t> canon = download(r.canon.get(), 3 * cuda::kCanonSlots);
  for (unsigned l = 0; l < cuda::kCanonSlots; ++l) {
    EXPECT_EQ(canon[l], g.cpu.first[l]) << "first[" << l << "]";
    EXPECT_EQ(canon[cuda::kCanonSlots + l], g.cpu.count[l]) << "count[" << l << "]";
    EXPECT_EQ(canon[2 * cuda::kCanonSlots + l], g.cpu.offset[l]) << "offset[" << l << "]";
  }
  if (g.use_pairs) {
    EXPECT_EQ(d.pair_bits, huffman::gpu_pair_bits(width));
    std::vector<uint8_t> pair(g.pair_bytes(width));
    CUDA_CHECK(cudaMemcpy(pair.data(), r.pair.get(), pair.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(pair.data(), g.pair_data(width), pair.size()), 0) << "pair table";
  }
  EXPECT_EQ(plan.sub_entries, g.cpu.sub.size());
}

TEST(GpuDecodeTables, BuiltOnTheGpuEqualTheHostTables) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 33;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<test::NamedBook> books = test::decode_table_books(rng);
  // One launch per batch of up to 24 codebooks, as a wavelet frame's groups.
  struct Case {
    const test::NamedBook* book;
    unsigned width;
  };
  std::vector<Case> cases;
  for (const test::NamedBook& nb : books)
    for (unsigned width : {1u, 2u, 4u})
      if (width > 1 || nb.book.alphabet_size <= 256) cases.push_back({&nb, width});
  for (std::size_t at = 0; at < cases.size(); at += 24) {
    const std::size_t n = std::min<std::size_t>(24, cases.size() - at);
    std::vector<Regions> regions(n);
    std::vector<cuda::DeviceDecodeTable> tables(n);
    cuda::DecodeTableBuilds builds;
    for (std::size_t i = 0; i < n; ++i) {
      const Case& c = cases[at + i];
      tables[i] = builds.add(c.book->book, c.width, huffman::plan_gpu_decode_tables(c.book->book, c.width),
                             regions[i].view());
    }
    builds.launch(nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (std::size_t i = 0; i < n; ++i) {
      const Case& c = cases[at + i];
      SCOPED_TRACE(c.book->name + ", width " + std::to_string(c.width) + ", max length " +
                   std::to_string(c.book->book.max_length));
      expect_tables_equal(c.book->book, c.width, tables[i], regions[i]);
    }
  }
}

TEST(GpuDecodeTables, EmptyCodebookBuildsNothing) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  Regions r;
  cuda::DecodeTableBuilds builds;
  const cuda::DeviceDecodeTable d = builds.add(huffman::Codebook{}, 1, huffman::plan_gpu_decode_tables({}, 1), r.view());
  EXPECT_EQ(d.single, nullptr);
  EXPECT_TRUE(builds.empty());
  builds.launch(nullptr);
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
