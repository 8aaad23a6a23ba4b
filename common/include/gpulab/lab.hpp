// The lab framework. A lab is a table of stages; each stage knows how to prepare seeded input,
// run the student's (or the reference) code, and check the result against the CPU. The runner
// (runner.hpp) times, counts launches and prints; tests and the autograder use the same table.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/check.hpp"
#include "gpulab/data.hpp"
#include "gpulab/table.hpp"
#include "gpulab/timing.hpp"

namespace gpulab {

// A stage the student has not written yet. The runner shows it as TODO: never a crash, never a pass.
class NotImplemented : public std::logic_error {
 public:
  explicit NotImplemented(const std::string& what) : std::logic_error(what + " is not implemented yet") {}
};
[[noreturn]] inline void not_implemented(const std::string& what) { throw NotImplemented(what); }

// Bad input from the command line or a test: reported as one clear line, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Problem {
  std::size_t n = 0;               // elements
  std::size_t rows = 0, cols = 0;  // 2-D labs (n == rows * cols); 0 for 1-D labs
  std::uint64_t seed = 1;
  Distribution distribution = Distribution::uniform;
  std::map<std::string, long long> params;  // stage knobs: "block", "alpha", "colors", ...

  long long param(const std::string& key, long long fallback) const {
    auto it = params.find(key);
    return it == params.end() ? fallback : it->second;
  }
  // A knob the stage reads: lab.toml gives every stage the default of each knob it lists, so a
  // missing key is a stage reading a knob its manifest entry does not list (a std::logic_error).
  long long knob(const std::string& key) const;
  // param(), refused with a UsageError naming the knob unless lo <= value <= hi.
  int param_in(const std::string& key, long long fallback, long long lo, long long hi) const;
  // A copy with one knob set: problem(1025).with("block", 32).
  Problem with(const std::string& key, long long value) const {
    Problem p = *this;
    p.params[key] = value;
    return p;
  }
  // A copy keeping only these knobs: the key of data that depends on them alone (ProblemCache).
  Problem only(std::initializer_list<std::string_view> keys) const;
  bool operator==(const Problem&) const = default;
  std::string describe() const;  // "n=1025 seed=1 dist=uniform block=256"
};

// One stage prepared for one problem: inputs are on the device, the expected output is known.
class StageInstance {
 public:
  virtual ~StageInstance() = default;
  // Poison every output so that nothing left from an earlier run can pass (untimed).
  virtual void reset_output() = 0;
  // The work that is timed: enqueue the stage on the default stream (host stages just run).
  virtual void run() = 0;
  // Compare the output with the CPU reference (synchronises first).
  virtual CheckResult check() = 0;
  // Bytes the model says the stage must move through global memory (input read once, output
  // written once): the numerator of GB/s. Stages that do more traffic are slower, not credited.
  virtual double bytes_moved() const = 0;
  // Elements processed, for elements/s (defaults to the problem's n).
  virtual std::optional<double> elements() const { return std::nullopt; }

  // Out-of-process verification (the grader's unforgeable verdict): the student's runner saves
  // the raw output bytes, and the *reference* runner, built without student code, regenerates the
  // same input from the seed and judges those bytes. A lab supports it by overriding both.
  virtual std::optional<std::vector<unsigned char>> output_bytes() { return std::nullopt; }
  virtual CheckResult check_output(std::span<const unsigned char> bytes) {
    (void)bytes;
    return CheckResult::fail("this lab does not support out-of-process verification yet");
  }
  // Whether this problem's input, copied to the output, is the expected output (nullopt: the
  // stage's output is not its input's kind; ArrayOutput::copied). The reference's `verify` reports
  // it with each pass, and the grader counts such passes only beside one that needed the stage's work.
  virtual std::optional<bool> input_is_answer() { return std::nullopt; }
  // The replay guard (run_stage): before every timed run the runner asks for an input no earlier
  // call saw, drawn from `seed` (an unpredictable number) like the problem's own input (same
  // generator, size and knobs), untimed; after the run check() judges the output against that
  // draw, in O(n) where the oracle would cost more. A stage that saw one input in its untimed check
  // run could otherwise make the answer there (on the CPU) and replay it, timed, with a copy.
  // Returns false when the stage cannot draw (it is then timed on its one input).
  virtual bool redraw(std::uint64_t seed) {
    (void)seed;
    return false;
  }
};

