// The CCCL baselines (part of the harness, not a student file), in their own translation unit:
// CUB's and Thrust's templates are the slowest code of the lab to compile, and a file of their
// own is compiled beside lab.cu instead of after it (a cold grade builds both).
//   cub          cub::DeviceScan::ExclusiveSum (single pass, decoupled look-back)
//   thrust       thrust::exclusive_scan (allocates its temporary storage inside the call)
//   cub-compact  cub::DeviceSelect::If with "non-zero"
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include "gpulab/cuda_check.hpp"
#include "scan.cuh"

namespace scan {

namespace {
struct NonZero {
  __host__ __device__ bool operator()(int x) const { return x != 0; }
};
}  // namespace

std::size_t cub_exclusive_sum_bytes(std::size_t n) {
  std::size_t bytes = 0;
  GPULAB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int*>(nullptr),
                                                  static_cast<int*>(nullptr), static_cast<int>(n)));
  return bytes;
}

void cub_exclusive_sum(void* temp, std::size_t temp_bytes, const int* d_in, int* d_out, std::size_t n) {
  GPULAB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, d_in, d_out, static_cast<int>(n)));
}

void thrust_exclusive_scan(const int* d_in, int* d_out, std::size_t n) {
  thrust::exclusive_scan(thrust::device, d_in, d_in + n, d_out);
}

std::size_t cub_select_nonzero_bytes(std::size_t n) {
  std::size_t bytes = 0;
  GPULAB_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, static_cast<const int*>(nullptr), static_cast<int*>(nullptr),
                                          static_cast<int*>(nullptr), static_cast<int>(n), NonZero{}));
  return bytes;
}

void cub_select_nonzero(void* temp, std::size_t temp_bytes, const int* d_in, int* d_out, int* d_count, std::size_t n) {
  GPULAB_CUDA_CHECK(cub::DeviceSelect::If(temp, temp_bytes, d_in, d_out, d_count, static_cast<int>(n), NonZero{}));
}

}  // namespace scan
