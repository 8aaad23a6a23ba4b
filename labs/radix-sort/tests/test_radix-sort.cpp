// Visible tests of the radix-sort lab. [cpu] cases run everywhere (CI has no GPU): the key order,
// the oracle and its verdict, the stage table, the CPU stages and the experiments that need no GPU
// (the model's own: test_radix-sort_model.cpp). [gpu] cases need one (ctest skips them with 77 elsewhere): every GPU stage on the edge
// sizes, every key type, pairs (stability), the lab's special inputs, odd and even pass counts.
// Run one stage's tests:  ./build/default/labs/radix-sort/test-radix-sort-student "[digit4]"
// The handout's drawings: ./build/default/gpulab experiment radix-sort bank-model --param draw=1
#include <algorithm>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/buffer.hpp"
#include "gpulab/testing.hpp"
#include "radix_sort.cuh"
#include "radix_sort_lab.hpp"
#include "radix_sort_model.hpp"

namespace {

using namespace radix_sort;
namespace m = radix_sort::model;
namespace rl = radix_sort::lab;
using gpulab::Distribution;
using gpulab::Problem;
using gpulab::StageStatus;
using Catch::Approx;

std::uint32_t fbits(float f) { return std::bit_cast<std::uint32_t>(f); }

// --param input's index of a special input ("pow2-max", ...).
long long input(const char* name) {
  const gpulab::Knob* k = gpulab::testing::lab().find_knob("input");
  REQUIRE(k != nullptr);
  return k->parse(name);
}

// A sort problem: n keys of `key` type from --dist d (or --param input), pairs, end_bit.
Problem sort_problem(std::size_t n, KeyType key = KeyType::u32, Distribution d = Distribution::uniform,
                     std::uint64_t seed = 1, bool pairs = false, int end_bit = 32) {
  return gpulab::testing::problem(n, d, seed)
      .with("key", static_cast<long long>(key))
      .with("pairs", pairs ? 1 : 0)
      .with("end_bit", end_bit);
}
Problem special(std::size_t n, const char* name, KeyType key, bool pairs = false, std::uint64_t seed = 3) {
  return sort_problem(n, key, Distribution::uniform, seed, pairs).with("input", input(name));
}

gpulab::StageResult run(const std::string& stage, const Problem& p) { return gpulab::testing::check(stage, p); }

const std::vector<std::string> kGpuSorts{"split-global", "split-scan-fused", "split-onepass", "digit4", "onesweep"};

}  // namespace

// ================================ the key order ================================

TEST_CASE("f32 order: -NaN < -inf < -1 < -denormal < -0 < +0 < +denormal < 1 < +inf < +NaN", "[cpu][order]") {
  const std::vector<std::uint32_t> ascending{0xffffffffu, 0xffc00000u, fbits(-INFINITY), fbits(-1.0f), 0x80000001u,
                                             0x80000000u, 0x00000000u, 0x00000001u,      fbits(1.0f),  fbits(INFINITY),
                                             0x7f800001u, 0x7fc00000u};
  for (std::size_t i = 1; i < ascending.size(); ++i)
    CHECK(to_ordered(ascending[i - 1], KeyType::f32) < to_ordered(ascending[i], KeyType::f32));
  CHECK(to_ordered(0xffffffffu, KeyType::f32) < to_ordered(0xffc00000u, KeyType::f32));
}

TEST_CASE("i32 order and the inverse transform", "[cpu][order]") {
  const std::vector<std::int32_t> ascending{INT_MIN, -1000, -1, 0, 1, 49, INT_MAX};
  for (std::size_t i = 1; i < ascending.size(); ++i)
    CHECK(to_ordered(static_cast<std::uint32_t>(ascending[i - 1]), KeyType::i32) <
          to_ordered(static_cast<std::uint32_t>(ascending[i]), KeyType::i32));
  const auto keys = m::make_keys(m::KeyDistribution::uniform, 10000, 7, KeyType::u32);
  for (KeyType t : {KeyType::u32, KeyType::i32, KeyType::f32})
    for (std::uint32_t k : keys) REQUIRE(from_ordered(to_ordered(k, t), t) == k);
}

