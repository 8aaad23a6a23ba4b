// The radix-sort lab's problem (radix_sort_model.hpp): its stages, inputs, the oracle every stage
// is checked against and the verdict on a stage's output. The model of a run is radix_sort_model.cpp.
#include "radix_sort_model.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "gpulab/names.hpp"
#include "gpulab/splitmix64.hpp"

namespace radix_sort::model {

namespace {

constexpr gpulab::NameTable<Stage, 9> kStageIds{{
    {Stage::cpu, "cpu"},
    {Stage::cpu_lsd, "cpu-lsd"},
    {Stage::find_max, "find-max"},
    {Stage::split_global, "split-global"},
    {Stage::split_scan_fused, "split-scan-fused"},
    {Stage::split_onepass, "split-onepass"},
    {Stage::digit4, "digit4"},
    {Stage::digit4_count, "digit4-count"},
    {Stage::onesweep, "onesweep"},
}};

constexpr gpulab::NameTable<KeyDistribution, 15> kDistributionIds{{
    {KeyDistribution::uniform, "uniform"},
    {KeyDistribution::small_range, "small-range"},
    {KeyDistribution::all_equal, "all-equal"},
    {KeyDistribution::sorted, "sorted"},
    {KeyDistribution::reverse, "reverse"},
    {KeyDistribution::few_unique, "few-unique"},
    {KeyDistribution::entropy_reduced, "entropy-reduced"},
    {KeyDistribution::pow2_max, "pow2-max"},
    {KeyDistribution::all_zero, "all-zero"},
    {KeyDistribution::all_one, "all-one"},
    {KeyDistribution::high_bits, "high-bits"},
    {KeyDistribution::low_bits, "low-bits"},
    {KeyDistribution::mixed_sign, "mixed-sign"},
    {KeyDistribution::int_extremes, "int-extremes"},
    {KeyDistribution::float_specials, "float-specials"},
}};

using gpulab::SplitMix64;

std::uint32_t float_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// The bit pattern of the integer value v in `type` (u32: two's complement; f32: the float v).
std::uint32_t value_pattern(std::int64_t v, KeyType type) {
  if (type == KeyType::f32) return float_bits(static_cast<float>(v));
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
}

std::string hex(std::uint32_t x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", x);
  return buf;
}

}  // namespace

std::uint32_t key_mask(int end_bit) { return end_bit >= 32 ? 0xffffffffu : ((1u << end_bit) - 1u); }

std::vector<std::uint32_t> ordered_keys(std::span<const std::uint32_t> keys, KeyType type) {
  std::vector<std::uint32_t> o(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) o[i] = to_ordered(keys[i], type);
  return o;
}

// ---- stages -----------------------------------------------------------------------------------------

std::vector<Stage> all_stages() { return gpulab::values_of(kStageIds); }
std::string_view to_string(Stage s) { return gpulab::name_of(kStageIds, s); }
std::optional<Stage> parse_stage(std::string_view id) { return gpulab::parse_name(kStageIds, id); }
bool on_gpu(Stage s) { return s != Stage::cpu && s != Stage::cpu_lsd; }
bool sorts(Stage s) { return s != Stage::find_max && s != Stage::digit4_count; }

// ---- inputs -----------------------------------------------------------------------------------------

std::vector<KeyDistribution> all_key_distributions() { return gpulab::values_of(kDistributionIds); }
std::string_view to_string(KeyDistribution d) { return gpulab::name_of(kDistributionIds, d); }
std::optional<KeyDistribution> parse_key_distribution(std::string_view name) { return gpulab::parse_name(kDistributionIds, name); }
std::string_view to_string(KeyType t) {
  switch (t) {
    case KeyType::u32: return "u32";
    case KeyType::i32: return "i32";
    case KeyType::f32: return "f32";
  }
  return "?";
}
std::optional<KeyType> parse_key_type(std::string_view name) {
  for (KeyType t : {KeyType::u32, KeyType::i32, KeyType::f32})
    if (to_string(t) == name) return t;
  return std::nullopt;
}

std::vector<std::uint32_t> make_keys(KeyDistribution d, std::size_t n, std::uint64_t seed, KeyType type) {
  SplitMix64 rng{seed * 0x2545F4914F6CDD1Dull + static_cast<std::uint64_t>(d) * 131 + static_cast<std::uint64_t>(type) + 1};
  std::vector<std::uint32_t> v(n);
  switch (d) {
    case KeyDistribution::uniform:
    case KeyDistribution::sorted:
    case KeyDistribution::reverse:
      for (auto& x : v) x = rng.word();
      break;
    case KeyDistribution::small_range:
      for (auto& x : v) x = value_pattern(rng.below(50), type);
      break;
    case KeyDistribution::all_equal:
      std::fill(v.begin(), v.end(), rng.word());
      break;
    case KeyDistribution::few_unique: {
      const std::array<std::uint32_t, 4> values{rng.word(), rng.word(), rng.word(), rng.word()};
      for (auto& x : v) x = values[rng.below(4)];
      break;
    }
    case KeyDistribution::entropy_reduced:
      for (auto& x : v) x = rng.word() & rng.word() & rng.word();
      break;
    case KeyDistribution::pow2_max:
      for (auto& x : v) x = value_pattern(rng.below(65), type);
      if (n > 0) v[rng.below(static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX)))] = value_pattern(64, type);
      break;
    case KeyDistribution::all_zero:
      std::fill(v.begin(), v.end(), value_pattern(0, type));
      break;
    case KeyDistribution::all_one:
      std::fill(v.begin(), v.end(), value_pattern(1, type));
      break;
    case KeyDistribution::high_bits:
      for (auto& x : v) x = rng.below(256) << 24;
      break;
    case KeyDistribution::low_bits:
      for (auto& x : v) x = rng.below(256);
      break;
    case KeyDistribution::mixed_sign:
      for (auto& x : v) x = value_pattern(static_cast<std::int64_t>(rng.below(2001)) - 1000, type);
      break;
    case KeyDistribution::int_extremes: {
      const std::array<std::uint32_t, 5> special{0x80000000u, 0x7fffffffu, 0xffffffffu, 0u, 1u};
      for (auto& x : v) x = rng.below(3) ? special[rng.below(5)] : rng.word();
      break;
    }
    case KeyDistribution::float_specials: {
      const std::array<std::uint32_t, 16> special{
          0x00000000u,               // +0
          0x80000000u,               // -0
          0x7f800000u,               // +inf
          0xff800000u,               // -inf
          0x7fc00000u, 0x7f800001u,  // +NaN (quiet, signalling payload 1)
          0xffc00000u, 0xffffffffu,  // -NaN (quiet, all-ones payload)
          0x00000001u, 0x007fffffu,  // +denormals (smallest, largest)
          0x80000001u, 0x807fffffu,  // -denormals
          float_bits(FLT_MAX), float_bits(-FLT_MAX), float_bits(FLT_MIN), float_bits(-FLT_MIN)};
      for (auto& x : v) {
        if (rng.below(2)) x = special[rng.below(16)];
        else x = float_bits((static_cast<float>(rng.word() >> 8) / 16777216.0f - 0.5f) * 2000.0f);
      }
      break;
    }
  }
  if (d == KeyDistribution::sorted || d == KeyDistribution::reverse) {
    std::vector<std::uint32_t> o = ordered_keys(v, type);
    std::sort(o.begin(), o.end());
    if (d == KeyDistribution::reverse) std::reverse(o.begin(), o.end());
    for (std::size_t i = 0; i < n; ++i) v[i] = from_ordered(o[i], type);
  }
  return v;
}

