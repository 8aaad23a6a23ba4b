// The command line of every gpulab-<lab>-<impl> runner: list, run, experiment, verify, paths.
#include <CLI/CLI.hpp>
#include <malloc.h>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <variant>

#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/runner.hpp"

namespace gpulab {

namespace {

// Exit codes (documented in README and runner --help).
constexpr int kExitOk = 0, kExitCheckFailed = 1, kExitUsage = 2, kExitStarterNotTodo = 3;

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
  std::string timer = "sync";
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
  cmd->add_option("--timer", o.timer,
                  "GPU timer: sync (the grader's: a device synchronisation before the stop event) or events "
                  "(the stop event right after the body: no wake-up latency; see timing.hpp)")
      ->capture_default_str()
      ->check(CLI::IsMember({"sync", "events"}));
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
    if (eq == std::string::npos || eq == 0) throw UsageError("--param " + kv + ": expected key=value, e.g. --param block=256");
    const std::string key = kv.substr(0, eq), text = kv.substr(eq + 1);
    // A knob of lab.toml takes its names too (op=interval); any other key an integer.
    if (const Knob* knob = lab.find_knob(key)) {
      p.params[key] = knob->parse(text);
      continue;
    }
    long long value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
      throw UsageError("--param " + kv + ": expected key=integer, e.g. --param block=256");
    p.params[key] = value;
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
  m.clock = o.timer == "events" ? GpuClock::stream_events : GpuClock::device_sync;
  return m;
}

// No GPU: one clear line; with --require-gpu, ctest's skip code (or a failure on the GPU preset).
std::optional<int> handle_missing_gpu(bool needs_gpu, bool require_gpu) {
  if (!needs_gpu || gpu_available()) return std::nullopt;
  if (require_gpu) return missing_gpu_exit_code(std::cerr);
  std::cerr << no_gpu_line() << "\n";
  return std::nullopt;
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
                               {"student_files", nlohmann::ordered_json::array()}};
    for (const auto& f : lab.student_files) doc["student_files"].push_back("labs/" + lab.id + "/" + f);
    doc["stages"] = nlohmann::ordered_json::array();
    for (const auto& s : lab.stages)
      doc["stages"].push_back({{"id", s.id},
                               {"title", s.title},
                               {"where", std::string(where_name(s.where))},
                               {"role", std::string(role_name(s.role))},
                               {"must_be_conflict_free", s.must_be_conflict_free},
                               {"expect_conflicts", s.expect_conflicts},
                               {"source", s.source},
                               {"file", s.file.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(lab.path_of(s))},
                               {"knobs", s.knobs},
                               {"defaults", s.defaults},
                               {"verified_on_host", s.where == Where::cpu || static_cast<bool>(s.check_on_host)}});
    doc["experiments"] = nlohmann::ordered_json::array();
    for (const auto& e : lab.experiments)
      doc["experiments"].push_back({{"id", e.id}, {"title", e.title}, {"needs_gpu", e.needs_gpu}});
    std::cout << doc.dump(2) << "\n";
    return kExitOk;
  }
  Table stages({{"stage", "stage"}, {"where", "where"}, {"role", "role"}, {"banks", "banks"}, {"title", "title"}, {"source", "source"}},
               lab.title + " — stages (" + lab.student_files_text() + ")");
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
  bool no_cpu_baseline = false;
  bool same_input = false;
  bool check_starter = false;
  std::string save_output;
  std::string cases;  // --cases JSON: several check-only cases in this one process (cmd_run_cases)
};

// The stages --stage names (every stage when none), or a UsageError listing the lab's.
std::vector<const Stage*> named_stages(const Lab& lab, const std::vector<std::string>& ids) {
  std::vector<const Stage*> selected;
  if (ids.empty())
    for (const auto& s : lab.stages) selected.push_back(&s);
  for (const auto& id : ids) {
    const Stage* s = lab.find_stage(id);
    if (!s) {
      std::string all;
      for (const auto& st : lab.stages) all += (all.empty() ? "" : ", ") + st.id;
      throw UsageError("--stage " + id + ": no such stage in lab " + lab.id + "; stages: " + all);
    }
    selected.push_back(s);
  }
  return selected;
}