TEST_CASE("digits of a pass never reach end_bit", "[cpu][order]") {
  CHECK(pass_count(32, 8) == 4);
  CHECK(pass_count(6, 4) == 2);
  CHECK(pass_bits(6, 4, 0) == 4);
  CHECK(pass_bits(6, 4, 1) == 2);
  CHECK(pass_count(0, 8) == 0);
  CHECK(digit_of(0xabcdef12u, 8, 8) == 0xefu);
  CHECK(digit_of(0xffu, 4, 2) == 0x3u);
}

// ================================ find-max: the bits to sort ================================

TEST_CASE("key_bits = 32 - clz(OR ^ AND); seed 003's ceil(log2 max) is wrong for 2^k, 0 and 1", "[cpu][find-max]") {
  auto bits = [](std::vector<std::uint32_t> v, KeyType t = KeyType::u32) { return m::key_bits(v, t); };
  CHECK(bits({}) == 0);
  CHECK(bits({12345}) == 0);
  CHECK(bits({7, 7, 7}) == 0);
  CHECK(bits({0, 64}) == 7);
  CHECK(m::seed003_bits(64) == 6);  // bit 6 never sorted: 64 would land among 0..63
  CHECK(bits({0, 1}) == 1);
  CHECK(m::seed003_bits(1) == 0);  // zero passes: {1, 0} stays unsorted
  CHECK(m::seed003_bits(0) == 0);
  CHECK(m::seed003_bits(49) == 6);  // seed 003's own data: right by luck
  CHECK(bits({0, 49, 17}) == 6);
  const auto pow2 = m::make_keys(m::KeyDistribution::pow2_max, 1000, 3, KeyType::u32);
  CHECK(*std::max_element(pow2.begin(), pow2.end()) == 64u);
  CHECK(bits(pow2) == 7);
  CHECK(bits(m::make_keys(m::KeyDistribution::pow2_max, 1000, 3, KeyType::i32), KeyType::i32) == 7);
  CHECK(bits(m::make_keys(m::KeyDistribution::mixed_sign, 1000, 1, KeyType::i32), KeyType::i32) == 32);
  CHECK(bits(m::make_keys(m::KeyDistribution::small_range, 1000, 1, KeyType::i32), KeyType::i32) == 6);
  CHECK(bits(m::make_keys(m::KeyDistribution::high_bits, 1000, 1, KeyType::u32)) == 32);
  CHECK(bits(m::make_keys(m::KeyDistribution::low_bits, 1000, 1, KeyType::u32)) == 8);
  CHECK(bits(m::make_keys(m::KeyDistribution::all_one, 10, 1, KeyType::f32), KeyType::f32) == 0);
  const BitSpan empty = m::reference_span({}, KeyType::u32);
  CHECK(empty.or_all == 0u);
  CHECK(empty.and_all == 0xffffffffu);
  CHECK(empty.bits == 0u);
}

// ================================ the oracle and its verdict ================================

TEST_CASE("oracle: stable, in the key order, bits [0, end_bit) only; equal to std::stable_sort", "[cpu][oracle]") {
  for (KeyType t : {KeyType::u32, KeyType::i32, KeyType::f32})
    for (auto d : m::all_key_distributions())
      for (int end_bit : {0, 1, 7, 13, 32}) {
        const auto keys = m::make_keys(d, 3001, 11, t);
        const auto values = m::index_values(keys.size());
        std::vector<std::uint32_t> k, v;
        m::reference_sort(keys, values, t, end_bit, k, v);
        INFO(m::to_string(t) << " " << m::to_string(d) << " end_bit " << end_bit);
        REQUIRE(!m::first_unsorted(k, v, t, end_bit));
        for (std::size_t i = 0; i < k.size(); ++i) REQUIRE(keys[v[i]] == k[i]);
        // std::stable_sort on the masked ordered key gives the same order (the oracle is a radix sort).
        const std::uint32_t mask = end_bit >= 32 ? 0xffffffffu : ((1u << end_bit) - 1u);
        std::vector<std::uint32_t> order = m::index_values(keys.size());
        std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
          return (to_ordered(keys[a], t) & mask) < (to_ordered(keys[b], t) & mask);
        });
        REQUIRE(order == v);
      }
  // end_bit = 4: keys equal in the low 4 bits keep their input order.
  const std::vector<std::uint32_t> keys{0x13, 0x03, 0x22, 0x12, 0x01};
  std::vector<std::uint32_t> k, v;
  m::reference_sort(keys, m::index_values(5), KeyType::u32, 4, k, v);
  CHECK(k == std::vector<std::uint32_t>{0x01, 0x22, 0x12, 0x13, 0x03});
  CHECK(v == std::vector<std::uint32_t>{4, 2, 3, 0, 1});
  // The float specials in the lab's order (README.md, "The problem").
  const std::vector<std::uint32_t> f{fbits(1.0f), 0x00000000u, 0x7fc00000u, 0x80000000u, 0xffc00000u, fbits(-INFINITY)};
  m::reference_sort(f, {}, KeyType::f32, 32, k, v);
  CHECK(k == std::vector<std::uint32_t>{0xffc00000u, fbits(-INFINITY), 0x80000000u, 0x00000000u, fbits(1.0f), 0x7fc00000u});
  CHECK(v.empty());
}

