// cuda/wavelet_decode.cu: the GPU decoder of wavelet frames
// (vlec/device_wavelet.hpp; docs/FORMAT.md §10).
//
// Plan on the host, decode on the GPU: the frame's header area and every
// embedded frame's header area are read to the host and checked with the CPU
// reader's code (so the checks, and their error codes, are the CPU's:
// cuda/wavelet_decode_plan.*, which also lays out the temp storage); then
// one enqueue of everything: each group's embedded frame decoded by the
// ordinary device decoder into its own symbol buffer (each with its own temp
// and status, so none waits for another's check; groups side by side on a
// few streams forked from the caller's), one scatter kernel for all groups
// but the details of level 1 (which the inverse 5/3 reads from the symbols
// itself, for 2D frames: 3/4 of the coefficients never written as int32 and
// read back), the inverse 5/3 transform per plane, one join kernel (inverse
// RCT, range, interleave, byte order) and the samples checksum. One wait at
// the end; the error words are read in the CPU decoder's order (embedded
// frames by group, joined coefficients, transform by plane, range,
// checksum). The embedded chunks' own checksums are left to a second decode
// of a frame that fails a check (decode_checked): the samples checksum
// covers every symbol of a frame that passes.
//
// Temp storage is a few regions, several of them reused: the symbols of all
// groups share the reconstructed planes' region (the scatter has consumed
// them before the inverse transform writes it), and when the samples do not
// start 16-byte aligned in the output (an odd container prefix) they are
// written to the coefficients' region (free after the inverse transform),
// hashed there and copied to the output. Where the inverse reads level 1's
// details from the symbols, the symbols live until its last level, so the
// planes and staged samples go to the coefficients' region instead (level
// 1 no longer reads it) and the join's staged output to the other.
#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "common/bits.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cuda/backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/decode_tables_gpu.hpp"
#include "cuda/dwt53_gpu.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_decode_plan.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/device_wavelet.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/layout.hpp"
#include "wavelet/samples_checksum.hpp"

namespace vlec::cuda {

namespace {

using namespace wavelet_decode;

static_assert(kChecksumSegmentBytes == wavelet::kChecksumSegmentBytes, "one segment size for CPU and GPU");

// Whether the inverse transform writes the samples straight (one plane in
// the machine's byte order: no colour transform, interleave or byte swap).
bool direct_samples(const wavelet::Header& h) {
  return h.image.planes == 1 && (h.image.dtype == DType::u8 || !h.big_endian);
}

// The host clock for the benchmark's phase events (wavelet_gpu::phase_events).
int64_t host_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Throws the first error the status words and chunk statuses (host copies) report.
void throw_first_error(const Plan& p, const std::vector<uint64_t>& st,
                       const std::vector<std::vector<uint32_t>>& chunk_status) {
  const wavelet::Header& h = p.w.header;
  const std::size_t G = p.frames.size();
  for (std::size_t g = 0; g < G; ++g) check_frame_status(p.frames[g], chunk_status[g].data());
  const uint64_t none = ~uint64_t{0};
  SAFETY_CHECK(st[wavelet_gpu::kStatusWide] == none, ErrorCode::corrupt_stream, "wavelet coefficient ",
               st[wavelet_gpu::kStatusWide] & ((uint64_t{1} << 40) - 1), " of group ",
               st[wavelet_gpu::kStatusWide] >> 40, " has more than 32 bits");
  SAFETY_CHECK(st[wavelet_gpu::kStatusPadding] == none, ErrorCode::corrupt_stream, "wavelet low-bit padding of group ",
               st[wavelet_gpu::kStatusPadding], " is not zero");
  for (unsigned pl = 0; pl < h.image.planes; ++pl)
    SAFETY_CHECK(st[wavelet_gpu::kStatusDwt + pl] == none, ErrorCode::corrupt_stream, "wavelet frame at byte ",
                 p.w.stream_offset, ": plane ", pl, " does not invert (sample ", st[wavelet_gpu::kStatusDwt + pl],
                 direct_samples(h) ? " falls outside the transform's range or the sample type)"
                                   : " falls outside the transform's range)");
  SAFETY_CHECK(st[wavelet_gpu::kStatusRange] == none, ErrorCode::corrupt_stream,
               "wavelet frame decodes a sample outside the sample type at pixel ", st[wavelet_gpu::kStatusRange]);
  SAFETY_CHECK(st[wavelet_gpu::kStatusHash] == h.samples_checksum, ErrorCode::checksum_mismatch,
               "checksum mismatch in the samples of the wavelet frame at byte ", p.w.stream_offset,
               ": the stream is corrupt");
}

// Reads the frame's status words and every group's chunk statuses behind the
// work on `stream`, waits for it, and throws the first error found (or,
// with `failed`, sets it instead).
void check_results(const Plan& p, const uint8_t* d_temp, cudaStream_t stream, bool* failed) {
  // Every group's chunk statuses and the frame's status words: one batch of
  // copies behind the decode's last kernel, and the decode's one wait.
  const std::size_t G = p.frames.size();
  HostReads reads;
  std::vector<uint64_t> st;
  std::vector<std::vector<uint32_t>> chunk_status(G);
  reads.add(st, d_temp + p.layout.status, wavelet_gpu::kStatusWords);
  for (std::size_t g = 0; g < G; ++g)
    reads.add(chunk_status[g], frame_decode_status(p.frames[g], d_temp + p.layout.frame_temp[g]),
              p.frames[g].header.chunks());
  reads.wait(stream);
  if (wavelet_gpu::phase_events) wavelet_gpu::phase_events->host_synced_ns = host_ns();
  try {
    throw_first_error(p, st, chunk_status);
  } catch (const Error&) {
    if (!failed) throw;
    *failed = true;
  }
}

}  // namespace

}  // namespace vlec::cuda

