// Reference: stages 6, 7 and 10 of the scan lab, the scans that read each element from global
// memory once or twice instead of O(log n) times.
//   three-round   reduce / spine / scan over tiles (seed 000 §4), 128-bit loads
//   alpha-matrix  the same three rounds with seed 004's alpha x (b + 1) matrix per warp (§6, Alg. 8)
//   single-pass   decoupled look-back (Merrill & Garland 2016): one launch, 2n words of traffic
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <cuda/atomic>
#include <utility>

#include "gpulab/cuda_check.hpp"
#include "scan.cuh"

namespace scan {

// The kit's integer helpers by their short names, in this file only: the interface leaves them in
// gpulab:: (gpulab/math.hpp) so that a submission may define helpers of its own by these names.
using gpulab::ceil_div;

namespace {

constexpr int kVectorsPerThread = 4;  // int4 loads in flight per thread: 16 ints
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }

__device__ __forceinline__ int warp_inclusive_scan(int x) {
  const int lane = lane_id();
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int y = __shfl_up_sync(kFullMask, x, d);
    if (lane >= d) x += y;
  }
  return x;
}

__device__ __forceinline__ int warp_sum(int x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(kFullMask, x, d);
  return x;
}

// 4 consecutive ints at in[i], zeros past `end`. i is a multiple of 4 and in is 16-byte aligned,
// so the fast path is one 128-bit load (seed 000, Appendix B: vector loads fill the memory pipes
// with a quarter of the instructions).
// kStreaming: the "evict first" cache hint (ld.global.cs / st.global.cs): every element is touched
// once, so there is no point keeping it in the L2.
template <bool kStreaming = false>
__device__ __forceinline__ int4 load_vector(const int* __restrict__ in, std::size_t i, std::size_t end) {
  if (i + 3 < end) {
    if constexpr (kStreaming) return __ldcs(reinterpret_cast<const int4*>(in + i));
    else return *reinterpret_cast<const int4*>(in + i);
  }
  int4 v{0, 0, 0, 0};
  if (i < end) v.x = in[i];
  if (i + 1 < end) v.y = in[i + 1];
  if (i + 2 < end) v.z = in[i + 2];
  return v;
}

template <bool kStreaming = false>
__device__ __forceinline__ void store_vector(int* __restrict__ out, std::size_t i, std::size_t end, int4 v) {
  if (i + 3 < end) {
    if constexpr (kStreaming) __stcs(reinterpret_cast<int4*>(out + i), v);
    else *reinterpret_cast<int4*>(out + i) = v;
    return;
  }
  if (i < end) out[i] = v.x;
  if (i + 1 < end) out[i + 1] = v.y;
  if (i + 2 < end) out[i + 2] = v.z;
}

__device__ __forceinline__ int vector_sum(int4 v) { return v.x + v.y + v.z + v.w; }

// ---- the page: kBlock threads x 4 kVectors ints, in registers ------------------------------------
//
// Warp w of the block owns the S = 128 kVectors consecutive elements [w S, (w + 1) S) of the
// page; its lane l holds the vectors at w S + 128 j + 4 l, j = 0 .. kVectors-1. Every load
// instruction of a warp therefore reads 512 contiguous bytes, and the scan order of the page is
// (warp, j, lane, x..w).

template <int kBlock, int kVectors = kVectorsPerThread>
struct PageScan {
  static constexpr int kWarps = kBlock / 32;
  static constexpr int kWarpSegment = 128 * kVectors;
  static constexpr int kPage = kBlock * 4 * kVectors;

  static __device__ __forceinline__ std::size_t vector_index(std::size_t page_base, int j) {
    return page_base + static_cast<std::size_t>(warp_id()) * kWarpSegment + j * 128 + 4 * lane_id();
  }

