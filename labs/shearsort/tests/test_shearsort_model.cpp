// The ShearSort lab's model on the CPU: the network, the round count (the seeds' defect), the tile
// costs and the bank model against the design figures, passes, bytes and launches, the d-way heap's
// shared memory, the paths, the inputs and the verdicts. All [cpu]: no GPU needed.
// Run:  ./build/default/labs/shearsort/test-shearsort-reference "[model]"
#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "gpulab/testing.hpp"
#include "shearsort_model.hpp"

using namespace shearsort;
using namespace shearsort::model;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// The sort verdict's input for keys (and pairs): the oracle's output as the harness lays it out.
std::vector<std::int32_t> expected_sort(const std::vector<std::int32_t>& keys, bool pairs) {
  if (!pairs) return sorted_keys(keys);
  const auto sorted = sorted_pairs(keys, index_values(keys.size()));
  std::vector<std::int32_t> out(2 * keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out[i] = sorted[i].first;
    out[keys.size() + i] = static_cast<std::int32_t>(sorted[i].second);
  }
  return out;
}

}  // namespace

TEST_CASE("network: Batcher's odd-even merge sort, c(w) and depth; bitonic counts", "[cpu][model]") {
  for (int w = 2; w <= 32; w *= 2) {
    const auto net = odd_even_merge_network(w);
    CHECK(static_cast<int>(net.size()) == odd_even_merge_formula(w));
    CHECK(network_depth(net, w) == odd_even_merge_depth(w));
  }
  CHECK(odd_even_merge_formula(16) == 63);
  CHECK(odd_even_merge_formula(32) == 191);
  CHECK(kNetwork32.size() == 191u);
  CHECK(network_depth(odd_even_merge_network(32), 32) == 15);
  CHECK(bitonic_comparators(32) == 240);
  CHECK(bitonic_comparators(kTileKeys) / kWarp == 880);
  CHECK(bitonic_steps(kTileKeys) == 55);
  // The 0-1 principle: every 0-1 input of 16 keys; then random 32-key inputs through kNetwork32.
  const auto net16 = odd_even_merge_network(16);
  for (std::uint32_t bits = 0; bits < (1u << 16); ++bits) {
    std::array<int, 16> v{};
    for (int i = 0; i < 16; ++i) v[i] = (bits >> i) & 1;
    for (auto c : net16)
      if (v[c.hi] < v[c.lo]) std::swap(v[c.lo], v[c.hi]);
    REQUIRE(std::is_sorted(v.begin(), v.end()));
  }
  for (int trial = 0; trial < 2000; ++trial) {
    auto v = make_keys(trial % 2 ? Input::zero_one : Input::small_range, 32, trial);
    for (auto c : kNetwork32)
      if (v[c.hi] < v[c.lo]) std::swap(v[c.lo], v[c.hi]);
    REQUIRE(std::is_sorted(v.begin(), v.end()));
  }
}

TEST_CASE("round count: log2 w rounds need the final ascending column phase (0-1 principle)", "[cpu][model][shear]") {
  // w = 4: all 2^16 0-1 tiles.
  CHECK(unsorted_zero_one_tiles({4, 2, true, true}) == 0);
  CHECK(unsorted_zero_one_tiles({4, 2, false, true}) > 0);  // the seeds' count
  CHECK(unsorted_zero_one_tiles({4, 3, false, true}) > 0);  // one more round does not replace the final phase
  CHECK(unsorted_zero_one_tiles({4, 1, true, true}) > 0);   // one round fewer is not enough either
  for (int w : {8, 16, 32}) {
    INFO("w = " << w);
    const int trials = w == 32 ? 400 : 1500;
    CHECK(unsorted_random_zero_one_tiles({w, shear_rounds(w), true, true}, trials, 5) == 0);
    CHECK(unsorted_random_zero_one_tiles({w, shear_rounds(w), false, true}, trials, 5) > 0);
    CHECK(unsorted_random_zero_one_tiles({w, shear_rounds(w) - 1, true, true}, trials, 5) > 0);
  }
  // The lab's test tile (--param input=final-phase): sorted only with the final phase.
  const auto tile = zero_one_tile_needing_final_phase(kTileSide, 1);
  REQUIRE(tile.size() == static_cast<std::size_t>(kTileKeys));
  auto v = tile;
  shear_sort_tile<std::int32_t>(v, {kTileSide, kShearRounds, false, true});
  CHECK_FALSE(std::is_sorted(v.begin(), v.end()));
  v = tile;
  shear_sort_tile<std::int32_t>(v, {});
  CHECK(std::is_sorted(v.begin(), v.end()));
  CHECK(make_keys(Input::zero_one_final_phase, 3000, 9) ==
        [&] {
          std::vector<std::int32_t> k(3000);
          for (std::size_t i = 0; i < k.size(); ++i) k[i] = tile[i % kTileKeys];
          return k;
        }());
  CHECK(kColumnPhases == shear_column_phases(kTileSide));
  CHECK(kRowPhases == shear_row_phases(kTileSide));
}

