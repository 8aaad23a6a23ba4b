// Visible tests of the bitonic lab's stage table. [cpu] cases run everywhere (CI has no GPU);
// [gpu] cases need one (ctest skips them with 77 elsewhere). The model has its own file
// (test_bitonic_model.cpp).
// Run one stage's tests:  ./build/default/labs/bitonic/test-bitonic-student "[phase4]"
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "bitonic_lab.hpp"
#include "gpulab/testing.hpp"

namespace {

using gpulab::Distribution;
using gpulab::Problem;
using gpulab::StageStatus;
using gpulab::testing::problem;
namespace lab = bitonic::lab;

const char* const kGpuStages[] = {"phase0", "phase1", "phase2", "phase3", "phase4", "phase4-conflict-free", "phase5-fused"};

Problem with_input(Problem p, int input) { return p.with("input", input); }

gpulab::StageResult run(const std::string& stage, const Problem& p) { return gpulab::testing::check(stage, p); }

// The edge cases of README.md, "Debugging and pitfalls", for one stage on one pad: every edge size (0, 1, 31, 32, 33, 1023, 1025, 2^k and
// 2^k - 3 for k in [10, kHi]: around the tile T and up to 4T and 8T, where a wrong direction
// rule shows), every int32, ties, all-equal, sorted, reverse, organ-pipe (a bitonic input), keys
// equal to the sentinel INT_MAX, negative keys.
template <int kHi>
void check_sort(const std::string& stage, int pad) {
  const std::size_t n = GPULAB_EDGE_SIZE(10, kHi);
  auto at = [&](Problem p) { return p.with("pad", pad); };
  GPULAB_CHECK_PASS(stage, at(problem(n, Distribution::uniform, 3)));
  GPULAB_CHECK_PASS(stage, at(problem(n, Distribution::small_range, 4)));
  for (auto d : {Distribution::all_equal, Distribution::sorted, Distribution::reverse, Distribution::few_unique})
    GPULAB_CHECK_PASS(stage, at(problem(n, d, 5)));
  GPULAB_CHECK_PASS(stage, at(with_input(problem(n, Distribution::uniform, 6), lab::organ_pipe)));
  GPULAB_CHECK_PASS(stage, at(with_input(problem(n, Distribution::uniform, 7), lab::int_max)));
  GPULAB_CHECK_PASS(stage, at(with_input(problem(n, Distribution::uniform, 8), lab::negative)));
}

}  // namespace

// ================================== [cpu]: the stage table's own checks ==================================

TEST_CASE("stage table: every stage of the task sheet and the three baselines", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  for (const char* id : {"cpu", "cpu-network", "phase0", "phase1", "phase2", "phase3", "phase4", "phase4-conflict-free",
                         "phase5-fused", "cub-merge-sort", "cub-radix-sort", "thrust-sort"})
    CHECK(t.find_stage(id) != nullptr);
  CHECK(t.find_stage("phase4-conflict-free")->must_be_conflict_free);
  for (const char* id : {"phase1", "phase2", "phase3", "phase4"}) CHECK(t.find_stage(id)->expect_conflicts);
  CHECK_FALSE(t.find_stage("phase0")->expect_conflicts);
  CHECK_FALSE(t.find_stage("phase5-fused")->must_be_conflict_free);
}

TEST_CASE("cpu: std::sort on every edge size and input", "[cpu][cpu-stage]") {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 16);
  GPULAB_CHECK_PASS("cpu", problem(n, Distribution::uniform, 1));
  GPULAB_CHECK_PASS("cpu", with_input(problem(n), lab::negative));
  GPULAB_CHECK_PASS("cpu", with_input(problem(n), lab::int_max));
}

TEST_CASE("cpu-network: seed 002 Algorithm 1 on every edge size, both pads", "[cpu][cpu-stage]") {
  check_sort<14>("cpu-network", GENERATE(lab::sentinel, lab::virtual_pad));
}

TEST_CASE("knobs: a bad pad and a block that is not a power of two are refused in one line", "[cpu][harness]") {
  auto r = run("phase0", problem(1000).with("block", 96));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("power of two") != std::string::npos);
  r = run("cpu", problem(10).with("input", 9));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("dist (0), organ-pipe (1), int-max (2), negative (3)") != std::string::npos);
}