std::vector<const Stage*> select_stages(const Lab& lab, const RunCommand& cmd) {
  if (cmd.where != "all" && cmd.where != "cpu" && cmd.where != "gpu")
    throw UsageError("--where " + cmd.where + ": use cpu, gpu or all");
  std::vector<const Stage*> selected = named_stages(lab, cmd.stages);
  std::erase_if(selected, [&](const Stage* s) {
    return (cmd.where == "cpu" && s->where != Where::cpu) || (cmd.where == "gpu" && s->where != Where::gpu) ||
           (cmd.check_starter && s->role != Role::student);
  });
  return selected;
}

// A passing stage whose timed runs each kept memory: said beside its time, which the leak's
// cudaMalloc inflates, and what to do.
std::string kept_memory_note(const StageResult& r) {
  if (!r.bytes_kept_per_run || *r.bytes_kept_per_run == 0) return {};
  return "kept " + std::to_string(*r.bytes_kept_per_run) +
         " bytes of allocated memory per run (a cudaMalloc in run() with no cudaFree): take scratch from "
         "the harness's workspace (ws.take<T>(count)), or free what run() allocates";
}

std::string short_message(const Lab& lab, const StageResult& r) {
  std::string m = r.message.substr(0, r.message.find('\n'));
  if (m.empty()) m = kept_memory_note(r);
  if (r.status == StageStatus::todo) {
    const Stage* s = lab.find_stage(r.stage);
    const std::string path = s ? lab.path_of(*s) : std::string();
    return "TODO: write it in " + (path.empty() ? std::string("your student file") : path);
  }
  return m.size() > 90 ? m.substr(0, 87) + "..." : m;
}

// A run's JSON document (--format json): the problem and one row per stage, as the grader reads it.
nlohmann::ordered_json run_document(const Lab& lab, const RunOptions& options, const std::vector<const Stage*>& selected,
                                    const std::vector<StageResult>& results, const std::optional<CopyBandwidth>& copy) {
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
                              {"host_copy_bytes", r.host_copy_bytes ? nlohmann::ordered_json(*r.host_copy_bytes) : nlohmann::ordered_json(nullptr)},
                              {"bytes_kept_per_run", r.bytes_kept_per_run ? nlohmann::ordered_json(*r.bytes_kept_per_run) : nlohmann::ordered_json(nullptr)},
                              {"fresh_inputs", r.fresh_inputs}});
  }
  return doc;
}

// `run --cases JSON --no-time --format json --save-output DIR`: the grader's small correctness
// cases in one process. Each process pays for its CUDA context (0.25-0.4 s) and the driver makes
// one GPU's contexts about one at a time (32 runner processes at once: 9.3 s on an H200,
// 2026-11-29), so a row of two dozen cases, one process each, queued for them. JSON:
// [{"args": [a problem's options, as run takes them], "stages": [ids]}, ...]. Each case prints one
// line as it ends, its run document with "case": its index (or "error": why it could not run), and
// saves to DIR/<index>/<stage>.bin. Exit 0 when every stage of every case passed (or said TODO, or
// was skipped), else 1. Whatever the grader cannot take from here it runs again alone.
int cmd_run_cases(const Lab& lab, const RunCommand& cmd) {
  if (!cmd.no_time || make_format(cmd.common.format) != OutputFormat::json || cmd.save_output.empty())
    throw UsageError("--cases: give --no-time --format json --save-output DIR too (the grader's correctness cases)");
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(cmd.cases);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("--cases: not JSON: ") + e.what());
  }
  if (!spec.is_array()) throw UsageError("--cases: expected a JSON array of {\"args\": [...], \"stages\": [...]}");
  bool all_pass = true;
  for (std::size_t i = 0; i < spec.size(); ++i) {
    nlohmann::ordered_json line;
    try {
      const auto& c = spec[i];
      if (!c.is_object() || !c.contains("args") || !c["args"].is_array() || !c.contains("stages") || !c["stages"].is_array())
        throw UsageError("case " + std::to_string(i) + ": expected {\"args\": [...], \"stages\": [...]}");
      CommonOptions o = cmd.common;
      o.params.clear();
      CLI::App parser{"case"};
      add_common_options(&parser, o);
      auto args = c["args"].get<std::vector<std::string>>();
      std::reverse(args.begin(), args.end());  // CLI11 takes a vector of arguments last first
      parser.parse(args);
      RunOptions options;
      options.problem = make_problem(lab, o);
      options.time = false;
      const std::string folder = cmd.save_output + "/" + std::to_string(i);
      std::filesystem::create_directories(folder);
      options.save_output = SaveOutput{folder, lab.id};
      const auto selected = named_stages(lab, c["stages"].get<std::vector<std::string>>());
      lab.check_knobs(options.problem, selected);
      std::vector<StageResult> results;
      for (const auto* st : selected) {
        results.push_back(run_stage(lab, *st, options));
        const auto status = results.back().status;
        all_pass &= status == StageStatus::pass || status == StageStatus::todo || status == StageStatus::skipped;
      }
      line = run_document(lab, options, selected, results, std::nullopt);
    } catch (const CLI::ParseError& e) {
      line = {{"error", std::string("bad case options: ") + e.what()}};
      all_pass = false;
    } catch (const std::exception& e) {
      line = {{"error", e.what()}};
      all_pass = false;
    }
    line["case"] = i;
    std::cout << line.dump() << std::endl;  // flushed: a case that ends the process keeps the ones before it
  }
  return all_pass ? kExitOk : kExitCheckFailed;
}