TEST_CASE("ShearSort on the CPU equals the tile oracle on every input; column-sorted is what it says",
          "[cpu][model][shear]") {
  for (auto d : all_inputs())
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{1023}, std::size_t{1024},
                          std::size_t{1025}, std::size_t{5000}}) {
      const auto keys = make_keys(d, n, 5);
      INFO(to_string(d) << " n=" << n);
      REQUIRE(shear_tiles(keys) == tiles_sorted(keys));
    }
  const auto cs = make_keys(Input::column_sorted, kTileKeys, 9);
  for (int c = 0; c < kTileSide; ++c) CHECK(std::is_sorted(cs.begin() + c * 32, cs.begin() + c * 32 + 32));
  CHECK_FALSE(std::is_sorted(cs.begin(), cs.end()));
  const auto ex = make_keys(Input::extremes, 10000, 2);
  CHECK(std::count(ex.begin(), ex.end(), INT_MAX) > 1000);
  CHECK(std::count(ex.begin(), ex.end(), INT_MIN) > 1000);
}

TEST_CASE("inputs: --dist and --param input map to the model's inputs; make_keys is deterministic", "[cpu][model]") {
  using gpulab::Distribution;
  CHECK(input_for(Distribution::uniform, 0) == Input::uniform);
  CHECK(input_for(Distribution::full_range, 0) == Input::uniform);
  CHECK(input_for(Distribution::small_range, 0) == Input::small_range);
  CHECK(input_for(Distribution::all_equal, 0) == Input::all_equal);
  CHECK(input_for(Distribution::sorted, 0) == Input::sorted);
  CHECK(input_for(Distribution::reverse, 0) == Input::reverse);
  CHECK(input_for(Distribution::few_unique, 0) == Input::few_unique);
  CHECK(input_for(Distribution::sorted, 1) == Input::zero_one);
  CHECK(input_for(Distribution::uniform, 2) == Input::zero_one_final_phase);
  CHECK(input_for(Distribution::uniform, 3) == Input::column_sorted);
  CHECK(input_for(Distribution::uniform, 4) == Input::extremes);
  for (auto d : all_inputs()) {
    CHECK(parse_input(to_string(d)) == d);
    CHECK(make_keys(d, 777, 3) == make_keys(d, 777, 3));
  }
  CHECK(make_keys(Input::uniform, 777, 3) != make_keys(Input::uniform, 777, 4));
  const auto s = make_keys(Input::sorted, 5000, 1);
  CHECK(std::is_sorted(s.begin(), s.end()));
  const auto r = make_keys(Input::reverse, 5000, 1);
  CHECK(std::is_sorted(r.rbegin(), r.rend()));
}

TEST_CASE("tile model: compare-exchanges and shared accesses per thread (the model's table)", "[cpu][model][bank]") {
  struct Row {
    TileVariant v;
    long cas, accesses;
  };
  const Row rows[] = {{TileVariant::bitonic, 880, 3520},
                      {TileVariant::shear_naive, 2101, 8404},
                      {TileVariant::shear_transpose, 2101, 9892},
                      {TileVariant::shear_registers, 2101, 2192},
                      {TileVariant::shear_padded, 2101, 704}};
  for (const auto& r : rows) {
    const auto c = tile_cost(r.v);
    INFO(to_string(r.v));
    CHECK(c.compare_exchanges_per_thread == r.cas);
    CHECK(c.network_accesses_per_thread == r.accesses);
    CHECK(c.staging_accesses_per_thread == 64);
    // The request list has exactly one warp request per shared access of a thread.
    CHECK(static_cast<long>(tile_requests(r.v).size()) == c.shared_accesses_per_thread());
  }
  CHECK(tile_cost(TileVariant::bitonic).comparisons_per_key() == Catch::Approx(27.5));
  CHECK(tile_cost(TileVariant::shear_padded).comparisons_per_key() == Catch::Approx(65.65625));
}

