// CPU tests of the reduction lab's operators and model (no GPU needed).
// Run:  ./build/ci/labs/reduction/test-reduction-reference "[cpu]"
// The handout's drawings: ./build/ci/gpulab experiment reduction bank-model --param draw=1
#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/testing.hpp"
#include "reduction.cuh"
#include "reduction_model.hpp"

namespace {

using namespace reduction;
namespace m = reduction::model;
using gpulab::Distribution;
using Catch::Approx;

template <class Op>
Value<Op> fold(const std::vector<Value<Op>>& v) {
  return m::fold<Op>(std::span<const Value<Op>>(v));
}

// Bank model shapes for the tests: an H100/H200 (228 KiB of shared memory per SM).
constexpr int kSmemPerSm = 228 * 1024;

}  // namespace

// ================================ operators ================================

TEST_CASE("interval: (0, n-1) exactly when every element is combined once, in order", "[cpu][operators]") {
  for (std::size_t n : {1, 2, 31, 32, 33, 1000}) {
    const auto in = m::make_input<IntervalOp>(Distribution::uniform, n, 1);
    CHECK(fold<IntervalOp>(in) == Interval{0, static_cast<std::uint32_t>(n - 1)});
  }
  CHECK(fold<IntervalOp>({}) == IntervalOp::identity());
  IntervalOp op;
  const Interval a{0, 3}, c{4, 9};
  CHECK(op(a, c) == Interval{0, 9});
  CHECK(op(c, a) == IntervalOp::invalid());                 // swapped
  CHECK(op(a, a) == IntervalOp::invalid());                 // doubled
  CHECK(op(a, Interval{5, 9}) == IntervalOp::invalid());    // one dropped
  CHECK(op(Interval{0, 0}, a) == IntervalOp::invalid());    // an identity padded as (0, 0)
  CHECK(op(IntervalOp::identity(), a) == a);
  CHECK(op(a, IntervalOp::identity()) == a);
  CHECK(op(op(a, c), IntervalOp::invalid()) == IntervalOp::invalid());  // sticky
  CHECK(op(IntervalOp::invalid(), IntervalOp::identity()) == IntervalOp::invalid());

  // A reorder anywhere in the input is caught.
  auto in = m::make_input<IntervalOp>(Distribution::uniform, 100, 1);
  std::swap(in[40], in[41]);
  CHECK(fold<IntervalOp>(in) == IntervalOp::invalid());
}

TEST_CASE("interval: associative on every split, so any correct tree gives (0, n-1)", "[cpu][operators]") {
  IntervalOp op;
  const auto in = m::make_input<IntervalOp>(Distribution::uniform, 12, 1);
  for (std::size_t split = 0; split <= in.size(); ++split) {
    const auto left = fold<IntervalOp>({in.begin(), in.begin() + split});
    const auto right = fold<IntervalOp>({in.begin() + split, in.end()});
    CHECK(op(left, right) == Interval{0, 11});
  }
}

TEST_CASE("mat2: products wrap modulo 2^32, exactly", "[cpu][operators]") {
  Mat2Op op;
  const Mat2 big{0x80000000u, 0, 0, 1}, two{2, 0, 0, 1};
  CHECK(op(big, two) == Mat2{0, 0, 0, 1});  // 2^31 * 2 = 2^32 = 0
  // Against 64-bit arithmetic reduced modulo 2^32, on full-range entries.
  const auto in = m::make_input<Mat2Op>(Distribution::full_range, 200, 3);
  for (std::size_t i = 0; i + 1 < in.size(); ++i) {
    const Mat2 &l = in[i], &r = in[i + 1];
    auto dot = [](std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
      return static_cast<std::uint32_t>((a * b + c * d) & 0xFFFFFFFFull);
    };
    const Mat2 want{dot(l.m00, r.m00, l.m01, r.m10), dot(l.m00, r.m01, l.m01, r.m11),
                    dot(l.m10, r.m00, l.m11, r.m10), dot(l.m10, r.m01, l.m11, r.m11)};
    REQUIRE(op(l, r) == want);
  }
  CHECK(op(in[0], Mat2Op::identity()) == in[0]);
  CHECK(op(Mat2Op::identity(), in[0]) == in[0]);
  CHECK_FALSE(op(in[0], in[1]) == op(in[1], in[0]));  // not commutative
}

