// The radix-sort lab's model on the CPU: launches, host syncs and bytes per key against the task
// sheet's table and seed 003's case, the time model and its crossovers, the scatter's sectors, the
// bank model of digit4's counting and downsweep (and of the stage digit4-count), the paths a problem
// reaches. All [cpu]: no GPU needed.
// Run:  ./build/default/labs/radix-sort/test-radix-sort-reference "[model],[bank-model]"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/testing.hpp"
#include "radix_sort.cuh"
#include "radix_sort_model.hpp"

namespace {

using namespace radix_sort;
namespace m = radix_sort::model;
using Catch::Approx;

m::Problem model_problem(std::size_t n, int end_bit = 32) {
  m::Problem p;
  p.n = n;
  p.end_bit = end_bit;
  return p;
}

}  // namespace

// ================================ launches, syncs, bytes ================================

TEST_CASE("launches: seed 003's case is 213; every stage's formula", "[cpu][model]") {
  m::Problem p = model_problem(1u << 15);
  p.data_bits = 6;  // [0, 50)
  CHECK(m::work_efficient_scan_launches(p.n) == 30);
  CHECK(m::launches(m::Stage::find_max, p) == 15);
  CHECK(m::launches(m::Stage::split_global, p) == 213);
  CHECK(m::host_syncs(m::Stage::split_global, p) == 13);
  CHECK(m::host_copy_bytes(m::Stage::split_global, p) == 16 + 8 * 6);
  p.n = (1u << 15) - 3;  // 003's non-power-of-two run needs the same: ceil(log2) rounds up
  CHECK(m::launches(m::Stage::split_global, p) == 213);
  p = model_problem(1u << 24);
  CHECK(m::launches(m::Stage::split_scan_fused, p) == 64);
  CHECK(m::launches(m::Stage::split_onepass, p) == 33);
  CHECK(m::launches(m::Stage::digit4, p) == 24);
  CHECK(m::launches(m::Stage::onesweep, p) == 5);
  CHECK(m::launches(m::Stage::split_global, p) == 24 + 32 * (48 + 3));
  CHECK(m::host_syncs(m::Stage::onesweep, p) == 0);
  p.radix_bits = 4;
  CHECK(m::launches(m::Stage::onesweep, p) == 9);
  p.radix_bits = 6;
  CHECK(m::launches(m::Stage::onesweep, p) == 7);
  CHECK(m::launches(m::Stage::find_max, model_problem(0)) == 1);
  CHECK(m::launches(m::Stage::find_max, model_problem(1)) == 1);
  CHECK(m::launches(m::Stage::find_max, model_problem(2)) == 1);
  CHECK(m::launches(m::Stage::find_max, model_problem(3)) == 2);
  for (auto s : m::all_stages())
    if (m::sorts(s)) CHECK(m::launches(s, model_problem(0)) == 0);
  m::Problem one = model_problem(1);
  one.data_bits = 0;  // one key: nothing differs
  CHECK(m::launches(m::Stage::split_global, one) == 1);  // find-max only, then a copy
  CHECK(m::launches(m::Stage::onesweep, model_problem(100, 0)) == 0);
  CHECK(m::launches(m::Stage::digit4, model_problem(100, 6)) == 6);
  CHECK(m::launches(m::Stage::digit4_count, model_problem(100, 6)) == 2);
  CHECK(m::launches(m::Stage::digit4_count, model_problem(0)) == 0);
  CHECK(!m::sorts(m::Stage::digit4_count));
  CHECK(m::launches(m::Stage::cpu_lsd, model_problem(100)) == 0);
}

