// The lab kit's host parts: Problem knobs, Stage defaults and setters, the knob check, the scratch
// arena, the problem cache and the integer helpers.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/lab.hpp"
#include "gpulab/math.hpp"
#include "gpulab/runner.hpp"
#include "gpulab/scratch.hpp"
#include "gpulab/scratch_guard.hpp"
#include "gpulab/stages.hpp"
#include "gpulab/testing.hpp"

using gpulab::Problem;

namespace {
Problem problem(std::size_t n) {
  Problem p;
  p.n = n;
  return p;
}
}  // namespace

TEST_CASE("math: ceil_div, ceil_log2, round_up, is_pow2", "[cpu][kit]") {
  STATIC_REQUIRE(gpulab::ceil_div(10, 4) == 3);
  STATIC_REQUIRE(gpulab::ceil_log2(0) == 0);
  STATIC_REQUIRE(gpulab::ceil_log2(1025) == 11);
  STATIC_REQUIRE(gpulab::round_up(9, 4) == 12);
  CHECK(gpulab::is_pow2(1024));
  CHECK_FALSE(gpulab::is_pow2(0));
  CHECK_FALSE(gpulab::is_pow2(96));
}

TEST_CASE("Problem: param_in names the knob and the range; with and only", "[cpu][kit]") {
  const Problem p = problem(5).with("block", 2000).with("colors", 3);
  CHECK(p.param_in("colors", 8, 1, 16) == 3);
  CHECK(p.param_in("alpha", 8, 1, 32) == 8);
  try {
    (void)p.param_in("block", 256, 32, 1024);
    FAIL("block=2000 accepted");
  } catch (const gpulab::UsageError& e) {
    CHECK(std::string(e.what()) == "--param block=2000: out of range, use 32..1024");
  }
  CHECK(p.only({"colors"}).params == std::map<std::string, long long>{{"colors", 3}});
  CHECK(p.only({}) == problem(5));
}

TEST_CASE("Stage: defaults fill in, the command line wins; the knob check", "[cpu][kit]") {
  gpulab::Lab lab;
  lab.id = "demo";
  lab.stages.push_back(gpulab::make_stage("a", "", gpulab::Where::cpu, "", nullptr).takes({"block"}).default_param("block", 128));
  lab.stages.push_back(gpulab::make_stage("b", "", gpulab::Where::cpu, "", nullptr).takes({"zeros"}).launches(3));
  const auto& a = lab.stages[0];
  CHECK(a.with_defaults(problem(1)).param("block", 0) == 128);
  CHECK(a.with_defaults(problem(1).with("block", 64)).param("block", 0) == 64);
  CHECK(*lab.stages[1].predicted_launches(problem(7)) == 3);
  CHECK(*lab.stages[1].predicted_launches(problem(0)) == 0);
  CHECK(lab.all_knobs() == std::vector<std::string>{"block", "zeros"});
  CHECK_NOTHROW(lab.check_knobs(problem(1).with("zeros", 5), {&a}));  // another stage's knob
  CHECK_THROWS_WITH(lab.check_knobs(problem(1).with("blok", 5), {&a}),
                    "--param blok=5: unknown knob; stage a takes: block (every knob of lab demo: block, zeros)");
}

TEST_CASE("Scratch: aligned pieces, a clear error past the end, reset", "[cpu][kit]") {
  alignas(16) unsigned char storage[64];
  gpulab::Scratch s(storage, sizeof storage);
  CHECK(static_cast<void*>(s.take<char>(3)) == storage);
  CHECK(static_cast<void*>(s.take<int>(2)) == storage + 16);
  CHECK(s.used_bytes() == 24);
  CHECK_THROWS_AS(s.take<int>(11), std::length_error);
  s.reset();
  CHECK(static_cast<void*>(s.take<int>(16)) == storage);
}

TEST_CASE("ProblemCache: one make per key; the oldest is dropped before a new one is built", "[cpu][kit]") {
  gpulab::ProblemCache<int> cache(1);
  int makes = 0;
  std::weak_ptr<const int> first = cache.get(problem(1), [&] { return ++makes; });
  CHECK(*cache.get(problem(1), [&] { return ++makes; }) == 1);
  CHECK(*cache.get(problem(2), [&] {
    CHECK(first.expired());  // at most `capacity` values alive while building
    return ++makes;
  }) == 2);
  CHECK(*cache.get(problem(1), [&] { return ++makes; }) == 3);
}

// ---- scratch guards (issue 24, item 4): the kit's logic on host memory --------------------------------

