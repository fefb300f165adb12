// vlec/device_dwt.hpp: the reversible 5/3 wavelet transform (vlec/dwt.hpp) on
// data that is already on the GPU, CUB-style.
//
// The coefficients are identical, one for one, to vlec::dwt53_forward's for
// the same samples, shape and level count (Mallat layout, level order x then
// y then z, whole-sample symmetric extension, axes of length 1 untouched),
// and the inverse gives back the samples exactly. The caller owns every
// buffer: it asks dwt53_temp_bytes() how much temporary storage a shape
// needs, allocates it once and passes it in; nothing is allocated inside and
// every kernel is enqueued on the caller's stream, with no host round trip.
//
// Errors that depend on the data cannot be thrown without waiting for the
// GPU, so they go to a device word, *d_error (8 bytes, device memory): each
// call sets it to ~0 and, if the data is bad, to the index (x + nx * (y + ny
// * z)) of the first bad sample in memory order:
//  * forward, i32 samples: a sample outside [kDwtMinI32, kDwtMaxI32] (the CPU
//    throws invalid_argument for the same samples); the coefficients are
//    then unspecified (the check is one extra read of the i32 samples);
//  * inverse: a reconstructed sample outside the sample type (coefficients
//    that no forward transform of this shape and level count produced; the
//    CPU throws invalid_argument); the samples are then unspecified. The
//    inverse computes modulo 2^32, like the CPU, so such input is never
//    undefined behaviour.
// dwt53_throw_if_error() waits for the stream, reads the word and throws the
// CPU's invalid_argument (same wording, same position) when it is set.
// Argument errors (null buffers, too little temp storage, levels above
// kDwtMaxLevels, a shape too large) throw invalid_argument at once.
//
// Only available when vlec is built with CUDA (VLEC_WITH_CUDA).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vlec/device.hpp"
#include "vlec/dwt.hpp"

namespace vlec::device {

// The sample type of the samples side (u8, u16, i16 or i32, as
// vlec::dwt53_forward's overloads); the coefficients are always int32.
enum class DwtSample : uint8_t { u8, u16, i16, i32 };

// Bytes of temporary storage the transform of `shape` with `levels` levels
// needs (forward and inverse alike): two int32 buffers for the low bands of
// levels 1 and 2 (ping-pong: level k reads the low band of level k-1 from
// one and writes its own to the other, so no level works in place), plus,
// for 3D shapes, one full-size int32 buffer between the xy and z passes.
// 0 where nothing is needed (0 levels, or a 1-level transform of a 1D or 2D
// shape, which reads the samples and writes the coefficients directly).
std::size_t dwt53_temp_bytes(const DwtShape& shape, unsigned levels);

// Forward: shape.samples() samples of type `type` at d_samples -> as many
// int32 coefficients at d_coeffs (must not overlap). Vector loads and stores
// are used where the buffers are 16-byte aligned (cudaMalloc's are) and the
// row length allows; any alignment of the sample size works.
void dwt53_forward(const void* d_samples, DwtSample type, int32_t* d_coeffs, const DwtShape& shape,
                   unsigned levels, uint64_t* d_error, void* d_temp, std::size_t temp_bytes, Stream stream);

// Inverse: the coefficients of a forward transform with the same shape and
// level count -> samples of type `type` at d_samples. d_coeffs is left
// untouched and must not overlap d_samples or the temp storage.
void dwt53_inverse(const int32_t* d_coeffs, void* d_samples, DwtSample type, const DwtShape& shape,
                   unsigned levels, uint64_t* d_error, void* d_temp, std::size_t temp_bytes, Stream stream);

// Waits for `stream`, reads *d_error and, if a call above found bad data,
// throws ErrorCode::invalid_argument naming the sample's position, as the
// CPU transform does. `inverse` and `type` say which call wrote the word.
void dwt53_throw_if_error(const uint64_t* d_error, bool inverse, DwtSample type, const DwtShape& shape,
                          Stream stream);

}  // namespace vlec::device