  template <bool kStreaming = false>
  static __device__ __forceinline__ void load(const int* __restrict__ in, std::size_t page_base, std::size_t end,
                                              int4 (&v)[kVectors]) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) v[j] = load_vector<kStreaming>(in, vector_index(page_base, j), end);
  }

  template <bool kStreaming = false>
  static __device__ __forceinline__ void store(int* __restrict__ out, std::size_t page_base, std::size_t end,
                                               const int4 (&v)[kVectors]) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) store_vector<kStreaming>(out, vector_index(page_base, j), end, v[j]);
  }

  // Phase 1: the warp scans its segment in registers (kVectors interleaved shuffle scans, one per j)
  // and publishes its total in warp_totals[warp]. `within_warp` receives, per j, the exclusive
  // prefix of this lane's vector inside the warp's segment.
  static __device__ __forceinline__ void scan_warp_segment(const int4 (&v)[kVectors],
                                                           int (&within_warp)[kVectors],
                                                           int* warp_totals) {
    int sum[kVectors], inclusive[kVectors];
#pragma unroll
    for (int j = 0; j < kVectors; ++j) inclusive[j] = sum[j] = vector_sum(v[j]);
    const int lane = lane_id();
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
        const int y = __shfl_up_sync(kFullMask, inclusive[j], d);
        if (lane >= d) inclusive[j] += y;
      }
    }
    int before = 0;
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      within_warp[j] = before + inclusive[j] - sum[j];
      before += __shfl_sync(kFullMask, inclusive[j], 31);
    }
    if (lane == 0) warp_totals[warp_id()] = before;
  }

  // Phase 2 (after a barrier): the warps' totals give each warp its offset in the page and the
  // page total; every lane reads the same word, a broadcast.
  static __device__ __forceinline__ int warp_offset(const int* warp_totals, int& page_total) {
    int offset = 0, total = 0;
    const int warp = warp_id();
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const int t = warp_totals[w];
      offset += w < warp ? t : 0;
      total += t;
    }
    page_total = total;
    return offset;
  }

  // Phase 3: each element becomes its exclusive prefix plus `base`.
  static __device__ __forceinline__ void apply(int4 (&v)[kVectors], const int (&within_warp)[kVectors],
                                               int base) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const int4 x = v[j];
      int4 e;
      e.x = base + within_warp[j];
      e.y = e.x + x.x;
      e.z = e.y + x.y;
      e.w = e.z + x.z;
      v[j] = e;
    }
  }
};

// ---- round 1: reduce. Block `tile` sums in[tile * tile_size, ...) into tile_sums[tile] --------
//
// tile_size is a multiple of 4. The block walks its tile in chunks of kBlock * 4 kVectors elements
// from the last chunk to the first: when round 3 starts at the front of every tile, the chunks read
// last here are still in the L2 (a cache the PEM model does not have; it helps most when n * 4
// bytes is not much larger than the L2).
template <int kBlock, int kVectors = kVectorsPerThread>
__global__ void __launch_bounds__(kBlock) reduce_tiles(const int* __restrict__ in, std::size_t n, std::size_t tile_size,
                                                       int* __restrict__ tile_sums) {
  __shared__ int warp_sums[kBlock / 32];
  constexpr std::size_t kChunk = static_cast<std::size_t>(kBlock) * 4 * kVectors;
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * tile_size;
  const std::size_t end = begin + tile_size < n ? begin + tile_size : n;
  const std::size_t chunks = ceil_div(end - begin, kChunk);
  int sum = 0;
  for (std::size_t c = chunks; c-- > 0;) {
    int4 v[kVectors];
#pragma unroll
    for (int j = 0; j < kVectors; ++j)
      v[j] = load_vector(in, begin + c * kChunk + 4 * (static_cast<std::size_t>(j) * kBlock + threadIdx.x), end);
#pragma unroll
    for (int j = 0; j < kVectors; ++j) sum += vector_sum(v[j]);
  }
  sum = warp_sum(sum);
  if (lane_id() == 0) warp_sums[warp_id()] = sum;
  __syncthreads();
  if (warp_id() == 0) {
    int s = lane_id() < kBlock / 32 ? warp_sums[lane_id()] : 0;
    s = warp_sum(s);
    if (lane_id() == 0) tile_sums[blockIdx.x] = s;
  }
}

