// The baselines (part of the harness, not a student file): CUB, the library the reduction stages
// are measured against.
//   cub-sum           cub::DeviceReduce::Sum (max: DeviceReduce::Reduce). CCCL documents that
//                     DeviceReduce does not support non-commutative operators: sum and max only.
//   cub-block-raking  the fair peer for a non-commutative operator: a kernel whose blocks reduce
//                     contiguous runs of tiles with cub::BlockLoad (warp transpose: coalesced)
//                     and cub::BlockReduce<..., BLOCK_REDUCE_RAKING> (documented to keep the
//                     order), then the same kernel on one block for the partials.
//   cub-scan-last     cub::DeviceScan::InclusiveScan with the operator; the last element. Legal
//                     for any associative operator, but it writes n elements it does not need.
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <climits>
#include <type_traits>

#include "gpulab/cuda_check.hpp"
#include "reduction.cuh"

namespace reduction {

namespace {

using gpulab::ceil_div;  // reduction.cuh keeps it out of namespace reduction

constexpr int kPeerBlock = 256;
template <class T>
constexpr int kPeerItems = 64 / static_cast<int>(sizeof(T));  // 64 bytes per thread per tile

void check_cub_size(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("n = " + std::to_string(n) + " is above what the CUB baselines take (2^31 - 1)");
}

template <class Op>
__global__ void __launch_bounds__(kPeerBlock) raking_tiles_kernel(const Value<Op>* in, std::size_t n, Value<Op>* out,
                                                                  Op op) {
  using T = Value<Op>;
  constexpr int kItems = kPeerItems<T>;
  using Load = cub::BlockLoad<T, kPeerBlock, kItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Reduce = cub::BlockReduce<T, kPeerBlock, cub::BLOCK_REDUCE_RAKING>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Reduce::TempStorage reduce;
  } temp;
  constexpr std::size_t tile = std::size_t{kPeerBlock} * kItems;
  const std::size_t tiles = ceil_div(n, tile);
  const std::size_t first = warp_share_begin(tiles, gridDim.x, blockIdx.x);
  const std::size_t last = warp_share_begin(tiles, gridDim.x, blockIdx.x + 1);
  T acc = Op::identity();  // meaningful in thread 0
  for (std::size_t t = first; t < last; ++t) {
    T items[kItems];
    const std::size_t offset = t * tile;
    if (offset + tile <= n) Load(temp.load).Load(in + offset, items);
    else Load(temp.load).Load(in + offset, items, static_cast<int>(n - offset), Op::identity());
    __syncthreads();
    const T tile_value = Reduce(temp.reduce).Reduce(items, op);
    __syncthreads();
    if (threadIdx.x == 0) acc = op(acc, tile_value);
  }
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

// CUB's temporary storage, aligned as a cudaMalloc'd buffer would be (256 bytes), in a region of
// exactly the bytes CUB asked for: compute-sanitizer reports any access past them.
template <class T>
T* take_cub_temp(ReduceWorkspace& ws, std::size_t bytes) {
  return reinterpret_cast<T*>(ws.take<unsigned char>(std::max<std::size_t>(bytes, 1), 256));
}

}  // namespace

template <class Op>
void reduce_cub_device(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  static_assert(Op::commutative, "cub::DeviceReduce does not support non-commutative operators (CCCL docs)");
  check_cub_size(n);
  const int count = static_cast<int>(n);
  std::size_t bytes = 0;
  if constexpr (std::is_same_v<Op, SumOp>) {
    GPULAB_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, d_in, d_out, count));
    GPULAB_CUDA_CHECK(cub::DeviceReduce::Sum(take_cub_temp<void>(ws, bytes), bytes, d_in, d_out, count));
  } else {
    GPULAB_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, d_in, d_out, count, op, Op::identity()));
    GPULAB_CUDA_CHECK(
        cub::DeviceReduce::Reduce(take_cub_temp<void>(ws, bytes), bytes, d_in, d_out, count, op, Op::identity()));
  }
}

template <class Op>
void reduce_cub_block_raking(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  using T = Value<Op>;
  if (n == 0) {
    write_value_kernel<<<1, 1>>>(d_out, Op::identity());
    GPULAB_CHECK_LAUNCH();
    return;
  }
  static int per_sm = 0;  // resident blocks per SM, asked once
  if (per_sm == 0) {
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, raking_tiles_kernel<Op>, kPeerBlock, 0));
    per_sm = std::max(per_sm, 1);
  }
  const std::size_t tiles = ceil_div(n, std::size_t{kPeerBlock} * kPeerItems<T>);
  const int grid = static_cast<int>(std::min<std::size_t>(tiles, std::size_t(ws.multiprocessors) * per_sm));
  if (grid == 1) {
    raking_tiles_kernel<Op><<<1, kPeerBlock>>>(d_in, n, d_out, op);
    GPULAB_CHECK_LAUNCH();
    return;
  }
  T* partials = ws.take<T>(static_cast<std::size_t>(grid));
  raking_tiles_kernel<Op><<<grid, kPeerBlock>>>(d_in, n, partials, op);
  GPULAB_CHECK_LAUNCH();
  raking_tiles_kernel<Op><<<1, kPeerBlock>>>(partials, static_cast<std::size_t>(grid), d_out, op);
  GPULAB_CHECK_LAUNCH();
}

template <class Op>
void reduce_cub_scan_last(const Value<Op>* d_in, std::size_t n, Value<Op>* d_out, ReduceWorkspace& ws, Op op) {
  using T = Value<Op>;
  check_cub_size(n);
  if (n == 0) {
    write_value_kernel<<<1, 1>>>(d_out, Op::identity());
    GPULAB_CHECK_LAUNCH();
    return;
  }
  T* scanned = ws.take<T>(n);
  const int count = static_cast<int>(n);
  std::size_t bytes = 0;
  GPULAB_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, bytes, d_in, scanned, op, count));
  GPULAB_CUDA_CHECK(cub::DeviceScan::InclusiveScan(take_cub_temp<void>(ws, bytes), bytes, d_in, scanned, op, count));
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_out, scanned + (n - 1), sizeof(T), cudaMemcpyDeviceToDevice));
}

REDUCTION_FOR_COMMUTATIVE_OPS(REDUCTION_INSTANTIATE_GPU, reduce_cub_device)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_cub_block_raking)
REDUCTION_FOR_ALL_OPS(REDUCTION_INSTANTIATE_GPU, reduce_cub_scan_last)

}  // namespace reduction
