#include "gpulab/runner.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <variant>

#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/launch_counter.hpp"

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

// Exit codes (documented in README and runner --help).
constexpr int kExitOk = 0, kExitCheckFailed = 1, kExitUsage = 2, kExitStarterNotTodo = 3, kExitNoGpu = 77;

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
void save_output(StageInstance& instance, const std::string& folder, const std::string& lab_id,
                 const std::string& stage_id) {
  const auto bytes = instance.output_bytes();
  if (!bytes) throw UsageError("--save-output: stage " + stage_id + " cannot export its output");
  const std::string path = folder + "/" + stage_id + ".bin";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "gpulab-output 1 " << lab_id << " " << stage_id << " " << bytes->size() << "\n";
  out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
  if (!out) throw UsageError("--save-output: cannot write " + path);
}

// The bytes of a saved output, or a message saying why they cannot be judged.
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
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() != count)
    return "saved output " + path + " holds " + std::to_string(bytes.size()) + " bytes, its header says " + std::to_string(count);
  return bytes;
}

std::string g_lab_id;  // for saved-output headers

StageResult check_stage_keeping(const Stage& stage, const Problem& problem, std::unique_ptr<StageInstance>& kept,
                                const std::string& save_folder) {
  StageResult result;
  result.stage = stage.id;
  try {
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
    auto& counter = launch_counter();
    {
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
    if (!save_folder.empty()) save_output(*instance, save_folder, g_lab_id, stage.id);
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

StageResult check_stage(const Stage& stage, const Problem& problem, const std::string& save_folder) {
  std::unique_ptr<StageInstance> instance;
  return check_stage_keeping(stage, problem, instance, save_folder);
}

StageResult verify_stage_output(const Stage& stage, const Problem& problem, std::span<const unsigned char> bytes) {
  StageResult result;
  result.stage = stage.id;
  try {
    auto instance = stage.prepare(problem);
    const CheckResult check = instance->check_output(bytes);
    result.status = check.ok ? StageStatus::pass : StageStatus::fail;
    result.message = check.ok ? std::string{} : check.to_string();
  } catch (const std::exception& e) {
    result.status = StageStatus::error;
    result.message = e.what();
  }
  return result;
}

StageResult run_stage(const Lab& lab, const Stage& stage, const RunOptions& options) {
  (void)lab;
  std::unique_ptr<StageInstance> instance;
  StageResult result = check_stage_keeping(stage, options.problem, instance, options.save_output);
  if (result.status != StageStatus::pass || !options.time) return result;
  try {
    MeasureOptions measure = options.measure;
    auto reset = [&] { instance->reset_output(); };
    auto body = [&] { instance->run(); };
    if (stage.where == Where::cpu) {
      // Host code: a steady clock, and fewer repetitions (a CPU scan of 2^28 takes a second).
      measure.warmup = std::min(measure.warmup, 1);
      measure.repetitions = std::min(measure.repetitions, 3);
      result.timing = measure_cpu(body, reset, measure);
    } else {
      result.timing = measure_gpu(body, reset, measure);
      // The timed runs must still be right: a stage that only works the first time is wrong.
      const CheckResult again = instance->check();
      if (!again.ok) {
        result.status = StageStatus::fail;
        result.message = "correct on the first run but wrong after repeated runs: " + again.to_string();
        return result;
      }
    }
    const double ms = result.timing->median_ms;
    result.gbps = gigabytes_per_second(instance->bytes_moved(), ms);
    const double elements =
        instance->elements().value_or(static_cast<double>(options.problem.n));
    result.elements_per_s = elements_per_second(elements, ms);
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

namespace {

// "1025", "4096x4096", "2^28": the problem size forms the command line accepts.
void parse_size(const std::string& text, Problem& p) {
  auto number = [&](std::string_view s) -> std::size_t {
    std::size_t value = 0;
    if (s.size() > 2 && s.substr(0, 2) == "2^") {
      int k = 0;
      auto [ptr, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), k);
      if (ec != std::errc() || ptr != s.data() + s.size() || k < 0 || k > 40)
        throw UsageError("--n " + text + ": the exponent in 2^k must be 0..40");
      return std::size_t{1} << k;
    }
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || ptr != s.data() + s.size())
      throw UsageError("--n " + text + ": expected a count (1025, 2^20) or rows x cols (1000x999)");
    return value;
  };
  const auto x = text.find_first_of("xX");
  if (x == std::string::npos) {
    p.n = number(text);
    p.rows = p.cols = 0;
  } else {
    p.rows = number(std::string_view(text).substr(0, x));
    p.cols = number(std::string_view(text).substr(x + 1));
    p.n = p.rows * p.cols;
  }
}

struct CommonOptions {
  std::string size;
  std::uint64_t seed = 1;
  std::string distribution = "uniform";
  std::vector<std::string> params;
  int reps = 10, warmup = 2;
  bool no_flush = false;
  std::string format = "table";
  bool require_gpu = false;
};

void add_common_options(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--n", o.size, "problem size: a count (1025, 2^24) or rows x cols (8192x8192)");
  cmd->add_option("--seed", o.seed, "input seed (same seed, same input)")->capture_default_str();
  cmd->add_option("--dist", o.distribution,
                  "input distribution: uniform, small-range, all-equal, sorted, reverse, few-unique, full-range")
      ->capture_default_str();
  cmd->add_option("--param", o.params, "stage knob as key=value (block=256, alpha=4, colors=8); repeatable");
  cmd->add_option("--reps", o.reps, "timed repetitions (the median is reported)")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", o.warmup, "untimed runs before timing")->capture_default_str()->check(CLI::Range(0, 1000));
  cmd->add_flag("--no-flush", o.no_flush, "do not flush the L2 between repetitions");
  cmd->add_option("--format", o.format, "output: table, csv or json")->capture_default_str();
  cmd->add_flag("--require-gpu", o.require_gpu,
                "exit 77 (ctest: skipped) when there is no GPU; with GPULAB_REQUIRE_GPU=1, fail instead");
}

Problem make_problem(const Lab& lab, const CommonOptions& o) {
  Problem p;
  p.n = lab.default_n;
  p.rows = lab.default_rows;
  p.cols = lab.default_cols;
  if (p.rows && p.cols) p.n = p.rows * p.cols;
  if (!o.size.empty()) parse_size(o.size, p);
  if (lab.default_rows && !o.size.empty() && p.rows == 0)
    throw UsageError("--n " + o.size + ": this lab works on matrices; give rows x cols, e.g. --n 1000x999");
  p.seed = o.seed;
  auto d = parse_distribution(o.distribution);
  if (!d) throw UsageError("--dist " + o.distribution + ": unknown; use one of uniform, small-range, all-equal, sorted, reverse, few-unique, full-range");
  p.distribution = *d;
  for (const auto& kv : o.params) {
    const auto eq = kv.find('=');
    long long value = 0;
    const char* begin = kv.data() + (eq == std::string::npos ? 0 : eq + 1);
    auto [ptr, ec] = std::from_chars(begin, kv.data() + kv.size(), value);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != kv.data() + kv.size())
      throw UsageError("--param " + kv + ": expected key=integer, e.g. --param block=256");
    p.params[kv.substr(0, eq)] = value;
  }
  return p;
}

OutputFormat make_format(const std::string& name) {
  auto f = parse_output_format(name);
  if (!f) throw UsageError("--format " + name + ": use table, csv or json");
  return *f;
}

MeasureOptions make_measure(const CommonOptions& o) {
  MeasureOptions m;
  m.repetitions = o.reps;
  m.warmup = o.warmup;
  m.flush_l2 = !o.no_flush;
  return m;
}

// No GPU: one clear line; with --require-gpu, ctest's skip code (or a failure on the GPU preset).
std::optional<int> handle_missing_gpu(bool needs_gpu, bool require_gpu) {
  if (!needs_gpu || gpu_available()) return std::nullopt;
  std::cerr << no_gpu_line() << "\n";
  if (!require_gpu) return std::nullopt;
  const char* required = std::getenv("GPULAB_REQUIRE_GPU");
  if (required && std::string(required) == "1") {
    std::cerr << "gpulab: GPULAB_REQUIRE_GPU=1 but no GPU is usable: failing instead of skipping\n";
    return kExitCheckFailed;
  }
  return kExitNoGpu;
}

std::string_view where_name(Where w) { return w == Where::gpu ? "gpu" : "cpu"; }
std::string_view role_name(Role r) { return r == Role::student ? "student" : "baseline"; }

Cell opt(const std::optional<double>& v) { return v ? Cell{*v} : Cell{}; }
Cell opt(const std::optional<long>& v) { return v ? Cell{static_cast<std::int64_t>(*v)} : Cell{}; }

nlohmann::ordered_json json_opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}
nlohmann::ordered_json json_opt(const std::optional<long>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json device_json() {
  if (!gpu_available()) return nullptr;
  auto d = query_device();
  if (!d) return nullptr;
  return {{"name", d->name},
          {"compute_capability", std::to_string(d->cc_major) + "." + std::to_string(d->cc_minor)},
          {"multiprocessors", d->multiprocessors},
          {"l2_bytes", d->l2_bytes},
          {"theoretical_gbps", d->theoretical_bandwidth_gbps()}};
}

nlohmann::ordered_json problem_json(const Problem& p) {
  nlohmann::ordered_json j{{"n", p.n}, {"seed", p.seed}, {"distribution", std::string(to_string(p.distribution))}};
  if (p.rows || p.cols) {
    j["rows"] = p.rows;
    j["cols"] = p.cols;
  }
  j["params"] = p.params;
  return j;
}

int cmd_list(const Lab& lab, const std::string& format_name) {
  const auto format = make_format(format_name);
  if (format == OutputFormat::json) {
    nlohmann::ordered_json doc{{"lab", lab.id}, {"title", lab.title}, {"implementation", std::string(implementation_name())},
                               {"student_files", lab.student_files}};
    doc["stages"] = nlohmann::ordered_json::array();
    for (const auto& s : lab.stages)
      doc["stages"].push_back({{"id", s.id},
                               {"title", s.title},
                               {"where", std::string(where_name(s.where))},
                               {"role", std::string(role_name(s.role))},
                               {"must_be_conflict_free", s.must_be_conflict_free},
                               {"expect_conflicts", s.expect_conflicts},
                               {"source", s.source}});
    doc["experiments"] = nlohmann::ordered_json::array();
    for (const auto& e : lab.experiments)
      doc["experiments"].push_back({{"id", e.id}, {"title", e.title}, {"needs_gpu", e.needs_gpu}});
    std::cout << doc.dump(2) << "\n";
    return kExitOk;
  }
  Table stages({{"stage", "stage"}, {"where", "where"}, {"role", "role"}, {"banks", "banks"}, {"title", "title"}, {"source", "source"}},
               lab.title + " — stages (" + lab.student_files + ")");
  for (const auto& s : lab.stages)
    stages.add_row({s.id, std::string(where_name(s.where)), std::string(role_name(s.role)),
                    std::string(s.must_be_conflict_free ? "conflict-free" : s.expect_conflicts ? "conflicts" : ""),
                    s.title, s.source});
  stages.print(std::cout, format);
  if (!lab.experiments.empty()) {
    Table experiments({{"experiment", "experiment"}, {"title", "title"}}, "\nexperiments (gpulab-" + lab.id + "-* experiment ID)");
    for (const auto& e : lab.experiments) experiments.add_row({e.id, e.title});
    experiments.print(std::cout, format);
  }
  return kExitOk;
}

struct RunCommand {
  CommonOptions common;
  std::vector<std::string> stages;
  std::string where = "all";
  bool no_time = false;
  bool check_starter = false;
  std::string save_output;
};

std::vector<const Stage*> select_stages(const Lab& lab, const RunCommand& cmd) {
  if (cmd.where != "all" && cmd.where != "cpu" && cmd.where != "gpu")
    throw UsageError("--where " + cmd.where + ": use cpu, gpu or all");
  std::vector<const Stage*> selected;
  if (cmd.stages.empty()) {
    for (const auto& s : lab.stages) selected.push_back(&s);
  } else {
    for (const auto& id : cmd.stages) {
      const Stage* s = lab.find_stage(id);
      if (!s) {
        std::string ids;
        for (const auto& st : lab.stages) ids += (ids.empty() ? "" : ", ") + st.id;
        throw UsageError("--stage " + id + ": no such stage in lab " + lab.id + "; stages: " + ids);
      }
      selected.push_back(s);
    }
  }
  std::erase_if(selected, [&](const Stage* s) {
    return (cmd.where == "cpu" && s->where != Where::cpu) || (cmd.where == "gpu" && s->where != Where::gpu) ||
           (cmd.check_starter && s->role != Role::student);
  });
  return selected;
}

std::string short_message(const StageResult& r) {
  std::string m = r.message.substr(0, r.message.find('\n'));
  if (r.status == StageStatus::todo) return "TODO: write it in your student file";
  return m.size() > 90 ? m.substr(0, 87) + "..." : m;
}

int cmd_run(const Lab& lab, const RunCommand& cmd) {
  const auto format = make_format(cmd.common.format);
  RunOptions options;
  options.problem = make_problem(lab, cmd.common);
  options.measure = make_measure(cmd.common);
  options.time = !cmd.no_time && !cmd.check_starter;
  options.save_output = cmd.save_output;
  const auto selected = select_stages(lab, cmd);
  bool any_gpu = false;
  for (const auto* s : selected) any_gpu |= s->where == Where::gpu;
  if (auto code = handle_missing_gpu(any_gpu, cmd.common.require_gpu)) return *code;

  std::optional<CopyBandwidth> copy;
  if (options.time && any_gpu && gpu_available()) copy = measure_copy_bandwidth();

  std::vector<StageResult> results;
  for (const auto* s : selected) results.push_back(run_stage(lab, *s, options));

  // The CPU baseline for "vs CPU": from this run, or timed now if it was not selected.
  std::optional<double> cpu_ms;
  if (options.time && !lab.baseline_cpu_stage.empty()) {
    for (const auto& r : results)
      if (r.stage == lab.baseline_cpu_stage && r.timing) cpu_ms = r.timing->median_ms;
    const Stage* baseline = lab.find_stage(lab.baseline_cpu_stage);
    if (!cpu_ms && baseline && any_gpu) {
      auto r = run_stage(lab, *baseline, options);
      if (r.timing) cpu_ms = r.timing->median_ms;
    }
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& r = results[i];
    if (!r.timing) continue;
    if (copy && selected[i]->where == Where::gpu && r.gbps) r.percent_of_copy = 100.0 * *r.gbps / copy->best_gbps();
    if (cpu_ms) r.speedup_vs_cpu = *cpu_ms / r.timing->median_ms;
  }

  if (format == OutputFormat::json) {
    nlohmann::ordered_json doc{{"lab", lab.id},
                               {"implementation", std::string(implementation_name())},
                               {"device", device_json()},
                               {"copy_gbps", copy ? nlohmann::ordered_json(copy->best_gbps()) : nlohmann::ordered_json(nullptr)},
                               {"problem", problem_json(options.problem)}};
    if (!gpu_available()) doc["no_gpu"] = no_gpu_reason();
    doc["results"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      const auto* s = selected[i];
      doc["results"].push_back({{"stage", r.stage},
                                {"title", s->title},
                                {"where", std::string(where_name(s->where))},
                                {"role", std::string(role_name(s->role))},
                                {"status", std::string(to_string(r.status))},
                                {"message", r.message},
                                {"median_ms", json_opt(r.timing ? std::optional<double>(r.timing->median_ms) : std::nullopt)},
                                {"min_ms", json_opt(r.timing ? std::optional<double>(r.timing->min_ms) : std::nullopt)},
                                {"max_ms", json_opt(r.timing ? std::optional<double>(r.timing->max_ms) : std::nullopt)},
                                {"gbps", json_opt(r.gbps)},
                                {"elements_per_s", json_opt(r.elements_per_s)},
                                {"percent_of_copy", json_opt(r.percent_of_copy)},
                                {"speedup_vs_cpu", json_opt(r.speedup_vs_cpu)},
                                {"launches", json_opt(r.launches)},
                                {"predicted_launches", json_opt(r.predicted_launches)},
                                {"host_copy_bytes", r.host_copy_bytes ? nlohmann::ordered_json(*r.host_copy_bytes) : nlohmann::ordered_json(nullptr)}});
    }
    std::cout << doc.dump(2) << "\n";
  } else {
    std::string title = lab.title + " — " + std::string(implementation_name()) + " — " + options.problem.describe();
    if (auto d = query_device()) title += " — " + d->name;
    Table table({{"stage", "stage"},
                 {"status", "status"},
                 {"median_ms", "median ms", 4},
                 {"gbps", "GB/s", 1},
                 {"percent_of_copy", "% copy", 1},
                 {"gelem_per_s", "Gelem/s", 3},
                 {"speedup_vs_cpu", "vs CPU", 1},
                 {"launches", "launches"},
                 {"predicted_launches", "model"},
                 {"note", "note"}},
                title);
    for (const auto& r : results) {
      std::optional<double> gelem;
      if (r.elements_per_s) gelem = *r.elements_per_s / 1e9;
      table.add_row({r.stage, std::string(to_string(r.status)),
                     opt(r.timing ? std::optional<double>(r.timing->median_ms) : std::nullopt), opt(r.gbps),
                     opt(r.percent_of_copy), opt(gelem), opt(r.speedup_vs_cpu), opt(r.launches),
                     opt(r.predicted_launches), short_message(r)});
    }
    if (copy)
      table.add_note("copy roof: " + std::to_string(static_cast<long>(copy->best_gbps())) +
                     " GB/s (device-to-device, bytes read + written); GB/s counts the model's bytes: input read once, output written once");
    if (!gpu_available() && any_gpu) table.add_note(no_gpu_line());
    table.print(std::cout, format);
    if (format == OutputFormat::table)
      for (const auto& r : results)
        if (r.status == StageStatus::fail || r.status == StageStatus::error)
          std::cout << "\n[" << r.stage << "] " << to_string(r.status) << ": " << r.message << "\n";
  }

  int code = kExitOk;
  for (const auto& r : results)
    if (r.status == StageStatus::fail || r.status == StageStatus::error) code = kExitCheckFailed;
  if (cmd.check_starter) {
    std::vector<std::string> bad;
    for (const auto& r : results)
      if (r.status != StageStatus::todo && r.status != StageStatus::skipped) bad.push_back(r.stage + " (" + std::string(to_string(r.status)) + ")");
    if (!bad.empty()) {
      std::cerr << "check-starter: these student stages did not report TODO:";
      for (const auto& b : bad) std::cerr << " " << b;
      std::cerr << "\n";
      return kExitStarterNotTodo;
    }
    std::cerr << "check-starter: every student stage reports TODO\n";
    return kExitOk;
  }
  return code;
}

struct ExperimentCommand {
  CommonOptions common;
  std::string id;
  bool quick = false;
  std::string csv;
};

int cmd_experiment(const Lab& lab, const ExperimentCommand& cmd) {
  const auto format = make_format(cmd.common.format);
  const Experiment* experiment = nullptr;
  for (const auto& e : lab.experiments)
    if (e.id == cmd.id) experiment = &e;
  if (!experiment) {
    std::string ids;
    for (const auto& e : lab.experiments) ids += (ids.empty() ? "" : ", ") + e.id;
    throw UsageError("experiment " + cmd.id + ": no such experiment in lab " + lab.id + "; experiments: " +
                     (ids.empty() ? "(none)" : ids));
  }
  if (auto code = handle_missing_gpu(experiment->needs_gpu, cmd.common.require_gpu)) return *code;
  if (experiment->needs_gpu && !gpu_available()) return kExitOk;
  ExperimentContext ctx;
  ctx.base = make_problem(lab, cmd.common);
  ctx.measure = make_measure(cmd.common);
  ctx.quick = cmd.quick;
  const Table table = experiment->run(ctx);
  table.print(std::cout, format);
  if (!cmd.csv.empty()) {
    std::ofstream out(cmd.csv);
    if (!out) throw UsageError("--csv " + cmd.csv + ": cannot write this file");
    table.print_csv(out);
    std::cerr << "wrote " << cmd.csv << "\n";
  }
  return kExitOk;
}

struct VerifyCommand {
  CommonOptions common;
  std::vector<std::string> stages;
  std::string output_dir;
};

// The grader's verdict: outputs saved by a student's process, judged by this (reference) binary.
int cmd_verify(const Lab& lab, const VerifyCommand& cmd) {
  std::vector<const Stage*> stages;
  for (const auto& id : cmd.stages) {
    const Stage* stage = lab.find_stage(id);
    if (!stage) throw UsageError("--stage " + id + ": no such stage in lab " + lab.id);
    stages.push_back(stage);
  }
  bool any_gpu = false;
  for (const auto* s : stages) any_gpu |= s->where == Where::gpu;
  if (auto code = handle_missing_gpu(any_gpu, cmd.common.require_gpu)) return *code;
  const Problem problem = make_problem(lab, cmd.common);
  nlohmann::ordered_json doc{{"lab", lab.id},
                             {"verifier", std::string(implementation_name())},
                             {"problem", problem_json(problem)},
                             {"results", nlohmann::ordered_json::array()}};
  bool all_pass = true;
  for (const auto* stage : stages) {
    StageResult r;
    r.stage = stage->id;
    auto loaded = load_saved_output(cmd.output_dir + "/" + stage->id + ".bin", lab.id, stage->id);
    if (auto* why = std::get_if<std::string>(&loaded)) {
      r.status = StageStatus::fail;
      r.message = *why;
    } else {
      r = verify_stage_output(*stage, problem, std::get<std::vector<unsigned char>>(loaded));
    }
    all_pass &= r.status == StageStatus::pass;
    doc["results"].push_back({{"stage", r.stage}, {"status", std::string(to_string(r.status))}, {"message", r.message}});
  }
  if (cmd.common.format == "json") {
    std::cout << doc.dump(2) << "\n";
  } else {
    for (const auto& row : doc["results"])
      std::cout << row["stage"].get<std::string>() << ": " << row["status"].get<std::string>() << " "
                << row["message"].get<std::string>() << "\n";
  }
  return all_pass ? kExitOk : kExitCheckFailed;
}

}  // namespace

int runner_main(int argc, char** argv) {
  try {
    const Lab lab = make_lab();
    g_lab_id = lab.id;
    CLI::App app{lab.title + " — gpulab runner (" + std::string(implementation_name()) + " implementation)\n" +
                 "Exit codes: 0 ok, 1 a check failed, 2 bad usage, 3 a starter stage did not say TODO, "
                 "77 no GPU with --require-gpu."};
    app.require_subcommand(1);
    std::string list_format = "table";
    auto* list = app.add_subcommand("list", "list the stages and experiments");
    list->add_option("--format", list_format, "table or json")->capture_default_str();

    RunCommand run;
    auto* run_cmd = app.add_subcommand("run", "check, then time, the stages on seeded input");
    add_common_options(run_cmd, run.common);
    run_cmd->add_option("--stage", run.stages, "stage id (repeatable; default: all)");
    run_cmd->add_option("--where", run.where, "cpu, gpu or all stages")->capture_default_str();
    run_cmd->add_flag("--no-time", run.no_time, "check only, each stage run once (for sanitizers and profilers)");
    run_cmd->add_flag("--check-starter", run.check_starter,
                      "verify that every student stage reports TODO (the untouched starter)");
    run_cmd->add_option("--save-output", run.save_output,
                        "write each checked stage's raw output to DIR/<stage>.bin (judged by `verify` in another process)")
        ->check(CLI::ExistingDirectory);

    VerifyCommand verify;
    auto* verify_cmd = app.add_subcommand(
        "verify", "judge a stage's raw output (from run --save-output) against this binary's harness; prints JSON");
    add_common_options(verify_cmd, verify.common);
    verify_cmd->add_option("--stage", verify.stages, "stage id (repeatable)")->required();
    verify_cmd->add_option("--output-dir", verify.output_dir, "folder with <stage>.bin files from run --save-output")
        ->required()
        ->check(CLI::ExistingDirectory);

    ExperimentCommand experiment;
    auto* exp_cmd = app.add_subcommand("experiment", "run one of the lab's experiments and print its table");
    exp_cmd->add_option("id", experiment.id, "experiment id (see list)")->required();
    add_common_options(exp_cmd, experiment.common);
    exp_cmd->add_flag("--quick", experiment.quick, "fewer points (for tests)");
    exp_cmd->add_option("--csv", experiment.csv, "also write the table as CSV to this file");

    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int code = app.exit(e);
      return code == 0 ? kExitOk : kExitUsage;
    }
    if (*list) return cmd_list(lab, list_format);
    if (*run_cmd) return cmd_run(lab, run);
    if (*exp_cmd) return cmd_experiment(lab, experiment);
    if (*verify_cmd) return cmd_verify(lab, verify);
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const CudaError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitCheckFailed;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitCheckFailed;
  }
}

}  // namespace gpulab
