// Measuring the machine model's parameters (seed 000 §2 and §6.1, Appendix A). See
// gpulab/machine_model.hpp for what each function measures and why.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/buffer.hpp"
#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/machine_model.hpp"
#include "gpulab/timing.hpp"

namespace gpulab {

namespace {

int current_device_attribute(cudaDeviceAttr attr) {
  int device = 0, value = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

int multiprocessor_count() { return current_device_attribute(cudaDevAttrMultiProcessorCount); }

bool is_power_of_two(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// ---- lambda ------------------------------------------------------------------------------------

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct ChaseTimes {
  long long cycles;
  unsigned long long ns;
  std::uint32_t last;  // the final index: keeps the chase alive and proves it ran
};

// Node k lives at word k * stride_words and holds the word index of the next node. `warm` hops
// first fill whatever cache the footprint fits in (L1 is not kept across launches, so the warm-up
// has to be in the same kernel); then `hops` dependent loads are timed.
__global__ void chase_pointers(const std::uint32_t* next, long warm, long hops, ChaseTimes* times) {
  std::uint32_t i = 0;
  for (long h = 0; h < warm; ++h) i = next[i];
  const long long c0 = clock64();
  const std::uint64_t t0 = global_timer_ns();
  for (long h = 0; h < hops; ++h) i = next[i];
  // Storing i first makes the clock reads wait for the last load (the store needs its value).
  times->last = i;
  const long long c1 = clock64();
  const std::uint64_t t1 = global_timer_ns();
  times->cycles = c1 - c0;
  times->ns = t1 - t0;
}

__global__ void scatter_chase_links(std::uint32_t* buffer, const std::uint32_t* successor, std::size_t nodes,
                                    std::uint32_t stride_words) {
  const std::size_t k = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (k < nodes) buffer[k * stride_words] = successor[k] * stride_words;
}

// ---- B -----------------------------------------------------------------------------------------

// A bijection of [0, 2^bits): multiplication by an odd constant and xor-shifts are each
// invertible modulo 2^bits, so every chunk is visited exactly once, in an order with no locality.
__device__ __forceinline__ std::uint64_t scramble(std::uint64_t x, unsigned bits) {
  const std::uint64_t mask = (bits >= 64) ? ~std::uint64_t{0} : ((std::uint64_t{1} << bits) - 1);
  x = (x * 0x9E3779B97F4A7C15ull) & mask;
  x ^= x >> ((bits + 1) / 2);
  x = (x * 0xBF58476D1CE4E5B9ull) & mask;
  x ^= x >> ((bits + 2) / 3);
  return x & mask;
}

// Thread g reads piece g of the buffer; pieces_per_chunk consecutive pieces form one chunk, and
// chunks are placed in scrambled order. Four independent loads per step keep enough requests in
// flight that latency does not hide the effect of the access size.
__device__ __forceinline__ std::uint32_t fold(std::uint32_t w) { return w; }
__device__ __forceinline__ std::uint32_t fold(const uint4& w) { return w.x ^ w.y ^ w.z ^ w.w; }

template <class Word>
__global__ void read_scrambled_chunks(const Word* __restrict__ buffer, std::uint64_t pieces,
                                      std::uint32_t pieces_per_chunk, unsigned chunk_bits, std::uint32_t* sink) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  std::uint32_t acc = 0;
  auto piece_address = [&](std::uint64_t g) {
    const std::uint64_t chunk = g / pieces_per_chunk;
    return scramble(chunk, chunk_bits) * pieces_per_chunk + g % pieces_per_chunk;
  };
  std::uint64_t g = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; g + 3 * stride < pieces; g += 4 * stride) {
    const Word a = buffer[piece_address(g)];
    const Word b = buffer[piece_address(g + stride)];
    const Word c = buffer[piece_address(g + 2 * stride)];
    const Word d = buffer[piece_address(g + 3 * stride)];
    acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
  }
  for (; g < pieces; g += stride) acc ^= fold(buffer[piece_address(g)]);
  if (acc == 0x5A5A5A5Au) *sink = acc;  // never true for a zeroed buffer; keeps the loads
}

// ---- sigma -------------------------------------------------------------------------------------

__global__ void empty_kernel() {}

// ---- bandwidth setups --------------------------------------------------------------------------

// Loads per thread per round: the seed's count_ele (Appendix B, Algorithm 1), so that every warp
// has several blocks in flight.
constexpr int kLoadsPerRound = 4;

template <class V>
__device__ __forceinline__ std::uint32_t first_word(const V& v) {
  if constexpr (sizeof(V) == 4) return v;
  else return v.x;
}

// Setup 1 (seed 000 §6.1, Fig. 3 left): CTA x owns one contiguous tile and all its warps sweep
// it, blockDim * kLoadsPerRound vectors per round. Each round lands in shared memory.
template <class V>
__global__ void transfer_tile_per_cta(const V* __restrict__ in, std::size_t count, std::uint32_t* sink) {
  extern __shared__ unsigned char stage_bytes[];
  V* stage = reinterpret_cast<V*>(stage_bytes);
  const std::size_t per_cta = (count + gridDim.x - 1) / gridDim.x;
  const std::size_t begin = std::size_t{blockIdx.x} * per_cta;
  const std::size_t end = begin + per_cta < count ? begin + per_cta : count;
  const std::size_t step = std::size_t{blockDim.x} * kLoadsPerRound;
  for (std::size_t base = begin; base < end; base += step) {
    V v[kLoadsPerRound] = {};
#pragma unroll
    for (int k = 0; k < kLoadsPerRound; ++k) {
      const std::size_t i = base + threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
      if (i < end) v[k] = in[i];
    }
#pragma unroll
    for (int k = 0; k < kLoadsPerRound; ++k) stage[threadIdx.x + k * blockDim.x] = v[k];
  }
  __syncthreads();
  if (first_word(stage[(threadIdx.x * 7) % (blockDim.x * kLoadsPerRound)]) == 0x5A5A5A5Au) *sink = 1;
}

// Setup 2 (seed 000 §6.1, Fig. 3 right): warp y of CTA x is virtual CTA v = y * gridDim + x, and
// block j (32 vectors) goes to virtual CTA j mod V: the i-th warps of all CTAs read before any
// (i+1)-th warp does, and no CTA owns a tile.
template <class V>
__global__ void transfer_virtual_cta(const V* __restrict__ in, std::size_t count, std::uint32_t* sink) {
  extern __shared__ unsigned char stage_bytes[];
  V* stage = reinterpret_cast<V*>(stage_bytes);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::size_t virtual_ctas = std::size_t{gridDim.x} * (blockDim.x / 32);
  const std::size_t v = std::size_t{warp} * gridDim.x + blockIdx.x;
  const std::size_t blocks = (count + 31) / 32;
  for (std::size_t round = 0;; ++round) {
    const std::size_t first_block = round * kLoadsPerRound * virtual_ctas + v;
    if (first_block >= blocks) break;
    V x[kLoadsPerRound] = {};
#pragma unroll
    for (int k = 0; k < kLoadsPerRound; ++k) {
      const std::size_t i = (first_block + k * virtual_ctas) * 32 + lane;
      if (i < count) x[k] = in[i];
    }
#pragma unroll
    for (int k = 0; k < kLoadsPerRound; ++k) stage[threadIdx.x + k * blockDim.x] = x[k];
  }
  __syncthreads();
  if (first_word(stage[(threadIdx.x * 7) % (blockDim.x * kLoadsPerRound)]) == 0x5A5A5A5Au) *sink = 1;
}

template <class V>
double time_setup(const BandwidthConfig& c, std::size_t bytes, int repetitions) {
  const std::size_t count = bytes / sizeof(V);
  DeviceBuffer<V> in(count);
  in.zero();
  DeviceBuffer<std::uint32_t> sink(1);
  const int threads = 32 * c.warps_per_cta;
  const int ctas = c.ctas_per_sm * multiprocessor_count();
  const std::size_t shared = std::size_t{static_cast<unsigned>(threads)} * kLoadsPerRound * sizeof(V);
  auto kernel = c.setup == BandwidthSetup::tile_per_cta ? transfer_tile_per_cta<V> : transfer_virtual_cta<V>;
  GPULAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(std::max<std::size_t>(shared, 48 * 1024))));
  MeasureOptions options;
  options.warmup = 1;
  options.repetitions = std::max(1, repetitions);
  options.flush_l2 = bytes < std::size_t{512} << 20;  // larger buffers evict the L2 by themselves
  const auto t = measure_gpu(
      [&] {
        kernel<<<ctas, threads, shared>>>(in.data(), count, sink.data());
        GPULAB_CHECK_LAUNCH();
      },
      {}, options);
  return gigabytes_per_second(static_cast<double>(count * sizeof(V)), t.median_ms);
}

}  // namespace

