// The bitonic lab's CPU side (bitonic_model.hpp). Part of the harness: do not edit.
#include "bitonic_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "gpulab/math.hpp"
#include "gpulab/names.hpp"
#include "gpulab/poison.hpp"

namespace bitonic::model {

namespace {

constexpr int b = kWarp;
constexpr int kFusedKeysLog2 = 5;  // log2 kFusedKeys: a group of more strides transposes
static_assert((1 << kFusedKeysLog2) == kFusedKeys && kFusedKeys * kFusedThreads == (1 << kFusedTileLog2));

constexpr gpulab::NameTable<Stage, 9> kStageIds{{
    {Stage::cpu, "cpu"},
    {Stage::cpu_network, "cpu-network"},
    {Stage::phase0, "phase0"},
    {Stage::phase1, "phase1"},
    {Stage::phase2, "phase2"},
    {Stage::phase3, "phase3"},
    {Stage::phase4, "phase4"},
    {Stage::phase4_conflict_free, "phase4-conflict-free"},
    {Stage::phase5_fused, "phase5-fused"},
}};

constexpr gpulab::NameTable<Input, 9> kInputIds{{
    {Input::uniform, "uniform"},
    {Input::small_range, "small-range"},
    {Input::all_equal, "all-equal"},
    {Input::sorted, "sorted"},
    {Input::reverse, "reverse"},
    {Input::few_unique, "few-unique"},
    {Input::organ_pipe, "organ-pipe"},
    {Input::int_max, "int-max"},
    {Input::negative, "negative"},
}};

void check_shape(const Shape& shape) {
  // The GPU stages take 64..1024; the model also takes smaller tiles (2 threads and up) so that the
  // tests can run every n with L >= t + 2 on the host.
  if (shape.block < 2 || shape.block > 1024 || !gpulab::is_pow2(static_cast<std::size_t>(shape.block)))
    throw std::invalid_argument("model: block must be a power of two in [2, 1024], got " + std::to_string(shape.block));
  if (shape.fused_tile_log2 < 1 || shape.fused_strides < 1)
    throw std::invalid_argument("model: phase 5's tile log2 and strides per launch must be >= 1");
}

int log2_exact(int x) {
  int k = 0;
  while ((1 << k) < x) ++k;
  return k;
}

// The kernel that runs a stage's global strides.
Kernel global_kernel(Stage s) {
  if (s == Stage::phase1) return Kernel::staged_step;
  if (s == Stage::phase5_fused) return Kernel::fused_steps;
  return Kernel::global_step;
}

// Keys as unsigned codes in the key order, with room for a +infinity above every key.
std::uint64_t code_of(std::int32_t k) { return static_cast<std::uint32_t>(k) ^ 0x80000000u; }
std::int32_t key_of(std::uint64_t code) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(code) ^ 0x80000000u); }
constexpr std::uint64_t kInfinity = std::uint64_t{1} << 32;

std::size_t lower_of_pair(std::size_t p, int e) { return ((p >> e) << (e + 1)) | (p & ((std::size_t{1} << e) - 1)); }
// Groups of 2^width indices that differ in bits [lo, lo + width) only, whose smallest index is below n.
std::size_t groups_below(std::size_t n, int lo, int width) {
  const std::size_t low = std::size_t{1} << lo;
  const std::size_t rest = n & ((std::size_t{1} << (lo + width)) - 1);
  return ((n >> (lo + width)) << lo) + std::min(rest, low);
}

std::vector<std::int32_t> bits(gpulab::Distribution d, std::size_t n, std::uint64_t seed) {
  const auto u = gpulab::generate_uint32(d, n, seed);
  std::vector<std::int32_t> v(n);
  std::memcpy(v.data(), u.data(), n * sizeof(std::int32_t));
  return v;
}

}  // namespace

// ---- stages ---------------------------------------------------------------------------------------------------------

std::vector<Stage> all_stages() { return gpulab::values_of(kStageIds); }
std::string_view to_string(Stage s) { return gpulab::name_of(kStageIds, s); }
std::optional<Stage> parse_stage(std::string_view id) { return gpulab::parse_name(kStageIds, id); }
bool runs_on_gpu(Stage s) { return s != Stage::cpu && s != Stage::cpu_network; }
bool has_tiles(Stage s) {
  return s == Stage::phase2 || s == Stage::phase3 || s == Stage::phase4 || s == Stage::phase4_conflict_free ||
         s == Stage::phase5_fused;
}

