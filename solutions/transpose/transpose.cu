// Reference implementation of the transpose lab (labs/transpose/transpose.cuh).
//
// Layout conventions used by every kernel below:
//   * a CTA of kTile x kBlockRows = 32 x 8 threads handles a strip of kStack = 2 tiles of 32 x 32
//     stacked vertically (64 rows of in, 32 columns); thread (tx, ty) moves the elements of strip
//     rows ty, ty + 8, ..., ty + 56 in column tx (naive: one 32 x 32 tile, rows ty + 8k);
//   * blockIdx.x walks tile columns, blockIdx.y strips; the y dimension loops (grid-stride)
//     because gridDim.y is capped at 65535 and an n x 1 matrix may need more strips than that.
// Measured on an H200 (labs/transpose/README.md, section 5): padded, swizzled and the in-place
// sweep at 91-92% of the copy; labs/transpose/results/variants.csv shows what each choice was worth.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "transpose.cuh"

namespace transpose {

// The kit's integer helpers by their short names, in this file only: the interface leaves them in
// gpulab:: (gpulab/math.hpp) so that a submission may define helpers of its own by these names.
using gpulab::ceil_div;

namespace {

constexpr int kElementsPerThread = kTile / kBlockRows;
constexpr unsigned kMaxGridY = 65535;

// One CTA per strip (tile_rows tall, kTile wide); the y dimension is capped and looped over.
dim3 tile_grid(std::size_t rows, std::size_t cols, std::size_t tile_rows) {
  const std::size_t tiles_y = ceil_div(rows, tile_rows);
  return dim3(static_cast<unsigned>(ceil_div(cols, kTile)),
              static_cast<unsigned>(std::min<std::size_t>(tiles_y, kMaxGridY)));
}

const dim3 kBlock(kTile, kBlockRows);

// ---- 1. copy ------------------------------------------------------------------------------------

// 128-bit loads and stores: a quarter of the instructions of a float copy, and every warp request
// covers four full 128-byte lines. Grid-stride, so any size runs with a bounded grid; the 0..3
// floats after the last float4 (or all of them, for pointers that are not 16-byte aligned) are
// copied by the first threads in the same launch, so the copy stays one round.
__global__ void copy_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t count,
                            bool vectorise) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t vectors = vectorise ? count / 4 : 0;
  const auto* in4 = reinterpret_cast<const float4*>(in);
  auto* out4 = reinterpret_cast<float4*>(out);
  for (std::size_t i = first; i < vectors; i += stride) out4[i] = in4[i];
  for (std::size_t i = vectors * 4 + first; i < count; i += stride) out[i] = in[i];
}

unsigned copy_grid(std::size_t count, int threads) {
  // Enough CTAs to fill every SM many times over; beyond that the grid-stride loop takes over.
  return static_cast<unsigned>(std::clamp<std::size_t>(ceil_div(count, threads), 1, std::size_t{1} << 20));
}

// ---- how every tiled kernel moves data -----------------------------------------------------------
//
// A CTA owns a strip of kStack tiles stacked vertically (kStack * 32 rows of in, 32 columns) and
// works in two phases separated by __syncthreads(): load the strip into shared memory, then store
// it. Two things decide the bandwidth (measured in this lab's `bandwidth-setups` experiment: an
// SM needs tens of KiB of loads in flight to keep HBM busy):
//   * all loads of a phase are issued before the first shared-memory store: the values wait in
//     registers. Written as "load, store, load, store", every store waits for its load and a
//     thread has one load in flight instead of kStack * 4;
//   * kStack tiles per CTA multiply the bytes in flight again and make each row of out receive
//     kStack * 128 contiguous bytes (seed 000 §2.1: whole blocks B, here B = 128 bytes or more).
// Strips that stick out of the matrix take the bounds-checked path; all others skip the checks.
constexpr int kStack = 2;
constexpr int kStripRows = kStack * kTile;

// The rows of a strip that thread row `ty` handles: ty, ty + 8, ... (kStripRows / 8 of them).
constexpr int kStripElements = kStripRows / kBlockRows;

struct Strip {
  std::size_t r0, c0;  // top-left element of the strip in `in`
  bool full;           // entirely inside the matrix
};

