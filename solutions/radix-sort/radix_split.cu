// Reference, part 1 of 3: the CPU sorts and the 1-bit LSD sorts (one pass per bit).
//   cpu               sort_cpu               std::stable_sort keyed on to_ordered: the oracle itself
//   cpu-lsd           sort_cpu_lsd           host LSD radix, r = 8: the CPU speed reference
//   find-max          find_key_bits          seed 003's global tree, on (OR, AND): the bits K to sort
//   split-global      sort_split_global      seed 003 as written: map, work-efficient global scan,
//                                            host read of totalFalses, true indices, scatter
//   split-scan-fused  sort_split_scan_fused  the same split on a single-pass scan with the map in its
//                                            load and totalFalses on the device: 2 launches per bit
//   split-onepass     sort_split_onepass     one histogram launch for every bit, then one launch per
//                                            bit: look-back over the tiles' false counts + scatter
//
// The split (seed 003; Blelloch's split): for bit b, a key whose bit is 0 ("false") goes to f(i),
// the number of false keys before it; a key whose bit is 1 goes to totalFalses + (i - f(i)), the
// number of false keys in all plus the true keys before it. Both sides keep their input order, so
// the pass is stable, which LSD needs: pass b must not undo the order passes 0..b-1 made.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cuda/atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/cuda_check.hpp"
#include "radix_sort.cuh"

namespace radix_sort {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }
__device__ __forceinline__ unsigned lanes_below() { return (1u << lane_id()) - 1u; }

__device__ __forceinline__ std::uint32_t warp_sum(std::uint32_t x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(kFullMask, x, d);
  return x;
}

void check_size(std::size_t n, const char* stage) {
  if (n > kMaxKeys)
    throw std::length_error(std::string(stage) + ": n = " + std::to_string(n) + " is above kMaxKeys");
}

// ---- ping-pong over passes ------------------------------------------------------------------------
//
// Pass 0 reads the input; pass p writes d_out when P - 1 - p is even and the scratch copy
// otherwise, so the last pass always writes d_out and no final copy is needed whatever the parity
// of P. The input is never written. Zero passes: the output is a copy (the poisoned output must
// still be written).
struct PassBuffers {
  const std::uint32_t* keys_in;
  std::uint32_t* keys_out;
  const std::uint32_t* values_in;
  std::uint32_t* values_out;
};

class PingPong {
 public:
  PingPong(const std::uint32_t* keys, std::uint32_t* keys_out, std::uint32_t* keys_tmp, const std::uint32_t* values,
           std::uint32_t* values_out, std::uint32_t* values_tmp, int passes)
      : keys_(keys), keys_out_(keys_out), keys_tmp_(keys_tmp), values_(values), values_out_(values_out),
        values_tmp_(values_tmp), passes_(passes) {}

  PassBuffers pass(int p) const {
    const bool to_out = (passes_ - 1 - p) % 2 == 0;
    PassBuffers b;
    b.keys_out = to_out ? keys_out_ : keys_tmp_;
    b.values_out = values_ ? (to_out ? values_out_ : values_tmp_) : nullptr;
    b.keys_in = p == 0 ? keys_ : (to_out ? keys_tmp_ : keys_out_);
    b.values_in = values_ ? (p == 0 ? values_ : (to_out ? values_tmp_ : values_out_)) : nullptr;
    return b;
  }

 private:
  const std::uint32_t* keys_;
  std::uint32_t *keys_out_, *keys_tmp_;
  const std::uint32_t* values_;
  std::uint32_t *values_out_, *values_tmp_;
  int passes_;
};

void copy_through(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                  std::uint32_t* d_values_out, std::size_t n) {
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_keys_out, d_keys, n * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice));
  if (d_values)
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(d_values_out, d_values, n * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice));
}

// ================================ 2. find-max =======================================================
//
// Seed 003's kernFindMax walks a binary tree in global memory, one launch per level. Two of its
// defects are fixed here. (1) The bit count: 003 takes ceil(log2(max)), which is one short when
// max is a power of two (max = 64 needs 7 bits; bit 6 would never be sorted), undefined for max =
// 0 and 0 for max = 1; and a max says nothing useful about negative i32 or f32 keys (after the
// transform their sign bit is set or not, so K would be 32). The tree combines (OR, AND) pairs of
// the ordered keys instead, and K = 32 - clz(OR ^ AND) = the bits above which all keys agree.
// (2) The tail: 003 only walks the largest power of two <= n and pads with 0. Here node j of level
// d covers [j 2^d, (j+1) 2^d) clipped to n and lives at its last existing element (as in the
// reduction lab's global-tree), so any n works and nothing is padded.