namespace vlec::device {

WaveletImage wavelet_image(const void* d_frame, std::size_t bytes) {
  return cuda::wavelet_decode::make_plan(d_frame, bytes, nullptr).w.header.image;
}

uint64_t wavelet_decompressed_size(const void* d_frame, std::size_t bytes) {
  return cuda::wavelet_decode::make_plan(d_frame, bytes, nullptr).w.output_bytes();
}

std::size_t wavelet_decompress_temp_bytes(const void* d_frame, std::size_t bytes) {
  return cuda::wavelet_decode::make_plan(d_frame, bytes, nullptr).layout.total;
}

namespace {

// The detail subbands of every plane's finest 2D levels (those that split
// x and y; at most wavelet_gpu::coded_detail_levels of them) as the inverse
// reads them from the symbols (dwt53_gpu.hpp), and the boxes left for the
// scatter, renumbered without them. planes[pl * levels + l - 1] is level l
// of plane pl (levels: all of the frame's; those not coded have no
// symbols); none where level 1 does not split x and y.
struct CodedLevels {
  unsigned levels = 0;
  std::vector<cuda::dwt::CodedDetails> planes;
  std::vector<cuda::wavelet_gpu::BoxDesc> scatter_boxes;
  uint64_t scatter_total = 0;
};

CodedLevels code_levels(const cuda::wavelet_decode::Plan& p, unsigned long long* status) {
  namespace wg = cuda::wavelet_gpu;
  CodedLevels c;
  const wavelet::Header& h = p.w.header;
  if (p.shape.nz != 1) return c;
  const wavelet::Subbands sb(p.shape, h.levels);
  const unsigned L = wavelet::effective_levels(p.shape, h.levels);
  unsigned xy = 0;  // levels 1..xy split x and y (a prefix: an axis that stops splitting stays at 1)
  // (Level 1 always; a coarser level only while its bands hold at least
  // coded_level_min_samples values each: see wavelet_kernels.hpp.)
  while (xy < L && xy < wg::coded_detail_levels && sb.detail(xy + 1, 1).nx > 0 && sb.detail(xy + 1, 2).ny > 0 &&
         (xy == 0 || sb.detail(xy + 1, 1).samples() >= wg::coded_level_min_samples))
    ++xy;
  if (xy == 0) return c;
  c.levels = L;
  c.planes.resize(std::size_t{h.image.planes} * L);
  std::vector<char> coded_box(p.boxes.size(), 0);
  for (unsigned pl = 0; pl < h.image.planes; ++pl)
    for (unsigned l = 1; l <= xy; ++l) {
      cuda::dwt::CodedDetails& cd = c.planes[std::size_t{pl} * L + l - 1];
      cd.wide = status + wg::kStatusWide;
      for (unsigned kind = 1; kind <= 3; ++kind) {
        const wavelet::Box want = sb.detail(l, kind);
        std::size_t i = 0;
        while (i < p.boxes.size() &&
               !(p.boxes[i].plane_base == pl * p.pixels && p.boxes[i].x0 == want.x0 && p.boxes[i].y0 == want.y0 &&
                 p.boxes[i].z0 == 0 && p.boxes[i].nx == want.nx && p.boxes[i].ny == want.ny && p.boxes[i].nz == 1))
          ++i;
        if (i == p.boxes.size()) return CodedLevels{};  // (the reader checked the coverage: cannot happen)
        coded_box[i] = 1;
        const wg::BoxDesc& b = p.boxes[i];
        const wg::GroupDesc& g = p.groups[b.group];
        cuda::dwt::DetailBand& band = cd.band[kind - 1];
        band.symbols = g.symbols;
        band.low = reinterpret_cast<const uint32_t*>(g.low);
        band.low_words = g.low_bytes / 4;
        band.index0 = b.index0;
        band.nx = static_cast<uint32_t>(b.nx);
        band.width = g.width;
        band.shift = g.shift;
        band.group = b.group;
      }
    }
  for (std::size_t i = 0; i < p.boxes.size(); ++i) {
    if (coded_box[i]) continue;
    wg::BoxDesc b = p.boxes[i];
    b.first = c.scatter_total;
    c.scatter_total += b.nx * b.ny * b.nz;
    c.scatter_boxes.push_back(b);
  }
  return c;
}

// The decode of a planned frame (device::wavelet_decompress and the host
// API's decompress_wavelet, which plans from its host copy of the frame).
// verify_chunks: whether the embedded frames' decoders check every chunk's
// checksum. Without, `failed` (not null) is set where any check fails, for
// the caller to decode again with them (decode_checked).
std::size_t decompress_planned(cuda::wavelet_decode::Plan& p, const void* d_frame_v, void* d_out_v,
                               std::size_t capacity, void* d_temp_v, std::size_t temp_bytes, cudaStream_t stream,
                               bool verify_chunks = true, bool* failed = nullptr) {
  using namespace cuda;
  using namespace cuda::wavelet_decode;
  namespace wg = wavelet_gpu;
  const Layout& L = p.layout;
  const wavelet::Header& h = p.w.header;
  const uint64_t out_bytes = p.w.output_bytes();
  SAFETY_CHECK(out_bytes <= capacity, ErrorCode::output_too_small, "decompressed data needs ", out_bytes,
               " bytes, more than the ", capacity, " bytes of the output buffer");
  VLEC_REQUIRE(temp_bytes >= L.total, "temporary storage of ", temp_bytes, " bytes is below the ", L.total, " needed");
  VLEC_REQUIRE(d_temp_v != nullptr && reinterpret_cast<uintptr_t>(d_temp_v) % kAlign == 0,
               "temporary storage must be 256-byte aligned (as cudaMalloc returns it)");
  VLEC_REQUIRE(d_out_v != nullptr && reinterpret_cast<uintptr_t>(d_out_v) % 16 == 0,
               "the output must be 16-byte aligned");
  const auto* d_frame = static_cast<const uint8_t*>(d_frame_v);
  auto* d_out = static_cast<uint8_t*>(d_out_v);
  auto* d_temp = static_cast<uint8_t*>(d_temp_v);
  auto* status = reinterpret_cast<unsigned long long*>(d_temp + L.status);
  auto* coeffs = reinterpret_cast<int32_t*>(d_temp + L.coeffs);
  auto* recon = reinterpret_cast<int32_t*>(d_temp + L.recon);
  const uint8_t* payload = d_frame + p.w.frame.header_area_bytes();

  auto phase = [&](unsigned i) {
    if (!wg::phase_events) return;
    CUDA_CHECK(cudaEventRecord(wg::phase_events->events[i], stream));
    if (i == 0) wg::phase_events->host_start_ns = host_ns();
  };
  auto mark = [&](unsigned i) {
    if (wg::phase_events) wg::phase_events->host_mark_ns[i] = host_ns();
  };
  phase(0);
  CUDA_CHECK(cudaMemsetAsync(status, 0xFF, 8 * wg::kStatusWords, stream));
  // Every Huffman group's chunk descriptors and codebook go up on the
  // caller's stream and one launch builds all their decode tables; then the
  // fork: each group decodes on a side stream (round robin); join: the
  // caller's stream waits for all.
  const std::vector<cudaStream_t>& side = side_streams();
  CallEvents events;
  HostWrites writes;  // the uploads, pinned until the wait at the end
  DecodeTableBuilds builds;
  const std::size_t G = p.groups.size();
  std::vector<HuffmanDecodeArgs> huffman_args(G);
  std::vector<const uint8_t*> frame_payload(G);
  std::vector<StagedFrameDecode> stages(G);
  uint64_t symbols = 0;
  for (std::size_t g = 0; g < G; ++g) {
    p.groups[g].symbols = d_temp + L.recon + L.symbols[g];
    p.groups[g].low = payload + h.groups[g].bits_offset;
    frame_payload[g] = payload + h.groups[g].frame_offset + p.frames[g].header.header_area_bytes();
    for (const huffman::Codebook& book : p.frames[g].codebooks) symbols += book.alphabet_size;
  }
  const std::size_t prefix = h.prefix.size();
  const bool staged = prefix % 16 != 0;
  const bool direct = cuda::direct_samples(h);
  // The details of the finest 2D level(s) read by the inverse from the
  // symbols: the scatter leaves them out. The inverse's level 1 then writes
  // where the symbols do not live (its output, or the coefficients' region,
  // which it no longer reads; with one level it still reads the low band
  // there, so then only straight into the caller's output).
  const CodedLevels coded = wg::coded_detail_bands ? code_levels(p, status) : CodedLevels{};
  const bool use_coded = !coded.planes.empty() && (coded.levels >= 2 || (direct && !staged));
  const std::vector<wg::BoxDesc>& scatter_boxes = use_coded ? coded.scatter_boxes : p.boxes;
  const uint64_t scatter_total = use_coded ? coded.scatter_total : p.w.frame.elements;
  mark(0);
  // Every group's chunk descriptors and table build job, and the scatter's
  // group and box descriptors, go up as one copy (UploadArena). The groups'
  // places are taken first and filled in place by the staging (the host's
  // share: descriptors, table plans, upload words; on several threads where
  // the codebooks are large), with no vectors filled and copied again.
  UploadArena arena(d_temp + L.uploads, L.uploads_bytes);
  std::vector<HostSlot> descs_slot(G), table_slot(G);
  auto take = [&](std::size_t bytes) {
    if (!bytes) return HostSlot{};
    const auto [host, device] = arena.reserve(bytes);
    return HostSlot{host, device, bytes};
  };
  for (std::size_t g = 0; g < G; ++g) {
    if (rle_path(p.frames[g].header)) continue;
    descs_slot[g] = take(frame_decode_descs_bytes(p.frames[g]));
    table_slot[g] = take(frame_decode_table_bytes(p.frames[g]));
  }
  for_each_group(G, symbols, [&](std::size_t g) {
    if (!rle_path(p.frames[g].header))
      stages[g] = stage_frame_decode(p.frames[g], frame_payload[g], d_temp + L.recon + L.symbols[g],
                                     d_temp + L.frame_temp[g], L.frame_temp_bytes[g], descs_slot[g], table_slot[g]);
  });
  mark(1);
  for (std::size_t g = 0; g < G; ++g) {
    if (rle_path(p.frames[g].header)) continue;
    StagedFrameDecode& st = stages[g];
    builds.add(std::move(st.table));  // placed: launch_placed() builds it from the arena
    huffman_args[g] = st.args;
    huffman_args[g].verify = verify_chunks;
  }
  const auto* d_groups = static_cast<const GroupDesc*>(arena.add(p.groups.data(), sizeof(GroupDesc) * G));
  const auto* d_boxes =
      static_cast<const BoxDesc*>(arena.add(scatter_boxes.data(), sizeof(BoxDesc) * scatter_boxes.size()));
  arena.flush(stream);
  mark(2);
  builds.launch_placed(stream);
  mark(3);
  // The Huffman groups in one launch per kernel shape (or, for comparison,
  // one a group), then the rle groups, round robin over the side streams.
  const bool batched = wg::batched_group_decode;
  const HuffmanDecodeBatch batch =
      batched ? stage_huffman_decode_batch(huffman_args, d_temp + L.batch, huffman_decode_batch_bytes(G), stream, writes)
              : HuffmanDecodeBatch{};
  mark(4);
  std::vector<std::size_t> rle_groups, single_groups;  // single: one launch a group (not batched)
  for (std::size_t g = 0; g < G; ++g) {
    if (rle_path(p.frames[g].header)) rle_groups.push_back(g);
    else if (!batched) single_groups.push_back(g);
  }
  const std::size_t launches = batch.launches.size() + single_groups.size() + rle_groups.size();
  const std::size_t used = std::min<std::size_t>(side.size(), launches);
  fork_side_streams(events, stream, used);
  std::size_t next = 0;
  for (const HuffmanDecodeBatch::Launch& l : batch.launches) launch_huffman_decode_batch(l, side[next++ % side.size()]);
  for (std::size_t g : single_groups) launch_huffman_decode(huffman_args[g], side[next++ % side.size()]);
  for (std::size_t g : rle_groups)
    decode_frame_device(p.frames[g], frame_payload[g], d_temp + L.recon + L.symbols[g], d_temp + L.frame_temp[g],
                        L.frame_temp_bytes[g], side[next++ % side.size()], &writes);
  if (wg::phase_events) wg::phase_events->host_enqueued_ns = host_ns();
  join_side_streams(events, stream, used);
  phase(1);
  wg::ScatterArgs sa;
  sa.groups = d_groups;
  sa.group_count = static_cast<uint32_t>(G);
  sa.boxes = d_boxes;
  sa.box_count = static_cast<uint32_t>(scatter_boxes.size());
  sa.total = scatter_total;
  sa.width = p.shape.nx;
  sa.height = p.shape.ny;
  sa.coeffs = coeffs;
  sa.status = status;
  wg::launch_scatter(sa, stream);
  phase(2);

  const uint64_t sample_bytes = p.w.frame.elements * p.w.frame.width;
  // 16-byte aligned: the output, or (an odd prefix) temp storage copied there after.
  // One plane in the machine's byte order: the inverse transform writes the
  // samples itself, range-checked as it narrows them, and no join pass reads
  // the coefficients back (its i32 planes are then free for staging).
  // With coded details the roles of the two regions swap: the symbols (in
  // recon) are read until the last inverse, so planes and staged samples
  // go to the coefficients' region, and the join's output to recon.
  int32_t* const planes = use_coded ? coeffs : recon;
  uint8_t* const samples = !staged                 ? d_out + prefix
                           : direct == use_coded   ? d_temp + L.coeffs
                                                   : d_temp + L.recon;
  const cuda::dwt::CodedDetails* coded_plane = use_coded ? coded.planes.data() : nullptr;
  if (direct)
    cuda::dwt::inverse(coeffs, samples, p.w.frame.width == 1 ? DwtSample::u8 : DwtSample::u16, p.shape, h.levels,
                       reinterpret_cast<uint64_t*>(status + wg::kStatusDwt), d_temp + L.dwt, L.dwt_bytes, stream,
                       wg::dwt_tuning, coded_plane, use_coded ? coded.levels : 0);
  else
    for (unsigned pl = 0; pl < h.image.planes; ++pl)
      cuda::dwt::inverse(coeffs + pl * p.pixels, planes + pl * p.pixels, DwtSample::i32, p.shape, h.levels,
                         reinterpret_cast<uint64_t*>(status + wg::kStatusDwt + pl), d_temp + L.dwt, L.dwt_bytes,
                         stream, wg::dwt_tuning,
                         coded_plane ? coded_plane + std::size_t{pl} * coded.levels : nullptr,
                         use_coded ? coded.levels : 0);
  phase(3);
  if (prefix) CUDA_CHECK(cudaMemcpyAsync(d_out, h.prefix.data(), prefix, cudaMemcpyHostToDevice, stream));
  if (!direct) {
    wg::JoinArgs ja;
    ja.planes = planes;
    ja.pixels = p.pixels;
    ja.planes_count = h.image.planes;
    ja.sample_bytes = p.w.frame.width;
    ja.rct = h.rct;
    ja.big_endian = h.big_endian;
    ja.out = samples;
    ja.status = status;
    wg::launch_join(ja, stream);
  }
  phase(4);
  samples_checksum_device(samples, sample_bytes, p.segmented, reinterpret_cast<uint64_t*>(status + wg::kStatusHash),
                          d_temp + L.hash, L.hash_bytes, stream);
  phase(5);
  if (staged)
    CUDA_CHECK(cudaMemcpyAsync(d_out + prefix, samples, sample_bytes, cudaMemcpyDeviceToDevice, stream));
  check_results(p, d_temp, stream, failed);  // waits for the stream
  return out_bytes;
}

// The decode of a planned frame, the embedded chunks' checksums checked only
// if another check fails (wavelet_gpu::deferred_chunk_checks): the samples
// checksum covers every decoded symbol (the inverse transform is a bijection
// and every other check still runs), so a frame that passes decodes to the
// symbols the chunk checksums were taken of, and their hashing (~30 % of the
// Huffman decoders' instructions) is skipped. A frame that fails is decoded
// again checking them, for the CPU decoder's error.
std::size_t decode_checked(cuda::wavelet_decode::Plan& p, const void* d_frame, void* d_out, std::size_t capacity,
                           void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  if (!cuda::wavelet_gpu::deferred_chunk_checks)
    return decompress_planned(p, d_frame, d_out, capacity, d_temp, temp_bytes, stream);
  bool failed = false;
  const std::size_t n = decompress_planned(p, d_frame, d_out, capacity, d_temp, temp_bytes, stream, false, &failed);
  if (!failed) return n;
  return decompress_planned(p, d_frame, d_out, capacity, d_temp, temp_bytes, stream);
}

}  // namespace

std::size_t wavelet_decompress(const void* d_frame, std::size_t bytes, void* d_out, std::size_t capacity,
                               void* d_temp, std::size_t temp_bytes, Stream stream) {
  cuda::wavelet_gpu::PhaseEvents* const ev = cuda::wavelet_gpu::phase_events;
  if (ev) ev->host_call_ns = cuda::host_ns();
  cuda::wavelet_decode::Plan p = cuda::wavelet_decode::make_plan(d_frame, bytes, stream);
  if (ev) ev->host_planned_ns = cuda::host_ns();
  const std::size_t n = decode_checked(p, d_frame, d_out, capacity, d_temp, temp_bytes, stream);
  if (ev) ev->host_done_ns = cuda::host_ns();
  return n;
}

}  // namespace vlec::device