namespace {

namespace demo {
struct Pair {
  int a, b;
};
}  // namespace demo

// An arena as ScratchOwner keeps one on the device (stages.hpp), in host memory: filled with the
// guard byte when allocated, guard gaps after every take, rearmed before and checked after a run.
class HostArena final : public gpulab::GuardedScratch, public gpulab::ScratchMemory {
 public:
  explicit HostArena(std::size_t bytes)
      : memory_(bytes, gpulab::kScratchGuardByte), view_(memory_.data(), memory_.size(), gpulab::kScratchGuardBytes) {}
  gpulab::Scratch& fresh() {
    view_.reset();
    guards_.run_started();
    join_running_stage();
    return view_;
  }
  void rearm_guards() override { guards_.rearm(view_, *this); }
  std::optional<std::string> overrun() override { return guards_.overrun(view_, *this); }
  void fill(std::size_t offset, std::size_t bytes, unsigned char value) override {
    std::memset(memory_.data() + offset, value, bytes);
  }
  void read(std::size_t offset, std::size_t bytes, unsigned char* out) override {
    std::memcpy(out, memory_.data() + offset, bytes);
  }

 private:
  std::vector<unsigned char> memory_;
  gpulab::Scratch view_;
  gpulab::ScratchGuards guards_;
};

// A CPU stage of the kit (ArrayStage) that takes two regions from `arena` and writes them whole,
// or one element past the second (`past` elements past it).
class TakingStage final : public gpulab::ArrayStage<int, gpulab::Where::cpu> {
 public:
  TakingStage(HostArena& arena, std::size_t past)
      : ArrayStage(4, [this] { return std::span<const int>(expected_); }), arena_(arena), past_(past) {}
  void run() override {
    gpulab::Scratch& s = arena_.fresh();
    int* a = s.take<int>(100);
    int* b = s.take<int>(1024);
    std::fill(a, a + 100, 1);
    std::fill(b, b + 1024 + past_, 2);  // past_ > 0: the bug under test
    std::fill(output(), output() + 4, 7);
  }
  double bytes_moved() const override { return 0; }
  // What a lab's own check() (scan's compaction) does: look at the output through download().
  std::size_t lab_check() { return download().size(); }
  void write_past(std::size_t elements) { past_ = elements; }

 private:
  std::vector<int> expected_{7, 7, 7, 7};
  HostArena& arena_;
  std::size_t past_;
};

}  // namespace

TEST_CASE("Scratch: a guard gap after every region, each take recorded and named", "[cpu][kit]") {
  alignas(16) unsigned char storage[1024];
  gpulab::Scratch s(storage, sizeof storage, 256);
  CHECK(static_cast<void*>(s.take<int>(3)) == storage);
  CHECK(static_cast<void*>(s.take<demo::Pair>(2)) == storage + 272);  // 12 bytes, 256 of guard, aligned to 16
  REQUIRE(s.regions().size() == 2);
  const gpulab::ScratchRegion& r = s.regions()[1];
  CHECK(r.offset == 272);
  CHECK(r.bytes == 16);
  CHECK(r.guard == 256);
  CHECK(gpulab::describe_take(s.regions()[0]) == "take<int>(3)");
  CHECK(gpulab::describe_take(r) == "take<(anonymous namespace)::demo::Pair>(2)");
  // The last guard shrinks to what is left rather than refusing a take that fits.
  CHECK_NOTHROW(s.take<unsigned char>(1024 - 544 - 10));
  CHECK(s.regions()[2].guard == 10);
  s.reset();
  CHECK(s.regions().empty());
  // A plain arena (tests, benches) has no gaps: the layout of before.
  gpulab::Scratch plain(storage, sizeof storage);
  (void)plain.take<int>(3);
  CHECK(static_cast<void*>(plain.take<int>(1)) == storage + 16);
}

TEST_CASE("ScratchGuards: a write one element past a region fails the stage's check, named", "[cpu][kit]") {
  HostArena arena(16384);
  TakingStage bad(arena, 1);
  bad.reset_output();
  bad.run();
  const gpulab::CheckResult r = bad.check();
  REQUIRE_FALSE(r.ok);
  CHECK(r.message.find("the stage wrote past scratch region #2 (take<int>(1024), 4096 bytes): the first changed "
                       "guard byte is at offset 4096 of the region, 0 bytes past its end (element index 1024 of a "
                       "region of 1024)") == 0);
  CHECK(r.message.find("(it holds 0x02, the guard 0x5c)") != std::string::npos);
  // The output is still saved; a lab's own check() that looks at it through download() fails too.
  CHECK(bad.output_bytes().has_value());
  CHECK_THROWS_AS(bad.lab_check(), gpulab::ScratchOverrun);
}

