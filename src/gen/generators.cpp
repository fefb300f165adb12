// gen/generators.cpp: the sample-data generators declared in generators.hpp.
//
// Why it is built this way:
//  * Reproducibility comes first. All randomness comes from xoshiro256** seeded
//    through splitmix64, and every distribution is sampled by code in this file
//    and gen/sampling.hpp (an inverse-CDF table with integer thresholds,
//    Box-Muller, Irwin-Hall), so the bytes do not depend on the standard
//    library. Floating point is used only with +, -, *, /, sqrt, exp, log, cos
//    and exact operations (floor, ceil, fabs) on doubles; builds must not use
//    -ffast-math.
//  * Speed: several GiB must be cheap to make. Discrete symbols are drawn from a
//    65,536-entry table indexed by 16 random bits, four symbols per 64-bit draw;
//    only the rare table entries that straddle two symbols fall back to a
//    32-bit search. The quantization field is a sum of separable modes built
//    from per-axis cosine tables, and volume blobs are splatted only inside
//    their bounding box.
#include "gen/generators.hpp"
#include "gen/sampling.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

// Fused multiply-adds would change low bits and so, rarely, a quantization code.
// GCC does not contract in ISO mode (-std=c++17); clang needs to be told.
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

namespace vlec::gen {
namespace {

using namespace sampling;

// ---------------------------------------------------------------- skewed

std::vector<uint8_t> make_skewed(size_t bytes, Rng& rng) {
  const DiscreteSampler geometric(clamped_geometric(0.3, 256));
  std::vector<uint8_t> out(bytes);
  size_t i = 0;
  for (; i + 4 <= bytes; i += 4) {
    const uint64_t r = rng.next();
    const auto slice = [r](int j) { return static_cast<uint32_t>(r >> (48 - 16 * j)) & 0xFFFF; };
    const uint32_t a = geometric.direct(slice(0)), b = geometric.direct(slice(1));
    const uint32_t c = geometric.direct(slice(2)), d = geometric.direct(slice(3));
    if ((a | b | c | d) < 256) {  // the common case: no slice straddles two symbols
      out[i] = static_cast<uint8_t>(a), out[i + 1] = static_cast<uint8_t>(b);
      out[i + 2] = static_cast<uint8_t>(c), out[i + 3] = static_cast<uint8_t>(d);
    } else {
      for (int j = 0; j < 4; ++j) out[i + j] = static_cast<uint8_t>(geometric.sample(slice(j), rng));
    }
  }
  for (; i < bytes; ++i) out[i] = static_cast<uint8_t>(geometric.sample(rng));
  return out;
}

// ---------------------------------------------------------------- runs

std::vector<uint8_t> make_runs(size_t bytes, Rng& rng) {
  // Run length 1 + G with G geometric of mean 5: P(G = k) = p (1-p)^k, p = 1/6.
  const DiscreteSampler extra_length(clamped_geometric(1.0 / 6.0, 1024));
  const DiscreteSampler value(clamped_geometric(0.05, 256));
  std::vector<uint8_t> out(bytes);
  size_t pos = 0;
  int previous = -1;
  while (pos < bytes) {
    const size_t length = 1 + extra_length.sample(rng);
    int v;
    do v = static_cast<int>(value.sample(rng));  // redraw so adjacent runs never merge
    while (v == previous);
    previous = v;
    const size_t end = std::min(bytes, pos + length);
    std::fill(out.begin() + static_cast<ptrdiff_t>(pos), out.begin() + static_cast<ptrdiff_t>(end),
              static_cast<uint8_t>(v));
    pos = end;
  }
  return out;
}

// ---------------------------------------------------------------- text

// Common English words, roughly in order of frequency, separated by single
// spaces; make_text draws rank r with Zipf-Mandelbrot weight 1/(r + 2.7).
constexpr const char* kWordList =
    "the of and to a in is it you that he was for on are with as his they be at one have this from or had "
    "by not word but what some we can out other were all there when up use your how said an each she "
    "which do their time if will way about many then them write would like so these her long make thing "
    "see him two has look more day could go come did number sound no most people my over know water than "
    "call first who may down side been now find any new work part take get place made live where after "
    "back little only round man year came show every good me give our under name very through just form "
    "sentence great think say help low line differ turn cause much mean before move right boy old too "
    "same tell does set three want air well also play small end put home read hand port large spell add "
    "even land here must big high such follow act why ask men change went light kind off need house "
    "picture try us again animal point mother world near build self earth father head stand own page "
    "should country found answer school grow study still learn plant cover food sun four between state "
    "keep eye never last let thought city tree cross farm hard start might story saw far sea draw left "
    "late run while press close night real life few north open seem together next white children begin "
    "got walk example ease paper group always music those both mark often letter until mile river car "
    "feet care second book carry took science eat room friend began idea fish mountain stop once base "
    "hear horse cut sure watch color face wood main enough plain girl usual young ready above ever red "
    "list though feel talk bird soon body dog family direct pose leave song measure door product black "
    "short numeral class wind question happen complete ship area half rock order fire south problem piece "
    "told knew pass since top whole king space heard best hour better true";

std::vector<uint8_t> make_text(size_t bytes, Rng& rng) {
  std::vector<std::string_view> words;
  for (std::string_view rest = kWordList; !rest.empty();) {
    const size_t space = std::min(rest.find(' '), rest.size());
    words.push_back(rest.substr(0, space));
    rest.remove_prefix(std::min(space + 1, rest.size()));
  }
  // Zipf-Mandelbrot rather than plain Zipf 1/(r + 1): the top words come out
  // near their real English frequencies ("the" about 7%, not 16%).
  std::vector<double> zipf(words.size());
  for (size_t r = 0; r < words.size(); ++r) zipf[r] = 1.0 / (static_cast<double>(r) + 2.7);
  const DiscreteSampler word(zipf);

  // Written in place with a little slack past `bytes` for the last word, which
  // is then cut off; one word writes at most separator + word + punctuation + 2.
  constexpr size_t kSlack = 64;
  std::vector<uint8_t> out(bytes + kSlack);
  size_t pos = 0, column = 0;
  size_t line_width = 60 + rng.below(21);
  uint32_t words_left = 0;  // in the current sentence
  while (pos < bytes) {
    const bool sentence_start = words_left == 0;
    if (sentence_start) words_left = 4 + rng.below(14);
    const uint32_t w = word.sample(rng);
    char punctuation = 0;
    if (words_left == 1) {
      const uint32_t r = rng.below(20);
      punctuation = r < 17 ? '.' : r < 19 ? '?' : '!';
    } else if (rng.below(10) == 0) {
      punctuation = ',';
    }
    const std::string_view text = words[w];
    const size_t token = text.size() + (punctuation ? 1 : 0);
    // Wrap before a word that would pass the line width, as a text editor does.
    if (column > 0 && column + 1 + token > line_width) {
      out[pos++] = '\n';
      column = 0;
      line_width = 60 + rng.below(21);
    } else if (column > 0) {
      out[pos++] = ' ';
      ++column;
    }
    std::copy(text.begin(), text.end(), out.begin() + static_cast<ptrdiff_t>(pos));
    if (sentence_start) out[pos] = static_cast<uint8_t>(out[pos] - 'a' + 'A');
    pos += text.size();
    if (punctuation) out[pos++] = static_cast<uint8_t>(punctuation);
    column += token;
    if (--words_left == 0 && rng.below(8) == 0) {  // end of paragraph: a blank line
      out[pos++] = '\n';
      out[pos++] = '\n';
      column = 0;
    }
  }
  out.resize(bytes);
  return out;
}

// ---------------------------------------------------------------- quantization codes

// Noise with a near-Gaussian shape, from one 64-bit draw: the sum of four
// 16-bit uniforms (Irwin-Hall). Exact integer arithmetic, and far cheaper per
// element than Box-Muller, which matters at billions of elements.
double approx_gaussian(Rng& rng) {
  const uint64_t r = rng.next();
  const int64_t sum = static_cast<int64_t>((r & 0xFFFF) + ((r >> 16) & 0xFFFF) + ((r >> 32) & 0xFFFF) + (r >> 48));
  constexpr double kInverseStdDev = 1.0 / 37837.23;  // sd = sqrt(4 * (65536^2 - 1) / 12)
  return static_cast<double>(sum - 2 * 65535) * kInverseStdDev;
}

// A smooth random field on an nx*ny*nz grid: the sum of separable modes
// amp * cos(kx x + a) * cos(ky y + b) * cos(kz z + c), plus noise. Wavelengths
// are in voxels, not fractions of the grid, so the statistics do not depend
// on the requested size.
class SmoothField {
 public:
  static constexpr int kModes = 6;
  SmoothField(size_t nx, size_t ny, size_t nz, double noise, Rng& rng) : nx_(nx), ny_(ny), nz_(nz), noise_(noise) {
    for (int m = 0; m < kModes; ++m) amp_[m] = rng.uniform(0.3, 1.0);
    build_axis(cx_, nx, rng);
    build_axis(cy_, ny, rng);
    build_axis(cz_, nz, rng);
  }
  // Fills `row` with the field along x at (y, z), drawing noise from `rng`.
  // The modes are summed in a fixed order, written out so the compiler keeps
  // the sum in registers.
  void row(size_t y, size_t z, size_t count, Rng& rng, double* row) const {
    static_assert(kModes == 6, "the sum below is written out for six modes");
    std::array<double, kModes> c;
    std::array<const double*, kModes> a;
    for (int m = 0; m < kModes; ++m) {
      c[m] = amp_[m] * cy_[m * ny_ + y] * cz_[m * nz_ + z];
      a[m] = &cx_[m * nx_];
    }
    for (size_t x = 0; x < count; ++x) {
      const double smooth = c[0] * a[0][x] + c[1] * a[1][x] + c[2] * a[2][x] + c[3] * a[3][x] + c[4] * a[4][x] +
                            c[5] * a[5][x];
      row[x] = smooth + noise_ * approx_gaussian(rng);
    }
  }

