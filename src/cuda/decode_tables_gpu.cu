// cuda/decode_tables_gpu.cu: see decode_tables_gpu.hpp. One block of 512
// threads builds one codebook's tables; every table is filled by index, not
// by symbol, so the work is the table's size spread evenly over the block
// (a 1-bit code does not leave one thread filling 1,024 entries).
//
// The construction is huffman/decode.cpp's make_decode_table and
// huffman/gpu_tables.cpp's make_gpu_decode_tables, step for step, from the
// code lengths alone (one byte a symbol uploaded; the canonical codes are
// the lengths' stable order, so they need not cross PCIe):
//   1. `sorted`, the symbols by (length, symbol): a stable counting sort,
//      each thread counting the lengths of 128 consecutive symbols at most,
//      a scan of those counts over the threads per length (one warp a
//      length), then each thread placing its symbols; the canonical
//      First/Entry arrays from the totals. Position i of length l holds the
//      code first[l] + i - offset[l], MSB first;
//   2. for every single-table index the longest code longer than the table
//      that starts there (shared-memory atomics over the long positions);
//   3. the CPU single table in shared memory: index j (MSB first) holds the
//      code of length l <= single_bits whose l bits are j's top bits (found
//      among the lengths' canonical ranges), else kSingleLong when a longer
//      code starts there;
//   4. the second-level offsets (a block scan over the indexes, in index
//      order as on the host) and the second-level entries;
//   5. the GPU single table (long entries pointing into the second level)
//      and the pair table, both repeated to their fixed widths.
#include "cuda/decode_tables_gpu.hpp"

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstring>

#include "cuda/cuda_check.hpp"
#include "cuda/launch_cache.hpp"
#include "cuda/host_staging.hpp"
#include "huffman/chunk_codec.hpp"