// ---- round 2: spine. One block of 1024 threads scans `count` tile sums in place (seed 000 §4
// runs it on a single multiprocessor: the input is only p values).
__global__ void __launch_bounds__(1024) spine_scan(int* data, std::size_t count) {
  __shared__ int warp_sums[32];
  __shared__ int chunk_total;
  int carry = 0;
  for (std::size_t base = 0; base < count; base += 1024) {
    const std::size_t i = base + threadIdx.x;
    const int x = i < count ? data[i] : 0;
    const int inclusive = warp_inclusive_scan(x);
    if (lane_id() == 31) warp_sums[warp_id()] = inclusive;
    __syncthreads();
    if (warp_id() == 0) {
      const int w = warp_sums[lane_id()];
      const int w_inclusive = warp_inclusive_scan(w);
      warp_sums[lane_id()] = w_inclusive - w;
      if (lane_id() == 31) chunk_total = w_inclusive;
    }
    __syncthreads();
    if (i < count) data[i] = carry + warp_sums[warp_id()] + inclusive - x;
    carry += chunk_total;
    __syncthreads();  // warp_sums and chunk_total are rewritten by the next chunk
  }
}

// ---- round 3: scan. Block `tile` scans its tile page by page, starting from tile_offsets[tile].
template <int kBlock, int kVectors = kVectorsPerThread>
__global__ void __launch_bounds__(kBlock) scan_tiles(const int* __restrict__ in, int* __restrict__ out, std::size_t n,
                                                     std::size_t tile_size, const int* __restrict__ tile_offsets) {
  using Page = PageScan<kBlock, kVectors>;
  __shared__ int warp_totals[2][Page::kWarps];  // double-buffered: one barrier per page
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * tile_size;
  const std::size_t end = begin + tile_size < n ? begin + tile_size : n;
  int carry = tile_offsets[blockIdx.x];
  int parity = 0;
  for (std::size_t page = begin; page < end; page += Page::kPage, parity ^= 1) {
    int4 v[kVectors];
    int within_warp[kVectors];
    Page::load(in, page, end, v);
    Page::scan_warp_segment(v, within_warp, warp_totals[parity]);
    __syncthreads();
    int page_total;
    const int offset = Page::warp_offset(warp_totals[parity], page_total);
    Page::apply(v, within_warp, carry + offset);
    Page::store(out, page, end, v);
    carry += page_total;
  }
}

template <class Kernel>
int resident_blocks_per_sm(Kernel kernel, int block, std::size_t dynamic_shared = 0) {
  int blocks = 0;
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, dynamic_shared));
  return blocks > 0 ? blocks : 1;
}

// p tiles of whole pages, one per resident block: each block is one processor of seed 000's model
// and walks ceil(n / p) contiguous elements.
struct Tiling {
  std::size_t tiles = 0, tile_size = 0;
};
Tiling tile_evenly(std::size_t n, std::size_t processors, std::size_t granule) {
  Tiling t;
  const std::size_t granules = ceil_div(n, granule);
  t.tiles = std::max<std::size_t>(1, std::min(processors, granules));
  t.tile_size = ceil_div(granules, t.tiles) * granule;
  t.tiles = ceil_div(n, t.tile_size);
  return t;
}

template <int kBlock, int kVectors = kVectorsPerThread>
void three_round(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  static const int blocks_per_sm = resident_blocks_per_sm(scan_tiles<kBlock, kVectors>, kBlock);
  const Tiling t =
      tile_evenly(n, static_cast<std::size_t>(ws.multiprocessors) * blocks_per_sm, PageScan<kBlock, kVectors>::kPage);
  int* tile_sums = ws.take(t.tiles);
  const unsigned grid = static_cast<unsigned>(t.tiles);
  reduce_tiles<kBlock, kVectors><<<grid, kBlock>>>(d_in, n, t.tile_size, tile_sums);
  GPULAB_CHECK_LAUNCH();
  spine_scan<<<1, 1024>>>(tile_sums, t.tiles);
  GPULAB_CHECK_LAUNCH();
  scan_tiles<kBlock, kVectors><<<grid, kBlock>>>(d_in, d_out, n, t.tile_size, tile_sums);
  GPULAB_CHECK_LAUNCH();
}

