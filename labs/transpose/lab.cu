// The transpose lab's stage table (the harness); the experiments live in experiments.cu, the CPU
// reference and the bank model in transpose_model.{hpp,cpp}. Do not edit: it prepares seeded
// input, calls the functions of transpose.cuh, and checks every output exactly against a CPU
// transpose (a transpose only moves bits, so nothing but equality is right).
#include <cuda_runtime.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gpulab/data.hpp"
#include "gpulab/stages.hpp"
#include "transpose.cuh"
#include "transpose_model.hpp"

namespace transpose {
std::vector<gpulab::Experiment> make_experiments();  // experiments.cu
}

namespace gpulab {

namespace {

using transpose::model::Shape;

// The input and its transpose for one problem, computed once: every stage of a run (and every
// test on the same size) shares them. One problem is kept; 8192 x 8192 is 256 MiB per matrix.
struct HostMatrices {
  Shape shape;
  std::vector<float> in;          // rows x cols
  std::vector<float> transposed;  // cols x rows: the expected output of every transposing stage
};

std::shared_ptr<const HostMatrices> host_matrices(const Problem& p) {
  static ProblemCache<HostMatrices> cache(1);
  const Shape s = transpose::model::shape_of(p);
  return cache.get(p.only({}), [&] {
    HostMatrices m{s, generate_float(p.distribution, s.count(), p.seed), {}};
    m.transposed = transpose::model::reference_transpose(m.in, s);
    return m;
  });
}

// The output is one rows x cols array of floats: the input (copies) or its transpose. A mismatch
// is reported with where it sits in the matrix.
template <Where W>
class MatrixStage : public ArrayStage<float, W> {
 public:
  MatrixStage(const Problem& p, bool transposes)
      : ArrayStage<float, W>(transpose::model::shape_of(p).count(),
                             [this] { return std::span<const float>(transposes_ ? host_->transposed : host_->in); }),
        host_(host_matrices(p)), transposes_(transposes) {}
  double bytes_moved() const override { return 2.0 * static_cast<double>(host_->shape.count()) * sizeof(float); }

 protected:
  CheckResult check_values(std::span<const float> got) override {
    CheckResult result = ArrayStage<float, W>::check_values(got);
    if (!result.ok && result.mismatch_count != 0 && got.size() == host_->in.size())
      result.message += transpose::model::where_in_matrix(result.first_mismatch, host_->shape, transposes_);
    return result;
  }
  std::shared_ptr<const HostMatrices> host_;
  bool transposes_;
};

using DeviceFunction = void (*)(const float*, float*, std::size_t, std::size_t);

class DeviceStage final : public MatrixStage<Where::gpu> {
 public:
  DeviceStage(const Problem& p, DeviceFunction function, bool transposes)
      : MatrixStage(p, transposes), function_(function), in_(std::span<const float>(host_->in)) {}
  void run() override { function_(in_.data(), output(), host_->shape.rows, host_->shape.cols); }

 private:
  DeviceFunction function_;
  DeviceBuffer<float> in_;
};

class HostStage final : public MatrixStage<Where::cpu> {
 public:
  explicit HostStage(const Problem& p) : MatrixStage(p, true) {}
  // -inf, not the poison bytes: a CPU stage that skips an element shows a clear value.
  void reset_output() override { std::fill_n(output(), size(), -std::numeric_limits<float>::infinity()); }
  void run() override { transpose::model::cpu_transpose(host_->in.data(), output(), host_->shape.rows, host_->shape.cols); }
};

// Baseline: the driver's device-to-device copy of the same bytes.
void memcpy_baseline(const float* in, float* out, std::size_t rows, std::size_t cols) {
  if (rows * cols == 0) return;
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(out, in, rows * cols * sizeof(float), cudaMemcpyDeviceToDevice));
}

// A student stage of transpose.cu: one round, no barrier (R(n) = 1).
Stage gpu_stage(std::string id, std::string title, DeviceFunction f, bool transposes, std::string source) {
  return make_stage(std::move(id), std::move(title), Where::gpu, std::move(source),
                    [f, transposes](const Problem& p) -> std::unique_ptr<StageInstance> {
                      return std::make_unique<DeviceStage>(p, f, transposes);
                    })
      .checked_on_host(host_check<MatrixStage<Where::cpu>>(transposes))
      .reaches([](const Problem& p) { return transpose::model::paths(transpose::model::shape_of(p)); })
      .in_file("transpose.cu")
      .launches([](const Problem&) -> std::optional<long> { return 1; });
}

}  // namespace

Lab make_lab() {
  Lab lab;
  lab.id = "transpose";
  lab.title = "Matrix transpose and the machine model";
  lab.student_files = {"transpose.cu"};
  lab.default_rows = 8192;
  lab.default_cols = 8192;
  lab.default_n = lab.default_rows * lab.default_cols;
  lab.baseline_cpu_stage = "cpu";
  lab.stages = {
      gpu_stage("copy", "global -> global copy, the roof", transpose::copy, false, "seed 000 §6.1"),
      gpu_stage("copy-shared", "copy through a 32x32 shared tile", transpose::copy_shared, false,
                "seed 000 §3, Appendix B Alg. 1"),
      gpu_stage("naive", "read rows, write columns", transpose::naive, true, "seed 000 §2.1"),
      gpu_stage("tiled", "32x32 shared tile, column reads conflict 32-way", transpose::tiled, true, "seed 000 §3, Fig. 1")
          .expects_conflicts(),
      gpu_stage("padded", "32x33 shared tile, conflict-free", transpose::padded, true, "seed 000 §3").conflict_free(),
      gpu_stage("swizzled", "XOR-swizzled 32x32 tile, conflict-free", transpose::swizzled, true, "seed 000 §3")
          .conflict_free(),
      gpu_stage("in-place-sweep", "32x32 tile transposed in place, diagonal sweep", transpose::in_place_sweep, true,
                "seed 000 Appendix B, Alg. 2")
          .conflict_free(),
      gpu_stage("in-place-sweep-rect", "64x32 tile as two squares swept in place", transpose::in_place_sweep_rect, true,
                "seed 000 §3 and Appendix B (m = 2n)")
          .conflict_free(),
      make_baseline("memcpy", "cudaMemcpy device to device, same bytes", Where::gpu, "CUDA runtime",
                    [](const Problem& p) -> std::unique_ptr<StageInstance> {
                      return std::make_unique<DeviceStage>(p, memcpy_baseline, false);
                    }),
      make_baseline("cpu", "CPU transpose, 64x64 cache blocks", Where::cpu, "baseline",
                    [](const Problem& p) -> std::unique_ptr<StageInstance> { return std::make_unique<HostStage>(p); }),
  };
  lab.experiments = transpose::make_experiments();
  return lab;
}

}  // namespace gpulab
