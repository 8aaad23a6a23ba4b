// Your file, part 1 of 5: the network itself, one launch per (merge level, stride).
//   cpu          sort_cpu           std::sort on the host (the oracle)
//   cpu-network  sort_cpu_network   seed 002 Algorithm 1 on the host, with the pad's orientation
//   phase0       sort_phase0        one compare-exchange per thread in global memory (002 §III-A)
//   phase1       sort_phase1        the same launches, each block's pairs staged through shared
//                                   memory (002 §III-B)
// Replace each gpulab::not_implemented(...) with your code; the interface is bitonic.cuh. Put what
// several files share in bitonic_device.cuh: phases 2-4 run phase 0's kernel for their strides >= T.
#include <cuda_runtime.h>

#include "bitonic.cuh"
#include "bitonic_device.cuh"
#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"

namespace bitonic {

// ---- 1. the CPU stages ------------------------------------------------------------------------------------

// The n keys ascending. The standard library is allowed here: this is the oracle.
void sort_cpu(const std::int32_t* in, std::int32_t* out, std::size_t n) {
  (void)in, (void)out, (void)n;
  gpulab::not_implemented("cpu");
}

// Seed 002 Algorithm 1 on the host: for every merge level s = 1..L (merge size k = 2^s), every
// stride j = k/2, ..., 1, every key i with l = i ^ j > i: order (i, l), ascending iff (i & k) == 0.
// Run it exactly as your GPU stages will, one (level, stride) after the other; it is where you
// check the orientation before you write a kernel.
//   config.pad == Pad::sentinel  sort a padded copy of 2^L keys, kSentinel past n; copy back n.
//   config.pad == Pad::virtual_inf  no copy and no index >= n touched. Run sentinel padding with a
//     key larger than every int32 on a small n first and watch where it goes: the alternating
//     network carries it below n. Make every merge ascending instead: the first stride of a
//     level then compares i with its mirror i ^ (k - 1) in the k-block, the others with i ^ j.
//     Why is a comparator whose upper key is >= n now a no-op that you may skip?
void sort_cpu_network(const std::int32_t* in, std::int32_t* out, std::size_t n, const SortConfig& config) {
  (void)in, (void)out, (void)n, (void)config;
  gpulab::not_implemented("cpu-network");
}

// ---- 2. phase0: one launch per (level, stride) --------------------------------------------------------------
//
// Every stride is a global barrier, so a launch: L(L+1)/2 of them (300 at 2^24). Thread p orders
// pair p of the stride: which index is its lower key (insert a 0 bit at position e into p)? The
// launches chain through one buffer, and none is extra (bitonic.cuh, "the launch contract"): the
// first reads d_in and treats an index >= n as kSentinel, the last writes d_out below n only, the
// others work in place -- in d_out, or (pad = sentinel, n not a power of two) in a padded copy of
// 2^L keys from ws.take<std::int32_t>(...). n == 1 still needs one launch: d_out is poisoned.
// Use 64-bit indices: 2^L keys can exceed 2^31.
void sort_phase0(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("phase0");
}

// ---- 3. phase1: the same launches through shared memory ---------------------------------------------------------
//
// Seed 002 §III-B copies each pair into shared memory before comparing it and measured 4 % more
// time. Stage a block's 2 x block keys with coalesced loads (for a stride >= the block's pairs,
// they are two runs of contiguous keys), order the pairs in shared memory, write them back. Count
// what this adds to phase 0: bytes? barriers? bank conflicts (the bank model: gpulab experiment
// bitonic bank-model)? It is the write-up's first question.
void sort_phase1(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("phase1");
}

}  // namespace bitonic