__device__ __forceinline__ uint2 span_leaf(std::uint32_t ordered) { return make_uint2(ordered, ordered); }
__device__ __forceinline__ uint2 span_join(uint2 a, uint2 b) { return make_uint2(a.x | b.x, a.y & b.y); }

__device__ __forceinline__ void write_span(BitSpan* out, uint2 s) {
  *out = BitSpan{s.x, s.y, static_cast<std::uint32_t>(span_bits(s.x, s.y)), 0u};
}

__global__ void span_empty(BitSpan* out) { *out = BitSpan{0u, 0xffffffffu, 0u, 0u}; }

// Level 1 reads the keys (ordered on load) and writes node j at min(2j + 2, n) - 1.
__global__ void span_first_level(const std::uint32_t* __restrict__ keys, std::size_t n, KeyType type,
                                 uint2* __restrict__ nodes, BitSpan* out) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (2 * j >= n) return;
  uint2 s = span_leaf(to_ordered(keys[2 * j], type));
  if (2 * j + 1 < n) s = span_join(s, span_leaf(to_ordered(keys[2 * j + 1], type)));
  if (out) write_span(out, s);
  else nodes[std::min(2 * j + 2, n) - 1] = s;
}

// Level d >= 2: node j joins its children, stored at the left child's last element and at
// min((j+1) 2^d, n) - 1. Nodes without a right child are already in place.
__global__ void span_level(uint2* nodes, std::size_t n, int d, BitSpan* out) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t half = std::size_t{1} << (d - 1);
  const std::size_t left = (2 * j + 1) * half - 1;
  if (left + 1 >= n) return;
  const std::size_t right = std::min((j + 1) * 2 * half, n) - 1;
  const uint2 s = span_join(nodes[left], nodes[right]);
  if (out) write_span(out, s);
  else nodes[right] = s;
}

int tree_levels(std::size_t n) { return std::max(1, gpulab::ceil_log2(n)); }

// `nodes`: n uint2 of scratch (unused when n <= 2).
void launch_span_tree(const std::uint32_t* d_keys, std::size_t n, KeyType type, uint2* nodes, BitSpan* d_span,
                      int block) {
  if (n == 0) {
    span_empty<<<1, 1>>>(d_span);
    GPULAB_CHECK_LAUNCH();
    return;
  }
  const int levels = tree_levels(n);
  span_first_level<<<static_cast<unsigned>(gpulab::ceil_div(gpulab::ceil_div(n, 2), block)), block>>>(
      d_keys, n, type, nodes, levels == 1 ? d_span : nullptr);
  GPULAB_CHECK_LAUNCH();
  for (int d = 2; d <= levels; ++d) {
    const std::size_t half = std::size_t{1} << (d - 1);
    const std::size_t joins = gpulab::ceil_div(n - half, 2 * half);  // nodes with a right child
    span_level<<<static_cast<unsigned>(gpulab::ceil_div(joins, block)), block>>>(nodes, n, d,
                                                                                 d == levels ? d_span : nullptr);
    GPULAB_CHECK_LAUNCH();
  }
}

int checked_block(const SortWorkspace& ws) {
  const int b = ws.config.block;
  if (b < 32 || b > 1024 || b % 32 != 0)
    throw std::invalid_argument("block=" + std::to_string(b) + ": must be a multiple of 32 in [32, 1024]");
  return b;
}

// ================================ 3. split-global (seed 003 as written) =============================
//
// Per bit b (003's kernBoolMaps, its work-efficient scan, kernRadixScatter):
//   map       b[i] = bit b of key i, f[i] = 1 - b[i]      reads n, writes 2n (+ the scan's padding)
//   host      saves f[n-1]                                a device->host copy: a synchronisation
//   scan      exclusive scan of f in place, 003's up-sweep / down-sweep in global memory over the
//             next power of two N: 2 log2 N launches, the root cleared by a memset
//   host      totalFalses = saved f[n-1] + scanned f[n-1] a second copy, a second synchronisation
//   t         t[i] = i - f[i] + totalFalses               reads n, writes n
//   scatter   out[b[i] ? t[i] : f[i]] = in[i]             reads 4n, writes n
// Launches: find-max's levels + K (2 log2 N + 3); 2K + 1 host synchronisations. Seed 003 keeps b,
// f and t (3 arrays) where the scanned f alone would do: the model's
// bytes per key show the cost; split-scan-fused removes it.