 private:
  static void build_axis(std::vector<double>& table, size_t n, Rng& rng) {
    std::array<double, kModes> k, phase;
    for (int m = 0; m < kModes; ++m) {
      k[m] = 2.0 * kPi / rng.uniform(24.0, 160.0);
      phase[m] = rng.uniform(0.0, 2.0 * kPi);
    }
    table.resize(n * kModes);
    for (int m = 0; m < kModes; ++m)
      for (size_t i = 0; i < n; ++i) table[m * n + i] = std::cos(k[m] * static_cast<double>(i) + phase[m]);
  }
  size_t nx_, ny_, nz_;
  double noise_;
  std::array<double, kModes> amp_;
  std::vector<double> cx_, cy_, cz_;  // [mode * axis length + index]
};

// SZ-style prediction + quantization: 3D Lorenzo prediction from reconstructed
// values (zero outside the grid), q = round((x - pred) / 2eb) (half up), code = q + bins/2,
// and code 0 with exact reconstruction for residuals outside the code range.
// `relative_eb` is the error bound as a fraction of the field's value range.
std::vector<uint8_t> make_quant(size_t bytes, uint32_t bins, double relative_eb, Rng& rng) {
  const size_t count = bytes / 2;
  std::vector<uint8_t> out(count * 2);
  if (count == 0) return out;
  // Grid nx = ny = floor(cbrt(count)), nz = enough planes; the last plane is partial.
  const size_t nx = integer_cbrt(count), ny = nx, plane = nx * ny;
  const size_t nz = (count + plane - 1) / plane;
  const SmoothField field(nx, ny, nz, /*noise=*/0.01, rng);
  std::vector<double> row(nx);

  // Pass 1: the value range, which sets the error bound. Pass 2 replays the
  // same noise stream, so the field is never stored whole.
  const Rng noise_start = rng;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < count; i += nx) {
    const size_t n = std::min(nx, count - i);
    field.row((i / nx) % ny, i / plane, n, rng, row.data());
    for (size_t x = 0; x < n; ++x) lo = std::min(lo, row[x]), hi = std::max(hi, row[x]);
  }
  rng = noise_start;
  const double range = hi > lo ? hi - lo : 1.0;
  const double step = 2.0 * relative_eb * range;  // 2 * eb
  const double radius = bins / 2;
  const double inverse_step = 1.0 / step;