namespace vlec::cuda {

namespace {

constexpr unsigned kThreads = 512;
constexpr unsigned kMaxSingleBits = 13;                         // K = 1
constexpr unsigned kScanItems = (1u << kMaxSingleBits) / kThreads;  // 16
constexpr unsigned kJobsPerLaunch = 256;
constexpr std::size_t kSharedBytes = 2 * (std::size_t{4} << kMaxSingleBits);  // single + longest/long_info
static_assert((huffman::kMaxCodeLength + 1) * kThreads * 4 <= kSharedBytes, "the sort's counts fit the tables' memory");
static_assert(huffman::kMaxAlphabet <= kThreads * 128, "a thread counts at most 128 symbols");

// One codebook's build, as uploaded (followed by `alphabet` bytes, the
// symbols' code lengths, in the same upload).
struct TableJob {
  uint32_t alphabet;
  uint32_t max_length, single_bits, gpu_single_bits, pair_bits, gpu_pair_bits, width, second_level;
  uint32_t* single;
  uint32_t* sub;
  void* pair;
  uint32_t* sorted;
  uint32_t* canon;
};
constexpr std::size_t kJobBytes = (sizeof(TableJob) + 15) / 16 * 16;

struct JobList {
  const TableJob* jobs[kJobsPerLaunch];
};

// The single entry of a code of length <= avail at index v, or 0 (decode.cpp's `known`).
__device__ __forceinline__ uint32_t known(const uint32_t* single, uint32_t mask, uint32_t v, unsigned avail) {
  const uint32_t e = single[v & mask];
  const unsigned l = e >> 16;
  return (e & huffman::kSingleLong) || l == 0 || l > avail ? 0 : e;
}

template <typename E, unsigned W>
__device__ void fill_pairs(const TableJob& j, const uint32_t* single, uint32_t mask) {
  const unsigned pb = j.pair_bits;
  const uint32_t pair_mask = (1u << pb) - 1;
  const uint32_t sym_mask = (1u << W) - 1;
  constexpr E kSlow = E{1} << (2 * W + 7);
  E* out = static_cast<E*>(j.pair);
  for (uint32_t i = threadIdx.x; i < (1u << j.gpu_pair_bits); i += kThreads) {
    const uint32_t v = i & pair_mask;
    const uint32_t e1 = known(single, mask, v, pb);
    const uint32_t l1 = e1 >> 16;
    const uint32_t e2 = e1 ? known(single, mask, v >> l1, pb - l1) : 0;
    const E s1 = e1 & sym_mask, s2 = e2 & sym_mask;
    out[i] = e2 ? s1 | s2 << W | E{l1 + (e2 >> 16)} << (2 * W) : kSlow | s1 | E{l1} << (2 * W);
  }
}

// The length of the code at position i of `sorted` (at least lo, at most
// L): the canonical layout of step 1, where length l holds [offset[l],
// offset[l + 1]).
__device__ __forceinline__ uint32_t length_at(const uint32_t* offset, unsigned lo, unsigned L, uint32_t i) {
  unsigned l = lo;
  while (l < L && offset[l + 1] <= i) ++l;
  return l;
}

__global__ void __launch_bounds__(kThreads) build_decode_tables_kernel(const JobList list) {
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage scan_temp;
  __shared__ uint32_t count[32], first[32], offset[32], bound[32], coded;
  extern __shared__ uint32_t s_tables[];
  const TableJob j = *list.jobs[blockIdx.x];
  const uint8_t* lengths = reinterpret_cast<const uint8_t*>(list.jobs[blockIdx.x]) + kJobBytes;
  const unsigned sb = j.single_bits, L = j.max_length;
  const uint32_t S = 1u << sb, mask = S - 1;
  uint32_t* single = s_tables;                            // the CPU single table
  uint32_t* longest = s_tables + (1u << kMaxSingleBits);  // then the second-level info
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  // 1. The stable counting sort by length. Thread t's symbols are
  // [t * per, (t + 1) * per); place[l][t] counts, then positions, its
  // symbols of length l (the tables' shared memory, free until step 2).
  const uint32_t per = (j.alphabet + kThreads - 1) / kThreads;  // <= 128
  uint32_t* place = s_tables;                                    // [L + 1][kThreads]
  for (uint32_t i = t; i < (L + 1) * kThreads; i += kThreads) place[i] = 0;
  __syncthreads();
  const uint32_t begin = min(t * per, j.alphabet), end = min(begin + per, j.alphabet);
  for (uint32_t s = begin; s < end; ++s) ++place[lengths[s] * kThreads + t];
  __syncthreads();
  // Exclusive scan of place[l][0..kThreads) for every length, a warp a
  // length: a lane sums 16 consecutive threads' counts, the warp scans the
  // lane sums, the lane writes its threads' starts.
  for (unsigned l = 1 + warp; l <= L; l += kThreads / 32) {
    // (16-byte accesses: a lane's 16 words as 4, where word accesses 16
    // apart met 16-way bank conflicts.)
    uint4* row = reinterpret_cast<uint4*>(place + l * kThreads) + lane * 4;
    uint32_t c[16];
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) {
      const uint4 v = row[q];
      c[4 * q] = v.x, c[4 * q + 1] = v.y, c[4 * q + 2] = v.z, c[4 * q + 3] = v.w;
    }
    uint32_t sum = 0;
#pragma unroll
    for (unsigned k = 0; k < 16; ++k) sum += c[k];
    uint32_t inclusive = sum;
    for (unsigned d = 1; d < 32; d <<= 1) {
      const uint32_t v = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
      if (lane >= d) inclusive += v;
    }
    uint32_t at = inclusive - sum;
#pragma unroll
    for (unsigned k = 0; k < 16; ++k) {
      const uint32_t here = at;
      at += c[k];
      c[k] = here;
    }
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) row[q] = make_uint4(c[4 * q], c[4 * q + 1], c[4 * q + 2], c[4 * q + 3]);
    if (lane == 31) count[l] = inclusive;
  }
  __syncthreads();
  // The canonical arrays (slots above L stay zero, as on the host).
  if (t == 0) {
    uint32_t code = 0, index = 0;
    count[0] = 0;
    first[0] = offset[0] = 0;
    for (unsigned l = 1; l < 32; ++l) {
      if (l <= L) {
        code = (code + (l > 1 ? count[l - 1] : 0)) << 1;
        first[l] = code;
        offset[l] = index;
        index += count[l];
        if (l <= sb) bound[l] = (code + count[l]) << (sb - l);
      } else {
        count[l] = first[l] = offset[l] = 0;
      }
    }
    coded = index;
  }
  __syncthreads();
  if (t < kCanonSlots) {
    j.canon[t] = first[t];
    j.canon[kCanonSlots + t] = count[t];
    j.canon[2 * kCanonSlots + t] = offset[t];
  }
  for (uint32_t s = begin; s < end; ++s) {
    const unsigned l = lengths[s];
    if (l) j.sorted[offset[l] + place[l * kThreads + t]++] = s;
  }
  __syncthreads();  // `place` is done with (the tables' memory); `sorted` is read back below
  // 2. The longest long code at each single index, from the long positions.
  for (uint32_t i = t; i < S; i += kThreads) longest[i] = 0;
  __syncthreads();
  const uint32_t long_first = L > sb ? offset[sb + 1] : coded;  // the long codes' positions: [long_first, coded)
  // The code (LSB first) at long position i, of length l.
  auto long_code = [&](uint32_t i, unsigned l) { return __brev(first[l] + i - offset[l]) >> (32 - l); };
  for (uint32_t i = long_first + t; i < coded; i += kThreads) {
    const unsigned l = length_at(offset, sb + 1, L, i);
    atomicMax(&longest[long_code(i, l) & mask], l);
  }
  __syncthreads();
  // 3. The CPU single table, by index, consecutive indexes across a warp's
  // lanes, so that its stores and the `longest` reads fall on distinct banks
  // (taken by MSB-first prefix, as before, 32 consecutive prefixes
  // bit-reverse to indexes 2^(sb - 5) apart: one bank, 32-way conflicts,
  // ~80 % of the kernel's shared-memory wavefronts by Nsight Compute). The
  // canonical ranges end at bound[l] (length l's codes shifted to sb bits,
  // non-decreasing in l), so prefix jj holds a code of length 1 + (the
  // number of bounds <= jj) if that is at most short_max: found without a
  // load, and a thread's symbol loads are in flight together. (Searched
  // length by length, a shared load each, this step took ~32 k cycles for
  // a 13-bit table; the whole kernel 58 k -> 29 k cycles, H100, clock64.)
  const unsigned short_max = min(L, sb);
  uint32_t bounds[kMaxSingleBits];
#pragma unroll
  for (unsigned l = 1; l <= kMaxSingleBits; ++l) bounds[l - 1] = l <= short_max ? bound[l] : ~0u;
  uint32_t found_len[kScanItems], found_at[kScanItems];  // kScanItems: a thread's share of the 2^13 indexes
#pragma unroll
  for (unsigned k = 0; k < kScanItems; ++k) {
    const uint32_t index = t + k * kThreads;
    const uint32_t jj = __brev(index) >> (32 - sb);  // the MSB-first prefix of LSB-first index `index`
    unsigned l = 1;
#pragma unroll
    for (unsigned b = 0; b < kMaxSingleBits; ++b) l += bounds[b] <= jj;
    found_len[k] = found_at[k] = 0;
    if (index < S && l <= short_max) {
      found_len[k] = l;
      found_at[k] = offset[l] + (jj >> (sb - l)) - first[l];
    }
  }
  uint32_t symbol[kScanItems];
#pragma unroll
  for (unsigned k = 0; k < kScanItems; ++k) symbol[k] = found_len[k] ? __ldcg(j.sorted + found_at[k]) : 0;
#pragma unroll
  for (unsigned k = 0; k < kScanItems; ++k) {
    const uint32_t index = t + k * kThreads;
    if (index < S)
      single[index] = found_len[k] ? symbol[k] | found_len[k] << 16 : longest[index] ? huffman::kSingleLong : 0;
  }
  // 4. Second-level offsets, in index order: an exclusive scan of 2^(longest - sb).
  // (A thread's 16 consecutive entries as four 16-byte accesses, here and
  // below: word accesses 16 apart met 16-way bank conflicts. S is a power
  // of two, so a thread's entries are all below it or all above once S >= 16.)
  uint32_t items[kScanItems], m[kScanItems];
  uint4* mine = reinterpret_cast<uint4*>(longest) + t * (kScanItems / 4);
  const bool whole = (t + 1) * kScanItems <= S;
  if (whole) {
#pragma unroll
    for (unsigned q = 0; q < kScanItems / 4; ++q) {
      const uint4 v = mine[q];
      m[4 * q] = v.x, m[4 * q + 1] = v.y, m[4 * q + 2] = v.z, m[4 * q + 3] = v.w;
    }
  } else {
#pragma unroll
    for (unsigned k = 0; k < kScanItems; ++k) m[k] = t * kScanItems + k < S ? longest[t * kScanItems + k] : 0;
  }
#pragma unroll
  for (unsigned k = 0; k < kScanItems; ++k) items[k] = m[k] ? 1u << (m[k] - sb) : 0;
  Scan(scan_temp).ExclusiveSum(items, items);
  __syncthreads();  // every `longest` read before it is overwritten
#pragma unroll
  for (unsigned k = 0; k < kScanItems; ++k) items[k] = m[k] && j.second_level ? items[k] << 5 | (m[k] - sb) : 0;
  if (whole) {  // now long_info
#pragma unroll
    for (unsigned q = 0; q < kScanItems / 4; ++q)
      mine[q] = make_uint4(items[4 * q], items[4 * q + 1], items[4 * q + 2], items[4 * q + 3]);
  } else {
#pragma unroll
    for (unsigned k = 0; k < kScanItems; ++k)
      if (t * kScanItems + k < S) longest[t * kScanItems + k] = items[k];
  }
  __syncthreads();
  if (j.second_level)
    for (uint32_t i = long_first + t; i < coded; i += kThreads) {
      const unsigned l = length_at(offset, sb + 1, L, i);
      const uint32_t code = long_code(i, l);
      const uint32_t s = __ldcg(j.sorted + i);
      const uint32_t info = longest[code & mask];
      const unsigned sub_bits = info & 31;
      const uint32_t rest = code >> sb;
      for (uint32_t hi = 0; hi < (1u << (sub_bits - (l - sb))); ++hi)
        j.sub[(info >> 5) + (rest | hi << (l - sb))] = s | l << 16;
    }
  // 5. The GPU single table and the pair table, repeated to their widths.
  for (uint32_t i = t; i < (1u << j.gpu_single_bits); i += kThreads) {
    const uint32_t e = single[i & mask];
    j.single[i] = e == huffman::kSingleLong ? huffman::kGpuLong | longest[i & mask] : e;
  }
  if (j.pair_bits) {
    if (j.width == 1)
      fill_pairs<uint32_t, 8>(j, single, mask);
    else
      fill_pairs<uint64_t, 16>(j, single, mask);
  }
}

}  // namespace

