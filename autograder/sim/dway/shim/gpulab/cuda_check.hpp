#pragma once
#define GPULAB_CHECK_LAUNCH()
#define GPULAB_CUDA_CHECK(x)
