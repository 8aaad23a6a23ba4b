#include "gpulab/cuda_check.hpp"

#include <sstream>

namespace gpulab {

CudaError::CudaError(cudaError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}

bool CudaError::sticky() const noexcept {
  // These leave the context unusable: every later call in this process fails too.
  switch (code_) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

namespace detail {

namespace {
const char* advice(cudaError_t code) {
  switch (code) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return "no usable GPU: run this on the GPU machine";
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory: try a smaller --n";
    case cudaErrorInvalidConfiguration:
      return "bad launch configuration: check grid/block sizes and dynamic shared memory";
    case cudaErrorIllegalAddress:
      return "a kernel read or wrote out of bounds: run it under compute-sanitizer --tool memcheck";
    case cudaErrorMisalignedAddress:
      return "a misaligned access (vector loads need 16-byte alignment): check your casts";
    case cudaErrorLaunchTimeout:
      return "a kernel ran too long or hung: look for a loop that never ends or a missing __syncthreads";
    default:
      return nullptr;
  }
}
}  // namespace

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  std::ostringstream msg;
  msg << "CUDA error " << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ") in " << call << " at "
      << file << ":" << line;
  if (const char* hint = advice(code)) msg << " — " << hint;
  throw CudaError(code, msg.str());
}

}  // namespace detail
}  // namespace gpulab
