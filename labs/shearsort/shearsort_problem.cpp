// The ShearSort lab's problem (shearsort_model.hpp): its stages, inputs, the oracles every stage is
// checked against and the verdicts on a stage's output. The model is shearsort_model.cpp. Part of
// the harness: do not edit.
#include "shearsort_model.hpp"

#include <climits>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "gpulab/names.hpp"
#include "gpulab/poison.hpp"
#include "gpulab/splitmix64.hpp"

namespace shearsort::model {

namespace {

using gpulab::SplitMix64;

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
  // Appended, not "[" + std::to_string(...): GCC 12 at -O3 warns a false -Wrestrict on that form
  // (its bug 105329) once check_tiles inlines this, and the CI build treats warnings as errors.
  std::string text = "[";
  text += std::to_string(begin);
  text += ", ";
  text += std::to_string(end);
  text += ")";
  return text;
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
  if (gpulab::all_poisoned(tile)) {
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
    if (gpulab::all_poisoned(got_keys)) {
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
  if (gpulab::all_poisoned(got_values)) {
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

}  // namespace shearsort::model