TEST_CASE("mat2 inputs: the product never collapses, so order still shows at large n", "[cpu][operators]") {
  // Random 2 x 2 matrices mod 2^32 multiply to the zero matrix within a few hundred factors (every
  // product gathers factors of 2), and a zero result passes whatever the order. Inputs with an odd
  // determinant are invertible mod 2^32: no product of them is 0, and reversing the order shows.
  for (auto d : {Distribution::uniform, Distribution::full_range, Distribution::small_range}) {
    const auto in = m::make_input<Mat2Op>(d, std::size_t{1} << 16, 5);
    for (const auto& x : in) REQUIRE((x.m00 * x.m11 - x.m01 * x.m10) % 2 == 1);
    const Mat2 forward = fold<Mat2Op>(in);
    const std::vector<Mat2> reversed(in.rbegin(), in.rend());
    CHECK_FALSE(forward == Mat2{0, 0, 0, 0});
    CHECK_FALSE(forward == fold<Mat2Op>(reversed));
  }
}

TEST_CASE("max: the identity is INT_MIN, and an all-negative input stays negative", "[cpu][operators]") {
  const auto neg = m::all_negative_input(5000, 4);
  const auto got = fold<MaxOp>(neg);
  CHECK(got < 0);
  CHECK(got == *std::max_element(neg.begin(), neg.end()));
  CHECK(fold<MaxOp>({}) == INT_MIN);
  // What an identity of 0 (seed 003's padding) would give: the pitfall the test data catches.
  std::int32_t wrong = 0;
  for (auto x : neg) wrong = std::max(wrong, x);
  CHECK(wrong != got);
}

TEST_CASE("sum wraps modulo 2^32", "[cpu][operators]") {
  CHECK(fold<SumOp>({INT_MAX, 1}) == INT_MIN);
  CHECK(fold<SumOp>({-1, -1}) == -2);
}

TEST_CASE("affine: composition is associative, not commutative, and applies left to right", "[cpu][operators]") {
  AffineOp op;
  const auto f = m::make_input<AffineOp>(Distribution::full_range, 300, 5);
  for (std::size_t i = 0; i + 2 < f.size(); ++i) REQUIRE(op(op(f[i], f[i + 1]), f[i + 2]) == op(f[i], op(f[i + 1], f[i + 2])));
  CHECK_FALSE(op(f[0], f[1]) == op(f[1], f[0]));
  // The fold of f_0..f_{n-1} maps x to f_{n-1}(...f_1(f_0(x))).
  const auto all = fold<AffineOp>(f);
  for (std::uint32_t x : {0u, 1u, 12345u, 0xFFFFFFFFu}) {
    std::uint32_t y = x;
    for (const auto& g : f) y = g.a * y + g.c;
    CHECK(all.a * x + all.c == y);
  }
  for (const auto& g : f) CHECK(g.a % 2 == 1);  // odd a: never a constant map
  CHECK(op(AffineOp::identity(), f[0]) == f[0]);
}

TEST_CASE("inputs are deterministic in (distribution, n, seed)", "[cpu][operators]") {
  CHECK(m::make_input<AffineOp>(Distribution::uniform, 64, 9) == m::make_input<AffineOp>(Distribution::uniform, 64, 9));
  CHECK_FALSE(m::make_input<Mat2Op>(Distribution::uniform, 64, 9) == m::make_input<Mat2Op>(Distribution::uniform, 64, 10));
}

// ================================ the pipeline algorithm (seed 004 Algorithm 5) ================================

