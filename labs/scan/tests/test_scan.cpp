// Visible tests of the scan lab. [cpu] cases run everywhere (CI has no GPU); [gpu] cases need a GPU.
// Run one stage's tests:  ./build/default/labs/scan/test-scan-student "[naive]"
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "gpulab/testing.hpp"
#include "scan.cuh"
#include "scan_model.hpp"

namespace {

using gpulab::Distribution;
using gpulab::Problem;
using gpulab::StageStatus;
using gpulab::testing::problem;

using Params = std::initializer_list<std::pair<const char*, long long>>;
Problem with_params(Problem p, Params params) {
  for (const auto& [k, v] : params) p = p.with(k, v);
  return p;
}

const std::vector<Distribution> kDistributions{Distribution::uniform, Distribution::small_range,
                                               Distribution::full_range};

// 0, 1, 31, 32, 33, 1023, 1025, 2^k and 2^k - 3 for k = 10..18, x three distributions.
void check_edge_sizes(const std::string& stage, Params params = {}) {
  for (auto d : kDistributions)
    for (std::size_t n : gpulab::edge_sizes(10, 18)) GPULAB_CHECK_PASS(stage, with_params(problem(n, d, 7), params));
}

// One case of at least 2^24 elements (not a power of two): the recursion's third level, many tiles.
void check_large(const std::string& stage, Params params = {}) {
  GPULAB_CHECK_PASS(stage, with_params(problem((std::size_t{1} << 24) + 5, Distribution::uniform, 3), params));
}

// An experiment of the lab, run as `gpulab experiment scan ID --quick` runs it.
gpulab::Table run_experiment(const gpulab::Experiment& e, Problem base = problem(std::size_t{1} << 16)) {
  return gpulab::testing::run_experiment(e.id, std::move(base));
}
using gpulab::testing::experiment;

// The column of `key`, or the number of columns when there is none.
std::size_t column(const gpulab::Table& t, const std::string& key) {
  std::size_t i = 0;
  while (i < t.columns().size() && t.columns()[i].key != key) ++i;
  return i;
}

using gpulab::testing::printed;

}  // namespace

// ================================== [cpu]: the harness's own CPU code ==================================

TEST_CASE("reference scan: a hand example and wrap-around modulo 2^32", "[cpu][harness]") {
  const std::vector<int> in{3, 1, 4, 1, 5};
  CHECK(scan::model::exclusive_scan_reference(in) == std::vector<int>{0, 3, 4, 8, 9});
  const std::vector<int> big{2147483647, 1, 5};
  CHECK(scan::model::exclusive_scan_reference(big) == std::vector<int>{0, 2147483647, -2147483647 - 1});
  CHECK(scan::model::exclusive_scan_reference(std::vector<int>{}).empty());
}

TEST_CASE("colored reference: each color keeps its own running sum", "[cpu][harness]") {
  const std::vector<int> values{5, 7, 1, 2, 10};
  const std::vector<std::uint8_t> colors{0, 1, 0, 1, 0};
  CHECK(scan::model::colored_scan_reference(values, colors) == std::vector<int>{0, 0, 5, 7, 6});
}

TEST_CASE("colored input: every color of [0, d) occurs, none outside; inputs follow the seed", "[cpu][harness]") {
  for (int d : {1, 2, 16}) {
    INFO("d = " << d);
    const auto c = scan::model::color_input(5000, 9, d);
    CHECK(std::set<int>(c.begin(), c.end()).size() == static_cast<std::size_t>(d));
    CHECK(*std::max_element(c.begin(), c.end()) == d - 1);
  }
  // The values are scan_input's (lab.cu passes no d to it): the same for a seed, others for another.
  CHECK(scan::model::scan_input(Distribution::uniform, 100, 4) == scan::model::scan_input(Distribution::uniform, 100, 4));
  CHECK(scan::model::scan_input(Distribution::uniform, 100, 4) != scan::model::scan_input(Distribution::uniform, 100, 5));
}

TEST_CASE("compaction input: the zero percentage is honoured", "[cpu][harness]") {
  const auto none = scan::model::compaction_input(Distribution::full_range, 10000, 2, 0);
  CHECK(std::count(none.begin(), none.end(), 0) == 0);
  const auto all = scan::model::compaction_input(Distribution::uniform, 10000, 2, 100);
  CHECK(std::count(all.begin(), all.end(), 0) == 10000);
  const auto some = scan::model::compaction_input(Distribution::uniform, 100000, 2, 25);
  const auto zeros = std::count(some.begin(), some.end(), 0);
  CHECK(zeros > 23000);
  CHECK(zeros < 27000);
  CHECK(scan::model::compact_reference(std::vector<int>{0, 4, 0, 0, 2, 9, 0}) == std::vector<int>{4, 2, 9});
}