TEST_CASE("first_unsorted catches an unstable result", "[cpu][oracle]") {
  const std::vector<std::uint32_t> k{1, 1, 2}, good{0, 2, 1}, bad{2, 0, 1};
  CHECK(!m::first_unsorted(k, good, KeyType::u32, 32));
  CHECK(m::first_unsorted(k, bad, KeyType::u32, 32) == 1u);
  CHECK(m::first_unsorted(std::vector<std::uint32_t>{2, 1}, {}, KeyType::u32, 32) == 1u);
}

TEST_CASE("the verdict names what is wrong: unsorted, unstable, lost keys, values, writes past n", "[cpu][oracle]") {
  constexpr std::uint32_t kGap = 0xa5a5a5a5u;
  const std::vector<std::uint32_t> keys{5, 3, 5, 1, 3, 5, 0, 2};
  const auto values = m::index_values(keys.size());
  const auto expected = m::expected_output(keys, values, KeyType::u32, 32, kGap);
  const std::size_t off = m::values_offset(keys.size());
  REQUIRE(expected.size() == m::output_words(keys.size(), true));
  REQUIRE(off % 64 == 0);
  REQUIRE(off > keys.size());
  auto judge = [&](std::vector<std::uint32_t> got) { return m::judge_sort(keys, values, KeyType::u32, 32, expected, got); };
  CHECK(judge(expected).ok);
  // Two keys swapped: not sorted.
  auto got = expected;
  std::swap(got[2], got[3]);
  auto r = judge(got);
  CHECK(!r.ok);
  CHECK(r.message.rfind("not sorted at i = 3", 0) == 0);
  // Equal keys 5 (indices 0, 2, 5) with their values out of input order: unstable.
  got = expected;
  std::swap(got[off + 5], got[off + 6]);
  r = judge(got);
  CHECK(r.message.rfind("unstable: equal keys out of input order at i = 5", 0) == 0);
  // A value that belongs to another key.
  got = expected;
  std::swap(got[off + 0], got[off + 7]);
  CHECK(judge(got).message.rfind("values do not travel with their keys at i = 0", 0) == 0);
  // A key lost (replaced by another input key, still sorted).
  got = expected;
  got[1] = got[0];
  CHECK(judge(got).message.rfind("keys lost or duplicated at i = 1", 0) == 0);
  // A write past the n keys.
  got = expected;
  got[keys.size()] = 0;
  CHECK(judge(got).message.rfind("wrote past the n keys, at word 8", 0) == 0);
  // Keys only, end_bit = 2: keys equal in the low bits swapped (5 = 0b101 and 1 = 0b001).
  const auto low = m::expected_output(keys, {}, KeyType::u32, 2, kGap);
  auto swapped = low;
  const auto five = std::find(swapped.begin(), swapped.end(), 5u), one = std::find(swapped.begin(), swapped.end(), 1u);
  std::iter_swap(five, one);
  const auto u = m::judge_sort(keys, {}, KeyType::u32, 2, low, swapped);
  CHECK(u.message.rfind("unstable: equal keys out of input order", 0) == 0);
  // find-max's verdict names the bit count.
  const BitSpan span{127, 0, 7, 0};
  CHECK(m::judge_span(span, std::vector<std::uint32_t>{127, 0, 7, 0}).ok);
  CHECK(m::judge_span(span, std::vector<std::uint32_t>{127, 0, 6, 0}).message.rfind("bits is wrong", 0) == 0);
}