TEST_CASE("bank model: excess wavefronts per tile are the design figures (2560, 142104, 0, 0, 0)", "[cpu][model][bank]") {
  for (int i = 0; i < 5; ++i) {
    const auto v = static_cast<TileVariant>(i);
    INFO(to_string(v));
    CHECK(tile_summary(v).excess() == brief_excess_per_tile(v));
  }
  CHECK(tile_summary(TileVariant::bitonic).max_way == 2);
  CHECK(tile_summary(TileVariant::shear_naive).max_way == 32);
  CHECK(tile_summary(TileVariant::shear_padded).max_way == 1);
  CHECK(tile_summary(TileVariant::bitonic).wavefronts == 6144);
  CHECK(tile_summary(TileVariant::shear_naive).wavefronts == 150572);
  CHECK(tile_summary(TileVariant::shear_padded).wavefronts == 768);
  CHECK(predicted_excess_wavefronts(TileVariant::shear_naive, 65536) == 64L * 142104);
  CHECK(predicted_excess_wavefronts(TileVariant::bitonic, 1025) == 2L * 2560);  // a partial tile costs a whole one
  CHECK(predicted_excess_wavefronts(TileVariant::shear_transpose, 1u << 24) == 0);
  // The merge stages' 64-bit composites: the conflict-free layouts stay conflict-free.
  for (auto v : {TileVariant::shear_transpose, TileVariant::shear_registers, TileVariant::shear_padded}) {
    INFO(to_string(v) << " with 8-byte keys");
    CHECK(tile_summary(v, 8).excess() == 0);
  }
  // merge-pairwise's output staging: padded is conflict-free, stride-16 stores unpadded are 16-way.
  CHECK(gpulab::summarize(merge_staging_requests(true)).excess() == 0);
  CHECK(gpulab::summarize(merge_staging_requests(false)).max_way == kMergeItems);
  CHECK(gpulab::summarize(merge_staging_requests(false)).excess() == kMergeItems * (kMergeItems - 1));
}

TEST_CASE("merge model: passes, bytes, launches", "[cpu][model][merge]") {
  const std::size_t n24 = std::size_t{1} << 24, n28 = std::size_t{1} << 28;
  CHECK(pairwise_passes(n24) == 14);
  CHECK(dway_passes(n24, 4) == 7);
  CHECK(dway_passes(n24, 16) == 4);
  CHECK(dway_passes(n24, 128) == 2);
  CHECK(dway_passes(n24, 2) == pairwise_passes(n24));
  CHECK(pairwise_passes(n28) == 18);
  CHECK(agpu_dway_passes(n28, 32, 2) == 23);
  CHECK(agpu_dway_passes(n28, 32, 4) == 12);
  CHECK(sort_bytes(n24, 14, 4) == 2.0 * n24 * 4 * 15);
  CHECK(pairwise_passes(1024) == 0);
  CHECK(pairwise_passes(1025) == 1);
  CHECK(dway_passes(1025, 256) == 1);
  CHECK(dway_passes(1024 * 256 + 1, 256) == 2);
  CHECK(launches(Stage::merge_pairwise, n24) == 29);
  CHECK(launches(Stage::merge_dway, n24, 16) == 9);
  CHECK(launches(Stage::tile_shear_padded, 5) == 1);
  CHECK(launches(Stage::merge_dway, 0) == 0);
  CHECK(launches(Stage::merge_pairwise, 1000) == 1);
  CHECK(launches(Stage::cpu_shear, 5000) == 0);
  // 004 Fig. 14: 8 runs, 2-way 3 passes, 8-way 1.
  CHECK(agpu_dway_passes(8, 1, 2) == 3);
  CHECK(agpu_dway_passes(8, 1, 8) == 1);
  // 004 §7.4.1: the merge time is about independent of d.
  CHECK(dway_merge_steps(n24, 4) == Catch::Approx(dway_merge_steps(n24, 16)).epsilon(0.15));  // ceil(log_d) rounds up
}

