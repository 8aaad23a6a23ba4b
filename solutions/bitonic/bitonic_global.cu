// Reference, part 1 of 5: the network itself, one launch per (merge level, stride).
//   cpu          sort_cpu           std::sort (the oracle)
//   cpu-network  sort_cpu_network   seed 002 Algorithm 1 on the host, oriented as config.pad says
//   phase0       sort_phase0        seed 002 §III-A: one compare-exchange per thread, global memory
//   phase1       sort_phase1        seed 002 §III-B: the same launches, each block's keys staged
//                                   through shared memory
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "bitonic.cuh"
#include "bitonic_device.cuh"
#include "gpulab/cuda_check.hpp"

namespace bitonic {

using detail::Orientation;

// ---- 1. cpu and cpu-network -------------------------------------------------------------------------------

void sort_cpu(const std::int32_t* in, std::int32_t* out, std::size_t n) {
  std::copy(in, in + n, out);
  std::sort(out, out + n);
}

// Seed 002 Algorithm 1 (outer loop: merge size k = 2^s; middle: stride j = 2^e; inner: every pair),
// run on the host as the GPU stages run it. pad = sentinel sorts a padded copy of 2^L keys with
// alternating directions; pad = virtual sorts the n keys in place with mirrored levels and skips
// every comparator whose upper key is >= n (bitonic_device.cuh, "orientation").
void sort_cpu_network(const std::int32_t* in, std::int32_t* out, std::size_t n, const SortConfig& config) {
  using Key = std::int32_t;
  if (n == 0) return;
  const int L = ceil_log2(n);
  const auto less = [](Key a, Key b) { return KeyOrder<Key>::less(a, b); };
  if (config.pad == Pad::sentinel) {
    std::vector<Key> a(std::size_t{1} << L, KeyOrder<Key>::sentinel());
    std::copy(in, in + n, a.begin());
    for (int s = 1; s <= L; ++s)
      for (int e = s - 1; e >= 0; --e)
        for (std::size_t p = 0; p < a.size() / 2; ++p) {
          const std::size_t lo = detail::lower_of_pair(p, e), hi = lo + (std::size_t{1} << e);
          const bool ascending = detail::ascending_at(lo, s);
          if (ascending ? less(a[hi], a[lo]) : less(a[lo], a[hi])) std::swap(a[lo], a[hi]);
        }
    std::copy(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), out);
    return;
  }
  std::copy(in, in + n, out);
  for (int s = 1; s <= L; ++s)
    for (int e = s - 1; e >= 0; --e)
      for (std::size_t p = 0; p < detail::groups_below(n, e, 1); ++p) {
        const std::size_t lo = detail::lower_of_pair(p, e), hi = detail::partner_of(lo, e, e == s - 1);
        if (hi < n && less(out[hi], out[lo])) std::swap(out[lo], out[hi]);
      }
}

// ---- 2. phase0 ------------------------------------------------------------------------------------------------------
//
// Every (level, stride) is a global barrier, hence a launch: R0 = L(L+1)/2 (300 at 2^24). Thread p
// orders pair p; the grid covers the pairs (pad = virtual: those with a real lower key).

template <class Key, Orientation O>
void run_global_steps(const std::vector<detail::Step>& steps, detail::Chain<Key>& chain, int block) {
  for (const detail::Step& step : steps) {
    const detail::Pass<Key> pass = chain.next();
    if (step.kind == detail::StepKind::copy) detail::launch_copy(pass, chain.extent());
    else detail::launch_global_step<Key, O>(pass, chain.extent(), step.level, step.hi, block);
  }
}

void sort_phase0(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  using Key = std::int32_t;
  const int block = detail::checked_block(ws);
  const auto steps = detail::plan_steps(n, 0, INT_MAX, 1);
  if (steps.empty()) return;
  detail::Chain<Key> chain(d_in, d_out, n, ws, steps.size());
  if (chain.orientation() == Orientation::mirrored) run_global_steps<Key, Orientation::mirrored>(steps, chain, block);
  else run_global_steps<Key, Orientation::alternating>(steps, chain, block);
}

// ---- 3. phase1 ------------------------------------------------------------------------------------------------------
//
// Seed 002 §III-B stages each pair through shared memory and measures +4 %. Here a block stages
// the 2B keys of its B pairs with coalesced loads (slot l -> the key of pair (l without bit el),
// upper iff bit el of l, el = min(e, log2 B)), orders pair tau in shared memory, and writes the
// slots back. The same global bytes move as in phase 0 and nothing is reused: the shared round
// trip, two barriers and, for strides < 32, 2-way bank conflicts are pure cost.

template <class Key, Orientation O>
__global__ void staged_step_kernel(detail::Pass<Key> pass, int level, int e, int block_log2) {
  const detail::SharedKeys<Key> s = detail::dynamic_shared_keys<Key>();
  const int block = static_cast<int>(blockDim.x), tau = static_cast<int>(threadIdx.x);
  const int el = e < block_log2 ? e : block_log2;
  const std::size_t first_pair = blockIdx.x * std::size_t(block);
  const bool mirror = O == Orientation::mirrored && e == level - 1;
  const auto global_of = [&](int slot) {
    const int q = ((slot >> (el + 1)) << el) | (slot & ((1 << el) - 1));
    const std::size_t lo = detail::lower_of_pair(first_pair + static_cast<std::size_t>(q), e);
    return ((slot >> el) & 1) ? detail::partner_of(lo, e, mirror) : lo;
  };
  s.store(tau, pass.load(global_of(tau)));
  s.store(block + tau, pass.load(global_of(block + tau)));
  __syncthreads();
  const int lo = detail::lower_in_tile(tau, el), hi = lo + (1 << el);
  Key a = s.load(lo);
  Key b = s.load(hi);
  const std::size_t global_lo = detail::lower_of_pair(first_pair + static_cast<std::size_t>(tau), e);
  detail::compare_exchange(a, b, O == Orientation::mirrored || detail::ascending_at(global_lo, level));
  s.store(lo, a);
  s.store(hi, b);
  __syncthreads();
  pass.store(global_of(tau), s.load(tau));
  pass.store(global_of(block + tau), s.load(block + tau));
}

template <class Key, Orientation O>
void run_staged_steps(const std::vector<detail::Step>& steps, detail::Chain<Key>& chain, int block) {
  const int block_log2 = detail::log2_of(block);
  const std::size_t shared = 2 * static_cast<std::size_t>(block) * sizeof(Key);
  for (const detail::Step& step : steps) {
    const detail::Pass<Key> pass = chain.next();
    if (step.kind == detail::StepKind::copy) {
      detail::launch_copy(pass, chain.extent());
      continue;
    }
    const std::size_t pairs = detail::groups_below(chain.extent(), step.hi, 1);
    staged_step_kernel<Key, O><<<detail::grid_for(pairs, block), block, shared>>>(pass, step.level, step.hi, block_log2);
    GPULAB_CHECK_LAUNCH();
  }
}

void sort_phase1(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, SortWorkspace& ws) {
  using Key = std::int32_t;
  const int block = detail::checked_block(ws);
  const auto steps = detail::plan_steps(n, 0, INT_MAX, 1);
  if (steps.empty()) return;
  detail::Chain<Key> chain(d_in, d_out, n, ws, steps.size());
  if (chain.orientation() == Orientation::mirrored) run_staged_steps<Key, Orientation::mirrored>(steps, chain, block);
  else run_staged_steps<Key, Orientation::alternating>(steps, chain, block);
}

}  // namespace bitonic
