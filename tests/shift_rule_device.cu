// tests/shift_rule_device.cu: evaluates src/wavelet/shift_rule.hpp in device
// code for ShiftRule.DeviceMatchesHost (tests/test_shift_rule.cpp), so the
// CUDA build proves the header compiles for the GPU and the GPU's values can
// be compared with the host's: the one-thread rule (choose_shift) and the
// summary of the k0 histogram reduced in parallel from 16-bin ranges.
#include <cstdint>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::test {

namespace {

namespace sr = wavelet::shift_rule;

__global__ void shift_rule_kernel(const uint32_t* hist, uint32_t bins, uint64_t n, uint32_t top, unsigned search,
                                  unsigned long long* out) {
  // out: [0] shift, [1] its estimate, [2] cost_fx, [3] symbols, [4] groups, [5] alphabet, [6] n
  const uint32_t first = (blockIdx.x * blockDim.x + threadIdx.x) * sr::kBinsPerCodebookGroup;
  if (first < bins) {
    const uint32_t end = bins - first < sr::kBinsPerCodebookGroup ? bins : first + sr::kBinsPerCodebookGroup;
    const sr::Summary s = sr::summarize([&](uint32_t b) { return uint64_t{hist[b]}; }, first, end, n);
    atomicAdd(&out[2], static_cast<unsigned long long>(s.cost_fx));
    atomicAdd(&out[3], static_cast<unsigned long long>(s.symbols));
    atomicAdd(&out[4], static_cast<unsigned long long>(s.groups));
    atomicMax(&out[5], static_cast<unsigned long long>(s.alphabet));
    atomicAdd(&out[6], static_cast<unsigned long long>(s.n));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    uint64_t bits = 0;
    out[0] = sr::choose_shift(hist, bins, n, top, search, &bits);
    out[1] = bits;
  }
}

}  // namespace

// Runs the kernel on `hist` (the k0 histogram of n values up to `top`);
// returns the seven values listed in the kernel.
std::vector<uint64_t> shift_rule_on_device(const std::vector<uint32_t>& hist, uint64_t n, uint32_t top,
                                           unsigned search) {
  const uint32_t bins = static_cast<uint32_t>(hist.size());
  cuda::DeviceBuffer<uint32_t> d_hist(hist.size());
  cuda::DeviceBuffer<unsigned long long> d_out(7);
  CUDA_CHECK(cudaMemcpy(d_hist.get(), hist.data(), hist.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out.get(), 0, 7 * sizeof(unsigned long long)));
  const uint32_t threads = (bins + sr::kBinsPerCodebookGroup - 1) / sr::kBinsPerCodebookGroup;
  shift_rule_kernel<<<(threads + 127) / 128, 128>>>(d_hist.get(), bins, n, top, search, d_out.get());
  CUDA_CHECK(cudaGetLastError());
  std::vector<unsigned long long> out(7);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), 7 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  return std::vector<uint64_t>(out.begin(), out.end());
}

}  // namespace vlec::test
