// The ShearSort lab's CPU side (shearsort_model.hpp). Part of the harness: do not edit.
#include "shearsort_model.hpp"

#include <array>
#include <bit>
#include <climits>
#include <cmath>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "gpulab/names.hpp"
#include "gpulab/splitmix64.hpp"

namespace shearsort::model {

namespace {

constexpr int b = kWarp;

using gpulab::SplitMix64;

int log2_exact(long n) {
  if (n < 1 || (n & (n - 1)) != 0) throw std::invalid_argument("model: expected a power of two, got " + std::to_string(n));
  return std::countr_zero(static_cast<unsigned long>(n));
}

constexpr gpulab::NameTable<Stage, 9> kStageIds{{
    {Stage::cpu, "cpu"},
    {Stage::cpu_shear, "cpu-shear"},
    {Stage::tile_bitonic, "tile-bitonic"},
    {Stage::tile_shear_naive, "tile-shear-naive"},
    {Stage::tile_shear_transpose, "tile-shear-transpose"},
    {Stage::tile_shear_registers, "tile-shear-registers"},
    {Stage::tile_shear_padded, "tile-shear-padded"},
    {Stage::merge_pairwise, "merge-pairwise"},
    {Stage::merge_dway, "merge-dway"},
}};

constexpr gpulab::NameTable<Input, 10> kInputIds{{
    {Input::uniform, "uniform"},
    {Input::small_range, "small-range"},
    {Input::all_equal, "all-equal"},
    {Input::sorted, "sorted"},
    {Input::reverse, "reverse"},
    {Input::few_unique, "few-unique"},
    {Input::zero_one, "zero-one"},
    {Input::zero_one_final_phase, "final-phase"},
    {Input::column_sorted, "column-sorted"},
    {Input::extremes, "extremes"},
}};

}  // namespace

// ---- stages ------------------------------------------------------------------------------------------------------

std::vector<Stage> all_stages() { return gpulab::values_of(kStageIds); }
std::string_view to_string(Stage s) { return gpulab::name_of(kStageIds, s); }
std::optional<Stage> parse_stage(std::string_view id) { return gpulab::parse_name(kStageIds, id); }
std::optional<TileVariant> tile_variant(Stage s) {
  switch (s) {
    case Stage::tile_bitonic: return TileVariant::bitonic;
    case Stage::tile_shear_naive: return TileVariant::shear_naive;
    case Stage::tile_shear_transpose: return TileVariant::shear_transpose;
    case Stage::tile_shear_registers: return TileVariant::shear_registers;
    case Stage::tile_shear_padded: return TileVariant::shear_padded;
    default: return std::nullopt;
  }
}
std::string_view to_string(TileVariant v) {
  switch (v) {
    case TileVariant::bitonic: return "tile-bitonic";
    case TileVariant::shear_naive: return "tile-shear-naive";
    case TileVariant::shear_transpose: return "tile-shear-transpose";
    case TileVariant::shear_registers: return "tile-shear-registers";
    case TileVariant::shear_padded: return "tile-shear-padded";
  }
  return "?";
}

bool sorts_tiles(Stage s) { return s == Stage::cpu_shear || tile_variant(s).has_value(); }
bool sorts_all(Stage s) { return s == Stage::cpu || s == Stage::merge_pairwise || s == Stage::merge_dway; }

// ---- inputs ------------------------------------------------------------------------------------------------------

std::vector<Input> all_inputs() { return gpulab::values_of(kInputIds); }
std::string_view to_string(Input d) { return gpulab::name_of(kInputIds, d); }
std::optional<Input> parse_input(std::string_view name) { return gpulab::parse_name(kInputIds, name); }

Input input_for(gpulab::Distribution d, long long input_knob) {
  switch (input_knob) {
    case 1: return Input::zero_one;
    case 2: return Input::zero_one_final_phase;
    case 3: return Input::column_sorted;
    case 4: return Input::extremes;
    default: break;
  }
  switch (d) {
    case gpulab::Distribution::small_range: return Input::small_range;
    case gpulab::Distribution::all_equal: return Input::all_equal;
    case gpulab::Distribution::sorted: return Input::sorted;
    case gpulab::Distribution::reverse: return Input::reverse;
    case gpulab::Distribution::few_unique: return Input::few_unique;
    default: return Input::uniform;  // uniform and full-range: every int32 equally likely
  }
}

std::vector<std::uint32_t> index_values(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

std::vector<std::int32_t> make_keys(Input d, std::size_t n, std::uint64_t seed) {
  SplitMix64 rng{seed * 0x100000001B3ull + static_cast<std::uint64_t>(d) + 1};
  std::vector<std::int32_t> v(n);
  auto any = [&] { return static_cast<std::int32_t>(static_cast<std::uint32_t>(rng.next())); };
  auto below = [&](std::uint32_t m) { return static_cast<std::int32_t>(rng.next() % m); };
  switch (d) {
    case Input::uniform:
      for (auto& x : v) x = any();
      break;
    case Input::small_range:
      for (auto& x : v) x = below(50);
      break;
    case Input::all_equal:
      std::fill(v.begin(), v.end(), 42);
      break;
    case Input::sorted:
    case Input::reverse:
      for (auto& x : v) x = below(2000001) - 1000000;
      std::sort(v.begin(), v.end());
      if (d == Input::reverse) std::reverse(v.begin(), v.end());
      break;
    case Input::few_unique: {
      constexpr std::int32_t values[4] = {-5, 3, 7, 100};
      for (auto& x : v) x = values[rng.next() % 4];
      break;
    }
    case Input::zero_one:
      for (auto& x : v) x = below(2);
      break;
    case Input::zero_one_final_phase: {
      static const std::vector<std::int32_t> tile = zero_one_tile_needing_final_phase(kTileSide, 1);
      if (tile.empty()) throw std::logic_error("make_keys: no 0-1 tile needing the final phase was found");
      for (std::size_t i = 0; i < n; ++i) v[i] = tile[i % kTileKeys];
      break;
    }
    case Input::column_sorted:
      for (auto& x : v) x = below(1000);
      for (std::size_t c = 0; c < n; c += kTileSide) std::sort(v.begin() + c, v.begin() + std::min(n, c + kTileSide));
      break;
    case Input::extremes: {
      constexpr std::int32_t values[7] = {INT_MIN, INT_MIN + 1, -1, 0, 1, INT_MAX - 1, INT_MAX};
      for (auto& x : v) x = values[rng.next() % 7];
      break;
    }
  }
  return v;
}

// ---- the oracles -----------------------------------------------------------------------------------------------------

std::vector<std::int32_t> sorted_keys(std::span<const std::int32_t> keys) {
  std::vector<std::int32_t> v(keys.begin(), keys.end());
  std::stable_sort(v.begin(), v.end());
  return v;
}

std::vector<std::pair<std::int32_t, std::uint32_t>> sorted_pairs(std::span<const std::int32_t> keys,
                                                                 std::span<const std::uint32_t> values) {
  if (keys.size() != values.size()) throw std::invalid_argument("sorted_pairs: sizes differ");
  std::vector<std::pair<std::int32_t, std::uint32_t>> v(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) v[i] = {keys[i], values[i]};
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return v;
}

std::vector<std::int32_t> tiles_sorted(std::span<const std::int32_t> keys) {
  std::vector<std::int32_t> v(keys.begin(), keys.end());
  for (std::size_t t = 0; t < v.size(); t += kTileKeys)
    std::sort(v.begin() + t, v.begin() + std::min(v.size(), t + kTileKeys));
  return v;
}

// ---- the verdicts ------------------------------------------------------------------------------------------------------

namespace {

constexpr std::int32_t kPoison = static_cast<std::int32_t>(0xA5A5A5A5u);  // the kit's output poison

bool all_poison(std::span<const std::int32_t> v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](std::int32_t x) { return x == kPoison; });
}

// Index of the first i with v[i] > v[i + 1], or v.size() when sorted.
std::size_t first_descent(std::span<const std::int32_t> v) {
  for (std::size_t i = 0; i + 1 < v.size(); ++i)
    if (v[i + 1] < v[i]) return i;
  return v.size();
}

bool same_multiset(std::span<const std::int32_t> sorted_expected, std::span<const std::int32_t> got) {
  std::vector<std::int32_t> g(got.begin(), got.end());
  std::sort(g.begin(), g.end());
  return std::equal(g.begin(), g.end(), sorted_expected.begin(), sorted_expected.end());
}

// A full tile in snake order: columns alternate (even ascending, odd descending) and every column's
// keys are <= the next column's (what standard ShearSort's alternating last phase leaves).
bool snake_ordered(std::span<const std::int32_t> tile) {
  for (int c = 0; c < kTileSide; ++c) {
    const auto col = tile.subspan(static_cast<std::size_t>(c) * kTileSide, kTileSide);
    const bool ok = c % 2 == 0 ? std::is_sorted(col.begin(), col.end())
                               : std::is_sorted(col.begin(), col.end(), std::greater<>());
    if (!ok) return false;
    if (c + 1 < kTileSide) {
      const auto next = tile.subspan(static_cast<std::size_t>(c + 1) * kTileSide, kTileSide);
      if (*std::max_element(col.begin(), col.end()) > *std::min_element(next.begin(), next.end())) return false;
    }
  }
  return true;
}

// A full tile that one ascending column phase would sort: the seeds' log2 w rounds without the
// final column phase leave such tiles.
bool one_column_phase_from_sorted(std::span<const std::int32_t> tile) {
  std::vector<std::int32_t> v(tile.begin(), tile.end());
  for (int c = 0; c < kTileSide; ++c) std::sort(v.begin() + c * kTileSide, v.begin() + (c + 1) * kTileSide);
  return std::is_sorted(v.begin(), v.end());
}

std::string range_text(std::size_t begin, std::size_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

}  // namespace

gpulab::CheckResult check_tiles(std::span<const std::int32_t> keys, std::span<const std::int32_t> expected,
                                std::span<const std::int32_t> got) {
  if (got.size() != expected.size())
    return gpulab::CheckResult::fail("the output has " + std::to_string(got.size()) + " keys, expected " +
                                     std::to_string(expected.size()));
  auto exact = gpulab::compare_exact<std::int32_t>(expected, got);
  if (exact.ok) return exact;
  const std::size_t n = expected.size(), count = tiles(n);
  std::size_t first = count, wrong = 0;
  for (std::size_t t = 0; t < count; ++t) {
    const std::size_t b = t * kTileKeys, e = std::min(n, b + kTileKeys);
    if (!std::equal(expected.begin() + b, expected.begin() + e, got.begin() + b)) {
      if (first == count) first = t;
      ++wrong;
    }
  }
  const std::size_t b = first * kTileKeys, e = std::min(n, b + kTileKeys);
  const auto tile = got.subspan(b, e - b);
  const auto want = expected.subspan(b, e - b);
  std::ostringstream m;
  m << wrong << " of " << count << " tiles wrong; the first, tile " << first << " (keys " << range_text(b, e) << "), ";
  if (all_poison(tile)) {
    m << "was never written (it still holds the poison 0xA5A5A5A5)";
  } else if (!same_multiset(want, tile)) {
    m << "does not hold the tile's input keys (a key lost, doubled, or taken from another tile";
    m << (e - b < static_cast<std::size_t>(kTileKeys) ? "; the last tile is partial: pad it, read and write nothing past n)"
                                                      : ")");
  } else if (e - b == static_cast<std::size_t>(kTileKeys) && snake_ordered(tile)) {
    m << "is in snake order (odd columns descending), one ascending column phase from sorted: after its log2 w "
         "rounds ShearSort needs a final column phase that sorts every column ascending (not alternating)";
  } else if (e - b == static_cast<std::size_t>(kTileKeys) && one_column_phase_from_sorted(tile)) {
    m << "is one ascending column phase from sorted: after its log2 w rounds ShearSort needs a final column phase "
         "that sorts every column ascending (the seeds' round count stops short)";
  } else {
    const std::size_t i = first_descent(tile);
    m << "holds the right keys but is not sorted: key " << (b + i) << " = " << tile[i] << " > key " << (b + i + 1)
      << " = " << tile[i + 1];
  }
  (void)keys;
  auto r = gpulab::CheckResult::fail(m.str(), exact.detail);
  r.first_mismatch = exact.first_mismatch;
  r.mismatch_count = exact.mismatch_count;
  return r;
}

gpulab::CheckResult check_sort(std::span<const std::int32_t> keys, std::span<const std::int32_t> expected,
                               std::span<const std::int32_t> got, bool pairs) {
  const std::size_t n = keys.size();
  const std::size_t words = pairs ? 2 * n : n;
  if (got.size() != words || expected.size() != words)
    return gpulab::CheckResult::fail("the output has " + std::to_string(got.size()) + " words, expected " +
                                     std::to_string(words) + (pairs ? " (n keys, then n values)" : " (n keys)"));
  const auto got_keys = got.first(n), want_keys = expected.first(n);
  auto exact = gpulab::compare_exact<std::int32_t>(want_keys, got_keys);
  std::ostringstream m;
  if (!exact.ok) {
    if (all_poison(got_keys)) {
      m << "the keys were never written (the output still holds the poison 0xA5A5A5A5)";
    } else if (!same_multiset(want_keys, got_keys)) {
      m << "the keys are not the input's keys (a key lost or doubled); first difference at index "
        << exact.first_mismatch << ": expected " << want_keys[exact.first_mismatch] << ", got "
        << got_keys[exact.first_mismatch];
    } else {
      const std::size_t i = first_descent(got_keys);
      m << "the keys are the input's but not sorted: key " << i << " = " << got_keys[i] << " > key " << (i + 1) << " = "
        << got_keys[i + 1];
    }
    auto r = gpulab::CheckResult::fail(m.str(), exact.detail);
    r.first_mismatch = exact.first_mismatch;
    r.mismatch_count = exact.mismatch_count;
    return r;
  }
  if (!pairs) return exact;
  const auto got_values = got.subspan(n), want_values = expected.subspan(n);
  auto values = gpulab::compare_exact<std::int32_t>(want_values, got_values);
  if (values.ok) return values;
  const std::size_t i = values.first_mismatch;
  const auto v = static_cast<std::uint32_t>(got_values[i]), w = static_cast<std::uint32_t>(want_values[i]);
  m << "the keys are sorted, but ";
  if (all_poison(got_values)) {
    m << "the values were never written (the output's second half still holds the poison 0xA5A5A5A5)";
  } else if (v >= n) {
    m << "value " << i << " is " << v << ", which is no input position (n = " << n << ")";
  } else if (keys[v] != got_keys[i]) {
    m << "the values do not follow their keys: position " << i << " holds key " << got_keys[i] << " with the value of input "
      << v << ", whose key is " << keys[v];
  } else {
    m << "equal keys left their input order: position " << i << " holds key " << got_keys[i] << " from input position "
      << v << ", expected the one from input position " << w
      << " -- the sort is not stable (on ties a merge must take the left run first)";
  }
  m << " (values: " << values.mismatch_count << " of " << n << " differ)";
  auto r = gpulab::CheckResult::fail(m.str(), "values (input positions):\n" + values.detail);
  r.first_mismatch = n + i;
  r.mismatch_count = values.mismatch_count;
  return r;
}

// ---- ShearSort on the CPU ----------------------------------------------------------------------------------------------------------

int shear_rounds(int w) { return log2_exact(w); }
int shear_column_phases(int w) { return shear_rounds(w) + 1; }
int shear_row_phases(int w) { return shear_rounds(w); }

template <class T>
void shear_sort_tile(std::span<T> tile, const ShearPlan& plan) {
  const int w = plan.w;
  if (static_cast<long>(tile.size()) != static_cast<long>(w) * w)
    throw std::invalid_argument("shear_sort_tile: the tile must hold w * w keys");
  std::vector<T> line(w);
  // Column c: keys w c .. w c + w - 1 (consecutive); row r: keys r, r + w, ... (one bank).
  auto column_phase = [&](bool alternate) {
    for (int c = 0; c < w; ++c) {
      auto first = tile.begin() + static_cast<long>(c) * w;
      if (alternate && (c & 1)) std::sort(first, first + w, std::greater<T>());
      else std::sort(first, first + w);
    }
  };
  auto row_phase = [&] {
    for (int r = 0; r < w; ++r) {
      for (int j = 0; j < w; ++j) line[j] = tile[r + static_cast<long>(w) * j];
      std::sort(line.begin(), line.end());
      for (int j = 0; j < w; ++j) tile[r + static_cast<long>(w) * j] = line[j];
    }
  };
  for (int round = 0; round < plan.rounds; ++round) {
    column_phase(plan.alternate);
    row_phase();
  }
  if (plan.final_column_phase) column_phase(false);
}
template void shear_sort_tile<std::int32_t>(std::span<std::int32_t>, const ShearPlan&);
template void shear_sort_tile<std::uint64_t>(std::span<std::uint64_t>, const ShearPlan&);

std::vector<std::int32_t> shear_tiles(std::span<const std::int32_t> keys, const ShearPlan& plan) {
  const std::size_t tile_keys = static_cast<std::size_t>(plan.w) * plan.w;
  std::vector<std::int32_t> out(keys.size());
  std::vector<std::int32_t> tile(tile_keys);
  for (std::size_t t = 0; t < keys.size(); t += tile_keys) {
    const std::size_t valid = std::min(tile_keys, keys.size() - t);
    for (std::size_t a = 0; a < tile_keys; ++a) tile[a] = a < valid ? keys[t + a] : INT_MAX;  // virtual padding
    shear_sort_tile<std::int32_t>(tile, plan);
    std::copy(tile.begin(), tile.begin() + static_cast<long>(valid), out.begin() + static_cast<long>(t));
  }
  return out;
}

std::vector<std::int32_t> zero_one_tile_needing_final_phase(int w, std::uint64_t seed, int tries) {
  SplitMix64 rng{seed};
  const std::size_t keys = static_cast<std::size_t>(w) * w;
  std::vector<std::int32_t> tile(keys), work(keys);
  ShearPlan without{w, shear_rounds(w), false, true};
  ShearPlan with{w, shear_rounds(w), true, true};
  for (int attempt = 0; attempt < tries; ++attempt) {
    // Density varies with the attempt: the failures sit near particular 0/1 balances.
    const std::uint64_t threshold = rng.next();
    for (auto& x : tile) x = rng.next() < threshold ? 1 : 0;
    work = tile;
    shear_sort_tile<std::int32_t>(work, without);
    if (std::is_sorted(work.begin(), work.end())) continue;
    work = tile;
    shear_sort_tile<std::int32_t>(work, with);
    if (!std::is_sorted(work.begin(), work.end())) throw std::logic_error("ShearSort with the final phase failed");
    return tile;
  }
  return {};
}

long unsorted_zero_one_tiles(const ShearPlan& plan) {
  const int keys = plan.w * plan.w;
  if (keys > 16) throw std::invalid_argument("unsorted_zero_one_tiles: w <= 4 (2^16 tiles)");
  long unsorted = 0;
  std::vector<std::int32_t> tile(keys);
  for (std::uint32_t bits = 0; bits < (1u << keys); ++bits) {
    for (int a = 0; a < keys; ++a) tile[a] = (bits >> a) & 1;
    shear_sort_tile<std::int32_t>(tile, plan);
    if (!std::is_sorted(tile.begin(), tile.end())) ++unsorted;
  }
  return unsorted;
}

long unsorted_random_zero_one_tiles(const ShearPlan& plan, int trials, std::uint64_t seed) {
  SplitMix64 rng{seed};
  const std::size_t keys = static_cast<std::size_t>(plan.w) * plan.w;
  std::vector<std::int32_t> tile(keys);
  long unsorted = 0;
  for (int t = 0; t < trials; ++t) {
    const std::uint64_t threshold = rng.next();  // a random density per tile
    for (auto& x : tile) x = rng.next() < threshold ? 1 : 0;
    shear_sort_tile<std::int32_t>(tile, plan);
    if (!std::is_sorted(tile.begin(), tile.end())) ++unsorted;
  }
  return unsorted;
}

// ---- networks ----------------------------------------------------------------------------------------------------------

int odd_even_merge_formula(int w) {
  const int p = log2_exact(w);
  if (p == 0) return 0;
  // (p^2 - p + 4) 2^(p-2) - 1, written to stay integral for p = 1: (p^2 - p + 4) 2^p / 4 - 1.
  return (p * p - p + 4) * (1 << p) / 4 - 1;
}
int odd_even_merge_depth(int w) {
  const int p = log2_exact(w);
  return p * (p + 1) / 2;
}
long bitonic_comparators(long n) {
  const int l = log2_exact(n);
  return n / 2 * l * (l + 1) / 2;
}
int bitonic_steps(long n) {
  const int l = log2_exact(n);
  return l * (l + 1) / 2;
}

std::vector<Comparator> odd_even_merge_network(int n) {
  std::vector<Comparator> net;
  for (int p = 1; p < n; p <<= 1)
    for (int k = p; k >= 1; k >>= 1)
      for (int j = k % p; j + k < n; j += 2 * k)
        for (int i = 0; i < k && i + j + k < n; ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) net.push_back({i + j, i + j + k});
  return net;
}

int network_depth(const std::vector<Comparator>& net, int w) {
  std::vector<int> level(w, 0);
  int depth = 0;
  for (const auto& c : net) {
    const int l = std::max(level[c.lo], level[c.hi]) + 1;
    level[c.lo] = level[c.hi] = l;
    depth = std::max(depth, l);
  }
  return depth;
}

// ---- per tile stage --------------------------------------------------------------------------------------------------------

TileCost tile_cost(TileVariant v) {
  const long c = static_cast<long>(kNetwork32.size());       // 191
  const long bitonic_per_lane = bitonic_comparators(kTileKeys) / kWarp;  // 55 x 16 = 880
  const long transpose_accesses = (kTileSide - 1) * 4;        // 31 steps x (2 loads + 2 stores)
  TileCost t;
  t.staging_accesses_per_thread = 2 * kTileSide;
  if (v == TileVariant::bitonic) {
    t.compare_exchanges_per_thread = bitonic_per_lane;
    t.network_accesses_per_thread = 4 * bitonic_per_lane;
    return t;
  }
  t.column_phases = kColumnPhases;
  t.row_phases = kRowPhases;
  const long phases = kColumnPhases + kRowPhases;
  t.compare_exchanges_per_thread = phases * c;
  switch (v) {
    case TileVariant::shear_naive: t.network_accesses_per_thread = 4 * phases * c; break;
    case TileVariant::shear_transpose:
      t.transposes = 2 * kColumnPhases;
      t.network_accesses_per_thread = 4 * phases * c + t.transposes * transpose_accesses;
      break;
    case TileVariant::shear_registers:
      t.transposes = 2 * kColumnPhases;
      t.network_accesses_per_thread = phases * 2 * kTileSide + t.transposes * transpose_accesses;
      break;
    case TileVariant::shear_padded: t.network_accesses_per_thread = phases * 2 * kTileSide; break;
    default: break;
  }
  return t;
}

namespace {

template <class IndexOfLane>
Request request(std::string step, IndexOfLane index, int key_bytes, int active = b) {
  return Request{std::move(step), gpulab::WarpAccess::words(index, active, key_bytes)};
}

int plain_at(int a) { return a; }
int padded_at(int a) { return a + (a >> kLog2TileSide); }

// One thread's network on its line (key e of lane l at word at(l, e)): 2 loads + 2 stores each.
template <class At>
void add_network(std::vector<Request>& out, const std::string& phase, At at, int key_bytes) {
  for (const auto& c : kNetwork32) {
    const std::string tag = phase + " cas(" + std::to_string(c.lo) + "," + std::to_string(c.hi) + ")";
    out.push_back(request("load " + tag, [&](int l) { return at(l, c.lo); }, key_bytes));
    out.push_back(request("load " + tag, [&](int l) { return at(l, c.hi); }, key_bytes));
    out.push_back(request("store " + tag, [&](int l) { return at(l, c.lo); }, key_bytes));
    out.push_back(request("store " + tag, [&](int l) { return at(l, c.hi); }, key_bytes));
  }
}
// A line to registers and back: 32 loads, 32 stores.
template <class At>
void add_line(std::vector<Request>& out, const std::string& phase, At at, int key_bytes) {
  for (int e = 0; e < kTileSide; ++e) out.push_back(request("load " + phase, [&](int l) { return at(l, e); }, key_bytes));
  for (int e = 0; e < kTileSide; ++e) out.push_back(request("store " + phase, [&](int l) { return at(l, e); }, key_bytes));
}
// Algorithm 2: diagonal i, lanes c < 32 - i: load (c, c+i), load (c+i, c), store (c+i, c), store (c, c+i).
void add_transpose(std::vector<Request>& out, int key_bytes) {
  for (int i = 1; i < kTileSide; ++i) {
    const int active = kTileSide - i;
    auto upper = [i](int c) { return c * kTileSide + c + i; };
    auto lower = [i](int c) { return (c + i) * kTileSide + c; };
    const std::string tag = "transpose i=" + std::to_string(i);
    out.push_back(request("load upper " + tag, upper, key_bytes, active));
    out.push_back(request("load lower " + tag, lower, key_bytes, active));
    out.push_back(request("store lower " + tag, lower, key_bytes, active));
    out.push_back(request("store upper " + tag, upper, key_bytes, active));
  }
}

}  // namespace

std::vector<Request> tile_requests(TileVariant v, int key_bytes) {
  if (key_bytes != 4 && key_bytes != 8) throw std::invalid_argument("tile_requests: key_bytes must be 4 or 8");
  const bool padded = v == TileVariant::shear_padded;
  auto at = [padded](int a) { return padded ? padded_at(a) : plain_at(a); };
  auto column = [&](int l, int i) { return at(l * kTileSide + i); };  // lane l walks column l
  auto row = [&](int l, int j) { return at(l + kTileSide * j); };     // lane l walks row l
  std::vector<Request> out;
  for (int k = 0; k < kTileSide; ++k)
    out.push_back(request("staging store k=" + std::to_string(k), [&](int l) { return at(k * kWarp + l); }, key_bytes));
  switch (v) {
    case TileVariant::bitonic:
      for (int ls = 1; ls <= 2 * kLog2TileSide; ++ls)
        for (int lj = ls - 1; lj >= 0; --lj)
          for (int c = 0; c < kTileKeys / 2 / kWarp; ++c) {
            const int j = 1 << lj;
            auto lo = [&](int l) {
              const int t = c * kWarp + l;
              return ((t >> lj) << (lj + 1)) | (t & (j - 1));
            };
            const std::string tag = " size=" + std::to_string(1 << ls) + " j=" + std::to_string(j);
            out.push_back(request("load lo" + tag, lo, key_bytes));
            out.push_back(request("load hi" + tag, [&](int l) { return lo(l) + j; }, key_bytes));
            out.push_back(request("store lo" + tag, lo, key_bytes));
            out.push_back(request("store hi" + tag, [&](int l) { return lo(l) + j; }, key_bytes));
          }
      break;
    case TileVariant::shear_naive:
      for (int round = 0; round <= kShearRounds; ++round) {
        add_network(out, "column", column, key_bytes);
        if (round < kShearRounds) add_network(out, "row", row, key_bytes);
      }
      break;
    case TileVariant::shear_transpose:
      for (int round = 0; round <= kShearRounds; ++round) {
        add_transpose(out, key_bytes);
        add_network(out, "transposed column", row, key_bytes);
        add_transpose(out, key_bytes);
        if (round < kShearRounds) add_network(out, "row", row, key_bytes);
      }
      break;
    case TileVariant::shear_registers:
      for (int round = 0; round <= kShearRounds; ++round) {
        add_transpose(out, key_bytes);
        add_line(out, "transposed column", row, key_bytes);
        add_transpose(out, key_bytes);
        if (round < kShearRounds) add_line(out, "row", row, key_bytes);
      }
      break;
    case TileVariant::shear_padded:
      for (int round = 0; round <= kShearRounds; ++round) {
        add_line(out, "column", column, key_bytes);
        if (round < kShearRounds) add_line(out, "row", row, key_bytes);
      }
      break;
  }
  for (int k = 0; k < kTileSide; ++k)
    out.push_back(request("staging load k=" + std::to_string(k), [&](int l) { return at(k * kWarp + l); }, key_bytes));
  return out;
}

RequestSummary tile_summary(TileVariant v, int key_bytes) { return gpulab::summarize(tile_requests(v, key_bytes)); }

long predicted_excess_wavefronts(TileVariant v, std::size_t n) {
  static const std::array<long, 5> per_tile = [] {
    std::array<long, 5> e{};
    for (int i = 0; i < 5; ++i) e[i] = tile_summary(static_cast<TileVariant>(i)).excess();
    return e;
  }();
  return static_cast<long>(tiles(n)) * per_tile[static_cast<int>(v)];
}

long brief_excess_per_tile(TileVariant v) {
  switch (v) {
    case TileVariant::bitonic: return 2560;
    case TileVariant::shear_naive: return 142104;
    default: return 0;
  }
}

std::vector<Request> merge_staging_requests(bool padded) {
  auto at = [padded](int e) { return padded ? e + (e >> kLog2TileSide) : e; };
  std::vector<Request> out;
  // One warp of the block (threads 0..31; the other warps repeat its pattern at other words).
  for (int k = 0; k < kMergeItems; ++k)
    out.push_back(request("staging store k=" + std::to_string(k), [&](int l) { return at(l * kMergeItems + k); }, 4));
  for (int k = 0; k < kMergeItems; ++k)
    out.push_back(request("coalesced load k=" + std::to_string(k), [&](int l) { return at(l + kMergeThreads * k); }, 4));
  return out;
}

// ---- merge stages -------------------------------------------------------------------------------------------------------------

std::size_t tiles(std::size_t n) { return gpulab::ceil_div(n, kTileKeys); }

int pairwise_passes(std::size_t n) { return gpulab::ceil_log2(tiles(n)); }

int dway_passes(std::size_t n, int d) {
  if (d < 2) throw std::invalid_argument("dway_passes: d >= 2");
  int passes = 0;
  for (std::size_t runs = tiles(n); runs > 1; runs = gpulab::ceil_div(runs, d)) ++passes;
  return passes;
}

int agpu_dway_passes(std::size_t n, int block, int d) {
  int passes = 0;
  for (std::size_t runs = gpulab::ceil_div(n, block); runs > 1; runs = gpulab::ceil_div(runs, d)) ++passes;
  return passes;
}

double sort_bytes(std::size_t n, int passes, int bytes_per_element) {
  return 2.0 * static_cast<double>(n) * bytes_per_element * (1 + passes);
}

long launches(Stage s, std::size_t n, int d) {
  if (s == Stage::cpu || s == Stage::cpu_shear || n == 0) return 0;
  if (tile_variant(s)) return 1;
  if (s == Stage::merge_pairwise) return 1 + 2L * pairwise_passes(n);
  if (s == Stage::merge_dway) return 1 + 2L * dway_passes(n, d);
  return 0;
}

double dway_merge_steps(std::size_t n, int d) {
  return static_cast<double>(n) / b * log2_exact(d) * 6.0 * dway_passes(n, d);
}

// ---- d-way heap shared memory ------------------------------------------------------------------------------------------------

std::size_t seed_heap_bytes_per_warp(int d, int block, bool two_b_buffers) {
  return static_cast<std::size_t>(4) * block * (d - 1) * (two_b_buffers ? 2 : 1);
}

int seed_resident_warps(int smem_per_sm, int d, bool two_b_buffers) {
  const std::size_t per = seed_heap_bytes_per_warp(d, b, two_b_buffers);
  return static_cast<int>(std::min<std::size_t>(64, static_cast<std::size_t>(smem_per_sm) / per));
}

DwayShared dway_shared(int d, int smem_per_sm, int key_bytes, int max_block_bytes) {
  log2_exact(d);
  DwayShared s;
  s.bytes_per_warp = dway_shared_bytes_per_warp(d, key_bytes);
  s.warps_per_block = dway_warps_per_block(d);
  s.bytes_per_block = s.bytes_per_warp * s.warps_per_block;
  if (s.bytes_per_block > static_cast<std::size_t>(max_block_bytes)) return s;  // does not fit: 0 warps
  s.resident_warps = dway_resident_warps_for(d, s.warps_per_block, key_bytes, smem_per_sm);
  s.multiplicity = static_cast<double>(smem_per_sm) / static_cast<double>(s.bytes_per_warp);
  return s;
}

// ---- paths --------------------------------------------------------------------------------------------------------------------

namespace {

void add_tile_paths(std::vector<std::string>& out, std::size_t n, const std::string& prefix) {
  const std::size_t t = tiles(n);
  out.push_back(prefix + (t > 1 ? "several tiles" : "one tile"));
  if (n % kTileKeys != 0) out.push_back(prefix + "a partial tile");
  if (t > static_cast<std::size_t>(kTileWarps)) out.push_back(prefix + "a multi-block grid");
  if (t % kTileWarps != 0) out.push_back(prefix + "a block with warps past n");
}

std::string passes_path(int passes) {
  if (passes == 0) return "no merge pass (one tile)";
  return passes % 2 ? "an odd number of passes" : "an even number of passes";
}

}  // namespace

std::vector<std::string> paths(Stage s, std::size_t n, const Shape& shape) {
  if (s == Stage::cpu || s == Stage::cpu_shear) return {};
  if (n == 0) return {"n = 0: nothing to do"};
  std::vector<std::string> out;
  if (tile_variant(s)) {
    add_tile_paths(out, n, "");
    return out;
  }
  out.push_back(shape.pairs ? "(key, value) pairs" : "keys only");
  out.push_back("tiles by " + std::string(to_string(shape.base)));
  add_tile_paths(out, n, "tile pass: ");
  if (s == Stage::merge_pairwise) {
    const int passes = pairwise_passes(n);
    out.push_back(passes_path(passes));
    bool lone = false, several = false;
    for (std::size_t run = kTileKeys; run < n; run *= 2) {
      lone |= gpulab::ceil_div(n, run) % 2 == 1;
      several |= std::min(2 * run, n) > static_cast<std::size_t>(kMergeTile);
    }
    if (lone) out.push_back("a run without a partner");
    if (several) out.push_back("a pair merged by several blocks");
    if (passes > 0 && n % kMergeTile != 0) out.push_back("a partial merge block");
    return out;
  }
  // merge-dway (solutions' merge_dway.cu: the partition kernel's runs per lane, the heap's block).
  const int d = shape.d;
  const int passes = dway_passes(n, d);
  out.push_back(passes_path(passes));
  if (passes == 0) return out;
  const int per_lane = d <= 32 ? 1 : d <= 64 ? 2 : d <= 128 ? 4 : 8;
  out.push_back("partition: " + std::to_string(per_lane) + (per_lane == 1 ? " run per lane" : " runs per lane"));
  const int warps = dway_warps_per_block(d);
  out.push_back("heap blocks of " + std::to_string(warps) + (warps == 1 ? " warp" : " warps"));
  if (static_cast<std::size_t>(warps) * dway_shared_bytes_per_warp(d, shape.pairs ? 8 : 4) > 48 * 1024)
    out.push_back("heap shared memory above 48 KiB (opt-in)");
  bool partial_group = false, cut = false;
  for (std::size_t run = kTileKeys; run < n; run *= static_cast<std::size_t>(d)) {
    const std::size_t group = static_cast<std::size_t>(d) * run;
    partial_group |= gpulab::ceil_div(n, run) % static_cast<std::size_t>(d) != 0;
    cut |= dway_chunk_keys(n, run, d, shape.multiprocessors, shape.chunk) < std::min(group, n);
  }
  if (partial_group) out.push_back("a group with fewer than d runs");
  if (cut) out.push_back("a group cut into several tasks");
  if (n % kWarp != 0) out.push_back("a run ending in a partial 32-key block");
  return out;
}

}  // namespace shearsort::model
