// The machine model's parameters, measured on the current GPU (seed 000 §2, eq. 1):
//   T(n) = sum over rounds k of ( t_k(n) + lambda * q_k(n) + sigma ).
// lambda (latency of one block access), B (the block: the access size at which global-memory
// throughput saturates) and sigma (a global barrier = a kernel boundary) are measured here; p, w,
// b and M come from the device's properties. The bandwidth experiments of seed 000 §6.1 and
// Appendix A (setup 1 / setup 2, CTAs per SM x warps per CTA, vector width) are here too, so that
// the transpose lab's experiments and `gpulab info` share one implementation.
//
// Every function needs a GPU (it throws CudaError otherwise); this header has no CUDA syntax and
// can be included from .cpp files.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/table.hpp"

namespace gpulab {

// ---- lambda: latency by pointer chase ---------------------------------------------------------

struct LatencyResult {
  std::size_t footprint_bytes = 0;  // bytes the chase wanders over
  std::size_t stride_bytes = 0;     // distance between consecutive nodes in memory
  long hops = 0;                    // dependent loads timed
  double ns_per_hop = 0;            // from the GPU's global timer
  double cycles_per_hop = 0;        // from clock64() on the SM that runs the chase
  double sm_clock_ghz() const { return ns_per_hop > 0 ? cycles_per_hop / ns_per_hop : 0; }
};

// One thread follows a random cyclic permutation (Sattolo's algorithm, seeded) of
// footprint / stride nodes: every load depends on the one before, so each hop costs one full
// latency. A footprint far above the L2 measures DRAM (lambda); small ones show L1 and L2.
LatencyResult measure_latency(std::size_t footprint_bytes, long hops, std::size_t stride_bytes = 256,
                              std::uint64_t seed = 1);

// ---- B: the block size ------------------------------------------------------------------------

struct BlockSizePoint {
  std::size_t access_bytes = 0;  // contiguous bytes read at each random position
  double gbps = 0;               // useful bytes read per second
};

// Reads a buffer of `buffer_bytes` as chunks of `access_bytes` contiguous bytes visited in a
// scrambled order (a bijection, so every byte is read once) by a full GPU. Small chunks waste
// most of every DRAM transfer; throughput saturates once a chunk covers a whole block.
BlockSizePoint measure_block_read(std::size_t access_bytes, std::size_t buffer_bytes, int repetitions = 5);

// The access sizes of the sweep, 4 B ... 4 KiB, and the smallest one reaching `fraction` of the
// best throughput seen.
std::vector<std::size_t> block_size_sweep_sizes();
std::size_t saturating_block_bytes(const std::vector<BlockSizePoint>& points, double fraction = 0.9);

// ---- sigma: the barrier -----------------------------------------------------------------------

struct BarrierResult {
  int kernels = 0;            // empty kernels in the chain
  int ctas = 0;               // CTAs per kernel (8 per SM, the seed's p = 8P)
  double per_kernel_us = 0;   // stream launches, back to back
  double per_graph_node_us = 0;  // the same chain captured once in a CUDA graph
};

// A chain of `kernels` empty kernels, each of 8 CTAs per SM: every boundary between two of them
// is a global barrier (seed 000 §2.1, "Thread synchronization").
BarrierResult measure_barrier(int kernels = 2000, int repetitions = 5);

// The two numbers a launches-and-bytes model predicts with, T = R sigma + bytes / roof: sigma
// (measure_barrier, 500 kernels) and the device-to-device copy roof, measured once per process
// on this GPU; without a GPU, H100-like defaults (and `measured` false).
struct LaunchMachine {
  double sigma_us = 3.0;   // one kernel boundary in a chain of launches (about 3 us on an H100 or H200)
  double gbps = 3000.0;    // the copy roof (bytes read + written)
  bool measured = false;
  std::string note() const;   // "measured on this GPU: sigma = ... us per launch, copy roof = ... GB/s"
};
const LaunchMachine& launch_machine();

// ---- bandwidth setups (seed 000 §6.1, Fig. 3/4; Appendix A, Fig. 7/8) -------------------------

enum class BandwidthSetup {
  tile_per_cta = 1,  // setup 1: a contiguous tile per CTA, read by all its warps
  virtual_cta = 2,   // setup 2: every warp a virtual CTA, reading one block per round, round robin
};

struct BandwidthConfig {
  BandwidthSetup setup = BandwidthSetup::tile_per_cta;
  int ctas_per_sm = 8;
  int warps_per_cta = 1;
  int vector_bytes = 16;  // 4, 8 or 16: 32-, 64- or 128-bit loads
};

// Global -> shared transfer throughput of `bytes` read once (GB/s of bytes read).
double measure_setup_bandwidth(const BandwidthConfig& config, std::size_t bytes, int repetitions = 5);

// ---- the model --------------------------------------------------------------------------------

struct MachineModel {
  std::string device;
  int multiprocessors = 0;              // P (the model's p = CTAs per SM x warps per CTA x P)
  int warp_size = 32;                   // w
  int banks = 32;                       // b
  std::size_t shared_bytes_per_sm = 0;  // M-hat, shared memory of one SM
  std::size_t l2_bytes = 0;
  double sm_clock_ghz = 0;              // measured during the chase (clock64 / global timer)
  double latency_ns = 0;                // lambda: one dependent global load, footprint >> L2
  double latency_cycles = 0;
  double l2_latency_ns = 0;             // the same chase inside the L2, for comparison
  double block_bytes = 0;               // B: access size reaching 90% of the best read throughput
  double block_gbps = 0;                // that best read throughput
  double barrier_us = 0;                // sigma: one kernel boundary, stream launches
  double barrier_graph_us = 0;          // sigma with the chain in a CUDA graph
  double sigma_over_lambda() const { return latency_ns > 0 ? barrier_us * 1000.0 / latency_ns : 0; }
};

// Measures lambda, B and sigma (a few seconds; quick: well under a second of GPU time, smaller
// buffers and fewer hops, for tests and `gpulab info`).
MachineModel measure_machine_model(bool quick = false);

// The model as a table (symbol, parameter, value, unit, note) for `gpulab info`.
Table machine_model_table(const MachineModel& model);

}  // namespace gpulab
