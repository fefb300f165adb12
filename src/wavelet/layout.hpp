// wavelet/layout.hpp: where the subbands of a multi-level 5/3 transform lie in
// the coefficient array (Mallat layout, vlec/dwt.hpp), how they are grouped
// for entropy coding, and the size of a group (wavelet/group_io.* moves
// its coefficients).
//
// A group is described by (level range, subband mask) rather than by a list of
// rectangles, so the group table stays a few bytes per group, the reader can
// check that the groups of a plane cover every subband exactly once, and a
// decoder (CPU or GPU) finds every coefficient of a group from the table alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "vlec/dwt.hpp"

namespace vlec::wavelet {

// Subband kind b (0..7): bit 0 = high half along x, bit 1 along y, bit 2
// along z. Kind 0 at the last level is the low band; kinds 1..7 are details.
constexpr unsigned kKinds = 8;
constexpr uint8_t kLowBandBit = 1;  // bit 0 of a group's subband mask

struct Box {
  std::size_t x0 = 0, y0 = 0, z0 = 0, nx = 0, ny = 0, nz = 0;
  std::size_t samples() const { return nx * ny * nz; }
};

// One group as the format stores it (docs/FORMAT.md §10.3).
struct GroupSpec {
  unsigned plane = 0;
  unsigned level_first = 0, level_last = 0;  // finest and coarsest level of the range
  uint8_t mask = 0;                          // bit b = detail kind b at each level; bit 0 = low band
};

// The geometry of one plane's transform.
class Subbands {
 public:
  Subbands(const DwtShape& shape, unsigned levels);  // levels already clamped to effective()
  unsigned levels() const { return levels_; }
  const DwtShape& shape() const { return shape_; }
  // Box of detail kind b (1..7) at level l (1..levels); empty when an axis of
  // b was not split at that level.
  Box detail(unsigned level, unsigned kind) const;
  Box low_band() const;
  // Subbands of a group, in coding order: the low band (if in the mask), then
  // levels from level_last down to level_first, kinds ascending; empty boxes
  // are left out.
  std::vector<Box> boxes(const GroupSpec& g) const;

 private:
  DwtShape shape_;
  unsigned levels_;
  std::vector<DwtShape> ext_;  // ext_[k]: low band after k levels
};

// Number of levels that change something for this shape (at most `requested`).
unsigned effective_levels(const DwtShape& shape, unsigned requested);

// The writer's grouping (docs/FORMAT.md §10.6): per plane, the low band and
// the coarsest levels merged into one group until it holds at least
// kMinGroupSamples coefficients; then one group per level with its detail
// subbands, or, where split(plane, level) says so, one group per detail
// subband of that level.
constexpr std::size_t kMinGroupSamples = 4096;
std::vector<GroupSpec> plan_groups(const Subbands& sb, unsigned planes,
                                   const std::function<bool(unsigned plane, unsigned level)>& split);
// The levels plan_groups codes as their own groups (not merged with the low band).
unsigned first_merged_level(const Subbands& sb);

// Reader's check: the groups of every plane cover the low band and every
// non-empty detail subband exactly once, and each group is non-empty.
// Throws corrupt_stream naming the first fault.
void check_coverage(const std::vector<GroupSpec>& groups, const Subbands& sb, unsigned planes);

// Coefficients of `boxes` in all: the sum of the box sizes.
std::size_t group_samples(const std::vector<Box>& boxes);

}  // namespace vlec::wavelet
