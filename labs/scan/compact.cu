// Your file, part 4 of 4: stream compaction, keep the non-zero elements in order (README.md,
// "Stages, in order"; seed 003).
//   cpu-compact        compact_cpu             one pass, no scan
//   cpu-compact-scan   compact_cpu_with_scan   map, scan, scatter on the CPU
//   compact            compact                 map, scan, scatter on the GPU
// Replace each gpulab::not_implemented(...) with your code; the interface is scan.cuh.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "scan.cuh"

namespace scan {

std::size_t compact_cpu(const int* in, int* out, std::size_t n) {
  // One loop with a write cursor. Return how many elements you kept.
  (void)in, (void)out, (void)n;
  gpulab::not_implemented("cpu-compact");
}

std::size_t compact_cpu_with_scan(const int* in, int* out, std::size_t n) {
  // flags[i] = in[i] != 0; indices = exclusive_scan_cpu(flags); out[indices[i]] = in[i] where
  // flags[i]; the count is indices[n-1] + flags[n-1]. Slower than compact_cpu: why? (README.md, "Write-up questions", 9)
  (void)in, (void)out, (void)n;
  gpulab::not_implemented("cpu-compact-scan");
}

// Suggested kernels:
//   __global__ void map_nonzero(const int* in, int* flags, std::size_t n);
//   __global__ void scatter_nonzero(const int* in, const int* indices, int* out, int* count, std::size_t n);
void compact(const int* d_in, int* d_out, int* d_count, std::size_t n, ScanWorkspace& ws) {
  // - flags and indices: ws.take(n) each; scan the flags with any scan of yours (the fastest one
  //   gives the fastest compaction; it takes its own scratch from the same ws).
  // - The count: the thread of element n-1 knows it (indices[n-1] + flags[n-1]).
  // - n == 0: the count is 0 (cudaMemsetAsync(d_count, 0, sizeof(int)) is enough).
  (void)d_in, (void)d_out, (void)d_count, (void)n, (void)ws;
  gpulab::not_implemented("compact");
}

}  // namespace scan
