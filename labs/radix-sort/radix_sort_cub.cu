// The baselines (part of the harness, not a student file): the libraries the sorts are measured
// against (radix_sort_lab.hpp).
//   cub-sort        cub::DeviceRadixSort::SortKeys / SortPairs, begin_bit = 0 and the stage's end_bit
//                   (the same bits, for fairness); its temporary storage comes from
//                   the caller, allocated when the stage is prepared
//   thrust-sort     thrust::sort / thrust::stable_sort_by_key on a copy of the input: what a user
//                   writes (a radix sort for arithmetic keys, allocating inside)
//   cub-merge-sort  cub::DeviceMergeSort with the lab's order as the comparator: the comparison-sort
//                   roof ("radix vs comparison sort"), exact for every key type and end_bit
// CUB orders -0.0 and +0.0 as equal (the lab does not: README.md, "The problem"), so the radix
// baselines take u32 and i32 keys only (lab.toml's accepts).
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include "gpulab/cuda_check.hpp"
#include "radix_sort_lab.hpp"

namespace radix_sort::lab {

namespace {

using u32 = std::uint32_t;
using Items = std::int64_t;

// The lab's order as a comparison: masked ordered keys (no float comparison, NaNs included).
struct OrderLess {
  KeyType type;
  u32 mask;
  __device__ bool operator()(u32 a, u32 b) const { return (to_ordered(a, type) & mask) < (to_ordered(b, type) & mask); }
};

OrderLess order_less(KeyType type, int end_bit) {
  return {type, end_bit >= 32 ? 0xffffffffu : ((1u << end_bit) - 1u)};
}

void check_integer(KeyType type, const char* who) {
  if (type == KeyType::f32)
    throw std::invalid_argument(std::string(who) + " orders -0.0 and +0.0 as equal; the lab's f32 order does not");
}

}  // namespace

std::size_t cub_sort_bytes(std::size_t n, KeyType type, int end_bit, bool pairs) {
  check_integer(type, "cub::DeviceRadixSort");
  std::size_t bytes = 0;
  const auto count = static_cast<Items>(n);
  if (type == KeyType::i32) {
    using K = int;
    if (pairs)
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                                                        static_cast<const u32*>(nullptr), static_cast<u32*>(nullptr), count,
                                                        0, end_bit));
    else
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                                                       count, 0, end_bit));
  } else {
    if (pairs)
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const u32*>(nullptr), static_cast<u32*>(nullptr),
                                                        static_cast<const u32*>(nullptr), static_cast<u32*>(nullptr), count,
                                                        0, end_bit));
    else
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const u32*>(nullptr),
                                                       static_cast<u32*>(nullptr), count, 0, end_bit));
  }
  return bytes;
}

void cub_sort(void* temp, std::size_t temp_bytes, const u32* keys, u32* keys_out, const u32* values, u32* values_out,
              std::size_t n, KeyType type, int end_bit) {
  check_integer(type, "cub::DeviceRadixSort");
  const auto count = static_cast<Items>(n);
  if (type == KeyType::i32) {
    const int* k = reinterpret_cast<const int*>(keys);
    int* ko = reinterpret_cast<int*>(keys_out);
    if (values)
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k, ko, values, values_out, count, 0, end_bit));
    else
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, k, ko, count, 0, end_bit));
  } else {
    if (values)
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, keys_out, values, values_out, count, 0, end_bit));
    else
      GPULAB_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, keys_out, count, 0, end_bit));
  }
}

void thrust_sort(const u32* keys, u32* keys_out, const u32* values, u32* values_out, std::size_t n, KeyType type) {
  check_integer(type, "thrust::sort");
  if (n == 0) return;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(keys_out, keys, n * sizeof(u32), cudaMemcpyDeviceToDevice));
  if (values) GPULAB_CUDA_CHECK(cudaMemcpyAsync(values_out, values, n * sizeof(u32), cudaMemcpyDeviceToDevice));
  if (type == KeyType::i32) {
    int* k = reinterpret_cast<int*>(keys_out);
    if (values) thrust::stable_sort_by_key(thrust::device, k, k + n, values_out);
    else thrust::sort(thrust::device, k, k + n);
  } else {
    if (values) thrust::stable_sort_by_key(thrust::device, keys_out, keys_out + n, values_out);
    else thrust::sort(thrust::device, keys_out, keys_out + n);
  }
  GPULAB_CHECK_LAUNCH();
}

std::size_t merge_sort_bytes(std::size_t n, bool pairs) {
  std::size_t bytes = 0;
  const auto count = static_cast<Items>(n);
  const OrderLess less = order_less(KeyType::u32, 32);  // the storage does not depend on the comparator's state
  if (pairs)
    GPULAB_CUDA_CHECK(cub::DeviceMergeSort::StableSortPairs(nullptr, bytes, static_cast<u32*>(nullptr),
                                                            static_cast<u32*>(nullptr), count, less));
  else
    GPULAB_CUDA_CHECK(cub::DeviceMergeSort::StableSortKeysCopy(nullptr, bytes, static_cast<const u32*>(nullptr),
                                                               static_cast<u32*>(nullptr), count, less));
  return bytes;
}

void merge_sort(void* temp, std::size_t temp_bytes, const u32* keys, u32* keys_out, const u32* values, u32* values_out,
                std::size_t n, KeyType type, int end_bit) {
  if (n == 0) return;
  const auto count = static_cast<Items>(n);
  const OrderLess less = order_less(type, end_bit);
  if (values) {  // in place, on a copy: the input is never written
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(keys_out, keys, n * sizeof(u32), cudaMemcpyDeviceToDevice));
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(values_out, values, n * sizeof(u32), cudaMemcpyDeviceToDevice));
    GPULAB_CUDA_CHECK(cub::DeviceMergeSort::StableSortPairs(temp, temp_bytes, keys_out, values_out, count, less));
  } else {
    GPULAB_CUDA_CHECK(cub::DeviceMergeSort::StableSortKeysCopy(temp, temp_bytes, keys, keys_out, count, less));
  }
}

}  // namespace radix_sort::lab
