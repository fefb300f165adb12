// cuda/codebook_gpu.cu: see codebook_gpu.hpp. One kernel launch per codebook,
// or, for many codebooks of up to 8,192 symbols, one per block shape
// (build_codebooks_device: codebook_batch_kernel runs the same body, a block
// a codebook). The wavelet writer's 16-odd codebooks, a launch each from a
// host thread per side stream, started 0.09-0.24 ms after its decisions and
// the last ended after its symbols kernel; batched (a shape a side stream),
// all ended ~0.2 ms after them, before the kernel (H200, session 34).
//
// Where the time went before (H100: 54 / 69 / 188 / 339 us enqueued, 51 / 67 /
// 172 / 306 us as a graph, for 256 / 1,024 / 8,192 / 65,536 symbols with 22 /
// 24 / 27 / 30 phases; counted from the code and ptxas/SASS):
//   launches   1 kernel up to 1,024 symbols; above: iota, CUB onesweep on
//              64-bit keys (2 memsets, histogram, exclusive sum, then 8 x
//              (memset + onesweep): 20 stream operations for 4-8 significant
//              bytes), generate_cl, policy, count, generate_cw: 25 in all, each
//              ~1.5-3 us of launch latency on a dependent stream.
//   phases     per tile: a window copy (shared->shared, or global->shared with
//              an L2 round trip of ~1 k cycles on the large path), 2
//              __syncthreads, and EVERY thread (256 or 1,024) running two
//              lockstep binary searches (count of leaves <= t, merge path)
//              over the whole 1,024/4,096 window: ~10-12 dependent steps of
//              three scattered 8-byte shared loads, 8-36 k loads a tile that
//              keep the shared pipe busy 1-3.5 k cycles, where a Laplace
//              phase melds a few dozen (256 symbols) to a few thousand nodes.
//              ~0.6-1 us a phase on one block (22 x), ~3 us a tile on the
//              large path (28 tiles at 8,192, 47 at 65,536): the bulk.
//   depths     1 __syncthreads per phase.
//   limiter    4 candidates on lanes 0-3 of one warp (divergent, so one after
//              another), each with 128-entry scans, a 128-step local-memory
//              accumulation and u64 divisions.
// Now (one launch; S = symbols per block; phases and tiles for the timing
// histogram: 22/24/27/30 phases, 22/24/27/47 tiles, 0 copied windows):
//   layout     <= 1,024 symbols: 256 threads, everything in shared memory;
//              <= 2,048: 256 threads of 8 symbols (44 KiB; session 32: at
//              1,661 symbols 54.8 us against 74.0 for the 8,192 block, H200,
//              and it fits beside another kernel's blocks);
//              <= 8,192: one 1,024-thread block, everything in shared memory
//              (176 KiB); above: a cluster of ceil(cap/8,192) <= 8 blocks of
//              1,024 threads (224 KiB each, distributed shared memory).
//   sort       8-bit LSD radix in shared memory, ceil(bits/8) passes for the
//              largest count's actual width (3 below 2^24, 8 at most): per
//              pass a rank per warp by ballots, a scan over the warps
//              per digit, cluster-wide digit offsets (2 cluster barriers) and
//              a scatter. In a cluster each block first puts its keys in
//              their final order in shared memory, so that its scatter
//              through distributed shared memory writes runs of consecutive
//              slots, not 8 random remote stores a thread
//              (set_codebook_staged_sort switches back, for timing). A rank
//              by counting (each of 256 threads against every key) was
//              measured slower than 3 radix passes at 256 symbols (9.8 k
//              against 4.3 k cycles). Session 11, 65,536 symbols (Laplace):
//              the rank by MATCH.ANY took ~15 k cycles a pass where counts
//              are diverse (its cost grows with the distinct digits in the
//              warp), by ballots ~7.5 k on any data (sort 94.7 k -> 85 k
//              cycles), and a warp of one digit (absent symbols) by one
//              vote: ballots alone made sparse real histograms slower
//              (quant65536 124 -> 128-144 us), with the vote 121 us;
//              counts below 2^48 packed with their symbols (one remote
//              store a key) 85 k -> 76 k. Session 29: where digits of up
//              to 10 bits save a pass (counts of 9-10, 17-20, 25-30, 33-40
//              or 41-48 bits), the cluster sorts packed keys by them
//              (codebook_sort_wide.cuh): uniformly random counts below 2^20
//              in two passes of ~30 k cycles instead of three of ~25 k, sort
//              ~79 k -> ~68 k cycles, the build 204.0-205.2 -> 198.6-199.5
//              us as a graph (H200).
//   tree       up to kWarpTreeMax (1,024) present symbols, resident: ONE warp
//              (warp_tree.hpp), GenerateCL's phases under __syncwarp, each
//              phase from one register window of 32 leaves and 32 nodes, 32
//              merged nodes a round (ballots and shuffles, no data-dependent
//              branch per node), in 32-bit weights when the counts total
//              below 2^32; depths by pointer jumping over the whole block.
//              Measured on the H100 (clock64): the two-queue loop on one
//              thread took ~190 cycles a merge with a branch per pick (48 k
//              cycles at 256 symbols), ~135 branch-free (serial_tree: 42-44
//              k cycles with the depths); a warp round of up to 32 merged nodes ~850 cycles
//              and a phase's own steps ~800, all latency of one warp's
//              dependent instructions (~5 cycles each): 27.8 k cycles for the
//              Laplace 256 (22 phases). Skewed trees (a pair or two a phase)
//              are cheaper serially, so that loop does trees of up to 128
//              symbols and finishes the skewed tails (warp_tree.hpp's
//              hand_to_serial).
//   phases     above (block tiles, generate_cl.hpp): ONE __syncthreads per
//              tile, no window copy, no global round trip: resident
//              leaves/nodes, or (cluster) a leaf ring refilled with cp.async
//              one tile ahead and a node ring in shared memory (a tile whose
//              internal queue outgrew the ring copies its window from global
//              memory: 0 times for the timing histogram, <= 12 for uniform
//              random 65,536). Only threads whose nodes can be <= t search
//              (one load tells the rest), a branch-free halving merge-path
//              search, two-deep register heads for the meld. A tile is bound
//              by each thread's chain of dependent shared-memory loads (~12
//              halving steps, ~57 % of its work), which the block's 32 warps
//              overlap: a thread's own tile work is ~3.8 k cycles with 4 warps
//              an SM as with 32 (session 11, the tiles spread over the
//              cluster: not kept), and halving (two loads a step) took the
//              tiles 272 k -> 249 k cycles at 65,536 against a 4-ary search
//              (six loads and a three-way branch a round; ~3.2 k -> 2.9 k
//              cycles a tile resident at 8,192). Fewer threads with longer
//              melds (16 or 32 nodes a thread) were slower (a meld step ~330
//              cycles); so were a warp's 32-probe search and split samples
//              bracketing each thread's (a serial stage before the searches).
//              Session 12: the cluster's rings in planes of 32-bit words, and
//              a tile whose threshold is below 2^32 - 1 reads low words alone
//              (half the bank wavefronts a load: tiles 247 k -> 217 k cycles
//              at 65,536, Laplace).
//   depths     none per node (session 12; a depth pass of one barrier a phase
//              and a pass over every node's leaf children took 35 k cycles
//              at 65,536): warp 0 finds the depths' bounds by 32-ary searches
//              over the parents and bl_count from them (generate_cl_counts.hpp,
//              ~22 k), meanwhile the other warps copy block 0's ranks back
//              into shared memory for the post stage. The resident path below
//              kWarpTreeMax keeps pointer jumping (warp_tree.hpp).
//   limiter    candidate c on warp c, length l on lane l: the counts above the
//              limit and the Kraft sum by shuffles, bound[] by a warp scan;
//              the Kraft loop (limit_excess_counts) on the warp's registers
//              too (session 12: it ran on lane 0 over shared memory, ~5 k
//              cycles for the 11-bit candidate of a Laplace 256).
//   post       lengths of a run of ranks per thread by two searches per
//              candidate; canonical codes and serialization of ITEMS tiles in
//              two barriers (a scan over ITEMS x warps per length), not two
//              per tile; all of it spread over the cluster's blocks.
// The kernel is in codebook_kernel.cuh (stages and resources there), its sort
// in codebook_sort.cuh, what the stages share in codebook_layout.cuh; this file
// holds the host side: the launch shapes by alphabet capacity, the temporary
// storage and the diagnostics switches.
#include "cuda/codebook_gpu.hpp"

