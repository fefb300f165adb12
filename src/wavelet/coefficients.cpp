// wavelet/coefficients.cpp: see coefficients.hpp. The plane loops run on all
// threads over row blocks; the bit packing is one sequential 64-bit
// accumulator pass per group (groups themselves run in parallel).
#include "wavelet/coefficients.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/bits.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"

namespace vlec::wavelet {

namespace {

constexpr std::size_t kPixelsPerJob = std::size_t{1} << 16;

template <typename T, typename P>
void split_typed(const T* in, std::size_t pixels, unsigned planes, bool rct, P* planar, unsigned threads) {
  const std::size_t jobs = (pixels + kPixelsPerJob - 1) / kPixelsPerJob;
  parallel_for(jobs, resolve_threads(threads, jobs), [&](std::size_t j) {
    const std::size_t end = std::min(pixels, (j + 1) * kPixelsPerJob);
    for (std::size_t i = j * kPixelsPerJob; i < end; ++i) {
      const T* px = in + i * planes;
      unsigned p = 0;
      if (rct) {
        const int32_t r = px[0], g = px[1], b = px[2];
        planar[i] = static_cast<P>((r + 2 * g + b) >> 2);
        planar[pixels + i] = static_cast<P>(b - g);
        planar[2 * pixels + i] = static_cast<P>(r - g);
        p = 3;
      }
      for (; p < planes; ++p) planar[p * pixels + i] = px[p];
    }
  });
}

// The inverse RCT on one pixel, in modular arithmetic: any int32 input is
// defined; the range check rejects what no encoder produced.
inline void inverse_rct(int32_t* v) {
  const int32_t y = v[0], cb = v[1], cr = v[2];
  const int32_t g =
      static_cast<int32_t>(static_cast<uint32_t>(y) - static_cast<uint32_t>((static_cast<int64_t>(cb) + cr) >> 2));
  v[0] = static_cast<int32_t>(static_cast<uint32_t>(cr) + static_cast<uint32_t>(g));
  v[1] = g;
  v[2] = static_cast<int32_t>(static_cast<uint32_t>(cb) + static_cast<uint32_t>(g));
}

// Pixels [begin, end) with a compile-time plane count (1 or 3: gray and RGB
// images, the common cases, become straight loops); returns false if any
// value falls outside the sample type, which the caller then reports.
template <typename T, unsigned kPlanes>
bool join_fixed(const int32_t* planar, std::size_t pixels, bool rct, bool big_endian, uint8_t* out, std::size_t begin,
                std::size_t end) {
  constexpr uint32_t kMax = std::numeric_limits<T>::max();
  uint32_t outside = 0;  // or of (value > kMax) over all values, as unsigned (negatives are huge)
  uint8_t* o = out + begin * kPlanes * sizeof(T);  // may be unaligned (odd prefix): memcpy stores
  for (std::size_t i = begin; i < end; ++i) {
    int32_t v[kPlanes];
    for (unsigned p = 0; p < kPlanes; ++p) v[p] = planar[p * pixels + i];
    if constexpr (kPlanes >= 3) {
      if (rct) inverse_rct(v);
    }
    for (unsigned p = 0; p < kPlanes; ++p) {
      const uint32_t u = static_cast<uint32_t>(v[p]);
      outside |= u > kMax;
      T t = static_cast<T>(u);
      if (sizeof(T) == 2 && big_endian) t = static_cast<T>((t >> 8) | (t << 8));
      std::memcpy(o + p * sizeof(T), &t, sizeof(T));
    }
    o += kPlanes * sizeof(T);
  }
  return outside == 0;
}

template <typename T>
void join_typed(const int32_t* planar, std::size_t pixels, unsigned planes, bool rct, bool big_endian, uint8_t* out,
                unsigned threads) {
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  const std::size_t jobs = (pixels + kPixelsPerJob - 1) / kPixelsPerJob;
  parallel_for(jobs, resolve_threads(threads, jobs), [&](std::size_t j) {
    const std::size_t begin = j * kPixelsPerJob;
    const std::size_t end = std::min(pixels, (j + 1) * kPixelsPerJob);
    if (planes == 1 && join_fixed<T, 1>(planar, pixels, rct, big_endian, out, begin, end)) return;
    if (planes == 3 && join_fixed<T, 3>(planar, pixels, rct, big_endian, out, begin, end)) return;
    for (std::size_t i = begin; i < end; ++i) {
      int32_t v[4];
      for (unsigned p = 0; p < planes; ++p) v[p] = planar[p * pixels + i];
      if (rct) inverse_rct(v);
      bool in_range = true;
      for (unsigned p = 0; p < planes; ++p) in_range &= v[p] >= 0 && v[p] <= kMax;
      if (!in_range)
        for (unsigned p = 0; p < planes; ++p)
          SAFETY_CHECK(v[p] >= 0 && v[p] <= kMax, ErrorCode::corrupt_stream, "wavelet frame decodes sample ", v[p],
                       " of plane ", p, " at pixel ", i, ", outside the sample type");
      T px[4];
      for (unsigned p = 0; p < planes; ++p) {
        px[p] = static_cast<T>(v[p]);
        if (sizeof(T) == 2 && big_endian) px[p] = static_cast<T>((px[p] >> 8) | (px[p] << 8));
      }
      std::memcpy(out + i * planes * sizeof(T), px, planes * sizeof(T));
    }
  });
}

}  // namespace

void split_planes(const void* samples, const WaveletImage& im, bool rct, int32_t* planar, unsigned threads) {
  const std::size_t pixels = im.width * im.height * im.depth;
  if (im.dtype == DType::u8)
    split_typed(static_cast<const uint8_t*>(samples), pixels, im.planes, rct, planar, threads);
  else
    split_typed(static_cast<const uint16_t*>(samples), pixels, im.planes, rct, planar, threads);
}

void split_planes(const uint8_t* samples, const WaveletImage& im, bool rct, int16_t* planar, unsigned threads) {
  split_typed(samples, im.width * im.height * im.depth, im.planes, rct, planar, threads);
}

void join_planes(const int32_t* planar, const WaveletImage& im, bool rct, bool big_endian, uint8_t* out,
                 unsigned threads) {
  const std::size_t pixels = im.width * im.height * im.depth;
  if (im.dtype == DType::u8)
    join_typed<uint8_t>(planar, pixels, im.planes, rct, false, out, threads);
  else
    join_typed<uint16_t>(planar, pixels, im.planes, rct, big_endian, out, threads);
}

unsigned choose_shift(const uint32_t* z, std::size_t n, unsigned search, uint64_t* cost_out) {
  uint32_t top = 0;
  for (std::size_t i = 0; i < n; ++i) top = std::max(top, z[i]);
  const unsigned k0 = shift_rule::smallest_shift(top);
  std::vector<uint64_t> h((top >> k0) + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++h[z[i] >> k0];
  return choose_shift(h, n, top, search, cost_out);
}

namespace {

// shift_rule::log2_fx of every count below 2^16, computed by it once: the
// same values, one load instead of 16 squarings per bin.
const uint32_t* small_log2_table() {
  static const std::vector<uint32_t> table = [] {
    std::vector<uint32_t> t(65536, 0);
    for (uint32_t x = 1; x < t.size(); ++x) t[x] = shift_rule::log2_fx(x);
    return t;
  }();
  return table.data();
}

// A non-empty bin of a histogram: the rule needs only these, and real
// histograms of 16-bit images are sparse (a few thousand of 65,536 bins).
struct Bin {
  uint32_t at;
  uint64_t count;
};

// shift_rule::summarize over the non-empty bins (in increasing order), with
// the table: the same sums as the dense loop.
shift_rule::Summary summarize_bins(const std::vector<Bin>& bins, uint64_t n) {
  shift_rule::Summary s;
  if (n == 0) return s;
  const uint32_t* table = small_log2_table();
  const uint32_t log2_n = shift_rule::log2_fx(n);
  constexpr uint32_t kOne = 1u << shift_rule::kFracBits;
  uint32_t last_group = ~0u;
  for (const Bin& b : bins) {
    const uint64_t c = b.count;
    s.n += c;
    const uint32_t info = log2_n - (c < 65536 ? table[c] : shift_rule::log2_fx(c));
    s.cost_fx += c * std::max(info, kOne);
    s.symbols += 1;
    s.alphabet = b.at + 1;
    const uint32_t g = b.at / shift_rule::kBinsPerCodebookGroup;
    s.groups += g != last_group;
    last_group = g;
  }
  return s;
}

// The bins of one more shift: neighbours 2s and 2s + 1 merge into s.
void merge_pairs(std::vector<Bin>& bins) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const uint32_t at = bins[i].at >> 1;
    if (out > 0 && bins[out - 1].at == at)
      bins[out - 1].count += bins[i].count;
    else
      bins[out++] = {at, bins[i].count};
  }
  bins.resize(out);
}

}  // namespace