int cmd_run(const Lab& lab, const RunCommand& cmd) {
  if (!cmd.cases.empty()) return cmd_run_cases(lab, cmd);
  const auto format = make_format(cmd.common.format);
  RunOptions options;
  options.problem = make_problem(lab, cmd.common);
  options.measure = make_measure(cmd.common);
  options.time = !cmd.no_time && !cmd.check_starter;
  options.fresh_inputs = !cmd.same_input;
  if (!cmd.save_output.empty()) options.save_output = SaveOutput{cmd.save_output, lab.id};
  const auto selected = select_stages(lab, cmd);
  lab.check_knobs(options.problem, selected);
  bool any_gpu = false;
  for (const auto* s : selected) any_gpu |= s->where == Where::gpu;
  if (auto code = handle_missing_gpu(any_gpu, cmd.common.require_gpu)) return *code;

  std::optional<CopyBandwidth> copy;
  if (options.time && any_gpu && gpu_available()) copy = measure_copy_bandwidth();

  std::vector<StageResult> results;
  for (const auto* s : selected) results.push_back(run_stage(lab, *s, options));

  // The CPU baseline for "vs CPU": from this run, or timed now if it was not selected.
  std::optional<double> cpu_ms;
  if (options.time && !cmd.no_cpu_baseline && !lab.baseline_cpu_stage.empty()) {
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
    if (copy && selected[i]->where == Where::gpu) add_percent_of_copy(r);
    if (cpu_ms) r.speedup_vs_cpu = *cpu_ms / r.timing->median_ms;
  }

  if (format == OutputFormat::json) {
    const auto doc = run_document(lab, options, selected, results, copy);
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
                     opt(r.predicted_launches), short_message(lab, r)});
    }
    if (copy)
      table.add_note("copy roof: " + std::to_string(static_cast<long>(copy->best_gbps())) +
                     " GB/s (device-to-device, bytes read + written); GB/s counts the model's bytes: input read once, output written once");
    if (!gpu_available() && any_gpu) table.add_note(no_gpu_line());
    table.print(std::cout, format);
    if (format == OutputFormat::table)
      for (const auto& r : results) {
        if (r.status == StageStatus::fail || r.status == StageStatus::error)
          std::cout << "\n[" << r.stage << "] " << to_string(r.status) << ": " << r.message << "\n";
        else if (const std::string kept = kept_memory_note(r); !kept.empty())
          std::cout << "\n[" << r.stage << "] " << kept << "\n";
      }
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
  ExperimentContext ctx;
  ctx.lab = &lab;
  ctx.base = make_problem(lab, cmd.common);
  lab.check_knobs(ctx.base, {}, experiment);
  if (auto code = handle_missing_gpu(experiment->needs_gpu, cmd.common.require_gpu)) return *code;
  if (experiment->needs_gpu && !gpu_available()) {
    // Say what did not happen: a CSV left from an earlier run must not pass for this one's.
    std::cerr << "experiment " << experiment->id << " needs a GPU: nothing measured"
              << (cmd.csv.empty() ? std::string() : ", --csv " + cmd.csv + " not written") << "\n";
    return kExitOk;
  }
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
  const std::vector<const Stage*> stages = named_stages(lab, cmd.stages);
  // A stage checked on the host (Stage::checked_on_host) is judged without a GPU.
  bool any_gpu = false;
  for (const auto* s : stages) any_gpu |= s->where == Where::gpu && !s->check_on_host;
  if (auto code = handle_missing_gpu(any_gpu, cmd.common.require_gpu)) return *code;
  const Problem problem = make_problem(lab, cmd.common);
  lab.check_knobs(problem, stages);
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
    if (r.input_is_answer) doc["results"].back()["input_is_answer"] = *r.input_is_answer;
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

