// The radix-sort lab's model of a run (radix_sort_model.hpp): launches, host synchronisations,
// bytes, scatter sectors, shared memory, the bank model of digit4 and the paths a problem reaches.
// The problem (stages, inputs, oracle, verdict) is radix_sort_problem.cpp.
#include "radix_sort_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "gpulab/splitmix64.hpp"

namespace radix_sort::model {

namespace {

void check_problem(const Problem& p) {
  if (p.end_bit < 0 || p.end_bit > 32) throw std::invalid_argument("model: end_bit must be 0..32");
  if (p.data_bits < 0 || p.data_bits > 32) throw std::invalid_argument("model: data_bits must be 0..32");
  if (p.radix_bits < 1 || p.radix_bits > 8) throw std::invalid_argument("model: radix_bits must be 1..8");
  if (p.multiprocessors < 1 || p.digit4_blocks_per_sm < 1) throw std::invalid_argument("model: SMs and blocks >= 1");
  if (p.block < 1) throw std::invalid_argument("model: block >= 1");
}

int ceil_log2(std::size_t n) { return gpulab::ceil_log2(n); }

// Sector-granular bytes of seed 003's in-place global tree (find-max), nodes of 8 bytes: level 1
// reads the keys and writes node j at slot min(2j+2, n) - 1 (every sector of the node array: slots
// 1, 3 of each 4); level 2 reads slots 4j+1, 4j+3 (one sector) and writes one; from level 3 on the
// two children lie in two sectors. The last level writes the 16-byte result.
double find_max_bytes(std::size_t n) {
  if (n == 0) return 32;
  const int levels = std::max(1, ceil_log2(n));
  double sectors = std::ceil(n * 4.0 / 32);  // level 1 reads the keys
  sectors += levels == 1 ? 1 : std::ceil(n / 4.0);
  for (int d = 2; d <= levels; ++d) {
    const double half = std::ldexp(1.0, d - 1);
    const double joins = std::ceil((static_cast<double>(n) - half) / (2 * half));
    sectors += (d == 2 ? joins : 2 * joins) + (d == levels ? 1 : joins);
  }
  return 32 * sectors;
}

// Seed 003's work-efficient scan over N = 2^k words, sector-granular: a level of stride s has N/s
// nodes reading words (j+1)s - 1 - s/2 and (j+1)s - 1; while s <= 8 the nodes cover every sector.
double work_efficient_scan_bytes(std::size_t padded) {
  const double N = static_cast<double>(padded), all = N / 8;
  double sectors = 0;
  for (std::size_t s = 2; s <= padded; s *= 2) {
    const double reads = std::min(all, 2 * N / s);
    sectors += reads + std::min(all, N / s);  // up-sweep: reads both, writes the right
    sectors += reads + reads;                 // down-sweep: reads both, writes both
  }
  return 32 * sectors + 4;  // + the root memset
}

// The input of digit4's pass `pass`: the ordered keys stably sorted by the bits below the pass.
std::vector<std::uint32_t> digit4_pass_input(std::span<const std::uint32_t> keys, KeyType type, int pass) {
  std::vector<std::uint32_t> o = ordered_keys(keys, type);
  const int low_bits = pass * kDigit4RadixBits;
  if (low_bits > 0) {
    const std::uint32_t m = key_mask(low_bits);
    std::stable_sort(o.begin(), o.end(), [m](std::uint32_t a, std::uint32_t b) { return (a & m) < (b & m); });
  }
  return o;
}

// Lane l reads or writes word index(l) (and, for a 16-byte access, the 3 words after it:
// bank_model.hpp serves those in 4 phases of 8 lanes).
template <class IndexOfLane>
Request word_request(std::string step, IndexOfLane index, std::span<const bool> active, int width_bytes = 4) {
  gpulab::WarpAccess a;
  a.width_bytes = width_bytes;
  for (int lane = 0; lane < 32; ++lane)
    if (active[lane]) a.byte_address[lane] = static_cast<std::uint32_t>(index(lane)) * 4u;
  return Request{std::move(step), a};
}

void add(RequestSummary& total, const Request& r) {
  const auto rep = gpulab::analyze_bank_conflicts(r.access);
  ++total.requests;
  total.wavefronts += rep.wavefronts;
  total.ideal_wavefronts += rep.ideal_wavefronts;
  total.max_way = std::max(total.max_way, rep.max_way);
  total.worst_excess = std::max(total.worst_excess, rep.excess());
}

}  // namespace

// ---- the model of a run -----------------------------------------------------------------------------

int passes(Stage s, const Problem& p) {
  check_problem(p);
  switch (s) {
    case Stage::cpu:
    case Stage::find_max: return 0;
    case Stage::cpu_lsd: return pass_count(p.end_bit, 8);
    case Stage::split_global: return std::min(p.data_bits, p.end_bit);
    case Stage::split_scan_fused:
    case Stage::split_onepass: return p.end_bit;
    case Stage::digit4:
    case Stage::digit4_count: return pass_count(p.end_bit, kDigit4RadixBits);
    case Stage::onesweep: return pass_count(p.end_bit, p.radix_bits);
  }
  return 0;
}

std::size_t digit4_tile_size(const Problem& p) {
  if (p.n == 0) return 0;
  const std::size_t chunks = gpulab::ceil_div(p.n, kDigit4Chunk);
  const std::size_t processors = static_cast<std::size_t>(p.multiprocessors) * p.digit4_blocks_per_sm;
  return gpulab::ceil_div(chunks, std::min(processors, chunks)) * kDigit4Chunk;
}

std::size_t digit4_tiles(const Problem& p) { return p.n == 0 ? 0 : gpulab::ceil_div(p.n, digit4_tile_size(p)); }

long work_efficient_scan_launches(std::size_t n) { return 2L * ceil_log2(n); }

long launches(Stage s, const Problem& p) {
  check_problem(p);
  if (!on_gpu(s)) return 0;
  if (s == Stage::find_max) return p.n == 0 ? 1 : std::max(1, ceil_log2(p.n));
  if (p.n == 0) return 0;
  const long P = passes(s, p);
  switch (s) {
    case Stage::split_global:
      return std::max(1, ceil_log2(p.n)) + P * (work_efficient_scan_launches(p.n) + 3);
    case Stage::split_scan_fused: return 2 * P;
    case Stage::split_onepass: return P == 0 ? 0 : 1 + P;
    case Stage::digit4: return 3 * P;
    case Stage::digit4_count: return P;
    case Stage::onesweep: return P == 0 ? 0 : 1 + P;
    default: return 0;
  }
}

long host_syncs(Stage s, const Problem& p) {
  if (s != Stage::split_global || p.n == 0) return 0;
  return 1 + 2L * passes(s, p);
}

long host_copy_bytes(Stage s, const Problem& p) {
  if (s != Stage::split_global || p.n == 0) return 0;
  return static_cast<long>(sizeof(BitSpan)) + 8L * passes(s, p);
}

Traffic traffic(Stage s, const Problem& p) {
  check_problem(p);
  Traffic t;
  const double n = static_cast<double>(p.n);
  const int P = passes(s, p);
  const double moved = 8.0 * n;  // a pass reads and writes every key (or value) once: 8 bytes each
  if (p.n == 0) {
    if (s == Stage::find_max) t.state_bytes = 16;
    return t;
  }
  switch (s) {
    case Stage::cpu:
      t.key_bytes = moved;
      t.value_bytes = p.pairs ? moved : 0;
      break;
    case Stage::cpu_lsd:
      t.key_bytes = P * (moved + 4 * n);  // count pass + scatter pass per digit
      t.value_bytes = p.pairs ? P * moved : 0;
      break;
    case Stage::find_max: t.state_bytes = find_max_bytes(p.n); break;
    case Stage::split_global: {
      const double padded = std::ldexp(1.0, ceil_log2(p.n));
      t.state_bytes = find_max_bytes(p.n);
      if (P == 0) {
        t.key_bytes = moved;
        t.value_bytes = p.pairs ? moved : 0;
        break;
      }
      // Per bit: map (key in; b, f out), scan, t (f in, t out), scatter (key, b, t, f in; key out).
      t.key_bytes = P * (4 * n + moved);
      t.value_bytes = p.pairs ? P * moved : 0;
      t.state_bytes += P * ((4 * n + 4 * padded) + work_efficient_scan_bytes(static_cast<std::size_t>(padded)) +
                            8 * n + 12 * n + 8 /* the two host reads */);
      t.state_bytes += 16;  // the span read back
      break;
    }
    case Stage::split_scan_fused: {
      const double tiles = std::ceil(n / kSplitTile);
      if (P == 0) {
        t.key_bytes = moved;
        t.value_bytes = p.pairs ? moved : 0;
        break;
      }
      // Per bit: the scan reads the keys and writes f; the scatter reads keys and f, writes keys.
      t.key_bytes = P * (4 * n + moved);
      t.value_bytes = p.pairs ? P * moved : 0;
      t.state_bytes = P * (8 * n + 3 * 8 * tiles + 8) + P * (8 * tiles + 8);  // f; look-back words; memset
      break;
    }
    case Stage::split_onepass: {
      const double tiles = std::ceil(n / kSplitTile);
      if (P == 0) {
        t.key_bytes = moved;
        t.value_bytes = p.pairs ? moved : 0;
        break;
      }
      t.key_bytes = 4 * n + P * moved;
      t.value_bytes = p.pairs ? P * moved : 0;
      t.state_bytes = P * (3 * 8 * tiles + 4) + P * (8 * tiles + 4) + 128;
      break;
    }
    case Stage::digit4: {
      if (P == 0) {
        t.key_bytes = moved;
        t.value_bytes = p.pairs ? moved : 0;
        break;
      }
      const double G = static_cast<double>(digit4_tiles(p));
      t.key_bytes = P * (4 * n + moved);  // upsweep reads, downsweep reads and writes
      t.value_bytes = p.pairs ? P * moved : 0;
      t.state_bytes = P * 4.0 * (4 * kDigit4Digits * G);  // counts: written, spine read + write, downsweep read
      break;
    }
    case Stage::digit4_count:  // per pass: the keys read, the 16 x G counts written
      t.key_bytes = P * 4 * n;
      t.state_bytes = P * 4.0 * kDigit4Digits * static_cast<double>(digit4_tiles(p));
      break;
    case Stage::onesweep: {
      if (P == 0) {
        t.key_bytes = moved;
        t.value_bytes = p.pairs ? moved : 0;
        break;
      }
      const double digits = std::ldexp(1.0, p.radix_bits), tiles = std::ceil(n / kOnesweepTile);
      t.key_bytes = 4 * n + P * moved;  // histogram reads once; each pass reads and writes
      t.value_bytes = p.pairs ? P * moved : 0;
      // bins; look-back words: memset, aggregate, prefix, and the next tile's window of
      // kOnesweepLookBackWindow words (one round trip usually ends the walk); tile counters.
      t.state_bytes = P * digits * 4 * 3 + P * tiles * digits * 4 * (3 + kOnesweepLookBackWindow) + P * 8;
      break;
    }
  }
  return t;
}

double bytes_per_key(Stage s, const Problem& p) { return p.n == 0 ? 0 : traffic(s, p).total() / static_cast<double>(p.n); }

double predicted_ms(Stage s, const Problem& p, double sigma_us, double gbps, double sync_us) {
  return launches(s, p) * sigma_us / 1000.0 + host_syncs(s, p) * sync_us / 1000.0 + traffic(s, p).total() / (gbps * 1e6);
}

double launch_bound_crossover(Stage s, Problem p, double sigma_us, double gbps) {
  auto gap = [&](double n) {  // bandwidth time minus launch time, in ms
    p.n = static_cast<std::size_t>(n);
    return traffic(s, p).total() / (gbps * 1e6) - launches(s, p) * sigma_us / 1000.0;
  };
  double lo = 1, hi = 2;
  while (gap(hi) < 0) {
    lo = hi;
    hi *= 2;
    if (hi > 1e13) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 60 && hi - lo > 1; ++i) {
    const double mid = std::floor((lo + hi) / 2);
    (gap(mid) < 0 ? lo : hi) = mid;
  }
  return hi;
}

// ---- scatter and shared memory ----------------------------------------------------------------------

double expected_sectors_per_written_key(int radix_bits, int tile_keys) {
  if (radix_bits < 1 || radix_bits > 16 || tile_keys < 1) throw std::invalid_argument("expected_sectors: bad arguments");
  const double digits = std::ldexp(1.0, radix_bits), q = 1.0 / digits, S = tile_keys;
  // sectors(L): a run of L 4-byte keys starting at slot `off` (0..7) of its first 8-slot sector.
  auto sectors = [](int L) {
    double sum = 0;
    for (int off = 0; off < 8; ++off) sum += std::floor((off + L - 1) / 8.0) + 1;
    return sum / 8;
  };
  double expected = 0;
  const double log_norm = std::lgamma(S + 1);
  for (int L = 1; L <= tile_keys; ++L) {
    const double log_pmf = log_norm - std::lgamma(L + 1.0) - std::lgamma(S - L + 1) + L * std::log(q) +
                           (S - L) * std::log1p(-q);
    expected += std::exp(log_pmf) * sectors(L);
  }
  return digits * expected / S;
}

int counter_bytes_per_warp(int radix_bits) { return (1 << radix_bits) * 32 * 4; }

int digit4_downsweep_shared_bytes(bool pairs) {
  // Two padded chunks (the one being ranked, the next one arriving), keys and values.
  const int padded = kDigit4Chunk + kDigit4Chunk / 32;
  const int words = 2 * padded + (pairs ? 2 * padded : 1) + kDigit4Digits * kDigit4Threads +
                    (kDigit4Threads / 32) * kDigit4Digits + kDigit4Digits;
  return 4 * words;
}

int onesweep_pass_shared_bytes(int radix_bits, bool pairs) {
  // warp_offsets, digit_base, scan_totals, the tile's keys (and values), the tile number.
  const int digits = 1 << radix_bits, warps = kOnesweepThreads / 32;
  const int words = warps * digits + digits + 2 * warps + kOnesweepTile + (pairs ? kOnesweepTile : 1) + 1;
  return 4 * words;
}

// ---- bank conflicts ---------------------------------------------------------------------------------

int counter_word(CounterLayout layout, int radix_bits, int lane, int digit) {
  return layout == CounterLayout::per_lane ? digit * 32 + lane : lane * (1 << radix_bits) + digit;
}

std::vector<Request> digit_count_requests(int radix_bits, CounterLayout layout, std::span<const int> lane_digits) {
  if (lane_digits.size() != 32) throw std::invalid_argument("digit_count_requests: 32 lane digits");
  std::array<bool, 32> active{};
  for (int l = 0; l < 32; ++l) active[l] = lane_digits[l] >= 0;
  auto word = [&](int l) { return counter_word(layout, radix_bits, l, std::max(lane_digits[l], 0)); };
  return {word_request("counter load", word, active), word_request("counter store", word, active)};
}

RequestSummary digit4_upsweep_summary(std::span<const std::uint32_t> keys, KeyType type, int end_bit, int pass,
                                      const Problem& p, CounterLayout layout, CountedKeys counted) {
  RequestSummary total;
  const std::size_t n = keys.size();
  if (n == 0) return total;
  Problem q = p;
  q.n = n;
  const std::size_t tile_size = digit4_tile_size(q), tiles = digit4_tiles(q);
  // Ordered keys: digit4's pass input (sorted by the lower passes' bits), or digit4-count's (not sorted).
  const std::vector<std::uint32_t> in = digit4_pass_input(keys, type, counted == CountedKeys::pass_input ? pass : 0);
  const int shift = pass * kDigit4RadixBits, bits = pass_bits(end_bit, kDigit4RadixBits, pass);
  constexpr int kWarps = kDigit4Threads / 32;
  std::array<bool, 32> all{};
  all.fill(true);
  std::array<bool, 32> first16{};
  for (int l = 0; l < 16; ++l) first16[l] = true;
  auto counter = [&](int warp, int lane, int d) { return warp * kDigit4Digits * 32 + counter_word(layout, kDigit4RadixBits, lane, d); };
  const int warp_counts_base = kWarps * kDigit4Digits * 32;  // the second shared array follows the first
  // A lane's 16 counters of the per-thread layout are 16 consecutive words, and ptxas clears and
  // reads them (the warp sums) as four 128-bit accesses: the PTX has 16 scalar st.shared.u32, but
  // Nsight Compute's count of digit4-count's whole run with thread counters at n = 65536 (H200,
  // 2026-11-30) is 178,728 excess wavefronts, exactly this model's with 128-bit accesses there;
  // with 32-bit ones it would be 571,944. The per-lane layout's counters of a lane are 32 words
  // apart: one 32-bit access each.
  const bool vector4 = layout == CounterLayout::per_thread;
  auto each_counter = [&](const char* step, int w) {
    if (vector4)
      for (int d = 0; d < kDigit4Digits; d += 4)
        add(total, word_request(step, [&](int l) { return counter(w, l, d); }, all, 16));
    else
      for (int d = 0; d < kDigit4Digits; ++d)
        add(total, word_request(step, [&](int l) { return counter(w, l, d); }, all));
  };
  for (std::size_t g = 0; g < tiles; ++g) {
    const std::size_t begin = g * tile_size, end = std::min(begin + tile_size, n);
    for (int w = 0; w < kWarps; ++w) {
      each_counter("clear", w);
      // Steps: lane l of warp w reads keys begin + 4 (32 w + l) + 1024 k .. + 3.
      for (std::size_t step = begin + 4 * 32 * static_cast<std::size_t>(w); step < end; step += 4 * kDigit4Threads) {
        for (int c = 0; c < 4; ++c) {
          std::array<bool, 32> active{};
          std::array<int, 32> digit{};
          for (int l = 0; l < 32; ++l) {
            const std::size_t i = step + 4 * static_cast<std::size_t>(l) + c;
            active[l] = i < end;
            digit[l] = active[l] ? static_cast<int>(digit_of(in[i], shift, bits)) : 0;
          }
          auto word = [&](int l) { return counter(w, l, digit[l]); };
          add(total, word_request("count load", word, active));
          add(total, word_request("count store", word, active));
        }
      }
      each_counter("warp sum load", w);
      add(total, word_request("warp total store", [&](int l) { return warp_counts_base + w * kDigit4Digits + l; }, first16));
    }
    for (int w = 0; w < kWarps; ++w)
      add(total, word_request("block sum load", [&](int l) { return warp_counts_base + w * kDigit4Digits + l; }, first16));
  }
  return total;
}

namespace {

// The stable rank of each position of a chunk by digit, positions past `valid` carrying digit 15
// (the reference's padding: being last in the input, they rank after every real key).
std::vector<int> chunk_ranks(std::span<const int> digit) {
  std::array<int, kDigit4Digits> count{}, start{};
  for (int d : digit) ++count[d];
  for (int d = 1; d < kDigit4Digits; ++d) start[d] = start[d - 1] + count[d - 1];
  std::vector<int> rank(digit.size());
  for (std::size_t pos = 0; pos < digit.size(); ++pos) rank[pos] = start[digit[pos]]++;
  return rank;
}

// Every shared request of digit4's downsweep for one pass, in the reference's order (steps 1-6 of
// digit4_downsweep); `only_reorder`: just step 5's reorder stores of the keys.
RequestSummary downsweep_requests(std::span<const std::uint32_t> keys, KeyType type, int end_bit, int pass,
                                  const Problem& p, bool only_reorder) {
  RequestSummary total;
  const std::size_t n = keys.size();
  if (n == 0) return total;
  Problem q = p;
  q.n = n;
  const bool pairs = p.pairs && !only_reorder;
  const std::size_t tile_size = digit4_tile_size(q), tiles = digit4_tiles(q);
  const std::vector<std::uint32_t> in = digit4_pass_input(keys, type, pass);
  const int shift = pass * kDigit4RadixBits, bits = pass_bits(end_bit, kDigit4RadixBits, pass);
  constexpr int kT = kDigit4Threads, kWarps = kT / 32, kD = kDigit4Digits, kI = kDigit4Items;
  constexpr int kPadded = kDigit4Chunk + kDigit4Chunk / 32;
  auto padded = [](int k) { return k + k / 32; };
  // The reference's DownsweepShared, word by word: two staged chunks (and two of values), the
  // per-thread table, the warp counts, the digit bases.
  const int values_base = 2 * kPadded;
  const int counters_base = values_base + (pairs ? 2 * kPadded : 1);
  const int warp_counts_base = counters_base + kD * kT;
  const int digit_base_base = warp_counts_base + kWarps * kD;
  std::array<bool, 32> all{}, lane31{}, first16{};
  all.fill(true);
  lane31[31] = true;
  for (int l = 0; l < kD; ++l) first16[l] = true;
  auto any = [](const std::array<bool, 32>& a) { return std::any_of(a.begin(), a.end(), [](bool x) { return x; }); };
  int slot = 0;
  std::vector<int> digit(kDigit4Chunk);
  for (std::size_t g = 0; g < tiles; ++g) {
    const std::size_t begin = g * tile_size, end = std::min(begin + tile_size, n);
    for (std::size_t chunk = begin; chunk < end; chunk += kDigit4Chunk, slot ^= 1) {
      const int valid = static_cast<int>(std::min<std::size_t>(kDigit4Chunk, end - chunk));
      const int half = slot * kPadded;
      for (int pos = 0; pos < kDigit4Chunk; ++pos)
        digit[pos] = pos < valid ? static_cast<int>(digit_of(in[chunk + pos], shift, bits)) : kD - 1;
      const std::vector<int> rank = chunk_ranks(digit);
      // The striped positions j * 256 + 32 w + l of warp w (the staging copy and the write-out): which
      // lanes hold a real key, and their padded word.
      auto striped_active = [&](int j, int w) {
        std::array<bool, 32> active{};
        for (int l = 0; l < 32; ++l) active[l] = j * kT + 32 * w + l < valid;
        return active;
      };
      auto striped_word = [&](int j, int w) { return [=](int l) { return half + padded(j * kT + 32 * w + l); }; };
      if (!only_reorder) {
        for (int w = 0; w < kWarps; ++w) {
          // 1. The striped copy (cp.async, 4 bytes a lane): word j * 256 + t to its padded place.
          for (int j = 0; j < kI; ++j) {
            const auto active = striped_active(j, w);
            if (!any(active)) continue;
            const auto word = striped_word(j, w);
            add(total, word_request("stage keys", word, active));
            if (pairs) add(total, word_request("stage values", [&](int l) { return values_base + word(l); }, active));
          }
          // 2. Blocked reads: item i of thread t is chunk word 16 t + i (every item, valid or not).
          for (int i = 0; i < kI; ++i) {
            auto word = [&](int l) { return half + padded((32 * w + l) * kI + i); };
            add(total, word_request("blocked key load", word, all));
            if (pairs) add(total, word_request("blocked value load", [&](int l) { return values_base + word(l); }, all));
          }
          // 3. Lane 31 stores the warp's two totals of each digit pair.
          for (int d = 0; d < kD; ++d)
            add(total, word_request("warp total store", [&](int) { return warp_counts_base + w * kD + d; }, lane31));
        }
        // 4. Warp 0, lanes 0..15: the warps' counts, then their offsets, and the digit bases.
        for (int w = 0; w < kWarps; ++w)
          add(total, word_request("warp count load", [&](int l) { return warp_counts_base + w * kD + l; }, first16));
        for (int w = 0; w < kWarps; ++w)
          add(total, word_request("warp offset store", [&](int l) { return warp_counts_base + w * kD + l; }, first16));
        add(total, word_request("digit base store", [&](int l) { return digit_base_base + l; }, first16));
      }
      // 5. The per-thread table (column t), then per item its data-dependent read and the reorder:
      //    the key (and value) stored at its padded rank in the chunk's own half (keys past n are not
      //    stored). The reorder stores are the only requests whose bank depends on the keys.
      for (int w = 0; w < kWarps; ++w) {
        if (!only_reorder)
          for (int d = 0; d < kD; ++d) {
            add(total, word_request("warp offset load", [&](int) { return warp_counts_base + w * kD + d; }, all));
            add(total, word_request("table store", [&](int l) { return counters_base + d * kT + 32 * w + l; }, all));
          }
        for (int i = 0; i < kI; ++i) {
          std::array<bool, 32> active{};
          for (int l = 0; l < 32; ++l) active[l] = (32 * w + l) * kI + i < valid;
          if (!any(active)) continue;
          auto pos = [&](int l) { return (32 * w + l) * kI + i; };
          auto sorted_word = [&](int l) { return half + padded(rank[pos(l)]); };
          if (!only_reorder)
            add(total, word_request("table load", [&](int l) { return counters_base + digit[pos(l)] * kT + 32 * w + l; }, active));
          add(total, word_request("reorder key store", sorted_word, active));
          if (pairs) add(total, word_request("reorder value store", [&](int l) { return values_base + sorted_word(l); }, active));
        }
      }
      if (only_reorder) continue;
      // 6. The write-out: thread t reads sorted positions j * 256 + t (< valid), and its digit's base.
      std::vector<int> sorted_digit(kDigit4Chunk);
      for (int pos = 0; pos < kDigit4Chunk; ++pos) sorted_digit[rank[pos]] = digit[pos];
      for (int w = 0; w < kWarps; ++w)
        for (int j = 0; j < kI; ++j) {
          const auto active = striped_active(j, w);
          if (!any(active)) continue;
          const auto word = striped_word(j, w);
          add(total, word_request("sorted key load", word, active));
          add(total, word_request("digit base load", [&](int l) { return digit_base_base + sorted_digit[j * kT + 32 * w + l]; }, active));
          if (pairs) add(total, word_request("sorted value load", [&](int l) { return values_base + word(l); }, active));
        }
    }
  }
  return total;
}

}  // namespace

RequestSummary digit4_reorder_summary(std::span<const std::uint32_t> keys, KeyType type, int end_bit, int pass,
                                      const Problem& p) {
  return downsweep_requests(keys, type, end_bit, pass, p, true);
}

RequestSummary digit4_downsweep_summary(std::span<const std::uint32_t> keys, KeyType type, int end_bit, int pass,
                                        const Problem& p) {
  return downsweep_requests(keys, type, end_bit, pass, p, false);
}

namespace {

// Sectors per written key of digit4's downsweep over `chunks` chunks of uniform random digits, one
// warp store instruction at a time. Each digit's run of a chunk starts at a random word of its first
// sector (the run continues the digit's run of the chunk before, whose length is random), far from
// the other digits' runs. `lane_position(w, i, l)`: the chunk position (in input order) that lane l
// of warp w writes with store instruction i; `sorted`: that position is one of the chunk sorted by
// digit (the reorder), else of the chunk as loaded.
template <class LanePosition>
double write_sectors_per_key(int chunks, std::uint64_t seed, bool sorted, LanePosition lane_position) {
  gpulab::SplitMix64 rng{seed};
  constexpr int kT = kDigit4Threads, kD = kDigit4Digits, kI = kDigit4Items;
  double sectors = 0, keys = 0;
  for (int c = 0; c < chunks; ++c) {
    std::vector<int> digit(kDigit4Chunk);
    for (int& d : digit) d = static_cast<int>(rng.below(kD));
    const std::vector<int> rank = chunk_ranks(digit);
    std::array<int, kD> first_rank{};  // digit d's first place in the chunk sorted by digit
    first_rank.fill(kDigit4Chunk);
    for (int pos = 0; pos < kDigit4Chunk; ++pos) first_rank[digit[pos]] = std::min(first_rank[digit[pos]], rank[pos]);
    std::vector<int> sorted_digit(kDigit4Chunk);
    for (int pos = 0; pos < kDigit4Chunk; ++pos) sorted_digit[rank[pos]] = digit[pos];
    std::array<std::uint64_t, kD> base{};
    for (int d = 0; d < kD; ++d) base[d] = (static_cast<std::uint64_t>(d) << 32) + rng.below(8);
    for (int w = 0; w < kT / 32; ++w)
      for (int i = 0; i < kI; ++i) {
        std::set<std::uint64_t> touched;
        for (int l = 0; l < 32; ++l) {
          const int pos = lane_position(w, i, l);
          const int d = sorted ? sorted_digit[pos] : digit[pos];
          const int r = sorted ? pos : rank[pos];  // the key's place in the chunk sorted by digit
          touched.insert((base[d] + static_cast<std::uint64_t>(r - first_rank[d])) / 8);
        }
        sectors += static_cast<double>(touched.size());
        keys += 32;
      }
  }
  return sectors / keys;
}

}  // namespace

double digit4_scatter_sectors_per_key(int chunks, std::uint64_t seed) {
  // Store instruction i of warp w: lane l writes item i of thread 32 w + l, chunk position 16 t + i.
  return write_sectors_per_key(chunks, seed, false,
                               [](int w, int i, int l) { return (32 * w + l) * kDigit4Items + i; });
}

double digit4_sorted_sectors_per_key(int chunks, std::uint64_t seed) {
  // Store instruction j of warp w: lane l writes sorted position j * 256 + 32 w + l.
  return write_sectors_per_key(chunks, seed, true,
                               [](int w, int j, int l) { return j * kDigit4Threads + 32 * w + l; });
}

// ---- paths --------------------------------------------------------------------------------------------

std::vector<std::string> paths(Stage s, const Problem& p) {
  check_problem(p);
  if (!on_gpu(s)) return {};
  std::vector<std::string> out{std::string(to_string(p.key)) + " keys"};
  const auto block = static_cast<std::size_t>(p.block);
  if (s == Stage::find_max) {
    if (p.n == 0) {
      out.push_back("n = 0: the identities written");
      return out;
    }
    out.push_back(p.n <= 2 ? "one launch" : "a launch per level");
    if (!gpulab::is_pow2(p.n)) out.push_back("a level with an odd node");
    if (gpulab::ceil_div(gpulab::ceil_div(p.n, 2), block) > 1) out.push_back("several blocks per launch");
    return out;
  }
  if (s == Stage::digit4_count) {  // counts only: no values, no ping-pong, no spine
    if (p.n == 0) {
      out.push_back("n = 0: nothing to do");
      return out;
    }
    if (passes(s, p) == 0) {
      out.push_back("zero passes: nothing to count");
      return out;
    }
    if (p.end_bit % kDigit4RadixBits != 0) out.push_back("a short last pass");
    out.push_back(digit4_tiles(p) > 1 ? "several tiles" : "one tile");
    if (digit4_tile_size(p) > static_cast<std::size_t>(kDigit4Chunk)) out.push_back("several chunks per tile");
    if (p.n % kDigit4Chunk != 0) out.push_back("a partial chunk");
    if (p.counters == CounterLayout::per_thread) out.push_back("per-thread counters");
    return out;
  }
  out.push_back(p.pairs ? "pairs" : "keys only");
  if (p.n == 0) {
    out.push_back("n = 0: nothing to do");
    return out;
  }
  if (s == Stage::split_global) out.push_back(p.n <= 2 ? "find-max: one launch" : "find-max: a launch per level");
  const int P = passes(s, p);
  if (P == 0) {
    out.push_back("zero passes: a copy");
    return out;
  }
  out.push_back(P % 2 ? "an odd pass count" : "an even pass count");
  const int r = s == Stage::digit4 ? kDigit4RadixBits : s == Stage::onesweep ? p.radix_bits : 1;
  if (p.end_bit % r != 0) out.push_back("a short last pass");
  switch (s) {
    case Stage::split_global:
      if (!gpulab::is_pow2(p.n)) out.push_back("the scan's padding past n");
      if (p.n > block) out.push_back("several blocks per launch");
      break;
    case Stage::split_scan_fused:
    case Stage::split_onepass:
      out.push_back(p.n > static_cast<std::size_t>(kSplitTile) ? "several tiles: the look-back" : "one tile");
      if (p.n % kSplitTile != 0) out.push_back("a partial tile");
      if (s == Stage::split_scan_fused && p.n % 4 != 0) out.push_back("a partial vector in the scatter");
      break;
    case Stage::digit4: {
      const std::size_t G = digit4_tiles(p);
      out.push_back(G > 1 ? "several tiles" : "one tile");
      if (digit4_tile_size(p) > static_cast<std::size_t>(kDigit4Chunk)) out.push_back("several chunks per tile");
      if (p.n % kDigit4Chunk != 0) out.push_back("a partial chunk");
      if (kDigit4Digits * G > 1024) out.push_back("the spine loops over the count matrix");
      if (p.counters == CounterLayout::per_thread) out.push_back("per-thread counters");
      break;
    }
    case Stage::onesweep:
      out.push_back("r = " + std::to_string(p.radix_bits));
      out.push_back(p.n > static_cast<std::size_t>(kOnesweepTile) ? "several tiles: the look-back" : "one tile");
      if (p.n >= static_cast<std::size_t>(kOnesweepTile)) out.push_back("full tiles");
      if (p.n % kOnesweepTile != 0) out.push_back("a partial tile");
      break;
    default: break;
  }
  return out;
}

}  // namespace radix_sort::model