TEST_CASE("bytes per key at 2^24 u32 keys", "[cpu][model]") {
  m::Problem p = model_problem(1u << 24);
  CHECK(m::traffic(m::Stage::onesweep, p).key_bytes / p.n == Approx(36));
  CHECK(m::bytes_per_key(m::Stage::onesweep, p) ==
        Approx(36 + 4 * 256 * 4.0 * (3 + kOnesweepLookBackWindow) / kOnesweepTile).epsilon(0.01));
  CHECK(m::traffic(m::Stage::digit4, p).key_bytes / p.n == Approx(96));
  CHECK(m::traffic(m::Stage::split_onepass, p).key_bytes / p.n == Approx(260));
  CHECK((m::traffic(m::Stage::split_scan_fused, p).key_bytes + 8.0 * 32 * p.n) / p.n == Approx(640));
  // split-global: 10 words per bit outside the scan (map 3, t 2, scatter 5) and seed 003's global
  // work-efficient scan, whose strided levels touch whole sectors: ~77 bytes per key per bit at 2^24.
  const double sg = m::bytes_per_key(m::Stage::split_global, p);
  CHECK(sg > 32 * (40 + 70));
  CHECK(sg < 32 * (40 + 85));
  p.pairs = true;
  CHECK(m::traffic(m::Stage::onesweep, p).value_bytes / p.n == Approx(32));
}

TEST_CASE("time model: seed 003's 2.6 ms is launch overhead; crossovers", "[cpu][model]") {
  m::Problem p = model_problem(1u << 15);
  p.data_bits = 6;
  const double ms = m::predicted_ms(m::Stage::split_global, p, 12.0, 80.0, 12.0);  // a WDDM laptop
  CHECK(ms > 2.0);
  CHECK(ms < 3.5);
  CHECK(m::launches(m::Stage::split_global, p) * 3.0 / 1000 >
        0.5 * m::predicted_ms(m::Stage::split_global, p, 3.0, 3000.0, 10.0));
  const double x_onesweep = m::launch_bound_crossover(m::Stage::onesweep, model_problem(0), 3.0, 3000.0);
  CHECK(x_onesweep > 1e5);
  CHECK(x_onesweep < 1e7);
  const double x_fused = m::launch_bound_crossover(m::Stage::split_scan_fused, model_problem(0), 3.0, 3000.0);
  CHECK(x_fused > 1e5);
  CHECK(x_fused < x_onesweep);
  m::Problem g = model_problem(0);
  g.data_bits = 32;
  CHECK(std::isfinite(m::launch_bound_crossover(m::Stage::split_global, g, 3.0, 3000.0)));
}

TEST_CASE("scatter sectors per written key, counters and shared memory per block", "[cpu][model]") {
  CHECK(m::counter_bytes_per_warp(4) == 2048);
  CHECK(m::counter_bytes_per_warp(8) == 32768);
  const double os = m::expected_sectors_per_written_key(8, kOnesweepTile);
  CHECK(os > 0.15);  // runs of ~30 keys: their partial first and last sectors add up
  CHECK(os < 0.2);
  CHECK(m::expected_sectors_per_written_key(1, kSplitTile) == Approx(0.125).epsilon(0.01));
  CHECK(m::expected_sectors_per_written_key(8, 256) > 0.5);
  // digit4 from registers: a store instruction's 32 keys fall into ~16 runs.
  const double d4 = m::digit4_scatter_sectors_per_key();
  CHECK(d4 > 0.5);
  CHECK(d4 <= 1.0);
  // digit4 reordered (the reference): 32 consecutive sorted positions, 4 or 5 sectors, rarely two runs.
  const double d4_sorted = m::digit4_sorted_sectors_per_key();
  CHECK(d4_sorted > 4.0 / 32);
  CHECK(d4_sorted < 0.17);
  CHECK(d4_sorted < d4 / 4);
  CHECK(m::digit4_downsweep_shared_bytes(false) > 48 * 1024);  // the double-buffered stage needs the opt-in
  CHECK(2 * (m::digit4_downsweep_shared_bytes(true) + 1024) <= 228 * 1024);
  CHECK(2 * (m::onesweep_pass_shared_bytes(8, true) + 1024) <= 228 * 1024);
}

// ================================ bank conflicts ================================