TEST_CASE("pipeline: the Fig. 8 layout is Algorithm 5's indices", "[cpu][pipeline]") {
  for (int e = 0; e < 32; ++e) {
    const auto x = m::algorithm5_indices(e);
    INFO("lane " << e);
    CHECK(x.i_s == m::pipeline_node_word(m::PipelineLayout::two_b, e));
    CHECK(x.i_r == m::pipeline_node_word(m::PipelineLayout::two_b, 32 + e));
    CHECK(x.i_1 == m::pipeline_node_word(m::PipelineLayout::two_b, 2 * e));
    CHECK(x.i_2 == m::pipeline_node_word(m::PipelineLayout::two_b, 2 * e + 1));
  }
  CHECK(m::pipeline_node_word(m::PipelineLayout::two_b, 63) == 3 * 32 / 2 - 1);  // line 26: y[3b/2 - 1]
}

TEST_CASE("pipeline: Algorithm 5 as printed, simulated on the CPU", "[cpu][pipeline]") {
  for (auto layout : {m::PipelineLayout::two_b, m::PipelineLayout::heap}) {
    // One row per warp: every element once, in order.
    const auto one = m::make_input<IntervalOp>(Distribution::uniform, 32, 1);
    CHECK(m::simulate_pipeline_warp<IntervalOp>(one, layout) == Interval{0, 31});
    // With + the simulation is the fold at any length (question 3 asks what happens with interval).
    const auto ints = m::make_input<SumOp>(Distribution::uniform, 1000, 2);
    CHECK(m::simulate_pipeline_warp<SumOp>(ints, layout) == fold<SumOp>(ints));
  }
}

// ================================ launches, traffic, time ================================

TEST_CASE("launches: the model's R(n) per stage", "[cpu][model]") {
  m::Shape s;  // block 256
  using S = m::Stage;
  CHECK(m::tree_level_sizes(std::size_t{1} << 28, 256) == std::vector<std::size_t>{1u << 28, 1u << 19, 1024, 2, 1});
  CHECK(m::launches(S::tree, std::size_t{1} << 28, s) == 4);
  CHECK(m::launches(S::tree_interleaved, 1, s) == 1);
  CHECK(m::launches(S::tree, 512, s) == 1);
  CHECK(m::launches(S::tree, 513, s) == 2);
  CHECK(m::launches(S::global_tree, 1, s) == 1);
  CHECK(m::launches(S::global_tree, 2, s) == 1);
  CHECK(m::launches(S::global_tree, 3, s) == 2);
  CHECK(m::launches(S::global_tree, 1025, s) == 11);
  for (auto st : m::all_stages()) CHECK(m::launches(st, 0, s) == (st == S::cpu ? 0 : 1));
  // One-pass stages: one launch while one block suffices, then two.
  CHECK(m::launches(S::cascading, 1000, s) == 1);
  CHECK(m::launches(S::cascading, std::size_t{1} << 28, s) == 2);
  const std::size_t one_block = 8 * kMinUnitsPerWarp * m::unit_elements(S::pipeline, 4);
  CHECK(m::launches(S::pipeline, one_block, s) == 1);
  CHECK(m::launches(S::pipeline, one_block + 1, s) == 2);
  CHECK(m::first_round_blocks(S::ordered_registers, std::size_t{1} << 28, s) == s.max_grid);
}

TEST_CASE("traffic: one-pass stages read n once; trees add a little per level", "[cpu][model]") {
  m::Shape s;
  const std::size_t n = std::size_t{1} << 24;
  const double input = 4.0 * n;
  CHECK(m::traffic(m::Stage::cascading, n, s).bytes == Approx(input).epsilon(0.01));
  CHECK(m::traffic(m::Stage::tree, n, s).bytes == Approx(input * (1 + 2.0 / 511)).epsilon(0.001));
  CHECK(m::traffic(m::Stage::global_tree, n, s).bytes > 2.5 * input);  // scattered sectors
  CHECK(m::traffic(m::Stage::cascading, n, s).agpu_ios >= n / 32.0);
}

