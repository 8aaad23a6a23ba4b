// Visible tests of the ShearSort lab's stage table. [cpu] cases run everywhere (CI has no GPU);
// [gpu] cases need one (ctest skips them with 77 elsewhere). The model has its own file
// (test_shearsort_model.cpp).
// Run one stage's tests:  ./build/default/labs/shearsort/test-shearsort-student "[tile-shear-padded]"
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "gpulab/testing.hpp"
#include "shearsort_lab.hpp"

namespace {

using gpulab::Distribution;
using gpulab::Problem;
using gpulab::StageStatus;
using gpulab::testing::problem;
namespace lab = shearsort::lab;

const char* const kTileStages[] = {"tile-bitonic", "tile-shear-naive", "tile-shear-transpose", "tile-shear-registers",
                                   "tile-shear-padded"};

Problem with_input(Problem p, int input) { return p.with("input", input); }

gpulab::StageResult run(const std::string& stage, const Problem& p) { return gpulab::testing::check(stage, p); }

// The edge cases of a stage that sorts tiles: every edge size (0, 1, 31, 32, 33, 1023, 1025, 2^k
// and 2^k - 3 for k = 10..16) with uniform keys and the lab's inputs -- the 0-1 tile that needs the
// final column phase, column-sorted tiles, INT_MIN/INT_MAX, all-equal, sorted, reverse.
void check_tiles(const std::string& stage) {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 16);
  GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 3));
  GPULAB_CHECK_PASS(stage, with_input(problem(n), lab::final_phase));
  GPULAB_CHECK_PASS(stage, with_input(problem(n, Distribution::uniform, 4), lab::column_sorted));
  GPULAB_CHECK_PASS(stage, with_input(problem(n, Distribution::uniform, 5), lab::extremes));
  GPULAB_CHECK_PASS(stage, with_input(problem(n, Distribution::uniform, 6), lab::zero_one));
  for (auto d : {Distribution::all_equal, Distribution::sorted, Distribution::reverse})
    GPULAB_CHECK_PASS(stage, problem(n, d, 7));
}

// A merge stage: the whole array sorted; with pairs, stable. Ties everywhere (small-range,
// few-unique, all-equal, zero-one), extremes (real keys equal to INT_MAX), odd sizes.
void check_merge(const std::string& stage, const Problem& knobs = {}) {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 16);
  auto at = [&](Problem p) {
    for (const auto& [k, v] : knobs.params) p.params[k] = v;
    return p;
  };
  for (int pairs : {0, 1}) {
    GPULAB_CHECK_PASS(stage, at(problem(n, Distribution::uniform, 3).with("pairs", pairs)));
    GPULAB_CHECK_PASS(stage, at(problem(n, Distribution::small_range, 4).with("pairs", pairs)));
    GPULAB_CHECK_PASS(stage, at(with_input(problem(n, Distribution::uniform, 5), lab::extremes).with("pairs", pairs)));
  }
  GPULAB_CHECK_PASS(stage, at(problem(n, Distribution::all_equal, 6).with("pairs", 1)));
  GPULAB_CHECK_PASS(stage, at(problem(n, Distribution::reverse, 7)));
  GPULAB_CHECK_PASS(stage, at(with_input(problem(n, Distribution::uniform, 8), lab::zero_one).with("pairs", 1)));
}

}  // namespace

// ================================== [cpu]: the stage table's own checks ==================================

TEST_CASE("stage table: every stage of the task sheet and the six baselines", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  for (const char* id : {"cpu", "cpu-shear", "tile-bitonic", "tile-shear-naive", "tile-shear-transpose",
                         "tile-shear-registers", "tile-shear-padded", "merge-pairwise", "merge-dway", "tile-cub-merge",
                         "tile-cub-radix", "sort-cub-merge", "sort-cub-merge-stable", "sort-cub-radix", "sort-thrust"})
    CHECK(t.find_stage(id) != nullptr);
  for (const char* id : {"tile-shear-transpose", "tile-shear-registers", "tile-shear-padded"})
    CHECK(t.find_stage(id)->must_be_conflict_free);
  for (const char* id : {"tile-bitonic", "tile-shear-naive"}) CHECK(t.find_stage(id)->expect_conflicts);
  CHECK_FALSE(t.find_stage("merge-pairwise")->must_be_conflict_free);
}