// ================================ digit4-count's oracle ================================

TEST_CASE("digit4-count oracle: per pass, per digit, per tile; short last digit; the verdict names the word", "[cpu][oracle]") {
  // 10 keys, tiles of 4 (the oracle takes any tile size): tiles {0..3}, {4..7}, {8, 9}.
  const std::vector<std::uint32_t> keys{0x00, 0x01, 0x11, 0x1f, 0xff, 0x10, 0x00, 0x21, 0x3f, 0x12};
  const std::size_t tiles = 3;
  const auto c = m::digit4_tile_counts(keys, KeyType::u32, 6, 4, tiles);  // passes: bits 0-3, then 4-5
  REQUIRE(c.size() == 2 * 16 * tiles);
  auto at = [&](int q, int d, int g) { return c[(static_cast<std::size_t>(q) * 16 + d) * tiles + g]; };
  CHECK(at(0, 0, 0) == 1);  // 0x00
  CHECK(at(0, 1, 0) == 2);  // 0x01, 0x11
  CHECK(at(0, 15, 0) == 1);
  CHECK(at(0, 15, 1) == 1);  // 0xff
  CHECK(at(0, 0, 1) == 2);   // 0x10, 0x00
  CHECK(at(0, 15, 2) == 1);  // 0x3f
  CHECK(at(0, 2, 2) == 1);   // 0x12
  CHECK(at(1, 3, 1) == 1);   // 0xff: 2 bits only at shift 4 -> 3
  CHECK(at(1, 1, 0) == 2);
  for (int d = 4; d < 16; ++d)
    for (int g = 0; g < 3; ++g) CHECK(at(1, d, g) == 0);  // digits a 2-bit pass does not have
  for (int q = 0; q < 2; ++q)
    for (int g = 0; g < 3; ++g) {
      std::uint32_t total = 0;
      for (int d = 0; d < 16; ++d) total += at(q, d, g);
      CHECK(total == (g < 2 ? 4u : 2u));
    }
  // f32: the ordered key's digits (-0 = 0x80000000 orders as 0x7fffffff: digit 15 at pass 0).
  CHECK(m::digit4_tile_counts(std::vector<std::uint32_t>{0x80000000u}, KeyType::f32, 4, 4096, 1)[15] == 1);
  CHECK(m::digit4_tile_counts({}, KeyType::u32, 32, 0, 0).empty());
  CHECK(m::digit4_tile_counts(keys, KeyType::u32, 0, 4, tiles).empty());
  CHECK_THROWS(m::digit4_tile_counts(keys, KeyType::u32, 8, 4, 2));

  CHECK(m::judge_tile_counts(c, c, tiles).ok);
  auto bad = c;
  bad[(1 * 16 + 3) * tiles + 1] = 7;
  const auto r = m::judge_tile_counts(c, bad, tiles);
  CHECK(!r.ok);
  CHECK(r.message == "tile 1, digit 3, pass 1: got 7, want 1");
  CHECK(!m::judge_tile_counts(c, std::span<const std::uint32_t>(bad).first(5), tiles).ok);
}

// ================================ the stage table ================================

TEST_CASE("stage table: every stage of the task sheet and the four baselines", "[cpu][harness]") {
  for (const char* id : {"cpu", "cpu-lsd", "find-max", "split-global", "split-scan-fused", "split-onepass", "digit4",
                         "digit4-count", "onesweep", "cpu-reference", "cub-sort", "thrust-sort", "cub-merge-sort"})
    CHECK(gpulab::testing::lab().find_stage(id) != nullptr);
  CHECK(gpulab::testing::lab().find_stage("digit4-count")->must_be_conflict_free);
  CHECK(!gpulab::testing::lab().find_stage("digit4")->must_be_conflict_free);  // the reorder may conflict
}