TEST_CASE("ScratchGuards: runs that stay inside pass, again and again; the guard is rearmed before each", "[cpu][kit]") {
  HostArena arena(16384);
  TakingStage stage(arena, 0);
  for (int run = 0; run < 3; ++run) {
    stage.reset_output();
    stage.run();
    CHECK(stage.check().ok);
  }
  // An overrun in a later run is caught (the guards were refilled before it)...
  stage.write_past(3);
  stage.reset_output();
  stage.run();
  CHECK(stage.check().message.find("element index 1024 of a region of 1024") != std::string::npos);
  // ... and the next honest run passes: reset_output put the pattern back.
  stage.write_past(0);
  stage.reset_output();
  stage.run();
  CHECK(stage.check().ok);
}

TEST_CASE("ScratchGuards: a guard that was not filled before the run is not blamed", "[cpu][kit]") {
  gpulab::ScratchGuards guards;
  std::vector<unsigned char> memory(4096, gpulab::kScratchGuardByte);
  struct Host final : gpulab::ScratchMemory {
    std::vector<unsigned char>& m;
    explicit Host(std::vector<unsigned char>& memory) : m(memory) {}
    void fill(std::size_t o, std::size_t b, unsigned char v) override { std::memset(m.data() + o, v, b); }
    void read(std::size_t o, std::size_t b, unsigned char* out) override { std::memcpy(out, m.data() + o, b); }
  } host(memory);
  gpulab::Scratch s(memory.data(), memory.size(), 256);
  // Run 1: a region of 64 ints at 0, written whole (its guard is at 256).
  guards.run_started();
  s.reset();
  std::fill_n(s.take<int>(64), 64, 1);
  CHECK_FALSE(guards.overrun(s, host));
  guards.rearm(s, host);
  // Run 2 takes differently: its guard lies on run 1's data, which no fill covered.
  guards.run_started();
  s.reset();
  (void)s.take<int>(8);
  CHECK_FALSE(guards.overrun(s, host));
  // Run 3 without a rearm before it: nothing of it is known to hold the pattern.
  guards.run_started();
  s.reset();
  std::fill_n(s.take<int>(64), 65, 1);
  CHECK_FALSE(guards.overrun(s, host));
}

TEST_CASE("StageScratch: an arena joins the stage whose reset_output ran last, and outlives or dies first", "[cpu][kit]") {
  auto arena = std::make_unique<HostArena>(16384);
  {
    TakingStage first(*arena, 1);
    TakingStage second(*arena, 0);
    first.reset_output();
    first.run();
    CHECK_FALSE(first.check().ok);
    second.reset_output();  // the arena moves to the second stage at its run
    second.run();
    CHECK(second.check().ok);
    CHECK(first.check().ok);  // no longer its arena
  }
  // The stages are gone; the arena's fresh() joins nobody.
  CHECK_NOTHROW(arena->fresh());
  TakingStage third(*arena, 1);
  third.reset_output();
  third.run();
  arena.reset();  // the arena dies first: the stage forgets it
  CHECK(third.check().ok);
}

// ---- the replay guard (run_stage with StageInstance::redraw) -----------------------------------------

namespace {

// A host stage whose answer is its input's sum. `replays` makes the answer once, in the first (the
// checked) call, and hands it back ever after: the cheat the guard is for.
struct SumStage final : gpulab::StageInstance {
  bool can_draw = true, replays = false;
  std::uint64_t input = 7;  // the "input": the answer is input + 1
  std::optional<std::uint64_t> saved;
  std::uint64_t out = 0;
  int draws = 0, runs = 0;
  void reset_output() override { out = 0; }
  void run() override {
    ++runs;
    if (!replays || !saved) saved = input + 1;
    out = *saved;
  }
  gpulab::CheckResult check() override {
    return out == input + 1 ? gpulab::CheckResult::pass() : gpulab::CheckResult::fail("sum is " + std::to_string(out));
  }
  double bytes_moved() const override { return 8; }
  bool redraw(std::uint64_t seed) override {
    if (!can_draw) return false;
    ++draws;
    input = seed;
    return true;
  }
};

gpulab::StageResult run_sum_stage(SumStage*& seen, bool can_draw, bool replays, bool fresh_inputs = true) {
  gpulab::Lab lab;
  const gpulab::Stage stage = gpulab::make_stage("sum", "sum", gpulab::Where::cpu, "test", [&](const Problem&) {
    auto s = std::make_unique<SumStage>();
    s->can_draw = can_draw;
    s->replays = replays;
    seen = s.get();
    return std::unique_ptr<gpulab::StageInstance>(std::move(s));
  });
  gpulab::RunOptions options;
  options.problem = problem(1);
  options.measure.warmup = 1;
  options.measure.repetitions = 3;
  options.fresh_inputs = fresh_inputs;
  return gpulab::run_stage(lab, stage, options);
}

}  // namespace

