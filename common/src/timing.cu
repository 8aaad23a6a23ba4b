#include <algorithm>
#include <cmath>
#include <optional>

#include "gpulab/cuda_check.hpp"
#include "gpulab/timing.hpp"

namespace gpulab {

GpuTimer::GpuTimer(cudaStream_t stream) : stream_(stream) {
  GPULAB_CUDA_CHECK(cudaEventCreate(&start_));
  GPULAB_CUDA_CHECK(cudaEventCreate(&stop_));
  GPULAB_CUDA_CHECK(cudaEventCreate(&fence_));
}
GpuTimer::~GpuTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaEventDestroy(fence_);
}
void GpuTimer::start() { GPULAB_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
void GpuTimer::stop() { GPULAB_CUDA_CHECK(cudaEventRecord(stop_, stream_)); }
void GpuTimer::fence() { GPULAB_CUDA_CHECK(cudaEventRecord(fence_, stream_)); }

namespace {
double elapsed_between(cudaEvent_t from, cudaEvent_t to) {
  GPULAB_CUDA_CHECK(cudaEventSynchronize(to));
  float ms = 0;
  GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
  return ms;
}
}  // namespace

double GpuTimer::elapsed_ms() { return elapsed_between(start_, stop_); }
double GpuTimer::elapsed_to_fence_ms() { return elapsed_between(start_, fence_); }

L2Flusher::L2Flusher() {
  int device = 0, l2 = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), std::size_t{8} << 20);
  GPULAB_CUDA_CHECK(cudaMalloc(&buffer_, bytes_));
}
L2Flusher::~L2Flusher() {
  if (buffer_) cudaFree(buffer_);
}
void L2Flusher::flush(cudaStream_t stream) {
  // Writing (not reading) a buffer twice the L2 leaves none of the stage's lines resident.
  GPULAB_CUDA_CHECK(cudaMemsetAsync(buffer_, 0, bytes_, stream));
}

TimingStats TimingStats::from_samples(std::vector<double> samples) {
  TimingStats s;
  s.samples_ms = samples;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min_ms = samples.front();
  s.max_ms = samples.back();
  const std::size_t mid = samples.size() / 2;
  s.median_ms = samples.size() % 2 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  return s;
}

TimingStats measure_gpu(const std::function<void()>& body, const std::function<void()>& before_each,
                        const MeasureOptions& options, const std::function<void()>& after_each) {
  std::optional<L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();
  GpuTimer timer;
  std::vector<double> samples;
  const int total = std::max(0, options.warmup) + std::max(1, options.repetitions);
  for (int rep = 0; rep < total; ++rep) {
    if (before_each) before_each();
    if (flusher) flusher->flush();
    // Poisoning and the flush must be finished before the clock starts, also for a stage that
    // launches on another stream (it would otherwise overlap them and look faster).
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    // The start event is queued on the idle device before the body: no work the body enqueues, on
    // any stream, can run before it.
    timer.start();
    body();
    double ms = 0;
    if (options.clock == GpuClock::device_sync) {
      // Wait for the whole device before the stop event: work a stage enqueued on another stream
      // (a non-blocking one would not order after the default stream's events) is still timed.
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      timer.stop();
      ms = timer.elapsed_ms();
    } else {
      // The stop event right behind the stage's work: the host's wake-up from the synchronisation
      // is not timed. Work that outlived it (a non-blocking stream the default stream does not
      // wait for) shows as a long way from the stop event to a fence behind the synchronisation,
      // which is otherwise only the wake-up: then the run counts up to the fence. (A lead-in
      // kernel before the start event, to hide the first launch's latency too, let work on a
      // non-blocking stream run beside it unseen: 35 us of memset measured 4 us, H200, 2026-11-24.)
      timer.stop();
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      timer.fence();
      ms = timer.elapsed_ms();
      const double to_fence = timer.elapsed_to_fence_ms();
      if (to_fence - ms > std::max(kTailAllowanceMs, kTailAllowanceShare * ms)) ms = to_fence;
    }
    GPULAB_CUDA_CHECK(cudaGetLastError());
    if (rep >= options.warmup) samples.push_back(ms);
    if (after_each) after_each();
  }
  return TimingStats::from_samples(std::move(samples));
}

TimingStats measure_cpu(const std::function<void()>& body, const std::function<void()>& before_each,
                        const MeasureOptions& options, const std::function<void()>& after_each) {
  CpuTimer timer;
  std::vector<double> samples;
  const int total = std::max(0, options.warmup) + std::max(1, options.repetitions);
  for (int rep = 0; rep < total; ++rep) {
    if (before_each) before_each();
    timer.start();
    body();
    timer.stop();
    if (rep >= options.warmup) samples.push_back(timer.elapsed_ms());
    if (after_each) after_each();
  }
  return TimingStats::from_samples(std::move(samples));
}

double gigabytes_per_second(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0; }
double elements_per_second(double elements, double ms) { return ms > 0 ? elements / (ms * 1e-3) : 0.0; }

}  // namespace gpulab