__global__ void split_map(const std::uint32_t* __restrict__ keys, std::size_t n, std::size_t padded, KeyType type,
                          int bit, std::uint32_t* __restrict__ b, std::uint32_t* __restrict__ f) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= padded) return;
  if (i < n) {
    const std::uint32_t one = (to_ordered(keys[i], type) >> bit) & 1u;
    b[i] = one;
    f[i] = 1u - one;
  } else {
    f[i] = 0;  // the scan's padding up to the power of two
  }
}

// Up-sweep level with stride s = 2^(d+1): x[(j+1)s - 1] += x[(j+1)s - 1 - s/2].
__global__ void scan_up_level(std::uint32_t* x, std::size_t nodes, std::size_t stride) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (j >= nodes) return;
  const std::size_t right = (j + 1) * stride - 1;
  x[right] += x[right - stride / 2];
}

// Down-sweep level: the left child gets the parent's prefix, the right child prefix + left sum.
__global__ void scan_down_level(std::uint32_t* x, std::size_t nodes, std::size_t stride) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (j >= nodes) return;
  const std::size_t right = (j + 1) * stride - 1;
  const std::size_t left = right - stride / 2;
  const std::uint32_t left_sum = x[left];
  x[left] = x[right];
  x[right] += left_sum;
}

__global__ void split_true_index(const std::uint32_t* __restrict__ f, std::size_t n, std::uint32_t total_falses,
                                 std::uint32_t* __restrict__ t) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) t[i] = static_cast<std::uint32_t>(i) - f[i] + total_falses;
}

template <bool kPairs>
__global__ void split_scatter_global(const std::uint32_t* __restrict__ keys_in, const std::uint32_t* __restrict__ values_in,
                                     std::size_t n, const std::uint32_t* __restrict__ b,
                                     const std::uint32_t* __restrict__ t, const std::uint32_t* __restrict__ f,
                                     std::uint32_t* __restrict__ keys_out, std::uint32_t* __restrict__ values_out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const std::size_t dest = b[i] ? t[i] : f[i];
  keys_out[dest] = keys_in[i];
  if constexpr (kPairs) values_out[dest] = values_in[i];
}

unsigned grid_for(std::size_t threads, int block) {
  return static_cast<unsigned>(std::max<std::size_t>(1, gpulab::ceil_div(threads, block)));
}

// The work-efficient exclusive scan of seed 003 on x[0, padded), padded a power of two.
void work_efficient_scan_global(std::uint32_t* x, std::size_t padded, int block) {
  for (std::size_t stride = 2; stride <= padded; stride *= 2) {
    scan_up_level<<<grid_for(padded / stride, block), block>>>(x, padded / stride, stride);
    GPULAB_CHECK_LAUNCH();
  }
  GPULAB_CUDA_CHECK(cudaMemsetAsync(x + padded - 1, 0, sizeof(std::uint32_t)));  // the root: not a launch
  for (std::size_t stride = padded; stride >= 2; stride /= 2) {
    scan_down_level<<<grid_for(padded / stride, block), block>>>(x, padded / stride, stride);
    GPULAB_CHECK_LAUNCH();
  }
}

std::uint32_t read_word(const std::uint32_t* d_word) {
  std::uint32_t h = 0;
  GPULAB_CUDA_CHECK(cudaMemcpy(&h, d_word, sizeof(h), cudaMemcpyDeviceToHost));  // synchronises
  return h;
}

// ================================ shared by split-scan-fused and split-onepass ======================
//
// A tile is kSplitTile keys, kSplitItems per thread, striped per warp: lane l of warp w holds item
// j = the key at tile * kSplitTile + w * 32 kSplitItems + 32 j + l. Each load instruction of a warp
// reads 128 contiguous bytes, and the order (w, j, lane) is the input order, so a ballot of the
// "false" flags and a popcount of the lanes below give each key its rank among the false keys of
// its warp (a scan of 0/1 flags in two instructions), stable by construction.
// Tiles are numbered by an atomic counter in the order blocks start (never blockIdx.x): a block
// then only ever waits in its look-back for tiles that started before it, which are resident, so
// the look-back makes progress whatever order the hardware runs blocks in.

constexpr int kSplitWarps = kSplitThreads / 32;
constexpr int kSplitWarpKeys = 32 * kSplitItems;

struct SplitRanks {
  std::uint32_t keys[kSplitItems];
  std::uint32_t falses_before[kSplitItems];  // false keys before item j in this warp
  unsigned ones = 0;                         // bit j: item j's key has the bit set
  std::uint32_t warp_falses = 0;
};

__device__ __forceinline__ std::size_t split_index(std::size_t tile, int j) {
  return tile * kSplitTile + static_cast<std::size_t>(warp_id()) * kSplitWarpKeys + 32 * j + lane_id();
}