std::size_t decode_table_upload_bytes(uint32_t alphabet) { return kJobBytes + (std::size_t{alphabet} + 15) / 16 * 16; }

StagedTableBuild DecodeTableBuilds::stage(const huffman::Codebook& book, unsigned width,
                                          const huffman::GpuTablePlan& plan, const DecodeTableRegions& to,
                                          DeviceDecodeTable& d, const HostSlot& into) {
  d = DeviceDecodeTable{};
  StagedTableBuild st;
  if (book.empty()) return st;
  VLEC_REQUIRE(plan.single_bits <= kMaxSingleBits && book.alphabet_size <= huffman::kMaxAlphabet,
               "a codebook the GPU table builder does not take");
  TableJob job{};
  job.alphabet = book.alphabet_size;
  job.max_length = plan.max_length;
  job.single_bits = plan.single_bits;
  job.gpu_single_bits = plan.gpu_single_bits;
  job.pair_bits = plan.use_pairs ? plan.pair_bits : 0;
  job.gpu_pair_bits = plan.gpu_pair_bits;
  job.width = width;
  job.second_level = plan.second_level;
  job.single = to.single;
  job.sub = to.sub;
  job.pair = to.pair;
  job.sorted = to.sorted;
  job.canon = to.canon;
  const std::size_t upload = decode_table_upload_bytes(book.alphabet_size);
  uint8_t* bytes = nullptr;
  if (into.host) {
    VLEC_REQUIRE(into.bytes >= upload, "decode table upload slot of ", into.bytes, " bytes is below ", upload);
    st.device = into.device;
    st.placed = true;
    bytes = into.host;
    std::memset(bytes + sizeof job, 0, kJobBytes - sizeof job);  // (the padding, as the vector's)
    std::memset(bytes + kJobBytes + book.alphabet_size, 0, upload - kJobBytes - book.alphabet_size);
  } else {
    st.device = to.upload;
    st.bytes.resize(upload);
    bytes = st.bytes.data();
  }
  std::memcpy(bytes, &job, sizeof job);
  std::memcpy(bytes + kJobBytes, book.lengths.data(), book.alphabet_size);  // the codes follow from them

  d.single = to.single;
  d.sub = to.sub;
  d.pair = plan.use_pairs ? to.pair : nullptr;
  d.sorted = to.sorted;
  d.canon = to.canon;
  d.single_bits = plan.gpu_single_bits;
  d.pair_bits = plan.use_pairs ? plan.gpu_pair_bits : 0;
  d.max_length = plan.max_length;
  d.sub_entries = plan.second_level ? static_cast<uint32_t>(plan.sub_entries) : 0;
  d.use_pairs = plan.use_pairs;
  return st;
}

