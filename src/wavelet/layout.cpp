// wavelet/layout.cpp: see layout.hpp. Subband boxes follow the Mallat layout
// of dwt/dwt53.cpp: after level l, the low band of level l-1 (extent P) is
// split along every axis longer than 1 into [0, ceil(P/2)) and [ceil(P/2), P).
#include "wavelet/layout.hpp"

#include <algorithm>

#include "common/safety.hpp"
#include "dwt/dwt53.hpp"

namespace vlec::wavelet {

unsigned effective_levels(const DwtShape& shape, unsigned requested) {
  return static_cast<unsigned>(dwt::level_extents(shape, std::min(requested, kDwtMaxLevels)).size() - 1);
}

Subbands::Subbands(const DwtShape& shape, unsigned levels)
    : shape_(shape), levels_(levels), ext_(dwt::level_extents(shape, levels)) {
  // level_extents stops early where the shape runs out of splits; the caller
  // (writer or reader) has checked that `levels` is not beyond that.
  ext_.resize(levels + 1, ext_.back());
}

Box Subbands::detail(unsigned level, unsigned kind) const {
  const DwtShape& p = ext_[level - 1];
  const DwtShape& l = ext_[level];
  Box b;
  b.x0 = (kind & 1) ? l.nx : 0;
  b.nx = (kind & 1) ? p.nx - l.nx : l.nx;
  b.y0 = (kind & 2) ? l.ny : 0;
  b.ny = (kind & 2) ? p.ny - l.ny : l.ny;
  b.z0 = (kind & 4) ? l.nz : 0;
  b.nz = (kind & 4) ? p.nz - l.nz : l.nz;
  return b;
}

Box Subbands::low_band() const {
  const DwtShape& l = ext_[levels_];
  Box b;
  b.nx = l.nx, b.ny = l.ny, b.nz = l.nz;
  return b;
}

std::vector<Box> Subbands::boxes(const GroupSpec& g) const {
  std::vector<Box> out;
  if (g.mask & kLowBandBit) out.push_back(low_band());
  if (levels_ == 0) return out;
  for (unsigned l = g.level_last; l >= g.level_first && l >= 1; --l)
    for (unsigned k = 1; k < kKinds; ++k)
      if (g.mask & (1u << k)) {
        const Box b = detail(l, k);
        if (b.samples()) out.push_back(b);
      }
  return out;
}

namespace {

std::size_t level_samples(const Subbands& sb, unsigned l) {
  std::size_t n = 0;
  for (unsigned k = 1; k < kKinds; ++k) n += sb.detail(l, k).samples();
  return n;
}

}  // namespace

unsigned first_merged_level(const Subbands& sb) {
  // The low band plus coarse levels, merged while small: a codebook and a
  // frame header cost ~100-600 bytes, too much for a few hundred coefficients.
  const unsigned L = sb.levels();
  if (L == 0) return 0;
  std::size_t n = sb.low_band().samples() + level_samples(sb, L);
  unsigned first = L;
  while (first > 1 && n < kMinGroupSamples) n += level_samples(sb, --first);
  return first;
}

std::vector<GroupSpec> plan_groups(const Subbands& sb, unsigned planes,
                                   const std::function<bool(unsigned plane, unsigned level)>& split) {
  const unsigned L = sb.levels();
  const unsigned first = first_merged_level(sb);
  std::vector<GroupSpec> all;
  for (unsigned p = 0; p < planes; ++p) {
    all.push_back(L == 0 ? GroupSpec{p, 0, 0, kLowBandBit} : GroupSpec{p, first, L, 0xFF});
    for (unsigned l = first - 1; L > 0 && l >= 1; --l) {
      if (!split(p, l)) {
        all.push_back(GroupSpec{p, l, l, 0xFE});
        continue;
      }
      for (unsigned k = 1; k < kKinds; ++k)
        if (sb.detail(l, k).samples()) all.push_back(GroupSpec{p, l, l, static_cast<uint8_t>(1u << k)});
    }
  }
  return all;
}

void check_coverage(const std::vector<GroupSpec>& groups, const Subbands& sb, unsigned planes) {
  const unsigned L = sb.levels();
  // seen[plane][level][kind]; level 0 kind 0 stands for the low band.
  std::vector<uint8_t> seen(std::size_t{planes} * (L + 1) * kKinds, 0);
  auto at = [&](unsigned p, unsigned l, unsigned k) -> uint8_t& { return seen[(std::size_t{p} * (L + 1) + l) * kKinds + k]; };
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupSpec& g = groups[i];
    SAFETY_CHECK(g.plane < planes, ErrorCode::corrupt_stream, "wavelet group ", i, " names plane ", g.plane, " of ",
                 planes);
    if (L == 0) {
      SAFETY_CHECK(g.level_first == 0 && g.level_last == 0 && g.mask == kLowBandBit, ErrorCode::corrupt_stream,
                   "wavelet group ", i, " names subbands of a transform of 0 levels");
    } else {
      SAFETY_CHECK(g.level_first >= 1 && g.level_first <= g.level_last && g.level_last <= L, ErrorCode::corrupt_stream,
                   "wavelet group ", i, " has level range ", g.level_first, "..", g.level_last, " outside 1..", L);
      SAFETY_CHECK(!(g.mask & kLowBandBit) || g.level_last == L, ErrorCode::corrupt_stream, "wavelet group ", i,
                   " holds the low band but ends at level ", g.level_last, " of ", L);
    }
    SAFETY_CHECK(g.mask != 0, ErrorCode::corrupt_stream, "wavelet group ", i, " holds no subband");
    std::size_t n = 0;
    if (g.mask & kLowBandBit) {
      SAFETY_CHECK(!at(g.plane, 0, 0), ErrorCode::corrupt_stream, "wavelet group ", i, " repeats the low band of plane ",
                   g.plane);
      at(g.plane, 0, 0) = 1;
      n += sb.low_band().samples();
    }
    for (unsigned l = g.level_first; L > 0 && l <= g.level_last; ++l)
      for (unsigned k = 1; k < kKinds; ++k) {
        if (!(g.mask & (1u << k)) || !sb.detail(l, k).samples()) continue;
        SAFETY_CHECK(!at(g.plane, l, k), ErrorCode::corrupt_stream, "wavelet group ", i, " repeats subband ", k,
                     " of level ", l, " of plane ", g.plane);
        at(g.plane, l, k) = 1;
        n += sb.detail(l, k).samples();
      }
    SAFETY_CHECK(n > 0, ErrorCode::corrupt_stream, "wavelet group ", i, " holds no coefficient");
  }
  for (unsigned p = 0; p < planes; ++p) {
    SAFETY_CHECK(at(p, 0, 0), ErrorCode::corrupt_stream, "no wavelet group holds the low band of plane ", p);
    for (unsigned l = 1; l <= L; ++l)
      for (unsigned k = 1; k < kKinds; ++k)
        SAFETY_CHECK(at(p, l, k) || !sb.detail(l, k).samples(), ErrorCode::corrupt_stream,
                     "no wavelet group holds subband ", k, " of level ", l, " of plane ", p);
  }
}

std::size_t group_samples(const std::vector<Box>& boxes) {
  std::size_t n = 0;
  for (const Box& b : boxes) n += b.samples();
  return n;
}

}  // namespace vlec::wavelet
