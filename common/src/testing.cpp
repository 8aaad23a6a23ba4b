#include "gpulab/testing.hpp"

#include <sstream>
#include <stdexcept>

namespace gpulab::testing {

const Lab& lab() {
  static const Lab the_lab = make_lab();
  return the_lab;
}

StageResult check(const std::string& stage_id, const Problem& problem) {
  const Stage* stage = lab().find_stage(stage_id);
  if (!stage) throw UsageError("test names stage '" + stage_id + "', which lab " + lab().id + " does not have");
  return check_stage(*stage, problem);
}

Problem problem(std::size_t n, Distribution d, std::uint64_t seed) {
  Problem p;
  p.n = n;
  p.distribution = d;
  p.seed = seed;
  return p;
}

Problem problem_2d(std::size_t rows, std::size_t cols, Distribution d, std::uint64_t seed) {
  Problem p = problem(rows * cols, d, seed);
  p.rows = rows;
  p.cols = cols;
  return p;
}

const Experiment& experiment(const std::string& id) {
  for (const auto& e : lab().experiments)
    if (e.id == id) return e;
  throw std::logic_error("lab " + lab().id + " has no experiment " + id);
}

Table run_experiment(const std::string& id, Problem base) {
  ExperimentContext ctx;
  ctx.lab = &lab();
  ctx.base = std::move(base);
  ctx.quick = true;
  ctx.measure.repetitions = 2;
  ctx.measure.warmup = 1;
  return experiment(id).run(ctx);
}

std::string printed(const Table& t) {
  std::ostringstream out;
  t.print_table(out);
  return out.str();
}

}  // namespace gpulab::testing
