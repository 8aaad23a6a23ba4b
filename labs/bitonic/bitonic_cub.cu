// The baselines (part of the harness, not a student file): the library sorts the bitonic stages are
// measured against (README.md, "Stages, in order": the baselines; int32 keys).
//   cub-merge-sort  cub::DeviceMergeSort::SortKeysCopy with a plain comparator functor: a comparison
//                   sort like bitonic sort, and CUB cannot take its radix path; the Copy form is out
//                   of place, like the stages (the in-place SortKeys would need a copy in the
//                   timed region)
//   cub-radix-sort  cub::DeviceRadixSort::SortKeys: the roof (not a comparison sort)
//   thrust-sort     thrust::sort: a device-to-device copy, then its radix path for int32 in place,
//                   its temporary memory from the workspace (no cudaMalloc in the timed region)
// CUB's temporary storage is sized here and allocated by the harness (lab.cu) before timing.
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <cstddef>
#include <stdexcept>

#include "bitonic.cuh"
#include "gpulab/cuda_check.hpp"

namespace bitonic {

namespace {

// The comparator CUB's merge sort is timed with (a comparator functor, so that
// CUB cannot take its radix path: a comparison sort against a comparison sort).
struct KeyLess {
  __host__ __device__ bool operator()(std::int32_t a, std::int32_t b) const { return a < b; }
};

// One call of the device sort `which`: with temp == nullptr it only sets `bytes`.
cudaError_t cub_call(CubSort which, void* temp, std::size_t& bytes, const std::int32_t* in, std::int32_t* out,
                     std::size_t n) {
  const auto count = static_cast<long long>(n);
  switch (which) {
    case CubSort::merge: return cub::DeviceMergeSort::SortKeysCopy(temp, bytes, in, out, count, KeyLess{});
    case CubSort::radix: return cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, count);
  }
  throw std::invalid_argument("sort_cub: unknown sort");
}

}  // namespace

std::size_t cub_sort_temp_bytes(CubSort which, std::size_t n) {
  std::size_t bytes = 0;
  if (n > 0) GPULAB_CUDA_CHECK(cub_call(which, nullptr, bytes, nullptr, nullptr, n));
  return bytes;
}

void sort_cub(CubSort which, const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, void* d_temp,
              std::size_t temp_bytes) {
  if (n == 0) return;
  GPULAB_CUDA_CHECK(cub_call(which, d_temp, temp_bytes, d_in, d_out, n));
}

void sort_thrust(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  if (n == 0) return;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_out, d_in, n * sizeof(std::int32_t), cudaMemcpyDeviceToDevice));
  gpulab::ScratchAllocator alloc{&ws};
  thrust::sort(thrust::cuda::par_nosync(alloc), d_out, d_out + n);
}

}  // namespace bitonic
