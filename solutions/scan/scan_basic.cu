// Reference: stages 1-5 of the scan lab. The CPU scan, and the three classic GPU scans of seed
// 003 (naive Hillis-Steele, Blelloch's work-efficient tree in global memory, the same tree in
// shared memory with and without the padding that removes bank conflicts).
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "scan.cuh"

namespace scan {

// The kit's integer helpers by their short names, in this file only: the interface leaves them in
// gpulab:: (gpulab/math.hpp) so that a submission may define helpers of its own by these names.
using gpulab::ceil_div;
using gpulab::ceil_log2;

// ---- 1. CPU -------------------------------------------------------------------------------------

void exclusive_scan_cpu(const int* in, int* out, std::size_t n) {
  // Unsigned arithmetic wraps modulo 2^32 exactly like the GPU's adder; signed overflow would be UB.
  std::uint32_t running = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t x = static_cast<std::uint32_t>(in[i]);
    out[i] = static_cast<int>(running);
    running += x;
  }
}

namespace {

unsigned grid_for(std::size_t threads, int block) {
  return static_cast<unsigned>(ceil_div(threads, static_cast<std::size_t>(block)));
}

__device__ __forceinline__ std::size_t global_thread_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// ---- 2. naive: Hillis-Steele, one launch per doubling of the offset (seed 003) ----------------

// The first step reads the input shifted right by one (x[i] = in[i-1], x[0] = 0: that shift is
// what makes the result exclusive) and adds the neighbour at distance 1, so that it costs no
// extra launch.
__global__ void naive_first_step(const int* __restrict__ in, int* __restrict__ out, std::size_t n) {
  const std::size_t i = global_thread_index();
  if (i >= n) return;
  const int here = i >= 1 ? in[i - 1] : 0;
  const int left = i >= 2 ? in[i - 2] : 0;
  out[i] = here + left;
}

// out[i] = in[i] + in[i - offset]: after the steps with offsets 1, 2, ..., 2^(k-1) element i
// holds the sum of the 2^k elements ending at i. Every step reads and writes all n elements:
// O(n log n) work and 3 n log n words of traffic, against the 2n a scan needs.
__global__ void naive_step(const int* __restrict__ in, int* __restrict__ out, std::size_t n, std::size_t offset) {
  const std::size_t i = global_thread_index();
  if (i >= n) return;
  out[i] = i >= offset ? in[i] + in[i - offset] : in[i];
}

}  // namespace

void exclusive_scan_naive(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  const int block = ws.config.block;
  const int steps = std::max(1, ceil_log2(n));
  int* other = ws.take(n);
  // Ping-pong between out and the scratch buffer, starting where the last step lands in out.
  auto target = [&](int step) { return (steps - 1 - step) % 2 == 0 ? d_out : other; };
  naive_first_step<<<grid_for(n, block), block>>>(d_in, target(0), n);
  GPULAB_CHECK_LAUNCH();
  for (int step = 1; step < steps; ++step) {
    naive_step<<<grid_for(n, block), block>>>(target(step - 1), target(step), n, std::size_t{1} << step);
    GPULAB_CHECK_LAUNCH();
  }
}

// ---- 3. work-efficient: Blelloch's up-sweep / down-sweep in global memory (seed 003) ------------
//
// The tree lives in a scratch array of m = 2^L elements (L = ceil(log2 n), at least 1), padded
// with zeros. Level s (stride 2^s) pairs left = right - 2^s with right = (2k + 2) 2^s - 1.
// Two ways to map threads to pairs:
//   kAllThreads = true:  one thread per element at every level; only the right children work
//                        (seed 003's version: the grid never shrinks, most warps idle)
//   kAllThreads = false: exactly m / 2^(s+1) threads, thread k works on pair k
// The first up-sweep level also copies the input in, the last one writes 0 at the root instead
// of the total (the exclusive scan's identity), and the last down-sweep level writes to out:
// 2L launches in all and no separate copy or clear.