TEST_CASE("time: seed 004 Table 1's ranking at large n", "[cpu][model]") {
  m::Shape s;
  const std::size_t n = std::size_t{1} << 26;
  const double cascading = m::agpu_time(m::Stage::cascading, n, s);
  CHECK(m::agpu_time(m::Stage::tree, n, s) > 2 * cascading);  // the log b factor
  CHECK(m::agpu_time(m::Stage::pipeline, n, s) == Approx(cascading));
  CHECK(m::predicted_ms(m::Stage::cascading, n, s, 3.0, 4000) ==
        Approx(2 * 3.0e-3 + m::traffic(m::Stage::cascading, n, s).bytes / 4.0e9));
}

TEST_CASE("multiplicity: matrix's b(b+1) words per warp, then and now", "[cpu][model]") {
  // Seed 004's K20c (48 KB, no reserve, 1-warp blocks): 11 of 64 warps. An H100/H200 (228 KiB,
  // 1 KiB reserved per block) with 4-warp blocks: the resident warps below.
  CHECK(m::resident_warps(48 * 1024, 33 * 32 * 4, 1, 0) == 11);
  CHECK(m::resident_warps(kSmemPerSm, 4 * 33 * 32 * 4, 4) == 52);
  const auto matrix = m::shared_use(m::Stage::matrix, m::Shape{128}, kSmemPerSm);
  CHECK(matrix.words_per_warp >= 33 * 32);
  CHECK(matrix.occupancy < 0.85);
  CHECK(matrix.words_per_sm <= kSmemPerSm / 4);
  CHECK(matrix.words_per_sm == (matrix.resident_warps / 4) * (matrix.bytes_per_block / 4));
  const auto pipeline = m::shared_use(m::Stage::pipeline, m::Shape{256}, kSmemPerSm);
  CHECK(pipeline.words_per_warp == 2 * 32 + 4);  // 2b + the block's share of 32 warp partials
  CHECK(pipeline.resident_warps == 64);            // never the limit
  CHECK(pipeline.multiplicity > 100 * matrix.multiplicity / 100);
  CHECK(m::shared_use(m::Stage::matrix, m::Shape{256}, kSmemPerSm, 4).resident_warps <
        m::shared_use(m::Stage::matrix, m::Shape{256}, kSmemPerSm, 1).resident_warps);
}

// ================================ bank conflicts ================================

TEST_CASE("bank model: tree-interleaved degrees per stride", "[cpu][bank-model]") {
  const std::vector<int> t256{2, 4, 8, 8, 8, 4, 2, 1}, t1024{2, 4, 8, 16, 32, 16, 8, 4, 2, 1};
  for (auto [block, want] : {std::pair{256, t256}, std::pair{1024, t1024}}) {
    std::vector<int> got;
    for (int s = 1; s < block; s *= 2) got.push_back(m::tree_interleaved_degree(block, s));
    CHECK(got == want);
  }
  // The requests the kernel issues agree with the closed form: excess = sum_s 3 ceil(T/64s) (deg-1).
  for (int block : {64, 128, 256, 512, 1024}) {
    long closed = 0;
    for (int s = 1; s < block; s *= 2)
      closed += 3L * static_cast<long>(gpulab::ceil_div(block, 64 * s)) * (m::tree_interleaved_degree(block, s) - 1);
    INFO("block " << block);
    CHECK(m::summarize(m::tree_interleaved_requests(block)).excess() == closed);
    CHECK(closed > 0);
  }
}

TEST_CASE("bank model: tree (sequential addressing) is conflict-free", "[cpu][bank-model]") {
  for (int block : {64, 256, 1024}) {
    const auto s = m::summarize(m::tree_requests(block));
    INFO("block " << block);
    CHECK(s.requests > 0);  // no requests would be conflict-free too
    CHECK(s.excess() == 0);
  }
}

