// Compiled into each lab variant with GPULAB_IMPL_NAME set by gpulab_add_lab().
#include "gpulab/lab.hpp"

#ifndef GPULAB_IMPL_NAME
#error "GPULAB_IMPL_NAME must be defined by the build (student or reference)"
#endif

std::string_view gpulab::implementation_name() { return GPULAB_IMPL_NAME; }
