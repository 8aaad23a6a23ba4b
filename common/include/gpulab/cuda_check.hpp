// CUDA error checking: every failure names the call, the file and the line, and says what to do.
#pragma once
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gpulab {

// Thrown for any failed CUDA runtime call. `sticky()` is true when the context is lost
// (illegal address, launch failure, ...): nothing on this device will work again in this process.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& message);
  cudaError_t code() const noexcept { return code_; }
  bool sticky() const noexcept;

 private:
  cudaError_t code_;
};

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
inline void cuda_check(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) throw_cuda_error(code, call, file, line);
}
}  // namespace detail

}  // namespace gpulab

// Wrap every runtime call: GPULAB_CUDA_CHECK(cudaMalloc(&p, bytes));
#define GPULAB_CUDA_CHECK(call) ::gpulab::detail::cuda_check((call), #call, __FILE__, __LINE__)

// After a <<<...>>> launch: reports a bad configuration at once (too many threads, too much
// shared memory); errors inside the kernel surface at the next synchronisation.
#define GPULAB_CHECK_LAUNCH() \
  ::gpulab::detail::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
