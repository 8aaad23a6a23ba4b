// Your file, part 1 of 4: stages 1-5 of the scan lab (README.md, "Stages, in order").
//   cpu                             exclusive_scan_cpu
//   naive                           exclusive_scan_naive
//   work-efficient                  exclusive_scan_work_efficient
//   work-efficient-compact-threads  exclusive_scan_work_efficient_compact_threads
//   shared                          exclusive_scan_shared
//   shared-conflict-free            exclusive_scan_shared_conflict_free
// Replace each gpulab::not_implemented(...) with your code; the interface is scan.cuh.
// Build and check one stage:  ./build/default/gpulab run scan --impl student --stage naive
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "scan.cuh"

namespace scan {

// ---- 1. cpu ---------------------------------------------------------------------------------------
void exclusive_scan_cpu(const int* in, int* out, std::size_t n) {
  // One loop. Keep the running sum in a std::uint32_t: it wraps modulo 2^32 like the GPU does,
  // while a signed int overflow is undefined behaviour (the full-range inputs overflow).
  // Note that out[i] is written *before* in[i] is added: that is what makes the scan exclusive.
  (void)in, (void)out, (void)n;
  gpulab::not_implemented("cpu");
}

// ---- 2. naive: Hillis-Steele, ceil(log2 n) launches (seed 003) ------------------------------------
//
// Suggested kernels (write them above the function that launches them):
//   __global__ void naive_first_step(const int* in, int* out, std::size_t n);
//       out[i] = in[i-1] + in[i-2] (missing terms are 0): the shift by one makes it exclusive
//   __global__ void naive_step(const int* in, int* out, std::size_t n, std::size_t offset);
//       out[i] = in[i] + (i >= offset ? in[i - offset] : 0)
void exclusive_scan_naive(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  // - n == 0: return. Steps: max(1, gpulab::ceil_log2(n)), with offsets 1, 2, 4, ...
  // - A step must not read what another thread of the same step writes: ping-pong between two
  //   buffers, d_out and ws.take(n). Choose the first target so that the last step lands in d_out.
  // - Block size: ws.config.block; grid: gpulab::ceil_div(n, block). Index with std::size_t: n may reach 2^28
  //   and blockIdx.x * blockDim.x overflows int long before 2^32 threads.
  // - GPULAB_CHECK_LAUNCH() after every <<<...>>>.
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("naive");
}

// ---- 3. work-efficient: Blelloch up-sweep / down-sweep in global memory (seed 003) ---------------
//
// The tree needs a power of two m = 2^L >= n elements (L = max(1, gpulab::ceil_log2(n))): take it from
// ws.take(m) and treat the elements past n as 0. At level s (stride 2^s) the pairs are
// (left, right) = (right - 2^s, (2k + 2) 2^s - 1).
//   up-sweep,   s = 0 .. L-1:  tree[right] += tree[left]
//   clear the root:            tree[m - 1] = 0
//   down-sweep, s = L-1 .. 0:  t = tree[left]; tree[left] = tree[right]; tree[right] += t
// then copy the first n elements to d_out.
// Suggested kernels:
//   __global__ void up_level(const int* in, int* tree, std::size_t n, std::size_t m, std::size_t stride);
//   __global__ void down_level(int* tree, int* out, std::size_t n, std::size_t m, std::size_t stride);
// Fold the copy-in into the first up-sweep level, the clear into the last, and the copy-out into
// the last down-sweep level, and the whole scan is exactly 2L launches (the model's count).
void exclusive_scan_work_efficient(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  // This version launches one thread per element at every level, as seed 003 does: thread i works
  // only when it is a right child at this level, i.e. (i + 1) % 2^(s+1) == 0.
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("work-efficient");
}

void exclusive_scan_work_efficient_compact_threads(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  // Same tree, but launch only m / 2^(s+1) threads at level s; thread k computes its own pair.
  // Compare the two in the block-sweep and size-sweep: which costs are gone now, which remain?
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("work-efficient-compact-threads");
}

// ---- 4./5. shared: one Blelloch tree per block in shared memory, block sums scanned recursively ---
//
// A block of B = ws.config.block threads scans 2B elements in dynamic shared memory
// (kernel<<<blocks, B, bytes>>> and an unsized `extern __shared__` array), writes its total to a block-sums
// array and its exclusive scan to out. Scan the block sums with the same function (recursion
// ends when one block suffices), then add block k's scanned sum to all 2B elements of block k.
// Suggested kernels:
//   template <bool kPadded> __global__ void block_scan(const int* in, int* out, std::size_t n, int* block_sums);
//   __global__ void add_block_offsets(int* out, std::size_t n, const int* scanned_sums);
// The model's launches: 2 per level of the recursion, 1 at the top (RESULTS.md, "The model's launch counts").
void exclusive_scan_shared(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  // Thread t loads elements t and t + B (coalesced). __syncthreads() between tree levels.
  // block_sums may be taken with ws.take(blocks) at each level; in == out is fine for the sums
  // if a block reads all of its elements before it writes any.
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("shared");
}

void exclusive_scan_shared_conflict_free(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  // The same kernel with every shared index i replaced by i + offset(i). Seed 003's
  // CONFLICT_FREE_OFFSET macro is wrong (RESULTS.md, "The bank model"): work out the right
  // offset with the bank model, then check it with Nsight Compute (README.md,
  // "Debugging and pitfalls"): this stage must show 0 excess shared wavefronts. Remember to allocate the
  // padded size of shared memory.
  (void)d_in, (void)d_out, (void)n, (void)ws;
  gpulab::not_implemented("shared-conflict-free");
}

}  // namespace scan
