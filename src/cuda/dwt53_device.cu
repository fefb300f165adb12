// cuda/dwt53_device.cu: the GPU 5/3 transform's host side (vlec/device_dwt.hpp):
// argument checks, the temp-storage layout and the plan of passes per level.
//
// Levels never work in place. Level k reads the low band of level k-1 and
// writes its own low band to a compact buffer (ping-pong: the low band of
// level m lives in buffer A for odd m, B for even m, so a level never reads
// the buffer it writes) and every other subband straight to its final place
// in the caller's coefficients; the last level writes its low band there
// too. So each level reads its input once and writes each coefficient once,
// with no copy-back, and no block can read what another block of the same
// kernel writes. The inverse runs the same plan backwards.
//
// 1D and 2D levels are one rows pass (x and y fused); 3D levels are a rows
// pass into a full-size work buffer W and a z pass from it. Tuning::fuse_xy
// = false splits 2D levels into an x pass and a y pass through W (the
// unfused baseline the benchmark compares against).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "dwt/dwt53.hpp"
#include "vlec/device_dwt.hpp"

namespace vlec::cuda::dwt {
namespace {

using device::DwtSample;

constexpr std::size_t kAlign = 256;
std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Checks the shape and level count; returns the level extents (vlec::dwt's,
// so the level count is the CPU's).
std::vector<DwtShape> plan(const char* fn, const DwtShape& shape, unsigned levels) {
  VLEC_REQUIRE(levels <= kDwtMaxLevels, fn, ": levels ", levels, " is more than ", kDwtMaxLevels);
  constexpr std::size_t kMaxAxis = std::size_t{1} << 30;
  VLEC_REQUIRE(shape.nx < kMaxAxis && shape.ny < kMaxAxis && shape.nz < kMaxAxis, fn, ": shape ", shape.nx, " x ",
               shape.ny, " x ", shape.nz, " has an axis of 2^30 or more samples");
  VLEC_REQUIRE(shape.nx == 0 || shape.ny == 0 || shape.nz == 0 ||
                   shape.nx * shape.ny <= std::numeric_limits<std::size_t>::max() / 16 / shape.nz,
               fn, ": shape ", shape.nx, " x ", shape.ny, " x ", shape.nz, " is too large");
  return vlec::dwt::level_extents(shape, levels);
}

bool needs_w(const DwtShape& e, const Tuning& tu) {
  if (e.nz > 1) return e.nx > 1 || e.ny > 1;
  return !tu.fuse_xy && e.nx > 1 && e.ny > 1;
}

struct Layout {
  int32_t* a = nullptr;  // low bands of odd levels
  int32_t* b = nullptr;  // low bands of even levels
  int32_t* w = nullptr;  // between the passes of one level
  std::size_t bytes = 0;
};

Layout layout(const std::vector<DwtShape>& ext, const Tuning& tu, void* base) {
  const std::size_t levels = ext.size() - 1;
  std::size_t a = 0, b = 0, w = 0;
  if (levels >= 2) a = round_up(ext[1].samples() * 4);
  if (levels >= 3) b = round_up(ext[2].samples() * 4);
  for (std::size_t k = 1; k <= levels; ++k)
    if (needs_w(ext[k - 1], tu)) w = std::max(w, round_up(ext[k - 1].samples() * 4));
  Layout l;
  l.bytes = a + b + w;
  if (base) {
    char* p = static_cast<char*>(base);
    l.a = a ? reinterpret_cast<int32_t*>(p) : nullptr;
    l.b = b ? reinterpret_cast<int32_t*>(p + a) : nullptr;
    l.w = w ? reinterpret_cast<int32_t*>(p + a + b) : nullptr;
  }
  return l;
}

Ref compact(int32_t* p, const DwtShape& e) {
  return {p, static_cast<int64_t>(e.nx), static_cast<int64_t>(e.nx * e.ny)};
}
int32_t* low_buffer(const Layout& l, std::size_t m) { return m % 2 ? l.a : l.b; }

void check_args(const char* fn, const void* a, const void* b, const uint64_t* d_error, std::size_t need, void* temp,
                std::size_t temp_bytes) {
  VLEC_REQUIRE(a != nullptr && b != nullptr && d_error != nullptr, fn, ": null buffer");
  VLEC_REQUIRE(temp_bytes >= need, fn, ": temp storage of ", temp_bytes, " bytes, ", need, " needed");
  VLEC_REQUIRE(need == 0 || temp != nullptr, fn, ": null temp storage");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(temp) % 16 == 0, fn, ": temp storage must be 16-byte aligned");
}

// The passes of forward level k (1-based), box e = ext[k-1].
void forward_level(const Pass& level, const Layout& l, const Tuning& tu, cudaStream_t stream) {
  const Box& e = level.e;
  if (e.nz > 1) {
    Pass z = level;
    if (e.nx > 1 || e.ny > 1) {  // x and y into W, then z routed
      Pass xy = level;
      xy.lo = xy.hi = compact(l.w, DwtShape{std::size_t(e.nx), std::size_t(e.ny), std::size_t(e.nz)});
      forward_rows(xy, tu, stream);
      z.src = l.w;
      z.type = DwtSample::i32;
      z.ssy = xy.lo.sy;
      z.ssz = xy.lo.sz;
    }
    return forward_z(z, stream);
  }
  if (!level.do_x || !level.do_y || tu.fuse_xy) return forward_rows(level, tu, stream);
  Pass x = level, y = level;  // unfused: x pass into W, y pass from W
  x.do_y = false;
  x.lo = x.hi = compact(l.w, DwtShape{std::size_t(e.nx), std::size_t(e.ny), 1});
  forward_rows(x, tu, stream);
  y.do_x = false;
  y.src = l.w;
  y.type = DwtSample::i32;
  y.ssy = x.lo.sy;
  y.ssz = x.lo.sz;
  forward_rows(y, tu, stream);
}

void inverse_level(const Pass& level, const Layout& l, const Tuning& tu, cudaStream_t stream) {
  const Box& e = level.e;
  if (e.nz > 1) {
    if (!(e.nx > 1 || e.ny > 1)) return inverse_z(level, stream);
    Pass z = level, yx = level;  // z routed into W, then y and x from W
    z.dst = l.w;
    z.check = false;
    z.type = DwtSample::i32;
    const Ref w = compact(l.w, DwtShape{std::size_t(e.nx), std::size_t(e.ny), std::size_t(e.nz)});
    z.ssy = w.sy;
    z.ssz = w.sz;
    inverse_z(z, stream);
    yx.lo = yx.hi = w;
    return inverse_rows(yx, tu, stream);
  }
  if (!level.do_x || !level.do_y || tu.fuse_xy) return inverse_rows(level, tu, stream);
  Pass y = level, x = level;  // unfused: y pass into W, x pass from W
  const Ref w = compact(l.w, DwtShape{std::size_t(e.nx), std::size_t(e.ny), 1});
  y.do_x = false;
  y.dst = l.w;
  y.check = false;
  y.type = DwtSample::i32;
  y.ssy = w.sy;
  y.ssz = w.sz;
  inverse_rows(y, tu, stream);
  x.do_y = false;
  x.lo = x.hi = w;
  inverse_rows(x, tu, stream);
}

Pass level_pass(const DwtShape& e, const DwtShape& low) {
  Pass p;
  p.e = {static_cast<int>(e.nx), static_cast<int>(e.ny), static_cast<int>(e.nz)};
  p.lx = static_cast<int>(low.nx);
  p.ly = static_cast<int>(low.ny);
  p.lz = static_cast<int>(low.nz);
  p.do_x = e.nx > 1;
  p.do_y = e.ny > 1;
  return p;
}

std::string position(const DwtShape& s, uint64_t index) {
  return detail::concat("index ", index, " (x ", index % s.nx, ", y ", index / s.nx % s.ny, ", z ",
                        index / s.nx / s.ny, ")");
}

}  // namespace

cudaEvent_t* inverse_level_events = nullptr;

std::size_t temp_bytes(const DwtShape& shape, unsigned levels, const Tuning& tuning) {
  const std::vector<DwtShape> ext = plan("dwt53_temp_bytes", shape, levels);
  if (shape.samples() == 0) return 0;
  return layout(ext, tuning, nullptr).bytes;
}

void forward(const void* d_samples, DwtSample type, int32_t* d_coeffs, const DwtShape& shape, unsigned levels,
             uint64_t* d_error, void* d_temp, std::size_t temp_bytes, cudaStream_t stream, const Tuning& tu,
             const BandTops* tops, const cudaEvent_t* level_done) {
  const std::vector<DwtShape> ext = plan("dwt53_forward", shape, levels);
  if (tops)
    for (std::size_t k = 1; k < ext.size(); ++k)
      VLEC_REQUIRE(!tops[k - 1].any() || (ext[k - 1].nz == 1 && ext[k - 1].nx > 1 && ext[k - 1].ny > 1 &&
                                          tu.fuse_xy && tu.prefetch),
                   "dwt53_forward: subband tops at level ", k,
                   ", which does not split x and y in 2D (or without the fused, prefetching rows pass)");
  const std::size_t total = shape.samples();
  if (total == 0) {
    if (d_error) CUDA_CHECK(cudaMemsetAsync(d_error, 0xff, sizeof(uint64_t), stream));
    return;
  }
  const Layout l = layout(ext, tu, d_temp);
  check_args("dwt53_forward", d_samples, d_coeffs, d_error, l.bytes, d_temp, temp_bytes);
  CUDA_CHECK(cudaMemsetAsync(d_error, 0xff, sizeof(uint64_t), stream));
  if (type == DwtSample::i32) forward_check_i32(static_cast<const int32_t*>(d_samples), total, d_error, stream);
  const std::size_t L = ext.size() - 1;
  if (L == 0) return forward_convert(d_samples, type, d_coeffs, total, stream);
  const Ref full{d_coeffs, static_cast<int64_t>(shape.nx), static_cast<int64_t>(shape.nx * shape.ny)};
  for (std::size_t k = 1; k <= L; ++k) {
    Pass p = level_pass(ext[k - 1], ext[k]);
    if (k == 1) {
      p.src = d_samples;
      p.type = type;
      p.ssy = full.sy;
      p.ssz = full.sz;
    } else {
      const Ref in = compact(low_buffer(l, k - 1), ext[k - 1]);
      p.src = in.p;
      p.type = DwtSample::i32;
      p.ssy = in.sy;
      p.ssz = in.sz;
    }
    p.lo = k == L ? full : compact(low_buffer(l, k), ext[k]);
    p.hi = full;
    if (tops) p.tops = tops[k - 1];
    forward_level(p, l, tu, stream);
    if (level_done && level_done[k - 1]) CUDA_CHECK(cudaEventRecord(level_done[k - 1], stream));
  }
}

void inverse(const int32_t* d_coeffs, void* d_samples, DwtSample type, const DwtShape& shape, unsigned levels,
             uint64_t* d_error, void* d_temp, std::size_t temp_bytes, cudaStream_t stream, const Tuning& tu,
             const CodedDetails* coded, std::size_t coded_levels) {
  const std::vector<DwtShape> ext = plan("dwt53_inverse", shape, levels);
  VLEC_REQUIRE(coded_levels <= ext.size() - 1 && (!coded_levels || (tu.fuse_xy && tu.prefetch)),
               "dwt53_inverse: details from symbols for ", coded_levels, " of ", ext.size() - 1,
               " levels (and only with the fused, prefetching rows pass)");
  for (std::size_t k = 1; k <= coded_levels; ++k)
    VLEC_REQUIRE(!coded[k - 1].band[0].symbols ||
                     (ext[k - 1].nz == 1 && ext[k - 1].nx > 1 && ext[k - 1].ny > 1),
                 "dwt53_inverse: details from symbols at level ", k, ", which does not split x and y in 2D");
  const std::size_t total = shape.samples();
  if (total == 0) {
    if (d_error) CUDA_CHECK(cudaMemsetAsync(d_error, 0xff, sizeof(uint64_t), stream));
    return;
  }
  const Layout l = layout(ext, tu, d_temp);
  check_args("dwt53_inverse", d_coeffs, d_samples, d_error, l.bytes, d_temp, temp_bytes);
  CUDA_CHECK(cudaMemsetAsync(d_error, 0xff, sizeof(uint64_t), stream));
  const std::size_t L = ext.size() - 1;
  if (L == 0) return inverse_convert(d_coeffs, d_samples, type, total, d_error, stream);
  // The kernels only read through lo/hi (Ref has a mutable pointer for the forward's sake).
  const Ref full{const_cast<int32_t*>(d_coeffs), static_cast<int64_t>(shape.nx),
                 static_cast<int64_t>(shape.nx * shape.ny)};
  if (inverse_level_events) CUDA_CHECK(cudaEventRecord(inverse_level_events[0], stream));
  for (std::size_t k = L; k >= 1; --k) {
    Pass p = level_pass(ext[k - 1], ext[k]);
    p.lo = k == L ? full : compact(low_buffer(l, k), ext[k]);
    p.hi = full;
    p.d_error = d_error;
    if (k <= coded_levels && coded[k - 1].band[0].symbols) p.coded = &coded[k - 1];
    if (k == 1) {
      p.dst = d_samples;
      p.type = type;
      p.check = true;
      p.ssy = full.sy;
      p.ssz = full.sz;
    } else {
      const Ref out = compact(low_buffer(l, k - 1), ext[k - 1]);
      p.dst = out.p;
      p.type = DwtSample::i32;
      p.check = false;
      p.ssy = out.sy;
      p.ssz = out.sz;
    }
    inverse_level(p, l, tu, stream);
    if (inverse_level_events) CUDA_CHECK(cudaEventRecord(inverse_level_events[L - k + 1], stream));
  }
}

}  // namespace vlec::cuda::dwt