struct PathsCommand {
  CommonOptions common;
  std::vector<std::string> stages;
};

// The kernels and branches each stage would run for this problem (Stage::paths), from the lab's
// launch model on the host: no input is made and nothing runs, so it answers on any machine. A
// stage that refuses the problem (a commutative-only stage asked for an ordered operator) says so
// instead: a case that names such a stage is a rubric error the case-paths test reports.
int cmd_paths(const Lab& lab, const PathsCommand& cmd) {
  const std::vector<const Stage*> stages = named_stages(lab, cmd.stages);
  const Problem problem = make_problem(lab, cmd.common);
  lab.check_knobs(problem, stages);
  nlohmann::ordered_json doc{{"lab", lab.id}, {"problem", problem_json(problem)}, {"stages", nlohmann::ordered_json::object()}};
  for (const auto* stage : stages) {
    const Problem p = stage->with_defaults(problem);
    nlohmann::ordered_json entry;
    try {
      if (stage->predicted_launches) (void)stage->predicted_launches(p);   // where a stage's refusals live
      entry["paths"] = stage->paths ? stage->paths(p) : std::vector<std::string>{};
      entry["modelled"] = static_cast<bool>(stage->paths);
    } catch (const UsageError& e) {
      entry["refused"] = e.what();
    }
    doc["stages"][stage->id] = entry;
  }
  std::cout << doc.dump(2) << "\n";
  return kExitOk;
}

}  // namespace

int runner_main(int argc, char** argv) {
  // Every stage allocates, checks and saves host arrays of the problem's size (64 MiB each at
  // scan's 2^24 case) one after another: kept in the heap rather than mapped and unmapped per
  // array, they reuse pages instead of faulting in fresh zeroed ones. Page faults were half of the
  // reference's verdict on that case (12 stages: 1.0 -> 0.5 s on the CI machine, 2026-11-24).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  try {
    const Lab lab = make_lab();
    lab.check_complete();  // every stage of lab.toml has its code in lab.cu
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
    run_cmd->add_flag("--no-cpu-baseline", run.no_cpu_baseline,
                      "no \"vs CPU\" column: the CPU baseline is not run unless selected (the grader's timing: "
                      "a CPU transpose of 8192^2 is seconds)");
    run_cmd->add_flag("--same-input", run.same_input,
                      "time every run on the problem's one input, as experiments do (faster; not the grader's way: "
                      "it gives each timed run a fresh input and judges it, so no answer made untimed can be replayed)");
    run_cmd->add_flag("--check-starter", run.check_starter,
                      "verify that every student stage reports TODO (the untouched starter)");
    run_cmd->add_option("--save-output", run.save_output,
                        "write each checked stage's raw output to DIR/<stage>.bin (judged by `verify` in another process)")
        ->check(CLI::ExistingDirectory);
    run_cmd->add_option("--cases", run.cases,
                        "JSON [{\"args\": [...], \"stages\": [...]}, ...]: several check-only cases in one process, "
                        "one JSON line each, outputs in DIR/<index>/ (the grader's; with --no-time --format json --save-output DIR)");

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

    PathsCommand paths;
    auto* paths_cmd = app.add_subcommand(
        "paths", "the kernels and branches each stage reaches for a problem (the lab's launch model; prints JSON)");
    add_common_options(paths_cmd, paths.common);
    paths_cmd->add_option("--stage", paths.stages, "stage id (repeatable; default: all)");

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
    if (*paths_cmd) return cmd_paths(lab, paths);
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
