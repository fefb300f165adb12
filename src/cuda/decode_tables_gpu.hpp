// cuda/decode_tables_gpu.hpp: the GPU Huffman decoder's tables
// (huffman/gpu_tables.hpp) built on the GPU, one block per codebook, many
// codebooks in one launch.
//
// Why: building them on the host cost ~40-70 us per codebook (the pair table
// alone is 8,192 entries of two lookups), uploading them 5 copies and ~40 KB
// per codebook. A wavelet frame embeds one codebook per group (9-23 for a
// photograph), so its GPU decode spent most of its time on the host. Now the
// host uploads one byte per symbol (its code length: the canonical codes
// follow from the lengths, and the block derives them) and a descriptor,
// and decides only what the launch needs (huffman::plan_gpu_decode_tables:
// K, pairs, long codes, sizes); the tables are equal, entry for entry, to
// make_gpu_decode_tables' (tests/test_gpu_decode_tables.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/huffman_decode.hpp"
#include "huffman/codebook.hpp"
#include "huffman/gpu_tables.hpp"

namespace vlec::cuda {

class HostWrites;

// Where one codebook's tables go (device; sizes as frame_decode.cu carves them).
struct DecodeTableRegions {
  uint32_t* single;   // 2^gpu_single_bits entries
  uint32_t* sub;      // sub_entries
  void* pair;         // 2^gpu_pair_bits entries of 4 (u8) or 8 bytes
  uint32_t* sorted;   // coded_symbols
  uint32_t* canon;    // 3 x kCanonSlots
  void* upload;       // decode_table_upload_bytes(alphabet) bytes, for the codebook itself
};

// Device bytes the upload of a codebook of `alphabet` symbols takes.
std::size_t decode_table_upload_bytes(uint32_t alphabet);

// One codebook's build, staged on the host: its job and code lengths, for
// the device address they go to. Staging makes no CUDA call, so callers may
// stage many codebooks on several threads.
struct StagedTableBuild {
  void* device = nullptr;     // where the job and its symbols go
  std::vector<uint8_t> bytes;  // the job, then the alphabet's code lengths (a byte each, padded to 16)
  bool placed = false;         // written straight to the caller's upload memory (bytes empty)
};

// A piece of a caller's upload memory: `bytes` bytes at `host` (pinned)
// that reach `device` (UploadArena::reserve).
struct HostSlot {
  uint8_t* host = nullptr;
  void* device = nullptr;
  std::size_t bytes = 0;
};

// Collects codebooks, then builds all their tables with one launch.
class DecodeTableBuilds {
 public:
  // The staging of `book`'s tables for `width`-byte symbols into `to`, and
  // (in `view`) the decoder's view of them (valid once launch() has run on
  // the stream the decoder uses, or one it waits for). `plan` is
  // plan_gpu_decode_tables(book, width). An empty book stages nothing
  // (bytes empty) and leaves `view` empty.
  // With `into` (decode_table_upload_bytes of the alphabet), the job and
  // lengths are written there, not to `bytes`, for launch_placed().
  static StagedTableBuild stage(const huffman::Codebook& book, unsigned width, const huffman::GpuTablePlan& plan,
                                const DecodeTableRegions& to, DeviceDecodeTable& view, const HostSlot& into = {});
  // Add a staged build to the batch (an empty one is ignored).
  void add(StagedTableBuild&& staged);
  // stage() and add() in one.
  DeviceDecodeTable add(const huffman::Codebook& book, unsigned width, const huffman::GpuTablePlan& plan,
                        const DecodeTableRegions& to);
  // Upload every staged codebook on `stream` (through `writes` if given,
  // else from pageable memory) and enqueue the builds. Clears the batch.
  void launch(cudaStream_t stream, HostWrites* writes = nullptr);
  // Or, for jobs whose bytes the caller uploaded itself to their `device`
  // address (the wavelet decoder's UploadArena): enqueue the builds only.
  void launch_placed(cudaStream_t stream);
  bool empty() const { return jobs_.empty(); }

 private:
  std::vector<StagedTableBuild> jobs_;
};

}  // namespace vlec::cuda