  // Reconstructed planes z-1 and z with a zero row and column in front, so the
  // Lorenzo stencil needs no bounds tests and the grid edges see zeros.
  const size_t stride = nx + 1;
  std::vector<double> previous(stride * (ny + 1), 0.0), current(stride * (ny + 1), 0.0);
  for (size_t i = 0; i < count; i += nx) {
    const size_t y = (i / nx) % ny, z = i / plane, n = std::min(nx, count - i);
    if (y == 0 && z > 0) std::swap(previous, current);
    field.row(y, z, n, rng, row.data());
    double* cur = &current[(y + 1) * stride + 1];  // cur[x] is (x, y, z); cur[-1] is (x-1, y, z)
    const double* up = cur - stride;               // (x, y-1, z)
    const double* back = &previous[(y + 1) * stride + 1];
    const double* back_up = back - stride;
    // The (x - 1) neighbours through pointers one element back (the guard
    // column), so that x = 0 forms no index of size_t(-1) (UBSan: pointer
    // overflow; found by the fuzz build's sanitizers).
    const double *up_left = up - 1, *back_left = back - 1, *back_up_left = back_up - 1;
    double left = 0.0;  // reconstructed (x-1, y, z), kept in a register
    for (size_t x = 0; x < n; ++x) {
      // Everything but the left neighbour first: only that term depends on the
      // element just quantized, which keeps the serial dependency chain short.
      const double rest = up[x] + back[x] - up_left[x] - back_left[x] - back_up[x] + back_up_left[x];
      const double pred = left + rest;
      const double scaled = (row[x] - pred) * inverse_step;
      uint32_t code = 0;
      double reconstructed = row[x];  // an outlier is stored exactly
      if (std::fabs(scaled) < radius) {
        // code = floor(scaled + 0.5) + radius: the argument is positive here, so
        // truncation is floor, and there is no sign-dependent (mispredicted) branch.
        const auto candidate = static_cast<int64_t>(scaled + (radius + 0.5));
        if (candidate >= 1 && candidate <= static_cast<int64_t>(bins) - 1) {
          code = static_cast<uint32_t>(candidate);
          reconstructed = pred + step * (static_cast<double>(candidate) - radius);
        }
      }
      cur[x] = left = reconstructed;
      out[2 * (i + x)] = static_cast<uint8_t>(code & 0xFF);
      out[2 * (i + x) + 1] = static_cast<uint8_t>(code >> 8);
    }
  }
  return out;
}

// ---------------------------------------------------------------- volume

// Particles in Gaussian clusters, each splatted as a Gaussian blob with
// saturating accumulation: a sparse density volume as a renderer would build.
// Counts scale with n^3 so that the fill fraction does not depend on size.
std::vector<uint8_t> make_volume(size_t bytes, Rng& rng) {
  const size_t n = bytes == 0 ? 512 : integer_cbrt(bytes);
  std::vector<uint8_t> vol(n * n * n, 0);
  if (n == 0) return vol;
  const double side = static_cast<double>(n);
  const double scale = side * side * side / (512.0 * 512.0 * 512.0);
  const auto particles = std::max<size_t>(1, static_cast<size_t>(rng.uniform(6000.0, 20000.0) * scale));
  const size_t clusters = 16 + rng.below(48);
  struct Cluster { double x, y, z, spread; };
  std::vector<Cluster> centre(clusters);
  for (auto& c : centre) c = {rng.uniform(0, side), rng.uniform(0, side), rng.uniform(0, side), side * rng.uniform(0.02, 0.08)};

  std::array<double, 11> wx, wy, wz;  // per-axis Gaussian weights over the blob's box
  for (size_t p = 0; p < particles; ++p) {
    const Cluster& c = centre[rng.below(static_cast<uint32_t>(clusters))];
    const double px = c.x + c.spread * rng.gaussian();
    const double py = c.y + c.spread * rng.gaussian();
    const double pz = c.z + c.spread * rng.gaussian();
    const int radius = 2 + static_cast<int>(rng.below(4));
    const double amplitude = rng.uniform(40.0, 255.0);
    const double inv_two_sigma2 = 1.0 / (2.0 * (radius * 0.5) * (radius * 0.5));
    // Bounding box of the sphere, clipped to the volume.
    const auto lo = [&](double v) { return std::max(0.0, std::ceil(v - radius)); };
    const auto hi = [&](double v) { return std::min(side - 1, std::floor(v + radius)); };
    const double x0 = lo(px), x1 = hi(px), y0 = lo(py), y1 = hi(py), z0 = lo(pz), z1 = hi(pz);
    if (x0 > x1 || y0 > y1 || z0 > z1) continue;  // entirely outside
    const auto fill = [&](std::array<double, 11>& w, double a0, double a1, double centre_v) {
      for (int i = 0; a0 + i <= a1; ++i) { const double d = a0 + i - centre_v; w[i] = std::exp(-d * d * inv_two_sigma2); }
    };
    fill(wx, x0, x1, px);
    fill(wy, y0, y1, py);
    fill(wz, z0, z1, pz);
    const double r2 = static_cast<double>(radius) * radius;
    for (int k = 0; z0 + k <= z1; ++k) {
      const double dz = z0 + k - pz;
      for (int j = 0; y0 + j <= y1; ++j) {
        const double dy = y0 + j - py;
        const double wyz = amplitude * wy[j] * wz[k];
        uint8_t* line = &vol[(static_cast<size_t>(z0 + k) * n + static_cast<size_t>(y0 + j)) * n];
        for (int i = 0; x0 + i <= x1; ++i) {
          const double dx = x0 + i - px;
          if (dx * dx + dy * dy + dz * dz > r2) continue;
          const int add = static_cast<int>(wyz * wx[i] + 0.5);
          uint8_t& v = line[static_cast<size_t>(x0) + i];
          v = static_cast<uint8_t>(std::min(255, v + add));
        }
      }
    }
  }
  return vol;
}

// ---------------------------------------------------------------- uniform

std::vector<uint8_t> make_uniform(size_t bytes, Rng& rng) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; i += 8) {
    const uint64_t r = rng.next();
    for (size_t j = 0; j < 8 && i + j < bytes; ++j) out[i + j] = static_cast<uint8_t>(r >> (8 * j));
  }
  return out;
}

}  // namespace

