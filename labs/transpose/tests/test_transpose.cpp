// Tests of the transpose lab. [cpu]: the CPU baseline, the lab's table, and the bank model's
// predictions for every shared-memory access the stages make. [gpu]: every stage against the CPU
// transpose on square and ragged sizes, and the in-place sweep on every tile position.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/bank_model.hpp"
#include "gpulab/buffer.hpp"
#include "gpulab/testing.hpp"
#include "transpose_model.hpp"
#include "transpose.cuh"

using gpulab::analyze_bank_conflicts;
using gpulab::testing::problem_2d;
using namespace transpose::banks;

namespace {

const std::vector<std::string> kTransposingStages = {"naive",    "tiled",          "padded",
                                                     "swizzled", "in-place-sweep", "in-place-sweep-rect"};
const std::vector<std::string> kCopyStages = {"copy", "copy-shared", "memcpy"};

struct Size {
  std::size_t rows, cols;
};
// Square, ragged, degenerate: none of the ragged ones is a multiple of 32 in either dimension.
const std::vector<Size> kSizes = {{1, 1},   {1, 1000}, {1000, 1}, {31, 33},  {33, 31},
                                  {32, 32}, {64, 96},  {65, 63},  {1000, 999}, {8192, 8192}};

}  // namespace

// ---- [cpu] the lab and the CPU baseline ---------------------------------------------------------

TEST_CASE("the lab table marks which stages must be conflict-free", "[cpu]") {
  const auto& lab = gpulab::testing::lab();
  for (const auto& id : {"padded", "swizzled", "in-place-sweep", "in-place-sweep-rect"}) {
    const auto* s = lab.find_stage(id);
    REQUIRE(s != nullptr);
    CHECK(s->must_be_conflict_free);
  }
  REQUIRE(lab.find_stage("tiled") != nullptr);
  CHECK(lab.find_stage("tiled")->expect_conflicts);
  CHECK(lab.default_rows == 8192);
  CHECK(lab.default_cols == 8192);
  REQUIRE(lab.find_stage(lab.baseline_cpu_stage) != nullptr);
  CHECK(lab.find_stage(lab.baseline_cpu_stage)->where == gpulab::Where::cpu);
}

TEST_CASE("the CPU transpose matches the reference on every test size", "[cpu]") {
  for (const auto& s : kSizes) GPULAB_REQUIRE_PASS("cpu", problem_2d(s.rows, s.cols));
}

TEST_CASE("a plain count is accepted only when it is a perfect square", "[cpu]") {
  GPULAB_REQUIRE_PASS("cpu", gpulab::testing::problem(49));
  const auto r = gpulab::testing::check("cpu", gpulab::testing::problem(50));
  CHECK(r.status == gpulab::StageStatus::error);
  CHECK(r.message.find("ROWSxCOLS") != std::string::npos);
}

// ---- [cpu] the bank model of each tile ----------------------------------------------------------

TEST_CASE("every layout gives each tile element its own word", "[cpu]") {
  for (auto layout : {TileLayout::plain, TileLayout::padded, TileLayout::swizzled}) {
    std::set<int> words;
    for (int r = 0; r < kTile; ++r)
      for (int c = 0; c < kTile; ++c) words.insert(word_of(layout, r, c));
    INFO(name(layout));
    CHECK(words.size() == static_cast<std::size_t>(kTile * kTile));
  }
}

TEST_CASE("tiled: row stores are conflict-free, column loads conflict 32-way", "[cpu]") {
  const auto rows = analyze_bank_conflicts(row_phase(TileLayout::plain));
  CHECK(rows.excess() == 0);
  const auto cols = analyze_bank_conflicts(column_phase(TileLayout::plain));
  CHECK(cols.max_way == 32);
  CHECK(cols.wavefronts == 32);
  CHECK(cols.excess() == 31);
}

TEST_CASE("padded and swizzled: both phases conflict-free with blockDim.x = 32", "[cpu]") {
  for (auto layout : {TileLayout::padded, TileLayout::swizzled}) {
    INFO(name(layout));
    CHECK(analyze_bank_conflicts(row_phase(layout)).excess() == 0);
    CHECK(analyze_bank_conflicts(column_phase(layout)).excess() == 0);
  }
}

TEST_CASE("padded and swizzled: every warp of the CTA, every step, conflict-free", "[cpu]") {
  // Warp y of a 32 x 8 CTA in step k touches tile row (or column) y + 8k: all 32 of them.
  for (auto layout : {TileLayout::padded, TileLayout::swizzled})
    for (int line = 0; line < kTile; ++line) {
      INFO(name(layout) << " line " << line);
      const auto store = gpulab::WarpAccess::words([&](int lane) { return word_of(layout, line, lane); });
      const auto load = gpulab::WarpAccess::words([&](int lane) { return word_of(layout, lane, line); });
      CHECK(analyze_bank_conflicts(store).excess() == 0);
      CHECK(analyze_bank_conflicts(load).excess() == 0);
    }
}