// A `--param key=value` of the lab (lab.toml's [knob.<key>]): an integer range, or named values
// stored as their index (`--param op=interval` is op = 2).
struct Knob {
  std::string key;
  std::string help;
  long long default_value = 0;
  std::optional<long long> min, max;
  bool power_of_two = false;
  std::vector<std::string> values;  // names, when the knob has them

  std::string name_of(long long value) const;
  // The value `text` stands for (a number or one of the names), or a UsageError saying what is allowed.
  long long parse(const std::string& text) const;
  // A UsageError unless the value is in range (and a power of two where it must be).
  void check(long long value) const;
  std::string allowed() const;  // "64..1024, a power of two" or "sum, max, interval, affine, mat2"
};

// The values of one knob a stage runs (lab.toml `accepts`): another value is refused with one line.
struct Accepts {
  std::string knob;
  std::vector<long long> values;
  std::vector<std::string> names;       // of the accepted values
  std::vector<std::string> knob_names;  // of every value of a named knob (for the refusal's line)
};

enum class Where { cpu, gpu };
enum class Role {
  student,   // the student writes it (a function in the lab's student file)
  baseline,  // provided by the course: CUB, Thrust, cudaMemcpy, the CPU reference
};

using LaunchModel = std::function<std::optional<long>(const Problem&)>;
// The kernels and branches of a stage that a problem reaches ("two rounds", "partial tile",
// "8-byte elements"), named by the lab's launch model on the host. The grader's sanitizer shapes
// and the rubric's visible cases must together reach every path a hidden case reaches
// (`gpulab-<lab> paths`, autograder/tests/test_case_paths.py): a self-grade that passes then runs
// every kernel the hidden cases run, and compute-sanitizer has seen each of them.
using PathModel = std::function<std::vector<std::string>(const Problem&)>;

struct Stage {
  std::string id;     // "naive", "shared-conflict-free": what --stage takes
  std::string title;  // one line for tables
  Where where = Where::gpu;
  Role role = Role::student;
  bool must_be_conflict_free = false;  // graded with Nsight Compute's excess shared wavefronts
  bool expect_conflicts = false;       // the lab teaches that this one has conflicts
  std::string source;                  // the seed document and section it follows
  std::string file;                    // the student file it is written in ("scan_basic.cu")
  // The knobs (--param key=value) the stage reads, and the defaults it has that differ from the
  // lab's; the runner fills the defaults in before prepare() and predicted_launches().
  std::vector<std::string> knobs;
  std::map<std::string, long long> defaults;
  std::map<std::string, long long> lab_defaults;  // every knob's lab-wide default (lab.toml), below `defaults`
  std::vector<Knob> knob_specs;  // the ranges of the knobs it reads: with_defaults refuses a value outside
  std::vector<Accepts> accepts;  // knob values the stage runs (others are refused, with `refusal`)
  std::string refusal;           // why (lab.toml), appended to the refusal's line
  // The model's number of kernel launches (rounds R(n)) for this problem, when the seeds give it.
  LaunchModel predicted_launches;
  PathModel paths;  // unset: the stage has one path (every problem reaches the same code)
  std::function<std::unique_ptr<StageInstance>(const Problem&)> prepare;
  // What `verify` (the grader's out-of-process verdict) prepares instead of `prepare`: an instance
  // that judges saved output bytes on the host, with no device and so no CUDA context (stages.hpp,
  // HostCheck). Unset: `prepare`, which needs a GPU for a GPU stage.
  std::function<std::unique_ptr<StageInstance>(const Problem&)> check_on_host;