TEST_CASE("cpu and cpu-lsd: every edge size, every key type, pairs, partial widths", "[cpu][cpu-stage]") {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 16);
  for (const char* stage : {"cpu", "cpu-lsd"}) {
    GPULAB_CHECK_PASS(stage, sort_problem(n));
    GPULAB_CHECK_PASS(stage, sort_problem(n, KeyType::u32, Distribution::few_unique, 2, true));
    GPULAB_CHECK_PASS(stage, special(n, "mixed-sign", KeyType::i32, true));
    GPULAB_CHECK_PASS(stage, special(n, "float-specials", KeyType::f32, true));
    GPULAB_CHECK_PASS(stage, sort_problem(n, KeyType::u32, Distribution::uniform, 4, true, 13));
    GPULAB_CHECK_PASS(stage, sort_problem(n, KeyType::u32, Distribution::uniform, 5, false, 0));
  }
}

TEST_CASE("cpu-reference: the oracle as a stage at 2^20 + 3, pairs", "[cpu][harness]") {
  GPULAB_CHECK_PASS("cpu-reference", sort_problem((std::size_t{1} << 20) + 3, KeyType::i32, Distribution::uniform, 2, true));
}

TEST_CASE("knobs: onesweep refuses a width it is not built for; a bad key type is refused", "[cpu][harness]") {
  auto r = run("onesweep", sort_problem(1000).with("bits", 3));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("stage onesweep runs bits = 1, 2, 4, 6, 8 only, not --param bits=3") != std::string::npos);
  r = run("cub-sort", sort_problem(1000, KeyType::f32));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("-0.0 and +0.0") != std::string::npos);
  r = run("cpu", sort_problem(10).with("key", 7));
  CHECK(r.status == StageStatus::error);
  CHECK(r.message.find("--param key=7: use u32 (0), i32 (1), f32 (2)") != std::string::npos);
}

TEST_CASE("launch model: the stage table predicts radix_sort_model's R(n), from the data for split-global", "[cpu][harness]") {
  const auto& t = gpulab::testing::lab();
  auto predicted = [&](const char* id, const Problem& p) {
    const auto* stage = t.find_stage(id);
    return *stage->predicted_launches(stage->with_defaults(p));
  };
  // Seed 003's case: 2^15 keys in [0, 50): K = 6 from the data.
  CHECK(predicted("split-global", sort_problem(1u << 15, KeyType::u32, Distribution::small_range)) == 213);
  CHECK(predicted("split-global", special(1000, "all-one", KeyType::u32)) == 10);  // K = 0: find-max, a copy
  CHECK(predicted("onesweep", sort_problem(1u << 20)) == 5);
  CHECK(predicted("onesweep", sort_problem(1u << 20).with("bits", 4)) == 9);
  CHECK(predicted("digit4", sort_problem(1u << 20).with("end_bit", 13)) == 12);
  CHECK(predicted("digit4-count", sort_problem(1u << 20).with("end_bit", 13)) == 4);
  // Zero passes call digit4_count no time: the stage refuses them (lab.toml), or a stub would pass.
  // Not CHECK_THROWS_WITH + Contains: Catch2 v2 and v3 spell that matcher differently.
  std::string refusal;
  try {
    predicted("digit4-count", sort_problem(1000).with("end_bit", 0));
  } catch (const std::exception& e) {
    refusal = e.what();
  }
  INFO("what digit4-count said at end_bit = 0: " << (refusal.empty() ? "nothing (no refusal)" : refusal));
  CHECK(refusal.find("nothing to count") != std::string::npos);
  CHECK(predicted("split-onepass", sort_problem(0)) == 0);
  CHECK(predicted("find-max", sort_problem(0)) == 1);
}

TEST_CASE("experiments without a GPU: the model and the bank model", "[cpu][experiments]") {
  const auto model = gpulab::testing::run_experiment("model", gpulab::testing::problem(std::size_t{1} << 24));
  const std::string text = gpulab::testing::printed(model);
  CHECK(text.find("split-global") != std::string::npos);
  CHECK(text.find("213 launches and 13 host round trips") != std::string::npos);
  const auto bank = gpulab::testing::run_experiment("bank-model", gpulab::testing::problem(65536).with("draw", 1));
  bool lane_row = false;
  for (const auto& row : bank.rows()) {
    if (std::get<std::string>(row[0]) != "digit4") continue;
    const auto counters = std::get<std::int64_t>(row[1]);
    const auto upsweep = std::get<std::int64_t>(row[4]), downsweep = std::get<std::int64_t>(row[5]);
    const auto excess = std::get<std::int64_t>(row[6]), reorder = std::get<std::int64_t>(row[8]);
    CHECK(excess == upsweep + downsweep);
    CHECK(downsweep == reorder);  // the reorder stores are the downsweep's only conflicts
    CHECK(reorder > 0);
    if (counters == 0) {
      lane_row = true;
      CHECK(upsweep == 0);  // the counting's graded layout (digit4-count): conflict-free
    } else {
      CHECK(upsweep > 0);  // per-thread counters conflict on uniform digits too
    }
  }
  CHECK(lane_row);
  CHECK(gpulab::testing::printed(bank).find("per-thread counters, every lane on digit 5") != std::string::npos);
}

