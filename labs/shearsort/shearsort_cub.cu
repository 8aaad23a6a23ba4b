// The baselines (part of the harness, not a student file): the same tiles sorted by CUB's block
// sorts, and the whole sort by CUB's and Thrust's device sorts (the lab's baselines).
//   tile-cub-merge / tile-cub-radix   one 1024-key tile per block of 128 threads x 8 keys,
//                                     cub::BlockMergeSort / cub::BlockRadixSort, loaded and stored
//                                     through cub::BlockLoad/BlockStore (warp transpose: coalesced)
//   sort-cub-merge(-stable)           cub::DeviceMergeSort::SortKeysCopy / StableSortKeysCopy with a
//                                     plain comparator functor, so CUB cannot take its radix path;
//                                     the Copy forms are out of place, like the stages (the in-place
//                                     SortKeys would need a copy inside the timed region)
//   sort-cub-radix                    cub::DeviceRadixSort::SortKeys
//   sort-thrust                       thrust::sort (its radix path for int32), its temporary memory
//                                     from the workspace (no cudaMalloc in the timed region)
#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <climits>
#include <cstddef>
#include <stdexcept>

#include "gpulab/cuda_check.hpp"
#include "shearsort.cuh"

namespace shearsort {

namespace {

// The comparator CUB's merge sort is timed with (a custom comparator, so that CUB cannot take its radix path).
struct KeyLess {
  __host__ __device__ bool operator()(std::int32_t a, std::int32_t b) const { return a < b; }
};

constexpr int kCubThreads = 128;
constexpr int kCubItems = kTileKeys / kCubThreads;

template <bool kRadix>
__global__ void __launch_bounds__(kCubThreads) cub_tile_kernel(const std::int32_t* in, std::int32_t* out, std::size_t n) {
  using Load = cub::BlockLoad<std::int32_t, kCubThreads, kCubItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<std::int32_t, kCubThreads, kCubItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using MergeSort = cub::BlockMergeSort<std::int32_t, kCubThreads, kCubItems>;
  using RadixSort = cub::BlockRadixSort<std::int32_t, kCubThreads, kCubItems>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename MergeSort::TempStorage merge;
    typename RadixSort::TempStorage radix;
  } temp;
  const std::size_t base = std::size_t(blockIdx.x) * kTileKeys;
  const int valid = n - base < std::size_t(kTileKeys) ? int(n - base) : kTileKeys;
  std::int32_t keys[kCubItems];
  Load(temp.load).Load(in + base, keys, valid, INT_MAX);  // pads sort last (or tie with INT_MAX)
  __syncthreads();
  if constexpr (kRadix) RadixSort(temp.radix).Sort(keys);
  else MergeSort(temp.merge).Sort(keys, KeyLess{});
  __syncthreads();
  Store(temp.store).Store(out + base, keys, valid);
}

template <bool kRadix>
void cub_tiles(const std::int32_t* in, std::int32_t* out, std::size_t n) {
  if (n == 0) return;
  cub_tile_kernel<kRadix><<<static_cast<unsigned>(gpulab::ceil_div(n, kTileKeys)), kCubThreads>>>(in, out, n);
  GPULAB_CHECK_LAUNCH();
}

// One call of the device sort `which`: with temp == nullptr it only sets `bytes`.
cudaError_t cub_call(CubSort which, void* temp, std::size_t& bytes, const std::int32_t* in, std::int32_t* out,
                     std::size_t n) {
  const auto count = static_cast<long long>(n);
  switch (which) {
    case CubSort::merge: return cub::DeviceMergeSort::SortKeysCopy(temp, bytes, in, out, count, KeyLess{});
    case CubSort::merge_stable: return cub::DeviceMergeSort::StableSortKeysCopy(temp, bytes, in, out, count, KeyLess{});
    case CubSort::radix: return cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, count);
  }
  throw std::invalid_argument("sort_cub: unknown sort");
}

}  // namespace

void tile_cub_merge(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n) { cub_tiles<false>(d_in, d_out, n); }
void tile_cub_radix(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n) { cub_tiles<true>(d_in, d_out, n); }

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

void sort_thrust(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace& ws) {
  if (n == 0) return;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_out, d_in, n * sizeof(std::int32_t), cudaMemcpyDeviceToDevice));
  gpulab::ScratchAllocator alloc{&ws};
  thrust::sort(thrust::cuda::par_nosync(alloc), d_out, d_out + n);
}

}  // namespace shearsort
