// The ShearSort lab's model (shearsort_model.hpp): ShearSort on the CPU and its round count, the
// networks' comparators, per tile stage the shared-memory requests and bank model, merge passes and
// bytes, the d-way heap's shared memory, the paths a problem reaches. The problem (stages, inputs,
// oracles, verdicts) is shearsort_problem.cpp. Part of the harness: do not edit.
#include "shearsort_model.hpp"

#include <array>
#include <bit>
#include <climits>
#include <functional>
#include <stdexcept>

#include "gpulab/splitmix64.hpp"

namespace shearsort::model {

namespace {

constexpr int b = kWarp;

using gpulab::SplitMix64;

int log2_exact(long n) {
  if (n < 1 || (n & (n - 1)) != 0) throw std::invalid_argument("model: expected a power of two, got " + std::to_string(n));
  return std::countr_zero(static_cast<unsigned long>(n));
}

}  // namespace

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
  if (n % kDwayBufferKeys != 0) out.push_back("a run ending in a partial 64-key block");
  return out;
}

}  // namespace shearsort::model