template <bool kPairs>
__device__ __forceinline__ void load_split_tile(const std::uint32_t* __restrict__ keys, const std::uint32_t* __restrict__ values,
                                                std::size_t n, std::size_t tile, std::uint32_t (&k)[kSplitItems],
                                                std::uint32_t (&v)[kSplitItems]) {
#pragma unroll
  for (int j = 0; j < kSplitItems; ++j) {
    const std::size_t i = split_index(tile, j);
    k[j] = i < n ? keys[i] : 0u;
    if constexpr (kPairs) v[j] = i < n ? values[i] : 0u;
  }
}

// The map fused into the load: flags and ranks of bit `bit` (keys past n are neither false nor true).
__device__ __forceinline__ void rank_split_tile(SplitRanks& r, std::size_t n, std::size_t tile, KeyType type, int bit) {
  std::uint32_t running = 0;
#pragma unroll
  for (int j = 0; j < kSplitItems; ++j) {
    const bool valid = split_index(tile, j) < n;
    const bool one = (to_ordered(r.keys[j], type) >> bit) & 1u;
    const unsigned falses = __ballot_sync(kFullMask, valid && !one);
    r.falses_before[j] = running + __popc(falses & lanes_below());
    running += __popc(falses);
    r.ones |= static_cast<unsigned>(one) << j;
  }
  r.warp_falses = running;
}

// ---- decoupled look-back over one count per tile (Merrill & Garland; the scan lab's single-pass) ---
// A descriptor is one 64-bit word, status in the high half and the count in the low half, written
// and read with single relaxed atomics: a reader never sees a status with a stale count, and no
// other data hangs on it, so no fence is needed.
constexpr unsigned long long kStatusAggregate = 1ull << 32, kStatusPrefix = 2ull << 32;

__device__ __forceinline__ void publish(unsigned long long* descriptors, std::size_t tile, unsigned long long status,
                                        std::uint32_t count) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> d(descriptors[tile]);
  d.store(status | count, cuda::memory_order_relaxed);
}

// One warp: the sum of the counts of all tiles before `tile`. Lane l reads tile - 1 - l - 32 k; the
// nearest predecessor with an inclusive prefix ends the walk.
__device__ std::uint32_t look_back(unsigned long long* descriptors, std::size_t tile) {
  std::uint32_t exclusive = 0;
  long long window = static_cast<long long>(tile) - 1;
  while (true) {
    const long long predecessor = window - lane_id();
    unsigned long long word = kStatusPrefix;  // before tile 0: an empty prefix
    if (predecessor >= 0) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> d(descriptors[predecessor]);
      do word = d.load(cuda::memory_order_relaxed);
      while ((word >> 32) == 0);
    }
    const std::uint32_t count = static_cast<std::uint32_t>(word);
    const unsigned prefixes = __ballot_sync(kFullMask, (word >> 32) == 2);
    if (prefixes != 0) {
      const int nearest = __ffs(prefixes) - 1;
      return exclusive + warp_sum(lane_id() <= nearest ? count : 0u);
    }
    exclusive += warp_sum(count);
    window -= 32;
  }
}

// The block's part: warp totals -> the warp's offset in the tile; warp 0 publishes the tile's
// count, looks back, publishes its inclusive prefix. Returns (tile's exclusive prefix + warp offset).
struct SplitShared {
  std::uint32_t warp_falses[kSplitWarps];
  std::uint32_t tile_exclusive;
  unsigned tile;
};

__device__ __forceinline__ std::uint32_t split_tile_offset(SplitShared& s, const SplitRanks& r,
                                                           unsigned long long* descriptors, std::size_t tile,
                                                           std::uint32_t& tile_falses) {
  if (lane_id() == 0) s.warp_falses[warp_id()] = r.warp_falses;
  __syncthreads();
  std::uint32_t before = 0, total = 0;
#pragma unroll
  for (int w = 0; w < kSplitWarps; ++w) {
    const std::uint32_t c = s.warp_falses[w];  // same word in every lane: a broadcast
    before += w < warp_id() ? c : 0u;
    total += c;
  }
  tile_falses = total;
  if (warp_id() == 0) {
    std::uint32_t exclusive = 0;
    if (tile == 0) {
      if (lane_id() == 0) publish(descriptors, tile, kStatusPrefix, total);
    } else {
      if (lane_id() == 0) publish(descriptors, tile, kStatusAggregate, total);
      exclusive = look_back(descriptors, tile);
      if (lane_id() == 0) publish(descriptors, tile, kStatusPrefix, exclusive + total);
    }
    if (lane_id() == 0) s.tile_exclusive = exclusive;
  }
  __syncthreads();
  return s.tile_exclusive + before;
}

