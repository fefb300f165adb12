// tests/test_volume_spec.cpp: the shared `PATH@WxHxD[:u16]` parser used by
// `vlec bench --volume`, examples/volume_pipeline and bench/image_bench.
#include <gtest/gtest.h>

#include "common/volume_spec.hpp"

namespace {

TEST(VolumeSpec, ParsesPathAndShape) {
  const auto v = vlec::parse_volume_spec("/data/ct@scan.raw@512x384x7");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->path, "/data/ct@scan.raw");  // the last '@' splits
  EXPECT_EQ(v->shape, "512x384x7");
  EXPECT_EQ(v->width, 512u);
  EXPECT_EQ(v->height, 384u);
  EXPECT_EQ(v->depth, 7u);
  EXPECT_FALSE(v->wide);
  EXPECT_EQ(v->bytes(), 512u * 384u * 7u);
}

TEST(VolumeSpec, U16SuffixDoublesBytes) {
  const auto v = vlec::parse_volume_spec("v.raw@3x5x1:u16");
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->wide);
  EXPECT_EQ(v->shape, "3x5x1:u16");
  EXPECT_EQ(v->samples(), 15u);
  EXPECT_EQ(v->bytes(), 30u);
}

TEST(VolumeSpec, RejectsMissingAtOrShape) {
  EXPECT_FALSE(vlec::parse_volume_spec("").has_value());
  EXPECT_FALSE(vlec::parse_volume_spec("volume.raw").has_value());
  EXPECT_FALSE(vlec::parse_volume_spec("v.raw@").has_value());
  EXPECT_FALSE(vlec::parse_volume_spec("v.raw@64x64").has_value());
  EXPECT_FALSE(vlec::parse_volume_spec("v.raw@:u16").has_value());
  EXPECT_FALSE(vlec::parse_volume_spec("v.raw@axbxc").has_value());
}

}  // namespace
