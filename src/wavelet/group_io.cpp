// wavelet/group_io.cpp: see group_io.hpp. Every loop walks the rows of the
// boxes (x contiguous in the plane), so the inner loops are plain array
// loops the compiler vectorizes (the largest value) or keeps branch-free
// (histogram with four interleaved tables, so that runs of equal values,
// common in fine subbands, do not serialize on one counter).
#include "wavelet/group_io.hpp"

#include <algorithm>
#include <cstring>

#include "common/bits.hpp"
#include "common/safety.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/shift_rule.hpp"

namespace vlec::wavelet {

namespace {

// fn(row pointer, length) for every row of every box, in coefficient order.
template <typename Row, typename Fn>
void for_each_row(Row* plane, const DwtShape& s, const std::vector<Box>& boxes, Fn&& fn) {
  for (const Box& b : boxes)
    for (std::size_t z = 0; z < b.nz; ++z)
      for (std::size_t y = 0; y < b.ny; ++y) fn(plane + b.x0 + s.nx * ((b.y0 + y) + s.ny * (b.z0 + z)), b.nx);
}

}  // namespace

ValueStats value_stats(const int32_t* plane, const DwtShape& shape, const std::vector<Box>& boxes) {
  ValueStats st;
  uint32_t top = 0;
  for_each_row(plane, shape, boxes, [&](const int32_t* row, std::size_t len) {
    uint32_t t = 0;
    for (std::size_t i = 0; i < len; ++i) t = std::max(t, zigzag(row[i]));
    top = std::max(top, t);
    st.n += len;
  });
  st.top = top;
  const unsigned k0 = shift_rule::smallest_shift(top);
  const std::size_t bins = (std::size_t{top} >> k0) + 1;
  st.hist.assign(bins, 0);
  if (st.n < 4 * bins || st.n >= (uint64_t{1} << 32)) {
    for_each_row(plane, shape, boxes, [&](const int32_t* row, std::size_t len) {
      for (std::size_t i = 0; i < len; ++i) ++st.hist[zigzag(row[i]) >> k0];
    });
    return st;
  }
  std::vector<uint32_t> h(4 * bins, 0);
  uint32_t* h0 = h.data();
  uint32_t* h1 = h0 + bins;
  uint32_t* h2 = h1 + bins;
  uint32_t* h3 = h2 + bins;
  for_each_row(plane, shape, boxes, [&](const int32_t* row, std::size_t len) {
    std::size_t i = 0;
    for (; i + 4 <= len; i += 4) {
      ++h0[zigzag(row[i]) >> k0];
      ++h1[zigzag(row[i + 1]) >> k0];
      ++h2[zigzag(row[i + 2]) >> k0];
      ++h3[zigzag(row[i + 3]) >> k0];
    }
    for (; i < len; ++i) ++h0[zigzag(row[i]) >> k0];
  });
  for (std::size_t b = 0; b < bins; ++b) st.hist[b] = uint64_t{h0[b]} + h1[b] + h2[b] + h3[b];
  return st;
}

ValueStats merge_stats(const std::vector<const ValueStats*>& parts) {
  ValueStats st;
  for (const ValueStats* p : parts) st.top = std::max(st.top, p->top), st.n += p->n;
  const unsigned k0 = shift_rule::smallest_shift(st.top);
  st.hist.assign((std::size_t{st.top} >> k0) + 1, 0);
  for (const ValueStats* p : parts) {
    // A part's bin b holds values v with v >> k0(part) == b; k0(part) <= k0.
    const unsigned d = k0 - shift_rule::smallest_shift(p->top);
    for (std::size_t b = 0; b < p->hist.size(); ++b) st.hist[b >> d] += p->hist[b];
  }
  return st;
}

void write_symbols(const int32_t* plane, const DwtShape& shape, const std::vector<Box>& boxes, unsigned k,
                   uint32_t top, GroupSymbols& out) {
  const std::size_t n = group_samples(boxes);
  out.type = (top >> k) < 256 ? DType::u8 : DType::u16;
  out.symbols.resize(n * dtype_bytes(out.type));
  const uint64_t low_bytes = low_bits_bytes(n, k);
  out.low_bits.assign(low_bytes, 0);
  uint64_t runs = 0;
  uint32_t prev = ~uint32_t{0};  // no symbol: the first one starts a run
  uint8_t* sym = out.symbols.data();
  const uint32_t mask = k ? (uint32_t{1} << k) - 1 : 0;
  uint64_t acc = 0;
  unsigned have = 0;
  uint8_t* bits = out.low_bits.data();
  const bool wide = out.type == DType::u16;
  for_each_row(plane, shape, boxes, [&](const int32_t* row, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) {
      const uint32_t z = zigzag(row[i]);
      const uint32_t s = z >> k;
      runs += s != prev;
      prev = s;
      if (wide) {
        store_le16(sym, static_cast<uint16_t>(s));
        sym += 2;
      } else {
        *sym++ = static_cast<uint8_t>(s);
      }
      if (k) {
        acc |= uint64_t{z & mask} << have;
        have += k;
        if (have >= 32) {
          store_le32(bits, static_cast<uint32_t>(acc));
          bits += 4;
          acc >>= 32;
          have -= 32;
        }
      }
    }
  });
  for (; have > 0; have = have > 8 ? have - 8 : 0) {
    *bits++ = static_cast<uint8_t>(acc);
    acc >>= 8;
  }
  out.runs = runs;
}