// ================================ [gpu]: every stage through the stage table ================================

namespace {

// Every edge size (0, 1, 31, 32, 33, 1023, 1025, 2^k and 2^k - 3 for k = 10..18) with u32 keys, pairs
// of few-unique keys (stability), i32 with negatives, f32 specials (pairs); then the sizes around the
// tiles and chunks, every special input, odd and even pass counts.
void check_sort(const std::string& stage) {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 18);
  GPULAB_CHECK_PASS(stage, sort_problem(n));
  GPULAB_CHECK_PASS(stage, sort_problem(n, KeyType::u32, Distribution::few_unique, 2, true));
  GPULAB_CHECK_PASS(stage, special(n, "mixed-sign", KeyType::i32));
  GPULAB_CHECK_PASS(stage, special(n, "float-specials", KeyType::f32, true));
}

void check_shapes_and_inputs(const std::string& stage) {
  for (std::size_t n : {std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{7679}, std::size_t{7680},
                        std::size_t{7681}, std::size_t{61440}, std::size_t{100003}})
    GPULAB_CHECK_PASS(stage, sort_problem(n, KeyType::u32, Distribution::uniform, 6, true, 13));
  // The lab's inputs: max exactly 2^k, all zero, all one, differing only in high or low bits,
  // INT_MIN / INT_MAX / -1 / 0 together, float specials, skewed digits; sorted, reverse, all-equal.
  for (KeyType t : {KeyType::u32, KeyType::i32, KeyType::f32})
    for (const char* in : {"pow2-max", "all-zero", "all-one", "high-bits", "low-bits", "mixed-sign", "int-extremes",
                           "float-specials", "entropy-reduced"})
      GPULAB_CHECK_PASS(stage, special(20011, in, t, true));
  for (Distribution d : {Distribution::sorted, Distribution::reverse, Distribution::all_equal, Distribution::small_range})
    for (bool pairs : {false, true}) GPULAB_CHECK_PASS(stage, sort_problem(20011, KeyType::u32, d, 7, pairs));
  // Zero, odd and even pass counts of every stage, short last digits.
  for (int end_bit : {0, 1, 4, 6, 7, 12, 13, 20, 21, 31})
    GPULAB_CHECK_PASS(stage, sort_problem(33333, KeyType::i32, Distribution::uniform, 8, true, end_bit));
}

}  // namespace

TEST_CASE("find-max: the bit span at every n, every key type, the lab's inputs", "[gpu][find-max]") {
  const std::size_t n = GPULAB_EDGE_SIZE(10, 18);
  GPULAB_CHECK_PASS("find-max", sort_problem(n));
  GPULAB_CHECK_PASS("find-max", special(n, "pow2-max", KeyType::u32));
  GPULAB_CHECK_PASS("find-max", special(n, "mixed-sign", KeyType::i32));
  GPULAB_CHECK_PASS("find-max", special(n, "float-specials", KeyType::f32));
  for (long long block : {32, 1024}) {
    GPULAB_CHECK_PASS("find-max", special(100003, "low-bits", KeyType::u32).with("block", block));
    GPULAB_CHECK_PASS("find-max", special(100003, "all-one", KeyType::f32).with("block", block));
  }
}

TEST_CASE("split-global: every n, key type and input; blocks 32 and 1024", "[gpu][split-global]") {
  check_sort("split-global");
  check_shapes_and_inputs("split-global");
  for (long long block : {32, 1024}) {
    GPULAB_CHECK_PASS("split-global", sort_problem(70001, KeyType::u32, Distribution::small_range, 9, true).with("block", block));
    GPULAB_CHECK_PASS("split-global", special(70001, "pow2-max", KeyType::i32, true).with("block", block));
  }
}

