// dwt/dwt53.cpp: the multi-level 1D/2D/3D reversible 5/3 transform on the CPU
// (vlec/dwt.hpp): argument checks, the level loop, and the passes that hand
// rows and column blocks to the lifting kernels (lifting.hpp) on all threads.
//
// Why it is fast:
//  * The first level, which moves most of the data, is one pass each way:
//    the forward reads the caller's samples and writes finished level-1
//    coefficients (x and y fused, rows x-transformed into a few row buffers
//    as the y lifting needs them); the inverse reads coefficients and writes
//    the caller's samples (y and x fused). No pass converts types.
//  * Deeper levels (and z, and 1D) lift in place in the int32 buffer: x lines
//    from a split even/odd line buffer with vectorized element-wise loops; y
//    and z kBlock columns at a time, so each memory access is a run of 1 KiB
//    (whole cache lines, few TLB misses, prefetch-friendly) and the inner
//    loops are SIMD loops over the lanes, instead of one strided walk per
//    column.
//  * The const inverse of a 2D array copies only the LL band of level 1 (a
//    quarter) into fresh memory, on transparent huge pages where offered.
//  * Range checks are branch-free OR reductions, once per row.
//  * Parallel jobs are groups of rows, row steps or column blocks, handed out
//    by parallel_for's atomic counter; each job writes only its own samples,
//    so the result does not depend on the thread count.
#include "dwt/dwt53.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "dwt/lifting.hpp"