void combine_into(const uint8_t* symbols, unsigned width, const uint8_t* low, std::size_t n, unsigned k,
                  const DwtShape& shape, const std::vector<Box>& boxes, int32_t* plane) {
  std::size_t i = 0;
  if (k == 0) {  // the common case on 8-bit images: no low bits
    for_each_row(plane, shape, boxes, [&](int32_t* row, std::size_t len) {
      if (width == 1)
        for (std::size_t x = 0; x < len; ++x) row[x] = unzigzag(symbols[i + x]);
      else
        for (std::size_t x = 0; x < len; ++x) row[x] = unzigzag(load_le16(symbols + 2 * (i + x)));
      i += len;
    });
    return;
  }
  const uint64_t mask = (uint64_t{1} << k) - 1;
  uint64_t acc = 0;
  unsigned have = 0;
  const uint8_t* p = low;
  for_each_row(plane, shape, boxes, [&](int32_t* row, std::size_t len) {
    uint64_t big = 0;  // any value above 32 bits, or-ed over the row
    for (std::size_t x = 0; x < len; ++x, ++i) {
      const uint64_t s = width == 1 ? symbols[i] : load_le16(symbols + 2 * i);
      while (have < k) {
        acc |= uint64_t{*p++} << have;
        have += 8;
      }
      const uint64_t z = (s << k) | (acc & mask);
      acc >>= k;
      have -= k;
      big |= z >> 32;
      row[x] = unzigzag(static_cast<uint32_t>(z));
    }
    SAFETY_CHECK(big == 0, ErrorCode::corrupt_stream, "wavelet coefficient before ", i, " of a group has ",
                 "more than 32 bits (shift ", k, ")");
  });
  SAFETY_CHECK(i == n, ErrorCode::corrupt_stream, "wavelet group holds ", n, " symbols for ", i, " coefficients");
  // Every bit after the last value, up to the end of the padded area, is zero.
  SAFETY_CHECK(acc == 0, ErrorCode::corrupt_stream, "wavelet low-bit padding is not zero");
  const uint8_t* end = low + low_bits_bytes(n, k);
  for (; p < end; ++p)
    SAFETY_CHECK(*p == 0, ErrorCode::corrupt_stream, "wavelet low-bit padding is not zero");
}

}  // namespace vlec::wavelet
