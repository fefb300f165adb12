// wavelet/pnm.cpp: see pnm.hpp. Follows the Netpbm definition of P5/P6:
// magic, whitespace, width, whitespace, height, whitespace, maxval (1 to
// 65,535), one whitespace character, then the raster; "#" to the end of the
// line is a comment wherever whitespace may stand before the maxval's end.
#include "wavelet/pnm.hpp"

#include <cstring>

#include "common/safety.hpp"

namespace vlec::pnm {

namespace {

bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

class Reader {
 public:
  Reader(const uint8_t* d, std::size_t n) : d_(d), n_(n) {}
  // Skips whitespace and comments; at least one whitespace or comment must be there.
  void separator(const char* before) {
    const std::size_t start = at_;
    while (at_ < n_) {
      if (is_space(d_[at_])) {
        ++at_;
      } else if (d_[at_] == '#') {
        while (at_ < n_ && d_[at_] != '\n' && d_[at_] != '\r') ++at_;
      } else {
        break;
      }
    }
    VLEC_REQUIRE(at_ > start, "PNM header: expected whitespace before the ", before);
  }
  uint64_t number(const char* what, uint64_t max) {
    VLEC_REQUIRE(at_ < n_ && d_[at_] >= '0' && d_[at_] <= '9', "PNM header: missing ", what);
    uint64_t v = 0;
    while (at_ < n_ && d_[at_] >= '0' && d_[at_] <= '9') {
      v = v * 10 + (d_[at_++] - '0');
      VLEC_REQUIRE(v <= max, "PNM header: ", what, " is above ", max);
    }
    return v;
  }
  std::size_t at() const { return at_; }
  void skip(std::size_t k) { at_ += k; }
  bool done() const { return at_ >= n_; }
  uint8_t peek() const { return d_[at_]; }

 private:
  const uint8_t* d_;
  std::size_t n_;
  std::size_t at_ = 0;
};

}  // namespace

bool looks_like_pnm(const uint8_t* d, std::size_t n) {
  return n >= 3 && d[0] == 'P' && (d[1] == '5' || d[1] == '6') && (is_space(d[2]) || d[2] == '#');
}

Parsed parse(const uint8_t* d, std::size_t n) {
  VLEC_REQUIRE(looks_like_pnm(d, n), "not a binary PGM (P5) or PPM (P6) file");
  Parsed p;
  p.image.planes = d[1] == '6' ? 3 : 1;
  Reader r(d, n);
  r.skip(2);
  constexpr uint64_t kMaxSide = uint64_t{1} << 32;
  r.separator("width");
  p.image.width = r.number("width", kMaxSide);
  r.separator("height");
  p.image.height = r.number("height", kMaxSide);
  r.separator("maxval");
  p.maxval = static_cast<unsigned>(r.number("maxval", 65535));
  VLEC_REQUIRE(p.image.width >= 1 && p.image.height >= 1, "PNM image ", p.image.width, " x ", p.image.height,
               " is empty");
  VLEC_REQUIRE(p.maxval >= 1, "PNM maxval is 0");
  VLEC_REQUIRE(!r.done() && is_space(r.peek()), "PNM header: expected one whitespace character after the maxval");
  r.skip(1);
  p.header_bytes = r.at();
  VLEC_REQUIRE(p.header_bytes <= kWaveletMaxPrefixBytes, "PNM header of ", p.header_bytes, " bytes is too long");
  p.image.dtype = p.maxval > 255 ? DType::u16 : DType::u8;
  const uint64_t raster = uint64_t{p.image.width} * p.image.height * p.image.planes * dtype_bytes(p.image.dtype);
  VLEC_REQUIRE(n - p.header_bytes == raster, "PNM file has ", n - p.header_bytes, " bytes of samples where its ",
               p.image.width, " x ", p.image.height, " header needs ", raster,
               n - p.header_bytes < raster ? " (truncated)" : " (several images or trailing data are not supported)");
  return p;
}

std::vector<uint8_t> host_samples(const uint8_t* d, const Parsed& p) {
  const std::size_t bytes = p.image.samples() * dtype_bytes(p.image.dtype);
  std::vector<uint8_t> out(d + p.header_bytes, d + p.header_bytes + bytes);
  if (p.image.dtype == DType::u16)
    for (std::size_t i = 0; i < bytes; i += 2) std::swap(out[i], out[i + 1]);  // big-endian -> host (little)
  return out;
}

void set_container(const uint8_t* d, const Parsed& p, WaveletOptions& o) {
  o.container_prefix.assign(d, d + p.header_bytes);
  o.big_endian_output = p.image.dtype == DType::u16;
}

}  // namespace vlec::pnm