TEST_CASE("workspace: take() hands out aligned pieces and refuses to overflow", "[cpu][harness]") {
  alignas(16) int storage[100];
  scan::ScanWorkspace ws;
  static_cast<gpulab::Scratch&>(ws) = gpulab::Scratch(storage, sizeof storage);
  CHECK(ws.take(3) == storage);
  CHECK(ws.take(5) == storage + 4);  // rounded up to 16 bytes
  CHECK(ws.used_bytes() == 9 * sizeof(int));
  CHECK_THROWS_AS(ws.take(95), std::length_error);
  ws.reset();
  CHECK(ws.used_bytes() == 0);
  CHECK(scan::scan_workspace_ints(1000) == 4000 + (1u << 20));
}

TEST_CASE("bad parameters are a usage error that names the parameter", "[cpu][harness]") {
  const auto r = gpulab::testing::check("cpu-compact", problem(100).with("zeros", 101));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("zeros") != std::string::npos);
  const gpulab::Stage* shared = gpulab::testing::lab().find_stage("shared");
  REQUIRE(shared);
  // Out of lab.toml's range (a power of two in 32..1024): refused before the model is asked.
  CHECK_THROWS_AS(shared->with_defaults(problem(100).with("block", 100)), gpulab::UsageError);
  const auto bad_block = gpulab::testing::check("shared", problem(100).with("block", 100));
  CHECK(bad_block.status == StageStatus::error);
  CHECK(bad_block.message.find("--param block=100: use 32..1024, a power of two") != std::string::npos);
}

TEST_CASE("knobs: a misspelt knob is refused with the stage's knobs, another stage's knob is not", "[cpu][harness]") {
  const auto& lab = gpulab::testing::lab();
  const gpulab::Stage* naive = lab.find_stage("naive");
  REQUIRE(naive);
  try {
    lab.check_knobs(problem(100).with("blok", 128), {naive});
    FAIL("blok=128 was accepted");
  } catch (const gpulab::UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find("blok") != std::string::npos);
    CHECK(what.find("stage naive takes: block") != std::string::npos);
  }
  // The grader runs every stage with a case's knobs: colors is the colored stages', not naive's.
  CHECK_NOTHROW(lab.check_knobs(problem(100).with("colors", 2).with("zeros", 50), {naive}));
}

TEST_CASE("knobs: a stage's own defaults, the command line wins", "[cpu][harness]") {
  const gpulab::Stage* single = gpulab::testing::lab().find_stage("single-pass");
  REQUIRE(single);
  CHECK(single->with_defaults(problem(100)).param("block", 0) == 128);
  CHECK(single->with_defaults(problem(100).with("block", 64)).param("block", 0) == 64);
}

TEST_CASE("every student stage names its file, one of the lab's student files", "[cpu][harness]") {
  const auto& lab = gpulab::testing::lab();
  int students = 0;
  for (const auto& s : lab.stages) {
    INFO("stage " << s.id);
    if (s.role != gpulab::Role::student) continue;
    ++students;
    CHECK(std::find(lab.student_files.begin(), lab.student_files.end(), s.file) != lab.student_files.end());
  }
  CHECK(students > 0);  // a loop over no student stage would check nothing
}

TEST_CASE("the model's launch counts", "[cpu][harness]") {
  auto predicted = [](const char* id, std::size_t n, long long block = 256) {
    return *gpulab::testing::lab().find_stage(id)->predicted_launches(problem(n).with("block", block));
  };
  CHECK(predicted("naive", 0) == 0);
  CHECK(predicted("naive", 1) == 1);
  CHECK(predicted("naive", 1025) == 11);
  CHECK(predicted("work-efficient", 1 << 20) == 40);
  CHECK(predicted("shared", 512) == 1);           // one block of 2 x 256
  CHECK(predicted("shared", 513) == 3);           // two blocks, their sums, add-back
  CHECK(predicted("shared", 1 << 28) == 7);       // 2^28 -> 2^19 -> 2^10 -> 2: four levels
  CHECK(predicted("three-round", 5) == 3);
  CHECK(predicted("single-pass", 1 << 28) == 1);
}

// ---- the bank model of the shared-memory patterns (README, "The bank-matrix view") ----------------

