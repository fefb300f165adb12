// cuda/side_streams.hpp: a few streams per device on which the wavelet
// decoder and encoder run the embedded frames of their groups side by side
// (cuda/wavelet_decode.cu, cuda/wavelet_encode.cu), and the events that
// fork them from and join them back to the caller's stream.
//
// The device frame coders give one warp or block to each 65,536-element
// chunk, so even the largest group of an 8192^2 image fills only a part of
// an H100, and the groups are independent. One set per device, made on first
// use and kept (creating streams per call would cost more than a small
// group's frame); each call forks and joins with its own events, so calls
// from several host threads stay ordered on their own streams.
#pragma once

#include <cuda_runtime.h>

#include <vector>

namespace vlec::cuda {

// The wavelet decoder's 16 groups of a u16 8192^2 image decoded in 0.61 ms
// on eight against 0.88 ms on four (H100, MR slice); it now launches a few
// batches, at most one a stream. The encoder takes kEncodeSideStreams of
// them, every group of that image on its own stream: on eight, each of the
// three largest groups (16.8 M symbols) waited behind a small group's chain
// of latency-bound launches (~0.1 ms) on its stream; on sixteen the
// compress took 1.126 against 1.177 ms (MR slice) and 1.262 against 1.273
// (smooth image), alternated (`-session24-side-streams-*`). Every group's
// frame has its own temp, so the stream count costs no memory.
constexpr unsigned kSideStreams = 16;
constexpr unsigned kEncodeSideStreams = 16;
static_assert(kEncodeSideStreams <= kSideStreams, "the encoder takes the first side streams");

// The current device's side streams (non-blocking, kSideStreams of them).
// With side_streams_high_priority (the default) they have the device's
// greatest stream priority: the block scheduler then gives SMs that free up
// to their blocks before the pending blocks of a large kernel on the
// caller's stream (the encoder builds its groups' codebooks, one block's
// latency-bound work each, beside the symbols kernel's ~30,000 blocks);
// otherwise the least (the default priority). Not thread-safe to change.
extern bool side_streams_high_priority;
const std::vector<cudaStream_t>& side_streams();
// The current device's side streams at the greatest (high) or the least
// priority, whatever side_streams_high_priority says: the writer's step 1
// runs the transform's chain of levels on a high one and the finest levels'
// histograms on a low one (wavelet_gpu::transform_chain_first).
const std::vector<cudaStream_t>& side_streams_at(bool high);

// Events of one call, destroyed when it returns (a destroyed event that is
// still pending completes normally).
class CallEvents {
 public:
  CallEvents() = default;
  CallEvents(const CallEvents&) = delete;
  CallEvents& operator=(const CallEvents&) = delete;
  ~CallEvents();
  cudaEvent_t record(cudaStream_t stream);
  // An event of this call, not yet recorded.
  cudaEvent_t make();

 private:
  std::vector<cudaEvent_t> events_;
};

// Makes the first `used` side streams wait for what `stream` holds so far.
void fork_side_streams(CallEvents& events, cudaStream_t stream, std::size_t used);
// Makes `stream` wait for what the first `used` side streams hold so far.
void join_side_streams(CallEvents& events, cudaStream_t stream, std::size_t used);

}  // namespace vlec::cuda
