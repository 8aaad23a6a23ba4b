// Counts kernel launches through the CUPTI callback API: the model's number of rounds R(n)
// (every kernel boundary is a global barrier, seed 000 §2, eq. 1).
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace gpulab {

class LaunchCounter {
 public:
  // Subscribes to CUPTI. Under a profiler or sanitizer that owns CUPTI already, the counter is
  // unavailable (available() == false, reason() says why) and counts nothing.
  LaunchCounter();
  ~LaunchCounter();
  LaunchCounter(const LaunchCounter&) = delete;
  LaunchCounter& operator=(const LaunchCounter&) = delete;

  bool available() const noexcept { return available_; }
  const std::string& reason() const noexcept { return reason_; }
  void start();        // reset and begin counting
  long stop();         // stop counting; returns the launches since start()
  long count() const;  // launches so far
  // Bytes moved by cudaMemcpy/cudaMemcpyAsync between host and device since start() (copies of
  // unknown direction, cudaMemcpyDefault, count as host copies). A GPU stage that ships its data
  // to the host is computing on the CPU: the grader looks at this.
  std::size_t host_copy_bytes() const;
  // Bytes of device, managed and pinned host memory the process allocated through the runtime since
  // the counter was made and has not freed (nullopt: not tracked, as under a profiler). Sampled
  // around a stage's timed runs it tells a stage that keeps memory per run (a cudaMalloc with no
  // cudaFree) from one that allocates once.
  std::optional<std::size_t> live_allocation_bytes() const;

 private:
  bool available_ = false;
  bool allocations_tracked_ = false;
  std::string reason_;
  void* subscriber_ = nullptr;
};

}  // namespace gpulab
