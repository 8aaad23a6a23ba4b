#include <cuda_runtime.h>

#include <mutex>
#include <sstream>

#include "gpulab/buffer.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/timing.hpp"

namespace gpulab {

double DeviceInfo::theoretical_bandwidth_gbps() const {
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0) / 1e9;
}

namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

// The reason no device can be used, or empty when one can.
std::string probe_device() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) return "no CUDA GPU found";
  if (err == cudaErrorInsufficientDriver) return "no CUDA driver (or one too old for this CUDA runtime)";
  if (err != cudaSuccess) return std::string("CUDA is unusable: ") + cudaGetErrorString(err);
  return {};
}

const std::string& cached_probe() {
  static const std::string reason = probe_device();
  return reason;
}

// 16 bytes per thread per step, grid-stride: the form every memory-bound kernel in the labs aims at.
__global__ void copy_vectorised(const int4* __restrict__ in, int4* __restrict__ out, std::size_t count) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = in[i];
}

}  // namespace

bool gpu_available() { return cached_probe().empty(); }
std::string no_gpu_reason() { return cached_probe(); }
std::string no_gpu_line() {
  return "gpulab: GPU work skipped — " + no_gpu_reason() + ". Run on the GPU machine for the GPU stages.";
}

int multiprocessors() {
  static const int sms = [] {
    const auto d = query_device();
    return d ? d->multiprocessors : 1;
  }();
  return sms;
}

std::optional<DeviceInfo> query_device() {
  if (!gpu_available()) return std::nullopt;
  DeviceInfo info;
  GPULAB_CUDA_CHECK(cudaGetDevice(&info.ordinal));
  cudaDeviceProp prop{};
  GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, info.ordinal));
  const int d = info.ordinal;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.warp_size = prop.warpSize;
  info.max_threads_per_block = prop.maxThreadsPerBlock;
  info.global_memory_bytes = prop.totalGlobalMem;
  info.shared_memory_per_block = prop.sharedMemPerBlock;
  info.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
  info.shared_memory_per_multiprocessor = prop.sharedMemPerMultiprocessor;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes remain.
  info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, d);
  info.sm_clock_khz = attribute(cudaDevAttrClockRate, d);
  info.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, d);
  return info;
}

CopyBandwidth measure_copy_bandwidth(std::size_t bytes) {
  static std::mutex mutex;
  static std::optional<std::pair<std::size_t, CopyBandwidth>> cache;
  std::lock_guard lock(mutex);
  if (cache && cache->first == bytes) return cache->second;

  bytes = (bytes / sizeof(int4)) * sizeof(int4);
  DeviceBuffer<int4> src(bytes / sizeof(int4)), dst(bytes / sizeof(int4));
  src.zero();
  MeasureOptions options;
  options.warmup = 2;
  options.repetitions = 10;
  options.flush_l2 = false;  // 1 GiB buffers are 17x the largest L2: nothing to flush
  const double moved = 2.0 * static_cast<double>(bytes);  // read + write

  CopyBandwidth result;
  auto t_memcpy = measure_gpu(
      [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice)); }, {}, options);
  result.memcpy_gbps = gigabytes_per_second(moved, t_memcpy.median_ms);

  int sms = 0, device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  auto t_kernel = measure_gpu(
      [&] {
        copy_vectorised<<<sms * 8, 512>>>(src.data(), dst.data(), src.size());
        GPULAB_CHECK_LAUNCH();
      },
      {}, options);
  result.kernel_gbps = gigabytes_per_second(moved, t_kernel.median_ms);
  cache = {bytes, result};
  return result;
}

}  // namespace gpulab