// ------------------------------------------------------------------------------------------------

LatencyResult measure_latency(std::size_t footprint_bytes, long hops, std::size_t stride_bytes, std::uint64_t seed) {
  if (stride_bytes < 4 || stride_bytes % 4 != 0)
    throw std::invalid_argument("measure_latency: stride_bytes must be a positive multiple of 4");
  const std::size_t nodes = footprint_bytes / stride_bytes;
  if (nodes < 2) throw std::invalid_argument("measure_latency: the footprint must hold at least two nodes");
  const std::size_t stride_words = stride_bytes / 4;
  if (nodes * stride_words > std::size_t{0xFFFFFFFFu})
    throw std::invalid_argument("measure_latency: footprint too large for 32-bit word indices (max 16 GiB)");

  // Sattolo's algorithm: a uniformly random permutation with exactly one cycle, so the chase
  // visits every node before it repeats and no prefetcher can guess the next address.
  std::vector<std::uint32_t> successor(nodes);
  std::iota(successor.begin(), successor.end(), 0u);
  std::mt19937_64 rng(seed);
  for (std::size_t i = nodes - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(successor[i], successor[pick(rng)]);
  }

  DeviceBuffer<std::uint32_t> buffer(nodes * stride_words);
  {
    DeviceBuffer<std::uint32_t> links{std::span<const std::uint32_t>(successor)};
    const int threads = 256;
    const auto blocks = static_cast<unsigned>((nodes + threads - 1) / threads);
    scatter_chase_links<<<blocks, threads>>>(buffer.data(), links.data(), nodes,
                                             static_cast<std::uint32_t>(stride_words));
    GPULAB_CHECK_LAUNCH();
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  DeviceBuffer<ChaseTimes> times(1);
  const long warm = static_cast<long>(std::min<std::size_t>(nodes, 1u << 16));
  chase_pointers<<<1, 1>>>(buffer.data(), warm, hops, times.data());
  GPULAB_CHECK_LAUNCH();
  const ChaseTimes t = times.download()[0];

  LatencyResult r;
  r.footprint_bytes = nodes * stride_bytes;
  r.stride_bytes = stride_bytes;
  r.hops = hops;
  r.ns_per_hop = hops > 0 ? static_cast<double>(t.ns) / static_cast<double>(hops) : 0;
  r.cycles_per_hop = hops > 0 ? static_cast<double>(t.cycles) / static_cast<double>(hops) : 0;
  return r;
}

BlockSizePoint measure_block_read(std::size_t access_bytes, std::size_t buffer_bytes, int repetitions) {
  if (!is_power_of_two(access_bytes) || access_bytes < 4)
    throw std::invalid_argument("measure_block_read: access_bytes must be a power of two >= 4");
  if (!is_power_of_two(buffer_bytes) || buffer_bytes < access_bytes)
    throw std::invalid_argument("measure_block_read: buffer_bytes must be a power of two >= access_bytes");
  DeviceBuffer<unsigned char> buffer(buffer_bytes);
  buffer.zero();
  DeviceBuffer<std::uint32_t> sink(1);
  const std::size_t chunks = buffer_bytes / access_bytes;
  const unsigned chunk_bits = static_cast<unsigned>(std::log2(static_cast<double>(chunks)) + 0.5);
  const int threads = 256;
  const int blocks = multiprocessor_count() * (2048 / threads);

  MeasureOptions options;
  options.warmup = 1;
  options.repetitions = std::max(1, repetitions);
  options.flush_l2 = true;
  TimingStats t;
  if (access_bytes >= 16) {
    // 128-bit pieces: the widest load, so large chunks are limited by memory, not by issue.
    const std::uint64_t pieces = buffer_bytes / 16;
    const auto per_chunk = static_cast<std::uint32_t>(access_bytes / 16);
    t = measure_gpu(
        [&] {
          read_scrambled_chunks<uint4><<<blocks, threads>>>(reinterpret_cast<const uint4*>(buffer.data()), pieces,
                                                            per_chunk, chunk_bits, sink.data());
          GPULAB_CHECK_LAUNCH();
        },
        {}, options);
  } else {
    const std::uint64_t pieces = buffer_bytes / 4;
    const auto per_chunk = static_cast<std::uint32_t>(access_bytes / 4);
    t = measure_gpu(
        [&] {
          read_scrambled_chunks<std::uint32_t><<<blocks, threads>>>(
              reinterpret_cast<const std::uint32_t*>(buffer.data()), pieces, per_chunk, chunk_bits, sink.data());
          GPULAB_CHECK_LAUNCH();
        },
        {}, options);
  }
  return {access_bytes, gigabytes_per_second(static_cast<double>(buffer_bytes), t.median_ms)};
}

std::vector<std::size_t> block_size_sweep_sizes() {
  std::vector<std::size_t> sizes;
  for (std::size_t s = 4; s <= 4096; s *= 2) sizes.push_back(s);
  return sizes;
}

std::size_t saturating_block_bytes(const std::vector<BlockSizePoint>& points, double fraction) {
  double best = 0;
  for (const auto& p : points) best = std::max(best, p.gbps);
  std::size_t smallest = 0;
  for (const auto& p : points)
    if (p.gbps >= fraction * best && (smallest == 0 || p.access_bytes < smallest)) smallest = p.access_bytes;
  return smallest;
}

BarrierResult measure_barrier(int kernels, int repetitions) {
  if (kernels < 1) throw std::invalid_argument("measure_barrier: kernels must be >= 1");
  BarrierResult r;
  r.kernels = kernels;
  r.ctas = 8 * multiprocessor_count();
  const int reps = std::max(1, repetitions);

  cudaStream_t stream;
  GPULAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto launch_chain = [&] {
    for (int k = 0; k < kernels; ++k) {
      empty_kernel<<<r.ctas, 32, 0, stream>>>();
      GPULAB_CHECK_LAUNCH();
    }
  };
  GpuTimer timer(stream);
  std::vector<double> samples;
  launch_chain();  // warm-up: module load, launch queues
  for (int rep = 0; rep < reps; ++rep) {
    timer.start();
    launch_chain();
    timer.stop();
    samples.push_back(timer.elapsed_ms());
  }
  r.per_kernel_us = TimingStats::from_samples(samples).median_ms * 1000.0 / kernels;

  // The same chain as one graph: the launch cost is paid once, what is left is the boundary.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GPULAB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  launch_chain();
  GPULAB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  GPULAB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  GPULAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up: uploads the graph
  samples.clear();
  for (int rep = 0; rep < reps; ++rep) {
    timer.start();
    GPULAB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    timer.stop();
    samples.push_back(timer.elapsed_ms());
  }
  r.per_graph_node_us = TimingStats::from_samples(samples).median_ms * 1000.0 / kernels;
  GPULAB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  GPULAB_CUDA_CHECK(cudaGraphDestroy(graph));
  GPULAB_CUDA_CHECK(cudaStreamDestroy(stream));
  return r;
}

double measure_setup_bandwidth(const BandwidthConfig& config, std::size_t bytes, int repetitions) {
  if (config.ctas_per_sm < 1 || config.warps_per_cta < 1 || config.warps_per_cta > 32)
    throw std::invalid_argument("measure_setup_bandwidth: need ctas_per_sm >= 1 and 1 <= warps_per_cta <= 32");
  switch (config.vector_bytes) {
    case 4: return time_setup<std::uint32_t>(config, bytes, repetitions);
    case 8: return time_setup<uint2>(config, bytes, repetitions);
    case 16: return time_setup<uint4>(config, bytes, repetitions);
    default: throw std::invalid_argument("measure_setup_bandwidth: vector_bytes must be 4, 8 or 16");
  }
}

MachineModel measure_machine_model(bool quick) {
  const auto info = query_device();
  if (!info) throw std::runtime_error(no_gpu_line());
  MachineModel m;
  m.device = info->name;
  m.multiprocessors = info->multiprocessors;
  m.warp_size = info->warp_size;
  m.banks = 32;
  m.shared_bytes_per_sm = info->shared_memory_per_multiprocessor;
  m.l2_bytes = info->l2_bytes;

  // lambda: a footprint many times the L2 (H100: 50 MB, H200: 60 MB) so almost every hop misses.
  const std::size_t dram_footprint = quick ? std::size_t{256} << 20 : std::size_t{1} << 30;
  const auto dram = measure_latency(dram_footprint, quick ? 20000 : 100000);
  m.latency_ns = dram.ns_per_hop;
  m.latency_cycles = dram.cycles_per_hop;
  m.sm_clock_ghz = dram.sm_clock_ghz();
  const std::size_t l2_footprint = std::max<std::size_t>(m.l2_bytes / 4, std::size_t{1} << 20);
  m.l2_latency_ns = measure_latency(l2_footprint, quick ? 20000 : 100000).ns_per_hop;

  // B: the smallest access size that reaches 90% of the best read throughput.
  const std::size_t buffer = quick ? std::size_t{256} << 20 : std::size_t{1} << 30;
  std::vector<BlockSizePoint> points;
  for (std::size_t s : block_size_sweep_sizes())
    if (!quick || s >= 16) points.push_back(measure_block_read(s, buffer, quick ? 2 : 5));
  m.block_bytes = static_cast<double>(saturating_block_bytes(points));
  for (const auto& p : points) m.block_gbps = std::max(m.block_gbps, p.gbps);

  // sigma: one kernel boundary, launched from the stream and from a graph.
  const auto barrier = measure_barrier(quick ? 200 : 2000, quick ? 3 : 5);
  m.barrier_us = barrier.per_kernel_us;
  m.barrier_graph_us = barrier.per_graph_node_us;
  return m;
}

Table machine_model_table(const MachineModel& m) {
  Table t({{"symbol", "symbol"}, {"parameter", "parameter"}, {"value", "value", 1}, {"unit", "unit"}, {"note", "note"}},
          "Machine model of " + m.device + " (seed 000 §2: T(n) = sum_k t_k + lambda q_k + sigma)");
  t.add_row({std::string("P"), std::string("multiprocessors (SMs)"), std::int64_t{m.multiprocessors}, std::string(""),
             std::string("the model's p = CTAs per SM x warps per CTA x P")});
  t.add_row({std::string("w"), std::string("warp size"), std::int64_t{m.warp_size}, std::string("threads"),
             std::string("SIMD width of one model multiprocessor")});
  t.add_row({std::string("b"), std::string("shared-memory banks"), std::int64_t{m.banks}, std::string("banks"),
             std::string("4-byte words; b = w")});
  t.add_row({std::string("M"), std::string("shared memory per SM"),
             std::int64_t{static_cast<std::int64_t>(m.shared_bytes_per_sm / 1024)}, std::string("KiB"),
             std::string("divided among the CTAs resident on one SM")});
  t.add_row({std::string("lambda"), std::string("global-memory latency"), m.latency_ns, std::string("ns"),
             std::string("pointer chase, random cycle, footprint >> L2")});
  t.add_row({std::string("lambda"), std::string("global-memory latency"), m.latency_cycles, std::string("cycles"),
             std::string("clock64 at " + std::to_string(m.sm_clock_ghz).substr(0, 4) + " GHz")});
  t.add_row({std::string("lambda_L2"), std::string("L2 hit latency"), m.l2_latency_ns, std::string("ns"),
             std::string("same chase over L2/4 bytes")});
  t.add_row({std::string("B"), std::string("block size"), m.block_bytes, std::string("bytes"),
             std::string("smallest random access reaching 90% of the best read throughput")});
  t.add_row({std::string("sigma"), std::string("barrier (kernel boundary)"), m.barrier_us, std::string("us"),
             std::string("chain of empty kernels, 8 CTAs per SM")});
  t.add_row({std::string("sigma_graph"), std::string("barrier in a CUDA graph"), m.barrier_graph_us, std::string("us"),
             std::string("same chain, captured once")});
  t.add_row({std::string("sigma/lambda"), std::string("barrier over latency"), m.sigma_over_lambda(), std::string(""),
             std::string("seed 000 footnote 4: 10-100 on a GTX 580")});
  return t;
}

std::string LaunchMachine::note() const {
  return std::string(measured ? "measured on this GPU" : "no GPU: H100-like defaults") + ": sigma = " +
         std::to_string(sigma_us).substr(0, 5) + " us per launch, copy roof = " + std::to_string(static_cast<long>(gbps)) +
         " GB/s";
}

const LaunchMachine& launch_machine() {
  static LaunchMachine m;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!gpu_available()) return;
    m.sigma_us = measure_barrier(500, 3).per_kernel_us;
    m.gbps = measure_copy_bandwidth().best_gbps();
    m.measured = true;
  });
  return m;
}

}  // namespace gpulab
