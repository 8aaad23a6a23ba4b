#include <algorithm>
#include <cmath>
#include <optional>

#include "gpulab/cuda_check.hpp"
#include "gpulab/timing.hpp"

namespace gpulab {

GpuTimer::GpuTimer(cudaStream_t stream) : stream_(stream) {
  GPULAB_CUDA_CHECK(cudaEventCreate(&start_));
  GPULAB_CUDA_CHECK(cudaEventCreate(&stop_));
}
GpuTimer::~GpuTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}
void GpuTimer::start() { GPULAB_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
void GpuTimer::stop() { GPULAB_CUDA_CHECK(cudaEventRecord(stop_, stream_)); }
double GpuTimer::elapsed_ms() {
  GPULAB_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

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

namespace {

// Keeps the default stream busy for a given number of SM clock cycles (one thread).
__global__ void hold_stream(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Cycles for kLeadInMicroseconds at this device's SM clock (cudaDevAttrClockRate, kHz).
long long lead_in_cycles() {
  static const long long cycles = [] {
    int device = 0, khz = 0;
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
    return static_cast<long long>(kLeadInMicroseconds * (khz > 0 ? khz : 2'000'000) / 1000.0);
  }();
  return cycles;
}

// One CUDA event, destroyed with its owner.
class Event {
 public:
  Event() { GPULAB_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

TimingStats measure_gpu(const std::function<void()>& body, const std::function<void()>& before_each,
                        const MeasureOptions& options) {
  std::optional<L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();
  GpuTimer timer;
  Event fence;
  std::vector<double> samples;
  const int total = std::max(0, options.warmup) + std::max(1, options.repetitions);
  for (int rep = 0; rep < total; ++rep) {
    if (before_each) before_each();
    if (flusher) flusher->flush();
    // Poisoning and the flush must be finished before the clock starts, also for a stage that
    // launches on another stream (it would otherwise overlap them and look faster).
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    if (options.clock == GpuClock::device_sync) {
      timer.start();
      body();
      // Wait for the whole device before the stop event: work a stage enqueued on another stream
      // (a non-blocking one would not order after the default stream's events) is still timed.
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      timer.stop();
      const double ms = timer.elapsed_ms();
      GPULAB_CUDA_CHECK(cudaGetLastError());
      if (rep >= options.warmup) samples.push_back(ms);
      continue;
    }
    // The start event waits behind a short kernel, so that the stage's launches are already
    // queued when it fires, and the stop event is queued right behind the stage's work: the
    // interval is the stage's GPU time, not the host's launch and wake-up latencies.
    hold_stream<<<1, 1>>>(lead_in_cycles());
    GPULAB_CHECK_LAUNCH();
    timer.start();
    body();
    timer.stop();
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    GPULAB_CUDA_CHECK(cudaEventRecord(fence.get(), nullptr));
    const double ms = timer.elapsed_ms();
    GPULAB_CUDA_CHECK(cudaEventSynchronize(fence.get()));
    float to_fence = 0;
    GPULAB_CUDA_CHECK(cudaEventElapsedTime(&to_fence, timer.start_event(), fence.get()));
    GPULAB_CUDA_CHECK(cudaGetLastError());
    // Work that outlived the stop event (a non-blocking stream the default stream does not wait
    // for) shows as a long way from the stop event to the fence behind the device synchronisation,
    // which is otherwise only the host's wake-up: then the run counts up to the fence.
    const double tail = to_fence - ms;
    const double timed = tail > std::max(kTailAllowanceMs, kTailAllowanceShare * ms) ? to_fence : ms;
    if (rep >= options.warmup) samples.push_back(timed);
  }
  return TimingStats::from_samples(std::move(samples));
}

TimingStats measure_cpu(const std::function<void()>& body, const std::function<void()>& before_each,
                        const MeasureOptions& options) {
  CpuTimer timer;
  std::vector<double> samples;
  const int total = std::max(0, options.warmup) + std::max(1, options.repetitions);
  for (int rep = 0; rep < total; ++rep) {
    if (before_each) before_each();
    timer.start();
    body();
    timer.stop();
    if (rep >= options.warmup) samples.push_back(timer.elapsed_ms());
  }
  return TimingStats::from_samples(std::move(samples));
}

double gigabytes_per_second(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0; }
double elements_per_second(double elements, double ms) { return ms > 0 ? elements / (ms * 1e-3) : 0.0; }

}  // namespace gpulab
