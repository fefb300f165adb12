// rle/rle.cpp: see rle.hpp. Elements are compared as unsigned integers of
// their width, so one template serves 1-, 2-, 4- and 8-byte data.
#include "rle/rle.hpp"

#include <algorithm>
#include <cstring>

#include "common/bits.hpp"
#include "common/safety.hpp"

namespace vlec::rle {

namespace {

template <typename T>
std::size_t count_typed(const T* p, std::size_t n) {
  if (n == 0) return 0;
  std::size_t runs = 1, len = 1;
  for (std::size_t i = 1; i < n; ++i) {
    if (p[i] != p[i - 1] || len == kMaxRun) {
      ++runs;
      len = 1;
    } else {
      ++len;
    }
  }
  return runs;
}

template <typename T>
std::size_t encode_typed(const T* p, std::size_t n, uint8_t* values, uint16_t* lengths) {
  if (n == 0) return 0;
  std::size_t r = 0, start = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    if (i == n || p[i] != p[start] || i - start == kMaxRun) {
      std::memcpy(values + r * sizeof(T), &p[start], sizeof(T));
      store_le16(lengths + r, static_cast<uint16_t>(i - start - 1));
      ++r;
      start = i;
    }
  }
  return r;
}

template <typename T>
void decode_typed(const uint8_t* values, const uint8_t* lengths, std::size_t n_runs, std::size_t n, T* out) {
  std::size_t pos = 0;
  for (std::size_t r = 0; r < n_runs; ++r) {
    const std::size_t len = std::size_t{load_le16(lengths + 2 * r)} + 1;
    SAFETY_CHECK(len <= n - pos, ErrorCode::corrupt_stream, "run ", r, " of length ", len,
                 " overflows its chunk of ", n, " elements");
    T v;
    std::memcpy(&v, values + r * sizeof(T), sizeof(T));
    std::fill(out + pos, out + pos + len, v);
    pos += len;
  }
  SAFETY_CHECK(pos == n, ErrorCode::corrupt_stream, "runs cover ", pos, " of the chunk's ", n, " elements");
}

template <typename F>
auto by_width(unsigned width, F&& f) {
  switch (width) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
  }
  VLEC_REQUIRE(false, "element width ", width, " is not 1, 2, 4 or 8");
  return f(uint8_t{});
}

}  // namespace

std::size_t count_runs(const void* data, std::size_t n, unsigned width) {
  return by_width(width, [&](auto t) { return count_typed(static_cast<const decltype(t)*>(data), n); });
}

std::size_t encode_runs(const void* data, std::size_t n, unsigned width, uint8_t* values,
                        uint16_t* lengths) {
  return by_width(width, [&](auto t) {
    return encode_typed(static_cast<const decltype(t)*>(data), n, values, lengths);
  });
}

void decode_runs(const uint8_t* values, const uint8_t* lengths, std::size_t n_runs, unsigned width,
                 std::size_t n, void* out) {
  by_width(width, [&](auto t) {
    decode_typed(values, lengths, n_runs, n, static_cast<decltype(t)*>(out));
    return 0;
  });
}

}  // namespace vlec::rle
