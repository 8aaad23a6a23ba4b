#include "gpulab/launch_counter.hpp"

#include <cupti.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace gpulab {

namespace {

std::atomic<long> g_launches{0};
std::atomic<std::size_t> g_host_copy_bytes{0};
std::atomic<bool> g_counting{false};
// A runtime launch calls the driver's launch underneath; count the outermost call only.
thread_local int t_runtime_depth = 0;

constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,  // a graph counts once: one submission
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};

constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

constexpr CUpti_CallbackId kRuntimeCopies[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
};

// Allocations and frees of device, managed and pinned host memory: always hooked (they are slow calls
// anyway, and a stage's timed runs are where a per-run leak shows). Runtime calls only: the harness,
// Thrust and CUB allocate through the runtime, and so does a student's cudaMalloc.
constexpr CUpti_CallbackId kRuntimeAllocations[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020,
};

constexpr CUpti_CallbackId kRuntimeFrees[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
};

template <std::size_t N>
bool listed(const CUpti_CallbackId (&ids)[N], CUpti_CallbackId id) {
  for (auto c : ids)
    if (c == id) return true;
  return false;
}

// What the process holds now, by pointer: allocations made since the subscription, less the frees.
struct LiveAllocations {
  std::mutex mutex;
  std::unordered_map<void*, std::size_t> bytes_of;
  std::size_t total = 0;
};

// Never destroyed: a buffer freed by another static's destructor at exit still reaches the callback,
// whatever the order in which statics are destroyed.
LiveAllocations& live_allocations() {
  static auto* live = new LiveAllocations;
  return *live;
}

// The pointer and size an allocation call made (at its exit), from its parameters. Every listed
// call's parameters start with the out-pointer (void**) and, except the pitched one, the size.
std::pair<void*, std::size_t> allocation_made(CUpti_CallbackId id, const void* params) {
  if (id == CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020) {
    const auto* p = static_cast<const cudaMallocPitch_v3020_params*>(params);
    return {p->devPtr ? *p->devPtr : nullptr, p->pitch ? *p->pitch * p->height : 0};
  }
  const auto* p = static_cast<const cudaMalloc_v3020_params*>(params);
  return {p->devPtr ? *p->devPtr : nullptr, p->size};
}

void track_allocation(CUpti_CallbackId id, const CUpti_CallbackData* call) {
  if (!call->functionParams) return;
  auto& live = live_allocations();
  if (listed(kRuntimeFrees, id)) {
    if (call->callbackSite != CUPTI_API_ENTER) return;
    // Every listed free takes the pointer first.
    void* ptr = static_cast<const cudaFree_v3020_params*>(call->functionParams)->devPtr;
    std::lock_guard lock(live.mutex);
    if (auto it = live.bytes_of.find(ptr); it != live.bytes_of.end()) {
      live.total -= it->second;
      live.bytes_of.erase(it);
    }
    return;
  }
  if (call->callbackSite != CUPTI_API_EXIT) return;
  const auto* returned = static_cast<const cudaError_t*>(call->functionReturnValue);
  if (returned && *returned != cudaSuccess) return;
  const auto [ptr, bytes] = allocation_made(id, call->functionParams);
  if (!ptr) return;
  std::lock_guard lock(live.mutex);
  auto& held = live.bytes_of[ptr];
  live.total += bytes - held;  // a pointer seen again (freed where no callback saw it) counts once
  held = bytes;
}

template <std::size_t N>
bool enable(CUpti_SubscriberHandle handle, bool on, CUpti_CallbackDomain domain, const CUpti_CallbackId (&ids)[N]) {
  for (auto id : ids)
    if (cuptiEnableCallback(on, handle, domain, id) != CUPTI_SUCCESS) return false;
  return true;
}

bool enable_allocation_callbacks(CUpti_SubscriberHandle handle) {
  return enable(handle, true, CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeAllocations) &&
         enable(handle, true, CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeFrees);
}

// The launch and copy calls are hooked only between start() and stop(): timing runs see no
// callback overhead.
bool enable_launch_callbacks(CUpti_SubscriberHandle handle, bool on) {
  return enable(handle, on, CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeLaunches) &&
         enable(handle, on, CUPTI_CB_DOMAIN_DRIVER_API, kDriverLaunches) &&
         enable(handle, on, CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeCopies);
}

void CUPTIAPI on_api_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  const bool enter = call->callbackSite == CUPTI_API_ENTER;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && (listed(kRuntimeAllocations, id) || listed(kRuntimeFrees, id))) {
    track_allocation(id, call);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && listed(kRuntimeCopies, id)) {
    // The four copy calls share the leading fields (dst, src, count, kind).
    const auto* p = static_cast<const cudaMemcpy_v3020_params*>(call->functionParams);
    if (enter && p && p->kind != cudaMemcpyDeviceToDevice && p->kind != cudaMemcpyHostToHost && g_counting.load(std::memory_order_relaxed))
      g_host_copy_bytes.fetch_add(p->count);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (enter) {
      if (t_runtime_depth++ == 0 && g_counting.load(std::memory_order_relaxed)) g_launches.fetch_add(1);
    } else {
      --t_runtime_depth;
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && enter && t_runtime_depth == 0 &&
             g_counting.load(std::memory_order_relaxed)) {
    g_launches.fetch_add(1);
  }
}

std::string cupti_message(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "unknown CUPTI error";
}

}  // namespace

LaunchCounter::LaunchCounter() {
  CUpti_SubscriberHandle handle = nullptr;
  const CUptiResult r = cuptiSubscribe(&handle, reinterpret_cast<CUpti_CallbackFunc>(on_api_call), nullptr);
  if (r != CUPTI_SUCCESS) {
    // Typically a profiler or sanitizer already holds CUPTI's single subscriber slot.
    reason_ = "launch counting unavailable (" + cupti_message(r) + ")";
    return;
  }
  subscriber_ = handle;
  available_ = true;
  allocations_tracked_ = enable_allocation_callbacks(handle);
}

LaunchCounter::~LaunchCounter() {
  g_counting = false;
  if (subscriber_) cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
}

void LaunchCounter::start() {
  g_launches = 0;
  g_host_copy_bytes = 0;
  if (!available_) return;
  if (!enable_launch_callbacks(static_cast<CUpti_SubscriberHandle>(subscriber_), true)) {
    available_ = false;
    reason_ = "launch counting unavailable (CUPTI refused the launch callbacks)";
    return;
  }
  g_counting = true;
}

long LaunchCounter::stop() {
  if (g_counting.exchange(false)) enable_launch_callbacks(static_cast<CUpti_SubscriberHandle>(subscriber_), false);
  return g_launches.load();
}

long LaunchCounter::count() const { return g_launches.load(); }

std::size_t LaunchCounter::host_copy_bytes() const { return g_host_copy_bytes.load(); }

std::optional<std::size_t> LaunchCounter::live_allocation_bytes() const {
  if (!allocations_tracked_) return std::nullopt;
  auto& live = live_allocations();
  std::lock_guard lock(live.mutex);
  return live.total;
}

}  // namespace gpulab