TEST_CASE("run_stage: every timed run gets a fresh draw and is checked", "[cpu][kit]") {
  SumStage* seen = nullptr;
  const auto r = run_sum_stage(seen, true, false);
  CHECK(r.status == gpulab::StageStatus::pass);
  CHECK(r.fresh_inputs);
  REQUIRE(r.timing);
  // The checked call, then one warm-up and three timed runs, each on its own draw.
  CHECK(seen->runs == 5);
  CHECK(seen->draws == 4);
}

TEST_CASE("run_stage: a stage that replays the checked call's answer fails in the first timed run", "[cpu][kit]") {
  SumStage* seen = nullptr;
  const auto r = run_sum_stage(seen, true, true);
  CHECK(r.status == gpulab::StageStatus::fail);
  CHECK_FALSE(r.timing);
  CHECK(r.message.find("wrong in timed run 1") != std::string::npos);
  CHECK(r.message.find("sum is 8") != std::string::npos);
}

TEST_CASE("run_stage: without draws (a stage that cannot, or experiments) the one input is timed", "[cpu][kit]") {
  SumStage* seen = nullptr;
  SECTION("the stage cannot draw: the replay goes unseen, as the README's known limit says") {
    const auto r = run_sum_stage(seen, false, true);
    CHECK(r.status == gpulab::StageStatus::pass);
    CHECK_FALSE(r.fresh_inputs);
    CHECK(seen->draws == 0);
  }
  SECTION("RunOptions::fresh_inputs off") {
    const auto r = run_sum_stage(seen, true, false, false);
    CHECK(r.status == gpulab::StageStatus::pass);
    CHECK_FALSE(r.fresh_inputs);
    CHECK(seen->draws == 0);
  }
}

// ---- input_is_answer: which cases a stage that copies its input passes ---------------------------------

namespace {

struct Keys {
  std::vector<int> keys, sorted;
};

// A sort of n keys: seed 0 gives them already sorted (a copy passes), any other seed reversed.
gpulab::ArrayOutput<int, Keys> sorted_keys(bool with_copy) {
  gpulab::ArrayOutput<int, Keys> out{[](const Problem& p) {
                                       auto d = std::make_shared<Keys>();
                                       for (std::size_t i = 0; i < p.n; ++i) d->keys.push_back(static_cast<int>(p.seed == 0 ? i : p.n - i));
                                       d->sorted = d->keys;
                                       std::sort(d->sorted.begin(), d->sorted.end());
                                       return std::shared_ptr<const Keys>(d);
                                     },
                                     [](const Keys& d) { return std::span<const int>(d.sorted); },
                                     [](const Keys& d) { return 8.0 * static_cast<double>(d.keys.size()); }};
  if (with_copy) out.copied = [](const Keys& d) { return d.keys; };
  return out;
}

gpulab::StageResult verify_bytes(bool with_copy, std::uint64_t seed, const std::vector<int>& output) {
  const gpulab::Stage stage = gpulab::make_stage(
      "sort", "sort", gpulab::Where::cpu, "test",
      gpulab::host_stage<int, Keys>(sorted_keys(with_copy), [](const Keys& d, int* o) { std::copy(d.sorted.begin(), d.sorted.end(), o); })
          .prepare);
  Problem p = problem(5);
  p.seed = seed;
  const auto* bytes = reinterpret_cast<const unsigned char*>(output.data());
  return gpulab::verify_stage_output(stage, p, std::span<const unsigned char>(bytes, output.size() * sizeof(int)));
}

}  // namespace

TEST_CASE("verify: a pass says whether a copy of the input would have passed too", "[cpu][kit]") {
  const std::vector<int> ascending{0, 1, 2, 3, 4}, from_one{1, 2, 3, 4, 5};
  SECTION("the input is already sorted: the answer was in the input") {
    const auto r = verify_bytes(true, 0, ascending);
    CHECK(r.status == gpulab::StageStatus::pass);
    CHECK(r.input_is_answer == std::optional<bool>(true));
  }
  SECTION("reversed input: the pass needed the stage's work") {
    const auto r = verify_bytes(true, 1, from_one);
    CHECK(r.status == gpulab::StageStatus::pass);
    CHECK(r.input_is_answer == std::optional<bool>(false));
  }
  SECTION("a wrong output: nothing said") {
    const auto r = verify_bytes(true, 1, ascending);
    CHECK(r.status == gpulab::StageStatus::fail);
    CHECK_FALSE(r.input_is_answer);
  }
  SECTION("an output that is not its input's kind (no `copied`): nothing said") {
    const auto r = verify_bytes(false, 0, ascending);
    CHECK(r.status == gpulab::StageStatus::pass);
    CHECK_FALSE(r.input_is_answer);
  }
}
