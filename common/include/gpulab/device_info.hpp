// What the device is, and the numbers the labs compare against.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <ostream>
#include <string_view>
#include <optional>
#include <string>

namespace gpulab {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t shared_memory_per_block = 0;        // the default limit (48 KiB)
  std::size_t shared_memory_per_block_optin = 0;  // after cudaFuncSetAttribute
  std::size_t shared_memory_per_multiprocessor = 0;
  std::size_t l2_bytes = 0;
  int memory_clock_khz = 0;
  int sm_clock_khz = 0;  // the SM clock's rated peak
  int memory_bus_width_bits = 0;
  // 2 (double data rate) * memory clock * bus width: the datasheet roof no code reaches.
  double theoretical_bandwidth_gbps() const;
};

// The current device, or nullopt when there is none (no driver, no GPU, or it is unusable).
std::optional<DeviceInfo> query_device();
// The device's SM count, queried once (1 without a GPU): for sizing persistent grids.
int multiprocessors();
// True when a CUDA device can be used; the reason otherwise ("no CUDA driver", ...).
bool gpu_available();
std::string no_gpu_reason();
// The one line every command prints when it skips GPU work.
std::string no_gpu_line();

// The exit status of a GPU test that found no GPU: 77 (ctest reports SKIPPED, never passed), or
// 1 under GPULAB_REQUIRE_GPU=1 (the gpu preset: a GPU machine must not skip). Prints why.
inline int missing_gpu_exit_code(std::ostream& out) {
  out << no_gpu_line() << "\n";
  const char* required = std::getenv("GPULAB_REQUIRE_GPU");
  if (required && std::string_view(required) == "1") {
    out << "gpulab: GPULAB_REQUIRE_GPU=1 but no GPU is usable: failing instead of skipping\n";
    return 1;
  }
  return 77;
}

struct CopyBandwidth {
  double memcpy_gbps = 0;  // cudaMemcpy device to device, bytes read + bytes written
  double kernel_gbps = 0;  // a 128-bit vectorised copy kernel, same count
  double best_gbps() const { return memcpy_gbps > kernel_gbps ? memcpy_gbps : kernel_gbps; }
};

// The bandwidth roof every lab is measured against ("% of copy"). Measured once per process and
// cached; `bytes` is the size of one buffer (default 1 GiB, far above any L2).
CopyBandwidth measure_copy_bandwidth(std::size_t bytes = std::size_t{1} << 30);

}  // namespace gpulab