TEST_CASE("d-way heap: shared bytes and resident warps (004 §7.3.6)", "[cpu][model][heap]") {
  CHECK(seed_heap_bytes_per_warp(256) == 32640u);
  const int h100 = 228 * 1024, k20c = 48 * 1024;
  const std::pair<int, int> h[] = {{2, 64}, {4, 64}, {8, 64}, {16, 64}, {32, 58}, {64, 28}, {128, 14}, {256, 7}};
  for (auto [d, w] : h) CHECK(seed_resident_warps(h100, d) == w);
  const std::pair<int, int> k[] = {{2, 64}, {4, 64}, {8, 54}, {16, 25}, {32, 12}, {64, 6}, {256, 1}};
  for (auto [d, w] : k) CHECK(seed_resident_warps(k20c, d) == w);
  const std::pair<int, int> ref[] = {{2, 64}, {8, 64}, {16, 52}, {32, 24}, {64, 12}, {128, 6}, {256, 3}};
  for (auto [d, w] : ref) {
    CHECK(dway_shared(d).resident_warps == w);
    CHECK(dway_shared(d).resident_warps == dway_resident_warps_by_shared(d));
  }
  CHECK(dway_shared(256, h100, 8).resident_warps == 1);  // pairs: 64-bit buffers, 135,680 B a heap
  CHECK(dway_shared_bytes_per_warp(8, 4) == 276u * 8 - 256);       // b = 64 (the reference)
  CHECK(dway_shared_bytes_per_warp(8, 4, 32) == 148u * 8 - 128);  // 004's b = 32
  // The chunk rule: powers of two that divide the group, at least 8192 keys (unless the group is smaller).
  for (int d = 2; d <= 256; d *= 2)
    for (std::size_t L = 1024; L <= (std::size_t{1} << 26); L *= d) {
      const std::size_t s = dway_chunk_keys(std::size_t{1} << 28, L, d, 132, 0);
      CHECK(gpulab::is_pow2(s));
      CHECK((d * L) % s == 0);
      CHECK(s >= std::min<std::size_t>(8192, d * L));
    }
  // The workspace holds every pass's cuts (merge_dway takes 4 d bytes per task of its smallest chunk).
  for (int d : {2, 8, 256})
    for (std::size_t chunk : {std::size_t{0}, std::size_t{64}})
      for (std::size_t n : {std::size_t{1025}, std::size_t{20000}, std::size_t{1} << 20}) {
        ShearConfig c;
        c.d = d;
        c.dway_chunk = chunk;
        std::size_t tasks = 0;
        for (std::size_t run = kTileKeys; run < n; run *= d)
          tasks = std::max(tasks, gpulab::ceil_div(n, dway_chunk_keys(n, run, d, 132, chunk)));
        CHECK(shearsort_workspace_bytes(n, c) >= 8 * n + 4 * d * tasks);
      }
}

TEST_CASE("paths: the kernels and branches a problem reaches", "[cpu][model][paths]") {
  const Shape keys{};
  CHECK(paths(Stage::cpu, 100, keys).empty());
  CHECK(paths(Stage::tile_shear_padded, 0, keys) == std::vector<std::string>{"n = 0: nothing to do"});
  CHECK(paths(Stage::tile_bitonic, 1024, keys) == std::vector<std::string>{"one tile", "a block with warps past n"});
  const auto t = paths(Stage::tile_shear_transpose, 9000, keys);
  CHECK(has(t, "several tiles"));
  CHECK(has(t, "a partial tile"));
  CHECK(has(t, "a multi-block grid"));
  CHECK(has(t, "a block with warps past n"));
  CHECK_FALSE(has(paths(Stage::tile_shear_padded, 65536, keys), "a partial tile"));
  // merge-pairwise: 9 tiles -> 4 passes (even), a lone run, several blocks per pair, a partial block.
  const auto p = paths(Stage::merge_pairwise, 9000, keys);
  for (const char* want : {"keys only", "tiles by tile-shear-padded", "tile pass: a multi-block grid",
                           "an even number of passes", "a run without a partner", "a pair merged by several blocks",
                           "a partial merge block"})
    CHECK(has(p, want));
  CHECK(has(paths(Stage::merge_pairwise, 5000, keys), "an odd number of passes"));
  CHECK(has(paths(Stage::merge_pairwise, 1000, keys), "no merge pass (one tile)"));
  CHECK_FALSE(has(paths(Stage::merge_pairwise, 2048, keys), "a pair merged by several blocks"));
  // merge-dway: the partition kernel and heap block follow d; the opt-in only for big 64-bit heaps.
  Shape s;
  s.d = 256;
  s.pairs = true;
  const auto q = paths(Stage::merge_dway, 5000, s);
  for (const char* want : {"(key, value) pairs", "partition: 8 runs per lane", "heap blocks of 1 warp",
                           "heap shared memory above 48 KiB (opt-in)", "a group with fewer than d runs",
                           "a run ending in a partial 64-key block", "an odd number of passes"})
    CHECK(has(q, want));
  s.pairs = false;
  CHECK(has(paths(Stage::merge_dway, 5000, s), "heap shared memory above 48 KiB (opt-in)"));  // 70,400 B
  s.d = 128;
  CHECK_FALSE(has(paths(Stage::merge_dway, 5000, s), "heap shared memory above 48 KiB (opt-in)"));
  const auto r = paths(Stage::merge_dway, 9000, keys);
  for (const char* want : {"partition: 1 run per lane", "heap blocks of 2 warps", "an even number of passes",
                           "a group cut into several tasks", "a group with fewer than d runs"})
    CHECK(has(r, want));
  CHECK_FALSE(has(paths(Stage::merge_dway, 4096, keys), "a run ending in a partial 64-key block"));
}