void DecodeTableBuilds::add(StagedTableBuild&& staged) {
  if (!staged.bytes.empty() || staged.placed) jobs_.push_back(std::move(staged));
}

DeviceDecodeTable DecodeTableBuilds::add(const huffman::Codebook& book, unsigned width,
                                         const huffman::GpuTablePlan& plan, const DecodeTableRegions& to) {
  DeviceDecodeTable d;
  add(stage(book, width, plan, to, d));
  return d;
}

void DecodeTableBuilds::launch(cudaStream_t stream, HostWrites* writes) {
  if (jobs_.empty()) return;
  for (StagedTableBuild& st : jobs_) {
    VLEC_REQUIRE(!st.placed, "a table build placed in the caller's upload memory goes through launch_placed");
    if (writes)
      writes->add(st.device, st.bytes, stream);
    else
      CUDA_CHECK(cudaMemcpyAsync(st.device, st.bytes.data(), st.bytes.size(), cudaMemcpyHostToDevice, stream));
  }
  launch_placed(stream);
}

void DecodeTableBuilds::launch_placed(cudaStream_t stream) {
  if (jobs_.empty()) return;
  // Once per device (the attribute belongs to the current device).
  set_attribute_once(build_decode_tables_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                     static_cast<int>(kSharedBytes));
  for (std::size_t at = 0; at < jobs_.size(); at += kJobsPerLaunch) {
    JobList list{};
    const std::size_t n = std::min<std::size_t>(kJobsPerLaunch, jobs_.size() - at);
    for (std::size_t i = 0; i < n; ++i) list.jobs[i] = static_cast<const TableJob*>(jobs_[at + i].device);
    build_decode_tables_kernel<<<static_cast<unsigned>(n), kThreads, kSharedBytes, stream>>>(list);
    CUDA_CHECK(cudaGetLastError());
  }
  // Copies from pageable memory return once their data is staged, so the batch may go.
  jobs_.clear();
}

}  // namespace vlec::cuda