TEST_CASE("bank model: the pipeline step, heap 2-way on both operand loads, 2b layout none", "[cpu][bank-model]") {
  const auto heap = m::pipeline_step_requests(m::PipelineLayout::heap);
  const auto two_b = m::pipeline_step_requests(m::PipelineLayout::two_b);
  REQUIRE(heap.size() == 4);
  CHECK(gpulab::analyze_bank_conflicts(heap[0].access).excess() == 0);  // leaf store
  CHECK(gpulab::analyze_bank_conflicts(heap[1].access).max_way == 2);   // node 2e
  CHECK(gpulab::analyze_bank_conflicts(heap[2].access).max_way == 2);   // node 2e + 1
  CHECK(gpulab::analyze_bank_conflicts(heap[3].access).excess() == 0);  // result store
  CHECK(m::summarize(heap).excess() == 2);
  // Every access of the 2b layout, the result store included (004's proof omits it), is a bijection.
  REQUIRE(two_b.size() == 4);
  for (const auto& r : two_b) {
    INFO(r.step);
    CHECK(gpulab::analyze_bank_conflicts(r.access).max_way == 1);
  }
}

TEST_CASE("bank model: the heap's operand loads fused into one 64-bit load do not conflict", "[cpu][bank-model]") {
  // What nvcc makes of the natural heap (PTX ld.shared.v2.u32): 16 lanes x 8 bytes per phase.
  const auto fused = m::pipeline_step_requests(m::PipelineLayout::heap, true);
  REQUIRE(fused.size() == 3);
  CHECK(gpulab::analyze_bank_conflicts(fused[1].access).wavefronts == 2);
  CHECK(m::summarize(fused).excess() == 0);
  CHECK_THROWS_AS(m::pipeline_step_requests(m::PipelineLayout::two_b, true), std::invalid_argument);
}

TEST_CASE("bank model: matrix staging with the pad column is conflict-free", "[cpu][bank-model]") {
  const auto s = m::summarize(m::matrix_tile_requests());
  CHECK(s.requests > 0);  // no requests would be conflict-free too
  CHECK(s.excess() == 0);
}

TEST_CASE("bank model: whole-run predictions, what Nsight Compute should count", "[cpu][bank-model]") {
  m::Shape s;  // block 256
  const std::size_t n = std::size_t{1} << 20;
  using S = m::Stage;
  // tree-interleaved: 2^20 -> 2048 -> 4 -> 1: 2053 blocks, each with the per-block excess.
  const long per_block = m::summarize(m::tree_interleaved_requests(256)).excess();
  CHECK(m::predicted_excess_wavefronts(S::tree_interleaved, n, s) == 2053 * per_block);
  CHECK(m::predicted_excess_wavefronts(S::tree_interleaved, n, s, 2) == 2 * 2053 * per_block);  // two planes
  // pipeline-heap: 2 per step, rows + 5 steps per warp with rows.
  const auto rows = m::pipeline_rows_per_warp(n, s);
  long steps = 0;
  for (auto r : rows)
    if (r) steps += static_cast<long>(r) + 5;
  CHECK(steps > 0);
  CHECK(m::predicted_excess_wavefronts(S::pipeline_heap, n, s) == 2 * steps);
  for (auto st : {S::tree, S::pipeline, S::matrix, S::cascading, S::ordered_registers, S::global_tree})
    CHECK(m::predicted_excess_wavefronts(st, n, s) == 0);
  // A small run where the grid is set by n, not by the GPU: 2^18 ints, 2048 rows, 8 rows per
  // warp, 256 warps = 32 blocks of 8 warps: 256 x (8 + 5) x 2.
  CHECK(m::predicted_excess_wavefronts(S::pipeline_heap, std::size_t{1} << 18, s) == 256L * 13 * 2);
}