  // Chainable setters: make_stage(...).in_file("scan_basic.cu").takes({"block"}).conflict_free().
  Stage& in_file(std::string f) { file = std::move(f); return *this; }
  Stage& conflict_free() { must_be_conflict_free = true; return *this; }
  Stage& expects_conflicts() { expect_conflicts = true; return *this; }
  Stage& launches(LaunchModel model) { predicted_launches = std::move(model); return *this; }
  Stage& launches(long count) {  // a fixed number of rounds (none for n == 0)
    predicted_launches = [count](const Problem& p) -> std::optional<long> { return p.n == 0 ? 0 : count; };
    return *this;
  }
  Stage& reaches(PathModel model) { paths = std::move(model); return *this; }
  Stage& takes(std::initializer_list<std::string> keys) { knobs.insert(knobs.end(), keys); return *this; }
  Stage& default_param(const std::string& key, long long value) { defaults[key] = value; return *this; }
  Stage& checked_on_host(std::function<std::unique_ptr<StageInstance>(const Problem&)> f) {
    check_on_host = std::move(f);
    return *this;
  }
  bool takes_knob(std::string_view key) const;
  // The problem as this stage sees it: its defaults filled in where the command line set nothing.
  // A UsageError when the stage does not run a knob value the problem has (`accepts`).
  Problem with_defaults(const Problem& p) const;
  // The stage's code: what lab.cu gives a stage of the manifest (Lab::bind).
  struct Code {
    std::function<std::unique_ptr<StageInstance>(const Problem&)> prepare;
    std::function<std::unique_ptr<StageInstance>(const Problem&)> check_on_host = {};
  };
};

// A stage with the fields every stage has; the chainable setters add the optional ones.
Stage make_stage(std::string id, std::string title, Where where, std::string source,
                 std::function<std::unique_ptr<StageInstance>(const Problem&)> prepare, Role role = Role::student);
// A course-provided stage (CUB, cudaMemcpy, the CPU reference).
inline Stage make_baseline(std::string id, std::string title, Where where, std::string source,
                           std::function<std::unique_ptr<StageInstance>(const Problem&)> prepare) {
  return make_stage(std::move(id), std::move(title), where, std::move(source), std::move(prepare), Role::baseline);
}

struct Lab;

struct ExperimentContext {
  const Lab* lab = nullptr;  // the lab whose stages the experiment times (experiments.hpp)
  Problem base;             // from the command line (--n, --seed, --param ...)
  MeasureOptions measure;   // from the command line (--reps, --warmup, --no-flush)
  bool quick = false;       // --quick: fewer points, for tests
};

struct Experiment {
  std::string id;     // "size-sweep"
  std::string title;  // one line
  bool needs_gpu = true;
  std::function<Table(const ExperimentContext&)> run;
  std::vector<std::string> knobs = {};  // --param keys of its own (beyond the stages' knobs)
};

struct Lab {
  std::string id;     // "scan"
  std::string title;  // "Scan and stream compaction"
  std::vector<std::string> student_files;  // what the student edits, relative to labs/<lab>/
  std::size_t default_n = 1u << 24;
  std::size_t default_rows = 0, default_cols = 0;  // 2-D labs
  std::string baseline_cpu_stage;  // stage whose time is the "vs CPU" denominator
  std::vector<Knob> knobs;         // lab.toml's [knob.*]
  std::vector<Stage> stages;
  std::vector<Experiment> experiments;

  const Stage* find_stage(std::string_view id) const;
  const Knob* find_knob(std::string_view key) const;
  // Gives the manifest's stage `id` its code (a std::logic_error naming lab.toml if there is no such
  // stage) and returns it for the chainable setters: lab.bind("naive", code).launches(rounds).
  Stage& bind(std::string_view id, Stage::Code code);
  // A std::logic_error naming every stage of lab.toml that lab.cu gave no code (runner start-up).
  void check_complete() const;
  // "labs/scan/scan_basic.cu, labs/scan/scan_tiled.cu" for messages.
  std::string student_files_text() const;
  // The stage's file as a student finds it: "labs/scan/scan_basic.cu" (empty for baselines).
  std::string path_of(const Stage& stage) const;
  // Every knob some stage (or experiment) of the lab reads, sorted.
  std::vector<std::string> all_knobs() const;
  // Throws a UsageError for a --param key no stage (or experiment) reads: a misspelling like
  // blok=128. A knob of another stage is accepted (the grader runs every stage with a case's knobs).
  void check_knobs(const Problem& p, const std::vector<const Stage*>& stages, const Experiment* experiment = nullptr) const;
};

// Every lab defines this once, in its lab.cu: the stage table.
Lab make_lab();

// The implementation compiled into this binary: "student" or "reference".
std::string_view implementation_name();

}  // namespace gpulab
