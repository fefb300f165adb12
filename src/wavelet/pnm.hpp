// wavelet/pnm.hpp: reading binary PGM (P5) and PPM (P6) files for the
// wavelet codec, so real images go straight in and come back byte for byte.
//
// The header (magic, width, height, maxval, comments and whitespace exactly
// as in the file) is kept verbatim as the frame's container prefix; 16-bit
// samples (maxval > 255) are big-endian in PNM and are handed to the codec in
// host order with the big-endian output flag set, so that decompression
// writes the identical file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlec/wavelet.hpp"

namespace vlec::pnm {

struct Parsed {
  WaveletImage image;           // width x height, 1 or 3 planes, u8 or u16
  std::size_t header_bytes = 0; // the header: everything before the samples
  unsigned maxval = 0;
};

// Whether `data` starts like a binary PGM or PPM ("P5" or "P6" then whitespace).
bool looks_like_pnm(const uint8_t* data, std::size_t bytes);

// Parses the header and checks that exactly the samples follow it (a file
// holding several images, or a truncated one, is rejected). Throws
// vlec::Error (invalid_argument) naming the problem.
Parsed parse(const uint8_t* data, std::size_t bytes);

// The file's samples in host order (u16 swapped from big-endian), and the
// options that make the wavelet frame restore the file exactly.
std::vector<uint8_t> host_samples(const uint8_t* data, const Parsed& p);
void set_container(const uint8_t* data, const Parsed& p, WaveletOptions& options);

}  // namespace vlec::pnm