__device__ __forceinline__ unsigned next_tile(SplitShared& s, unsigned* tile_counter) {
  if (threadIdx.x == 0) s.tile = atomicAdd(tile_counter, 1u);
  __syncthreads();
  return s.tile;
}

// Per-sort look-back state: one descriptor per tile per pass and one tile counter per pass, all
// cleared by one memset (a memset is not a kernel launch).
struct LookBackState {
  unsigned long long* descriptors = nullptr;  // passes x tiles
  unsigned* counters = nullptr;               // passes
  std::size_t tiles = 0;
};

LookBackState take_look_back_state(SortWorkspace& ws, int passes, std::size_t tiles, std::size_t extra_words,
                                   std::uint32_t** extra) {
  LookBackState st;
  st.tiles = tiles;
  // One piece so that one memset clears it: descriptors, then counters, then `extra_words` words.
  const std::size_t descriptor_bytes = static_cast<std::size_t>(passes) * tiles * sizeof(unsigned long long);
  const std::size_t bytes = descriptor_bytes + (static_cast<std::size_t>(passes) + extra_words) * sizeof(std::uint32_t);
  unsigned char* base = ws.take<unsigned char>(bytes, 256);
  st.descriptors = reinterpret_cast<unsigned long long*>(base);
  st.counters = reinterpret_cast<unsigned*>(base + descriptor_bytes);
  if (extra) *extra = reinterpret_cast<std::uint32_t*>(st.counters + passes);
  GPULAB_CUDA_CHECK(cudaMemsetAsync(base, 0, bytes));
  return st;
}

// ================================ 4. split-scan-fused ================================================
//
// Per bit two launches: the scan (single pass, decoupled look-back) of the false flags, computed
// from the keys as they are loaded (003's map kernel and its b / f arrays disappear), writing the
// exclusive false count f[i]; the block of the last tile also writes totalFalses, on the device.
// Then the scatter reads key i and f[i]. Bytes per bit: the scan reads n and writes n words, the
// scatter reads 2n and writes n: 5n words (+2n with values), no host read.

__global__ void __launch_bounds__(kSplitThreads)
    split_scan_falses(const std::uint32_t* __restrict__ keys, std::size_t n, KeyType type, int bit,
                      std::uint32_t* __restrict__ falses, std::uint32_t* __restrict__ total_falses,
                      unsigned long long* descriptors, unsigned* tile_counter) {
  __shared__ SplitShared s;
  const std::size_t tile = next_tile(s, tile_counter);
  SplitRanks r;
  std::uint32_t unused[kSplitItems];
  load_split_tile<false>(keys, nullptr, n, tile, r.keys, unused);
  rank_split_tile(r, n, tile, type, bit);
  std::uint32_t tile_falses;
  const std::uint32_t offset = split_tile_offset(s, r, descriptors, tile, tile_falses);
#pragma unroll
  for (int j = 0; j < kSplitItems; ++j) {
    const std::size_t i = split_index(tile, j);
    if (i < n) falses[i] = offset + r.falses_before[j];
  }
  if (threadIdx.x == 0 && (tile + 1) * kSplitTile >= n) *total_falses = s.tile_exclusive + tile_falses;
}

// 4 consecutive elements per thread: 128-bit loads of keys, f (and values).
template <bool kPairs>
__global__ void __launch_bounds__(256)
    split_scatter_fused(const std::uint32_t* __restrict__ keys_in, const std::uint32_t* __restrict__ values_in,
                        std::size_t n, KeyType type, int bit, const std::uint32_t* __restrict__ falses,
                        const std::uint32_t* __restrict__ total_falses, std::uint32_t* __restrict__ keys_out,
                        std::uint32_t* __restrict__ values_out) {
  const std::size_t i0 = 4 * (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x);
  if (i0 >= n) return;
  std::uint32_t k[4], f[4], v[4];
  if (i0 + 3 < n) {
    const uint4 kv = *reinterpret_cast<const uint4*>(keys_in + i0);
    const uint4 fv = *reinterpret_cast<const uint4*>(falses + i0);
    k[0] = kv.x, k[1] = kv.y, k[2] = kv.z, k[3] = kv.w;
    f[0] = fv.x, f[1] = fv.y, f[2] = fv.z, f[3] = fv.w;
    if constexpr (kPairs) {
      const uint4 vv = *reinterpret_cast<const uint4*>(values_in + i0);
      v[0] = vv.x, v[1] = vv.y, v[2] = vv.z, v[3] = vv.w;
    }
  } else {
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      k[c] = i0 + c < n ? keys_in[i0 + c] : 0u;
      f[c] = i0 + c < n ? falses[i0 + c] : 0u;
      if constexpr (kPairs) v[c] = i0 + c < n ? values_in[i0 + c] : 0u;
    }
  }
  const std::uint32_t total = *total_falses;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const std::size_t i = i0 + c;
    if (i >= n) break;
    const bool one = (to_ordered(k[c], type) >> bit) & 1u;
    const std::size_t dest = one ? static_cast<std::size_t>(total) + (i - f[c]) : f[c];
    keys_out[dest] = k[c];
    if constexpr (kPairs) values_out[dest] = v[c];
  }
}