unsigned choose_shift(const std::vector<uint64_t>& hist, uint64_t n, uint32_t top, unsigned search,
                      uint64_t* cost_out, std::vector<uint64_t>* hist_out) {
  const unsigned k0 = shift_rule::smallest_shift(top);
  const unsigned count = shift_rule::last_shift(top, k0, search) - k0 + 1;
  // Only the bins up to top >> k0 can be non-empty.
  const std::size_t used = std::min<std::size_t>(hist.size(), (std::size_t{top} >> k0) + 1);
  thread_local std::vector<Bin> kept;
  std::vector<Bin>& bins = kept;  // one TLS lookup, not one per bin
  bins.clear();
  const uint64_t* h = hist.data();
  for (std::size_t b = 0; b < used; ++b)
    if (h[b]) bins.push_back({static_cast<uint32_t>(b), h[b]});
  // Estimates in order, stopping where pick_shift() stops (the second shift
  // in a row that does not improve): it never reads the ones after.
  uint64_t estimates[shift_rule::kMaxShift + 1] = {};
  unsigned computed = 0, worse = 0;
  uint64_t best = 0;
  for (unsigned j = 0; j < count && worse < 2; ++j) {
    if (j > 0) merge_pairs(bins);
    estimates[j] = shift_rule::estimated_bits(summarize_bins(bins, n), k0 + j);
    if (j == 0 || estimates[j] < best) {
      best = estimates[j];
      worse = 0;
    } else {
      ++worse;
    }
    computed = j + 1;
  }
  const unsigned k = shift_rule::pick_shift(estimates, computed, k0, cost_out);
  if (hist_out) histogram_at_shift(hist, top, k, *hist_out);
  return k;
}