namespace vlec::cuda {

bool can_decode_wavelet(const wavelet::ParsedWavelet& w) {
  const WaveletImage& im = w.header.image;
  return im.width < kMaxAxis && im.height < kMaxAxis && im.depth < kMaxAxis;
}

void decompress_wavelet(const wavelet::ParsedWavelet& w, uint8_t* out) {
  const uint64_t area = w.frame.header_area_bytes();
  const uint8_t* frame = w.payload - area;
  const uint64_t frame_bytes = w.frame.frame_bytes;
  // Buffers from the pool (host_staging.hpp); copies move pinned memory.
  SlotBuffer<uint8_t> d_frame(frame_bytes);
  PinnedBuffer<uint8_t> staged(frame_bytes);
  parallel_copy(staged.get(), frame, frame_bytes, 0);
  CUDA_CHECK(cudaMemcpyAsync(d_frame.get(), staged.get(), frame_bytes, cudaMemcpyHostToDevice, nullptr));
  const std::size_t out_bytes = w.output_bytes();
  SlotBuffer<uint8_t> d_out(std::max<std::size_t>(out_bytes, 16));
  try {
    // One plan, from the host's copy of the headers (no reads back from the device).
    wavelet_decode::Plan p = wavelet_decode::make_plan(d_frame.get(), frame_bytes, nullptr, frame);
    SlotBuffer<uint8_t> d_temp(p.layout.total);
    device::decode_checked(p, d_frame.get(), d_out.get(), std::max<std::size_t>(out_bytes, 16), d_temp.get(),
                               p.layout.total, nullptr);
  } catch (const Error& e) {
    // The device decoder sees this frame at byte 0: name its place in the
    // caller's stream too (same code, so callers see the CPU's error).
    if (w.stream_offset == 0) throw;
    throw Error(e.code(), std::string(e.what()) + " (byte offsets within the wavelet frame at byte " +
                              std::to_string(w.stream_offset) + " of the stream)");
  }
  if (!out_bytes) return;
  PinnedBuffer<uint8_t> staged_out(out_bytes);
  CUDA_CHECK(cudaMemcpyAsync(staged_out.get(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost, nullptr));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  parallel_copy(out, staged_out.get(), out_bytes, 0);
}

}  // namespace vlec::cuda