TEST_CASE("bank model: the unpadded tree scan conflicts, more for larger blocks", "[cpu][bank-model]") {
  using scan::model::TreeLayout;
  long previous = 0;
  for (int block = 32; block <= 1024; block *= 2) {
    const auto s = scan::model::summarize(scan::model::tree_scan_requests(block, TreeLayout::plain));
    INFO("block " << block);
    CHECK(s.excess() > previous);
    previous = s.excess();
  }
  // Stride-16 pairs of 32 lanes: words 32 apart for every lane pair t, t + 1: 16-way at block 256.
  CHECK(scan::model::summarize(scan::model::tree_scan_requests(256, TreeLayout::plain)).max_way == 16);
}

TEST_CASE("bank model: the lecture's padding (a pad word per 32) is conflict-free up to 512 threads", "[cpu][bank-model]") {
  for (int block = 32; block <= 1024; block *= 2) {
    const auto s = scan::model::summarize(scan::model::tree_scan_requests(block, scan::model::TreeLayout::padded));
    INFO("block " << block);
    if (block <= 512) {
      CHECK(s.excess() == 0);
      CHECK(s.max_way == 1);
    } else {
      CHECK(s.max_way == 2);  // 1024 threads: your stage must do better (README, stage 5)
    }
  }
}

TEST_CASE("bank model: seed 003's offset macro pads nothing", "[cpu][bank-model]") {
  using scan::model::TreeLayout;
  for (std::uint32_t i : {0u, 31u, 32u, 33u, 1023u, 1024u, 2047u})
    CHECK(scan::model::seed003_offset_as_parsed(i) == 0);
  CHECK(scan::model::tree_slot(1024, TreeLayout::padded) == 1056);
  CHECK(scan::model::tree_slot(31, TreeLayout::padded) == 31);
  const auto macro = scan::model::summarize(scan::model::tree_scan_requests(512, TreeLayout::seed003_macro));
  const auto plain = scan::model::summarize(scan::model::tree_scan_requests(512, TreeLayout::plain));
  CHECK(macro.wavefronts == plain.wavefronts);
}

TEST_CASE("bank model: colored offsets, direct d-way and transposed conflict-free", "[cpu][bank-model]") {
  for (int d = 1; d <= scan::kMaxColors; ++d) {
    INFO("d = " << d);
    const auto direct = scan::model::summarize(scan::model::colored_offset_requests(d, false));
    CHECK(direct.max_way == d);
    CHECK(direct.worst_excess == d - 1);
    CHECK(direct.excess() == 32L * (d - 1));
    const auto free = scan::model::summarize(scan::model::colored_offset_requests(d, true));
    CHECK(free.excess() == 0);
  }
  CHECK(scan::model::summarize(scan::model::colored_page_requests()).excess() == 0);
}

TEST_CASE("bank model: the compiled 128-bit direct walk predicts Nsight Compute's count", "[cpu][bank-model]") {
  // Nsight Compute's "L1 Wavefronts Shared Excessive" of colored-direct at n = 65536 (64 pages),
  // d = 1..16, NVIDIA H200, 2026-11-21 (results/colors-ncu.csv): the model must give exactly these.
  const long measured[] = {0,    1024, 2048, 3072, 4096,  5120,  6144,  7168,
                           7168, 8192, 9216, 10240, 11264, 12288, 13312, 14336};
  for (int d = 1; d <= scan::kMaxColors; ++d) {
    INFO("d = " << d);
    const auto walk = scan::model::summarize(scan::model::colored_direct_walk_128bit_requests(d));
    CHECK(walk.requests == 16);
    CHECK(walk.excess() == 16L * (d - (d + 7) / 8));  // one extra phase per quarter-warp used
    CHECK(64 * walk.excess() == measured[d - 1]);
  }
  CHECK_THROWS_AS(scan::model::colored_direct_walk_128bit_requests(17), std::invalid_argument);
}

TEST_CASE("bank model: the alpha x (b+1) load against seed 004's bound", "[cpu][bank-model]") {
  for (int alpha = 1; alpha <= 32; ++alpha) {
    INFO("alpha = " << alpha);
    const int way = scan::model::summarize(scan::model::alpha_load_requests(alpha)).max_way;
    const int bound = scan::model::alpha_conflict_bound(alpha);
    // The bound is exact except where ceil(32 / alpha) columns straddle rows unevenly (7, 11).
    if (alpha == 7 || alpha == 11) CHECK(way == bound + 1);
    else CHECK(way == bound);
  }
}