TEST_CASE("counting: per-lane counters are conflict-free for any digits; per-thread ones are not", "[cpu][bank-model]") {
  std::vector<int> equal(32, 5), spread(32), random(32);
  for (int l = 0; l < 32; ++l) {
    spread[l] = l % 16;
    random[l] = (l * 7 + 3) % 16;
  }
  for (const auto& digits : {equal, spread, random}) {
    const auto s = m::summarize(m::digit_count_requests(4, CounterLayout::per_lane, digits));
    CHECK(s.excess() == 0);
    CHECK(s.wavefronts == 2);
  }
  const auto eq = m::summarize(m::digit_count_requests(4, CounterLayout::per_thread, equal));
  CHECK(eq.max_way == 16);
  CHECK(eq.excess() == 2 * 15);
  CHECK(m::summarize(m::digit_count_requests(8, CounterLayout::per_thread, equal)).max_way == 32);
  std::vector<int> few(32, -1);
  few[0] = 3;
  few[1] = 3;
  CHECK(m::summarize(m::digit_count_requests(4, CounterLayout::per_thread, few)).excess() == 0);
}

TEST_CASE("digit4 upsweep: 0 excess with per-lane counters on every distribution", "[cpu][bank-model]") {
  m::Problem p;
  p.multiprocessors = 4;  // small G so that tiles hold several chunks
  for (auto d : {m::KeyDistribution::uniform, m::KeyDistribution::all_equal, m::KeyDistribution::few_unique,
                 m::KeyDistribution::entropy_reduced}) {
    const auto keys = m::make_keys(d, 50000, 2, KeyType::u32);
    for (int pass : {0, 3, 7}) {
      const auto s = m::digit4_upsweep_summary(keys, KeyType::u32, 32, pass, p, CounterLayout::per_lane);
      CHECK(s.excess() == 0);
      CHECK(s.requests > 0);
    }
  }
}

TEST_CASE("digit4-count's counting sees the unsorted input at every shift, digit4's each pass's sorted input",
          "[cpu][bank-model]") {
  // What the ncu sweep of the stage digit4-count compares with (bank-model.csv's count_excess): the
  // same as digit4's counting at pass 0 and with per-lane counters (0), not at later passes with
  // per-thread ones, where the degree depends on which digits a warp's 32 keys hold.
  m::Problem p;
  p.multiprocessors = 4;
  const auto keys = m::make_keys(m::KeyDistribution::few_unique, 50000, 2, KeyType::u32);
  auto excess = [&](int pass, CounterLayout layout, m::CountedKeys counted) {
    return m::digit4_upsweep_summary(keys, KeyType::u32, 32, pass, p, layout, counted).excess();
  };
  using m::CountedKeys;
  CHECK(excess(0, CounterLayout::per_thread, CountedKeys::unsorted) ==
        excess(0, CounterLayout::per_thread, CountedKeys::pass_input));
  long sorted = 0, unsorted = 0;
  for (int pass = 1; pass < 8; ++pass) {
    CHECK(excess(pass, CounterLayout::per_lane, CountedKeys::unsorted) == 0);
    sorted += excess(pass, CounterLayout::per_thread, CountedKeys::pass_input);
    unsorted += excess(pass, CounterLayout::per_thread, CountedKeys::unsorted);
  }
  CHECK(unsorted > 0);
  CHECK(sorted != unsorted);
}

TEST_CASE("digit4 upsweep, per-thread counters, one chunk of equal keys: 4608 excess", "[cpu][bank-model]") {
  // One tile of 4096 equal keys, 8 warps: the clear as four 128-bit stores (4 phases of 8 lanes, the
  // 4 even lanes of a phase on the same 4 banks: 4 wavefronts where 1 would do, 12 excess each),
  // counting 4 steps x 4 keys x (load + store) x 15, the warp-sum loads as four 128-bit loads:
  // (48 + 480 + 48) x 8 = 4608. (Nsight Compute counts the 128-bit form: radix_sort_model.cpp.)
  m::Problem p;
  const std::vector<std::uint32_t> keys(4096, 0x1234u);
  const auto s = m::digit4_upsweep_summary(keys, KeyType::u32, 32, 0, p, CounterLayout::per_thread);
  CHECK(s.excess() == 4608);
  CHECK(s.max_way == 16);
}