// ---- alpha-matrix: seed 004 §6, Algorithm 8, one warp = one AGPU multiprocessor with b = 32 ----
//
// The warp walks its tile in matrices of alpha * 32 elements. It reads alpha rows of 32
// consecutive elements (coalesced) and stores element e = 32 j + lane at row e % alpha, column
// e / alpha of an alpha x 33 matrix, so that column c holds the alpha consecutive elements
// c * alpha .. c * alpha + alpha - 1. The padding column keeps a column's elements in distinct
// banks; the rows written by one instruction still collide about min(ceil(32 / alpha), alpha)
// ways (the bank model computes the exact degree). Core c then reduces column c, the warp scans
// the 32 column sums, core c scans column c, and the matrix is written back row by row.
template <int kAlpha>
__global__ void __launch_bounds__(kAlphaWarpsPerBlock * 32)
    alpha_matrix_local_scan(const int* __restrict__ in, int* __restrict__ out, std::size_t n, std::size_t tiles,
                            std::size_t tile_size, const int* __restrict__ tile_offsets) {
  extern __shared__ int matrices[];
  constexpr int kStride = kAlphaColumns + 1;
  constexpr int kMatrix = kAlpha * kAlphaColumns;
  const int lane = lane_id();
  int* m = matrices + warp_id() * kAlpha * kStride;
  const std::size_t tile = static_cast<std::size_t>(blockIdx.x) * kAlphaWarpsPerBlock + warp_id();
  if (tile >= tiles) return;  // only __syncwarp below: a whole warp may leave
  const std::size_t begin = tile * tile_size;
  const std::size_t end = begin + tile_size < n ? begin + tile_size : n;
  int carry = tile_offsets[tile];
  for (std::size_t base = begin; base < end; base += kMatrix) {
#pragma unroll
    for (int j = 0; j < kAlpha; ++j) {
      const int e = 32 * j + lane;
      const std::size_t g = base + e;
      m[(e % kAlpha) * kStride + e / kAlpha] = g < end ? in[g] : 0;
    }
    __syncwarp();
    int column_sum = 0;
#pragma unroll
    for (int r = 0; r < kAlpha; ++r) column_sum += m[r * kStride + lane];
    const int inclusive = warp_inclusive_scan(column_sum);
    int running = carry + inclusive - column_sum;
    carry += __shfl_sync(kFullMask, inclusive, 31);
#pragma unroll
    for (int r = 0; r < kAlpha; ++r) {
      const int x = m[r * kStride + lane];
      m[r * kStride + lane] = running;
      running += x;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kAlpha; ++j) {
      const int e = 32 * j + lane;
      const std::size_t g = base + e;
      if (g < end) out[g] = m[(e % kAlpha) * kStride + e / kAlpha];
    }
    __syncwarp();
  }
}

template <int kAlpha>
void alpha_matrix(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  constexpr int kThreads = kAlphaWarpsPerBlock * 32;
  const std::size_t shared = alpha_matrix_shared_bytes(kAlpha);
  // The number of warps resident at once is the model's multiplicity M / m (seed 004 §3.3): each
  // one is a processor with a tile of its own.
  static const int blocks_per_sm = resident_blocks_per_sm(alpha_matrix_local_scan<kAlpha>, kThreads, shared);
  const std::size_t processors = static_cast<std::size_t>(ws.multiprocessors) * blocks_per_sm * kAlphaWarpsPerBlock;
  const Tiling t = tile_evenly(n, processors, static_cast<std::size_t>(kAlpha) * kAlphaColumns);
  int* tile_sums = ws.take(t.tiles);
  // Local reduction (seed 004 Alg. 3, cascading: serial sums per thread, then a tree): one block per tile.
  reduce_tiles<256><<<static_cast<unsigned>(t.tiles), 256>>>(d_in, n, t.tile_size, tile_sums);
  GPULAB_CHECK_LAUNCH();
  spine_scan<<<1, 1024>>>(tile_sums, t.tiles);
  GPULAB_CHECK_LAUNCH();
  const unsigned grid = static_cast<unsigned>(ceil_div(t.tiles, kAlphaWarpsPerBlock));
  alpha_matrix_local_scan<kAlpha><<<grid, kThreads, shared>>>(d_in, d_out, n, t.tiles, t.tile_size, tile_sums);
  GPULAB_CHECK_LAUNCH();
}