TEST_CASE("blockDim.x = 16 breaks padding and swizzling: a warp spans two tile rows", "[cpu]") {
  // Lanes 0..15 are (tx, 0), lanes 16..31 are (tx, 1). Padded column load: word tx * 33 + ty is in
  // bank (tx + ty) mod 32, so lane (tx, 1) meets lane (tx + 1, 0). Row store: row 1 starts at
  // bank 1 and overlaps row 0's banks 1..15. The swizzle only permutes banks within a row.
  for (auto layout : {TileLayout::padded, TileLayout::swizzled}) {
    INFO(name(layout));
    CHECK(analyze_bank_conflicts(column_phase(layout, 16)).max_way == 2);
    CHECK(analyze_bank_conflicts(row_phase(layout, 16)).max_way == 2);
    CHECK(analyze_bank_conflicts(column_phase(layout, 8)).max_way >= 2);
  }
  // Unpadded, lanes (tx, 0) all hit bank 0 and lanes (tx, 1) bank 1: 16-way instead of 32-way.
  CHECK(analyze_bank_conflicts(column_phase(TileLayout::plain, 16)).max_way == 16);
}

TEST_CASE("in-place sweep: every step of seed 000 Algorithm 2 is conflict-free", "[cpu]") {
  for (int square : {0, kTile * kTile})  // the rect stage's second square too
    for (int i = 1; i < kTile; ++i)
      for (bool lower : {false, true}) {
        INFO("square at word " << square << ", diagonal " << i << (lower ? ", lower" : ", upper") << " word");
        const auto r = analyze_bank_conflicts(sweep_step(i, lower, square));
        CHECK(r.excess() == 0);
        CHECK(r.max_way == 1);
      }
}

namespace {

// The 32-bit word lane `lane` of a bank-model request touches (-1: the lane is inactive).
int word_of_lane(const gpulab::WarpAccess& a, int lane) {
  const auto& byte = a.byte_address[static_cast<std::size_t>(lane)];
  return byte ? static_cast<int>(*byte / 4) : -1;
}

}  // namespace

TEST_CASE("in-place sweep: the diagonals partition the pairs, so warps may share them out", "[cpu]") {
  // Every word below/above the diagonal is touched by exactly one (diagonal, lane) of the model's
  // sweep_step, the requests the bank numbers come from: no two threads of the CTA ever read or
  // write the same word, whichever warp takes which diagonal.
  std::vector<int> touched(kTile * kTile, 0);
  for (int i = 1; i < kTile; ++i)
    for (bool lower : {false, true}) {
      const auto step = sweep_step(i, lower);
      for (int lane = 0; lane < kTile; ++lane)
        if (const int w = word_of_lane(step, lane); w >= 0) {
          REQUIRE(w < kTile * kTile);
          ++touched[w];
        }
    }
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c) {
      INFO("word (" << r << ", " << c << ")");
      CHECK(touched[r * kTile + c] == (r == c ? 0 : 1));
    }
}

TEST_CASE("in-place sweep: simulated on the CPU it transposes the square", "[cpu]") {
  // Step i swaps, lane by lane, the model's upper word with its lower word (Algorithm 2).
  std::array<int, kTile * kTile> m{};
  std::iota(m.begin(), m.end(), 0);
  for (int i = 1; i < kTile; ++i) {
    const auto upper = sweep_step(i, false), lower = sweep_step(i, true);
    for (int lane = 0; lane < kTile; ++lane) {
      const int u = word_of_lane(upper, lane), l = word_of_lane(lower, lane);
      REQUIRE((u < 0) == (l < 0));  // both words of a pair, or neither
      if (u >= 0) std::swap(m[u], m[l]);
    }
  }
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c) REQUIRE(m[r * kTile + c] == c * kTile + r);
}

TEST_CASE("in-place sweep, m = 2n: index arithmetic reads the 32 x 64 transpose row-wise", "[cpu]") {
  // The two transposed squares hold every element of the 64 x 32 tile exactly once...
  std::set<int> words;
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < 2 * kTile; ++c) words.insert(rect_transposed_word(r, c));
  CHECK(words.size() == static_cast<std::size_t>(2 * kTile * kTile));
  // ...at the place a 64 x 32 row-major tile keeps element (c, r) after each square is transposed.
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < 2 * kTile; ++c) {
      const int square = c / kTile, in_row = c % kTile, in_col = r;  // tile element (c, r)
      CHECK(rect_transposed_word(r, c) == square * kTile * kTile + in_col * kTile + in_row);
    }
  for (int r = 0; r < kTile; ++r)
    for (int half = 0; half < 2; ++half) CHECK(analyze_bank_conflicts(rect_store(r, half)).excess() == 0);
}