TEST_CASE("launch model: the stage table predicts bitonic_model's R(n)", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  auto predicted = [&](const char* id, const Problem& p) {
    const auto* stage = t.find_stage(id);
    return *stage->predicted_launches(stage->with_defaults(p));
  };
  const std::size_t n24 = std::size_t{1} << 24;
  CHECK(predicted("phase0", problem(n24)) == 300);
  CHECK(predicted("phase1", problem(10000000)) == 300);  // 10^7 runs the network of 2^24
  CHECK(predicted("phase2", problem(n24).with("block", 1024)) == 235);
  CHECK(predicted("phase3", problem(n24).with("block", 1024)) == 225);
  CHECK(predicted("phase4", problem(n24)) == 120);
  CHECK(predicted("phase4", problem(n24).with("block", 1024)) == 105);
  CHECK(predicted("phase4-conflict-free", problem(n24).with("pad", lab::virtual_pad)) == 120);
  CHECK(predicted("phase5-fused", problem(n24)) == 22);
  CHECK(predicted("phase4", problem(0)) == 0);
  CHECK(predicted("phase0", problem(1)) == 1);
  CHECK(predicted("phase4", problem(1000)) == 1);
}

TEST_CASE("paths: the stage table names the model's paths", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  const auto* fused = t.find_stage("phase5-fused");
  const auto p = fused->paths(fused->with_defaults(problem((std::size_t{1} << 19) + 3)));
  CHECK(std::find(p.begin(), p.end(), "a group launch that transposes") != p.end());
  const auto* phase4 = t.find_stage("phase4");
  const auto q = phase4->paths(phase4->with_defaults(problem(40000).with("pad", lab::virtual_pad)));
  CHECK(std::find(q.begin(), q.end(), "pad = virtual: ascending merges, mirrored first strides") != q.end());
  CHECK(std::find(q.begin(), q.end(), "L > t: merge levels above the tile") != q.end());
}

TEST_CASE("experiments on the CPU: launches, which tile, bytes, bank model, occupancy", "[cpu][experiments]") {
  const auto which = gpulab::testing::printed(gpulab::testing::run_experiment("which-tile", problem(1024)));
  INFO(which);
  CHECK(which.find("none") != std::string::npos);
  const auto tile = gpulab::testing::run_experiment("which-tile", problem(1024));
  REQUIRE(tile.rows().size() == 4u);
  CHECK(std::get<std::string>(tile.rows()[3][3]) == "10");  // phase 4: formula - 1 at t = 10 only
  CHECK(std::get<std::string>(tile.rows()[1][3]) == "11");  // phase 2: t = 11
  const auto launches = gpulab::testing::run_experiment("launches", problem(1024));
  bool found = false;
  for (const auto& row : launches.rows())
    if (std::get<std::int64_t>(row[0]) == 24 && std::get<std::int64_t>(row[1]) == 10) {
      found = true;
      CHECK(std::get<std::int64_t>(row[3]) == 300);
      CHECK(std::get<std::int64_t>(row[6]) == 120);
      CHECK(std::get<std::int64_t>(row[7]) == 22);
    }
  CHECK(found);
  const auto bank = gpulab::testing::printed(gpulab::testing::run_experiment("bank-model", problem(std::size_t{1} << 20).with("draw", 1)));
  CHECK(bank.find("5898240") != std::string::npos);  // phase 4's run at 2^20, block 512
  CHECK(bank.find("warp request:") != std::string::npos);
  const auto bytes = gpulab::testing::run_experiment("bytes", problem(1024));
  CHECK(bytes.rows().size() == 2u * 2u * 7u);
  const auto occ = gpulab::testing::run_experiment("occupancy", problem(1024));
  CHECK(occ.rows().size() > 10u);
}

// ================================== [gpu]: every stage through the stage table ===========================