// ================================ 5. split-onepass ===================================================
//
// Every bit's totalFalses is known before the first pass (one launch counts the zeros of all bits:
// the Onesweep idea with r = 1), so a pass needs no second launch: the tile's look-back gives its
// false keys' offset and the keys go straight from registers to their places. A warp's 32 keys of
// one item land in two contiguous runs (its false keys and its true keys). Bytes: n words for the
// count, then 2n per bit (+2n with values).

// ones[b] += number of keys with bit b set, for b < bits. Lane b of a warp counts bit b: a ballot
// over the warp's 32 keys and a popcount give 32 keys' bit b in two instructions.
__global__ void __launch_bounds__(256)
    count_one_bits(const std::uint32_t* __restrict__ keys, std::size_t n, KeyType type, int bits,
                   std::uint32_t* __restrict__ ones) {
  __shared__ std::uint32_t block_ones[32];
  if (threadIdx.x < 32) block_ones[threadIdx.x] = 0;
  __syncthreads();
  std::uint32_t mine = 0;  // lane b: keys of this thread's warp with bit b set
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i - lane_id() < n; i += stride) {
    const std::uint32_t key = i < n ? to_ordered(keys[i], type) : 0u;
    const bool valid = i < n;
#pragma unroll
    for (int b = 0; b < 32; ++b) {
      const unsigned set = __ballot_sync(kFullMask, valid && ((key >> b) & 1u));
      if (lane_id() == b) mine += __popc(set);
    }
  }
  if (lane_id() < bits) atomicAdd(&block_ones[lane_id()], mine);
  __syncthreads();
  if (threadIdx.x < static_cast<unsigned>(bits)) atomicAdd(&ones[threadIdx.x], block_ones[threadIdx.x]);
}

template <bool kPairs>
__global__ void __launch_bounds__(kSplitThreads)
    split_onepass_pass(const std::uint32_t* __restrict__ keys_in, const std::uint32_t* __restrict__ values_in,
                       std::uint32_t* __restrict__ keys_out, std::uint32_t* __restrict__ values_out, std::size_t n,
                       KeyType type, int bit, const std::uint32_t* __restrict__ ones,
                       unsigned long long* descriptors, unsigned* tile_counter) {
  __shared__ SplitShared s;
  const std::size_t tile = next_tile(s, tile_counter);
  SplitRanks r;
  std::uint32_t v[kSplitItems];
  load_split_tile<kPairs>(keys_in, values_in, n, tile, r.keys, v);
  rank_split_tile(r, n, tile, type, bit);
  std::uint32_t tile_falses;
  const std::uint32_t offset = split_tile_offset(s, r, descriptors, tile, tile_falses);
  const std::size_t total_falses = n - ones[bit];
#pragma unroll
  for (int j = 0; j < kSplitItems; ++j) {
    const std::size_t i = split_index(tile, j);
    if (i >= n) continue;
    const std::size_t falses_before = offset + r.falses_before[j];
    const std::size_t dest = (r.ones >> j) & 1u ? total_falses + (i - falses_before) : falses_before;
    keys_out[dest] = r.keys[j];
    if constexpr (kPairs) values_out[dest] = v[j];
  }
}

}  // namespace

// ---- 1. cpu and cpu-lsd ----------------------------------------------------------------------------

// std::stable_sort of (masked ordered key, index) pairs by the key alone: equal keys keep their input
// order, no float is ever compared (operator< on NaN is not a strict weak order), and the sort runs
// over one contiguous array (a comparator that looked the keys up by index would jump around memory).
void sort_cpu(const std::uint32_t* keys, std::uint32_t* keys_out, const std::uint32_t* values,
              std::uint32_t* values_out, std::size_t n, const SortConfig& config) {
  const std::uint32_t mask = config.end_bit >= 32 ? 0xffffffffu : ((1u << config.end_bit) - 1u);
  std::vector<std::uint64_t> order(n);
  for (std::size_t i = 0; i < n; ++i)
    order[i] = (std::uint64_t{to_ordered(keys[i], config.key) & mask} << 32) | static_cast<std::uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [](std::uint64_t a, std::uint64_t b) { return (a >> 32) < (b >> 32); });
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from = static_cast<std::uint32_t>(order[i]);
    keys_out[i] = keys[from];
    if (values) values_out[i] = values[from];
  }
}

