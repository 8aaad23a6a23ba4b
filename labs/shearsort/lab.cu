// The ShearSort lab's harness: the code of each stage of lab.toml (the facts are there), the
// experiments in experiments.cu, the inputs, oracles and verdicts in shearsort_problem.cpp, the model
// in shearsort_model.cpp, the CUB and Thrust baselines in shearsort_cub.cu. It prepares seeded keys (and with --param
// pairs=1 their input positions as values), calls the implementation (yours or the reference) and
// judges the output: every tile sorted for the tile stages, the whole array sorted and stable for
// cpu and the merge stages. Do not edit.
#include <cuda_runtime.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <span>
#include <string>

#include "gpulab/device_info.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/fresh_input.cuh"
#include "gpulab/stages.hpp"
#include "shearsort.cuh"
#include "shearsort_lab.hpp"
#include "shearsort_model.hpp"

namespace shearsort {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace shearsort::lab {

model::Input input_of(const gpulab::Problem& p) { return model::input_for(p.distribution, p.param("input", dist)); }

ShearConfig config_for(const gpulab::Problem& p) {
  ShearConfig c;
  c.d = static_cast<int>(p.param("d", c.d));
  c.base_case = static_cast<TileVariant>(p.param("base", static_cast<long long>(c.base_case)));
  const long long chunk = p.param("chunk", 0);
  if (chunk != 0 && (chunk < kWarp || !gpulab::is_pow2(static_cast<std::size_t>(chunk))))
    throw gpulab::UsageError("--param chunk=" + std::to_string(chunk) + ": use 0 (automatic) or a power of two >= 32");
  c.dway_chunk = static_cast<std::size_t>(chunk);
  return c;
}

model::Shape shape_for(const gpulab::Problem& p) {
  const ShearConfig c = config_for(p);
  model::Shape s;
  s.d = c.d;
  s.chunk = c.dway_chunk;
  s.pairs = p.param("pairs", 0) != 0;
  s.base = c.base_case;
  s.multiprocessors = gpulab::gpu_available() ? gpulab::multiprocessors() : 132;
  return s;
}

}  // namespace shearsort::lab

namespace gpulab {

namespace {

using namespace shearsort;
namespace sm = shearsort::model;

// ---- the problems: keys with every tile sorted, or the whole array sorted (with values) -------------------

struct TileData {
  std::vector<std::int32_t> keys, expected;
};
struct SortData {
  std::vector<std::int32_t> keys;
  std::vector<std::uint32_t> values;    // pairs: value i = i; empty for keys only
  std::vector<std::int32_t> expected;   // the sorted keys, then (pairs) their values as int32
  bool pairs = false;
};

std::shared_ptr<const TileData> tile_data(const Problem& p) {
  return problem_data<TileData>(p.only({"input"}), [&] {
    TileData d{sm::make_keys(lab::input_of(p), p.n, p.seed), {}};
    d.expected = sm::tiles_sorted(d.keys);
    return d;
  });
}

// keys_only: the keys-only baselines, whatever --param pairs says.
std::shared_ptr<const SortData> sort_data(const Problem& p, bool keys_only = false) {
  const bool pairs = !keys_only && p.param("pairs", 0) != 0;
  return problem_data<SortData>(p.only({"input"}).with("pairs", pairs), [&] {
    SortData d{sm::make_keys(lab::input_of(p), p.n, p.seed), {}, {}, pairs};
    if (!pairs) {
      d.expected = sm::sorted_keys(d.keys);
      return d;
    }
    d.values = sm::index_values(p.n);
    const auto sorted = sm::sorted_pairs(d.keys, d.values);
    d.expected.resize(2 * p.n);
    for (std::size_t i = 0; i < p.n; ++i) {
      d.expected[i] = sorted[i].first;
      d.expected[p.n + i] = static_cast<std::int32_t>(sorted[i].second);
    }
    return d;
  });
}

// Every tile stage's output: n keys, each tile sorted; read n, write n.
const ArrayOutput<std::int32_t, TileData> kTiles{
    tile_data, [](const TileData& d) { return std::span<const std::int32_t>(d.expected); },
    [](const TileData& d) { return 8.0 * static_cast<double>(d.keys.size()); },
    [](const TileData& d, std::span<const std::int32_t> got) { return sm::check_tiles(d.keys, d.expected, got); },
    {},
    [](const TileData& d) { return d.keys; }};

// A sort's output: n keys, then (pairs) n values; read and write keys (and values) once.
ArrayOutput<std::int32_t, SortData> sort_output(bool keys_only) {
  return {[keys_only](const Problem& p) { return sort_data(p, keys_only); },
          [](const SortData& d) { return std::span<const std::int32_t>(d.expected); },
          [](const SortData& d) { return (d.pairs ? 16.0 : 8.0) * static_cast<double>(d.keys.size()); },
          [](const SortData& d, std::span<const std::int32_t> got) { return sm::check_sort(d.keys, d.expected, got, d.pairs); },
          [](const SortData& d) { return std::optional<double>(static_cast<double>(d.keys.size())); },
          [](const SortData& d) {  // the keys, then (pairs) the values i = i: sort_data's layout
            std::vector<std::int32_t> copy(d.keys);
            for (const std::uint32_t v : d.values) copy.push_back(static_cast<std::int32_t>(v));
            return copy;
          }};
}

// The scratch a GPU stage gets (shearsort.cuh), with the problem's knobs.
std::shared_ptr<ScratchOwner<ShearWorkspace>> workspace(const Problem& p, std::size_t bytes) {
  const ShearConfig config = lab::config_for(p);
  return scratch<ShearWorkspace>(bytes, [&](ShearWorkspace& ws) {
    ws.config = config;
    ws.multiprocessors = multiprocessors();
  });
}

// ---- the stages' code --------------------------------------------------------------------------------------------

Stage::Code cpu_sort() {
  return host_stage<std::int32_t, SortData>(sort_output(false), [](const SortData& d, std::int32_t* out) {
    const std::size_t n = d.keys.size();
    sort_cpu(d.keys.data(), d.pairs ? d.values.data() : nullptr, out,
             d.pairs ? reinterpret_cast<std::uint32_t*>(out + n) : nullptr, n);
  });
}

Stage::Code cpu_shear() {
  return host_stage<std::int32_t, TileData>(kTiles, [](const TileData& d, std::int32_t* out) {
    tile_shear_cpu(d.keys.data(), out, d.keys.size());
  });
}

// The keys on the device, and the replay guard: each timed run sorts a fresh draw of the problem's
// keys (sm::make_keys, another seed), judged on the device (gpulab/fresh_input.cuh): every tile
// sorted and holding its own input keys (segment = the tile), or the whole array sorted (and stable
// with values, which follow the keys at out + n).
using Keys = std::shared_ptr<DeviceBuffer<std::int32_t>>;
DeviceRun<std::int32_t> guarded(std::function<void(std::int32_t*)> run, const Keys& keys, const Problem& p,
                                std::size_t segment, bool pairs = false) {
  const std::size_t n = keys->size();
  return sort_with_fresh_keys<std::int32_t>(
      std::move(run), keys, [input = lab::input_of(p), n](std::uint64_t seed) { return sm::make_keys(input, n, seed); },
      Int32Order{}, segment, pairs ? std::optional<std::size_t>(n) : std::nullopt);
}

using TileFn = void (*)(const std::int32_t*, std::int32_t*, std::size_t, ShearWorkspace&);
Stage::Code tile_stage(TileFn fn) {
  return device_stage<std::int32_t, TileData>(kTiles, [fn](const std::shared_ptr<const TileData>& d, const Problem& p) {
    auto in = upload_input(d->keys);
    auto ws = workspace(p, 1 << 16);  // the tile stages need none: a small arena, guarded all the same
    return guarded([fn, in, ws](std::int32_t* out) { fn(in->data(), out, in->size(), ws->fresh()); }, in, p, kTileKeys);
  });
}

using MergeFn = void (*)(const std::int32_t*, const std::uint32_t*, std::int32_t*, std::uint32_t*, std::size_t,
                         ShearWorkspace&);
Stage::Code merge_stage(MergeFn fn) {
  return device_stage<std::int32_t, SortData>(sort_output(false), [fn](const std::shared_ptr<const SortData>& d,
                                                                       const Problem& p) {
    const std::size_t n = d->keys.size();
    if (d->pairs && n >= 0xFFFFFFFFull) throw UsageError("--param pairs=1 needs n < 2^32 - 1 (positions are 32-bit)");
    auto keys = upload_input(d->keys);
    auto values = upload(d->values);
    auto ws = workspace(p, shearsort_workspace_bytes(n, lab::config_for(p)));
    const bool pairs = d->pairs;
    return guarded(
        [fn, keys, values, ws, n, pairs](std::int32_t* out) {
          fn(keys->data(), pairs ? values->data() : nullptr, out,
             pairs ? reinterpret_cast<std::uint32_t*>(out + n) : nullptr, n, ws->fresh());
        },
        keys, p, n, pairs);
  });
}

// ---- the baselines (shearsort_cub.cu; keys only) -------------------------------------------------------------

using CubTileFn = void (*)(const std::int32_t*, std::int32_t*, std::size_t);
Stage::Code cub_tiles(CubTileFn fn) {
  return device_stage<std::int32_t, TileData>(kTiles, [fn](const std::shared_ptr<const TileData>& d, const Problem& p) {
    auto in = upload_input(d->keys);
    return guarded([fn, in](std::int32_t* out) { fn(in->data(), out, in->size()); }, in, p, kTileKeys);
  });
}

// CUB's temporary storage sized and allocated here, untimed.
Stage::Code cub_sort(CubSort which) {
  return device_stage<std::int32_t, SortData>(sort_output(true), [which](const std::shared_ptr<const SortData>& d,
                                                                         const Problem& p) {
    auto in = upload_input(d->keys);
    const std::size_t bytes = cub_sort_temp_bytes(which, d->keys.size());
    auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(bytes, 16));
    return guarded([which, in, temp, bytes](std::int32_t* out) { sort_cub(which, in->data(), out, in->size(), temp->data(), bytes); },
                   in, p, in->size());
  });
}

Stage::Code thrust_sort() {
  return device_stage<std::int32_t, SortData>(sort_output(true), [](const std::shared_ptr<const SortData>& d,
                                                                    const Problem& p) {
    auto in = upload_input(d->keys);
    auto ws = workspace(p, thrust_workspace_bytes(d->keys.size()));
    return guarded([in, ws](std::int32_t* out) { sort_thrust(in->data(), out, in->size(), ws->fresh()); }, in, p, in->size());
  });
}

// ---- the model: launches R(n) and paths ------------------------------------------------------------------------

LaunchModel launches(sm::Stage s) {
  return [s](const Problem& p) -> std::optional<long> { return sm::launches(s, p.n, lab::config_for(p).d); };
}
PathModel paths(sm::Stage s) {
  return [s](const Problem& p) { return sm::paths(s, p.n, lab::shape_for(p)); };
}

}  // namespace

Lab make_lab() {
  Lab lab = lab_from_manifest();
  using S = sm::Stage;
  lab.bind("cpu", cpu_sort());
  lab.bind("cpu-shear", cpu_shear());
  auto student = [&](S s, Stage::Code code) -> Stage& {
    return lab.bind(sm::to_string(s), std::move(code)).launches(launches(s)).reaches(paths(s));
  };
  student(S::tile_bitonic, tile_stage(&tile_bitonic));
  student(S::tile_shear_naive, tile_stage(&tile_shear_naive));
  student(S::tile_shear_transpose, tile_stage(&tile_shear_transpose));
  student(S::tile_shear_registers, tile_stage(&tile_shear_registers));
  student(S::tile_shear_padded, tile_stage(&tile_shear_padded));
  student(S::merge_pairwise, merge_stage(&merge_pairwise));
  student(S::merge_dway, merge_stage(&merge_dway));
  // The library's launch counts are the library's business (no model).
  lab.bind("tile-cub-merge", cub_tiles(&tile_cub_merge));
  lab.bind("tile-cub-radix", cub_tiles(&tile_cub_radix));
  lab.bind("sort-cub-merge", cub_sort(CubSort::merge));
  lab.bind("sort-cub-merge-stable", cub_sort(CubSort::merge_stable));
  lab.bind("sort-cub-radix", cub_sort(CubSort::radix));
  lab.bind("sort-thrust", thrust_sort());
  lab.experiments = shearsort::make_experiments();
  // The knobs' names in shearsort_lab.hpp are lab.toml's: a reordered manifest is caught here.
  const Knob* input = lab.find_knob("input");
  const Knob* base = lab.find_knob("base");
  if (!input || input->values != std::vector<std::string>{"dist", "zero-one", "final-phase", "column-sorted", "extremes"})
    throw std::logic_error("labs/shearsort/lab.toml: knob input must list dist, zero-one, final-phase, column-sorted, "
                           "extremes (shearsort_lab.hpp)");
  if (!base || base->values != std::vector<std::string>(std::begin(shearsort::lab::kBaseNames), std::end(shearsort::lab::kBaseNames)))
    throw std::logic_error("labs/shearsort/lab.toml: knob base must list bitonic, naive, transpose, registers, padded "
                           "(TileVariant's order)");
  return lab;
}

}  // namespace gpulab