TEST_CASE("phase0: sorted at every edge size, both pads", "[gpu][phase0]") {
  check_sort<16>("phase0", GENERATE(lab::sentinel, lab::virtual_pad));
}
TEST_CASE("phase1: sorted at every edge size, both pads", "[gpu][phase1]") {
  check_sort<16>("phase1", GENERATE(lab::sentinel, lab::virtual_pad));
}
TEST_CASE("phase2: sorted at every edge size, both pads", "[gpu][phase2]") {
  check_sort<16>("phase2", GENERATE(lab::sentinel, lab::virtual_pad));
}
TEST_CASE("phase3: sorted at every edge size, both pads", "[gpu][phase3]") {
  check_sort<16>("phase3", GENERATE(lab::sentinel, lab::virtual_pad));
}
TEST_CASE("phase4: sorted at every edge size, both pads", "[gpu][phase4]") {
  check_sort<16>("phase4", GENERATE(lab::sentinel, lab::virtual_pad));
}
TEST_CASE("phase4-conflict-free: sorted at every edge size, both pads", "[gpu][phase4-conflict-free]") {
  check_sort<16>("phase4-conflict-free", GENERATE(lab::sentinel, lab::virtual_pad));
}
// The fused tile is 2^14 keys: L >= t + 2 from 2^16 on, a group of more than 5 strides from 2^20.
TEST_CASE("phase5-fused: sorted at every edge size to 2^20, both pads", "[gpu][phase5-fused]") {
  check_sort<20>("phase5-fused", GENERATE(lab::sentinel, lab::virtual_pad));
}

// Around the tile for every block size: T - 1, T, T + 1, 2T, 4T + 3, 8T (a wrong direction rule shows from L = t + 1 or t + 2).
TEST_CASE("every block size: sizes around the tile", "[gpu][block]") {
  for (const char* stage : {"phase0", "phase1", "phase2", "phase3", "phase4", "phase4-conflict-free"})
    for (int block = 64; block <= 1024; block *= 2) {
      const std::size_t T = 2 * static_cast<std::size_t>(block);
      for (std::size_t n : {T - 1, T, T + 1, 2 * T, 4 * T + 3, 8 * T})
        for (int pad : {lab::sentinel, lab::virtual_pad})
          GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 11).with("block", block).with("pad", pad));
    }
}

// The launch contract on the GPU: CUPTI's count is the model's R(n) for every stage, every n = 2^9 ..
// 2^16 (L <= t, L = t + 1, t + 2 ... for the tile stages), both pads (launch-check, --quick).
TEST_CASE("launches: CUPTI counts the model's R(n), every GPU stage, both pads", "[gpu][launches]") {
  for (int pad : {lab::sentinel, lab::virtual_pad}) {
    const auto t = gpulab::testing::run_experiment("launch-check", problem(1024).with("pad", pad));
    const auto& cols = t.columns();
    auto col = [&](const char* key) {
      const auto it = std::find_if(cols.begin(), cols.end(), [&](const gpulab::Column& c) { return c.key == key; });
      REQUIRE(it != cols.end());
      return static_cast<std::size_t>(it - cols.begin());
    };
    const std::size_t stage = col("stage"), n = col("n"), status = col("status"), counted = col("launches"),
                      model = col("model_launches");
    REQUIRE(t.rows().size() == 7u * 8u);  // 7 stages x n = 2^9 .. 2^16
    for (const auto& row : t.rows()) {
      INFO("pad " << lab::kPadNames[pad] << ", " << std::get<std::string>(row[stage]) << " at n = "
                  << std::get<std::int64_t>(row[n]));
      CHECK(std::get<std::string>(row[status]) == "pass");
      REQUIRE(std::holds_alternative<std::int64_t>(row[counted]));  // "-": CUPTI counted nothing
      CHECK(std::get<std::int64_t>(row[counted]) == std::get<std::int64_t>(row[model]));
    }
  }
}

TEST_CASE("baselines: CUB merge and radix sort, thrust::sort", "[gpu][baselines]") {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1025}, std::size_t{70001}})
    for (const char* stage : {"cub-merge-sort", "cub-radix-sort", "thrust-sort"}) {
      GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 2));
      GPULAB_CHECK_PASS(stage, with_input(problem(n), lab::negative));
    }
}

// 10^7 (seed 002's size, padded to 2^24) and 2^24 itself, both pads.
TEST_CASE("every GPU stage at 10^7 and 2^24", "[gpu][large]") {
  for (std::size_t n : {std::size_t{10000000}, std::size_t{1} << 24})
    for (const char* stage : kGpuStages)
      for (int pad : {lab::sentinel, lab::virtual_pad}) GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 3).with("pad", pad));
}
