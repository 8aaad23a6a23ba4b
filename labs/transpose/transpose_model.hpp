// The harness's CPU side of the transpose lab (transpose_model.cpp): the problem's shape, the CPU
// reference every stage is checked against, the CPU baseline, and the shared-memory tiles as the
// bank model sees them (seed 000 §3: shared memory is a b x M/b matrix, word k in bank k mod 32),
// used by the [cpu] tests and the `bank-model` experiment, so that the handout's numbers come
// from the same code that is tested. Do not edit (part of the harness). Host code only.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/lab.hpp"

namespace transpose::model {

struct Shape {
  std::size_t rows = 0, cols = 0;
  std::size_t count() const { return rows * cols; }
};
// rows x cols of the problem; a plain count must be a perfect square (UsageError otherwise).
Shape shape_of(const gpulab::Problem& p);
// The obviously-right transpose, the only truth the checks use.
std::vector<float> reference_transpose(std::span<const float> in, Shape s);
// The CPU baseline: a cache-blocked transpose (the `cpu` stage, the "vs CPU" denominator).
void cpu_transpose(const float* in, float* out, std::size_t rows, std::size_t cols);
// Where element i of a rows x cols matrix's output sits, for a check's report:
// " [out(r, c) of the C x R output should be in(c, r)]" or " [element (r, c) of the copy]".
std::string where_in_matrix(std::size_t i, Shape s, bool transposed);
// The kernels' branches a shape reaches (Stage::paths): "one tile" / "several tiles" (32 x 32),
// "ragged rows" / "ragged columns" (a partial tile at the bottom / right edge), and "more tile rows
// than gridDim.y allows": with strips of up to 64 rows (the reference's stacked and rectangular
// kernels) more than 65535 strips make the grid loop. The visible cases and the sanitizer shapes
// must reach every path a hidden case reaches (autograder/tests/test_case_paths.py).
std::vector<std::string> paths(Shape s);

}  // namespace transpose::model

namespace transpose::banks {

inline constexpr int kTile = 32;

enum class TileLayout {
  plain,     // float tile[32][32]: stage `tiled`
  padded,    // float tile[32][33]: stage `padded`
  swizzled,  // float tile[32][32], element (r, c) at column c ^ r: stage `swizzled`
};

inline std::string_view name(TileLayout layout) {
  switch (layout) {
    case TileLayout::plain: return "tiled 32x32";
    case TileLayout::padded: return "padded 32x33";
    case TileLayout::swizzled: return "swizzled 32x32";
  }
  return "?";
}

// The word (4-byte index into the tile) that holds logical tile element (row, col).
inline int word_of(TileLayout layout, int row, int col) {
  switch (layout) {
    case TileLayout::plain: return row * kTile + col;
    case TileLayout::padded: return row * (kTile + 1) + col;
    case TileLayout::swizzled: return row * kTile + (col ^ row);
  }
  return -1;
}

// A CTA of block_dim_x threads in x: lane l of warp 0 is thread (tx, ty) = (l % bdx, l / bdx).
// With block_dim_x == 32 a warp is one tile row; with 16 it is two half rows, with 8 four.
struct Thread {
  int tx, ty;
};
inline Thread thread_of_lane(int lane, int block_dim_x) { return {lane % block_dim_x, lane / block_dim_x}; }

// The first shared-memory store of warp 0: thread (tx, ty) writes tile element (ty, tx), the
// element it read from global memory along a row of in.
inline gpulab::WarpAccess row_phase(TileLayout layout, int block_dim_x = 32) {
  return gpulab::WarpAccess::words([&](int lane) {
    const auto t = thread_of_lane(lane, block_dim_x);
    return word_of(layout, t.ty, t.tx);
  });
}

// The first shared-memory load of warp 0 on the way out: thread (tx, ty) reads tile element
// (tx, ty), a column of the tile, so that its global write walks a row of out.
inline gpulab::WarpAccess column_phase(TileLayout layout, int block_dim_x = 32) {
  return gpulab::WarpAccess::words([&](int lane) {
    const auto t = thread_of_lane(lane, block_dim_x);
    return word_of(layout, t.tx, t.ty);
  });
}

// seed 000 Appendix B, Algorithm 2, step `diagonal` (1..31) on the square starting at word
// `square_offset`: lane col (< 32 - diagonal) touches (col, col + diagonal), the upper word, and
// (col + diagonal, col), the lower word. Both are read and then written.
inline gpulab::WarpAccess sweep_step(int diagonal, bool lower_word, int square_offset = 0) {
  return gpulab::WarpAccess::words(
      [&](int col) {
        const int row = col + diagonal;
        return square_offset + (lower_word ? row * kTile + col : col * kTile + row);
      },
      kTile - diagonal);
}

// The m = 2n tile (64 x 32 row-major = square 0 above square 1) after both squares are transposed
// in place: element (r, c) of the 32 x 64 transpose is element (r, c mod 32) of square c / 32.
inline int rect_transposed_word(int r, int c) { return (c / kTile) * kTile * kTile + r * kTile + (c % kTile); }

// The store phase of the rect stage: lane l reads transposed element (r, half * 32 + l).
inline gpulab::WarpAccess rect_store(int r, int half) {
  return gpulab::WarpAccess::words([&](int lane) { return rect_transposed_word(r, half * kTile + lane); });
}

}  // namespace transpose::banks