__device__ Strip strip_at(std::size_t strip_row, std::size_t rows, std::size_t cols) {
  Strip s{strip_row * kStripRows, std::size_t{blockIdx.x} * kTile, false};
  s.full = s.r0 + kStripRows <= rows && s.c0 + kTile <= cols;
  return s;
}

// Loads the strip's elements of this thread into registers: v[k] = in(r0 + ty + 8k, c0 + tx),
// 0 outside the matrix (so that in-place algorithms never read uninitialised shared memory).
__device__ void load_strip(const float* __restrict__ in, std::size_t rows, std::size_t cols, const Strip& s,
                           float (&v)[kStripElements]) {
  const std::size_t c = s.c0 + threadIdx.x;
  if (s.full) {
#pragma unroll
    for (int k = 0; k < kStripElements; ++k) v[k] = in[(s.r0 + threadIdx.y + k * kBlockRows) * cols + c];
  } else {
#pragma unroll
    for (int k = 0; k < kStripElements; ++k) {
      const std::size_t r = s.r0 + threadIdx.y + k * kBlockRows;
      v[k] = (r < rows && c < cols) ? in[r * cols + c] : 0.0f;
    }
  }
}

// ---- 2. copy-shared ----------------------------------------------------------------------------

__global__ void copy_shared_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                   std::size_t cols) {
  __shared__ float tile[kStripRows][kTile];
  for (std::size_t strip_row = blockIdx.y; strip_row * kStripRows < rows; strip_row += gridDim.y) {
    const Strip s = strip_at(strip_row, rows, cols);
    float v[kStripElements];
    load_strip(in, rows, cols, s, v);
#pragma unroll
    for (int k = 0; k < kStripElements; ++k) tile[threadIdx.y + k * kBlockRows][threadIdx.x] = v[k];
    __syncthreads();
    const std::size_t c = s.c0 + threadIdx.x;
#pragma unroll
    for (int k = 0; k < kStripElements; ++k) {
      const std::size_t r = s.r0 + threadIdx.y + k * kBlockRows;
      if (s.full || (r < rows && c < cols)) out[r * cols + c] = tile[threadIdx.y + k * kBlockRows][threadIdx.x];
    }
    __syncthreads();  // the next strip overwrites this one
  }
}

// ---- 3. naive ----------------------------------------------------------------------------------

// Reads are coalesced (a warp reads 32 consecutive floats of a row); writes are not: the 32 lanes
// of a warp write 32 different rows of out, 32 separate memory transactions (seed 000 §2.1).
__global__ void naive_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                             std::size_t cols) {
  const std::size_t c = std::size_t{blockIdx.x} * kTile + threadIdx.x;
  if (c >= cols) return;
  for (std::size_t strip_row = blockIdx.y; strip_row * kTile < rows; strip_row += gridDim.y) {
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const std::size_t r = strip_row * kTile + threadIdx.y + k * kBlockRows;
      if (r < rows) out[c * rows + r] = in[r * cols + c];
    }
  }
}

// ---- 4.-6. transposes through a shared tile ----------------------------------------------------

// Where logical tile element (row, col) lives in shared memory. The three layouts differ only
// here; the kernel is the same (seed 000 §3: the tile is the b x M/b bank matrix, bank = word % 32).
struct PlainLayout {  // 32 x 32: column reads hit one bank 32 times
  static constexpr int kRowWords = kTile;
  __device__ static int at(int row, int col) { return row * kRowWords + col; }
};
struct PaddedLayout {  // 32 x 33: row r starts r words later in the bank cycle
  static constexpr int kRowWords = kTile + 1;
  __device__ static int at(int row, int col) { return row * kRowWords + col; }
};
struct SwizzledLayout {  // 32 x 32, column index XORed with the row: a permutation of banks per row
  static constexpr int kRowWords = kTile;
  __device__ static int at(int row, int col) { return row * kRowWords + (col ^ row); }
};

