// src/common/volume_spec.hpp: parses the `PATH@WxHxD[:u16]` volume argument
// that the CLI (`vlec bench --volume`), examples/volume_pipeline and
// bench/image_bench all take. Header-only and free of vlec::Error so each
// caller keeps its own error type and message; it only splits the text, the
// caller reads the file and checks its size against bytes().
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace vlec {

struct VolumeSpec {
  std::string path;   // everything before the last '@'
  std::string shape;  // the text after '@', ":u16" included, e.g. "512x512x64"
  std::size_t width = 0, height = 0, depth = 0;
  bool wide = false;  // ":u16" suffix: 16-bit samples
  std::size_t samples() const { return width * height * depth; }
  std::size_t bytes() const { return samples() * (wide ? 2 : 1); }
};

// nullopt when there is no '@' or the shape after it is not WxHxD (optionally
// followed by ":u16"). Parsed with sscanf("%zux%zux%zu"), as the three
// callers did before sharing it.
inline std::optional<VolumeSpec> parse_volume_spec(const std::string& spec) {
  const std::size_t at = spec.rfind('@');
  if (at == std::string::npos) return std::nullopt;
  VolumeSpec v;
  v.path = spec.substr(0, at);
  v.shape = spec.substr(at + 1);
  std::string dims = v.shape;
  v.wide = dims.size() > 4 && dims.compare(dims.size() - 4, 4, ":u16") == 0;
  if (v.wide) dims.resize(dims.size() - 4);
  if (std::sscanf(dims.c_str(), "%zux%zux%zu", &v.width, &v.height, &v.depth) != 3) return std::nullopt;
  return v;
}

}  // namespace vlec