template <int... kAlphas>
void alpha_matrix_dispatch(int alpha, const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws,
                           std::integer_sequence<int, kAlphas...>) {
  const bool found = ((alpha == kAlphas + 1 ? (alpha_matrix<kAlphas + 1>(d_in, d_out, n, ws), true) : false) || ...);
  if (!found) throw std::invalid_argument("alpha-matrix: alpha must be 1..32");
}

// ---- single-pass: decoupled look-back (Merrill & Garland 2016) ------------------------------------
//
// Block i scans tile i (a page of kBlock * 4 kVectors elements), publishes its aggregate (status
// A), looks back over its predecessors' descriptors until it meets an inclusive prefix (status
// P), adds the aggregates it passed, and publishes its own inclusive prefix. Status and value
// share one 64-bit word, so a reader never sees a status with a stale value.
//
// Which tile a block scans: blockIdx.x, as CUB does. That relies on the hardware dispatching
// blocks in index order, so that every predecessor a block waits for is already running (the
// CUDA model does not promise it; every NVIDIA GPU does it). TileOrder::atomic_counter takes the
// tile from a global counter instead, which guarantees progress, but puts one round trip to the
// L2 in front of every block's first load (README, question 9).
enum class TileOrder { block_index, atomic_counter };

constexpr unsigned long long kStatusNone = 0, kStatusAggregate = 1, kStatusPrefix = 2;

__device__ __forceinline__ unsigned long long pack_status(unsigned long long status, int value) {
  return (status << 32) | static_cast<unsigned>(value);
}

__device__ __forceinline__ void publish(unsigned long long* descriptors, std::size_t tile, unsigned long long status,
                                        int value) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> d(descriptors[tile]);
  d.store(pack_status(status, value), cuda::memory_order_relaxed);
}

// Warp 0 of a tile > 0: the exclusive prefix of `tile`. kBackoffNs > 0 sleeps between polls of a
// descriptor that is not ready, so that spinning warps leave the L2 to the loads.
template <int kBackoffNs>
__device__ int look_back(unsigned long long* descriptors, std::size_t tile) {
  const int lane = lane_id();
  int exclusive = 0;
  long long window = static_cast<long long>(tile) - 1;  // lane 0 reads the nearest predecessor
  while (true) {
    const long long predecessor = window - lane;
    unsigned long long word = pack_status(kStatusPrefix, 0);  // before tile 0: an empty prefix
    if (predecessor >= 0) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> d(descriptors[predecessor]);
      word = d.load(cuda::memory_order_relaxed);
      while ((word >> 32) == kStatusNone) {
        if constexpr (kBackoffNs > 0) __nanosleep(kBackoffNs);
        word = d.load(cuda::memory_order_relaxed);
      }
    }
    const int value = static_cast<int>(static_cast<unsigned>(word));
    const unsigned prefixes = __ballot_sync(kFullMask, (word >> 32) == kStatusPrefix);
    if (prefixes != 0) {
      const int first = __ffs(prefixes) - 1;  // the nearest predecessor that knows its prefix
      exclusive += warp_sum(lane <= first ? value : 0);
      return exclusive;
    }
    exclusive += warp_sum(value);
    window -= 32;
  }
}

