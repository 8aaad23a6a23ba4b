// Running one stage: check (poisoned output, launch count, optional saved output), then time.
#include "gpulab/runner.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <fstream>

#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/launch_counter.hpp"
#include "gpulab/splitmix64.hpp"
#include "stage_marker.hpp"

namespace gpulab {

std::string_view to_string(StageStatus s) {
  switch (s) {
    case StageStatus::pass: return "pass";
    case StageStatus::fail: return "fail";
    case StageStatus::todo: return "todo";
    case StageStatus::skipped: return "skipped";
    case StageStatus::error: return "error";
  }
  return "?";
}

namespace {

// After an illegal address or a kernel fault the CUDA context is gone for this process.
std::string g_context_lost;

LaunchCounter& launch_counter() {
  static LaunchCounter counter;
  return counter;
}

struct NvtxRange {
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
};

// A stage that resets the device (cudaDeviceReset(), as cuda-samples end main()) destroys the CUDA
// context and every buffer the harness gave it; the next access to one fails with a bare "invalid
// argument" in harness code. A small allocation made before the stage runs tells that case apart:
// after a reset the runtime no longer knows it as device memory.
class ContextSentinel {
 public:
  void arm() {
    if (ptr_ == nullptr && cudaMalloc(&ptr_, 256) != cudaSuccess) {
      ptr_ = nullptr;
      cudaGetLastError();  // not the stage's error: no sentinel this time
    }
  }
  // True once: the context the sentinel was allocated in is gone (it is armed again next time).
  bool reset_since_armed() {
    if (ptr_ == nullptr) return false;
    cudaPointerAttributes attributes{};
    const cudaError_t e = cudaPointerGetAttributes(&attributes, ptr_);
    if (e != cudaSuccess) cudaGetLastError();
    const bool lost = e != cudaSuccess || attributes.type != cudaMemoryTypeDevice;
    if (lost) ptr_ = nullptr;
    return lost;
  }

 private:
  void* ptr_ = nullptr;
};

ContextSentinel& context_sentinel() {
  static ContextSentinel sentinel;
  return sentinel;
}

constexpr const char* kDeviceResetMessage =
    "the stage reset the device (cudaDeviceReset() destroys the CUDA context, and with it every buffer the "
    "harness gave the stage): a stage never resets the device; remove the call";

void synchronize_if_gpu(const Stage& stage) {
  if (stage.where == Where::gpu) GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
}

StageResult stage_error(const Stage& stage, StageStatus status, std::string message) {
  StageResult r;
  r.stage = stage.id;
  r.status = status;
  r.message = std::move(message);
  return r;
}

}  // namespace

namespace {

// check_stage, keeping the prepared instance so that timing reuses its inputs.
// A saved output: one header line, then the raw bytes. The header names what the bytes are, so
// that `verify` refuses output saved for another lab, stage or size.
void save_output(StageInstance& instance, const SaveOutput& to, const std::string& stage_id) {
  const std::string& folder = to.folder;
  const std::string& lab_id = to.lab;
  const auto bytes = instance.output_bytes();
  if (!bytes) throw UsageError("--save-output: stage " + stage_id + " cannot export its output");
  const std::string path = folder + "/" + stage_id + ".bin";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "gpulab-output 1 " << lab_id << " " << stage_id << " " << bytes->size() << "\n";
  out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
  if (!out) throw UsageError("--save-output: cannot write " + path);
}

}  // namespace

std::variant<std::vector<unsigned char>, std::string> load_saved_output(const std::string& path, const std::string& lab_id,
                                                                        const std::string& stage_id) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "no saved output " + path + " (the stage's process did not write it)";
  std::string magic, version, lab, stage;
  std::size_t count = 0;
  in >> magic >> version >> lab >> stage >> count;
  if (!in || magic != "gpulab-output" || version != "1" || in.get() != '\n')
    return "saved output " + path + " has no valid header";
  if (lab != lab_id || stage != stage_id)
    return "saved output " + path + " is for " + lab + "/" + stage + ", not " + lab_id + "/" + stage_id;
  // One read of the size the file has (not byte by byte: 64 MiB that way took ~0.1 s per stage).
  const auto body_start = in.tellg();
  in.seekg(0, std::ios::end);
  const auto body_end = in.tellg();
  in.seekg(body_start);
  const auto held = body_start >= 0 && body_end >= body_start ? static_cast<std::size_t>(body_end - body_start) : 0;
  if (!in || held != count)
    return "saved output " + path + " holds " + std::to_string(held) + " bytes, its header says " + std::to_string(count);
  std::vector<unsigned char> bytes(count);
  if (count > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count)))
    return "saved output " + path + ": reading its " + std::to_string(count) + " bytes failed";
  return bytes;
}