const std::vector<GeneratorInfo>& generators() {
  static const std::vector<GeneratorInfo> list = {
      {"skewed", DType::u8, "i.i.d. geometric bytes, p = 0.3 (about 2.94 bits/byte)"},
      {"runs", DType::u8, "byte runs of mean length 6, skewed run values"},
      {"text", DType::u8, "English-like ASCII text from a Zipf-weighted word list"},
      {"quant1024", DType::u16, "SZ-style Lorenzo quantization codes of a smooth 3D field, 1024 bins"},
      {"quant65536", DType::u16, "SZ-style Lorenzo quantization codes of a smooth 3D field, 65536 bins"},
      {"volume", DType::u8, "sparse n^3 density volume of splatted clustered particles (default 512^3)"},
      {"uniform", DType::u8, "uniform random bytes (incompressible)"},
  };
  return list;
}

Sample make(const std::string& name, size_t bytes, uint64_t seed) {
  Rng rng = make_rng(name, seed);
  if (name == "skewed") return {name, DType::u8, make_skewed(bytes, rng)};
  if (name == "runs") return {name, DType::u8, make_runs(bytes, rng)};
  if (name == "text") return {name, DType::u8, make_text(bytes, rng)};
  if (name == "quant1024") return {name, DType::u16, make_quant(bytes, 1024, 7.5e-4, rng)};
  if (name == "quant65536") return {name, DType::u16, make_quant(bytes, 65536, 1.2e-5, rng)};
  if (name == "volume") return {name, DType::u8, make_volume(bytes, rng)};
  if (name == "uniform") return {name, DType::u8, make_uniform(bytes, rng)};
  throw std::invalid_argument("vlec::gen::make: unknown generator '" + name + "'");
}

std::vector<uint8_t> convert_width(const std::vector<uint8_t>& in, unsigned from, unsigned to) {
  const size_t n = in.size() / from;
  std::vector<uint8_t> out(n * to, 0);
  for (size_t i = 0; i < n; ++i) std::memcpy(out.data() + i * to, in.data() + i * from, from < to ? from : to);
  return out;
}

std::vector<uint8_t> make_elements(const std::string& name, size_t elements, DType t, uint64_t seed) {
  unsigned gw = 0;
  for (const GeneratorInfo& g : generators())
    if (g.name == name) gw = static_cast<unsigned>(dtype_bytes(g.dtype));
  if (gw == 0) throw std::invalid_argument("vlec::gen::make_elements: unknown generator '" + name + "'");
  size_t bytes = elements * gw;
  if (name == "volume") {  // the volume is a cube: make one at least as large, then cut it
    size_t side = 1;
    while (side * side * side < elements) ++side;
    bytes = side * side * side;
  }
  std::vector<uint8_t> data = make(name, bytes, seed).bytes;
  data.resize(elements * gw);
  return convert_width(data, gw, static_cast<unsigned>(dtype_bytes(t)));
}

}  // namespace vlec::gen
