// Visible tests of the reduction lab's stage table. [cpu] cases run everywhere (CI has no GPU);
// [gpu] cases need one (ctest skips them with 77 elsewhere). The operators and the model have their
// own file (test_reduction_model.cpp).
// Run one stage's tests:  ./build/default/labs/reduction/test-reduction-student "[pipeline]"
#include <string>
#include <vector>

#include "gpulab/testing.hpp"
#include "reduction_lab.hpp"

namespace {

using gpulab::Distribution;
using gpulab::Problem;
using gpulab::StageStatus;
using gpulab::testing::problem;
namespace lab = reduction::lab;

const std::vector<Distribution> kDistributions{Distribution::uniform, Distribution::small_range,
                                               Distribution::full_range};
const std::vector<int> kOrderedOps{lab::interval, lab::affine, lab::mat2};

Problem with_op(Problem p, int op) { return p.with("op", op); }

bool keeps_order(const std::string& stage) { return stage != "tree" && stage != "cascading" && stage != "cub-sum"; }

// Every edge size (0, 1, 31, 32, 33, 1023, 1025, 2^k and 2^k - 3 for k = 10..18) x three
// distributions with sum and max; the order-keeping stages also with interval (the order oracle:
// its input does not depend on the distribution), affine and mat2 (full range: products wrap
// modulo 2^32); max on an all-negative input.
void check_stage(const std::string& stage) {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 18);
  for (auto d : kDistributions) {
    GPULAB_CHECK_PASS(stage, with_op(problem(n, d, 7), lab::sum));
    GPULAB_CHECK_PASS(stage, with_op(problem(n, d, 8), lab::max));
  }
  GPULAB_CHECK_PASS(stage, with_op(problem(n, Distribution::uniform, 9), lab::max).with("negative", 1));
  if (!keeps_order(stage)) return;
  GPULAB_CHECK_PASS(stage, with_op(problem(n), lab::interval));
  for (auto d : kDistributions) {
    GPULAB_CHECK_PASS(stage, with_op(problem(n, d, 10), lab::affine));
    GPULAB_CHECK_PASS(stage, with_op(problem(n, d, 11), lab::mat2));
  }
}

// At least 2^24 elements, not a power of two: many blocks, several tree levels, a partial last row.
void check_large(const std::string& stage) {
  const std::size_t n = (std::size_t{1} << 24) + 5;
  GPULAB_CHECK_PASS(stage, with_op(problem(n, Distribution::full_range, 3), lab::sum));
  if (keeps_order(stage)) GPULAB_CHECK_PASS(stage, with_op(problem(n), lab::interval));
}

// Block sizes change where the partial blocks and rows fall.
// matrix's 32 x 33 staging per warp does not fit 8-byte values at block = 1024 (270 KB > 227 KB on
// Hopper): there the stage must refuse with the block that fits, not fail its launch.
void check_blocks(const std::string& stage) {
  for (long long block : {64, 1024})
    for (std::size_t n : {std::size_t{2 * 64 + 1}, std::size_t{2 * 1024 - 1}, std::size_t{70001}}) {
      GPULAB_CHECK_PASS(stage, with_op(problem(n), lab::sum).with("block", block));
      if (!keeps_order(stage)) continue;
      const Problem ordered = with_op(problem(n), lab::interval).with("block", block);
      if (stage == "matrix" && block == 1024) {
        const auto r = gpulab::testing::check(stage, ordered);
        CHECK(r.status == gpulab::StageStatus::error);
        INFO(r.message);
        CHECK(r.message.find("bytes of shared memory per block") != std::string::npos);
        CHECK(r.message.find("use block=512") != std::string::npos);
      } else {
        GPULAB_CHECK_PASS(stage, ordered);
      }
    }
}

gpulab::StageResult run(const std::string& stage, const Problem& p) { return gpulab::testing::check(stage, p); }

}  // namespace

// ================================== [cpu]: the stage table's own checks ==================================

TEST_CASE("stage table: every stage of the task sheet and the three CUB baselines", "[cpu][harness]") {
  for (const char* id : {"cpu", "global-tree", "tree-interleaved", "tree", "cascading", "pipeline-heap", "pipeline",
                         "matrix", "ordered-registers", "cpu-reference", "cub-sum", "cub-block-raking", "cub-scan-last"})
    CHECK(gpulab::testing::lab().find_stage(id) != nullptr);
  for (const char* id : {"tree", "pipeline", "matrix"}) CHECK(gpulab::testing::lab().find_stage(id)->must_be_conflict_free);
  for (const char* id : {"tree-interleaved", "pipeline-heap"}) CHECK(gpulab::testing::lab().find_stage(id)->expect_conflicts);
}

