// cuda/generate_cl.hpp: the logic of the GPU codebook builder that must equal
// the CPU's (huffman/codebook.cpp) bit for bit, written once as plain
// __host__ __device__ functions. The kernels of codebook_gpu.cu call them
// between their __syncthreads; generate_cl_host() (generate_cl_host.hpp) calls
// the same functions in the same order, with loops standing in for the
// threads, and checks every shared-memory slot it reads and writes, so the CPU
// tests (tests/test_generate_cl.cpp, suite GenerateCl) prove the GPU's tree
// node by node against the two-queue construction, and prove that no thread of
// a tile reads a slot another thread of the same tile writes.
//
// This header gathers the parts, so that the kernels, warp_tree.hpp and the
// tests include one file:
//   generate_cl_base.hpp   the limits and the saturating sum every part uses
//   generate_cl_tiles.hpp  GenerateCL's phases in tiles (the algorithm and its
//                          proof)
//   generate_cl_counts.hpp bl_count from the tree: the depths' bounds
//   codebook_limit.hpp     length limiting, lengths of ranks, the candidate choice
//   codebook_codes.hpp     canonical codes (GenerateCW) and the serialized layout
//   generate_cl_block.cuh  generate_cl_block: one thread block runs the tiles (nvcc)
//   generate_cl_host.hpp   generate_cl_host: the same steps emulated and checked
//                          (host compilers: the tests)
#pragma once

#include "cuda/codebook_codes.hpp"
#include "cuda/codebook_limit.hpp"
#include "cuda/generate_cl_base.hpp"
#include "cuda/generate_cl_block.cuh"
#include "cuda/generate_cl_counts.hpp"
#include "cuda/generate_cl_host.hpp"
#include "cuda/generate_cl_tiles.hpp"