TEST_CASE("bank-model experiment: a row per pattern, padded trees conflict-free to 512 threads, plain ones not", "[cpu][bank-model]") {
  const auto t = run_experiment(experiment("bank-model"));
  const std::size_t pattern = column(t, "pattern"), parameter = column(t, "parameter"), excess = column(t, "excess");
  REQUIRE(pattern < t.columns().size());
  REQUIRE(parameter < t.columns().size());
  REQUIRE(excess < t.columns().size());
  int plain = 0, padded = 0;
  for (const auto& row : t.rows()) {
    const auto& name = std::get<std::string>(row[pattern]);
    const auto& param = std::get<std::string>(row[parameter]);
    INFO(name << " " << param);
    if (name == "tree scan plain") {
      CHECK(std::get<std::int64_t>(row[excess]) > 0);
      ++plain;
    }
    if (name == "tree scan padded") {
      if (param == "block=1024") CHECK(std::get<std::int64_t>(row[excess]) > 0);
      else CHECK(std::get<std::int64_t>(row[excess]) == 0);
      ++padded;
    }
  }
  CHECK(plain == 6);  // block 32 .. 1024
  CHECK(padded == 6);
  CHECK(printed(t).find("warp request:") == std::string::npos);  // no drawings unless asked
}

// The drawings RESULTS.md shows ("The bank model"): gpulab experiment scan bank-model --param draw=1
TEST_CASE("bank-model experiment: draw=1 draws the handout's bank matrices from the model", "[cpu][bank-model]") {
  using scan::model::TreeLayout;
  const std::string text = printed(run_experiment(experiment("bank-model"), problem(std::size_t{1} << 16).with("draw", 1)));
  auto request = [](const std::vector<scan::model::Request>& rs, const std::string& step) {
    const auto it = std::find_if(rs.begin(), rs.end(), [&](const auto& r) { return r.step == step; });
    REQUIRE(it != rs.end());
    return it->access;
  };
  auto drawn = [&](const std::string& title, const gpulab::WarpAccess& a) {
    INFO(title);
    CHECK(text.find(title + ":\n" + gpulab::draw_bank_matrix(a, 8)) != std::string::npos);
  };
  for (auto layout : {TreeLayout::plain, TreeLayout::padded})
    for (const char* step : {"up-sweep stride 2 left warp 0", "up-sweep stride 16 left warp 0"})
      drawn("tree scan, " + scan::model::to_string(layout) + ", block 256, " + step,
            request(scan::model::tree_scan_requests(256, layout), step));
  drawn("colored offsets direct, d = 8, j = 0", scan::model::colored_offset_requests(8, false).front().access);
  drawn("colored offsets conflict-free, d = 8, walk trans j = 0",
        request(scan::model::colored_offset_requests(8, true), "walk trans j=0"));
  // What RESULTS.md says of them: stride 2 of the plain tree is 4-way, padding removes it.
  CHECK(text.find("tree scan, plain, block 256, up-sweep stride 2 left warp 0:\n"
                  "warp request: 4-byte accesses; 4 wavefronts (ideal 1, excess 3); worst bank: 4-way conflict") !=
        std::string::npos);
  CHECK(text.find("tree scan, padded, block 256, up-sweep stride 16 left warp 0:\n"
                  "warp request: 4-byte accesses; 1 wavefront (ideal 1, excess 0)\n") != std::string::npos);
}

// ================================== [cpu]: the CPU stages ==================================

TEST_CASE("cpu: exclusive scan on edge sizes", "[cpu][stage-cpu]") {
  check_edge_sizes("cpu");
  check_edge_sizes("cpu-reference");
}

TEST_CASE("cpu-compact and cpu-compact-scan: all zero, no zero, random", "[cpu][cpu-compact][cpu-compact-scan]") {
  for (const char* stage : {"cpu-compact", "cpu-compact-scan"})
    for (long long zeros : {0LL, 25LL, 100LL})
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{33}, std::size_t{1025}, std::size_t{100003}})
        GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 5).with("zeros", zeros));
}

// ================================== [gpu]: every GPU stage ==================================

TEST_CASE("naive", "[gpu][naive]") {
  check_edge_sizes("naive");
  check_large("naive");
  GPULAB_CHECK_PASS("naive", problem(100003).with("block", 32));
}

TEST_CASE("work-efficient", "[gpu][work-efficient]") {
  check_edge_sizes("work-efficient");
  check_large("work-efficient");
}

