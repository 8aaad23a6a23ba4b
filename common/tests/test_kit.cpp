// The lab kit's host parts: Problem knobs, Stage defaults and setters, the knob check, the scratch
// arena, the problem cache and the integer helpers.
#include <memory>
#include <string>

#include "gpulab/lab.hpp"
#include "gpulab/math.hpp"
#include "gpulab/scratch.hpp"
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

TEST_CASE("math: ceil_div, ceil_log2, round_up, is_pow2", "[kit]") {
  STATIC_REQUIRE(gpulab::ceil_div(10, 4) == 3);
  STATIC_REQUIRE(gpulab::ceil_log2(0) == 0);
  STATIC_REQUIRE(gpulab::ceil_log2(1025) == 11);
  STATIC_REQUIRE(gpulab::round_up(9, 4) == 12);
  CHECK(gpulab::is_pow2(1024));
  CHECK_FALSE(gpulab::is_pow2(0));
  CHECK_FALSE(gpulab::is_pow2(96));
}

TEST_CASE("Problem: param_in names the knob and the range; with and only", "[kit]") {
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

TEST_CASE("Stage: defaults fill in, the command line wins; the knob check", "[kit]") {
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

TEST_CASE("Scratch: aligned pieces, a clear error past the end, reset", "[kit]") {
  alignas(16) unsigned char storage[64];
  gpulab::Scratch s(storage, sizeof storage);
  CHECK(static_cast<void*>(s.take<char>(3)) == storage);
  CHECK(static_cast<void*>(s.take<int>(2)) == storage + 16);
  CHECK(s.used_bytes() == 24);
  CHECK_THROWS_AS(s.take<int>(11), std::length_error);
  s.reset();
  CHECK(static_cast<void*>(s.take<int>(16)) == storage);
}

TEST_CASE("ProblemCache: one make per key; the oldest is dropped before a new one is built", "[kit]") {
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