namespace vlec {
namespace dwt {

namespace {

std::size_t half_up(std::size_t n) { return n - n / 2; }
std::size_t div_up(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

template <typename T> const char* type_name();
template <> const char* type_name<uint8_t>() { return "u8"; }
template <> const char* type_name<uint16_t>() { return "u16"; }
template <> const char* type_name<int16_t>() { return "i16"; }
template <> const char* type_name<int32_t>() { return "i32"; }

// Sample range of a type as the transform accepts it (i32 is limited so that
// no coefficient or lifting sum can overflow): [range_lo, range_lo + span],
// span = 2^k - 1 (the form the range checks of lifting.hpp take).
template <typename T>
constexpr int32_t range_lo() {
  return std::is_same_v<T, int32_t> ? kDwtMinI32 : static_cast<int32_t>(std::numeric_limits<T>::min());
}
template <typename T>
constexpr int32_t range_hi() {
  return std::is_same_v<T, int32_t> ? kDwtMaxI32 : static_cast<int32_t>(std::numeric_limits<T>::max());
}
template <typename T>
constexpr uint32_t range_span() {
  constexpr uint32_t span = static_cast<uint32_t>(range_hi<T>()) - static_cast<uint32_t>(range_lo<T>());
  static_assert((span & (span + 1)) == 0, "the range checks need a span of 2^k - 1");
  return span;
}

// Per-job scratch memory, not zeroed (every kernel writes before it reads).
std::unique_ptr<int32_t[]> scratch(std::size_t n) { return std::unique_ptr<int32_t[]>(new int32_t[n]); }

std::string position(const DwtShape& s, std::size_t index) {
  return detail::concat("index ", index, " (x ", index % s.nx, ", y ", index / s.nx % s.ny, ", z ",
                        index / s.nx / s.ny, ")");
}

// Returns shape.samples(); throws invalid_argument for a bad shape, level
// count or null buffer.
std::size_t validate(const char* fn, const DwtShape& shape, const DwtOptions& options, const void* in,
                     const void* out) {
  VLEC_REQUIRE(options.levels <= kDwtMaxLevels, fn, ": levels ", options.levels, " is more than ", kDwtMaxLevels);
  const std::size_t limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / 8;
  std::size_t total = 1;
  for (std::size_t n : {shape.nx, shape.ny, shape.nz}) {
    if (n == 0) return 0;
    VLEC_REQUIRE(total <= limit / n, fn, ": shape ", shape.nx, " x ", shape.ny, " x ", shape.nz, " is too large");
    total *= n;
  }
  VLEC_REQUIRE(in != nullptr && out != nullptr, fn, ": null buffer for ", total, " samples");
  return total;
}

// Rejects i32 samples outside [kDwtMinI32, kDwtMaxI32]; reports the first one.
void check_i32_samples(const int32_t* in, std::size_t total, const DwtShape& shape, unsigned threads) {
  const std::size_t jobs = div_up(total, kJobSamples);
  std::vector<uint8_t> bad(jobs, 0);
  parallel_for(jobs, threads, [&](std::size_t j) {
    const std::size_t a = j * kJobSamples, b = std::min(total, a + kJobSamples);
    bad[j] = !in_range(in + a, b - a, kDwtMinI32, range_span<int32_t>());
  });
  for (std::size_t j = 0; j < jobs; ++j) {
    if (!bad[j]) continue;
    std::size_t i = j * kJobSamples;
    while (in[i] >= kDwtMinI32 && in[i] <= kDwtMaxI32) ++i;
    VLEC_REQUIRE(false, "dwt53_forward: i32 sample ", in[i], " at ", position(shape, i), " is outside [",
                 kDwtMinI32, ", ", kDwtMaxI32, "], the range the transform takes without int32 overflow");
  }
}

[[noreturn]] void throw_out_of_range(const char* tname, int32_t lo, int32_t hi, const std::string& where) {
  detail::throw_error(ErrorCode::invalid_argument,
                      detail::concat("dwt53_inverse: the coefficients are not a forward transform of ", tname,
                                     " samples with this shape and level count: the sample at ", where,
                                     " falls outside [", lo, ", ", hi, "]"));
}

// Samples to int32, for when no x pass comes first (nx == 1, or no level).
template <typename T>
void convert_in(const T* in, int32_t* out, std::size_t total, unsigned threads) {
  parallel_for(div_up(total, kJobSamples), threads, [&](std::size_t j) {
    const std::size_t a = j * kJobSamples, b = std::min(total, a + kJobSamples);
    for (std::size_t i = a; i < b; ++i) out[i] = static_cast<int32_t>(in[i]);
  });
}

// int32 to samples, range-checked, for when no x pass comes last.
template <typename T>
void convert_out(const int32_t* in, T* out, const DwtShape& shape, std::size_t total, unsigned threads) {
  constexpr int32_t lo = range_lo<T>(), hi = range_hi<T>();
  parallel_for(div_up(total, kJobSamples), threads, [&](std::size_t j) {
    const std::size_t a = j * kJobSamples, b = std::min(total, a + kJobSamples);
    if (!in_range(in + a, b - a, lo, range_span<T>())) {
      std::size_t i = a;
      while (in[i] >= lo && in[i] <= hi) ++i;
      throw_out_of_range(type_name<T>(), lo, hi, position(shape, i));
    }
    for (std::size_t i = a; i < b; ++i) out[i] = static_cast<T>(in[i]);
  });
}

// The x pass of one level: every row (y < e.ny, z < e.nz) of the low band e,
// each of length e.nx >= 2. Forward reads `src` (the samples on the first
// pass, else `work` itself) and writes `work`.
template <typename Tin>
void forward_x(const Tin* src, int32_t* work, const DwtShape& full, const DwtShape& e, unsigned threads) {
  const std::size_t rows = e.ny * e.nz, per_job = std::max<std::size_t>(1, kJobSamples / e.nx);
  parallel_for(div_up(rows, per_job), threads, [&](std::size_t j) {
    const std::unique_ptr<int32_t[]> buf = scratch(2 * half_up(e.nx));
    for (std::size_t r = j * per_job, end = std::min(rows, r + per_job); r < end; ++r) {
      const std::size_t off = (r / e.ny * full.ny + r % e.ny) * full.nx;
      forward_line(src + off, work + off, e.nx, buf.get(), buf.get() + half_up(e.nx));
    }
  });
}

// Inverse x pass: `work` rows to `out` rows (out == work for inner levels;
// the caller's samples, range-checked, for the last pass).
template <typename Tout, bool kCheck>
void inverse_x(int32_t* work, Tout* out, const DwtShape& full, const DwtShape& e, unsigned threads) {
  constexpr int32_t lo = range_lo<Tout>(), hi = range_hi<Tout>();
  const std::size_t rows = e.ny * e.nz, per_job = std::max<std::size_t>(1, kJobSamples / e.nx);
  parallel_for(div_up(rows, per_job), threads, [&](std::size_t j) {
    const std::unique_ptr<int32_t[]> buf = scratch(2 * half_up(e.nx));
    for (std::size_t r = j * per_job, end = std::min(rows, r + per_job); r < end; ++r) {
      const std::size_t off = (r / e.ny * full.ny + r % e.ny) * full.nx;
      if (!inverse_line<Tout, kCheck>(work + off, out + off, e.nx, buf.get(), buf.get() + half_up(e.nx), lo,
                                      range_span<Tout>())) {
        // Find the sample for the message: int32 samples written over the
        // coefficients are the values themselves; otherwise rerun the row.
        std::vector<int32_t> row(e.nx);
        if (static_cast<const void*>(out) == static_cast<const void*>(work)) std::copy(work + off, work + off + e.nx, row.begin());
        else inverse_line<int32_t, false>(work + off, row.data(), e.nx, buf.get(), buf.get() + half_up(e.nx), 0, 0u);
        std::size_t x = 0;
        while (x + 1 < e.nx && row[x] >= lo && row[x] <= hi) ++x;
        throw_out_of_range(type_name<Tout>(), lo, hi, position(full, off + x));
      }
    }
  });
}

// A y or z pass: `outer` groups (z slices for y, y rows for z, `outer_stride`
// apart) of `width` columns, each column `n` >= 2 samples `stride` apart,
// lifted kBlock columns at a time.
template <bool kForward>
void column_pass(int32_t* work, std::ptrdiff_t stride, std::size_t n, std::size_t outer, std::size_t outer_stride,
                 std::size_t width, unsigned threads) {
  // Narrower blocks where wide ones would leave threads idle (the lanes are
  // independent: the block width never changes the result).
  std::size_t bw = kBlock;
  const std::size_t want = 4 * std::size_t{resolve_threads(threads, std::size_t(-1))};
  while (bw > kMinBlock && outer * div_up(width, bw) < want) bw /= 2;
  const std::size_t blocks = div_up(width, bw), units = outer * blocks;
  const std::size_t per_job = std::max<std::size_t>(1, kJobSamples / (n * bw));
  parallel_for(div_up(units, per_job), threads, [&](std::size_t j) {
    const std::unique_ptr<int32_t[]> buf = scratch((half_up(n) + 2) * bw);
    for (std::size_t u = j * per_job, end = std::min(units, u + per_job); u < end; ++u) {
      const std::size_t k = u % blocks, lanes = std::min(bw, width - k * bw);
      int32_t* p = work + u / blocks * outer_stride + k * bw;
      if (kForward) forward_columns(p, stride, n, lanes, buf.get());
      else inverse_columns(p, p, stride, n, lanes, buf.get());
    }
  });
}

// The first level's x and y passes in one (lifting.hpp, forward_xy_rows):
// jobs of kFusedSteps y steps (2 * kFusedSteps rows) of one z slice.
constexpr std::size_t kFusedSteps = 32;

template <typename Tin>
void forward_xy(const Tin* src, int32_t* out, const DwtShape& s, unsigned threads) {
  const std::size_t nl = s.ny - s.ny / 2, plane = s.nx * s.ny;
  const std::size_t chunks = div_up(nl, kFusedSteps), units = s.nz * chunks;
  parallel_for(units, threads, [&](std::size_t u) {
    const std::unique_ptr<int32_t[]> buf = scratch(4 * s.nx + 2 * half_up(s.nx));
    const std::size_t z = u / chunks, i0 = u % chunks * kFusedSteps;
    forward_xy_rows(src + z * plane, out + z * plane, s.nx, s.ny, i0, std::min(nl, i0 + kFusedSteps),
                    buf.get());
  });
}

template <typename T>
void forward_impl(const T* in, int32_t* out, const DwtShape& shape, const DwtOptions& options) {
  const std::size_t total = validate("dwt53_forward", shape, options, in, out);
  if (total == 0) return;
  const unsigned threads = options.threads;
  if constexpr (std::is_same_v<T, int32_t>) check_i32_samples(in, total, shape, threads);
  const std::vector<DwtShape> ext = level_extents(shape, options.levels);
  const std::size_t levels = ext.size() - 1, plane = shape.nx * shape.ny;
  bool converted = false;
  if (levels == 0 || shape.nx == 1) {
    convert_in(in, out, total, threads);
    converted = true;
  }
  for (std::size_t k = 0; k < levels; ++k) {
    const DwtShape& e = ext[k];
    if (k == 0 && e.nx > 1 && e.ny > 1) {  // samples -> x and y in one pass
      forward_xy(in, out, shape, threads);
      converted = true;
      if (e.nz > 1) column_pass<true>(out, static_cast<std::ptrdiff_t>(plane), e.nz, e.ny, shape.nx, e.nx, threads);
      continue;
    }
    if (e.nx > 1) {
      if (!converted) forward_x(in, out, shape, e, threads);
      else forward_x<int32_t>(out, out, shape, e, threads);
      converted = true;
    }
    if (e.ny > 1) column_pass<true>(out, static_cast<std::ptrdiff_t>(shape.nx), e.ny, e.nz, plane, e.nx, threads);
    if (e.nz > 1) column_pass<true>(out, static_cast<std::ptrdiff_t>(plane), e.nz, e.ny, shape.nx, e.nx, threads);
  }
}

// The first level's y and x inverse passes in one (lifting.hpp,
// inverse_yx_rows), coefficients to samples: jobs of kFusedSteps y steps of
// one z slice.
template <typename Tout>
void inverse_yx(const int32_t* work, const int32_t* ll, std::size_t ll_stride, Tout* out, const DwtShape& s,
                unsigned threads) {
  const std::size_t nl = s.ny - s.ny / 2, plane = s.nx * s.ny;
  const std::size_t chunks = div_up(nl, kFusedSteps), units = s.nz * chunks;
  parallel_for(units, threads, [&](std::size_t u) {
    const std::unique_ptr<int32_t[]> buf = scratch(4 * s.nx + 2 * half_up(s.nx));
    const std::size_t z = u / chunks, i0 = u % chunks * kFusedSteps;
    const std::size_t bad = inverse_yx_rows(work + z * plane, ll + z * plane, ll_stride, out + z * plane, s.nx, s.ny, i0,
                                            std::min(nl, i0 + kFusedSteps), buf.get(), range_lo<Tout>(),
                                            range_span<Tout>());
    if (bad != ~std::size_t{0})
      throw_out_of_range(type_name<Tout>(), range_lo<Tout>(), range_hi<Tout>(), position(s, z * plane + bad));
  });
}

// Levels ext.size()-1 .. `stop` of the inverse, in place in `work` (int32,
// unchecked): every level but the last when stop == 1, all of them when 0.
void inverse_levels(int32_t* work, const DwtShape& shape, const std::vector<DwtShape>& ext, std::size_t stop,
                    unsigned threads) {
  const std::size_t plane = shape.nx * shape.ny;
  for (std::size_t k = ext.size() - 1; k-- > stop;) {
    const DwtShape& e = ext[k];
    if (e.nz > 1) column_pass<false>(work, static_cast<std::ptrdiff_t>(plane), e.nz, e.ny, shape.nx, e.nx, threads);
    if (e.ny > 1) column_pass<false>(work, static_cast<std::ptrdiff_t>(shape.nx), e.ny, e.nz, plane, e.nx, threads);
    if (e.nx > 1) inverse_x<int32_t, false>(work, work, shape, e, threads);
  }
}

template <typename T>
void inverse_work(int32_t* work, T* out, const DwtShape& shape, const DwtOptions& options) {
  const unsigned threads = options.threads;
  const std::size_t total = shape.samples();
  const std::vector<DwtShape> ext = level_extents(shape, options.levels);
  const std::size_t levels = ext.size() - 1, plane = shape.nx * shape.ny;
  if (levels == 0) return convert_out(work, out, shape, total, threads);
  inverse_levels(work, shape, ext, 1, threads);
  // The last level, into the caller's samples (range-checked).
  if (shape.nz > 1) column_pass<false>(work, static_cast<std::ptrdiff_t>(plane), shape.nz, shape.ny, shape.nx, shape.nx, threads);
  if (shape.nx > 1 && shape.ny > 1 && static_cast<const void*>(out) != static_cast<const void*>(work))
    return inverse_yx(work, work, shape.nx, out, shape, threads);  // y and x -> samples in one pass
  if (shape.ny > 1) column_pass<false>(work, static_cast<std::ptrdiff_t>(shape.nx), shape.ny, shape.nz, plane, shape.nx, threads);
  if (shape.nx > 1) inverse_x<T, true>(work, out, shape, shape, threads);
  else convert_out(work, out, shape, total, threads);
}

template <typename T>
void inverse_inplace_impl(int32_t* coeffs, T* out, const DwtShape& shape, const DwtOptions& options) {
  const std::size_t total = validate("dwt53_inverse", shape, options, coeffs, out);
  if (total == 0) return;
  inverse_work(coeffs, out, shape, options);
}

// The z pass of the first level of a const 3D inverse, from the caller's
// coefficients to the full work buffer, with the LL band (x < c.nx, y < c.ny,
// z < c.nz) read from `ll`, its compact copy that the deeper levels were
// inverted in: so the coefficients are never copied whole.
void inverse_z_from(const int32_t* coeffs, const int32_t* ll, const DwtShape& c, int32_t* work, const DwtShape& s,
                    unsigned threads) {
  const std::size_t plane = s.nx * s.ny, n = s.nz;
  std::size_t bw = kBlock;
  const std::size_t want = 4 * std::size_t{resolve_threads(threads, std::size_t(-1))};
  while (bw > kMinBlock && s.ny * div_up(s.nx, bw) < want) bw /= 2;
  const std::size_t blocks = div_up(s.nx, bw), units = s.ny * blocks;
  const std::size_t per_job = std::max<std::size_t>(1, kJobSamples / (n * bw));
  parallel_for(div_up(units, per_job), threads, [&](std::size_t j) {
    const std::unique_ptr<int32_t[]> buf = scratch((half_up(n) + 2) * bw);
    for (std::size_t u = j * per_job, end = std::min(units, u + per_job); u < end; ++u) {
      const std::size_t y = u / blocks, x0 = u % blocks * bw, lanes = std::min(bw, s.nx - x0);
      const std::size_t split = (y < c.ny && x0 < c.nx) ? std::min(lanes, c.nx - x0) : 0;
      const std::size_t off = y * s.nx + x0;
      inverse_columns(coeffs + off, work + off, static_cast<std::ptrdiff_t>(plane), n, lanes, buf.get(),
                      split ? ll + y * c.nx + x0 : nullptr, static_cast<std::ptrdiff_t>(c.nx * c.ny), split);
    }
  });
}

// The inverse's working copy: not zeroed (the copy fills it) and, on Linux,
// backed by transparent huge pages where the kernel offers them on request:
// a fresh 64 MiB buffer otherwise costs 16,384 page faults, a third of the
// time of a 4096 x 4096 inverse.
class WorkBuffer {
 public:
  explicit WorkBuffer(std::size_t n) {
    const std::size_t bytes = n * sizeof(int32_t);
#ifdef __linux__
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    if (bytes >= 4 * kHuge) {
      p_ = static_cast<int32_t*>(std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge));
      if (p_) madvise(p_, bytes, MADV_HUGEPAGE);  // a hint: failure changes nothing
    }
#endif
    if (!p_) p_ = static_cast<int32_t*>(std::malloc(bytes));
    if (!p_) throw std::bad_alloc();
  }
  ~WorkBuffer() { std::free(p_); }
  WorkBuffer(const WorkBuffer&) = delete;
  WorkBuffer& operator=(const WorkBuffer&) = delete;
  int32_t* data() { return p_; }

 private:
  int32_t* p_ = nullptr;
};

template <typename T>
void inverse_copy_impl(const int32_t* coeffs, T* out, const DwtShape& shape, const DwtOptions& options) {
  const std::size_t total = validate("dwt53_inverse", shape, options, coeffs, out);
  if (total == 0) return;
  const std::vector<DwtShape> ext = level_extents(shape, options.levels);
  if (shape.nz == 1 && shape.nx > 1 && shape.ny > 1 && ext.size() > 1) {
    // 2D: only the LL band of the first level changes before the last, fused,
    // level; it is a transform of its own (shape ext[1], one level fewer),
    // so a compact copy of it is all the work memory needed: a quarter.
    const DwtShape& c = ext[1];
    WorkBuffer work(c.samples());
    const std::size_t per_job = std::max<std::size_t>(1, kJobSamples / c.nx);
    parallel_for(div_up(c.ny, per_job), options.threads, [&](std::size_t j) {
      for (std::size_t r = j * per_job, end = std::min(c.ny, r + per_job); r < end; ++r)
        std::memcpy(work.data() + r * c.nx, coeffs + r * shape.nx, c.nx * sizeof(int32_t));
    });
    inverse_levels(work.data(), c, std::vector<DwtShape>(ext.begin() + 1, ext.end()), 0, options.threads);
    return inverse_yx(coeffs, work.data(), c.nx, out, shape, options.threads);
  }
  if (shape.nz > 1 && shape.nx > 1 && shape.ny > 1 && ext.size() > 1) {
    // 3D: likewise, the LL band of level 1 (an eighth) is inverted in a
    // compact copy; the first level's z pass then reads it and the caller's
    // coefficients and writes the full work buffer, the fused y+x pass reads
    // that: the coefficients are read once and never copied whole.
    const DwtShape& c = ext[1];
    WorkBuffer low(c.samples());
    const std::size_t rows = c.ny * c.nz, per_job = std::max<std::size_t>(1, kJobSamples / c.nx);
    parallel_for(div_up(rows, per_job), options.threads, [&](std::size_t j) {
      for (std::size_t r = j * per_job, end = std::min(rows, r + per_job); r < end; ++r)
        std::memcpy(low.data() + r * c.nx, coeffs + (r / c.ny * shape.ny + r % c.ny) * shape.nx,
                    c.nx * sizeof(int32_t));
    });
    inverse_levels(low.data(), c, std::vector<DwtShape>(ext.begin() + 1, ext.end()), 0, options.threads);
    WorkBuffer work(total);
    inverse_z_from(coeffs, low.data(), c, work.data(), shape, options.threads);
    return inverse_yx(work.data(), work.data(), shape.nx, out, shape, options.threads);
  }
  WorkBuffer work(total);
  parallel_for(div_up(total, kJobSamples), options.threads, [&](std::size_t j) {
    const std::size_t a = j * kJobSamples, b = std::min(total, a + kJobSamples);
    std::memcpy(work.data() + a, coeffs + a, (b - a) * sizeof(int32_t));
  });
  inverse_work(work.data(), out, shape, options);
}

}  // namespace

std::vector<DwtShape> level_extents(const DwtShape& shape, unsigned levels) {
  std::vector<DwtShape> ext{shape};
  for (unsigned k = 0; k < levels; ++k) {
    const DwtShape& e = ext.back();
    if (e.nx <= 1 && e.ny <= 1 && e.nz <= 1) break;
    ext.push_back({half_up(e.nx), half_up(e.ny), half_up(e.nz)});
  }
  return ext;
}

}  // namespace dwt

DwtShape dwt53_low_extent(const DwtShape& shape, unsigned level) {
  DwtShape e = shape;
  for (unsigned k = 0; k < level && (e.nx > 1 || e.ny > 1 || e.nz > 1); ++k)
    e = {e.nx - e.nx / 2, e.ny - e.ny / 2, e.nz - e.nz / 2};
  return e;
}

#define VLEC_DWT53_API(T)                                                                                     \
  void dwt53_forward(const T* samples, int32_t* coeffs, const DwtShape& shape, const DwtOptions& options) {   \
    dwt::forward_impl(samples, coeffs, shape, options);                                                       \
  }                                                                                                           \
  void dwt53_inverse(const int32_t* coeffs, T* samples, const DwtShape& shape, const DwtOptions& options) {   \
    dwt::inverse_copy_impl(coeffs, samples, shape, options);                                                  \
  }                                                                                                           \
  void dwt53_inverse_inplace(int32_t* coeffs, T* samples, const DwtShape& shape, const DwtOptions& options) { \
    dwt::inverse_inplace_impl(coeffs, samples, shape, options);                                               \
  }
VLEC_DWT53_API(uint8_t)
VLEC_DWT53_API(uint16_t)
VLEC_DWT53_API(int16_t)
VLEC_DWT53_API(int32_t)
#undef VLEC_DWT53_API

}  // namespace vlec