namespace {

StageResult check_stage_keeping(const Stage& stage, const Problem& given, std::unique_ptr<StageInstance>& kept,
                                const SaveOutput* save) {
  Problem problem;
  StageResult result;
  result.stage = stage.id;
  try {
    problem = stage.with_defaults(given);  // refuses a knob value out of range or one the stage does not run
    if (stage.predicted_launches) result.predicted_launches = stage.predicted_launches(problem);
  } catch (const std::exception& e) {
    return stage_error(stage, StageStatus::error, std::string("bad parameters: ") + e.what());
  }
  if (stage.where == Where::gpu && !gpu_available())
    return stage_error(stage, StageStatus::skipped, "not run: " + no_gpu_reason());
  if (stage.where == Where::gpu && !g_context_lost.empty())
    return stage_error(stage, StageStatus::error, "not run: the GPU context was lost earlier (" + g_context_lost + ")");
  try {
    kept = stage.prepare(problem);
    auto& instance = kept;
    instance->reset_output();
    synchronize_if_gpu(stage);
    if (stage.where == Where::gpu) context_sentinel().arm();
    auto& counter = launch_counter();
    {
      // Marker kernels just outside the range (declared first: the end marker follows the pop): a
      // kernel between them without the range on its stack escaped it (stage_marker.cu).
      detail::StageMarkers markers(stage.where == Where::gpu);
      NvtxRange range("gpulab:" + stage.id);
      counter.start();
      instance->run();
      synchronize_if_gpu(stage);
      const long launches = counter.stop();
      if (counter.available() && stage.where == Where::gpu) {
        result.launches = launches;
        result.host_copy_bytes = counter.host_copy_bytes();
      }
    }
    if (stage.where == Where::gpu) GPULAB_CUDA_CHECK(cudaGetLastError());
    if (save) save_output(*instance, *save, stage.id);
    const CheckResult check = instance->check();
    result.status = check.ok ? StageStatus::pass : StageStatus::fail;
    result.message = check.ok ? std::string{} : check.to_string();
  } catch (const NotImplemented& e) {
    result.status = StageStatus::todo;
    result.message = e.what();
  } catch (const CudaError& e) {
    result.status = StageStatus::error;
    result.message = e.what();
    if (e.sticky()) g_context_lost = std::string("stage ") + stage.id + ": " + cudaGetErrorName(e.code());
    else if (stage.where == Where::gpu && context_sentinel().reset_since_armed())
      result.message = std::string(kDeviceResetMessage) + " (then: " + e.what() + ")";
  } catch (const UsageError& e) {
    result.status = StageStatus::error;
    result.message = std::string("bad parameters: ") + e.what();
  } catch (const std::bad_alloc&) {
    result.status = StageStatus::error;
    result.message = "out of host memory for " + problem.describe() + ": try a smaller --n";
  } catch (const std::exception& e) {
    result.status = StageStatus::error;
    result.message = e.what();
  }
  if (stage.where == Where::gpu && result.status != StageStatus::pass && g_context_lost.empty()) {
    // A kernel that failed may have left an error behind; clear the non-sticky ones.
    cudaGetLastError();
  }
  return result;
}

}  // namespace

StageResult check_stage(const Stage& stage, const Problem& problem, const SaveOutput* save) {
  std::unique_ptr<StageInstance> instance;
  return check_stage_keeping(stage, problem, instance, save);
}

