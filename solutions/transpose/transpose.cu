// Reference implementation of the transpose lab (labs/transpose/transpose.cuh).
//
// Layout conventions used by every kernel below:
//   * a CTA of kTile x kBlockRows = 32 x 8 threads handles one 32-wide tile; thread (tx, ty) moves
//     the elements of tile rows ty, ty + 8, ty + 16, ty + 24 in column tx;
//   * blockIdx.x walks tile columns, blockIdx.y tile rows; the y dimension loops (grid-stride)
//     because gridDim.y is capped at 65535 and an n x 1 matrix may need more tile rows than that.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "transpose.cuh"

namespace transpose {

namespace {

constexpr int kElementsPerThread = kTile / kBlockRows;
constexpr unsigned kMaxGridY = 65535;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// One CTA per tile (tile_rows tall, kTile wide); the y dimension is capped and looped over.
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

// ---- 2. copy-shared ----------------------------------------------------------------------------

__global__ void copy_shared_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                   std::size_t cols) {
  __shared__ float tile[kTile][kTile];
  const std::size_t c = std::size_t{blockIdx.x} * kTile + threadIdx.x;
  for (std::size_t tile_row = blockIdx.y; tile_row * kTile < rows; tile_row += gridDim.y) {
    const std::size_t r0 = tile_row * kTile;
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      if (r0 + y < rows && c < cols) tile[y][threadIdx.x] = in[(r0 + y) * cols + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      if (r0 + y < rows && c < cols) out[(r0 + y) * cols + c] = tile[y][threadIdx.x];
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

// ---- 3. naive ----------------------------------------------------------------------------------

// Reads are coalesced (a warp reads 32 consecutive floats of a row); writes are not: the 32 lanes
// of a warp write 32 different rows of out, 32 separate memory transactions (seed 000 §2.1).
__global__ void naive_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                             std::size_t cols) {
  const std::size_t c = std::size_t{blockIdx.x} * kTile + threadIdx.x;
  if (c >= cols) return;
  for (std::size_t tile_row = blockIdx.y; tile_row * kTile < rows; tile_row += gridDim.y) {
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const std::size_t r = tile_row * kTile + threadIdx.y + k * kBlockRows;
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
  __shared__ float tile[kTile * Layout::kRowWords];
  const std::size_t c0 = std::size_t{blockIdx.x} * kTile;
  for (std::size_t tile_row = blockIdx.y; tile_row * kTile < rows; tile_row += gridDim.y) {
    const std::size_t r0 = tile_row * kTile;
    // Read a tile of in along its rows: lanes = consecutive columns (coalesced, one bank each).
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      if (r0 + y < rows && c0 + threadIdx.x < cols)
        tile[Layout::at(y, threadIdx.x)] = in[(r0 + y) * cols + c0 + threadIdx.x];
    }
    __syncthreads();
    // Write the tile's columns as rows of out: lanes = consecutive rows of in, i.e. one column of
    // the tile. This is the access the layouts are about.
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int y = threadIdx.y + k * kBlockRows;  // a column of the tile = a row of out
      if (c0 + y < cols && r0 + threadIdx.x < rows)
        out[(c0 + y) * rows + r0 + threadIdx.x] = tile[Layout::at(threadIdx.x, y)];
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

__global__ void in_place_sweep_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                      std::size_t cols) {
  __shared__ float tile[kTile * kTile];
  const std::size_t c0 = std::size_t{blockIdx.x} * kTile;
  for (std::size_t tile_row = blockIdx.y; tile_row * kTile < rows; tile_row += gridDim.y) {
    const std::size_t r0 = tile_row * kTile;
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      const bool inside = r0 + y < rows && c0 + threadIdx.x < cols;
      // Outside the matrix the tile holds zeros: the sweep moves them but they are never stored.
      tile[y * kTile + threadIdx.x] = inside ? in[(r0 + y) * cols + c0 + threadIdx.x] : 0.0f;
    }
    __syncthreads();
    transpose_square_in_place(tile, threadIdx.x, threadIdx.y, kBlockRows);
    __syncthreads();
    // tile[y][x] now holds in[r0 + x][c0 + y]: rows of the tile are rows of out, read row-wise.
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      if (c0 + y < cols && r0 + threadIdx.x < rows) out[(c0 + y) * rows + r0 + threadIdx.x] = tile[y * kTile + threadIdx.x];
    }
    __syncthreads();
  }
}

constexpr int kRectRows = 2 * kTile;  // m = 2n

__global__ void in_place_sweep_rect_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                           std::size_t cols) {
  __shared__ float tile[kRectRows * kTile];  // 64 x 32 row-major = square 0 above square 1
  const std::size_t c0 = std::size_t{blockIdx.x} * kTile;
  for (std::size_t tile_row = blockIdx.y; tile_row * kRectRows < rows; tile_row += gridDim.y) {
    const std::size_t r0 = tile_row * kRectRows;
#pragma unroll
    for (int k = 0; k < kRectRows / kBlockRows; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      const bool inside = r0 + y < rows && c0 + threadIdx.x < cols;
      tile[y * kTile + threadIdx.x] = inside ? in[(r0 + y) * cols + c0 + threadIdx.x] : 0.0f;
    }
    __syncthreads();
    transpose_rect_in_place(tile, threadIdx.x, threadIdx.y, kBlockRows);
    __syncthreads();
    // The 32 x 64 transpose: row r of it is column c0 + r of in, i.e. row c0 + r of out, and its
    // 64 columns are out columns r0 .. r0 + 63. Lanes walk c mod 32 inside one square: row-wise.
#pragma unroll
    for (int k = 0; k < kElementsPerThread; ++k) {
      const int r = threadIdx.y + k * kBlockRows;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int c = half * kTile + threadIdx.x;
        if (c0 + r < cols && r0 + c < rows) out[(c0 + r) * rows + r0 + c] = tile[rect_transposed_index(r, c)];
      }
    }
    __syncthreads();
  }
}

template <class Kernel>
void launch_tiles(Kernel kernel, const float* in, float* out, std::size_t rows, std::size_t cols,
                  std::size_t tile_rows = kTile) {
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
  launch_tiles(naive_kernel, in, out, rows, cols);
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
  launch_tiles(in_place_sweep_rect_kernel, in, out, rows, cols, kRectRows);
}

}  // namespace transpose
