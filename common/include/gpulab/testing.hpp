// What lab tests need: Catch2 (v3 or Debian's v2) and one-line stage checks.
#pragma once
#ifdef GPULAB_CATCH2_V3
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
// Catch2 v3 spells it Catch::Approx, Debian's v2 Catch::Detail::Approx: tests write Catch::Approx.
namespace Catch {
using Detail::Approx;
}
#endif

#include <string>

#include "gpulab/data.hpp"

#include "gpulab/lab.hpp"
#include "gpulab/runner.hpp"

namespace gpulab::testing {

// The lab of this test binary, built once.
const Lab& lab();

// Runs one stage on `problem` and returns its result (status, check message).
StageResult check(const std::string& stage_id, const Problem& problem);

// A problem of n elements (1-D labs).
Problem problem(std::size_t n, Distribution d = Distribution::uniform, std::uint64_t seed = 1);
// A rows x cols problem (2-D labs).
Problem problem_2d(std::size_t rows, std::size_t cols, Distribution d = Distribution::uniform,
                   std::uint64_t seed = 1);

// The lab's experiment `id` (a std::logic_error naming the lab if it has none).
const Experiment& experiment(const std::string& id);
// It run as `gpulab experiment <lab> ID --quick` runs it (2 repetitions, 1 warm-up), on `base`.
Table run_experiment(const std::string& id, Problem base);
// A table as the console shows it, notes (drawings) included.
std::string printed(const Table& t);

}  // namespace gpulab::testing

// CHECK that a stage passes (keeps going: one run reports every failing case), printing the
// check's report when it does not.
#define GPULAB_CHECK_PASS(stage_id, problem_expr)                                                 \
  do {                                                                                            \
    const ::gpulab::Problem gpulab_problem_ = (problem_expr);                                     \
    const auto gpulab_result_ = ::gpulab::testing::check((stage_id), gpulab_problem_);            \
    INFO("stage " << (stage_id) << " on " << gpulab_problem_.describe() << ": "                   \
                  << ::gpulab::to_string(gpulab_result_.status) << " " << gpulab_result_.message); \
    CHECK(gpulab_result_.status == ::gpulab::StageStatus::pass);                                  \
  } while (0)

// One Catch2 section per edge size (gpulab::edge_sizes: 0, 1, 31, 32, 33, ..., 2^k and 2^k - 3):
//   const std::size_t n = GPULAB_EDGE_SIZE(10, 18);
#define GPULAB_EDGE_SIZE(k_lo, k_hi) GENERATE(Catch::Generators::from_range(::gpulab::edge_sizes((k_lo), (k_hi))))

// REQUIRE that a stage passes on a problem, printing the check's report when it does not.
#define GPULAB_REQUIRE_PASS(stage_id, problem_expr)                                              \
  do {                                                                                           \
    const auto gpulab_result_ = ::gpulab::testing::check((stage_id), (problem_expr));            \
    INFO("stage " << (stage_id) << " on " << (problem_expr).describe() << ": "                   \
                  << ::gpulab::to_string(gpulab_result_.status) << " " << gpulab_result_.message); \
    REQUIRE(gpulab_result_.status == ::gpulab::StageStatus::pass);                               \
  } while (0)