// The knobs of one configuration (autograder/bench/scan_tune_single_pass.cu is the bench that chose
// the defaults):
//   kVectors    int4 per thread: a tile is kBlock * 4 * kVectors elements
//   kBackoffNs  sleep between polls of a descriptor that has no status yet
//   kDelayNs    sleep after publishing the aggregate, before looking back (CUB's "L2 write
//               latency": by then the predecessors have usually published their inclusive
//               prefixes, so one window of 32 suffices and the L2 sees fewer polls)
//   kStreaming  evict-first loads and stores
template <int kBlock, int kVectors, TileOrder kOrder, int kBackoffNs, int kDelayNs, bool kStreaming>
__global__ void __launch_bounds__(kBlock) single_pass_scan(const int* __restrict__ in, int* __restrict__ out,
                                                           std::size_t n, unsigned long long* descriptors,
                                                           unsigned* tile_counter) {
  using Page = PageScan<kBlock, kVectors>;
  __shared__ int warp_totals[Page::kWarps];
  __shared__ unsigned tile_slot;
  __shared__ int tile_exclusive;
  std::size_t tile = blockIdx.x;
  if constexpr (kOrder == TileOrder::atomic_counter) {
    if (threadIdx.x == 0) tile_slot = atomicAdd(tile_counter, 1u);
    __syncthreads();
    tile = tile_slot;
  }
  const std::size_t page = tile * Page::kPage;
  int4 v[kVectors];
  int within_warp[kVectors];
  Page::template load<kStreaming>(in, page, n, v);
  Page::scan_warp_segment(v, within_warp, warp_totals);
  __syncthreads();
  int aggregate;
  const int offset = Page::warp_offset(warp_totals, aggregate);
  if (warp_id() == 0) {
    int exclusive = 0;
    if (tile == 0) {
      if (lane_id() == 0) publish(descriptors, tile, kStatusPrefix, aggregate);
    } else {
      if (lane_id() == 0) publish(descriptors, tile, kStatusAggregate, aggregate);
      if constexpr (kDelayNs > 0)
        if (gridDim.x >= 512) __nanosleep(kDelayNs);  // small grids: the predecessors are done already
      exclusive = look_back<kBackoffNs>(descriptors, tile);
      if (lane_id() == 0) publish(descriptors, tile, kStatusPrefix, exclusive + aggregate);
    }
    if (lane_id() == 0) tile_exclusive = exclusive;
  }
  __syncthreads();
  Page::apply(v, within_warp, tile_exclusive + offset);
  Page::template store<kStreaming>(out, page, n, v);
}

// The defaults for every block size: the configuration measured best on an H200 with 128 threads
// (labs/scan/results/tune-single-pass.log).
constexpr int kSinglePassVectors = 8, kSinglePassDelayNs = 1500;

template <int kBlock, int kVectors = kSinglePassVectors, TileOrder kOrder = TileOrder::block_index, int kBackoffNs = 0,
          int kDelayNs = kSinglePassDelayNs, bool kStreaming = false>
void single_pass(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  const std::size_t tiles = ceil_div(n, PageScan<kBlock, kVectors>::kPage);
  // Descriptors (8 bytes per tile) and the tile counter, all zero = "no status yet" before the run.
  // A memset is not a kernel launch: the model's count stays at one round.
  const std::size_t ints = 2 * tiles + 1;
  int* state = ws.take(ints);
  GPULAB_CUDA_CHECK(cudaMemsetAsync(state, 0, ints * sizeof(int)));
  auto* descriptors = reinterpret_cast<unsigned long long*>(state);
  auto* counter = reinterpret_cast<unsigned*>(state + 2 * tiles);
  single_pass_scan<kBlock, kVectors, kOrder, kBackoffNs, kDelayNs, kStreaming>
      <<<static_cast<unsigned>(tiles), kBlock>>>(d_in, d_out, n, descriptors, counter);
  GPULAB_CHECK_LAUNCH();
}