std::vector<std::uint32_t> index_values(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

// ---- the oracle -------------------------------------------------------------------------------------

void reference_sort(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values, KeyType type,
                    int end_bit, std::vector<std::uint32_t>& keys_out, std::vector<std::uint32_t>& values_out) {
  const std::size_t n = keys.size();
  if (!values.empty() && values.size() != n) throw std::invalid_argument("reference_sort: values must match keys");
  if (n > UINT32_MAX) throw std::invalid_argument("reference_sort: n must fit 32 bits");
  if (end_bit < 0 || end_bit > 32) throw std::invalid_argument("reference_sort: end_bit must be 0..32");
  const std::uint32_t m = key_mask(end_bit);
  // (sort key << 32) | index, sorted by the sort key with stable 8-bit counting passes (LSD):
  // equal keys keep their index order, i.e. input order, as std::stable_sort would leave them.
  std::vector<std::uint64_t> order(n), other(n);
  for (std::size_t i = 0; i < n; ++i)
    order[i] = (static_cast<std::uint64_t>(to_ordered(keys[i], type) & m) << 32) | static_cast<std::uint32_t>(i);
  for (int shift = 0; shift < end_bit; shift += 8) {
    std::array<std::size_t, 257> start{};
    for (std::uint64_t x : order) ++start[((x >> (32 + shift)) & 0xffu) + 1];
    for (int d = 0; d < 256; ++d) start[d + 1] += start[d];
    for (std::uint64_t x : order) other[start[(x >> (32 + shift)) & 0xffu]++] = x;
    order.swap(other);
  }
  keys_out.resize(n);
  values_out.resize(values.empty() ? 0 : n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from = static_cast<std::uint32_t>(order[i]);
    keys_out[i] = keys[from];
    if (!values.empty()) values_out[i] = values[from];
  }
}

BitSpan reference_span(std::span<const std::uint32_t> keys, KeyType type) {
  std::uint32_t o = 0, a = 0xffffffffu;
  for (std::uint32_t k : keys) {
    o |= to_ordered(k, type);
    a &= to_ordered(k, type);
  }
  return BitSpan{o, a, keys.empty() ? 0u : static_cast<std::uint32_t>(span_bits(o, a)), 0u};
}

int key_bits(std::span<const std::uint32_t> keys, KeyType type) {
  return static_cast<int>(reference_span(keys, type).bits);
}

int seed003_bits(std::int32_t max) {
  if (max <= 1) return 0;  // log2(1) = 0; log2(0) = -inf and log2(negative) = NaN give no bits either
  return static_cast<int>(std::ceil(std::log2(static_cast<double>(max))));
}

std::optional<std::size_t> first_unsorted(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values,
                                          KeyType type, int end_bit) {
  const std::uint32_t m = key_mask(end_bit);
  for (std::size_t i = 1; i < keys.size(); ++i) {
    const std::uint32_t a = to_ordered(keys[i - 1], type) & m, b = to_ordered(keys[i], type) & m;
    if (a > b) return i;
    if (!values.empty() && a == b && values[i - 1] >= values[i]) return i;  // stability (values = indices)
  }
  return std::nullopt;
}

// ---- a stage's output and its verdict ---------------------------------------------------------------

std::size_t values_offset(std::size_t n) { return gpulab::round_up(n, 64) + 64; }

std::size_t output_words(std::size_t n, bool pairs) { return pairs ? values_offset(n) + n : n; }

std::vector<std::uint32_t> expected_output(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values,
                                           KeyType type, int end_bit, std::uint32_t gap) {
  std::vector<std::uint32_t> k, v;
  reference_sort(keys, values, type, end_bit, k, v);
  if (values.empty()) return k;
  const std::size_t n = keys.size(), off = values_offset(n);
  k.resize(off + n, gap);
  std::copy(v.begin(), v.end(), k.begin() + static_cast<std::ptrdiff_t>(off));
  return k;
}

namespace {

// "words 3..7 of the keys: got {...}, expected {...}"
std::string window(std::string_view what, std::span<const std::uint32_t> got, std::span<const std::uint32_t> expected,
                   std::size_t at, std::size_t begin, std::size_t end) {
  const std::size_t lo = std::max(begin, at >= begin + 2 ? at - 2 : begin), hi = std::min(end, at + 3);
  std::ostringstream o;
  o << what << " " << lo - begin << ".." << hi - 1 - begin << ": got {";
  for (std::size_t i = lo; i < hi; ++i) o << (i > lo ? ", " : "") << hex(got[i]);
  o << "}, expected {";
  for (std::size_t i = lo; i < hi; ++i) o << (i > lo ? ", " : "") << hex(expected[i]);
  o << "}";
  return o.str();
}

}  // namespace

gpulab::CheckResult judge_sort(std::span<const std::uint32_t> keys, std::span<const std::uint32_t> values, KeyType type,
                               int end_bit, std::span<const std::uint32_t> expected, std::span<const std::uint32_t> got) {
  if (got.size() != expected.size())
    return gpulab::CheckResult::fail("the output has " + std::to_string(got.size()) + " words, expected " +
                                     std::to_string(expected.size()));
  const std::size_t n = keys.size();
  std::size_t first = 0;
  while (first < got.size() && got[first] == expected[first]) ++first;
  if (first == got.size()) return gpulab::CheckResult::pass();
  const std::uint32_t m = key_mask(end_bit);
  auto ord = [&](std::uint32_t k) { return to_ordered(k, type) & m; };
  auto fail = [&](std::string message, std::string detail) {
    gpulab::CheckResult r = gpulab::CheckResult::fail(std::move(message), std::move(detail));
    r.first_mismatch = first;
    r.mismatch_count = 0;
    for (std::size_t i = first; i < got.size(); ++i) r.mismatch_count += got[i] != expected[i];
    return r;
  };
  const std::string bits = " (the key order of " + std::string(to_string(type)) + ", bits [0, " + std::to_string(end_bit) + "))";
  if (first < n) {  // the keys
    for (std::size_t i = 1; i < n; ++i)
      if (ord(got[i - 1]) > ord(got[i]))
        return fail("not sorted at i = " + std::to_string(i) + ": key " + hex(got[i - 1]) + " before " + hex(got[i]) + bits,
                    window("keys", got, expected, i, 0, n));
    const std::size_t i = first;
    if (ord(got[i]) == ord(expected[i]))
      return fail("unstable: equal keys out of input order at i = " + std::to_string(i) + ": key " + hex(got[i]) +
                      " where the stable order has " + hex(expected[i]) + ", equal to it in bits [0, " +
                      std::to_string(end_bit) + ")",
                  window("keys", got, expected, i, 0, n));
    return fail("keys lost or duplicated at i = " + std::to_string(i) + ": key " + hex(got[i]) + ", the input's sorted key there is " +
                    hex(expected[i]) + bits,
                window("keys", got, expected, i, 0, n));
  }
  const std::size_t off = values_offset(n);
  if (values.empty() || first < off)
    return fail("wrote past the n keys, at word " + std::to_string(first) + ": " + hex(got[first]) +
                    " (the words after the keys are never written)",
                window("words", got, expected, first, 0, got.size()));
  const std::size_t i = first - off;
  const std::uint32_t v = got[first];
  if (v >= n || keys[v] != got[i])
    return fail("values do not travel with their keys at i = " + std::to_string(i) + ": value " + hex(v) + " beside key " +
                    hex(got[i]) + (v < n ? ", but input key " + std::to_string(v) + " is " + hex(keys[v]) : std::string(", not an index")),
                window("values", got, expected, first, off, got.size()));
  return fail("unstable: equal keys out of input order at i = " + std::to_string(i) + ": key " + hex(got[i]) +
                  " carries value (original index) " + std::to_string(v) + ", the stable order has " +
                  std::to_string(expected[first]),
              window("values", got, expected, first, off, got.size()));
}

gpulab::CheckResult judge_span(const BitSpan& expected, std::span<const std::uint32_t> got) {
  const std::array<std::uint32_t, 4> want{expected.or_all, expected.and_all, expected.bits, expected.reserved};
  if (got.size() != want.size())
    return gpulab::CheckResult::fail("the output has " + std::to_string(got.size()) + " words, expected 4 (a BitSpan)");
  if (std::equal(want.begin(), want.end(), got.begin())) return gpulab::CheckResult::pass();
  std::ostringstream o;
  o << "BitSpan {or " << hex(got[0]) << ", and " << hex(got[1]) << ", bits " << got[2] << ", reserved " << got[3]
    << "}, expected {or " << hex(want[0]) << ", and " << hex(want[1]) << ", bits " << want[2] << ", reserved 0}";
  const std::size_t at = static_cast<std::size_t>(std::mismatch(want.begin(), want.end(), got.begin()).first - want.begin());
  const char* field[] = {"or_all", "and_all", "bits", "reserved"};
  gpulab::CheckResult r = gpulab::CheckResult::fail(std::string(field[at]) + " is wrong: " + o.str());
  r.first_mismatch = at;
  return r;
}

// ---- digit4-count: the counts of digit4's round 1 ------------------------------------------------------

std::vector<std::uint32_t> digit4_tile_counts(std::span<const std::uint32_t> keys, KeyType type, int end_bit,
                                              std::size_t tile_size, std::size_t tiles) {
  const int passes = pass_count(end_bit, kDigit4RadixBits);
  if (keys.empty() || passes == 0) return {};
  if (tile_size == 0 || gpulab::ceil_div(keys.size(), tile_size) != tiles)
    throw std::invalid_argument("digit4_tile_counts: tiles must be ceil(n / tile_size)");
  std::vector<std::uint32_t> counts(static_cast<std::size_t>(passes) * kDigit4Digits * tiles, 0u);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint32_t o = to_ordered(keys[i], type);
    const std::size_t g = i / tile_size;
    for (int q = 0; q < passes; ++q) {
      const std::uint32_t d = digit_of(o, q * kDigit4RadixBits, pass_bits(end_bit, kDigit4RadixBits, q));
      ++counts[(static_cast<std::size_t>(q) * kDigit4Digits + d) * tiles + g];
    }
  }
  return counts;
}

gpulab::CheckResult judge_tile_counts(std::span<const std::uint32_t> expected, std::span<const std::uint32_t> got,
                                      std::size_t tiles) {
  if (got.size() != expected.size())
    return gpulab::CheckResult::fail("the output has " + std::to_string(got.size()) + " count words, expected " +
                                     std::to_string(expected.size()));
  const auto bad = std::mismatch(expected.begin(), expected.end(), got.begin());
  if (bad.first == expected.end()) return gpulab::CheckResult::pass();
  const std::size_t at = static_cast<std::size_t>(bad.first - expected.begin());
  const std::size_t per_pass = static_cast<std::size_t>(kDigit4Digits) * tiles;
  const std::size_t q = at / per_pass, d = at % per_pass / tiles, g = at % tiles;
  gpulab::CheckResult r = gpulab::CheckResult::fail("tile " + std::to_string(g) + ", digit " + std::to_string(d) +
                                                    ", pass " + std::to_string(q) + ": got " + std::to_string(*bad.second) +
                                                    ", want " + std::to_string(*bad.first));
  r.first_mismatch = at;
  return r;
}

}  // namespace radix_sort::model
