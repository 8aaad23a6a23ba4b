// A host simulation of the merge-dway reference (solutions/shearsort/merge_dway.cu): its partition
// and heap kernels, pulled out of the file as written (extract.py), run lane by lane as fibers
// (shim/cuda_shim.hpp: every warp intrinsic is a rendezvous of the warp's 32 lanes, checked for
// divergence and deadlock; shared memory is poisoned before every block), with merge_dway's host
// flow around them. The output is checked against std::stable_sort. The keys are the lab's own
// (model::make_keys), so a case here is the grader's case of the same (input, n, seed, d, chunk).
//
//   dway-sim DIST INPUT N D PAIRS CHUNK SEED   -> "ok ..." (exit 0) or "FAIL ..." (exit 1)
//   (DIST: a case's distribution; INPUT: its --param input, lab.toml's name, "dist" by default)
//
// What it does not check: the memory model (races between lanes), bank conflicts, timing, and
// anything the CUDA compiler does. A GPU still decides (ctest's shearsort tests, the grade).
#include "cuda_shim.hpp"
#include "shear_device.cuh"
#include "shearsort.cuh"
#include "shearsort_model.hpp"
#include "extracted.inc"

#include <numeric>
#include <optional>
#include <string>

#include "gpulab/data.hpp"

namespace shearsort {
namespace {

constexpr int kSimMultiprocessors = 132;  // H100 and H200: the chunk rule's target

template <class IO>
void sim_heap(IO io, std::size_t n, std::size_t run, int d, std::size_t chunk, const std::uint32_t* cuts,
              std::size_t tasks) {
  const int warps = dway_warps_per_block(d);
  const std::size_t smem = std::size_t(warps) * heap_bytes_per_warp(d, sizeof(typename IO::Key), kLaneKeys);
  if (smem > 227 * 1024) sim::fail("heap block above 227 KiB of shared memory", 0);
  sim::launch(unsigned(ceil_div(tasks, warps)), warps * kWarp, smem,
              [&] { dway_heap_kernel<IO, kLaneKeys>(io, n, run, d, chunk, cuts, tasks); });
}

void sim_partition(const std::int32_t* keys, std::size_t n, std::size_t run, int d, std::size_t chunk,
                   std::size_t tasks, std::uint32_t* cuts) {
  const unsigned blocks = unsigned(ceil_div(tasks, kPartitionWarps));
  const int threads = kPartitionWarps * kWarp;
  auto go = [&](auto slots) {
    sim::launch(blocks, threads, 0, [&] { dway_partition_kernel<decltype(slots)::value>(keys, n, run, d, chunk, tasks, cuts); });
  };
  if (d <= 32) go(std::integral_constant<int, 1>{});
  else if (d <= 64) go(std::integral_constant<int, 2>{});
  else if (d <= 128) go(std::integral_constant<int, 4>{});
  else go(std::integral_constant<int, 8>{});
}

// merge_dway's host flow: the 1024-key tiles stable-sorted on the CPU (what the tile stage hands
// the merge), then per pass the partition and the heap, ping-ponging so the last pass writes `out`.
void sim_merge_dway(const std::vector<std::int32_t>& in, const std::vector<std::uint32_t>* vin,
                    std::vector<std::int32_t>& out, std::vector<std::uint32_t>* vout, int d, std::size_t requested) {
  const std::size_t n = in.size();
  const bool pairs = vin != nullptr;
  out.assign(n, 0x5a5a5a5a);
  if (pairs) vout->assign(n, 0xdeadbeef);
  if (n == 0) return;
  int passes = 0;
  for (std::size_t run = kTileKeys; run < n; run *= d) ++passes;
  std::vector<std::int32_t> scratch(n, 0x7e7e7e7e);
  std::vector<std::uint32_t> vscratch(pairs ? n : 0, 0xdeadbeef);
  std::int32_t* keys[2] = {out.data(), scratch.data()};
  std::uint32_t* values[2] = {pairs ? vout->data() : nullptr, pairs ? vscratch.data() : nullptr};
  std::size_t max_tasks = 0;
  for (std::size_t run = kTileKeys; run < n; run *= d)
    max_tasks = std::max(max_tasks, ceil_div(n, dway_chunk_keys(n, run, d, kSimMultiprocessors, requested)));
  std::vector<std::uint32_t> cuts(max_tasks * d + 1, 0xcccccccc);
  int cur = passes % 2;
  for (std::size_t t = 0; t < n; t += kTileKeys) {
    const std::size_t e = std::min(n, t + kTileKeys);
    std::vector<std::size_t> idx(e - t);
    std::iota(idx.begin(), idx.end(), t);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return in[a] < in[b]; });
    for (std::size_t i = t; i < e; ++i) {
      keys[cur][i] = in[idx[i - t]];
      if (pairs) values[cur][i] = (*vin)[idx[i - t]];
    }
  }
  for (std::size_t run = kTileKeys; run < n; run *= d) {
    const std::size_t chunk = dway_chunk_keys(n, run, d, kSimMultiprocessors, requested);
    const std::size_t tasks = ceil_div(n, chunk);
    sim_partition(keys[cur], n, run, d, chunk, tasks, cuts.data());
    if (pairs)
      sim_heap(DwayPairsIO{keys[cur], values[cur], keys[cur ^ 1], values[cur ^ 1], 0}, n, run, d, chunk, cuts.data(), tasks);
    else
      sim_heap(DwayKeysIO{keys[cur], keys[cur ^ 1]}, n, run, d, chunk, cuts.data(), tasks);
    cur ^= 1;
  }
}

}  // namespace
}  // namespace shearsort

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s DIST INPUT N D PAIRS CHUNK SEED (a case's distribution and --param input)\n", argv[0]);
    return 2;
  }
  namespace sm = shearsort::model;
  // The runner's choice of keys: the input knob's own kind, else the distribution's (input_for).
  const auto dist = gpulab::parse_distribution(argv[1]);
  const std::string knob = argv[2];
  const auto input = knob == "dist" ? (dist ? std::optional(sm::input_for(*dist, 0)) : std::nullopt) : sm::parse_input(knob);
  if (!dist || !input) {
    std::fprintf(stderr, "unknown distribution '%s' or input '%s'\n", argv[1], argv[2]);
    return 2;
  }
  const std::size_t n = std::strtoull(argv[3], nullptr, 0);
  const int d = std::atoi(argv[4]);
  const bool pairs = std::atoi(argv[5]) != 0;
  const std::size_t chunk = std::strtoull(argv[6], nullptr, 0);
  const unsigned long long seed = std::strtoull(argv[7], nullptr, 0);
  if (d < shearsort::kMinFanIn || d > shearsort::kMaxFanIn || (d & (d - 1)) != 0) {
    std::fprintf(stderr, "d = %d: a power of two in [2, 256]\n", d);
    return 2;
  }
  const auto in = sm::make_keys(*input, n, seed);
  const auto vin = sm::index_values(n);
  std::vector<std::int32_t> out;
  std::vector<std::uint32_t> vout;
  shearsort::sim_merge_dway(in, pairs ? &vin : nullptr, out, pairs ? &vout : nullptr, d, chunk);
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return in[a] < in[b]; });
  const std::string what_s = std::string(argv[1]) + "/" + knob;
  const char* what = what_s.c_str();
  for (std::size_t i = 0; i < n; ++i) {
    if (out[i] != in[idx[i]] || (pairs && vout[i] != vin[idx[i]])) {
      std::printf("FAIL %s n=%zu d=%d pairs=%d chunk=%zu seed=%llu: first wrong output %zu (key %d, want %d; value %u, want %u)\n",
                  what, n, d, int(pairs), chunk, seed, i, out[i], in[idx[i]], pairs ? vout[i] : 0u, pairs ? vin[idx[i]] : 0u);
      return 1;
    }
  }
  std::printf("ok %s n=%zu d=%d pairs=%d chunk=%zu seed=%llu (%lld warp rendezvous)\n", what, n, d, int(pairs), chunk, seed,
              sim::g_syncs);
  return 0;
}
