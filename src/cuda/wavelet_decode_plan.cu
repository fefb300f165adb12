// cuda/wavelet_decode_plan.cu: see wavelet_decode_plan.hpp.
#include "cuda/wavelet_decode_plan.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "common/bits.hpp"
#include "common/parallel.hpp"
#include "common/safety.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/frame_decode.hpp"
#include "cuda/host_staging.hpp"
#include "cuda/decode_tables_gpu.hpp"
#include "cuda/huffman_decode.hpp"
#include "cuda/wavelet_checksum.hpp"
#include "cuda/wavelet_header_gather.hpp"
#include "wavelet/coefficients.hpp"
#include "wavelet/encode_plan.hpp"
#include "wavelet/samples_checksum.hpp"

namespace vlec::cuda::wavelet_decode {

namespace {

// Host copy of `bytes` device bytes at `src` into pinned memory (a pooled
// buffer: a pageable copy cost more on the caller's stream), on the caller's
// stream (so it follows whatever the caller enqueued before), waited for.
const uint8_t* read_device(PinnedBuffer<uint8_t>& dst, const uint8_t* src, std::size_t bytes, cudaStream_t stream) {
  dst.resize(bytes);
  if (bytes == 0) return dst.get();
  CUDA_CHECK(cudaMemcpyAsync(dst.get(), src, bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return dst.get();
}

// The benchmark's clock inside the plan (PhaseEvents::plan_mark_ns).
void plan_mark(unsigned i) {
  if (wavelet_gpu::PhaseEvents* ev = wavelet_gpu::phase_events)
    ev->plan_mark_ns[i] = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count();
}

// The plan's first read from the device (make_plan): 4 KiB, a wavelet
// header area of up to ~120 groups.
constexpr std::size_t kFirstRead = 4096;

// Device-to-host copies of pieces of the frame into `dst` (piece i: bytes
// [src_at[i], src_at[i] + sizes[i]) of d_frame to dst + dst_at[i]), on the
// stream, as one cudaMemcpyBatchAsync where `batched` (copy_pieces).
void read_pieces(uint8_t* dst, const uint8_t* d_frame, const std::vector<uint64_t>& dst_at,
                 const std::vector<uint64_t>& src_at, const std::vector<std::size_t>& sizes, cudaStream_t stream,
                 bool batched) {
  std::vector<void*> dsts(sizes.size());
  std::vector<const void*> srcs(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) dsts[i] = dst + dst_at[i], srcs[i] = d_frame + src_at[i];
  copy_pieces(dsts, srcs, sizes, stream, batched);
}

}  // namespace

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

namespace {

// The checks of wavelet/decode.cpp's embedded_frame() on group g's header
// area (`area`, `available` bytes of it at hand).
format::ParsedFrame check_embedded(const Plan& p, std::size_t g, const uint8_t* area, std::size_t available) {
  const wavelet::Group& gr = p.w.header.groups[g];
  const uint64_t where = p.w.stream_offset + p.w.frame.header_area_bytes() + gr.frame_offset;
  // A Huffman group's codes are derived on the GPU from its lengths (decode_tables_gpu.cu).
  format::ParsedFrame f = format::parse_frame_header(area, available, gr.frame_bytes, where, /*huffman_codes=*/false);
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

// Round 1's read of a group's embedded frame (read_embedded): the header area
// of a Huffman frame of the vlec writer's 16,384-element chunks with up to
// 2 KiB of codebooks (every 8-bit group's; a 16-bit group's of a few
// thousand symbols). A group whose area is larger is read again whole in
// round 2; a guess too large only copies more.
uint64_t guess_area(const wavelet::Group& gr) {
  const uint64_t chunks = (gr.samples + wavelet::kEmbeddedChunkElements - 1) / wavelet::kEmbeddedChunkElements;
  constexpr uint64_t kCodebooks = 2048;
  return round_up(format::kFixedHeaderBytes + kCodebooks + chunks * format::kIndexEntryBytes) + format::kChecksumBytes;
}

// Every group's embedded frame header. From the host's copy of the frame
// when there is one (the host API); else from the device in one round of
// copies into pinned memory (and a second for the groups whose areas the
// first did not hold), one wait each, not two waits per group.
std::vector<format::ParsedFrame> read_embedded(const Plan& p, const uint8_t* d_frame, const uint8_t* host_frame,
                                               const GatheredHeaders* gathered, cudaStream_t stream) {
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
  if (host_frame) {  // (no reads: their marks at once)
    plan_mark(2);
    plan_mark(3);
    std::vector<uint64_t> available(G);
    uint64_t work = 0;
    for (std::size_t g = 0; g < G; ++g) {
      available[g] = area_bytes(g, host_frame + payload + groups[g].frame_offset);
      work += available[g];
    }
    for_each_group(G, work, [&](std::size_t g) {
      check(g, host_frame + payload + groups[g].frame_offset, available[g]);
    });
    plan_mark(4);
    return frames;
  }
  // Round 1: each group's fixed header and, speculatively, as much of its
  // header area as a frame of the vlec writer's chunks with small codebooks
  // has (guess_area): most groups' whole areas, in the one round. Or, where
  // the gather kernel took every group's piece from where this parse puts
  // its frame (and at least its fixed header), those pieces, with no round.
  std::vector<uint64_t> dst_at(G), src_at(G), got(G), area(G);
  std::vector<const uint8_t*> round1(G);
  std::vector<std::size_t> sizes(G);
  for (std::size_t g = 0; g < G; ++g) src_at[g] = payload + groups[g].frame_offset;
  bool use_gathered = gathered && gathered->pieces.size() == G;
  for (std::size_t g = 0; use_gathered && g < G; ++g) {
    const GatheredHeaders::Piece& piece = gathered->pieces[g];
    use_gathered = piece.src == src_at[g] && piece.bytes >= format::kFixedHeaderBytes;
  }
  PinnedBuffer<uint8_t> first;
  if (use_gathered) {
    for (std::size_t g = 0; g < G; ++g) got[g] = gathered->pieces[g].bytes, round1[g] = gathered->pieces[g].data;
  } else {
    uint64_t total = 0;
    for (std::size_t g = 0; g < G; ++g) {
      got[g] = wavelet_gpu::speculative_header_reads ? guess_area(groups[g]) : format::kFixedHeaderBytes;
      got[g] = std::min<uint64_t>(got[g], groups[g].frame_bytes);  // >= 48 (parse_wavelet_frame)
      dst_at[g] = total;
      sizes[g] = got[g];
      total += round_up(got[g]);
    }
    first.resize(std::max<uint64_t>(total, 1));
    read_pieces(first.get(), d_frame, dst_at, src_at, sizes, stream, wavelet_gpu::batched_header_reads);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t g = 0; g < G; ++g) round1[g] = first.get() + dst_at[g];
  }
  plan_mark(2);
  // Round 2, only for the groups whose header area is larger than round 1 read.
  std::vector<const uint8_t*> where(G);
  std::vector<uint64_t> second_at(G, 0);
  uint64_t second = 0, work = 0;
  for (std::size_t g = 0; g < G; ++g) {
    area[g] = area_bytes(g, round1[g]);
    work += area[g];
    sizes[g] = area[g] > got[g] ? area[g] : 0;
    second_at[g] = second;
    second += round_up(sizes[g]);
  }
  PinnedBuffer<uint8_t> rest;
  if (second) {
    rest.resize(second);
    read_pieces(rest.get(), d_frame, second_at, src_at, sizes, stream,
                wavelet_gpu::batched_header_reads && wavelet_gpu::batched_area_reads);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  plan_mark(3);
  for (std::size_t g = 0; g < G; ++g) where[g] = sizes[g] ? rest.get() + second_at[g] : round1[g];
  for_each_group(G, work, [&](std::size_t g) { check(g, where[g], area[g]); });
  plan_mark(4);
  return frames;
}

}  // namespace

// The decode plan of the frame at d_frame (`bytes` bytes in device memory);
// `host_frame`, if not null, is the same frame in host memory, from which the
// headers are then read without a copy or a wait.
Plan make_plan(const void* d_frame_v, std::size_t bytes, cudaStream_t stream, const uint8_t* host_frame) {
  const auto* d_frame = static_cast<const uint8_t*>(d_frame_v);
  VLEC_REQUIRE(d_frame != nullptr || bytes == 0, "null stream");
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(d_frame) % 8 == 0, "the stream must be 8-byte aligned in device memory");
  Plan p;
  // From the device: the first kFirstRead bytes at once, which hold the
  // header area of most frames (the fixed and wavelet headers and a group
  // table of 32 bytes a group), then the rest of a larger area.
  // Or all in one round trip: the gather kernel's copy of the first 4 KiB
  // and of each group's embedded header area (wavelet_header_gather.hpp).
  PinnedBuffer<uint8_t> area;
  GatheredHeaders gathered;
  bool use_gathered = false;
  const uint8_t* header = host_frame;
  std::size_t at_hand = bytes;
  if (!host_frame && wavelet_gpu::gathered_header_reads && wavelet_gpu::speculative_header_reads &&
      gather_headers(d_frame, bytes, stream, gathered)) {
    use_gathered = true;
    header = gathered.top, at_hand = gathered.top_bytes;
  } else if (!host_frame) {
    at_hand = wavelet_gpu::speculative_header_reads ? std::min<std::size_t>(bytes, kFirstRead)
                                                    : std::min<std::size_t>(bytes, format::kFixedHeaderBytes);
    header = read_device(area, d_frame, at_hand, stream);
  }
  const format::FrameHeader fh =
      format::read_fixed_header(header, std::min<std::size_t>(at_hand, format::kFixedHeaderBytes), 0);
  SAFETY_CHECK(fh.codec == Codec::wavelet, ErrorCode::invalid_argument, "frame at byte 0 is a ",
               to_string(fh.codec), " frame, not a wavelet frame");
  const uint64_t area_bytes = std::min<uint64_t>(bytes, fh.header_area_bytes());
  if (!host_frame && area_bytes > at_hand) header = read_device(area, d_frame, area_bytes, stream);
  plan_mark(0);
  // parse_wavelet_frame reads only the header area (it checks `bytes`
  // against the area and the frame size before it would read further).
  p.w = wavelet::parse_wavelet_frame(header, bytes, 0);
  p.w.payload = nullptr;
  plan_mark(1);
  p.segmented = p.w.header.segmented_checksum;
  const wavelet::Header& h = p.w.header;
  p.shape = DwtShape{h.image.width, h.image.height, h.image.depth};
  p.pixels = p.shape.samples();
  SAFETY_CHECK(p.shape.nx < kMaxAxis && p.shape.ny < kMaxAxis && p.shape.nz < kMaxAxis, ErrorCode::unavailable,
               "the GPU decodes wavelet frames with axes below 2^30 samples, not ", p.shape.nx, " x ", p.shape.ny,
               " x ", p.shape.nz);

  const wavelet::Subbands sb(p.shape, h.levels);
  const std::size_t G = h.groups.size();
  p.frames = read_embedded(p, d_frame, host_frame, use_gathered ? &gathered : nullptr, stream);
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
      bd.index0 = box_first - first;
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
    upload_bytes += frame_decode_descs_bytes(f) + frame_decode_table_bytes(f);  // (the decode's slots)
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

}  // namespace vlec::cuda::wavelet_decode
