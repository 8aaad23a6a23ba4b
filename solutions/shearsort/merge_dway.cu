// Reference of labs/shearsort/merge_dway.cu, merge-dway: seed 004 §7.3 with the lab's base case.
//   Part 1  the 1024-key tiles (the base case), instead of 004's b-key bitonic blocks;
//   Part 2  passes that merge d runs at a time, one warp per heap of d - 1 nodes with b-key buffers
//           in shared memory (004's recursive variant), leaves reading the runs in global memory;
//   Parts 3-4 (004's separators and row-wise merge) are replaced by merge-path co-ranking in every
//           pass: the pass's output is cut into chunks of S keys (one warp task each), and a
//           partition launch finds, for every chunk's first output, how many keys of each of the d
//           runs come before it (the d-way co-rank). Equal chunks, whatever the keys (004's
//           separator rule fails on ties and needs n > p(k^2 + 1)).
// Stable: ties between runs go to the earlier run (the co-rank's order is (key, run, position));
// in pairs mode the heap orders (key, position) composites, so equal keys also keep their order
// inside the heap, and the position fetches the value.
// Per pass: partition (one warp per task) + heap merge (one warp per task): 1 + 2 Pd launches.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>

#include "gpulab/cuda_check.hpp"
#include "shear_device.cuh"
#include "shearsort.cuh"

