// cuda/codebook_gpu.hpp: build a Huffman codebook from a histogram that is
// already on the GPU, entirely on the GPU, giving exactly the bytes of the CPU's
// huffman::build_codebook + make_encode_table + serialize_codebook
// (docs/FORMAT.md §4). CUB-style: the caller queries and passes the temporary
// storage; nothing is allocated, everything is enqueued on the caller's
// stream, and the host neither waits nor reads anything back.
//
// Why it is fast: one kernel launch for every capacity. Up to 8,192 symbols,
// one block does it all in shared memory (radix sort of the counts, the
// parallel tree construction of Tian et al.'s generate_cl, see generate_cl.hpp,
// on one warp for up to 1,024 present symbols, see warp_tree.hpp, the length
// policy, canonical codes and serialization); above that, a
// thread-block cluster of up to 8 blocks (sm_90) sorts through distributed
// shared memory, block 0 builds the tree with the node queues streamed
// through shared-memory rings, and all blocks share the O(alphabet) work.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace vlec::cuda {

struct DeviceCodebookOut {
  uint8_t* lengths;        // [alphabet_capacity] code length per symbol (0 = none)
  uint32_t* encode_entry;  // [alphabet_capacity] (length << 24) | bit-reversed code, 0 = none
                           // (as huffman::make_encode_table)
  uint8_t* serialized;     // 4-byte aligned, room for codebook_serialized_capacity(alphabet_capacity)
                           // bytes: the FORMAT §4.1 bytes, zero beyond info[0]
  uint32_t* info;          // [4]: serialized byte size, max_length, alphabet_size, present-symbol count.
                           // info[0] == 0: the fixed length limit cannot hold the present symbols
                           // (where the CPU throws); every other output is then zero.
};

// Bytes of the serialized codebook of any histogram of this capacity (<= 65,536).
std::size_t codebook_serialized_capacity(uint32_t alphabet_capacity);

// Temporary storage build_codebook_device needs (0 for capacities up to 8,192);
// pass it 256-byte aligned (as cudaMalloc returns it). A host-side query.
std::size_t codebook_temp_bytes(uint32_t alphabet_capacity);

// d_hist: [alphabet_capacity] u64 counts on the device (symbols 0..capacity-1).
// length_limit 0 = the automatic policy; otherwise 1..24. The counts must sum
// to less than 2^64 (as the CPU's construction assumes). Capacities above
// 8,192 need compute capability 9.0 (a thread-block cluster). Enqueues on
// `stream`; throws vlec::Error (invalid_argument) for a bad capacity, limit or
// temp size, and (cuda_error) if a launch fails.
void build_codebook_device(const uint64_t* d_hist, uint32_t alphabet_capacity, unsigned length_limit,
                           void* d_temp, std::size_t temp_bytes, const DeviceCodebookOut& out,
                           cudaStream_t stream);

// One codebook of a batch (build_codebooks_device).
struct CodebookJob {
  const uint64_t* hist;   // [capacity] u64 counts on the device
  uint32_t capacity;      // 1..codebook_batch_capacity
  uint32_t length_limit;  // 0 = the automatic policy; otherwise 1..24
  DeviceCodebookOut out;
};
// The largest capacity a batch takes (8,192: one block a codebook).
uint32_t codebook_batch_capacity();
// Device bytes build_codebooks_device needs for `count` jobs' descriptors.
std::size_t codebook_jobs_bytes(std::size_t count);
// Every job's codebook, exactly as build_codebook_device builds it, in one
// launch per block shape (up to four, shape i on streams[i % size]): the
// caller's host thread enqueues a dozen codebooks in a few microseconds
// where a launch each took ~5-10. d_jobs: codebook_jobs_bytes(jobs.size())
// bytes on the device, 16-byte aligned; `upload` copies each shape's
// descriptors there on that shape's stream, before its launch (e.g.
// HostWrites::add_bytes). Throws vlec::Error for a capacity above
// codebook_batch_capacity() or a bad limit, before enqueueing anything.
void build_codebooks_device(
    const std::vector<CodebookJob>& jobs, void* d_jobs, std::size_t jobs_bytes,
    const std::function<void(void* dst, const void* src, std::size_t bytes, cudaStream_t stream)>& upload,
    const std::vector<cudaStream_t>& streams);
