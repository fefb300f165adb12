// tests/test_gpu_shift_rule.cpp: the wavelet shift rule evaluated on the
// GPU for groups of subband histograms (cuda/wavelet_shift_gpu.hpp) against
// the host's (merge_stats, then choose_shift): the same shift and estimate
// for groups of one to seven parts whose tops need different k0 (values
// above 65,535), narrow and wide, sparse and dense, flat and peaked
// histograms, single values and all-zero groups; then each group's symbol
// histogram at its shift from the same prefix sums. Skips without a GPU.
#include <gtest/gtest.h>

#include "vlec/vlec.hpp"

#ifdef VLEC_WITH_CUDA

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/wavelet_encode_kernels.hpp"
#include "cuda/wavelet_shift_gpu.hpp"
#include "test_util.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/group_io.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec {
namespace {

namespace sr = wavelet::shift_rule;
namespace wg = cuda::wavelet_gpu;

// A subband's statistics as the GPU counts them: top, and the histogram at k0(top).
wavelet::ValueStats random_part(std::mt19937_64& rng, unsigned shape) {
  wavelet::ValueStats v;
  const uint32_t tops[] = {0, 1, 15, 255, 4095, 65535, 65536, 200000, 1u << 24, (1u << 25) - 1};
  const uint32_t top = tops[rng() % 10];
  const unsigned k0 = sr::smallest_shift(top);
  v.hist.assign((top >> k0) + 1, 0);
  const uint64_t n = 1 + rng() % 200000;
  const double scale = 1.0 + static_cast<double>(rng() % 2000);
  std::exponential_distribution<double> peaked(1.0 / scale);
  for (uint64_t i = 0; i + 1 < n; ++i) {
    uint64_t z = shape == 0 ? rng() % (uint64_t{top} + 1) : static_cast<uint64_t>(peaked(rng)) % (uint64_t{top} + 1);
    if (shape == 2) z = z / 64 * 64;  // sparse: every 64th value
    ++v.hist[z >> k0];
  }
  ++v.hist[top >> k0];  // the top itself
  v.top = top;
  v.n = n;
  return v;
}

TEST(GpuShiftRule, AnswersEqualTheHostRule) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU";
  const uint64_t seed = test::base_seed() + 41;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<wavelet::ValueStats> parts;
  std::vector<std::vector<uint32_t>> groups;
  for (int g = 0; g < 120; ++g) {
    std::vector<uint32_t> slots;
    const unsigned count = 1 + rng() % 7;
    for (unsigned i = 0; i < count; ++i) {
      slots.push_back(static_cast<uint32_t>(parts.size()));
      parts.push_back(random_part(rng, rng() % 3));
    }
    groups.push_back(slots);
  }
  // Device histograms: slot s at s * kHistBins.
  std::vector<unsigned long long> hist(parts.size() * std::size_t{wg::kHistBins}, 0);
  std::vector<uint32_t> tops(parts.size());
  for (std::size_t s = 0; s < parts.size(); ++s) {
    tops[s] = parts[s].top;
    for (std::size_t b = 0; b < parts[s].hist.size(); ++b) hist[s * wg::kHistBins + b] = parts[s].hist[b];
  }
  // The host gives n and the parts; the GPU completes the rest from the tops.
  std::vector<wg::ShiftCandidate> cands, expected;
  std::vector<uint32_t> flat;
  const unsigned search = sr::kDefaultSearch;
  for (const auto& slots : groups) {
    wg::ShiftCandidate c;
    c.part_first = static_cast<uint32_t>(flat.size());
    c.part_count = static_cast<uint32_t>(slots.size());
    for (uint32_t s : slots) flat.push_back(s), c.n += parts[s].n;
    cands.push_back(c);
    for (uint32_t s : slots) c.top = std::max(c.top, tops[s]);
    c.k0 = sr::smallest_shift(c.top);
    c.bins = (c.top >> c.k0) + 1;
    c.count = sr::last_shift(c.top, c.k0, search) - c.k0 + 1;
    c.scratch = (cands.size() - 1) * uint64_t{wg::kHistBins};
    expected.push_back(c);
  }
  cuda::DeviceBuffer<unsigned long long> d_hist(hist.size());
  const std::size_t temp_bytes = wg::shift_estimates_temp_bytes(cands.size());
  cuda::DeviceBuffer<uint8_t> d_temp(temp_bytes);
  // Garbage in the temp: the kernels must not rely on zeroed storage.
  CUDA_CHECK(cudaMemset(d_temp.get(), 0xA5, temp_bytes));
  cuda::DeviceBuffer<uint32_t> d_tops(tops.size()), d_parts(flat.size());
  cuda::DeviceBuffer<wg::ShiftCandidate> d_cands(cands.size());
  cuda::DeviceBuffer<wg::ShiftResult> d_results(cands.size());
  CUDA_CHECK(cudaMemcpy(d_hist.get(), hist.data(), 8 * hist.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_tops.get(), tops.data(), 4 * tops.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_parts.get(), flat.data(), 4 * flat.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_cands.get(), cands.data(), sizeof(wg::ShiftCandidate) * cands.size(),
                        cudaMemcpyHostToDevice));
  wg::launch_shift_estimates(d_cands.get(), static_cast<uint32_t>(cands.size()), d_parts.get(), d_tops.get(),
                             d_hist.get(), search, d_results.get(), d_temp.get(), temp_bytes, nullptr);
  std::vector<wg::ShiftResult> results(cands.size());
  CUDA_CHECK(cudaMemcpy(results.data(), d_results.get(), sizeof(wg::ShiftResult) * results.size(),
                        cudaMemcpyDeviceToHost));
  std::vector<wg::ShiftCandidate> described(cands.size());
  CUDA_CHECK(cudaMemcpy(described.data(), d_cands.get(), sizeof(wg::ShiftCandidate) * described.size(),
                        cudaMemcpyDeviceToHost));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const wg::ShiftCandidate &d = described[g], &e = expected[g];
    EXPECT_TRUE(d.n == e.n && d.scratch == e.scratch && d.part_first == e.part_first &&
                d.part_count == e.part_count && d.top == e.top && d.k0 == e.k0 && d.bins == e.bins &&
                d.count == e.count)
        << "group " << g << ": the GPU's descriptor (top " << d.top << ", k0 " << d.k0 << ", bins " << d.bins
        << ", count " << d.count << ") is not the host's (top " << e.top << ", k0 " << e.k0 << ", bins " << e.bins
        << ", count " << e.count << ")";
  }
  std::size_t shifted = 0, wide = 0;
  std::vector<wavelet::ValueStats> merged(groups.size());
  std::vector<unsigned> chosen(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<const wavelet::ValueStats*> ps;
    for (uint32_t s : groups[g]) ps.push_back(&parts[s]);
    merged[g] = wavelet::merge_stats(ps);
    uint64_t bits = 0;
    const unsigned k = chosen[g] = wavelet::choose_shift(merged[g].hist, merged[g].n, merged[g].top, search, &bits);
    EXPECT_EQ(results[g].shift, k) << "group " << g << " of " << groups[g].size() << " parts, top " << merged[g].top;
    EXPECT_EQ(results[g].bits, bits) << "group " << g;
    shifted += k > sr::smallest_shift(merged[g].top);
    wide += expected[g].bins > 1024;  // prefix sums across the merge kernel's blocks
  }
  EXPECT_GT(shifted, 0u) << "no group chose a shift above its k0: the test does not exercise the search";
  EXPECT_GT(wide, 0u) << "no group spans two merge blocks: the test does not exercise the block totals";

  // Each group's symbol histogram at its chosen shift from the same temp
  // (what the writer's codebooks are built from) against the host's.
  std::vector<wg::GroupHistogram> jobs(groups.size());
  cuda::DeviceBuffer<unsigned long long> d_out(groups.size() * std::size_t{wg::kHistBins});
  uint32_t widest = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    wg::GroupHistogram& h = jobs[g];
    h.out = d_out.get() + g * wg::kHistBins;
    h.candidate = static_cast<uint32_t>(g);
    h.bins = expected[g].bins;
    h.j = chosen[g] - expected[g].k0;
    h.alphabet = ((h.bins - 1) >> h.j) + 1;
    widest = std::max(widest, h.alphabet);
  }
  cuda::DeviceBuffer<wg::GroupHistogram> d_jobs(jobs.size());
  CUDA_CHECK(cudaMemcpy(d_jobs.get(), jobs.data(), sizeof(wg::GroupHistogram) * jobs.size(), cudaMemcpyHostToDevice));
  wg::launch_group_histograms(d_jobs.get(), static_cast<uint32_t>(jobs.size()), widest,
                              static_cast<uint32_t>(cands.size()), d_temp.get(), nullptr);
  std::vector<unsigned long long> out(groups.size() * std::size_t{wg::kHistBins});
  CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), 8 * out.size(), cudaMemcpyDeviceToHost));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<uint64_t> want;
    wavelet::histogram_at_shift(merged[g].hist, merged[g].top, chosen[g], want);
    ASSERT_LE(want.size(), jobs[g].alphabet) << "group " << g;
    want.resize(jobs[g].alphabet, 0);
    const std::vector<uint64_t> got(out.begin() + g * wg::kHistBins, out.begin() + g * wg::kHistBins + want.size());
    EXPECT_EQ(got, want) << "group " << g << " at shift " << chosen[g] << " (k0 " << expected[g].k0 << ", bins "
                         << expected[g].bins << ")";
  }
}

}  // namespace
}  // namespace vlec

#endif  // VLEC_WITH_CUDA