template <class Layout>
__global__ void transpose_through_tile_kernel(const float* __restrict__ in, float* __restrict__ out,
                                              std::size_t rows, std::size_t cols) {
  __shared__ float tile[kStack][kTile * Layout::kRowWords];
  for (std::size_t strip_row = blockIdx.y; strip_row * kStripRows < rows; strip_row += gridDim.y) {
    const Strip s = strip_at(strip_row, rows, cols);
    float v[kStripElements];
    load_strip(in, rows, cols, s, v);
    // Rows of in into rows of the tiles: lanes = consecutive columns (one bank each, any layout).
#pragma unroll
    for (int t = 0; t < kStack; ++t)
#pragma unroll
      for (int k = 0; k < kElementsPerThread; ++k)  // strip row 32t + ty + 8k is v[4t + k]
        tile[t][Layout::at(threadIdx.y + k * kBlockRows, threadIdx.x)] = v[t * kElementsPerThread + k];
    __syncthreads();
    // Columns of the tiles out as rows of out: lanes = consecutive rows of in, i.e. one column of a
    // tile. This is the access the layouts are about. Tile t of the strip lands in out columns
    // r0 + 32t ...: each row of out receives kStack * 32 contiguous floats.
#pragma unroll
    for (int t = 0; t < kStack; ++t)
#pragma unroll
      for (int k = 0; k < kElementsPerThread; ++k) {
        const int y = threadIdx.y + k * kBlockRows;  // a column of the tile = a row of out
        const std::size_t out_row = s.c0 + y, out_col = s.r0 + t * kTile + threadIdx.x;
        if (s.full || (out_row < cols && out_col < rows)) out[out_row * rows + out_col] = tile[t][Layout::at(threadIdx.x, y)];
      }
    __syncthreads();
  }
}

// ---- 7.-8. seed 000 Algorithm 2: the in-place diagonal sweep -----------------------------------

// Transposes the 32 x 32 row-major square at `square` in place. Diagonal i (1..31) holds the
// pairs (col, col + i) below the main diagonal; lane `col` swaps element (col, col + i) with
// (col + i, col). Within one diagonal the lanes touch words col * 32 + col + i (bank col + i mod 32)
// and (col + i) * 32 + col (bank col): distinct banks, no conflict (seed 000 Appendix B).
// Every pair lies on exactly one diagonal, so diagonals are independent: the seed's barrier
// between steps is not needed for correctness, and the CTA's warps share out the diagonals
// (warp y takes diagonals y + 1, y + 1 + warps, ...).
__device__ void transpose_square_in_place(float* square, int lane, int warp, int warps) {
  for (int i = 1 + warp; i < kTile; i += warps) {
    const int row = lane + i;
    if (row < kTile) {
      const float upper = square[lane * kTile + row];
      const float lower = square[row * kTile + lane];
      square[row * kTile + lane] = upper;
      square[lane * kTile + row] = lower;
    }
  }
}

// An m x n tile with m = 2n, row-major, is two n x n squares one above the other. After each square
// is transposed in place, element (r, c) of the n x 2n transpose is element (r, c mod n) of square
// c / n: no data has to move between the squares, only the index arithmetic changes.
__device__ int rect_transposed_index(int r, int c) {
  return (c / kTile) * (kTile * kTile) + r * kTile + (c % kTile);
}

__device__ void transpose_rect_in_place(float* tile, int lane, int warp, int warps) {
  transpose_square_in_place(tile, lane, warp, warps);
  transpose_square_in_place(tile + kTile * kTile, lane, warp, warps);
}

// Loads the strip row-wise into `tile` (kStripRows x 32, row-major, no padding).
__device__ void load_strip_to_shared(const float* __restrict__ in, std::size_t rows, std::size_t cols,
                                     const Strip& s, float* tile) {
  float v[kStripElements];
  load_strip(in, rows, cols, s, v);
#pragma unroll
  for (int k = 0; k < kStripElements; ++k) tile[(threadIdx.y + k * kBlockRows) * kTile + threadIdx.x] = v[k];
}