TEST_CASE("cpu: the left fold for every operator, every edge size, three distributions", "[cpu][cpu-stage]") {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 18);
  for (int op = 0; op < lab::kOps; ++op)
    for (auto d : kDistributions) GPULAB_CHECK_PASS("cpu", with_op(problem(n, d, 5), op));
  GPULAB_CHECK_PASS("cpu", with_op(problem(n), lab::max).with("negative", 1));
}

TEST_CASE("cpu-reference agrees at 2^24 + 5 with every operator", "[cpu][harness]") {
  for (int op = 0; op < lab::kOps; ++op)
    GPULAB_CHECK_PASS("cpu-reference", with_op(problem((std::size_t{1} << 24) + 5, Distribution::full_range, 2), op));
}

TEST_CASE("a commutative-only stage refuses an ordered operator with one clear line", "[cpu][harness]") {
  const auto* op_knob = gpulab::testing::lab().find_knob("op");
  REQUIRE(op_knob != nullptr);
  for (const char* stage : {"tree", "cascading", "cub-sum"})
    for (int op : kOrderedOps) {
      const auto r = run(stage, with_op(problem(1025), op));
      INFO(stage << " op=" << op << ": " << r.message);
      CHECK(r.status == StageStatus::error);
      CHECK(r.message.find("runs op = sum, max only, not --param op=" + op_knob->name_of(op)) != std::string::npos);
      CHECK(r.message.find("commutative") != std::string::npos);
    }
}

TEST_CASE("knobs: an unknown operator and a block that is not a power of two are refused", "[cpu][harness]") {
  auto r = run("cpu", with_op(problem(10), 7));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("--param op=7: use sum (0), max (1), interval (2), affine (3), mat2 (4)") != std::string::npos);
  r = run("pipeline", problem(10).with("block", 100));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("power of two") != std::string::npos);
}

TEST_CASE("launch model: the stage table predicts reduction_model's R(n)", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  auto predicted = [&](const char* id, const Problem& p) {
    const auto* stage = t.find_stage(id);
    return *stage->predicted_launches(stage->with_defaults(p));
  };
  CHECK(predicted("tree", problem(std::size_t{1} << 28)) == 4);  // 2^28 -> 2^19 -> 1024 -> 2 -> 1 (T = 256)
  CHECK(predicted("global-tree", problem(1025)) == 11);
  CHECK(predicted("pipeline", problem(0)) == 1);                   // a kernel writes the identity
  CHECK(predicted("pipeline", with_op(problem(std::size_t{1} << 24), lab::mat2)) == 2);
  CHECK(predicted("matrix", problem(1000)) == 1);                   // one block does it all
}

// ================================== [gpu]: every stage through the stage table ===========================

TEST_CASE("global-tree: any n, every operator", "[gpu][global-tree]") { check_stage("global-tree"); }
TEST_CASE("tree-interleaved: in order at every n", "[gpu][tree-interleaved]") { check_stage("tree-interleaved"); }
TEST_CASE("tree: sum and max at every n", "[gpu][tree]") { check_stage("tree"); }
TEST_CASE("cascading: sum and max at every n", "[gpu][cascading]") { check_stage("cascading"); }
TEST_CASE("pipeline-heap: in order at every n", "[gpu][pipeline-heap]") { check_stage("pipeline-heap"); }
TEST_CASE("pipeline: in order at every n", "[gpu][pipeline]") { check_stage("pipeline"); }
TEST_CASE("matrix: in order at every n", "[gpu][matrix]") { check_stage("matrix"); }
TEST_CASE("ordered-registers: in order at every n", "[gpu][ordered-registers]") { check_stage("ordered-registers"); }
TEST_CASE("cub-sum: sum and max at every n", "[gpu][baselines]") { check_stage("cub-sum"); }
TEST_CASE("cub-block-raking: in order at every n", "[gpu][baselines]") { check_stage("cub-block-raking"); }
TEST_CASE("cub-scan-last: in order at every n", "[gpu][baselines]") { check_stage("cub-scan-last"); }

TEST_CASE("every stage at n >= 2^24 and with blocks of 64 and 1024", "[gpu][large]") {
  for (const char* stage : {"global-tree", "tree-interleaved", "tree", "cascading", "pipeline-heap", "pipeline", "matrix",
                            "ordered-registers", "cub-sum", "cub-block-raking", "cub-scan-last"}) {
    check_large(stage);
    check_blocks(stage);
  }
}