// block (a power of two in [32, 1024], checked by the harness) picks the instantiation.
template <template <int> class Op>
void with_block(int block, const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  switch (block) {
    case 32: Op<32>::run(d_in, d_out, n, ws); break;
    case 64: Op<64>::run(d_in, d_out, n, ws); break;
    case 128: Op<128>::run(d_in, d_out, n, ws); break;
    case 256: Op<256>::run(d_in, d_out, n, ws); break;
    case 512: Op<512>::run(d_in, d_out, n, ws); break;
    case 1024: Op<1024>::run(d_in, d_out, n, ws); break;
    default: throw std::invalid_argument("block must be a power of two in [32, 1024]");
  }
}
template <int kBlock>
struct ThreeRoundOp {
  static void run(const int* i, int* o, std::size_t n, ScanWorkspace& ws) { three_round<kBlock>(i, o, n, ws); }
};
// The default block (128 threads) per GPU: the H100 and the H200 are both sm_90 with 132 SMs, but
// their memory systems differ, and so does the delay before the look-back that pays (and the tile
// size). Chosen at run time by the device's name; a GPU not listed gets the defaults. To tune a
// GPU: `cmake --build --preset gpu --target scan-tune-single-pass`, then
// `build/gpu/autograder/scan-tune-single-pass 16777216` and `... 268435456`: each ends with the
// fastest correct configuration; add a row with the one that is fastest at both sizes (only the
// combinations of kSinglePassVariants are compiled; a static_assert holds the table to them).
struct SinglePassTuning {
  const char* gpu;  // a substring of cudaDeviceProp::name
  int vectors, delay_ns;
};
constexpr SinglePassTuning kSinglePassTuning[] = {
    {"H200", 8, 1500},  // tune-single-pass.log: 1.036x CUB at 2^28
    {"H100", 6, 3000},  // H100 80GB HBM3, 2026-11-23: 1.070x CUB at 2^28, 1.075x at 2^24 (the H200's
                        // choice gave 0.98x at 2^28); a longer delay pays where memory is slower
};
constexpr std::pair<int, int> kSinglePassVariants[] = {{8, 1500}, {6, 3000}};
constexpr bool compiled(const SinglePassTuning& t) {
  for (const auto& [v, d] : kSinglePassVariants)
    if (v == t.vectors && d == t.delay_ns) return true;
  return false;
}
constexpr bool all_compiled() {
  for (const auto& t : kSinglePassTuning)
    if (!compiled(t)) return false;
  return true;
}
static_assert(all_compiled(), "a kSinglePassTuning row names a (vectors, delay) that kSinglePassVariants does not compile");

const SinglePassTuning& single_pass_tuning() {
  static const SinglePassTuning* chosen = [] {
    int device = 0;
    cudaDeviceProp prop{};
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    for (const auto& t : kSinglePassTuning)
      if (std::strstr(prop.name, t.gpu)) return &t;
    static constexpr SinglePassTuning fallback{"", kSinglePassVectors, kSinglePassDelayNs};
    return &fallback;
  }();
  return *chosen;
}

template <int kBlock, int kVectors, int kDelayNs>
bool single_pass_if(const SinglePassTuning& t, const int* i, int* o, std::size_t n, ScanWorkspace& ws) {
  if (t.vectors != kVectors || t.delay_ns != kDelayNs) return false;
  single_pass<kBlock, kVectors, TileOrder::block_index, 0, kDelayNs>(i, o, n, ws);
  return true;
}

template <int kBlock, std::size_t... I>
bool single_pass_tuned(std::index_sequence<I...>, const int* i, int* o, std::size_t n, ScanWorkspace& ws) {
  const auto& t = single_pass_tuning();
  return (single_pass_if<kBlock, kSinglePassVariants[I].first, kSinglePassVariants[I].second>(t, i, o, n, ws) || ...);
}

template <int kBlock>
struct SinglePassOp {
  static void run(const int* i, int* o, std::size_t n, ScanWorkspace& ws) {
    if constexpr (kBlock == 128)
      if (single_pass_tuned<128>(std::make_index_sequence<std::size(kSinglePassVariants)>{}, i, o, n, ws)) return;
    single_pass<kBlock>(i, o, n, ws);
  }
};

}  // namespace

void exclusive_scan_three_round(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  with_block<ThreeRoundOp>(ws.config.block, d_in, d_out, n, ws);
}

void exclusive_scan_alpha_matrix(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  alpha_matrix_dispatch(ws.config.alpha, d_in, d_out, n, ws, std::make_integer_sequence<int, 32>{});
}

void exclusive_scan_single_pass(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws) {
  if (n == 0) return;
  with_block<SinglePassOp>(ws.config.block, d_in, d_out, n, ws);
}

}  // namespace scan