TEST_CASE("digit4 downsweep: only the reorder stores conflict, ~2.4 excess per request, none for equal keys", "[cpu][bank-model]") {
  for (bool pairs : {false, true})
    for (auto d : {m::KeyDistribution::uniform, m::KeyDistribution::all_equal, m::KeyDistribution::few_unique}) {
      m::Problem p;
      p.pairs = pairs;
      p.multiprocessors = 2;  // several chunks per tile: both halves of the double-buffered stage
      const auto keys = m::make_keys(d, 30011, 1, KeyType::u32);  // a partial chunk: keys past n not stored
      for (int pass : {0, 5}) {
        const auto s = m::digit4_downsweep_summary(keys, KeyType::u32, 32, pass, p);
        const auto r = m::digit4_reorder_summary(keys, KeyType::u32, 32, pass, p);
        INFO(m::to_string(d) << " pass " << pass << " pairs " << pairs);
        CHECK(s.excess() == (pairs ? 2 : 1) * r.excess());  // the values' stores hit the keys' banks
        CHECK(s.requests > r.requests);
        if (d == m::KeyDistribution::all_equal) {
          CHECK(s.excess() == 0);
        } else {
          CHECK(r.excess() > 0);
        }
      }
    }
  m::Problem p;
  const auto uniform = m::make_keys(m::KeyDistribution::uniform, 20000, 1, KeyType::u32);
  const auto s = m::digit4_reorder_summary(uniform, KeyType::u32, 32, 0, p);
  CHECK(s.requests == 5 * 128);  // 5 chunks (20000 keys, one tile) x 8 warps x 16 items
  const double per_request = static_cast<double>(s.excess()) / static_cast<double>(s.requests);
  CHECK(per_request > 2.2);
  CHECK(per_request < 2.6);
}

// ================================ paths ================================

TEST_CASE("paths: the kernels and branches a problem reaches", "[cpu][model]") {
  auto has = [](const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  m::Problem p = model_problem(7681);
  auto o = m::paths(m::Stage::onesweep, p);
  CHECK(has(o, "u32 keys"));
  CHECK(has(o, "keys only"));
  CHECK(has(o, "an even pass count"));
  CHECK(has(o, "several tiles: the look-back"));
  CHECK(has(o, "full tiles"));
  CHECK(has(o, "a partial tile"));
  p.end_bit = 20;  // 3 passes of 8, 8, 4 bits
  o = m::paths(m::Stage::onesweep, p);
  CHECK(has(o, "an odd pass count"));
  CHECK(has(o, "a short last pass"));
  p = model_problem(0);
  CHECK(has(m::paths(m::Stage::digit4, p), "n = 0: nothing to do"));
  CHECK(has(m::paths(m::Stage::find_max, p), "n = 0: the identities written"));
  p = model_problem(100, 0);
  CHECK(has(m::paths(m::Stage::split_onepass, p), "zero passes: a copy"));
  p = model_problem(2000000);  // > 264 chunks on 132 SMs
  const auto d = m::paths(m::Stage::digit4, p);
  CHECK(has(d, "several chunks per tile"));
  CHECK(has(d, "the spine loops over the count matrix"));
  CHECK(m::paths(m::Stage::cpu, p).empty());
}


TEST_CASE("digit4-count: the model's paths and bytes", "[cpu][model]") {
  m::Problem p = model_problem(100003, 21);
  p.multiprocessors = 2;
  p.counters = CounterLayout::per_thread;
  const auto o = m::paths(m::Stage::digit4_count, p);
  for (const char* path : {"u32 keys", "a short last pass", "several tiles", "several chunks per tile", "a partial chunk",
                           "per-thread counters"}) {
    INFO(path);
    CHECK(std::find(o.begin(), o.end(), path) != o.end());
  }
  CHECK(std::find(o.begin(), o.end(), "pairs") == o.end());
  CHECK(m::paths(m::Stage::digit4_count, model_problem(1000, 0)).back() == "zero passes: nothing to count");
  CHECK(m::traffic(m::Stage::digit4_count, p).key_bytes == Approx(6 * 4.0 * 100003));
}
