// cuda/wavelet_decode.cu: the GPU decoder of wavelet frames
// (vlec/device_wavelet.hpp; docs/FORMAT.md §10).
//
// Plan on the host, decode on the GPU: the frame's header area and every
// embedded frame's header area are read to the host and checked with the CPU
// reader's code (so the checks, and their error codes, are the CPU's); then
// one enqueue of everything: each group's embedded frame decoded by the
// ordinary device decoder into its own symbol buffer (each with its own temp
// and status, so none waits for another's check; groups side by side on a
// few streams forked from the caller's), one scatter kernel for all
// groups, the inverse 5/3 transform per plane, one join kernel (inverse RCT,
// range, interleave, byte order) and the samples checksum. One wait at the
// end; the error words are read in the CPU decoder's order (embedded frames
// by group, joined coefficients, transform by plane, range, checksum).
//
// Temp storage is a few regions, several of them reused: the symbols of all
// groups share the reconstructed planes' region (the scatter has consumed
// them before the inverse transform writes it), and when the samples do not
// start 16-byte aligned in the output (an odd container prefix) they are
// written to the coefficients' region (free after the inverse transform),
// hashed there and copied to the output.
#include <algorithm>
#include <chrono>
#include <cstring>
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
#include "cuda/frame_decode.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/side_streams.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_kernels.hpp"
#include "vlec/device_dwt.hpp"
#include "vlec/device_wavelet.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/frame_format.hpp"
#include "wavelet/samples_checksum.hpp"