TEST_CASE("cpu: stable sort on every edge size, keys and pairs", "[cpu][cpu-stage]") {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 16);
  for (int pairs : {0, 1}) {
    GPULAB_CHECK_PASS("cpu", problem(n, Distribution::uniform, 1).with("pairs", pairs));
    GPULAB_CHECK_PASS("cpu", problem(n, Distribution::few_unique, 2).with("pairs", pairs));
    GPULAB_CHECK_PASS("cpu", with_input(problem(n), lab::extremes).with("pairs", pairs));
  }
}

TEST_CASE("cpu-shear: every tile sorted in address order on the lab's inputs", "[cpu][cpu-stage]") { check_tiles("cpu-shear"); }

TEST_CASE("knobs: a bad chunk and a d that is not a power of two are refused in one line", "[cpu][harness]") {
  auto r = run("merge-dway", problem(5000).with("chunk", 48));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("--param chunk=48: use 0 (automatic) or a power of two >= 32") != std::string::npos);
  r = run("merge-dway", problem(5000).with("d", 6));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("power of two") != std::string::npos);
  r = run("cpu", problem(10).with("input", 9));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("dist (0), zero-one (1), final-phase (2), column-sorted (3), extremes (4)") != std::string::npos);
}

TEST_CASE("launch model: the stage table predicts shearsort_model's R(n)", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  auto predicted = [&](const char* id, const Problem& p) {
    const auto* stage = t.find_stage(id);
    return *stage->predicted_launches(stage->with_defaults(p));
  };
  CHECK(predicted("tile-shear-padded", problem(std::size_t{1} << 24)) == 1);
  CHECK(predicted("tile-bitonic", problem(0)) == 0);
  CHECK(predicted("merge-pairwise", problem(std::size_t{1} << 24)) == 29);   // 1 + 2 x 14
  CHECK(predicted("merge-dway", problem(std::size_t{1} << 24)) == 1 + 2 * 5);  // d = 8: 2^14 tiles, 5 passes
  CHECK(predicted("merge-dway", problem(std::size_t{1} << 24).with("d", 16)) == 9);
  CHECK(predicted("merge-pairwise", problem(1000)) == 1);
}

TEST_CASE("paths: the stage table names the model's paths", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  const auto* dway = t.find_stage("merge-dway");
  const auto p = dway->paths(dway->with_defaults(problem(5000).with("d", 256).with("pairs", 1)));
  CHECK(std::find(p.begin(), p.end(), "heap shared memory above 48 KiB (opt-in)") != p.end());
  const auto* tile = t.find_stage("tile-shear-padded");
  CHECK(tile->paths(tile->with_defaults(problem(9000))).size() == 4);
}

TEST_CASE("experiments on the CPU: bank model, heap model, Fig. 14, round count", "[cpu][experiments]") {
  auto bank = gpulab::testing::run_experiment("bank-model", problem(65536).with("draw", 1));
  const std::string shown = gpulab::testing::printed(bank);
  INFO(shown);
  CHECK(shown.find("tile-shear-naive") != std::string::npos);
  CHECK(shown.find("9094656") != std::string::npos);  // 64 tiles x 142104
  CHECK(shown.find("warp request:") != std::string::npos);  // the drawings
  const auto heap = gpulab::testing::printed(gpulab::testing::run_experiment("heap-model", problem(std::size_t{1} << 28)));
  CHECK(heap.find("32640") != std::string::npos);  // the seed's bytes per warp at d = 256
  const auto fig = gpulab::testing::run_experiment("fig14", problem(1024));
  REQUIRE(fig.rows().size() >= 3);
  CHECK(std::get<std::int64_t>(fig.rows()[0][2]) == 3);  // 8 runs, d = 2: 3 passes
  CHECK(std::get<std::int64_t>(fig.rows()[2][2]) == 1);  // d = 8: 1 pass
  const auto rounds = gpulab::testing::run_experiment("round-count", problem(1024));
  for (const auto& row : rounds.rows()) {
    const bool lab_plan = std::get<std::string>(row[1]).rfind("the lab", 0) == 0;
    if (lab_plan) CHECK(std::get<std::int64_t>(row[5]) == 0);
    else CHECK(std::get<std::int64_t>(row[5]) > 0);
  }
}

// ================================== [gpu]: every stage through the stage table ===========================