TEST_CASE("split-scan-fused: every n, key type and input", "[gpu][split-scan-fused]") {
  check_sort("split-scan-fused");
  check_shapes_and_inputs("split-scan-fused");
}

TEST_CASE("split-onepass: every n, key type and input", "[gpu][split-onepass]") {
  check_sort("split-onepass");
  check_shapes_and_inputs("split-onepass");
}

TEST_CASE("digit4: every n, key type and input; several chunks per tile; per-thread counters", "[gpu][digit4]") {
  check_sort("digit4");
  check_shapes_and_inputs("digit4");
  GPULAB_CHECK_PASS("digit4", sort_problem(1500007, KeyType::u32, Distribution::uniform, 10, true, 21));
  GPULAB_CHECK_PASS("digit4", sort_problem(300007, KeyType::u32, Distribution::few_unique, 11, true).with("counters", 1));
}

TEST_CASE("digit4-count: the tile counts of every pass, every key type, both counter layouts", "[gpu][digit4-count]") {
  for (long long counters : {0, 1}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{4095}, std::size_t{4097}, std::size_t{100003},
                          std::size_t{1500007}})
      GPULAB_CHECK_PASS("digit4-count", sort_problem(n).with("counters", counters));
    GPULAB_CHECK_PASS("digit4-count", special(20011, "float-specials", KeyType::f32).with("counters", counters));
    GPULAB_CHECK_PASS("digit4-count", special(20011, "int-extremes", KeyType::i32).with("counters", counters));
    // Not end_bit = 0: digit4-count refuses it (no pass, nothing to count; the CPU test holds the refusal).
    for (int end_bit : {1, 6, 21})
      GPULAB_CHECK_PASS("digit4-count", sort_problem(33333, KeyType::u32, Distribution::few_unique, 8, false, end_bit)
                                            .with("counters", counters));
  }
}

TEST_CASE("onesweep: every n, key type, input and digit width", "[gpu][onesweep]") {
  check_sort("onesweep");
  check_shapes_and_inputs("onesweep");
  for (long long bits : {1, 2, 4, 6})
    for (int end_bit : {32, 13}) {
      GPULAB_CHECK_PASS("onesweep", sort_problem(20011, KeyType::f32, Distribution::uniform, 12, true, end_bit).with("bits", bits));
      GPULAB_CHECK_PASS("onesweep", sort_problem(100003, KeyType::u32, Distribution::few_unique, 13, false, end_bit).with("bits", bits));
    }
}

TEST_CASE("the baselines sort what they accept", "[gpu][baselines]") {
  for (const char* stage : {"cub-sort", "thrust-sort", "cub-merge-sort"}) {
    GPULAB_CHECK_PASS(stage, sort_problem(100003, KeyType::i32, Distribution::uniform, 14, true));
    GPULAB_CHECK_PASS(stage, sort_problem(1025, KeyType::u32, Distribution::few_unique, 15, false));
  }
  GPULAB_CHECK_PASS("cub-sort", sort_problem(100003, KeyType::u32, Distribution::uniform, 16, true, 13));
  GPULAB_CHECK_PASS("cub-merge-sort", special(100003, "float-specials", KeyType::f32, true).with("end_bit", 21));
}

TEST_CASE("every sort at 2^24 + 5: thousands of tiles in flight", "[gpu][large]") {
  for (const auto& stage : kGpuSorts) {
    GPULAB_CHECK_PASS(stage, sort_problem((std::size_t{1} << 24) + 5, KeyType::u32, Distribution::uniform, 17));
    GPULAB_CHECK_PASS(stage, sort_problem((std::size_t{1} << 24) + 5, KeyType::u32, Distribution::few_unique, 18, true));
  }
}

TEST_CASE("64-bit index arithmetic: 2^29 + 3 keys", "[gpu][huge]") {
  const std::size_t n = (std::size_t{1} << 29) + 3;
  for (const char* stage : {"split-onepass", "digit4", "onesweep"})
    GPULAB_CHECK_PASS(stage, sort_problem(n, KeyType::u32, Distribution::uniform, 19));
}