StageResult verify_stage_output(const Stage& stage, const Problem& problem, std::span<const unsigned char> bytes) {
  StageResult result;
  result.stage = stage.id;
  try {
    const auto& make = stage.check_on_host ? stage.check_on_host : stage.prepare;
    auto instance = make(stage.with_defaults(problem));
    const CheckResult check = instance->check_output(bytes);
    result.status = check.ok ? StageStatus::pass : StageStatus::fail;
    result.message = check.ok ? std::string{} : check.to_string();
    if (check.ok) result.input_is_answer = instance->input_is_answer();
  } catch (const std::exception& e) {
    result.status = StageStatus::error;
    result.message = e.what();
  }
  return result;
}

void add_percent_of_copy(StageResult& r) {
  if (r.gbps && gpu_available()) r.percent_of_copy = 100.0 * *r.gbps / measure_copy_bandwidth().best_gbps();
}

namespace {

// A run that was wrong on its fresh input (the replay guard): ends the timing, fails the stage.
struct WrongOnFreshInput {
  int run = 0;  // 1-based, warm-ups included
  CheckResult check;
};

}  // namespace

StageResult run_stage(const Lab& lab, const Stage& stage, const RunOptions& options) {
  (void)lab;
  std::unique_ptr<StageInstance> instance;
  StageResult result =
      check_stage_keeping(stage, options.problem, instance, options.save_output ? &*options.save_output : nullptr);
  if (result.status != StageStatus::pass || !options.time) return result;
  try {
    MeasureOptions measure = options.measure;
    if (stage.where == Where::cpu) {
      // Host code: fewer repetitions (a CPU scan of 2^28 takes a second).
      measure.warmup = std::min(measure.warmup, 1);
      measure.repetitions = std::min(measure.repetitions, 3);
    }
    // Does the stage draw fresh inputs? Asking draws the first run's input. The seeds come from the
    // OS's entropy: seeds derived from the problem's would let a stage make every answer untimed.
    const bool fresh = options.fresh_inputs && instance->redraw(entropy_seed());
    result.fresh_inputs = fresh;
    int runs = 0;
    auto reset = [&] {
      if (fresh && runs > 0) instance->redraw(entropy_seed());
      instance->reset_output();
    };
    auto body = [&] { instance->run(); };
    auto judge = [&] {
      ++runs;
      if (!fresh) return;
      CheckResult c = instance->check();
      if (!c.ok) throw WrongOnFreshInput{runs, std::move(c)};
    };
    // Memory the timed runs kept: one run's allocation that outlives it, every run (the check run
    // before them made any once-only allocation, such as a cache grown to this n, already).
    const auto held_before = launch_counter().live_allocation_bytes();
    if (stage.where == Where::cpu) {
      result.timing = measure_cpu(body, reset, measure, judge);
    } else {
      result.timing = measure_gpu(body, reset, measure, judge);
      // On one input the timed runs must still be right: a stage that only works the first time is
      // wrong (with fresh inputs every run was judged already).
      const CheckResult again = fresh ? CheckResult::pass() : instance->check();
      if (!again.ok) {
        result.status = StageStatus::fail;
        result.message = "correct on the first run but wrong after repeated runs: " + again.to_string();
        return result;
      }
    }
    if (const auto held_after = launch_counter().live_allocation_bytes(); held_before && held_after && runs > 0)
      result.bytes_kept_per_run = *held_after > *held_before ? (*held_after - *held_before) / static_cast<std::size_t>(runs) : 0;
    const double ms = result.timing->median_ms;
    result.gbps = gigabytes_per_second(instance->bytes_moved(), ms);
    const double elements =
        instance->elements().value_or(static_cast<double>(options.problem.n));
    result.elements_per_s = elements_per_second(elements, ms);
  } catch (const WrongOnFreshInput& w) {
    result.status = StageStatus::fail;
    result.timing.reset();
    // The reason first: the grader quotes the first 200 characters.
    result.message = "wrong in timed run " + std::to_string(w.run) + " (each gets a fresh input; the checked one was right): " +
                     w.check.to_string();
  } catch (const CudaError& e) {
    result.status = StageStatus::error;
    result.message = std::string("while timing: ") + e.what();
    if (e.sticky()) g_context_lost = std::string("stage ") + stage.id + ": " + cudaGetErrorName(e.code());
  } catch (const std::exception& e) {
    result.status = StageStatus::error;
    result.message = std::string("while timing: ") + e.what();
  }
  return result;
}


}  // namespace gpulab