TEST_CASE("verdicts: a tile stage's wrong output says what is wrong", "[cpu][model][verdict]") {
  const auto keys = make_keys(Input::uniform, 3000, 4);
  const auto want = tiles_sorted(keys);
  CHECK(check_tiles(keys, want, want).ok);
  // Never written.
  auto got = want;
  std::fill(got.begin() + 1024, got.begin() + 2048, static_cast<std::int32_t>(0xA5A5A5A5u));
  auto r = check_tiles(keys, want, got);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("1 of 3 tiles wrong; the first, tile 1 (keys [1024, 2048))") != std::string::npos);
  CHECK(r.message.find("poison") != std::string::npos);
  // A key from the neighbouring tile.
  got = want;
  std::swap(got[1023], got[1024]);
  r = check_tiles(keys, want, got);
  CHECK(r.message.find("2 of 3 tiles wrong") != std::string::npos);
  CHECK(r.message.find("does not hold the tile's input keys") != std::string::npos);
  // Snake order: the last column phase alternated.
  got = want;
  for (int c = 1; c < kTileSide; c += 2) std::reverse(got.begin() + c * 32, got.begin() + c * 32 + 32);
  r = check_tiles(keys, want, got);
  CHECK(r.message.find("snake order") != std::string::npos);
  // The seeds' round count: one column phase short.
  const auto tile_keys = make_keys(Input::zero_one_final_phase, kTileKeys, 1);
  auto seeds = tile_keys;
  shear_sort_tile<std::int32_t>(seeds, {kTileSide, kShearRounds, false, true});
  r = check_tiles(tile_keys, tiles_sorted(tile_keys), seeds);
  CHECK(r.message.find("one ascending column phase from sorted") != std::string::npos);
  CHECK(r.message.find("needs a final column phase") != std::string::npos);
  // ... and on uniform keys (several tiles: the verdict names the first).
  const auto many = make_keys(Input::uniform, 4 * kTileKeys, 8);
  const auto short_rounds = shear_tiles(many, {kTileSide, kShearRounds, false, true});
  r = check_tiles(many, tiles_sorted(many), short_rounds);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("needs a final column phase") != std::string::npos);
  // Unsorted with the right keys.
  got = want;
  std::swap(got[5], got[700]);
  r = check_tiles(keys, want, got);
  CHECK(r.message.find("holds the right keys but is not sorted") != std::string::npos);
}

TEST_CASE("verdicts: a sort's wrong output says what is wrong, an unstable one included", "[cpu][model][verdict]") {
  const auto keys = make_keys(Input::small_range, 5000, 6);
  const auto want = expected_sort(keys, true);
  CHECK(check_sort(keys, want, want, true).ok);
  CHECK(check_sort(keys, expected_sort(keys, false), expected_sort(keys, false), false).ok);
  // Two equal keys with their values swapped: sorted, the values follow their keys, not stable.
  auto got = want;
  std::size_t i = 0;
  while (got[i] != got[i + 1]) ++i;
  std::swap(got[5000 + i], got[5000 + i + 1]);
  auto r = check_sort(keys, want, got, true);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("not stable") != std::string::npos);
  // A value that does not belong to its key.
  got = want;
  const std::size_t last = 4999;
  got[5000] = got[5000 + last];
  r = check_sort(keys, want, got, true);
  CHECK(r.message.find("do not follow their keys") != std::string::npos);
  // Keys unsorted, keys lost, never written.
  got = want;
  std::swap(got[0], got[4999]);
  CHECK(check_sort(keys, want, got, true).message.find("not sorted") != std::string::npos);
  got = want;
  got[0] = got[4999];  // a 0 lost, a 49 doubled
  CHECK(check_sort(keys, want, got, true).message.find("not the input's keys") != std::string::npos);
  got.assign(want.size(), static_cast<std::int32_t>(0xA5A5A5A5u));
  CHECK(check_sort(keys, want, got, true).message.find("never written") != std::string::npos);
  CHECK(check_sort(keys, want, std::vector<std::int32_t>(5000), true).message.find("n keys, then n values") !=
        std::string::npos);
}