std::string_view to_string(Pad p) { return p == Pad::sentinel ? "sentinel" : "virtual"; }

int tile_log2(Stage s, const Shape& shape) {
  check_shape(shape);
  if (s == Stage::phase5_fused) return shape.fused_tile_log2;
  return has_tiles(s) ? log2_exact(2 * shape.block) : 0;
}

int network_log2(std::size_t n) { return gpulab::ceil_log2(n); }

std::string_view to_string(Kernel k) {
  switch (k) {
    case Kernel::copy: return "copy";
    case Kernel::global_step: return "global-step";
    case Kernel::staged_step: return "staged-step";
    case Kernel::fused_steps: return "fused-steps";
    case Kernel::tile_sort: return "tile-sort";
    case Kernel::tile_merge: return "tile-merge";
  }
  return "?";
}

// ---- inputs and the verdict -----------------------------------------------------------------------------------------

std::vector<Input> all_inputs() { return gpulab::values_of(kInputIds); }
std::string_view to_string(Input d) { return gpulab::name_of(kInputIds, d); }
std::optional<Input> parse_input(std::string_view name) { return gpulab::parse_name(kInputIds, name); }

Input input_for(gpulab::Distribution d, long long input_knob) {
  switch (input_knob) {
    case 1: return Input::organ_pipe;
    case 2: return Input::int_max;
    case 3: return Input::negative;
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

std::vector<std::int32_t> sorted_copy(std::span<const std::int32_t> in) {
  std::vector<std::int32_t> out(in.begin(), in.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::int32_t> make_keys(Input d, std::size_t n, std::uint64_t seed) {
  using gpulab::Distribution;
  std::vector<std::int32_t> v;
  switch (d) {
    case Input::uniform: return bits(Distribution::full_range, n, seed);
    case Input::small_range: {
      const auto u = gpulab::generate_uint32(Distribution::small_range, n, seed);
      v.resize(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int32_t>(u[i] % 50);
      return v;
    }
    case Input::all_equal: return bits(Distribution::all_equal, n, seed);
    case Input::few_unique: return bits(Distribution::few_unique, n, seed);
    case Input::sorted:
      v = bits(Distribution::full_range, n, seed);
      std::sort(v.begin(), v.end());
      return v;
    case Input::reverse:
      v = bits(Distribution::full_range, n, seed);
      std::sort(v.begin(), v.end(), [](std::int32_t a, std::int32_t c) { return c < a; });
      return v;
    case Input::organ_pipe: {
      v = bits(Distribution::full_range, n, seed);
      const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
      std::sort(v.begin(), mid);
      std::sort(mid, v.end(), [](std::int32_t a, std::int32_t c) { return c < a; });
      return v;
    }
    case Input::int_max:
      v = bits(Distribution::full_range, n, seed);
      for (std::size_t i = 0; i < n; i += 3) v[i] = kSentinel;
      return v;
    case Input::negative:
      v = bits(Distribution::full_range, n, seed);
      for (auto& k : v) k = static_cast<std::int32_t>(static_cast<std::uint32_t>(k) | 0x80000000u);
      return v;
  }
  return v;
}

gpulab::CheckResult check_sorted(std::span<const std::int32_t> keys, std::span<const std::int32_t> expected,
                                 std::span<const std::int32_t> got) {
  const std::size_t n = keys.size();
  if (got.size() != n || expected.size() != n)
    return gpulab::CheckResult::fail("the output has " + std::to_string(got.size()) + " keys, expected " + std::to_string(n));
  auto exact = gpulab::compare_exact<std::int32_t>(expected, got);
  if (exact.ok) return exact;
  std::ostringstream m;
  if (gpulab::all_poisoned(got)) {
    m << "the keys were never written (the output still holds the poison 0xA5A5A5A5)";
  } else {
    std::vector<std::int32_t> sorted_got(got.begin(), got.end());
    std::sort(sorted_got.begin(), sorted_got.end());
    const std::size_t i = exact.first_mismatch;
    if (sorted_got != std::vector<std::int32_t>(expected.begin(), expected.end())) {
      const auto count_max = [](auto first, auto last) { return std::count(first, last, kSentinel); };
      const auto extra_max = count_max(got.begin(), got.end()) - count_max(expected.begin(), expected.end());
      m << "the keys are not the input's keys (a key lost or doubled); first difference at index " << i << ": expected "
        << expected[i] << ", got " << got[i];
      if (extra_max > 0)
        m << " -- " << extra_max << " more INT_MAX keys than the input has: padding came back into the output "
          << "(a position >= n moved below n)";
    } else {
      // Unsigned order: the non-negative keys first, then the negative ones, each ascending.
      const auto nonneg = std::count_if(got.begin(), got.end(), [](std::int32_t x) { return x >= 0; });
      const bool unsigned_order =
          nonneg > 0 && nonneg < static_cast<std::ptrdiff_t>(n) &&
          std::is_sorted(got.begin(), got.end(), [](std::int32_t a, std::int32_t c) {
            return static_cast<std::uint32_t>(a) < static_cast<std::uint32_t>(c);
          });
      if (unsigned_order) {
        m << "the keys are sorted as unsigned integers: the negative keys come after the positive ones "
          << "(compare int32 keys as signed)";
      } else {
        std::size_t d = 0;
        while (d + 1 < n && got[d] <= got[d + 1]) ++d;
        m << "the keys are the input's but not sorted: key " << d << " = " << got[d] << " > key " << (d + 1) << " = "
          << got[d + 1] << " (first mismatch with the sorted keys at index " << i << ")";
      }
    }
  }
  auto r = gpulab::CheckResult::fail(m.str(), exact.detail);
  r.first_mismatch = exact.first_mismatch;
  r.mismatch_count = exact.mismatch_count;
  return r;
}

// ---- launches --------------------------------------------------------------------------------------------------------

std::vector<Launch> launch_sequence(Stage s, std::size_t n, const Shape& shape) {
  check_shape(shape);
  std::vector<Launch> out;
  if (!runs_on_gpu(s) || n == 0) return out;
  const int L = network_log2(n);
  const Kernel global = global_kernel(s);
  if (!has_tiles(s)) {
    if (L == 0) return {Launch{Kernel::copy}};
    for (int level = 1; level <= L; ++level)
      for (int e = level - 1; e >= 0; --e) out.push_back(Launch{global, level, e, e});
    return out;
  }
  const int t = tile_log2(s, shape);
  out.push_back(Launch{Kernel::tile_sort, std::min(L, t), 0, 0});
  const int q = s == Stage::phase5_fused ? shape.fused_strides : 1;
  for (int level = t + 1; level <= L; ++level) {
    const bool merged = s != Stage::phase2 && (s != Stage::phase3 || level == L);
    const int lowest = merged ? t : 0;
    for (int hi = level - 1; hi >= lowest; hi -= q) out.push_back(Launch{global, level, hi, std::max(lowest, hi - q + 1)});
    if (merged) out.push_back(Launch{Kernel::tile_merge, level, t - 1, 0});
  }
  return out;
}

long launches(Stage s, std::size_t n, const Shape& shape) { return static_cast<long>(launch_sequence(s, n, shape).size()); }

long formula_launches(Stage s, int L, int t, int q) {
  if (!runs_on_gpu(s)) return 0;
  if (L <= 0) return 1;
  const long all = static_cast<long>(L) * (L + 1) / 2;
  if (s == Stage::phase0 || s == Stage::phase1) return all;
  if (L <= t) return 1;
  const long r2 = 1 + all - static_cast<long>(t) * (t + 1) / 2;
  switch (s) {
    case Stage::phase2: return r2;
    case Stage::phase3: return r2 - (t - 1);
    case Stage::phase4:
    case Stage::phase4_conflict_free: return 1 + static_cast<long>(L - t) * (L - t + 3) / 2;
    case Stage::phase5_fused: {
      long r = 1;
      for (int d = 1; d <= L - t; ++d) r += (d + q - 1) / q + 1;
      return r;
    }
    default: return 0;
  }
}

std::optional<long> seed002_launches(Stage s) {
  switch (s) {
    case Stage::phase0: return 299;
    case Stage::phase2: return 234;
    case Stage::phase3: return 224;
    case Stage::phase4: return 119;
    default: return std::nullopt;  // phase 1: "not changing the number of kernel launches"
  }
}

std::vector<int> tiles_matching_seed002(Stage s, int offset, int lo, int hi) {
  std::vector<int> out;
  const auto count = seed002_launches(s);
  if (!count) return out;
  for (int t = lo; t <= hi; ++t)
    if (formula_launches(s, 24, t) == *count + offset) out.push_back(t);
  return out;
}

// ---- bytes --------------------------------------------------------------------------------------------------------------

namespace {

// pad = virtual, one global stride 2^e of level s in place: the pairs with a real lower key whose
// partner is >= n move nothing (the kernel returns), the others read and write both keys.
std::size_t skipped_pairs(std::size_t n, int level, int e) {
  const std::size_t j = std::size_t{1} << e;
  if (e == level - 1) {  // mirror: only the 2j-block that holds n can have a partner >= n
    const std::size_t r = n & (2 * j - 1);
    if (r == 0) return 0;
    return r <= j ? r : 2 * j - r;
  }
  return groups_below(n, e, 1) - (n >= j ? groups_below(n - j, e, 1) : 0);
}

}  // namespace

std::vector<double> bytes_per_launch(Stage s, std::size_t n, const Shape& shape) {
  const auto seq = launch_sequence(s, n, shape);
  std::vector<double> out;
  if (seq.empty()) return out;
  const std::size_t padded = std::size_t{1} << network_log2(n);
  const std::size_t last = seq.size() - 1;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    double reads, writes;
    if (shape.pad == Pad::sentinel) {
      reads = static_cast<double>(i == 0 ? n : padded);
      writes = static_cast<double>(i == last ? n : padded);
    } else if (seq[i].kernel == Kernel::global_step) {
      const std::size_t pairs = groups_below(n, seq[i].stride_hi, 1);
      const std::size_t skipped = skipped_pairs(n, seq[i].level, seq[i].stride_hi);
      const double moved = 2.0 * static_cast<double>(pairs - skipped) + (i == 0 ? static_cast<double>(skipped) : 0.0);
      reads = writes = moved;
    } else {
      reads = writes = static_cast<double>(n);
    }
    out.push_back(4.0 * (reads + writes));
  }
  return out;
}

Traffic traffic(Stage s, std::size_t n, const Shape& shape) {
  Traffic t;
  for (double bytes : bytes_per_launch(s, n, shape)) {
    t.bytes += bytes;
    // bytes = 4 (reads + writes) with as many keys read as written: bytes / 8 keys each way, b keys per block
    t.agpu_ios += 2.0 * std::ceil(bytes / 8.0 / b);
  }
  return t;
}

double predicted_ms(Stage s, std::size_t n, const Shape& shape, double sigma_us, double gbps) {
  return launches(s, n, shape) * sigma_us / 1000.0 + traffic(s, n, shape).bytes / (gbps * 1e6);
}

// ---- bank model ----------------------------------------------------------------------------------------------------------

namespace {

template <class IndexOfLane>
Request words(std::string step, IndexOfLane index) {
  return Request{std::move(step), gpulab::WarpAccess::words(index)};
}

void append(std::vector<Request>& to, std::vector<Request> from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// Every warp's request for word index(tau) (a whole block's worth of one instruction).
template <class IndexOfThread>
std::vector<Request> per_warp(const std::string& step, int block, IndexOfThread index) {
  std::vector<Request> out;
  for (int w = 0; w < std::max(1, block / b); ++w)
    out.push_back(words(step + " warp " + std::to_string(w), [&](int lane) { return index(w * b + lane); }));
  return out;
}

// Loads and stores of the two keys tau and tau + B (the textbook tile's load and write-back).
std::vector<Request> tile_io(const std::string& what, int block) {
  std::vector<Request> out = per_warp(what + " [tau]", block, [](int tau) { return tau; });
  append(out, per_warp(what + " [B+tau]", block, [&](int tau) { return block + tau; }));
  return out;
}

// The warp kernels' keys: a = 64 w + l, b = a + 32.
std::vector<Request> warp_io(const std::string& what, int block) {
  const auto a = [](int tau) { return 2 * b * (tau / b) + tau % b; };
  std::vector<Request> out = per_warp(what + " a", block, a);
  append(out, per_warp(what + " b", block, [&](int tau) { return a(tau) + b; }));
  return out;
}

}  // namespace

int pair_lower(int tau, int e) { return ((tau >> e) << (e + 1)) | (tau & ((1 << e) - 1)); }

std::vector<Request> shared_step_requests(int block, int e) {
  const std::string at = " e=" + std::to_string(e);
  std::vector<Request> out = per_warp("load lo" + at, block, [&](int tau) { return pair_lower(tau, e); });
  append(out, per_warp("load hi" + at, block, [&](int tau) { return pair_lower(tau, e) + (1 << e); }));
  append(out, per_warp("store lo" + at, block, [&](int tau) { return pair_lower(tau, e); }));
  append(out, per_warp("store hi" + at, block, [&](int tau) { return pair_lower(tau, e) + (1 << e); }));
  return out;
}

std::vector<Request> block_requests(Stage s, const Launch& launch, const Shape& shape) {
  check_shape(shape);
  const int block = shape.block;
  std::vector<Request> out;
  if (s == Stage::phase5_fused) return out;  // not modelled: the design is the student's
  switch (launch.kernel) {
    case Kernel::fused_steps:
    case Kernel::copy:
    case Kernel::global_step: return out;
    case Kernel::staged_step: {
      const int el = std::min(launch.stride_hi, log2_exact(block));
      out = tile_io("store slot", block);
      append(out, shared_step_requests(block, el));
      append(out, tile_io("load slot", block));
      return out;
    }
    case Kernel::tile_sort:
    case Kernel::tile_merge: break;
  }
  const bool sort = launch.kernel == Kernel::tile_sort;
  const int t = tile_log2(s, shape);
  if (s == Stage::phase4_conflict_free) {
    const auto shared_part = [&](int top) {
      if (top < 6) return;
      append(out, warp_io("store", block));
      for (int e = top; e >= 6; --e) append(out, shared_step_requests(block, e));
      append(out, warp_io("load", block));
    };
    if (sort)
      for (int level = 1; level <= launch.level; ++level) shared_part(level - 1);
    else
      shared_part(t - 1);
    return out;
  }
  out = tile_io("store", block);
  if (sort) {
    for (int level = 1; level <= launch.level; ++level)
      for (int e = level - 1; e >= 0; --e) append(out, shared_step_requests(block, e));
  } else {
    for (int e = t - 1; e >= 0; --e) append(out, shared_step_requests(block, e));
  }
  append(out, tile_io("load", block));
  return out;
}

std::size_t blocks_of(Stage s, const Launch& launch, std::size_t n, const Shape& shape) {
  const std::size_t extent = shape.pad == Pad::virtual_inf || n <= 1 ? n : std::size_t{1} << network_log2(n);
  switch (launch.kernel) {
    case Kernel::copy: return std::max<std::size_t>(1, gpulab::ceil_div(extent, 256));
    case Kernel::global_step:
    case Kernel::staged_step:
      return std::max<std::size_t>(1, gpulab::ceil_div(groups_below(extent, launch.stride_hi, 1), shape.block));
    case Kernel::fused_steps: {  // blocks of 2^p consecutive keys at the 2^q places of the q strides
      const int q = launch.stride_hi - launch.stride_lo + 1, p = tile_log2(s, shape) - q;
      return std::max<std::size_t>(1, groups_below(gpulab::ceil_div(extent, std::size_t{1} << p), launch.stride_lo - p, q));
    }
    case Kernel::tile_sort:
    case Kernel::tile_merge: return std::max<std::size_t>(1, gpulab::ceil_div(extent, std::size_t{1} << tile_log2(s, shape)));
  }
  return 0;
}

std::vector<long> excess_per_launch(Stage s, std::size_t n, const Shape& shape) {
  static std::mutex lock;
  static std::map<std::tuple<Stage, Kernel, int, int, int>, long> cache;
  std::vector<long> out;
  for (const Launch& launch : launch_sequence(s, n, shape)) {
    long per_block;
    const auto key = std::make_tuple(s, launch.kernel, launch.kernel == Kernel::tile_merge ? 0 : launch.level,
                                     launch.stride_hi, shape.block);
    {
      std::lock_guard<std::mutex> guard(lock);
      auto it = cache.find(key);
      if (it == cache.end()) it = cache.emplace(key, gpulab::summarize(block_requests(s, launch, shape)).excess()).first;
      per_block = it->second;
    }
    out.push_back(per_block * static_cast<long>(blocks_of(s, launch, n, shape)));
  }
  return out;
}

std::optional<long> predicted_excess(Stage s, std::size_t n, const Shape& shape) {
  if (s == Stage::phase5_fused || !runs_on_gpu(s)) return std::nullopt;
  long total = 0;
  for (long x : excess_per_launch(s, n, shape)) total += x;
  return total;
}

long textbook_tile_sort_excess(int t) { return 4L * ((1L << t) / 64) * (15 + 5L * (t - 5)); }
long textbook_tile_merge_excess(int t) { return 4L * ((1L << t) / 64) * 5; }

// ---- shared memory and occupancy ----------------------------------------------------------------------------------------

int shared_bytes(Stage s, Kernel k, const Shape& shape) {
  if (s == Stage::phase5_fused) {  // the reference: 2^t + 2^(t-5) words (a pad word per 32); groups only when they transpose
    const int t = tile_log2(s, shape);
    if (k == Kernel::copy || k == Kernel::global_step || k == Kernel::staged_step) return 0;
    return static_cast<int>(((std::size_t{1} << t) + (std::size_t{1} << std::max(0, t - 5))) * 4);
  }
  switch (k) {
    case Kernel::copy:
    case Kernel::global_step:
    case Kernel::fused_steps: return 0;
    case Kernel::staged_step:
    case Kernel::tile_sort:
    case Kernel::tile_merge: return 2 * shape.block * 4;
  }
  return 0;
}

int threads_per_block(Stage s, Kernel k, const Shape& shape) {
  if (k == Kernel::copy) return 256;
  if (s == Stage::phase5_fused) return kFusedThreads;
  return shape.block;
}

Occupancy occupancy(int threads, int regs, int shared, int smem_per_sm, int max_warps, int max_blocks, int regs_per_sm) {
  Occupancy o;
  const int warps = static_cast<int>(gpulab::ceil_div(static_cast<std::size_t>(threads), b));
  std::vector<std::pair<int, std::string>> limits;
  limits.push_back({max_warps / warps, "threads"});
  limits.push_back({max_blocks, "blocks"});
  if (regs > 0) {
    const int per_warp = static_cast<int>(gpulab::round_up(static_cast<std::size_t>(regs) * b, 256));
    limits.push_back({regs_per_sm / (per_warp * warps), "registers"});
  }
  if (shared > 0) limits.push_back({smem_per_sm / (shared + 1024), "shared memory"});
  const auto best = std::min_element(limits.begin(), limits.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  o.blocks_per_sm = best->first;
  o.limited_by = best->second;
  o.warps_per_sm = o.blocks_per_sm * warps;
  o.occupancy = o.warps_per_sm / static_cast<double>(max_warps);
  return o;
}

// ---- paths ---------------------------------------------------------------------------------------------------------------

std::vector<std::string> paths(Stage s, std::size_t n, const Shape& shape) {
  check_shape(shape);
  if (!runs_on_gpu(s)) return {};
  if (n == 0) return {"n = 0: no launch"};
  std::vector<std::string> out{shape.pad == Pad::sentinel ? "pad = sentinel: alternating merges"
                                                          : "pad = virtual: ascending merges, mirrored first strides"};
  if (n == 1) {
    out.push_back("n = 1: one launch writes the key");
    return out;
  }
  const auto seq = launch_sequence(s, n, shape);
  if (!gpulab::is_pow2(n))
    out.push_back(shape.pad == Pad::sentinel && seq.size() > 1 ? "pad = sentinel: a padded copy in scratch"
                                                               : "n not a power of two: guarded loads and stores");
  if (!has_tiles(s)) {
    out.push_back(n > 2 * static_cast<std::size_t>(shape.block) ? "several blocks per launch" : "one block per launch");
    return out;
  }
  const int L = network_log2(n), t = tile_log2(s, shape);
  out.push_back(L <= t ? "L <= t: the tile sort alone" : "L > t: merge levels above the tile");
  if (s == Stage::phase5_fused) {
    if (shape.pad == Pad::virtual_inf && L > t) out.push_back("a mirrored first group");
    for (const Launch& l : seq)
      if (l.kernel == Kernel::fused_steps && l.stride_hi - l.stride_lo + 1 > kFusedKeysLog2) {
        out.push_back("a group launch that transposes");
        break;
      }
  }
  return out;
}

// ---- the network on the host ----------------------------------------------------------------------------------------------

std::vector<std::int32_t> run_network(std::span<const std::int32_t> in, const std::vector<Launch>& launches, Pad pad,
                                      int tile_log2, NetworkReport* report, DirectionRule rule, bool distinct_infinity) {
  NetworkReport local;
  NetworkReport& r = report ? *report : local;
  r = NetworkReport{};
  const std::size_t n = in.size();
  if (n == 0) {
    r.sorted = true;
    return {};
  }
  const bool is_virtual = pad == Pad::virtual_inf;
  const std::size_t padded = std::size_t{1} << network_log2(n);
  const std::uint64_t sentinel = code_of(kSentinel);
  std::vector<std::uint64_t> a(padded, is_virtual || distinct_infinity ? kInfinity : sentinel);
  for (std::size_t i = 0; i < n; ++i) a[i] = code_of(in[i]);

  const auto order = [&](std::uint64_t* x, std::size_t lo, std::size_t hi, bool ascending) {
    if (ascending ? x[hi] < x[lo] : x[lo] < x[hi]) std::swap(x[lo], x[hi]);
  };
  // One stride of a level over the whole array (the global kernels, and the fused ones stride by stride).
  const auto global_stride = [&](int level, int e) {
    const bool mirror = is_virtual && e == level - 1;
    for (std::size_t p = 0; p < padded / 2; ++p) {
      const std::size_t lo = lower_of_pair(p, e);
      const std::size_t hi = mirror ? lo ^ ((std::size_t{2} << e) - 1) : lo + (std::size_t{1} << e);
      if (is_virtual && hi >= n) {
        // The GPU skips this comparator. Run it anyway on the +infinity copy: if +infinity ever
        // moved, the check after the launch catches it.
        order(a.data(), lo, hi, true);
        continue;
      }
      ++r.comparators;
      order(a.data(), lo, hi, is_virtual || ((lo >> level) & 1) == 0);
    }
  };
  // The tile kernels: a tile of T keys on chip (virtual: positions >= n hold the sentinel there).
  const std::size_t tile = std::min<std::size_t>(std::size_t{1} << tile_log2, padded);
  const auto for_each_tile = [&](auto body) {
    std::vector<std::uint64_t> keys(tile);
    for (std::size_t base = 0; base < padded; base += tile) {
      for (std::size_t i = 0; i < tile; ++i) keys[i] = is_virtual && base + i >= n ? sentinel : a[base + i];
      body(base, keys.data());
      for (std::size_t i = 0; i < tile; ++i)
        if (!is_virtual || base + i < n) a[base + i] = keys[i];
    }
  };
  const auto tile_stride = [&](std::uint64_t* keys, std::size_t base, int level, int e, bool merge) {
    for (std::size_t p = 0; p < tile / 2; ++p) {
      const std::size_t lo = lower_of_pair(p, e), hi = lo + (std::size_t{1} << e);
      const std::size_t direction_index = is_virtual ? lo : base + lo;
      bool ascending = ((direction_index >> level) & 1) == 0;
      if (merge && !is_virtual && rule == DirectionRule::merge_ascending) ascending = true;
      if (merge && !is_virtual && rule == DirectionRule::merge_by_parity) ascending = ((base >> tile_log2) & 1) == 0;
      ++r.comparators;
      order(keys, lo, hi, ascending);
    }
  };

  for (const Launch& launch : launches) {
    switch (launch.kernel) {
      case Kernel::copy: break;
      case Kernel::global_step:
      case Kernel::staged_step:
      case Kernel::fused_steps:
        for (int e = launch.stride_hi; e >= launch.stride_lo; --e) global_stride(launch.level, e);
        break;
      case Kernel::tile_sort:
        for_each_tile([&](std::size_t base, std::uint64_t* keys) {
          for (int level = 1; level <= launch.level; ++level)
            for (int e = level - 1; e >= 0; --e) tile_stride(keys, base, level, e, false);
        });
        break;
      case Kernel::tile_merge:
        for_each_tile([&](std::size_t base, std::uint64_t* keys) {
          for (int e = launch.stride_hi; e >= launch.stride_lo; --e) tile_stride(keys, base, launch.level, e, true);
        });
        break;
    }
    for (std::size_t i = n; i < padded && is_virtual; ++i)
      if (a[i] != kInfinity) r.virtual_stayed_above = false;
    for (std::size_t i = 0; i < n && distinct_infinity && !is_virtual; ++i)
      if (a[i] == kInfinity) r.virtual_moved_below = true;
  }

  std::vector<std::uint64_t> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = code_of(in[i]);
  std::sort(want.begin(), want.end());
  r.sorted = std::equal(want.begin(), want.end(), a.begin());
  std::vector<std::int32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] == kInfinity ? kSentinel : key_of(a[i]);
  return out;
}

}  // namespace bitonic::model