template <bool kAllThreads>
__device__ bool pair_of_thread(std::size_t m, std::size_t stride, std::size_t& left, std::size_t& right) {
  const std::size_t i = global_thread_index();
  if constexpr (kAllThreads) {
    if (i >= m || ((i + 1) & (2 * stride - 1)) != 0) return false;
    right = i;
  } else {
    if (i >= m / (2 * stride)) return false;
    right = (2 * i + 2) * stride - 1;
  }
  left = right - stride;
  return true;
}

template <bool kAllThreads>
__global__ void blelloch_up_level(const int* __restrict__ in, int* tree, std::size_t n, std::size_t m,
                                  std::size_t stride) {
  std::size_t left, right;
  if (!pair_of_thread<kAllThreads>(m, stride, left, right)) return;
  int sum;
  if (stride == 1) {
    const int a = left < n ? in[left] : 0;
    const int b = right < n ? in[right] : 0;
    tree[left] = a;
    sum = a + b;
  } else {
    sum = tree[left] + tree[right];
  }
  tree[right] = 2 * stride == m ? 0 : sum;
}

template <bool kAllThreads>
__global__ void blelloch_down_level(int* tree, int* __restrict__ out, std::size_t n, std::size_t m,
                                    std::size_t stride) {
  std::size_t left, right;
  if (!pair_of_thread<kAllThreads>(m, stride, left, right)) return;
  const int l = tree[left];
  const int r = tree[right];
  if (stride == 1) {
    if (left < n) out[left] = r;
    if (right < n) out[right] = r + l;
  } else {
    tree[left] = r;
    tree[right] = r + l;
  }
}

namespace {

template <bool kAllThreads>
void blelloch_global(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  const int block = ws.config.block;
  const int levels = std::max(1, ceil_log2(n));
  const std::size_t m = std::size_t{1} << levels;
  int* tree = ws.take(m);
  auto threads = [&](std::size_t stride) { return kAllThreads ? m : m / (2 * stride); };
  for (int s = 0; s < levels; ++s) {
    const std::size_t stride = std::size_t{1} << s;
    blelloch_up_level<kAllThreads><<<grid_for(threads(stride), block), block>>>(d_in, tree, n, m, stride);
    GPULAB_CHECK_LAUNCH();
  }
  for (int s = levels - 1; s >= 0; --s) {
    const std::size_t stride = std::size_t{1} << s;
    blelloch_down_level<kAllThreads><<<grid_for(threads(stride), block), block>>>(tree, d_out, n, m, stride);
    GPULAB_CHECK_LAUNCH();
  }
}

}  // namespace

void exclusive_scan_work_efficient(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  blelloch_global<true>(d_in, d_out, n, ws);
}

void exclusive_scan_work_efficient_compact_threads(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  blelloch_global<false>(d_in, d_out, n, ws);
}

// ---- 4./5. shared: the Blelloch tree of one block in shared memory, block sums scanned recursively