#include <atomic>
#include <utility>

#include "cuda/codebook_kernel.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/generate_cl.hpp"
#include "huffman/codebook.hpp"

namespace vlec::cuda {

static_assert(cl::kAutoLimitSlack == huffman::kAutoLimitSlack && cl::kMaxLen == huffman::kMaxCodeLength,
              "the GPU builder's automatic length limit is the CPU's");

namespace {

// ---- the host side --------------------------------------------------------------

int current_device() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// Per kernel: the dynamic shared memory attribute, set once per device
// (kBatch: codebook_batch_kernel's).
template <int NT, int ITEMS, bool kCluster, bool kBatch = false>
void allow_smem() {
  static std::atomic<uint64_t> done{0};
  const int device = current_device();
  const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
  if (bit && (done.load(std::memory_order_relaxed) & bit)) return;
  if (kCluster) {
    int major = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    VLEC_REQUIRE(major >= 9, "the GPU codebook builder needs compute capability 9.0 for alphabets above ",
                 kBlockCapacity, " symbols");
  }
  if constexpr (kBatch)
    CUDA_CHECK(cudaFuncSetAttribute(codebook_batch_kernel<NT, ITEMS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(Smem<NT, ITEMS, false>::total)));
  else
    CUDA_CHECK(cudaFuncSetAttribute(codebook_kernel<NT, ITEMS, kCluster>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(Smem<NT, ITEMS, kCluster>::total)));
  done.fetch_or(bit);
}

// Carving of the temporary storage (cluster kernel), 256-byte aligned pieces.
struct TempLayout {
  std::size_t keys, ranked, inner, parent, rank_of, total;
};

TempLayout temp_layout(uint32_t cap) {
  TempLayout L{};
  auto take = [&](std::size_t bytes) { return std::exchange(L.total, L.total + (bytes + 255) / 256 * 256); };
  L.keys = take(8 * std::size_t{cap});
  L.ranked = take(2 * std::size_t{cap});
  L.inner = take(8 * std::size_t{cap});
  L.parent = take(2 * std::size_t{cap});
  L.rank_of = take(2 * std::size_t{cap});
  return L;
}

std::atomic<uint64_t*> g_stamps{nullptr};
std::atomic<uint32_t> g_staged_sort{1};
std::atomic<uint32_t> g_serial_all{cl::kSerialAll};
std::atomic<uint32_t> g_warp_tail{cl::kWarpTailNodes};
std::atomic<uint32_t> g_run_after{cl::kRunAfter};
std::atomic<uint32_t> g_sort_network{1};
std::atomic<uint32_t> g_wide_digits{1};
std::atomic<bool> g_mid_block{true};

template <int NT, int ITEMS>
void launch_single(const uint64_t* d_hist, uint32_t cap, unsigned limit, const DeviceCodebookOut& out,
                   cudaStream_t stream) {
  allow_smem<NT, ITEMS, false>();
  codebook_kernel<NT, ITEMS, false><<<1, NT, Smem<NT, ITEMS, false>::total, stream>>>(d_hist, cap, limit, out, Temp{},
                                                                                      g_stamps.load(), g_staged_sort.load(),
                                                                                      g_serial_all.load(),
                                                                                      g_warp_tail.load(),
                                                                                      g_run_after.load(),
                                                                                      g_sort_network.load(),
                                                                                      g_wide_digits.load());
  CUDA_CHECK(cudaGetLastError());
}

// shape -1: every job is of this launch's shape; else the grid covers
// jobs of every shape and takes those of `shape` alone.
template <int NT, int ITEMS>
void launch_batch(const CodebookJob* d_jobs, std::size_t count, cudaStream_t stream, int shape = -1) {
  if (count == 0) return;
  allow_smem<NT, ITEMS, false, true>();
  codebook_batch_kernel<NT, ITEMS><<<static_cast<unsigned>(count), NT, Smem<NT, ITEMS, false>::total, stream>>>(
      d_jobs, shape, g_mid_block.load() ? 1u : 0u, g_staged_sort.load(), g_serial_all.load(), g_warp_tail.load(),
      g_run_after.load(), g_sort_network.load(), g_wide_digits.load());
  CUDA_CHECK(cudaGetLastError());
}

unsigned batch_class(uint32_t cap) { return batch_class_of(cap, g_mid_block.load()); }

// Block shape c's launch over `count` jobs (shape as launch_batch's).
void launch_shape(unsigned c, const CodebookJob* d_jobs, std::size_t count, cudaStream_t stream, int shape = -1) {
  if (c == 0) launch_batch<256, 1>(d_jobs, count, stream, shape);
  if (c == 1) launch_batch<256, 4>(d_jobs, count, stream, shape);
  if (c == 2) launch_batch<256, 8>(d_jobs, count, stream, shape);
  if (c == 3) launch_batch<1024, 8>(d_jobs, count, stream, shape);
}

}  // namespace

uint32_t codebook_batch_capacity() { return kBlockCapacity; }

std::size_t codebook_jobs_bytes(std::size_t count) { return (count * sizeof(CodebookJob) + 15) / 16 * 16; }

void build_codebooks_device(
    const std::vector<CodebookJob>& jobs, void* d_jobs, std::size_t jobs_bytes,
    const std::function<void(void* dst, const void* src, std::size_t bytes, cudaStream_t stream)>& upload,
    const std::vector<cudaStream_t>& streams) {
  if (jobs.empty()) return;
  VLEC_REQUIRE(!streams.empty(), "a batch of codebooks needs a stream");
  VLEC_REQUIRE(jobs.size() <= INT32_MAX && jobs_bytes >= codebook_jobs_bytes(jobs.size()) &&
                   reinterpret_cast<uintptr_t>(d_jobs) % 16 == 0,
               "a batch of ", jobs.size(), " codebooks needs ", codebook_jobs_bytes(jobs.size()),
               " bytes of descriptors, 16-byte aligned");
  for (const CodebookJob& j : jobs) {  // every job checked before anything is enqueued
    VLEC_REQUIRE(j.hist != nullptr && j.capacity >= 1 && j.capacity <= kBlockCapacity, "a batched codebook of ",
                 j.capacity, " symbols (1 to ", kBlockCapacity, ")");
    VLEC_REQUIRE(j.length_limit <= kMaxLen, "code length limit ", j.length_limit,
                 " is above the format's maximum of ", kMaxLen);
    VLEC_REQUIRE(reinterpret_cast<uintptr_t>(j.out.serialized) % 4 == 0, "serialized output must be 4-byte aligned");
  }
  // The jobs ordered by block shape, so that each shape's launch takes a run of them.
  std::vector<CodebookJob> ordered;
  ordered.reserve(jobs.size());
  std::size_t count[4] = {};
  for (unsigned c = 0; c < 4; ++c)
    for (const CodebookJob& j : jobs)
      if (batch_class(j.capacity) == c) ordered.push_back(j), ++count[c];
  CodebookJob* const d = static_cast<CodebookJob*>(d_jobs);
  std::size_t first = 0;
  unsigned shape = 0;  // the shapes with jobs, numbered for their streams
  for (unsigned c = 0; c < 4; first += count[c], ++c) {
    if (count[c] == 0) continue;
    const cudaStream_t stream = streams[shape++ % streams.size()];
    upload(d + first, ordered.data() + first, count[c] * sizeof(CodebookJob), stream);
    launch_shape(c, d + first, count[c], stream);
  }
}

void build_codebooks_device_unsorted(const CodebookJob* d_jobs, std::size_t count,
                                     const std::vector<cudaStream_t>& streams) {
  if (count == 0) return;
  VLEC_REQUIRE(!streams.empty(), "a batch of codebooks needs a stream");
  VLEC_REQUIRE(count <= INT32_MAX && reinterpret_cast<uintptr_t>(d_jobs) % 16 == 0, "a batch of ", count,
               " codebooks' descriptors, 16-byte aligned");
  // The shape of up to 2,048 symbols only where build_codebook_device takes it.
  const bool mid = g_mid_block.load();
  unsigned shape = 0;
  for (unsigned c = 0; c < 4; ++c) {
    if (c == 2 && !mid) continue;
    launch_shape(c, d_jobs, count, streams[shape++ % streams.size()], static_cast<int>(c));
  }
}

std::size_t codebook_serialized_capacity(uint32_t alphabet_capacity) { return serialized_capacity(alphabet_capacity); }

std::size_t codebook_temp_bytes(uint32_t alphabet_capacity) {
  VLEC_REQUIRE(alphabet_capacity <= kMaxCapacity, "alphabet capacity ", alphabet_capacity, " exceeds ", kMaxCapacity);
  return alphabet_capacity <= kBlockCapacity ? 0 : temp_layout(alphabet_capacity).total;
}

void set_codebook_profile(uint64_t* d_stamps) { g_stamps.store(d_stamps); }

void set_codebook_staged_sort(bool staged) { g_staged_sort.store(staged ? 1 : 0); }

void set_codebook_serial_all(uint32_t symbols) { g_serial_all.store(symbols); }

void set_codebook_warp_tail(uint32_t nodes) { g_warp_tail.store(nodes); }

void set_codebook_leaf_node_runs(uint32_t after) { g_run_after.store(after); }

void set_codebook_sort_network(bool network) { g_sort_network.store(network ? 1 : 0); }

void set_codebook_wide_digits(bool wide) { g_wide_digits.store(wide ? 1 : 0); }

void set_codebook_mid_block(bool mid) { g_mid_block.store(mid); }

void build_codebook_device(const uint64_t* d_hist, uint32_t cap, unsigned length_limit, void* d_temp,
                           std::size_t temp_bytes, const DeviceCodebookOut& out, cudaStream_t stream) {
  VLEC_REQUIRE(cap <= kMaxCapacity, "alphabet capacity ", cap, " exceeds ", kMaxCapacity);
  VLEC_REQUIRE(length_limit <= kMaxLen, "code length limit ", length_limit, " is above the format's maximum of ",
               kMaxLen);
  VLEC_REQUIRE(reinterpret_cast<uintptr_t>(out.serialized) % 4 == 0, "serialized output must be 4-byte aligned");
  if (cap <= 256) return launch_single<256, 1>(d_hist, cap, length_limit, out, stream);
  if (cap <= kSmallCapacity) return launch_single<256, 4>(d_hist, cap, length_limit, out, stream);
  if (cap <= kMidCapacity && g_mid_block.load()) return launch_single<256, 8>(d_hist, cap, length_limit, out, stream);
  if (cap <= kBlockCapacity) return launch_single<1024, 8>(d_hist, cap, length_limit, out, stream);
  const TempLayout L = temp_layout(cap);
  VLEC_REQUIRE(d_temp != nullptr && temp_bytes >= L.total, "codebook temporary storage of ", temp_bytes,
               " bytes is smaller than the ", L.total, " needed");
  unsigned char* t = static_cast<unsigned char*>(d_temp);
  const Temp tmp{reinterpret_cast<uint64_t*>(t + L.keys), reinterpret_cast<uint16_t*>(t + L.ranked),
                 reinterpret_cast<uint64_t*>(t + L.inner), reinterpret_cast<uint16_t*>(t + L.parent),
                 reinterpret_cast<uint16_t*>(t + L.rank_of)};
  allow_smem<1024, 8, true>();
  const uint32_t blocks = (cap + kBlockCapacity - 1) / kBlockCapacity;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(1024);
  cfg.dynamicSmemBytes = Smem<1024, 8, true>::total;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = blocks;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, codebook_kernel<1024, 8, true>, d_hist, cap, static_cast<uint32_t>(length_limit),
                                out, tmp, g_stamps.load(), g_staged_sort.load(), g_serial_all.load(),
                                g_warp_tail.load(), g_run_after.load(), g_sort_network.load(),
                                g_wide_digits.load()));
}

}  // namespace vlec::cuda