namespace vlec::device {

std::size_t dwt53_temp_bytes(const DwtShape& shape, unsigned levels) {
  return cuda::dwt::temp_bytes(shape, levels, cuda::dwt::Tuning{});
}

void dwt53_forward(const void* d_samples, DwtSample type, int32_t* d_coeffs, const DwtShape& shape, unsigned levels,
                   uint64_t* d_error, void* d_temp, std::size_t temp_bytes, Stream stream) {
  cuda::dwt::forward(d_samples, type, d_coeffs, shape, levels, d_error, d_temp, temp_bytes, stream,
                     cuda::dwt::Tuning{});
}

void dwt53_inverse(const int32_t* d_coeffs, void* d_samples, DwtSample type, const DwtShape& shape, unsigned levels,
                   uint64_t* d_error, void* d_temp, std::size_t temp_bytes, Stream stream) {
  cuda::dwt::inverse(d_coeffs, d_samples, type, shape, levels, d_error, d_temp, temp_bytes, stream,
                     cuda::dwt::Tuning{});
}

void dwt53_throw_if_error(const uint64_t* d_error, bool inverse, DwtSample type, const DwtShape& shape,
                          Stream stream) {
  VLEC_REQUIRE(d_error != nullptr, "dwt53_throw_if_error: null error word");
  uint64_t err = 0;
  CUDA_CHECK(cudaMemcpyAsync(&err, d_error, sizeof err, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (err == ~uint64_t{0}) return;
  static const char* const kNames[] = {"u8", "u16", "i16", "i32"};
  static const int32_t kLo[] = {0, 0, -32768, kDwtMinI32};
  static const int32_t kHi[] = {255, 65535, 32767, kDwtMaxI32};
  const int t = static_cast<int>(type);
  if (!inverse)
    VLEC_REQUIRE(false, "dwt53_forward: i32 sample at ", cuda::dwt::position(shape, err), " is outside [",
                 kDwtMinI32, ", ", kDwtMaxI32, "], the range the transform takes without int32 overflow");
  VLEC_REQUIRE(false, "dwt53_inverse: the coefficients are not a forward transform of ", kNames[t],
               " samples with this shape and level count: the sample at ", cuda::dwt::position(shape, err),
               " falls outside [", kLo[t], ", ", kHi[t], "]");
}

}  // namespace vlec::device
