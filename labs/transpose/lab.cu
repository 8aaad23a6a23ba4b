// The transpose lab's harness: the code of each stage of lab.toml (the facts are there), the
// experiments in experiments.cu, the CPU reference and the bank model in transpose_model.*. Do
// not edit: it prepares seeded input, calls the functions of transpose.cuh, and checks every
// output exactly against a CPU transpose (a transpose only moves bits: nothing but equality is right).
#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "gpulab/data.hpp"
#include "gpulab/fresh_input.cuh"
#include "gpulab/manifest.hpp"
#include "gpulab/stages.hpp"
#include "transpose.cuh"
#include "transpose_model.hpp"

namespace transpose {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace gpulab {

namespace {

using transpose::model::Shape;

// The input and its transpose, once per problem (8192^2 is 256 MiB a matrix: one problem kept).
struct Matrices {
  Shape shape;
  std::vector<float> in;          // rows x cols
  std::vector<float> transposed;  // cols x rows: what every transposing stage must write
};

std::shared_ptr<const Matrices> matrices(const Problem& p) {
  const Shape s = transpose::model::shape_of(p);
  return problem_data<Matrices>(p.only({}), [&] {
    Matrices m{s, generate_float(p.distribution, s.count(), p.seed), {}};
    m.transposed = transpose::model::reference_transpose(m.in, s);
    return m;
  }, 1);
}

// The output: the input (the copy stages) or its transpose, a mismatch placed in the matrix.
ArrayOutput<float, Matrices> output(bool transposes) {
  return {matrices,
          [transposes](const Matrices& m) { return std::span<const float>(transposes ? m.transposed : m.in); },
          [](const Matrices& m) { return 2.0 * static_cast<double>(m.shape.count()) * sizeof(float); },
          [transposes](const Matrices& m, std::span<const float> got) {
            CheckResult r = compare_exact<float>(transposes ? m.transposed : m.in, got);
            if (!r.ok && r.mismatch_count != 0 && got.size() == m.in.size())
              r.message += transpose::model::where_in_matrix(r.first_mismatch, m.shape, transposes);
            return r;
          }};
}

// The replay guard's verdict on a run with a drawn input: the first output element (row-major in
// the output's shape) that is not its input element's bits.
__global__ void first_misplaced(const float* in, const float* out, std::size_t rows, std::size_t cols, bool transposes,
                                unsigned long long* first) {
  const std::size_t n = rows * cols, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::size_t at = transposes ? (i % cols) * rows + i / cols : i;  // in[r][c] lands at out[c][r]
    if (__float_as_uint(out[at]) != __float_as_uint(in[i])) atomicMin(first, static_cast<unsigned long long>(at));
  }
}

CheckResult judge_drawn(const float* in, const float* out, const Shape& s, bool transposes) {
  if (s.count() == 0) return CheckResult::pass();
  const auto at = first_flagged([&](unsigned long long* first) {
    first_misplaced<<<judge_grid(s.count()), kJudgeThreads>>>(in, out, s.rows, s.cols, transposes, first);
  });
  if (!at) return CheckResult::pass();
  return CheckResult::fail("element " + std::to_string(*at) + " of the output is wrong" +
                           transpose::model::where_in_matrix(*at, s, transposes));
}

using Transpose = void (*)(const float*, float*, std::size_t, std::size_t);

// A stage of transpose.cu: one round, no barrier between blocks (R(n) = 1). The replay guard draws
// each timed run's matrix on the device (a transpose moves the same bytes whatever they hold) and
// judges the run there: at 8192^2 a CPU draw and transpose per run would cost seconds per stage.
Stage::Code gpu(Transpose f, bool transposes = true) {
  return device_stage<float, Matrices>(output(transposes), [f, transposes](const std::shared_ptr<const Matrices>& m,
                                                                          const Problem&) {
    auto in = upload_input(m->in);
    const Shape s = m->shape;
    return with_fresh_input<float, float>(
        [f, s, in](float* out) { f(in->data(), out, s.rows, s.cols); }, in,
        [n = s.count()](float* input, std::uint64_t seed) { draw_uniform_floats(input, n, seed); },
        [s, transposes](const float* drawn, const float* out) { return judge_drawn(drawn, out, s, transposes); });
  });
}

void memcpy_baseline(const float* in, float* out, std::size_t rows, std::size_t cols) {
  if (rows * cols != 0)
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, in, rows * cols * sizeof(float), cudaMemcpyDeviceToDevice));
}

}  // namespace

Lab make_lab() {
  Lab lab = lab_from_manifest();
  auto one_round = [](const Problem& p) { return transpose::model::paths(transpose::model::shape_of(p)); };
  for (auto [id, f] : {std::pair{"copy", &transpose::copy}, {"copy-shared", &transpose::copy_shared}})
    lab.bind(id, gpu(f, false)).launches(1).reaches(one_round);
  for (auto [id, f] : {std::pair{"naive", &transpose::naive}, {"tiled", &transpose::tiled}, {"padded", &transpose::padded},
                       {"swizzled", &transpose::swizzled}, {"in-place-sweep", &transpose::in_place_sweep},
                       {"in-place-sweep-rect", &transpose::in_place_sweep_rect}})
    lab.bind(id, gpu(f)).launches(1).reaches(one_round);
  lab.bind("memcpy", gpu(memcpy_baseline, false));
  lab.bind("cpu", host_stage<float, Matrices>(output(true), [](const Matrices& m, float* out) {
    transpose::model::cpu_transpose(m.in.data(), out, m.shape.rows, m.shape.cols);
  }));
  lab.experiments = transpose::make_experiments();
  return lab;
}

}  // namespace gpulab