TEST_CASE("bank-model experiment: draw=1 adds the README's drawings, from the model's requests", "[cpu]") {
  CHECK_FALSE(gpulab::testing::experiment("bank-model").needs_gpu);
  auto printed = [](long long draw) {
    return gpulab::testing::printed(gpulab::testing::run_experiment("bank-model", problem_2d(64, 64).with("draw", draw)));
  };
  const std::string plain = printed(0), drawn = printed(1);
  CHECK(plain.find("warp request:") == std::string::npos);
  CHECK(drawn.find("tiled 32x32, column load, blockDim.x = 32:\n" +
                   gpulab::draw_bank_matrix(column_phase(TileLayout::plain, 32), 8)) != std::string::npos);
  CHECK(drawn.find("padded 32x33, column load, blockDim.x = 16:\n" +
                   gpulab::draw_bank_matrix(column_phase(TileLayout::padded, 16), 8)) != std::string::npos);
  CHECK(drawn.find("32 wavefronts (ideal 1, excess 31); worst bank: 32-way conflict") != std::string::npos);
}

// ---- [gpu] every stage against the CPU -----------------------------------------------------------

TEST_CASE("every GPU stage matches the CPU transpose on square and ragged sizes", "[gpu]") {
  // Size-major: the input and its transpose are built once per size and shared by all stages.
  for (const auto& s : kSizes) {
    for (const auto& id : kCopyStages) GPULAB_REQUIRE_PASS(id, problem_2d(s.rows, s.cols));
    for (const auto& id : kTransposingStages) GPULAB_REQUIRE_PASS(id, problem_2d(s.rows, s.cols));
  }
}

TEST_CASE("stages pass with other seeds and distributions", "[gpu]") {
  for (auto d : {gpulab::Distribution::full_range, gpulab::Distribution::small_range})
    for (std::uint64_t seed : {2u, 3u})
      for (const auto& id : kTransposingStages) GPULAB_REQUIRE_PASS(id, problem_2d(257, 129, d, seed));
}

TEST_CASE("a tall matrix needs more tile rows than gridDim.y allows", "[gpu]") {
  // 4,200,000 / 32 = 131,250 tile rows (65,625 for the 64-row rect tiles): more than 65,535.
  for (const auto& id : kTransposingStages) GPULAB_REQUIRE_PASS(id, problem_2d(4200000, 3));
  GPULAB_REQUIRE_PASS("copy-shared", problem_2d(4200000, 3));
}

namespace {

// Calls a stage's function directly on in(r, c) = r * cols + c (exact in float below 2^24), so a
// wrong element names the exact (row, col) it came from.
void require_exact_positions(void (*stage)(const float*, float*, std::size_t, std::size_t), std::size_t rows,
                             std::size_t cols) {
  std::vector<float> host(rows * cols);
  std::iota(host.begin(), host.end(), 0.0f);
  gpulab::DeviceBuffer<float> in{std::span<const float>(host)}, out(rows * cols);
  out.poison();
  stage(in.data(), out.data(), rows, cols);
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  const auto result = out.download();
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t r = 0; r < rows; ++r) {
      const float got = result[c * rows + r];
      const float want = static_cast<float>(r * cols + c);
      if (got != want) {
        const auto from = static_cast<std::size_t>(got);
        FAIL_CHECK(rows << " x " << cols << ": out(" << c << ", " << r << ") should be in(" << r << ", " << c
                        << ") but holds " << got << " = in(" << from / cols << ", " << from % cols
                        << ") or poison");
        return;
      }
    }
}

}  // namespace

TEST_CASE("in-place sweep: every position of every tile lands where it should", "[gpu]") {
  // 96 x 96: 3 x 3 full tiles (corner, edge, interior); 100 x 67: ragged right and bottom tiles;
  // 130 x 67 for the 64-row tiles: two full, one ragged of 2 rows.
  for (const auto& s : std::vector<Size>{{32, 32}, {96, 96}, {100, 67}, {130, 67}, {64, 32}, {1, 33}}) {
    INFO(s.rows << " x " << s.cols);
    require_exact_positions(transpose::in_place_sweep, s.rows, s.cols);
    require_exact_positions(transpose::in_place_sweep_rect, s.rows, s.cols);
  }
}

TEST_CASE("every transposing stage places every element of a ragged matrix exactly", "[gpu]") {
  for (auto* f : {transpose::naive, transpose::tiled, transpose::padded, transpose::swizzled})
    require_exact_positions(f, 100, 67);
}

TEST_CASE("an empty matrix launches nothing and does not fail", "[gpu]") {
  // A grid of 0 CTAs is a launch error, and a token launch for nothing costs a launch: transpose.cu
  // says "the empty matrix is valid: launch nothing". The counter is what can tell.
  std::vector<std::string> stages = kCopyStages;
  stages.insert(stages.end(), kTransposingStages.begin(), kTransposingStages.end());
  for (const auto& id : stages)
    for (const auto& shape : {Size{0, 17}, Size{17, 0}, Size{0, 0}}) {
      const auto r = gpulab::testing::check(id, problem_2d(shape.rows, shape.cols));
      INFO("stage " << id << " on " << shape.rows << " x " << shape.cols << ": " << gpulab::to_string(r.status) << " "
                    << r.message);
      CHECK(r.status == gpulab::StageStatus::pass);
      REQUIRE(r.launches.has_value());  // the launch counter ran (no profiler holds CUPTI under ctest)
      CHECK(*r.launches == 0);
    }
}