void histogram_at_shift(const std::vector<uint64_t>& hist, uint32_t top, unsigned k, std::vector<uint64_t>& out) {
  const unsigned k0 = shift_rule::smallest_shift(top);
  const unsigned d = k - k0;
  const std::size_t used = std::min<std::size_t>(hist.size(), (std::size_t{top} >> k0) + 1);
  out.assign((std::size_t{top} >> k) + 1, 0);
  for (std::size_t b = 0; b < used; ++b) out[b >> d] += hist[b];
  while (out.size() > 1 && out.back() == 0) out.pop_back();
}

uint64_t low_bits_bytes(uint64_t n, unsigned k) { return align_up(div_ceil(n * k, 8), 8); }

void combine(const uint8_t* symbols, unsigned width, const uint8_t* low, std::size_t n, unsigned k, int32_t* out) {
  if (k == 0) {  // the common case on 8-bit images: no low bits, every symbol fits
    if (width == 1)
      for (std::size_t i = 0; i < n; ++i) out[i] = unzigzag(symbols[i]);
    else
      for (std::size_t i = 0; i < n; ++i) out[i] = unzigzag(load_le16(symbols + 2 * i));
    return;
  }
  const uint64_t mask = (uint64_t{1} << k) - 1;
  uint64_t acc = 0;
  unsigned have = 0;
  const uint8_t* p = low;
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t s = width == 1 ? symbols[i] : load_le16(symbols + 2 * i);
    while (have < k) {
      acc |= uint64_t{*p++} << have;
      have += 8;
    }
    const uint64_t z = (s << k) | (acc & mask);
    acc >>= k;
    have -= k;
    SAFETY_CHECK(z <= UINT32_MAX, ErrorCode::corrupt_stream, "wavelet coefficient ", i, " of a group has ",
                 "more than 32 bits (symbol ", s, ", shift ", k, ")");
    out[i] = unzigzag(static_cast<uint32_t>(z));
  }
  // Every bit after the last value, up to the end of the padded area, is zero.
  SAFETY_CHECK(acc == 0, ErrorCode::corrupt_stream, "wavelet low-bit padding is not zero");
  const uint8_t* end = low + low_bits_bytes(n, k);
  for (; p < end; ++p)
    SAFETY_CHECK(*p == 0, ErrorCode::corrupt_stream, "wavelet low-bit padding is not zero");
}

}  // namespace vlec::wavelet