void sort_cpu_lsd(const std::uint32_t* keys, std::uint32_t* keys_out, const std::uint32_t* values,
                  std::uint32_t* values_out, std::size_t n, const SortConfig& config) {
  constexpr int kBits = 8;
  const int passes = pass_count(config.end_bit, kBits);
  if (n == 0) return;
  if (passes == 0) {
    std::copy(keys, keys + n, keys_out);
    if (values) std::copy(values, values + n, values_out);
    return;
  }
  std::vector<std::uint32_t> keys_tmp(n), values_tmp(values ? n : 0);
  for (int p = 0; p < passes; ++p) {
    const bool to_out = (passes - 1 - p) % 2 == 0;
    std::uint32_t* kd = to_out ? keys_out : keys_tmp.data();
    std::uint32_t* vd = values ? (to_out ? values_out : values_tmp.data()) : nullptr;
    const std::uint32_t* ks = p == 0 ? keys : (to_out ? keys_tmp.data() : keys_out);
    const std::uint32_t* vs = values ? (p == 0 ? values : (to_out ? values_tmp.data() : values_out)) : nullptr;
    const int shift = p * kBits, bits = pass_bits(config.end_bit, kBits, p);
    std::size_t count[1u << kBits] = {};
    for (std::size_t i = 0; i < n; ++i) ++count[digit_of(to_ordered(ks[i], config.key), shift, bits)];
    std::size_t offset = 0;
    for (auto& c : count) {
      const std::size_t here = c;
      c = offset;
      offset += here;
    }
    for (std::size_t i = 0; i < n; ++i) {  // in input order: stable
      const std::size_t dest = count[digit_of(to_ordered(ks[i], config.key), shift, bits)]++;
      kd[dest] = ks[i];
      if (values) vd[dest] = vs[i];
    }
  }
}

// ---- 2. find-max -----------------------------------------------------------------------------------

void find_key_bits(const std::uint32_t* d_keys, std::size_t n, BitSpan* d_span, SortWorkspace& ws) {
  check_size(n, "find-max");
  const int block = checked_block(ws);
  uint2* nodes = n > 2 ? ws.take<uint2>(n) : nullptr;
  launch_span_tree(d_keys, n, ws.config.key, nodes, d_span, block);
}

// ---- 3. split-global -------------------------------------------------------------------------------

void sort_split_global(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                       std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  check_size(n, "split-global");
  if (n == 0) return;
  const int block = checked_block(ws);
  const KeyType type = ws.config.key;
  const std::size_t padded = std::size_t{1} << gpulab::ceil_log2(n);
  std::uint32_t* keys_tmp = ws.take<std::uint32_t>(n);
  std::uint32_t* values_tmp = d_values ? ws.take<std::uint32_t>(n) : nullptr;
  std::uint32_t* f = ws.take<std::uint32_t>(padded);
  // b and t (2n words) are one piece: find-max's tree (n uint2) uses it first.
  uint2* region = ws.take<uint2>(n);
  std::uint32_t* b = reinterpret_cast<std::uint32_t*>(region);
  std::uint32_t* t = b + n;
  BitSpan* span = ws.take<BitSpan>(1);

  // Seed 003 first finds the key width, then loops on the host over the bits: the host needs K.
  launch_span_tree(d_keys, n, type, region, span, block);
  BitSpan h{};
  GPULAB_CUDA_CHECK(cudaMemcpy(&h, span, sizeof(h), cudaMemcpyDeviceToHost));  // synchronises
  const int passes = std::min(static_cast<int>(h.bits), ws.config.end_bit);
  if (passes <= 0) {
    copy_through(d_keys, d_keys_out, d_values, d_values_out, n);
    return;
  }
  const PingPong pp(d_keys, d_keys_out, keys_tmp, d_values, d_values_out, values_tmp, passes);
  for (int bit = 0; bit < passes; ++bit) {
    const PassBuffers io = pp.pass(bit);
    split_map<<<grid_for(padded, block), block>>>(io.keys_in, n, padded, type, bit, b, f);
    GPULAB_CHECK_LAUNCH();
    const std::uint32_t last_false = read_word(f + n - 1);  // "we save the last value of f_arr"
    work_efficient_scan_global(f, padded, block);
    const std::uint32_t total_falses = last_false + read_word(f + n - 1);
    split_true_index<<<grid_for(n, block), block>>>(f, n, total_falses, t);
    GPULAB_CHECK_LAUNCH();
    if (d_values)
      split_scatter_global<true><<<grid_for(n, block), block>>>(io.keys_in, io.values_in, n, b, t, f, io.keys_out,
                                                                io.values_out);
    else
      split_scatter_global<false><<<grid_for(n, block), block>>>(io.keys_in, nullptr, n, b, t, f, io.keys_out, nullptr);
    GPULAB_CHECK_LAUNCH();
  }
}