TEST_CASE("work-efficient-compact-threads", "[gpu][work-efficient-compact-threads]") {
  check_edge_sizes("work-efficient-compact-threads");
  check_large("work-efficient-compact-threads");
  GPULAB_CHECK_PASS("work-efficient-compact-threads", problem(100003).with("block", 1024));
}

TEST_CASE("shared", "[gpu][shared]") {
  check_edge_sizes("shared");
  check_large("shared");
  for (long long block : {32LL, 1024LL}) {
    GPULAB_CHECK_PASS("shared", problem(2049).with("block", block));
    GPULAB_CHECK_PASS("shared", problem(1000003).with("block", block));
  }
}

TEST_CASE("shared-conflict-free", "[gpu][shared-conflict-free]") {
  check_edge_sizes("shared-conflict-free");
  check_large("shared-conflict-free");
  for (long long block : {32LL, 1024LL}) {
    GPULAB_CHECK_PASS("shared-conflict-free", problem(2049).with("block", block));
    GPULAB_CHECK_PASS("shared-conflict-free", problem(1000003).with("block", block));
  }
}

TEST_CASE("three-round", "[gpu][three-round]") {
  check_edge_sizes("three-round");
  check_large("three-round");
  for (long long block : {32LL, 128LL, 1024LL}) GPULAB_CHECK_PASS("three-round", problem(1000003).with("block", block));
}

TEST_CASE("alpha-matrix", "[gpu][alpha-matrix]") {
  check_edge_sizes("alpha-matrix");
  check_large("alpha-matrix");
  for (long long alpha : {1LL, 7LL, 18LL, 32LL}) {
    GPULAB_CHECK_PASS("alpha-matrix", problem(33).with("alpha", alpha));
    GPULAB_CHECK_PASS("alpha-matrix", problem(1000003).with("alpha", alpha));
  }
}

TEST_CASE("colored-direct and colored-conflict-free on d = 1, 2, 16", "[gpu][colored-direct][colored-conflict-free]") {
  for (const char* stage : {"colored-direct", "colored-conflict-free"}) {
    check_edge_sizes(stage);
    check_large(stage);
    for (long long d : {1LL, 2LL, 16LL})
      for (std::size_t n : {std::size_t{1}, std::size_t{1023}, std::size_t{1025}, std::size_t{65536}, std::size_t{1000003}})
        GPULAB_CHECK_PASS(stage, problem(n, Distribution::uniform, 11).with("colors", d));
  }
}

TEST_CASE("compact: all zero, no zero, random", "[gpu][compact]") {
  const long long zeros = GENERATE(0LL, 25LL, 100LL);
  const std::size_t n = GPULAB_EDGE_SIZE(10, 18);
  GPULAB_CHECK_PASS("compact", problem(n, Distribution::uniform, 5).with("zeros", zeros));
}

TEST_CASE("compact: a large case", "[gpu][compact]") { check_large("compact"); }

TEST_CASE("single-pass", "[gpu][single-pass]") {
  check_edge_sizes("single-pass");
  check_large("single-pass");
  for (long long block : {32LL, 128LL, 1024LL}) GPULAB_CHECK_PASS("single-pass", problem(1000003).with("block", block));
}

TEST_CASE("baselines: cub, thrust, cub-compact", "[gpu][baselines]") {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1025}, std::size_t{1} << 20}) {
    GPULAB_CHECK_PASS("cub", problem(n));
    GPULAB_CHECK_PASS("thrust", problem(n));
    GPULAB_CHECK_PASS("cub-compact", problem(n));
  }
}

TEST_CASE("experiments run in quick mode: every stage of every sweep passes and is timed", "[gpu][experiments]") {
  for (const auto& e : gpulab::testing::lab().experiments) {
    if (!e.needs_gpu) continue;  // the CPU ones have [cpu] tests above
    INFO("experiment " << e.id);
    const gpulab::Table t = run_experiment(e);
    CHECK(t.rows().size() >= 2);
    // Each row is one timed run of a stage (time_stage): its status must say pass, and a passing
    // run has a time. A row that says fail, todo, skipped or error is a broken experiment.
    const std::size_t stage = column(t, "stage"), status = column(t, "status"), ms = column(t, "median_ms");
    REQUIRE(stage < t.columns().size());
    REQUIRE(status < t.columns().size());
    REQUIRE(ms < t.columns().size());
    for (const auto& row : t.rows()) {
      INFO("stage " << std::get<std::string>(row[stage]));
      CHECK(std::get<std::string>(row[status]) == "pass");
      CHECK(std::holds_alternative<double>(row[ms]));
    }
  }
}