__global__ void in_place_sweep_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                      std::size_t cols) {
  __shared__ float tile[kStack * kTile * kTile];  // kStack independent 32 x 32 squares
  for (std::size_t strip_row = blockIdx.y; strip_row * kStripRows < rows; strip_row += gridDim.y) {
    const Strip s = strip_at(strip_row, rows, cols);
    load_strip_to_shared(in, rows, cols, s, tile);
    __syncthreads();
#pragma unroll
    for (int t = 0; t < kStack; ++t) transpose_square_in_place(tile + t * kTile * kTile, threadIdx.x, threadIdx.y, kBlockRows);
    __syncthreads();
    // Square t now holds in(r0 + 32t + x, c0 + y) at [y][x]: its rows are pieces of rows of out.
#pragma unroll
    for (int t = 0; t < kStack; ++t)
#pragma unroll
      for (int k = 0; k < kElementsPerThread; ++k) {
        const int y = threadIdx.y + k * kBlockRows;
        const std::size_t out_row = s.c0 + y, out_col = s.r0 + t * kTile + threadIdx.x;
        if (s.full || (out_row < cols && out_col < rows))
          out[out_row * rows + out_col] = tile[t * kTile * kTile + y * kTile + threadIdx.x];
      }
    __syncthreads();
  }
}

// The m = 2n case: the strip of two stacked squares is one 64 x 32 tile, read back as its
// 32 x 64 transpose through rect_transposed_index. (kStack == 2: one rect tile per strip.)
static_assert(kStack == 2, "in_place_sweep_rect_kernel treats a strip as one 64 x 32 tile");

__global__ void in_place_sweep_rect_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                           std::size_t cols) {
  __shared__ float tile[2 * kTile * kTile];  // 64 x 32 row-major = square 0 above square 1
  for (std::size_t strip_row = blockIdx.y; strip_row * kStripRows < rows; strip_row += gridDim.y) {
    const Strip s = strip_at(strip_row, rows, cols);
    load_strip_to_shared(in, rows, cols, s, tile);
    __syncthreads();
    transpose_rect_in_place(tile, threadIdx.x, threadIdx.y, kBlockRows);
    __syncthreads();
    // Row r of the 32 x 64 transpose is row c0 + r of out, columns r0 .. r0 + 63; lanes walk
    // c mod 32 inside one square, so the shared reads are row-wise.
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int r = threadIdx.y + k * kBlockRows;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int c = half * kTile + threadIdx.x;
        const std::size_t out_row = s.c0 + r, out_col = s.r0 + c;
        if (s.full || (out_row < cols && out_col < rows)) out[out_row * rows + out_col] = tile[rect_transposed_index(r, c)];
      }
    }
    __syncthreads();
  }
}

template <class Kernel>
void launch_tiles(Kernel kernel, const float* in, float* out, std::size_t rows, std::size_t cols,
                  std::size_t tile_rows = kStripRows) {
  if (rows == 0 || cols == 0) return;
  kernel<<<tile_grid(rows, cols, tile_rows), kBlock>>>(in, out, rows, cols);
  GPULAB_CHECK_LAUNCH();
}

}  // namespace

void copy(const float* in, float* out, std::size_t rows, std::size_t cols) {
  const std::size_t n = rows * cols;
  if (n == 0) return;
  constexpr int kThreads = 256;
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  copy_kernel<<<copy_grid(aligned ? n / 4 + n % 4 : n, kThreads), kThreads>>>(in, out, n, aligned);
  GPULAB_CHECK_LAUNCH();
}

void copy_shared(const float* in, float* out, std::size_t rows, std::size_t cols) {
  launch_tiles(copy_shared_kernel, in, out, rows, cols);
}
void naive(const float* in, float* out, std::size_t rows, std::size_t cols) {
  launch_tiles(naive_kernel, in, out, rows, cols, kTile);
}
void tiled(const float* in, float* out, std::size_t rows, std::size_t cols) {
  launch_tiles(transpose_through_tile_kernel<PlainLayout>, in, out, rows, cols);
}
void padded(const float* in, float* out, std::size_t rows, std::size_t cols) {
  launch_tiles(transpose_through_tile_kernel<PaddedLayout>, in, out, rows, cols);
}
void swizzled(const float* in, float* out, std::size_t rows, std::size_t cols) {
  launch_tiles(transpose_through_tile_kernel<SwizzledLayout>, in, out, rows, cols);
}
void in_place_sweep(const float* in, float* out, std::size_t rows, std::size_t cols) {
  launch_tiles(in_place_sweep_kernel, in, out, rows, cols);
}
void in_place_sweep_rect(const float* in, float* out, std::size_t rows, std::size_t cols) {
  launch_tiles(in_place_sweep_rect_kernel, in, out, rows, cols);
}

}  // namespace transpose