// ---- 4. split-scan-fused ---------------------------------------------------------------------------

void sort_split_scan_fused(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                           std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  check_size(n, "split-scan-fused");
  if (n == 0) return;
  const int passes = ws.config.end_bit;
  if (passes == 0) {
    copy_through(d_keys, d_keys_out, d_values, d_values_out, n);
    return;
  }
  const KeyType type = ws.config.key;
  const std::size_t tiles = gpulab::ceil_div(n, kSplitTile);
  std::uint32_t* keys_tmp = ws.take<std::uint32_t>(n);
  std::uint32_t* values_tmp = d_values ? ws.take<std::uint32_t>(n) : nullptr;
  std::uint32_t* falses = ws.take<std::uint32_t>(n);
  std::uint32_t* totals = nullptr;  // one totalFalses per bit
  const LookBackState st = take_look_back_state(ws, passes, tiles, static_cast<std::size_t>(passes), &totals);
  const PingPong pp(d_keys, d_keys_out, keys_tmp, d_values, d_values_out, values_tmp, passes);
  const unsigned scatter_grid = static_cast<unsigned>(gpulab::ceil_div(n, 4 * 256));
  for (int bit = 0; bit < passes; ++bit) {
    const PassBuffers io = pp.pass(bit);
    split_scan_falses<<<static_cast<unsigned>(tiles), kSplitThreads>>>(io.keys_in, n, type, bit, falses, totals + bit,
                                                                       st.descriptors + bit * tiles, st.counters + bit);
    GPULAB_CHECK_LAUNCH();
    if (d_values)
      split_scatter_fused<true><<<scatter_grid, 256>>>(io.keys_in, io.values_in, n, type, bit, falses, totals + bit,
                                                       io.keys_out, io.values_out);
    else
      split_scatter_fused<false><<<scatter_grid, 256>>>(io.keys_in, nullptr, n, type, bit, falses, totals + bit,
                                                        io.keys_out, nullptr);
    GPULAB_CHECK_LAUNCH();
  }
}

// ---- 5. split-onepass ------------------------------------------------------------------------------

void sort_split_onepass(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                        std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  check_size(n, "split-onepass");
  if (n == 0) return;
  const int passes = ws.config.end_bit;
  if (passes == 0) {
    copy_through(d_keys, d_keys_out, d_values, d_values_out, n);
    return;
  }
  const KeyType type = ws.config.key;
  const std::size_t tiles = gpulab::ceil_div(n, kSplitTile);
  std::uint32_t* keys_tmp = ws.take<std::uint32_t>(n);
  std::uint32_t* values_tmp = d_values ? ws.take<std::uint32_t>(n) : nullptr;
  std::uint32_t* ones = nullptr;  // 32 counters
  const LookBackState st = take_look_back_state(ws, passes, tiles, 32, &ones);
  // The count: a grid-stride loop over at most 8 blocks per SM.
  const std::size_t count_grid = std::min<std::size_t>(gpulab::ceil_div(n, 256), 8 * static_cast<std::size_t>(ws.multiprocessors));
  count_one_bits<<<static_cast<unsigned>(count_grid), 256>>>(d_keys, n, type, passes, ones);
  GPULAB_CHECK_LAUNCH();
  const PingPong pp(d_keys, d_keys_out, keys_tmp, d_values, d_values_out, values_tmp, passes);
  for (int bit = 0; bit < passes; ++bit) {
    const PassBuffers io = pp.pass(bit);
    if (d_values)
      split_onepass_pass<true><<<static_cast<unsigned>(tiles), kSplitThreads>>>(
          io.keys_in, io.values_in, io.keys_out, io.values_out, n, type, bit, ones, st.descriptors + bit * tiles,
          st.counters + bit);
    else
      split_onepass_pass<false><<<static_cast<unsigned>(tiles), kSplitThreads>>>(
          io.keys_in, nullptr, io.keys_out, nullptr, n, type, bit, ones, st.descriptors + bit * tiles,
          st.counters + bit);
    GPULAB_CHECK_LAUNCH();
  }
}

}  // namespace radix_sort
