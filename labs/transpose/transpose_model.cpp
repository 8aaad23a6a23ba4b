#include "transpose_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace transpose::model {

Shape shape_of(const gpulab::Problem& p) {
  Shape s{p.rows, p.cols};
  if (s.rows == 0 && s.cols == 0 && p.n > 0) {
    // A plain count: accept a perfect square, otherwise say how to ask for a matrix.
    const auto side = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(p.n))));
    if (side * side != p.n)
      throw gpulab::UsageError("transpose works on matrices: give --n ROWSxCOLS (e.g. 1000x999), not a count of " +
                               std::to_string(p.n));
    s.rows = s.cols = side;
  }
  if (s.rows != 0 && s.cols > std::numeric_limits<std::size_t>::max() / 8 / s.rows)
    throw gpulab::UsageError("transpose: " + std::to_string(s.rows) + " x " + std::to_string(s.cols) + " is too large");
  return s;
}

std::vector<float> reference_transpose(std::span<const float> in, Shape s) {
  std::vector<float> out(in.size());
  for (std::size_t r = 0; r < s.rows; ++r)
    for (std::size_t c = 0; c < s.cols; ++c) out[c * s.rows + r] = in[r * s.cols + c];
  return out;
}

// 64 x 64 blocks stay in L1/L2 while both the rows read and the columns written are walked.
void cpu_transpose(const float* in, float* out, std::size_t rows, std::size_t cols) {
  constexpr std::size_t kBlock = 64;
  for (std::size_t r0 = 0; r0 < rows; r0 += kBlock)
    for (std::size_t c0 = 0; c0 < cols; c0 += kBlock) {
      const std::size_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
      for (std::size_t r = r0; r < r1; ++r)
        for (std::size_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
    }
}

std::string where_in_matrix(std::size_t i, Shape s, bool transposed) {
  std::ostringstream where;
  if (transposed)
    where << " [out(" << i / s.rows << ", " << i % s.rows << ") of the " << s.cols << " x " << s.rows
          << " output should be in(" << i % s.rows << ", " << i / s.rows << ")]";
  else
    where << " [element (" << i / s.cols << ", " << i % s.cols << ") of the copy]";
  return where.str();
}

std::vector<std::string> paths(Shape s) {
  constexpr std::size_t kTileEdge = 32, kStripRows = 64, kMaxGridY = 65535;
  if (s.count() == 0) return {"empty"};
  std::vector<std::string> out{s.rows <= kTileEdge && s.cols <= kTileEdge ? "one tile" : "several tiles"};
  if (s.rows % kTileEdge != 0) out.push_back("ragged rows");
  if (s.cols % kTileEdge != 0) out.push_back("ragged columns");
  if ((s.rows + kStripRows - 1) / kStripRows > kMaxGridY) out.push_back("more tile rows than gridDim.y allows");
  return out;
}

}  // namespace transpose::model
