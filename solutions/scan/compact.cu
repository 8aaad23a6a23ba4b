// Reference: stream compaction (stages 1 and 9 of the scan lab, seed 003): keep the non-zero
// elements in order. On the GPU: map to 0/1 flags, exclusive scan of the flags (each kept
// element's output index), scatter.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "gpulab/cuda_check.hpp"
#include "scan.cuh"

namespace scan {

// The kit's integer helpers by their short names, in this file only: the interface leaves them in
// gpulab:: (gpulab/math.hpp) so that a submission may define helpers of its own by these names.
using gpulab::ceil_div;

std::size_t compact_cpu(const int* in, int* out, std::size_t n) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (in[i] != 0) out[count++] = in[i];
  return count;
}

std::size_t compact_cpu_with_scan(const int* in, int* out, std::size_t n) {
  if (n == 0) return 0;
  // The GPU algorithm run on one core: three passes where one would do, which is the point.
  std::vector<int> flags(n), indices(n);
  for (std::size_t i = 0; i < n; ++i) flags[i] = in[i] != 0 ? 1 : 0;
  exclusive_scan_cpu(flags.data(), indices.data(), n);
  for (std::size_t i = 0; i < n; ++i)
    if (flags[i]) out[indices[i]] = in[i];
  return static_cast<std::size_t>(indices[n - 1]) + static_cast<std::size_t>(flags[n - 1]);
}

namespace {

__device__ __forceinline__ std::size_t global_thread_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// One thread per 4 elements: 128-bit loads and stores where the 4 are in range.
__global__ void map_nonzero(const int* __restrict__ in, int* __restrict__ flags, std::size_t n) {
  const std::size_t i = 4 * global_thread_index();
  if (i >= n) return;
  if (i + 3 < n) {
    const int4 v = *reinterpret_cast<const int4*>(in + i);
    *reinterpret_cast<int4*>(flags + i) = int4{v.x != 0, v.y != 0, v.z != 0, v.w != 0};
    return;
  }
  for (std::size_t k = i; k < n; ++k) flags[k] = in[k] != 0;
}

// Element i goes to out[indices[i]]; the last thread also writes the count.
__global__ void scatter_nonzero(const int* __restrict__ in, const int* __restrict__ indices, int* __restrict__ out,
                                int* __restrict__ count, std::size_t n) {
  const std::size_t i = global_thread_index();
  if (i >= n) return;
  const int x = in[i];
  const int index = indices[i];
  if (x != 0) out[index] = x;
  if (i == n - 1) *count = index + (x != 0 ? 1 : 0);
}

}  // namespace

void compact(const int* d_in, int* d_out, int* d_count, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) {
    GPULAB_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(int)));
    return;
  }
  const int block = ws.config.block;
  int* flags = ws.take(n);
  int* indices = ws.take(n);
  map_nonzero<<<static_cast<unsigned>(ceil_div(ceil_div(n, 4), block)), block>>>(d_in, flags, n);
  GPULAB_CHECK_LAUNCH();
  // Any of your scans works here; the fastest one makes the fastest compaction.
  exclusive_scan_single_pass(flags, indices, n, ws);
  scatter_nonzero<<<static_cast<unsigned>(ceil_div(n, block)), block>>>(d_in, indices, d_out, d_count, n);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace scan
