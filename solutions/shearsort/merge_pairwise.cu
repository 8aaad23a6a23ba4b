// Reference of labs/shearsort/merge_pairwise.cu: the tile base case, then ceil(log2 tiles) passes that merge runs
// two at a time. Each pass is two launches (seed 000 §5 names Green et al.'s merge path as the way to
// merge without a sorting network):
//   partition  one thread per block of the merge: the merge-path co-rank of the block's first
//              output (a binary search along the cross diagonal), written to scratch;
//   merge      one block per kMergeTile consecutive outputs: its pieces of the two runs into shared
//              memory (coalesced), each thread finds its own diagonal by the same binary search in
//              shared memory and merges kMergeItems keys serially, then the block writes its tile
//              through a padded staging array (coalesced).
// Stable: on equal keys the left run goes first (the co-rank takes a[i] when a[i] <= b[j]).
#include <cuda_runtime.h>

#include <stdexcept>

#include "gpulab/cuda_check.hpp"
#include "shear_device.cuh"
#include "shearsort.cuh"

namespace shearsort {

namespace {

// The pass's geometry at output index `first`: runs of `run` keys are merged in pairs; the pair
// holding `first` is a = [a_begin, a_begin + na), b = [a_begin + na, a_begin + na + nb).
struct PairAt {
  std::size_t a_begin, na, nb, diag;  // diag: outputs of this pair before `first`
};
__device__ __forceinline__ PairAt pair_at(std::size_t first, std::size_t n, std::size_t run) {
  // Runs are 1024 x 2^p keys: a mask, not a 64-bit division (~65 instructions on the GPU).
  const std::size_t base = first & ~(2 * run - 1);
  const std::size_t a_end = base + run < n ? base + run : n;
  const std::size_t b_end = base + 2 * run < n ? base + 2 * run : n;
  return PairAt{base, a_end - base, b_end - a_end, first - base};
}

// How many of a's keys are among the first `diag` outputs of the stable merge of a then b:
// the largest i with a[i - 1] <= b[diag - i] (ties to a), found by bisection on the diagonal.
template <class A, class B>
__device__ __forceinline__ long long merge_path_co_rank(A a, long long na, B b, long long nb, long long diag) {
  long long lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if (a(mid) <= b(diag - 1 - mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

__global__ void pairwise_partition_kernel(const std::int32_t* __restrict__ keys, std::size_t n, std::size_t run,
                                          std::size_t blocks, long long* __restrict__ splits) {
  const std::size_t blk = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (blk >= blocks) return;
  const PairAt p = pair_at(blk * kMergeTile, n, run);
  const std::int32_t* a = keys + p.a_begin;
  const std::int32_t* b = a + p.na;
  splits[blk] = merge_path_co_rank([a](long long i) { return a[i]; }, (long long)p.na,
                                   [b](long long j) { return b[j]; }, (long long)p.nb, (long long)p.diag);
}

// Staging index of output e: one padding word per 32 makes thread t's stride-kMergeItems writes
// (e = 16t + k: bank (16t + t/2 + k) mod 32) hit 32 distinct banks, and the coalesced reads
// (e = t + 128k) too.
__device__ __forceinline__ int staged(int e) { return e + (e >> 5); }
inline constexpr int kStageWords = kMergeTile + kMergeTile / 32;

template <bool kPairs>
__global__ void __launch_bounds__(kMergeThreads)
    pairwise_merge_kernel(const std::int32_t* __restrict__ keys_in, const std::uint32_t* __restrict__ values_in,
                          std::int32_t* __restrict__ keys_out, std::uint32_t* __restrict__ values_out, std::size_t n,
                          std::size_t run, const long long* __restrict__ splits) {
  __shared__ std::int32_t sk[kStageWords];
  __shared__ std::uint32_t sv[kPairs ? kStageWords : 1];
  const std::size_t blk = blockIdx.x;
  const PairAt p = pair_at(blk * kMergeTile, n, run);
  const std::size_t pair_size = p.na + p.nb;
  const std::size_t diag_end = p.diag + kMergeTile < pair_size ? p.diag + kMergeTile : pair_size;
  const long long i0 = splits[blk];
  const long long i1 = diag_end == pair_size ? (long long)p.na : splits[blk + 1];
  const int la = int(i1 - i0);                 // keys of a in this block
  const int count = int(diag_end - p.diag);    // outputs of this block
  const int lb = count - la;
  // The 64-bit offsets once; inside the tile every index is 32-bit.
  const std::size_t ga = p.a_begin + i0;                        // first key of a here
  const std::size_t gb = p.a_begin + p.na + (p.diag - i0);      // first key of b here
  const std::size_t out_base = p.a_begin + p.diag;

  // The block's pieces of a and b, back to back: sk[0, la) then sk[la, count).
#pragma unroll
  for (int k = 0; k < kMergeItems; ++k) {
    const int e = threadIdx.x + k * kMergeThreads;
    if (e < count) {
      const std::size_t g = e < la ? ga + e : gb + (e - la);
      sk[e] = keys_in[g];
      if constexpr (kPairs) sv[e] = values_in[g];
    }
  }
  __syncthreads();

  const int d0 = min(int(threadIdx.x) * kMergeItems, count);
  int i = int(merge_path_co_rank([](long long x) { return sk[x]; }, la, [la](long long y) { return sk[la + y]; }, lb, d0));
  int j = d0 - i;
  // The serial merge without branches: each step takes one side by the comparison, advances that
  // side's cursor and reloads only that side's head (one shared load a key). A head past its run
  // is never compared (the flags below), so its load is clamped into the tile, not guarded.
  const int last = count - 1;
  std::int32_t out[kMergeItems];
  int src[kMergeItems];
  std::int32_t av = sk[min(i, last)], bv = sk[min(la + j, last)];
#pragma unroll
  for (int k = 0; k < kMergeItems; ++k) {
    const bool take_a = i < la && (j >= lb || av <= bv);  // an exhausted side is a flag, not a value
    out[k] = take_a ? av : bv;
    src[k] = take_a ? i : la + j;
    i += take_a;
    j += !take_a;
    const std::int32_t next = sk[min(take_a ? i : la + j, last)];
    av = take_a ? next : av;
    bv = take_a ? bv : next;
  }
  std::uint32_t vals[kMergeItems];
  if constexpr (kPairs) {
#pragma unroll
    for (int k = 0; k < kMergeItems; ++k) vals[k] = d0 + k < count ? sv[src[k]] : 0u;
  }
  __syncthreads();  // everyone has read sk/sv: reuse them as the staging arrays
#pragma unroll
  for (int k = 0; k < kMergeItems; ++k) {
    const int e = int(threadIdx.x) * kMergeItems + k;
    if (e < count) {
      sk[staged(e)] = out[k];
      if constexpr (kPairs) sv[staged(e)] = vals[k];
    }
  }
  __syncthreads();
  std::int32_t* const keys_dst = keys_out + out_base;
#pragma unroll
  for (int k = 0; k < kMergeItems; ++k) {
    const int e = threadIdx.x + k * kMergeThreads;
    if (e < count) {
      keys_dst[e] = sk[staged(e)];
      if constexpr (kPairs) values_out[out_base + e] = sv[staged(e)];
    }
  }
}

}  // namespace

void merge_pairwise(const std::int32_t* d_keys_in, const std::uint32_t* d_values_in, std::int32_t* d_keys_out,
                    std::uint32_t* d_values_out, std::size_t n, ShearWorkspace& ws) {
  if ((d_values_in == nullptr) != (d_values_out == nullptr))
    throw std::invalid_argument("merge_pairwise: values in and values out must both be given or both be null");
  const bool pairs = d_values_in != nullptr;
  if (pairs && n >= 0xFFFFFFFFull) throw std::invalid_argument("merge_pairwise: pairs need n < 2^32 - 1");
  if (n == 0) return;
  const int passes = ceil_log2(ceil_div(n, kTileKeys));
  const std::size_t blocks = ceil_div(n, kMergeTile);
  std::int32_t* keys[2] = {d_keys_out, passes > 0 ? ws.take<std::int32_t>(n) : nullptr};
  std::uint32_t* values[2] = {d_values_out, pairs && passes > 0 ? ws.take<std::uint32_t>(n) : nullptr};
  long long* splits = passes > 0 ? ws.take<long long>(blocks + 1) : nullptr;
  // The tile pass writes the buffer from which an even number of passes ends in d_keys_out.
  int cur = passes % 2;
  sort_tiles(ws.config.base_case, d_keys_in, d_values_in, keys[cur], values[cur], n);
  for (std::size_t run = kTileKeys; run < n; run *= 2) {
    pairwise_partition_kernel<<<static_cast<unsigned>(ceil_div(blocks, 256)), 256>>>(keys[cur], n, run, blocks,
                                                                                            splits);
    GPULAB_CHECK_LAUNCH();
    if (pairs)
      pairwise_merge_kernel<true><<<static_cast<unsigned>(blocks), kMergeThreads>>>(keys[cur], values[cur], keys[cur ^ 1],
                                                                                    values[cur ^ 1], n, run, splits);
    else
      pairwise_merge_kernel<false><<<static_cast<unsigned>(blocks), kMergeThreads>>>(keys[cur], nullptr, keys[cur ^ 1],
                                                                                     nullptr, n, run, splits);
    GPULAB_CHECK_LAUNCH();
    cur ^= 1;
  }
}

}  // namespace shearsort