TEST_CASE("tile-bitonic: every tile sorted", "[gpu][tile-bitonic]") { check_tiles("tile-bitonic"); }
TEST_CASE("tile-shear-naive: every tile sorted", "[gpu][tile-shear-naive]") { check_tiles("tile-shear-naive"); }
TEST_CASE("tile-shear-transpose: every tile sorted", "[gpu][tile-shear-transpose]") { check_tiles("tile-shear-transpose"); }
TEST_CASE("tile-shear-registers: every tile sorted", "[gpu][tile-shear-registers]") { check_tiles("tile-shear-registers"); }
TEST_CASE("tile-shear-padded: every tile sorted", "[gpu][tile-shear-padded]") { check_tiles("tile-shear-padded"); }

TEST_CASE("merge-pairwise: sorted and stable at every size", "[gpu][merge-pairwise]") { check_merge("merge-pairwise"); }

TEST_CASE("merge-pairwise: on every base case", "[gpu][merge-pairwise]") {
  for (int base = 0; base < 5; ++base)
    for (std::size_t n : {std::size_t{1025}, std::size_t{9000}, std::size_t{70001}})
      GPULAB_CHECK_PASS("merge-pairwise", problem(n, Distribution::small_range, 9).with("base", base).with("pairs", 1));
}

TEST_CASE("merge-dway: sorted and stable at every size, d = 2, 4, 8, 256", "[gpu][merge-dway]") {
  const int d = GENERATE(2, 4, 8, 256);
  check_merge("merge-dway", Problem{}.with("d", d));
}

// Small chunks: many warp tasks per group, so many d-way co-ranks, on ties and on INT_MAX keys.
TEST_CASE("merge-dway: small chunks, every d, heavy ties", "[gpu][merge-dway]") {
  for (int d = 2; d <= 256; d *= 2)
    for (long long chunk : {0LL, 64LL, 512LL})
      for (std::size_t n : {std::size_t{1025}, std::size_t{5000}, std::size_t{20000}}) {
        GPULAB_CHECK_PASS("merge-dway", problem(n, Distribution::all_equal, 2).with("d", d).with("chunk", chunk).with("pairs", 1));
        GPULAB_CHECK_PASS("merge-dway",
                          with_input(problem(n, Distribution::uniform, 3), lab::extremes).with("d", d).with("chunk", chunk));
      }
}

// Two passes at d = 256 and run counts that are not a power of d.
TEST_CASE("merge-dway: several passes, partial groups", "[gpu][merge-dway]") {
  GPULAB_CHECK_PASS("merge-dway", problem(256 * 1024 + 3000, Distribution::uniform, 4).with("d", 256).with("chunk", 4096));
  GPULAB_CHECK_PASS("merge-dway", problem(256 * 1024 + 3000, Distribution::few_unique, 5).with("d", 256).with("pairs", 1));
  GPULAB_CHECK_PASS("merge-dway", problem(16 * 16 * 1024 + 5, Distribution::reverse, 6).with("d", 16).with("pairs", 1));
  GPULAB_CHECK_PASS("merge-dway", problem(64 * 1024 * 2 + 77, Distribution::sorted, 7).with("d", 64).with("chunk", 2048));
  GPULAB_CHECK_PASS("merge-dway", problem(300007, Distribution::small_range, 8).with("d", 32).with("pairs", 1));
  GPULAB_CHECK_PASS("merge-dway", problem(300007, Distribution::uniform, 9).with("d", 128));
}

TEST_CASE("baselines: the CUB tile kernels and the device sorts", "[gpu][baselines]") {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1025}, std::size_t{70001}}) {
    for (const char* stage : {"tile-cub-merge", "tile-cub-radix"}) {
      GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 1));
      GPULAB_CHECK_PASS(stage, with_input(problem(n), lab::extremes));
    }
    for (const char* stage : {"sort-cub-merge", "sort-cub-merge-stable", "sort-cub-radix", "sort-thrust"}) {
      GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 2));
      GPULAB_CHECK_PASS(stage, with_input(problem(n), lab::extremes).with("pairs", 1));  // keys only: pairs ignored
    }
  }
}

TEST_CASE("every GPU stage at n >= 2^22, not a power of two", "[gpu][large]") {
  const std::size_t n = (std::size_t{1} << 22) + 5;
  for (const char* stage : kTileStages) GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 3));
  for (const char* stage : {"merge-pairwise", "merge-dway"}) {
    GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 4));
    GPULAB_CHECK_PASS(stage, problem(n, Distribution::small_range, 5).with("pairs", 1));
  }
  GPULAB_CHECK_PASS("merge-dway", problem(n, Distribution::uniform, 6).with("d", 4));
}