namespace {

// Shared-memory slot of tree index i. Without padding, the up-sweep at stride s makes the lanes
// of a warp touch words 2s apart: a min(2s, 32)-way conflict. One pad word after every 32 words
// shifts each row of seed 000's bank matrix by one bank, which separates strides up to 32; the
// second term (one more word every 1024) separates the stride-32 level of a 1024-thread block.
// Seed 003 quotes this as a macro whose missing parentheses make it n >> (32 + n) >> 10, i.e.
// no padding at all (README, "the bank-matrix view").
template <bool kPadded>
__device__ __forceinline__ int tree_slot(int i) {
  if constexpr (kPadded) return i + (i >> 5) + (i >> 10);
  else return i;
}

constexpr std::size_t tree_shared_ints(int elements, bool padded) {
  return static_cast<std::size_t>(padded ? elements + (elements >> 5) + (elements >> 10) + 1 : elements);
}

// Scans 2 * blockDim.x elements of [base, base + 2B) in place in shared memory (GPU Gems 3 ch. 39
// as in seed 003). in and out may alias: a block reads all of its elements before writing any.
template <bool kPadded>
__global__ void block_scan_shared(const int* in, int* out, std::size_t n, int* block_sums) {
  extern __shared__ int tree[];
  const int t = threadIdx.x;
  const int elements = 2 * blockDim.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * elements;
  // Consecutive lanes load consecutive elements: coalesced in global memory, distinct banks here.
  const int a = t, b = t + blockDim.x;
  tree[tree_slot<kPadded>(a)] = base + a < n ? in[base + a] : 0;
  tree[tree_slot<kPadded>(b)] = base + b < n ? in[base + b] : 0;

  int stride = 1;
  for (int active = blockDim.x; active > 0; active >>= 1, stride <<= 1) {
    __syncthreads();
    if (t < active) {
      const int left = stride * (2 * t + 1) - 1, right = stride * (2 * t + 2) - 1;
      tree[tree_slot<kPadded>(right)] += tree[tree_slot<kPadded>(left)];
    }
  }
  if (t == 0) {
    const int root = tree_slot<kPadded>(elements - 1);
    if (block_sums) block_sums[blockIdx.x] = tree[root];
    tree[root] = 0;
  }
  for (int active = 1; active < elements; active <<= 1) {
    stride >>= 1;
    __syncthreads();
    if (t < active) {
      const int left = stride * (2 * t + 1) - 1, right = stride * (2 * t + 2) - 1;
      const int l = tree[tree_slot<kPadded>(left)];
      const int r = tree[tree_slot<kPadded>(right)];
      tree[tree_slot<kPadded>(left)] = r;
      tree[tree_slot<kPadded>(right)] = r + l;
    }
  }
  __syncthreads();
  if (base + a < n) out[base + a] = tree[tree_slot<kPadded>(a)];
  if (base + b < n) out[base + b] = tree[tree_slot<kPadded>(b)];
}

// Block k of the level below gets the scanned sum of blocks 0..k-1 (seed 003's "stitch").
__global__ void add_block_offsets(int* out, std::size_t n, const int* __restrict__ scanned_sums) {
  const int offset = scanned_sums[blockIdx.x];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * 2 * blockDim.x;
  const std::size_t a = base + threadIdx.x, b = a + blockDim.x;
  if (a < n) out[a] += offset;
  if (b < n) out[b] += offset;
}

// One level of the recursion: 2 launches per level, 1 at the top (a single block).
template <bool kPadded>
void scan_shared_level(const int* d_in, int* d_out, std::size_t n, int block, ScanWorkspace& ws) {
  const std::size_t per_block = 2 * static_cast<std::size_t>(block);
  const std::size_t blocks = ceil_div(n, per_block);
  const std::size_t shared_bytes = tree_shared_ints(static_cast<int>(per_block), kPadded) * sizeof(int);
  if (blocks == 1) {
    block_scan_shared<kPadded><<<1, block, shared_bytes>>>(d_in, d_out, n, nullptr);
    GPULAB_CHECK_LAUNCH();
    return;
  }
  int* sums = ws.take(blocks);
  block_scan_shared<kPadded><<<static_cast<unsigned>(blocks), block, shared_bytes>>>(d_in, d_out, n, sums);
  GPULAB_CHECK_LAUNCH();
  scan_shared_level<kPadded>(sums, sums, blocks, block, ws);
  add_block_offsets<<<static_cast<unsigned>(blocks), block>>>(d_out, n, sums);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace

void exclusive_scan_shared(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  scan_shared_level<false>(d_in, d_out, n, ws.config.block, ws);
}

void exclusive_scan_shared_conflict_free(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  scan_shared_level<true>(d_in, d_out, n, ws.config.block, ws);
}

}  // namespace scan
