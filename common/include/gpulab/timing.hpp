// Timing: CUDA-event and steady-clock timers, and measure(): warm-up, repetitions, L2 flush,
// min/median/max. Throughput helpers turn a bytes-moved formula into GB/s and % of copy.
#pragma once
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

namespace gpulab {

// Times device work enqueued on one stream between start() and stop().
class GpuTimer {
 public:
  explicit GpuTimer(cudaStream_t stream = nullptr);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  void start();
  void stop();
  double elapsed_ms();  // waits for stop
  // A third event, recorded later (after a synchronisation): start to fence, waiting for it.
  void fence();
  double elapsed_to_fence_ms();

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr, fence_ = nullptr;
};

class CpuTimer {
 public:
  void start() { t0_ = std::chrono::steady_clock::now(); }
  void stop() { t1_ = std::chrono::steady_clock::now(); }
  double elapsed_ms() const { return std::chrono::duration<double, std::milli>(t1_ - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_{}, t1_{};
};

// Evicts the L2 by writing a buffer twice its size (H100 has 50 MB, H200 60 MB: an input
// under that size would otherwise be timed at cache speed on every repetition after the first).
class L2Flusher {
 public:
  L2Flusher();  // sizes itself from the current device
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t stream = nullptr);

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

// Where measure_gpu's interval ends (see measure_gpu).
enum class GpuClock {
  device_sync,    // start event, body, device synchronisation, stop event (host latencies included)
  stream_events,  // start event, body, stop event, synchronisation, fence (no wake-up latency)
};

struct MeasureOptions {
  int warmup = 2;        // untimed runs first: module load, lazy allocation, caches
  int repetitions = 10;  // timed runs; the median is reported
  bool flush_l2 = true;  // flush before every timed run
  GpuClock clock = GpuClock::device_sync;
};

struct TimingStats {
  double min_ms = 0, median_ms = 0, max_ms = 0;
  std::vector<double> samples_ms;
  static TimingStats from_samples(std::vector<double> samples);
};

// Times `body` on the GPU. Both clocks queue the start event on the idle device before the body,
// so no work the body enqueues, on any stream, runs before it, and both count the first launch's
// latency. GpuClock::device_sync (the default, the grader's): a device-wide synchronisation after
// the body, then the stop event, so work on any stream counts, with the host's wake-up latency
// (about 7 us per run on an H200, more on a busy host: scan's 0.06 ms stages moved up to 16 %
// between two batch grades, 2026-11-23). GpuClock::stream_events (`run --timer events`): the stop
// event right after the body. Work on the default stream, on streams created with default flags
// and by the host inside `body` counts; work on a non-blocking stream does not order with the stop
// event, so a fence event after a device synchronisation catches it: a run whose stop-to-fence gap
// exceeds kTailAllowanceMs and kTailAllowanceShare of its time counts up to the fence, and one
// that hides less than that allowance on such a stream goes unseen. That is why it is not the
// grader's clock; the grader's Nsight Compute cross-check stands behind both
// (autograder/gpulab/checks/performance.py). `before_each` runs untimed before every run, warm-ups
// included; a lab poisons its outputs there. The L2 is flushed after `before_each`, so poisoning
// does not leave the outputs cached. `after_each` runs untimed after every run (the runner checks
// each run's output there when the stage draws a fresh input for every run: run_stage).
inline constexpr double kTailAllowanceMs = 0.02;    // the host's wake-up after a synchronisation
inline constexpr double kTailAllowanceShare = 0.25; // a quarter of the run: within the cross-check's 0.8
TimingStats measure_gpu(const std::function<void()>& body, const std::function<void()>& before_each = {},
                        const MeasureOptions& options = {}, const std::function<void()>& after_each = {});

// Same for host code, with a steady clock.
TimingStats measure_cpu(const std::function<void()>& body, const std::function<void()>& before_each = {},
                        const MeasureOptions& options = {}, const std::function<void()>& after_each = {});

// Throughput from the model's bytes moved (each input read once, each output written once).
double gigabytes_per_second(double bytes, double ms);
double elements_per_second(double elements, double ms);

}  // namespace gpulab