namespace vlec::cuda {

namespace {

using wavelet_gpu::BoxDesc;
using wavelet_gpu::GroupDesc;

constexpr std::size_t kAlign = 256;
constexpr std::size_t kMaxAxis = std::size_t{1} << 30;  // the device transform's limit

static_assert(kChecksumSegmentBytes == wavelet::kChecksumSegmentBytes, "one segment size for CPU and GPU");

std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Host copy of `bytes` device bytes at `src`, on the caller's stream (so it
// follows whatever the caller enqueued before), waited for.
void read_device(std::vector<uint8_t>& dst, const uint8_t* src, std::size_t bytes, cudaStream_t stream) {
  dst.resize(bytes);
  if (bytes == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(dst.data(), src, bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Host work of every group (parsing embedded headers, staging their
// decodes) on several threads when it is large enough to pay for starting
// them (wavelet_gpu::parallel_group_work): hdr_room16 at 8192^2 holds 14
// codebooks of up to 57,216 symbols, ~1.4 ms of parsing and ~1 ms of table
// plans and upload words on one core of the lead's VM. `work` counts
// header-area bytes or codebook symbols, whose costs are alike per unit.
// The error thrown is the lowest group's, as on one thread.
void for_each_group(std::size_t groups, uint64_t work, const std::function<void(std::size_t)>& job) {
  parallel_for(groups, work < wavelet_gpu::parallel_group_work ? 1 : resolve_threads(0, groups), job);
}

struct Layout {
  std::size_t status = 0, uploads = 0, coeffs = 0, recon = 0, dwt = 0, hash = 0, batch = 0;
  std::size_t uploads_bytes = 0;  // the UploadArena's region: descriptors, table jobs, groups, boxes
  std::vector<std::size_t> symbols, frame_temp, frame_temp_bytes;
  std::size_t dwt_bytes = 0, hash_bytes = 0, total = 0;
};

struct Plan {
  wavelet::ParsedWavelet w;  // payload is not meaningful (it stays on the device)
  bool segmented = false;
  DwtShape shape;
  uint64_t pixels = 0;
  std::vector<format::ParsedFrame> frames;  // the embedded frames' headers
  std::vector<GroupDesc> groups;             // symbols and low pointers filled in at decode time
  std::vector<BoxDesc> boxes;
  Layout layout;
};

// The checks of wavelet/decode.cpp's embedded_frame() on group g's header
// area (`area`, `available` bytes of it at hand).
format::ParsedFrame check_embedded(const Plan& p, std::size_t g, const uint8_t* area, std::size_t available) {
  const wavelet::Group& gr = p.w.header.groups[g];
  const uint64_t where = p.w.stream_offset + p.w.frame.header_area_bytes() + gr.frame_offset;
  format::ParsedFrame f = format::parse_frame_header(area, available, gr.frame_bytes, where);
  SAFETY_CHECK(f.header.frame_bytes == gr.frame_bytes, ErrorCode::corrupt_stream, "wavelet group ", g,
               " has an embedded frame of ", f.header.frame_bytes, " bytes where its table says ", gr.frame_bytes);
  SAFETY_CHECK(f.header.width <= 2 && f.header.elements == gr.samples, ErrorCode::corrupt_stream, "wavelet group ",
               g, " holds ", f.header.elements, " elements of ", unsigned{f.header.width}, " bytes where ",
               gr.samples, " symbols of 1 or 2 bytes belong");
  SAFETY_CHECK(frame_decodable(f.header), ErrorCode::corrupt_stream, "wavelet group ", g, " embeds a ",
               to_string(f.header.codec), " frame");
  f.payload = nullptr;
  return f;
}

// Every group's embedded frame header. From the host's copy of the frame
// when there is one (the host API); else from the device in two rounds of
// copies into pinned memory, one wait each (fixed headers, then header
// areas), not two waits per group.
std::vector<format::ParsedFrame> read_embedded(const Plan& p, const uint8_t* d_frame, const uint8_t* host_frame,
                                               cudaStream_t stream) {
  const std::vector<wavelet::Group>& groups = p.w.header.groups;
  const std::size_t G = groups.size();
  const uint64_t payload = p.w.frame.header_area_bytes();
  std::vector<format::ParsedFrame> frames(G);
  // The fixed headers give each header area's size. A damaged one is not
  // thrown at once but when its group's turn comes, so that the error is the
  // lowest damaged group's, as the CPU reader reports it.
  std::vector<std::exception_ptr> fixed_error(G);
  auto area_bytes = [&](std::size_t g, const uint8_t* fixed) -> uint64_t {
    try {
      const format::FrameHeader h = format::read_fixed_header(fixed, format::kFixedHeaderBytes,
                                                              p.w.stream_offset + payload + groups[g].frame_offset);
      return std::min<uint64_t>(h.header_area_bytes(), groups[g].frame_bytes);
    } catch (const Error&) {
      fixed_error[g] = std::current_exception();
      return format::kFixedHeaderBytes;  // frame_bytes >= 48 (parse_wavelet_frame)
    }
  };
  auto check = [&](std::size_t g, const uint8_t* area, uint64_t available) {
    if (fixed_error[g]) std::rethrow_exception(fixed_error[g]);
    frames[g] = check_embedded(p, g, area, available);
  };
  if (host_frame) {
    std::vector<uint64_t> available(G);
    uint64_t work = 0;
    for (std::size_t g = 0; g < G; ++g) {
      available[g] = area_bytes(g, host_frame + payload + groups[g].frame_offset);
      work += available[g];
    }
    for_each_group(G, work, [&](std::size_t g) {
      check(g, host_frame + payload + groups[g].frame_offset, available[g]);
    });
    return frames;
  }
  PinnedBuffer<uint8_t> fixed(std::max<std::size_t>(G, 1) * format::kFixedHeaderBytes);
  for (std::size_t g = 0; g < G; ++g)
    CUDA_CHECK(cudaMemcpyAsync(fixed.get() + g * format::kFixedHeaderBytes, d_frame + payload + groups[g].frame_offset,
                               format::kFixedHeaderBytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<uint64_t> at(G + 1, 0);
  for (std::size_t g = 0; g < G; ++g) at[g + 1] = at[g] + area_bytes(g, fixed.get() + g * format::kFixedHeaderBytes);
  PinnedBuffer<uint8_t> areas(std::max<uint64_t>(at[G], 1));
  for (std::size_t g = 0; g < G; ++g)
    CUDA_CHECK(cudaMemcpyAsync(areas.get() + at[g], d_frame + payload + groups[g].frame_offset, at[g + 1] - at[g],
                               cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for_each_group(G, at[G], [&](std::size_t g) { check(g, areas.get() + at[g], at[g + 1] - at[g]); });
  return frames;
}

// The decode plan of the frame at d_frame (`bytes` bytes in device memory);
// `host_frame`, if not null, is the same frame in host memory, from which the
// headers are then read without a copy or a wait.
Plan make_plan(const void* d_frame_v, std::size_t bytes, cudaStream_t stream, const uint8_t* host_frame = nullptr) {
  const auto* d_frame = static_cast<const uint8_t*>(d_frame_v);
  VLEC_REQUIRE(d_frame != nullptr || bytes == 0, "null stream");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(d_frame) % 8 == 0, "the stream must be 8-byte aligned in device memory");
  Plan p;
  std::vector<uint8_t> area;
  const uint8_t* header = host_frame;
  if (!host_frame) read_device(area, d_frame, std::min<std::size_t>(bytes, format::kFixedHeaderBytes), stream);
  const format::FrameHeader fh = format::read_fixed_header(host_frame ? host_frame : area.data(),
                                                           std::min<std::size_t>(bytes, format::kFixedHeaderBytes), 0);
  SAFETY_CHECK(fh.codec == Codec::wavelet, ErrorCode::invalid_argument, "frame at byte 0 is a ",
               to_string(fh.codec), " frame, not a wavelet frame");
  if (!host_frame) {
    read_device(area, d_frame, std::min<uint64_t>(bytes, fh.header_area_bytes()), stream);
    header = area.data();
  }
  // parse_wavelet_frame reads only the header area (it checks `bytes`
  // against the area and the frame size before it would read further).
  p.w = wavelet::parse_wavelet_frame(header, bytes, 0);
  p.w.payload = nullptr;
  p.segmented = p.w.header.segmented_checksum;
  const wavelet::Header& h = p.w.header;
  p.shape = DwtShape{h.image.width, h.image.height, h.image.depth};
  p.pixels = p.shape.samples();
  SAFETY_CHECK(p.shape.nx < kMaxAxis && p.shape.ny < kMaxAxis && p.shape.nz < kMaxAxis, ErrorCode::unavailable,
               "the GPU decodes wavelet frames with axes below 2^30 samples, not ", p.shape.nx, " x ", p.shape.ny,
               " x ", p.shape.nz);

  const wavelet::Subbands sb(p.shape, h.levels);
  const std::size_t G = h.groups.size();
  p.frames = read_embedded(p, d_frame, host_frame, stream);
  uint64_t first = 0;
  for (std::size_t g = 0; g < G; ++g) {
    const wavelet::Group& gr = h.groups[g];
    GroupDesc d;
    d.first = first;
    d.n = gr.samples;
    d.low_bytes = wavelet::low_bits_bytes(gr.samples, gr.shift);
    d.width = p.frames[g].header.width;
    d.shift = gr.shift;
    p.groups.push_back(d);
    uint64_t box_first = first;
    for (const wavelet::Box& b : sb.boxes(gr.spec)) {
      BoxDesc bd;
      bd.first = box_first;
      bd.plane_base = uint64_t{gr.spec.plane} * p.pixels;
      bd.x0 = b.x0, bd.y0 = b.y0, bd.z0 = b.z0, bd.nx = b.nx, bd.ny = b.ny, bd.nz = b.nz;
      bd.group = static_cast<uint32_t>(g);
      p.boxes.push_back(bd);
      box_first += b.samples();
    }
    first += gr.samples;
  }

  // Temp layout (see the file comment for what shares a region).
  Layout& L = p.layout;
  const uint64_t coeff_bytes = 4 * p.w.frame.elements;
  std::size_t symbols_bytes = 0;
  L.symbols.resize(G);
  for (std::size_t g = 0; g < G; ++g) {
    L.symbols[g] = symbols_bytes;
    symbols_bytes += round_up(p.groups[g].n * p.groups[g].width);
  }
  L.dwt_bytes = device::dwt53_temp_bytes(p.shape, h.levels);
  L.hash_bytes = samples_checksum_temp_bytes(p.w.frame.elements * p.w.frame.width, p.segmented);
  std::size_t at = 0;
  auto take = [&](std::size_t n) {
    const std::size_t here = at;
    at += round_up(std::max<std::size_t>(n, 1));
    return here;
  };
  L.status = take(8 * wavelet_gpu::kStatusWords);
  std::size_t upload_bytes = sizeof(GroupDesc) * G + sizeof(BoxDesc) * p.boxes.size(), pieces = 2;
  for (const format::ParsedFrame& f : p.frames) {
    if (rle_path(f.header)) continue;
    upload_bytes += sizeof(ChunkDesc) * f.header.chunks() +
                    (f.header.codec == Codec::huffman ? decode_table_upload_bytes(f.codebooks[0].alphabet_size) : 0);
    pieces += 2;
  }
  L.uploads_bytes = UploadArena::bytes_for(upload_bytes, pieces);
  L.uploads = take(L.uploads_bytes);
  L.coeffs = take(coeff_bytes);
  L.recon = take(std::max<uint64_t>(coeff_bytes, symbols_bytes));
  L.dwt = take(L.dwt_bytes);
  L.hash = take(L.hash_bytes);
  L.batch = take(huffman_decode_batch_bytes(G));
  L.frame_temp.resize(G);
  L.frame_temp_bytes.resize(G);
  for (std::size_t g = 0; g < G; ++g) {
    L.frame_temp_bytes[g] = frame_decode_temp_bytes(p.frames[g]);
    L.frame_temp[g] = take(L.frame_temp_bytes[g]);
  }
  L.total = at;
  return p;
}

// Whether the inverse transform writes the samples straight (one plane in
// the machine's byte order: no colour transform, interleave or byte swap).
bool direct_samples(const wavelet::Header& h) {
  return h.image.planes == 1 && (h.image.dtype == DType::u8 || !h.big_endian);
}

void check_results(const Plan& p, const uint8_t* d_temp, cudaStream_t stream) {
  const wavelet::Header& h = p.w.header;
  // Every group's chunk statuses and the frame's status words, one wait.
  const std::size_t G = p.frames.size();
  std::vector<uint64_t> at(G + 1, 0);
  for (std::size_t g = 0; g < G; ++g) at[g + 1] = at[g] + p.frames[g].header.chunks();
  PinnedBuffer<uint64_t> st_buffer(wavelet_gpu::kStatusWords);
  PinnedBuffer<uint32_t> chunk_status(std::max<uint64_t>(at[G], 1));
  for (std::size_t g = 0; g < G; ++g)
    if (at[g + 1] > at[g])
      CUDA_CHECK(cudaMemcpyAsync(chunk_status.get() + at[g], frame_decode_status(p.frames[g], d_temp + p.layout.frame_temp[g]),
                                 4 * (at[g + 1] - at[g]), cudaMemcpyDeviceToHost, stream));
  uint64_t* st = st_buffer.get();
  CUDA_CHECK(cudaMemcpyAsync(st, d_temp + p.layout.status, 8 * wavelet_gpu::kStatusWords, cudaMemcpyDeviceToHost,
                             stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (std::size_t g = 0; g < G; ++g) check_frame_status(p.frames[g], chunk_status.get() + at[g]);
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

}  // namespace

}  // namespace vlec::cuda

namespace vlec::device {

WaveletImage wavelet_image(const void* d_frame, std::size_t bytes) {
  return cuda::make_plan(d_frame, bytes, nullptr).w.header.image;
}

uint64_t wavelet_decompressed_size(const void* d_frame, std::size_t bytes) {
  return cuda::make_plan(d_frame, bytes, nullptr).w.output_bytes();
}

std::size_t wavelet_decompress_temp_bytes(const void* d_frame, std::size_t bytes) {
  return cuda::make_plan(d_frame, bytes, nullptr).layout.total;
}

namespace {

// The decode of a planned frame (device::wavelet_decompress and the host
// API's decompress_wavelet, which plans from its host copy of the frame).
std::size_t decompress_planned(cuda::Plan& p, const void* d_frame_v, void* d_out_v, std::size_t capacity,
                               void* d_temp_v, std::size_t temp_bytes, cudaStream_t stream) {
  using namespace cuda;
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

  auto host_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  auto phase = [&](unsigned i) {
    if (!wg::phase_events) return;
    CUDA_CHECK(cudaEventRecord(wg::phase_events->events[i], stream));
    if (i == 0) wg::phase_events->host_start_ns = host_ns();
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
  // The host's share (table plans, upload words) on several threads where
  // the codebooks are large; the uploads and launches in group order.
  for_each_group(G, symbols, [&](std::size_t g) {
    if (!rle_path(p.frames[g].header))
      stages[g] = stage_frame_decode(p.frames[g], frame_payload[g], d_temp + L.recon + L.symbols[g],
                                     d_temp + L.frame_temp[g], L.frame_temp_bytes[g]);
  });
  // Every group's chunk descriptors and table build job, and the scatter's
  // group and box descriptors, go up as one copy (UploadArena).
  // (Filling the places on several threads gained nothing measurable for
  // hdr_room16's ~3 MB of table words: its enqueue stayed at 0.51 ms.)
  UploadArena arena(d_temp + L.uploads, L.uploads_bytes);
  for (std::size_t g = 0; g < G; ++g) {
    if (rle_path(p.frames[g].header)) continue;
    StagedFrameDecode& st = stages[g];
    if (st.args.chunk_count)
      st.args.chunks =
          static_cast<const ChunkDesc*>(arena.add(st.descs.data(), st.descs.size() * sizeof(ChunkDesc)));
    if (!st.table.bytes.empty()) st.table.device = arena.add(st.table.bytes.data(), st.table.bytes.size());
    builds.add(std::move(st.table));  // placed: launch_placed() builds it from the arena
    huffman_args[g] = st.args;
  }
  const auto* d_groups = static_cast<const GroupDesc*>(arena.add(p.groups.data(), sizeof(GroupDesc) * G));
  const auto* d_boxes = static_cast<const BoxDesc*>(arena.add(p.boxes.data(), sizeof(BoxDesc) * p.boxes.size()));
  arena.flush(stream);
  builds.launch_placed(stream);
  // The Huffman groups in one launch per kernel shape (or, for comparison,
  // one a group), then the rle groups, round robin over the side streams.
  const bool batched = wg::batched_group_decode;
  const HuffmanDecodeBatch batch =
      batched ? stage_huffman_decode_batch(huffman_args, d_temp + L.batch, huffman_decode_batch_bytes(G), stream, writes)
              : HuffmanDecodeBatch{};
  std::vector<std::size_t> rle_groups, single_groups;
  for (std::size_t g = 0; g < G; ++g)
    (rle_path(p.frames[g].header) ? rle_groups : single_groups).push_back(g);
  if (batched) single_groups.clear();
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
  sa.boxes = d_boxes;
  sa.box_count = static_cast<uint32_t>(p.boxes.size());
  sa.total = p.w.frame.elements;
  sa.width = p.shape.nx;
  sa.height = p.shape.ny;
  sa.coeffs = coeffs;
  sa.status = status;
  wg::launch_scatter(sa, stream);
  phase(2);

  const std::size_t prefix = h.prefix.size();
  const uint64_t sample_bytes = p.w.frame.elements * p.w.frame.width;
  const bool staged = prefix % 16 != 0;
  uint8_t* samples = nullptr;  // 16-byte aligned: the output, or (an odd prefix) temp storage copied there after
  if (cuda::direct_samples(h)) {
    // One plane in the machine's byte order: the inverse transform writes
    // the samples itself, range-checked as it narrows them, and no join pass
    // reads the coefficients back (its i32 planes are free for staging).
    samples = staged ? d_temp + L.recon : d_out + prefix;
    device::dwt53_inverse(coeffs, samples, p.w.frame.width == 1 ? DwtSample::u8 : DwtSample::u16, p.shape, h.levels,
                          reinterpret_cast<uint64_t*>(status + wg::kStatusDwt), d_temp + L.dwt, L.dwt_bytes, stream);
    phase(3);
    if (prefix) CUDA_CHECK(cudaMemcpyAsync(d_out, h.prefix.data(), prefix, cudaMemcpyHostToDevice, stream));
  } else {
    for (unsigned pl = 0; pl < h.image.planes; ++pl)
      device::dwt53_inverse(coeffs + pl * p.pixels, recon + pl * p.pixels, DwtSample::i32, p.shape, h.levels,
                            reinterpret_cast<uint64_t*>(status + wg::kStatusDwt + pl), d_temp + L.dwt, L.dwt_bytes,
                            stream);
    phase(3);
    if (prefix) CUDA_CHECK(cudaMemcpyAsync(d_out, h.prefix.data(), prefix, cudaMemcpyHostToDevice, stream));
    samples = staged ? d_temp + L.coeffs : d_out + prefix;
    wg::JoinArgs ja;
    ja.planes = recon;
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
  CUDA_CHECK(cudaStreamSynchronize(stream));
  check_results(p, d_temp, stream);
  return out_bytes;
}

}  // namespace

std::size_t wavelet_decompress(const void* d_frame, std::size_t bytes, void* d_out, std::size_t capacity,
                               void* d_temp, std::size_t temp_bytes, Stream stream) {
  cuda::Plan p = cuda::make_plan(d_frame, bytes, stream);
  return decompress_planned(p, d_frame, d_out, capacity, d_temp, temp_bytes, stream);
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
    Plan p = make_plan(d_frame.get(), frame_bytes, nullptr, frame);
    SlotBuffer<uint8_t> d_temp(p.layout.total);
    device::decompress_planned(p, d_frame.get(), d_out.get(), std::max<std::size_t>(out_bytes, 16), d_temp.get(),
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