// build_codebooks_device for `count` jobs already on the device, written
// there by a kernel (the wavelet writer's, behind its shift rule), whose
// capacities the host does not know: each block shape is launched over all
// of them, a block leaving at once where its job is of another shape, and a
// job of capacity 0 is skipped. The codebooks are build_codebook_device's,
// as in a sorted batch; each job must satisfy build_codebooks_device's
// checks (capacity at most codebook_batch_capacity(), limit at most 24,
// serialized output 4-byte aligned), which the kernel writing them makes.
void build_codebooks_device_unsorted(const CodebookJob* d_jobs, std::size_t count,
                                     const std::vector<cudaStream_t>& streams);
// Diagnostics: while set, every build_codebook_device call has its kernel's
// block 0 record, at the end of each stage (0 start, 1 counts in, 2 sorted,
// 3 leaves ready, 4 tree built, 5 plan shared, 6 lengths placed, 7 done) and
// inside the last two (8 candidates' bits summed, 9 candidate chosen, 10
// codes per length counted, 11 scans done), %globaltimer in d_stamps[stage]
// and clock64 in d_stamps[16 + stage]; for trees built by block tiles (above
// 1,024 present symbols), inside the tree stage, in cycles: d_stamps[32] the
// tiles, [33] the largest of any thread's own tile work summed over the
// tiles, [34] the largest barrier wait so summed, [35] the depths, [36]
// bl_count, [37] the number of tiles, [38] each tile's slowest own work
// summed, [39] thread 0's setup before its merges summed, [31] the largest
// wait for the leaves' copies summed; the sort's first pass, clock64 at
// [40] its start, [41] keys loaded, [42] ranked in the warps, [43] block
// barrier, [44] digit totals, [45] cluster barrier, [46] offsets, [47]
// scattered, [48] cluster barrier; in the ranks' lengths (stage 4), [50] the
// ranks loaded, [51] every candidate's lengths; in the streaming tiles, [52]
// the tiles whose B window was copied from global memory and [53] thread 0's
// cycles in those copies, [54] the pair phases' steps (the warp's tail one)
// and [55] thread 0's cycles in them; [56] the sort's digits: the wide
// sort's passes | width << 8, or else the 8-bit passes << 16 (d_stamps: 64
// u64 on the device).
// nullptr (the default) turns it off.
void set_codebook_profile(uint64_t* d_stamps);

// Diagnostics: whether the cluster's radix sort orders each block's keys in
// shared memory before its cluster-wide scatter (the default) or scatters
// them straight from registers. For timing only.
void set_codebook_staged_sort(bool staged);

// Diagnostics: up to how many present symbols one thread builds the whole
// tree with the two-queue loop (serial_tree.hpp) instead of the
// warp's phases; the default is cl::kSerialAll. For timing only.
void set_codebook_serial_all(uint32_t symbols);

// Diagnostics: the largest pair phase (nodes) from which one warp melds every
// phase left (generate_cl_tiles.hpp, cl_warp_tail; 0: none does); the
// default is cl::kWarpTailNodes. For timing only.
void set_codebook_warp_tail(uint32_t nodes);

// Diagnostics: after how many leaf-node merges in a row the serial loop hands
// the tree to the warp's leaf-node runs (serial_tree.hpp; cl::kNoRuns:
// never); the default is cl::kRunAfter. For timing only.
void set_codebook_leaf_node_runs(uint32_t after);

// Diagnostics: whether alphabets of up to 256 symbols whose counts lie below
// 2^56, and the at most 8,192 present symbols of a wider alphabet whose
// counts lie below 2^48 (gathered into one block: up to 1,024 sorted by the
// network, more by that block's radix sort, then built by its resident
// tiles) are sorted by the bitonic network (codebook_sort.cuh, the default)
// or by the cluster's radix sort of every symbol. For timing and tests.
void set_codebook_sort_network(bool network);

// Diagnostics: whether the cluster's radix sort of packed keys takes digits
// of up to 10 bits where they save a pass (codebook_sort_wide.cuh, the
// default) or 8-bit digits always. For timing and tests.
void set_codebook_wide_digits(bool wide);

// Whether capacities of 1,025 to 2,048 symbols take a 256-thread block of 8
// symbols a thread (44 KiB of shared memory; the default) or the 8,192-symbol
// block (1,024 threads, 176 KiB). The smaller block fits on an SM beside
// another kernel's blocks: the wavelet writer's codebooks are built while its
// symbols kernel runs. For timing and tests.
void set_codebook_mid_block(bool mid);

}  // namespace vlec::cuda