TEST_CASE("bank model: equal to Nsight Compute's counts of the GPU run (results/bank-ncu.csv)", "[cpu][bank-model]") {
  // The committed counts of `gpulab measure reduction` on an H200 (2026-11-23): "L1 Wavefronts
  // Shared Excessive" of one run at n = 65536, int32 sum, every block size. The model must predict
  // each of them exactly, conflicted stages and conflict-free ones alike.
  const auto csv = std::filesystem::path(__FILE__).parent_path().parent_path() / "results" / "bank-ncu.csv";
  std::ifstream in(csv);
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "stage,block,n,excess_wavefronts,wavefronts");
  int rows = 0, conflicted = 0;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string stage, block, n, excess;
    std::getline(fields, stage, ',');
    std::getline(fields, block, ',');
    std::getline(fields, n, ',');
    std::getline(fields, excess, ',');
    INFO(line);
    const auto which = m::parse_stage(stage);
    REQUIRE(which);
    m::Shape shape;
    shape.block = std::stoi(block);
    CHECK(m::predicted_excess_wavefronts(*which, std::stoull(n), shape) == std::stol(excess));
    ++rows;
    conflicted += std::stol(excess) > 0;
  }
  CHECK(rows == 25);        // 5 stages x blocks 64 ... 1024
  CHECK(conflicted == 10);  // tree-interleaved and pipeline-heap at every block
  // And at n = 2^18, block 256 (the same GPU, the bench's ncu step, RESULTS.md).
  const m::Shape s;
  CHECK(m::predicted_excess_wavefronts(m::Stage::tree_interleaved, std::size_t{1} << 18, s) == 53865);
  CHECK(m::predicted_excess_wavefronts(m::Stage::pipeline_heap, std::size_t{1} << 18, s) == 6656);
}

// The handout's drawings: gpulab experiment reduction bank-model --param draw=1
TEST_CASE("bank-model experiment: draw=1 draws every request its excess/step column counts", "[cpu][bank-model]") {
  CHECK_FALSE(gpulab::testing::experiment("bank-model").needs_gpu);
  auto printed = [](long long draw) {
    const auto p = gpulab::testing::problem(std::size_t{1} << 16).with("draw", draw);
    return gpulab::testing::printed(gpulab::testing::run_experiment("bank-model", p));
  };
  const std::string plain = printed(0), text = printed(1);
  CHECK(plain.find("warp request:") == std::string::npos);
  auto drawn = [&](const std::string& title, const gpulab::WarpAccess& a) {
    INFO(title);
    CHECK(text.find(title + ":\n" + gpulab::draw_bank_matrix(a, 8)) != std::string::npos);
  };
  const auto heap = m::pipeline_step_requests(m::PipelineLayout::heap);
  const auto two_b = m::pipeline_step_requests(m::PipelineLayout::two_b);
  REQUIRE(heap.size() == 4);
  REQUIRE(two_b.size() == 4);
  for (std::size_t i = 0; i < heap.size(); ++i) {
    drawn("pipeline-heap " + heap[i].step, heap[i].access);
    drawn("pipeline (2b) " + two_b[i].step, two_b[i].access);
  }
  int interleaved = 0;
  for (const auto& r : m::tree_interleaved_requests(256))
    if (r.step.rfind("load x[2st] s=", 0) == 0 && r.step.find("warp 0") != std::string::npos) {
      drawn("tree-interleaved, block 256, " + r.step, r.access);
      ++interleaved;
    }
  CHECK(interleaved > 0);
  // The handout's point: the heap's operand loads are 2-way, the 2b layout's never.
  CHECK(text.find("pipeline-heap " + heap[1].step + ":\nwarp request: 4-byte accesses; 2 wavefronts (ideal 1, excess 1); "
                  "worst bank: 2-way conflict") != std::string::npos);
  CHECK(text.find("pipeline (2b) " + two_b[1].step + ":\nwarp request: 4-byte accesses; 1 wavefront (ideal 1, excess 0)\n") !=
        std::string::npos);
}