namespace shearsort {

namespace {

using device::kFullMask;

// The geometry of warp task `task` in a pass with runs of `run` keys merged d at a time.
struct TaskAt {
  std::size_t start;   // first output (global)
  std::size_t gbase;   // first key of the task's group (its d runs)
  std::uint32_t gsize; // keys in the group (< 2^32: n < 2^32 is checked on the host)
  std::uint32_t k;     // outputs of the group before this task
  std::uint32_t count; // outputs of this task
  int runs;            // runs in the group (<= d; fewer in the last group)
};
__device__ __forceinline__ TaskAt task_at(std::size_t task, std::size_t n, std::size_t run, int d, std::size_t chunk) {
  const std::size_t group = std::size_t(d) * run;
  TaskAt t;
  t.start = task * chunk;
  t.gbase = t.start / group * group;
  const std::size_t gsize = n - t.gbase < group ? n - t.gbase : group;
  t.gsize = std::uint32_t(gsize);
  t.k = std::uint32_t(t.start - t.gbase);
  t.count = std::uint32_t(chunk < gsize - t.k ? chunk : gsize - t.k);
  t.runs = int((gsize + run - 1) / run);
  return t;
}

// ==== the partition: the d-way co-rank of every task's first output ==========================================
//
// The algorithm is shearsort_model.cpp's dway_corank (its CPU mirror, tested against the
// definition): windows [lo, hi) per run that always contain the cut, narrowed by pivots whose rank
// one binary search per run measures exactly. Lane `lane` owns runs lane + 32 i, i < kSlots.

inline constexpr int kPartitionWarps = 4;

__device__ __forceinline__ std::uint64_t pack_rank(std::int32_t key, int run) {
  return (std::uint64_t(std::uint32_t(key) ^ 0x80000000u) << 32) | std::uint32_t(run);
}

struct Pivot {
  std::int32_t key;
  int run;
  std::uint32_t pos;
};

// The weighted median of the picks: first among this lane's runs, then over the lanes.
// pick[i] / key[i] valid where lo[i] < hi[i]; weights are the window sizes.
template <int kSlots>
__device__ __forceinline__ Pivot weighted_median_pivot(const std::uint32_t (&lo)[kSlots], const std::uint32_t (&hi)[kSlots],
                                                       const std::uint32_t (&pick)[kSlots], const std::int32_t (&key)[kSlots],
                                                       std::uint64_t lane_weight, std::uint64_t width, int lane) {
  std::uint64_t rep = ~std::uint64_t{0};
  std::uint32_t rep_pos = 0;
  const std::uint64_t tau_lane = lane_weight / 2;
#pragma unroll
  for (int i = 0; i < kSlots; ++i) {
    const std::uint32_t w = hi[i] - lo[i];
    if (w == 0) continue;
    const std::uint64_t mine = pack_rank(key[i], lane + kWarp * i);
    std::uint64_t below = 0;
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
      if (hi[s] > lo[s] && pack_rank(key[s], lane + kWarp * s) < mine) below += hi[s] - lo[s];
    if (below <= tau_lane && tau_lane < below + w) {
      rep = mine;
      rep_pos = pick[i];
    }
  }
  std::uint64_t below = 0;
  for (int s = 1; s < kWarp; ++s) {
    const int from = (lane + s) & (kWarp - 1);
    const std::uint64_t other = __shfl_sync(kFullMask, rep, from);
    const std::uint64_t weight = __shfl_sync(kFullMask, lane_weight, from);
    if (weight > 0 && other < rep) below += weight;
  }
  const std::uint64_t tau = width / 2;
  const unsigned chosen = __ballot_sync(kFullMask, lane_weight > 0 && below <= tau && tau < below + lane_weight);
  const int src = __ffs(chosen) - 1;  // exactly one lane (the window sums partition [0, width))
  const std::uint64_t r = __shfl_sync(kFullMask, rep, src);
  return Pivot{std::int32_t(std::uint32_t(r >> 32) ^ 0x80000000u), int(r & 0xffffffffu),
               __shfl_sync(kFullMask, rep_pos, src)};
}

template <int kSlots>
__global__ void __launch_bounds__(kPartitionWarps * kWarp)
    dway_partition_kernel(const std::int32_t* __restrict__ keys, std::size_t n, std::size_t run, int d,
                          std::size_t chunk, std::size_t tasks, std::uint32_t* __restrict__ cuts) {
  __shared__ std::uint32_t open_run[kPartitionWarps][kWarp], open_pos[kPartitionWarps][kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const std::size_t task = std::size_t(blockIdx.x) * kPartitionWarps + warp;
  if (task >= tasks) return;
  const TaskAt ta = task_at(task, n, run, d, chunk);
  const std::int32_t* group = keys + ta.gbase;
  const std::uint64_t k = ta.k;
  std::uint32_t lo[kSlots], hi[kSlots];
#pragma unroll
  for (int i = 0; i < kSlots; ++i) {
    const int r = lane + kWarp * i;
    lo[i] = hi[i] = 0;
    if (r < ta.runs) {
      const std::uint64_t len = std::min<std::uint64_t>(run, ta.gsize - std::uint64_t(r) * run);
      lo[i] = std::uint32_t(k > ta.gsize - len ? k - (ta.gsize - len) : 0);
      hi[i] = std::uint32_t(std::min<std::uint64_t>(len, k));
    }
  }
  auto sums = [&](std::uint64_t& lsum, std::uint64_t& width) {
    std::uint64_t l = 0, w = 0;
#pragma unroll
    for (int i = 0; i < kSlots; ++i) l += lo[i], w += hi[i] - lo[i];
    lsum = device::warp_sum(l);
    width = device::warp_sum(w);
  };
  auto at = [&](int i, std::uint32_t pos) { return group[std::size_t(lane + kWarp * i) * run + pos]; };
  bool median = false;
  std::uint64_t delta = 0;
  bool use_hi = false;
  for (;;) {
    std::uint64_t lsum, width;
    sums(lsum, width);
    if (lsum < k && k < lsum + width) {
      const std::uint64_t t = k - lsum, rest = width - t;  // clamp: no run adds more than t keys
#pragma unroll
      for (int i = 0; i < kSlots; ++i) {
        hi[i] = std::uint32_t(std::min<std::uint64_t>(hi[i], lo[i] + t));
        lo[i] = std::uint32_t(std::max<std::uint64_t>(lo[i], hi[i] > rest ? hi[i] - rest : 0));
      }
      sums(lsum, width);
    }
    if (lsum == k) break;
    if (lsum + width == k) {
      use_hi = true;
      break;
    }
    const std::uint64_t t = k - lsum;
    if (width <= kWarp) {
      // End game: the open keys one per lane, in run order (slot-major: runs 0..31, then 32..63 ...).
      std::uint32_t offset[kSlots];
      std::uint32_t carry = 0;
#pragma unroll
      for (int i = 0; i < kSlots; ++i) {
        const std::uint32_t w = hi[i] - lo[i];
        std::uint32_t incl = w;
#pragma unroll
        for (int s = 1; s < kWarp; s <<= 1) {
          const std::uint32_t v = __shfl_up_sync(kFullMask, incl, s);
          if (lane >= s) incl += v;
        }
        offset[i] = carry + incl - w;
        carry += __shfl_sync(kFullMask, incl, kWarp - 1);
        for (std::uint32_t e = 0; e < w; ++e) {
          open_run[warp][offset[i] + e] = lane + kWarp * i;
          open_pos[warp][offset[i] + e] = lo[i] + e;
        }
      }
      __syncwarp();
      std::uint64_t mine = ~std::uint64_t{0};
      if (std::uint64_t(lane) < width) {
        const std::uint32_t r = open_run[warp][lane], p = open_pos[warp][lane];
        const std::int32_t key = group[std::size_t(r) * run + p];
        // (key, run, position): within a run, lane order is position order.
        mine = (std::uint64_t(std::uint32_t(key) ^ 0x80000000u) << 32) | (std::uint64_t(r) << 8) | std::uint64_t(lane);
      }
      std::uint32_t rank = 0;
      for (int s = 1; s < kWarp; ++s) {
        const std::uint64_t other = __shfl_sync(kFullMask, mine, (lane + s) & (kWarp - 1));
        rank += other < mine;
      }
      const unsigned taken = __ballot_sync(kFullMask, std::uint64_t(lane) < width && rank < t);
#pragma unroll
      for (int i = 0; i < kSlots; ++i) {
        const std::uint32_t w = hi[i] - lo[i];
        const unsigned span = w == 0 ? 0u : (w >= 32 ? kFullMask : ((1u << w) - 1u)) << offset[i];
        lo[i] += __popc(taken & span);
      }
      break;
    }
    if (delta == 0) delta = std::max<std::uint64_t>(8, width / 128);
    const std::uint64_t aim_a = median ? width / 2 : t > delta ? t - delta : t / 2;
    const std::uint64_t aim_b = median ? t : t + delta < width ? t + delta : t + (width - t) / 2;
    // Picks (two loads per open run, issued together).
    std::uint32_t pick_a[kSlots], pick_b[kSlots];
    std::int32_t key_a[kSlots], key_b[kSlots];
    std::uint64_t lane_weight = 0;
#pragma unroll
    for (int i = 0; i < kSlots; ++i) {
      const std::uint32_t w = hi[i] - lo[i];
      lane_weight += w;
      pick_a[i] = pick_b[i] = lo[i];
      key_a[i] = key_b[i] = 0;
      if (w > 0) {
        pick_a[i] = lo[i] + std::uint32_t(median ? w / 2 : std::uint64_t(w) * aim_a / width);
        pick_b[i] = lo[i] + std::uint32_t(std::uint64_t(w) * aim_b / width);
        key_a[i] = at(i, pick_a[i]);
        key_b[i] = at(i, pick_b[i]);
      }
    }
    const Pivot a = weighted_median_pivot<kSlots>(lo, hi, pick_a, key_a, lane_weight, width, lane);
    const Pivot b = weighted_median_pivot<kSlots>(lo, hi, pick_b, key_b, lane_weight, width, lane);
    // Window keys before each pivot, per run: two interleaved binary searches per slot.
    std::uint32_t a_lo[kSlots], a_hi[kSlots], b_lo[kSlots], b_hi[kSlots];
#pragma unroll
    for (int i = 0; i < kSlots; ++i) {
      const int r = lane + kWarp * i;
      a_lo[i] = b_lo[i] = lo[i];
      a_hi[i] = b_hi[i] = hi[i];
      if (r == a.run) a_lo[i] = a_hi[i] = a.pos;
      if (r == b.run) b_lo[i] = b_hi[i] = b.pos;
    }
    for (;;) {
      bool busy = false;
#pragma unroll
      for (int i = 0; i < kSlots; ++i) {
        const int r = lane + kWarp * i;
        if (a_lo[i] < a_hi[i]) {
          busy = true;
          const std::uint32_t mid = a_lo[i] + (a_hi[i] - a_lo[i]) / 2;
          const std::int32_t v = at(i, mid);
          if (r < a.run ? v <= a.key : v < a.key) a_lo[i] = mid + 1;
          else a_hi[i] = mid;
        }
        if (b_lo[i] < b_hi[i]) {
          busy = true;
          const std::uint32_t mid = b_lo[i] + (b_hi[i] - b_lo[i]) / 2;
          const std::int32_t v = at(i, mid);
          if (r < b.run ? v <= b.key : v < b.key) b_lo[i] = mid + 1;
          else b_hi[i] = mid;
        }
      }
      if (!busy) break;
    }
    std::uint64_t ca = 0, cb = 0;
#pragma unroll
    for (int i = 0; i < kSlots; ++i) ca += a_lo[i], cb += b_lo[i];
    const std::uint64_t rank_a = device::warp_sum(ca), rank_b = device::warp_sum(cb);
#pragma unroll
    for (int i = 0; i < kSlots; ++i) {
      const int r = lane + kWarp * i;
      if (rank_a < k) lo[i] = max(lo[i], r == a.run ? a.pos + 1 : a_lo[i]);
      else hi[i] = min(hi[i], r == a.run ? a.pos : a_lo[i]);
      if (rank_b < k) lo[i] = max(lo[i], r == b.run ? b.pos + 1 : b_lo[i]);
      else hi[i] = min(hi[i], r == b.run ? b.pos : b_lo[i]);
    }
    std::uint64_t l2, new_width;
    sums(l2, new_width);
    auto miss = [&](std::uint64_t rank, std::uint64_t aim) {
      const std::uint64_t want = lsum + aim;
      return rank > want ? rank - want : want - rank;
    };
    const std::uint64_t m = median ? miss(rank_b, aim_b) : max(miss(rank_a, aim_a), miss(rank_b, aim_b));
    const double scaled = 2.0 * double(m) * sqrt(double(new_width) / double(width));
    delta = max(std::uint64_t{8}, std::uint64_t(scaled));
    median = 4 * new_width > 3 * width;
  }
  std::uint32_t* out = cuts + task * std::size_t(d);
#pragma unroll
  for (int i = 0; i < kSlots; ++i) {
    const int r = lane + kWarp * i;
    if (r < d) out[r] = use_hi ? hi[i] : lo[i];
  }
}

// ==== the heap: one warp merges its task's share of d runs ====================================================
//
// Node j (1 <= j < d) keeps a sorted buffer of b = 32 keys (lane l holds key l); leaves j = d + r
// read run r from its cut on. For every node j >= 2 the warp also keeps the last key j passed up
// and a word of (started, blocks left): a child with no blocks left is "+infinity" by that flag,
// never by a key value (real keys may equal INT_MAX), and a child that has not passed anything yet
// is "-infinity". pull(j0) is Heapify: walk down choosing the child with the smaller last key
// (004 §7.3.2), take a block at the bottom (a leaf's next 32 keys, or the buffer of a node whose
// children are both exhausted), and on the way back up merge it at every node with that node's
// buffer -- the last phase of a bitonic network on 2b keys, in registers with shuffles -- keeping
// the upper 32 and passing the lower 32 up. A run's last partial block is padded with
// Pad<Key>::value; the pads come out after every real key (or tie with INT_MAX, which writes the
// same values), and only `count` outputs are written.

inline constexpr std::uint32_t kStarted = 1u << 31, kBlocksLeft = kStarted - 1;

// lo <- the lower 32 of (kept ++ x), kept <- the upper 32; both sorted across lanes.
template <class Key>
__device__ __forceinline__ void merge_blocks(Key& kept, Key& x, int lane) {
  const Key reversed = __shfl_sync(kFullMask, x, kWarp - 1 - lane);
  Key lo = reversed < kept ? reversed : kept;
  Key hi = reversed < kept ? kept : reversed;
#pragma unroll
  for (int s = kWarp / 2; s > 0; s >>= 1) {
    const Key plo = __shfl_xor_sync(kFullMask, lo, s), phi = __shfl_xor_sync(kFullMask, hi, s);
    const bool upper = lane & s;
    lo = upper ? (plo < lo ? lo : plo) : (plo < lo ? plo : lo);
    hi = upper ? (phi < hi ? hi : phi) : (phi < hi ? phi : hi);
  }
  x = lo;
  kept = hi;
}

struct DwayKeysIO {
  using Key = std::int32_t;
  const std::int32_t* in;
  std::int32_t* out;
  __device__ __forceinline__ Key load(std::size_t pos) const { return in[pos]; }
  __device__ __forceinline__ void store(std::size_t o, Key k) const { out[o] = k; }
};
struct DwayPairsIO {
  using Key = std::uint64_t;
  const std::int32_t* in;
  const std::uint32_t* values_in;
  std::int32_t* out;
  std::uint32_t* values_out;
  __device__ __forceinline__ Key load(std::size_t pos) const { return device::make_composite(in[pos], std::uint32_t(pos)); }
  __device__ __forceinline__ void store(std::size_t o, Key c) const {
    out[o] = device::composite_key(c);
    values_out[o] = values_in[device::composite_position(c)];
  }
};

template <class IO>
struct WarpHeap {
  using Key = typename IO::Key;
  IO io;
  int d, lane;
  std::size_t gbase;
  std::uint32_t gsize;
  std::size_t run;
  Key* buf;             // (d - 1) x 32
  Key* last;            // 2d
  std::uint32_t* meta;  // 2d
  std::uint32_t* cursor;  // d, relative to gbase

  __device__ std::uint32_t run_end(int r) const {
    const std::size_t e = std::size_t(r + 1) * run;
    return e < gsize ? std::uint32_t(e) : gsize;
  }

  // Node j passed block x up: one block fewer, started, last key = x's largest (lane 31).
  __device__ __forceinline__ void passed(int j, Key top) {
    if (lane == 0) {
      meta[j] = ((meta[j] & kBlocksLeft) - 1) | kStarted;
      last[j] = top;
    }
  }

  __device__ Key pull(int j0) {
    int j = j0;
    bool drain = false;
    while (j < d) {
      const int l = 2 * j, r = l + 1;
      const std::uint32_t ml = meta[l], mr = meta[r];
      const bool done_l = (ml & kBlocksLeft) == 0, done_r = (mr & kBlocksLeft) == 0;
      if (done_l && done_r) {
        drain = true;
        break;
      }
      int c;
      if (done_l) c = r;
      else if (done_r) c = l;
      else if (!(ml & kStarted)) c = l;
      else if (!(mr & kStarted)) c = r;
      else c = last[r] < last[l] ? r : l;
      j = c;
    }
    const std::uint32_t leaf_pos = drain ? 0u : cursor[j - d];
    __syncwarp();  // every lane has read the bookkeeping it needs before lane 0 rewrites it
    Key x;
    if (drain) {
      x = buf[(j - 1) * kWarp + lane];
    } else {
      const std::uint32_t pos = leaf_pos + lane;
      x = pos < run_end(j - d) ? io.load(gbase + pos) : device::Pad<Key>::value;
      if (lane == 0) cursor[j - d] = leaf_pos + kWarp;
    }
    passed(j, __shfl_sync(kFullMask, x, kWarp - 1));
    while (j != j0) {
      const int p = j >> 1;
      Key kept = buf[(p - 1) * kWarp + lane];
      merge_blocks(kept, x, lane);
      buf[(p - 1) * kWarp + lane] = kept;
      passed(p, __shfl_sync(kFullMask, x, kWarp - 1));
      j = p;
    }
    __syncwarp();
    return x;
  }
};

template <class IO>
__global__ void dway_heap_kernel(IO io, std::size_t n, std::size_t run, int d, std::size_t chunk,
                                 const std::uint32_t* __restrict__ cuts, std::size_t tasks) {
  using Key = typename IO::Key;
  extern __shared__ __align__(16) unsigned char heap_smem[];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const std::size_t task = std::size_t(blockIdx.x) * (blockDim.x / kWarp) + warp;
  if (task >= tasks) return;
  unsigned char* base = heap_smem + std::size_t(warp) * dway_shared_bytes_per_warp(d, sizeof(Key));
  const TaskAt ta = task_at(task, n, run, d, chunk);
  WarpHeap<IO> heap;
  heap.io = io;
  heap.d = d;
  heap.lane = lane;
  heap.gbase = ta.gbase;
  heap.gsize = ta.gsize;
  heap.run = run;
  heap.buf = reinterpret_cast<Key*>(base);
  heap.last = heap.buf + std::size_t(d - 1) * kWarp;
  heap.meta = reinterpret_cast<std::uint32_t*>(heap.last + 2 * d);
  heap.cursor = heap.meta + 2 * d;
  // Leaves: run r from its cut; blocks left = ceil(keys left / 32). Then the internal nodes' totals.
  for (int r = lane; r < d; r += kWarp) {
    std::uint32_t c = 0, blocks = 0;
    if (r < ta.runs) {
      c = std::uint32_t(std::size_t(r) * run) + cuts[task * std::size_t(d) + r];
      blocks = (heap.run_end(r) - c + kWarp - 1) / kWarp;
    }
    heap.cursor[r] = c;
    heap.meta[d + r] = blocks;
  }
  __syncwarp();
  for (int first = d / 2; first >= 1; first /= 2) {
    for (int j = first + lane; j < 2 * first; j += kWarp) heap.meta[j] = heap.meta[2 * j] + heap.meta[2 * j + 1];
    __syncwarp();
  }
  // Fill every node's buffer bottom-up (004: Heapify on the nodes in decreasing index order).
  for (int j = d - 1; j >= 1; --j) {
    if (heap.meta[j] & kBlocksLeft) {
      const int c = (heap.meta[2 * j] & kBlocksLeft) ? 2 * j : 2 * j + 1;
      const Key x = heap.pull(c);
      heap.buf[(j - 1) * kWarp + lane] = x;
    }
  }
  for (std::uint32_t o = 0; o < ta.count; o += kWarp) {
    const Key x = heap.pull(1);
    if (o + lane < ta.count) io.store(ta.start + o + lane, x);
  }
}

// Dynamic shared memory of a heap block; above 48 KiB the kernel must opt in (d >= 128 with pairs).
template <class IO>
std::size_t heap_block_bytes(int d) {
  const std::size_t smem = std::size_t(dway_warps_per_block(d)) * dway_shared_bytes_per_warp(d, sizeof(typename IO::Key));
  if (smem > 48 * 1024)
    GPULAB_CUDA_CHECK(cudaFuncSetAttribute(dway_heap_kernel<IO>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  return smem;
}

template <class IO>
void launch_heap(IO io, std::size_t n, std::size_t run, int d, std::size_t chunk, const std::uint32_t* cuts,
                 std::size_t tasks) {
  const int warps = dway_warps_per_block(d);
  const std::size_t smem = heap_block_bytes<IO>(d);
  dway_heap_kernel<IO><<<static_cast<unsigned>(ceil_div(tasks, warps)), warps * kWarp, smem>>>(io, n, run, d, chunk,
                                                                                                    cuts, tasks);
  GPULAB_CHECK_LAUNCH();
}

void launch_partition(const std::int32_t* keys, std::size_t n, std::size_t run, int d, std::size_t chunk, std::size_t tasks,
                      std::uint32_t* cuts) {
  const unsigned blocks = static_cast<unsigned>(ceil_div(tasks, kPartitionWarps));
  const int threads = kPartitionWarps * kWarp;
  if (d <= 32) dway_partition_kernel<1><<<blocks, threads>>>(keys, n, run, d, chunk, tasks, cuts);
  else if (d <= 64) dway_partition_kernel<2><<<blocks, threads>>>(keys, n, run, d, chunk, tasks, cuts);
  else if (d <= 128) dway_partition_kernel<4><<<blocks, threads>>>(keys, n, run, d, chunk, tasks, cuts);
  else dway_partition_kernel<8><<<blocks, threads>>>(keys, n, run, d, chunk, tasks, cuts);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace

void merge_dway(const std::int32_t* d_keys_in, const std::uint32_t* d_values_in, std::int32_t* d_keys_out,
                std::uint32_t* d_values_out, std::size_t n, ShearWorkspace& ws) {
  if ((d_values_in == nullptr) != (d_values_out == nullptr))
    throw std::invalid_argument("merge_dway: values in and values out must both be given or both be null");
  const int d = ws.config.d;
  if (d < kMinFanIn || d > kMaxFanIn || !is_pow2(std::size_t(d)))
    throw std::invalid_argument("merge_dway: d must be a power of two in [2, 256], got " + std::to_string(d));
  const std::size_t requested = ws.config.dway_chunk;
  if (requested != 0 && (requested < kWarp || !is_pow2(requested)))
    throw std::invalid_argument("merge_dway: dway_chunk must be 0 or a power of two >= 32");
  const bool pairs = d_values_in != nullptr;
  if (n >= 0xFFFFFFFFull) throw std::invalid_argument("merge_dway: n must stay below 2^32 - 1");
  if (n == 0) return;
  int passes = 0;
  for (std::size_t run = kTileKeys; run < n; run *= d) ++passes;
  std::int32_t* keys[2] = {d_keys_out, passes > 0 ? ws.take<std::int32_t>(n) : nullptr};
  std::uint32_t* values[2] = {d_values_out, pairs && passes > 0 ? ws.take<std::uint32_t>(n) : nullptr};
  // Cuts for the pass with the most tasks (chunks only grow with the run length).
  std::size_t max_tasks = 0;
  for (std::size_t run = kTileKeys; run < n; run *= d)
    max_tasks = std::max(max_tasks, ceil_div(n, dway_chunk_keys(n, run, d, ws.multiprocessors, requested)));
  std::uint32_t* cuts = passes > 0 ? ws.take<std::uint32_t>(max_tasks * d) : nullptr;
  int cur = passes % 2;
  sort_tiles(ws.config.base_case, d_keys_in, d_values_in, keys[cur], values[cur], n);
  for (std::size_t run = kTileKeys; run < n; run *= d) {
    const std::size_t chunk = dway_chunk_keys(n, run, d, ws.multiprocessors, requested);
    const std::size_t tasks = ceil_div(n, chunk);
    launch_partition(keys[cur], n, run, d, chunk, tasks, cuts);
    if (pairs)
      launch_heap(DwayPairsIO{keys[cur], values[cur], keys[cur ^ 1], values[cur ^ 1]}, n, run, d, chunk, cuts, tasks);
    else
      launch_heap(DwayKeysIO{keys[cur], keys[cur ^ 1]}, n, run, d, chunk, cuts, tasks);
    cur ^= 1;
  }
}

}  // namespace shearsort
