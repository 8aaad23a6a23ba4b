// The bitonic lab's harness: the code of each stage of lab.toml (the facts are there), the
// experiments in experiments.cu, the inputs, the oracle, its verdict and the model in
// bitonic_model.cpp, the CUB and Thrust baselines in bitonic_cub.cu. It prepares seeded int32 keys,
// calls the implementation (yours or the reference) and judges the output against std::sort. Do not
// edit.
#include <cuda_runtime.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <span>
#include <string>

#include "bitonic.cuh"
#include "bitonic_lab.hpp"
#include "bitonic_model.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/fresh_input.cuh"
#include "gpulab/stages.hpp"

namespace bitonic {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace bitonic::lab {

model::Input input_of(const gpulab::Problem& p) { return model::input_for(p.distribution, p.param("input", dist)); }

SortConfig config_for(const gpulab::Problem& p) {
  SortConfig c;
  c.block = static_cast<int>(p.param("block", c.block));
  c.pad = p.param("pad", sentinel) == virtual_pad ? Pad::virtual_inf : Pad::sentinel;
  return c;
}

model::Shape shape_for(const gpulab::Problem& p) {
  const SortConfig c = config_for(p);
  model::Shape s;
  s.block = c.block;
  s.pad = c.pad;
  return s;
}

}  // namespace bitonic::lab

namespace gpulab {

namespace {

using namespace bitonic;
namespace bm = bitonic::model;

// ---- the problem: seeded keys and std::sort's answer ---------------------------------------------------------

struct SortData {
  std::vector<std::int32_t> keys, expected;
};

std::shared_ptr<const SortData> sort_data(const Problem& p) {
  return problem_data<SortData>(p.only({"input"}), [&] {
    SortData d{bm::make_keys(lab::input_of(p), p.n, p.seed), {}};
    d.expected = bm::sorted_copy(d.keys);
    return d;
  });
}

// Every stage's output: the n keys sorted; GB/s counts 8n bytes (every key read and written once:
// what a sort must move at least; the model's 2 x 4 x 2^L x R is in the experiments).
const ArrayOutput<std::int32_t, SortData> kSorted{
    sort_data, [](const SortData& d) { return std::span<const std::int32_t>(d.expected); },
    [](const SortData& d) { return 8.0 * static_cast<double>(d.keys.size()); },
    [](const SortData& d, std::span<const std::int32_t> got) { return bm::check_sorted(d.keys, d.expected, got); },
    [](const SortData& d) { return std::optional<double>(static_cast<double>(d.keys.size())); },
    [](const SortData& d) { return d.keys; }};

// The scratch a GPU stage gets (bitonic.cuh), with the problem's knobs.
std::shared_ptr<ScratchOwner<SortWorkspace>> workspace(const Problem& p, std::size_t bytes) {
  const SortConfig config = lab::config_for(p);
  return scratch<SortWorkspace>(bytes, [&](SortWorkspace& ws) {
    ws.config = config;
    ws.multiprocessors = multiprocessors();
  });
}

// ---- the stages' code --------------------------------------------------------------------------------------------

Stage::Code cpu_sort() {
  return host_stage<std::int32_t, SortData>(kSorted, [](const SortData& d, std::int32_t* out) {
    sort_cpu(d.keys.data(), out, d.keys.size());
  });
}

// cpu-network reads --param pad: the host stage is made per problem.
Stage::Code cpu_network() {
  return {[](const Problem& p) {
    const SortConfig config = lab::config_for(p);
    return host_stage<std::int32_t, SortData>(kSorted, [config](const SortData& d, std::int32_t* out) {
             sort_cpu_network(d.keys.data(), out, d.keys.size(), config);
           }).prepare(p);
  }};
}

// The keys on the device, and the replay guard: each timed run sorts a fresh draw of the problem's
// keys (bm::make_keys, another seed), judged on the device (gpulab/fresh_input.cuh).
using Keys = std::shared_ptr<DeviceBuffer<std::int32_t>>;
DeviceRun<std::int32_t> guarded(std::function<void(std::int32_t*)> run, const Keys& keys, const Problem& p) {
  return sort_with_fresh_keys<std::int32_t>(
      std::move(run), keys, [input = lab::input_of(p), n = keys->size()](std::uint64_t seed) { return bm::make_keys(input, n, seed); },
      Int32Order{});
}

using SortFn = void (*)(const std::int32_t*, std::int32_t*, std::size_t, SortWorkspace&);
Stage::Code gpu_stage(SortFn fn) {
  return device_stage<std::int32_t, SortData>(kSorted, [fn](const std::shared_ptr<const SortData>& d, const Problem& p) {
    auto in = upload_input(d->keys);
    auto ws = workspace(p, scratch_bytes(d->keys.size()));
    return guarded([fn, in, ws](std::int32_t* out) { fn(in->data(), out, in->size(), ws->fresh()); }, in, p);
  });
}

// ---- the baselines (bitonic_cub.cu) ---------------------------------------------------------------------------------

// CUB's temporary storage sized and allocated here, untimed.
Stage::Code cub_sort(CubSort which) {
  return device_stage<std::int32_t, SortData>(kSorted, [which](const std::shared_ptr<const SortData>& d, const Problem& p) {
    auto in = upload_input(d->keys);
    const std::size_t bytes = cub_sort_temp_bytes(which, d->keys.size());
    auto temp = std::make_shared<DeviceBuffer<unsigned char>>(std::max<std::size_t>(bytes, 16));
    return guarded([which, in, temp, bytes](std::int32_t* out) { sort_cub(which, in->data(), out, in->size(), temp->data(), bytes); },
                   in, p);
  });
}

Stage::Code thrust_sort() {
  return device_stage<std::int32_t, SortData>(kSorted, [](const std::shared_ptr<const SortData>& d, const Problem& p) {
    auto in = upload_input(d->keys);
    auto ws = workspace(p, thrust_workspace_bytes(d->keys.size()));
    return guarded([in, ws](std::int32_t* out) { sort_thrust(in->data(), out, in->size(), ws->fresh()); }, in, p);
  });
}

// ---- the model: launches R(n) and paths ------------------------------------------------------------------------

LaunchModel launches(bm::Stage s) {
  return [s](const Problem& p) -> std::optional<long> { return bm::launches(s, p.n, lab::shape_for(p)); };
}
PathModel paths(bm::Stage s) {
  return [s](const Problem& p) { return bm::paths(s, p.n, lab::shape_for(p)); };
}

}  // namespace

Lab make_lab() {
  Lab lab = lab_from_manifest();
  using S = bm::Stage;
  lab.bind("cpu", cpu_sort());
  lab.bind("cpu-network", cpu_network());
  auto student = [&](S s, Stage::Code code) -> Stage& {
    return lab.bind(bm::to_string(s), std::move(code)).launches(launches(s)).reaches(paths(s));
  };
  student(S::phase0, gpu_stage(&sort_phase0));
  student(S::phase1, gpu_stage(&sort_phase1));
  student(S::phase2, gpu_stage(&sort_phase2));
  student(S::phase3, gpu_stage(&sort_phase3));
  student(S::phase4, gpu_stage(&sort_phase4));
  student(S::phase4_conflict_free, gpu_stage(&sort_phase4_conflict_free));
  student(S::phase5_fused, gpu_stage(&sort_phase5_fused));
  // The library's launch counts are the library's business (no model).
  lab.bind("cub-merge-sort", cub_sort(CubSort::merge));
  lab.bind("cub-radix-sort", cub_sort(CubSort::radix));
  lab.bind("thrust-sort", thrust_sort());
  lab.experiments = bitonic::make_experiments();
  // The knobs' names in bitonic_lab.hpp are lab.toml's: a reordered manifest is caught here.
  const Knob* input = lab.find_knob("input");
  const Knob* pad = lab.find_knob("pad");
  if (!input || input->values != std::vector<std::string>(std::begin(bitonic::lab::kInputNames), std::end(bitonic::lab::kInputNames)))
    throw std::logic_error("labs/bitonic/lab.toml: knob input must list dist, organ-pipe, int-max, negative (bitonic_lab.hpp)");
  if (!pad || pad->values != std::vector<std::string>(std::begin(bitonic::lab::kPadNames), std::end(bitonic::lab::kPadNames)))
    throw std::logic_error("labs/bitonic/lab.toml: knob pad must list sentinel, virtual (bitonic_lab.hpp)");
  return lab;
}

}  // namespace gpulab
