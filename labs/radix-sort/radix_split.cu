// Your file, part 1 of 3: the CPU sorts and the 1-bit LSD sorts, one pass per bit.
//   cpu               sort_cpu               std::stable_sort on the ordered key (the oracle's method)
//   cpu-lsd           sort_cpu_lsd           a host LSD radix sort, r = 8: the CPU speed reference
//   find-max          find_key_bits          seed 003's global tree: the bits K that need sorting
//   split-global      sort_split_global      seed 003 as written: map, global scan, host read, scatter
//   split-scan-fused  sort_split_scan_fused  the same split on a fast scan, 2 launches per bit
//   split-onepass     sort_split_onepass     one count for every bit, then one launch per bit
// Replace each gpulab::not_implemented(...) with your code; the interface is radix_sort.cuh (read
// its contract first: the key order, end_bit, pairs, where the output must land).
//
// The split (seed 003): for bit b, a key whose bit is 0 ("false") goes to f(i), the number of false
// keys before it; a key whose bit is 1 goes to totalFalses + (i - f(i)). Why is that stable, and
// why does LSD sorting fail if any pass is not?
#include <cuda_runtime.h>

#include <cstdint>

#include "gpulab/cuda_check.hpp"
#include "gpulab/lab.hpp"
#include "radix_sort.cuh"

namespace radix_sort {

// ---- 1. cpu and cpu-lsd ----------------------------------------------------------------------------

void sort_cpu(const std::uint32_t* keys, std::uint32_t* keys_out, const std::uint32_t* values,
              std::uint32_t* values_out, std::size_t n, const SortConfig& config) {
  // Sort the indices 0..n-1 with std::stable_sort, comparing to_ordered(key, config.key) masked to
  // its bits [0, config.end_bit); then gather keys (and values, when not null). Never compare the
  // keys as floats: what does operator< do with a NaN?
  (void)keys, (void)keys_out, (void)values, (void)values_out, (void)n, (void)config;
  gpulab::not_implemented("cpu");
}

void sort_cpu_lsd(const std::uint32_t* keys, std::uint32_t* keys_out, const std::uint32_t* values,
                  std::uint32_t* values_out, std::size_t n, const SortConfig& config) {
  // pass_count(end_bit, 8) passes of 8-bit digits (pass_bits: the last may be shorter): count the
  // digits, scan the 256 counts, scatter in input order. Ping-pong between the output and a
  // temporary so that the last pass writes keys_out; zero passes still write the output.
  (void)keys, (void)keys_out, (void)values, (void)values_out, (void)n, (void)config;
  gpulab::not_implemented("cpu-lsd");
}

// ---- 2. find-max (seed 003's kernFindMax) -----------------------------------------------------------
//
// Seed 003 finds the maximum with a tree in global memory, one launch per level, and sorts
// ceil(log2(max)) bits. Try that formula on max = 64, 1 and 0, and on negative i32 keys, before
// you use it. What you need is the bits above which all ordered keys agree: combine (OR, AND) pairs
// instead of a max, and K = span_bits(OR, AND). Make the tree work for every n (which elements does
// seed 003's loop reach when n is not a power of two?): let node j of level d live at its last
// existing element, min((j + 1) 2^d, n) - 1. Level 1 reads the keys; the last level writes
// *d_span; the nodes of the levels in between need n uint2 (find_key_bits: ws.take<uint2>(n)).
// Launches: max(1, ceil(log2 n)); n == 0: one launch writes the identities {0, 0xffffffff, 0, 0}.
// Threads per block: ws.config.block. Put the tree in a helper that takes its node array: split-global
// calls it too, and there the workspace has no room for n more uint2 (see split-global's note).
void find_key_bits(const std::uint32_t* d_keys, std::size_t n, BitSpan* d_span, SortWorkspace& ws) {
  (void)d_keys, (void)n, (void)d_span, (void)ws;
  gpulab::not_implemented("find-max");
}

// ---- 3. split-global (seed 003 as written) ----------------------------------------------------------
//
// Find K with your find-max tree and read it back (the host loops over the bits). The workspace
// (sort_workspace_bytes: 6n words with pairs) holds split-global's own arrays and nothing more: take
// b and t as one piece of n uint2 and lend it to the tree first (it is free until the first map);
// find_key_bits' own ws.take<uint2>(n) on top of them throws length_error. Then for each bit
// b < min(K, end_bit), with ws.config.block threads per block:
//   map       b[i] = bit b of key i, f[i] = 1 - b[i]
//   host      save f[n-1] ("we save the last value of f_arr": a cudaMemcpy to the host)
//   scan      seed 003's work-efficient exclusive scan of f in global memory: an up-sweep and a
//             down-sweep, one launch per level, over the next power of two (pad f with 0)
//   host      totalFalses = saved f[n-1] + scanned f[n-1] (a second cudaMemcpy)
//   t         t[i] = i - f[i] + totalFalses
//   scatter   out[b[i] ? t[i] : f[i]] = in[i]
// The only stage allowed to copy to the host: count the launches and the synchronisations it costs
// (radix_sort_model.hpp). Ping-pong the keys (and values) so that the last pass writes d_keys_out,
// whatever the parity of the pass count, and never write d_keys.
void sort_split_global(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                       std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  (void)d_keys, (void)d_keys_out, (void)d_values, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("split-global");
}

// ---- 4. split-scan-fused ------------------------------------------------------------------------------
//
// The same passes (all end_bit bits: no find-max, no host read), 2 launches per bit: a single-pass
// scan with decoupled look-back (the scan lab's) whose load computes the false flags itself (003's
// map kernel and its b array disappear) and whose last tile writes totalFalses on the device; then
// a scatter that reads key i and f[i]. A warp can scan 32 flags in two instructions: __ballot_sync
// and __popc of the lanes below. Take tile numbers from an atomic counter, not blockIdx.x: why
// does the look-back then never wait for a tile that has not started?
void sort_split_scan_fused(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                           std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  (void)d_keys, (void)d_keys_out, (void)d_values, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("split-scan-fused");
}

// ---- 5. split-onepass ---------------------------------------------------------------------------------
//
// Every bit's totalFalses can be known before the first pass: one launch counts the one bits of
// all end_bit bits at once (the Onesweep idea with r = 1). Then one launch per bit: each tile ranks
// its false keys (ballots), looks back for the false keys of the tiles before it, and writes every
// key straight from its register to f or totalFalses + (i - f). 1 + end_bit launches; clear the
// look-back state of all passes with one cudaMemsetAsync.
void sort_split_onepass(const std::uint32_t* d_keys, std::uint32_t* d_keys_out, const std::uint32_t* d_values,
                        std::uint32_t* d_values_out, std::size_t n, SortWorkspace& ws) {
  (void)d_keys, (void)d_keys_out, (void)d_values, (void)d_values_out, (void)n, (void)ws;
  gpulab::not_implemented("split-onepass");
}

}  // namespace radix_sort
