// ScratchArena (stages.hpp): a ScratchOwner's device memory, its guard fill, and its NVTX Memory
// API registration for compute-sanitizer (docs.nvidia.com/compute-sanitizer/SanitizerNvtxGuide,
// "Suballocation API" and "Naming API"; NVIDIA/compute-sanitizer-samples NvtxMemoryPool and
// NvtxNaming show the same calls). NVTX is header-only and loads the tool itself: without one,
// nvtxMemHeapRegister returns null (nvtxExtImplMem_v1.h: "No tool attached") and the arena then
// never calls NVTX again.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMem.h>

#include <string>

#include "gpulab/cuda_check.hpp"
#include "gpulab/stages.hpp"

namespace gpulab {

namespace {

nvtxDomainHandle_t scratch_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("gpulab scratch");
  return domain;
}

nvtxMemHeapHandle_t heap_handle(void* heap) { return static_cast<nvtxMemHeapHandle_t>(heap); }

// What memcheck calls the region in a finding: "scratch #2: take<int>(1024)".
std::string region_name(std::size_t index, const ScratchRegion& region) {
  return "scratch #" + std::to_string(index + 1) + ": " + describe_take(region);
}

}  // namespace

ScratchArena::ScratchArena(std::size_t bytes) : buffer_(bytes) {
  if (buffer_.empty()) return;
  // Every guard of the first run holds the pattern (ScratchGuards), and unwritten scratch never
  // reads as the zeros a fresh cudaMalloc often happens to hold.
  GPULAB_CUDA_CHECK(cudaMemsetAsync(buffer_.data(), kScratchGuardByte, buffer_.size()));
  // The fill is the kit's: done before the heap exists, so no tool counts it as an access outside
  // every region. (NVTX needs the CUDA runtime initialised first: cudaMalloc did that.)
  GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  register_heap();
}

ScratchArena::~ScratchArena() {
  if (heap_) nvtxMemHeapUnregister(scratch_domain(), heap_handle(heap_));  // before buffer_ frees the memory
}

// The whole allocation as a sub-allocator heap: memcheck then reports an access to any part of it
// that no registered region covers (a take's guard, or bytes no take has handed out).
void ScratchArena::register_heap() {
  nvtxMemVirtualRangeDesc_t range{};
  range.ptr = buffer_.data();
  range.size = buffer_.size();
  nvtxMemHeapDesc_t desc{};
  desc.extCompatID = NVTX_EXT_COMPATID_MEM;
  desc.structSize = sizeof desc;
  desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  desc.typeSpecificDescSize = sizeof range;
  desc.typeSpecificDesc = &range;
  desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
  desc.message.ascii = "gpulab scratch arena (ScratchOwner)";
  heap_ = nvtxMemHeapRegister(scratch_domain(), &desc);
}

void ScratchArena::register_region(std::size_t offset, std::size_t bytes, const std::string& name) {
  nvtxMemVirtualRangeDesc_t range{};
  range.ptr = buffer_.data() + offset;
  range.size = bytes;
  nvtxMemRegionsRegisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof batch;
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.heap = heap_handle(heap_);
  batch.regionCount = 1;
  batch.regionDescElementSize = sizeof range;
  batch.regionDescElements = &range;
  nvtxMemRegionsRegister(scratch_domain(), &batch);

  nvtxMemRegionNameDesc_t label{};
  label.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  label.nameType = NVTX_MESSAGE_TYPE_ASCII;
  label.region.pointer = range.ptr;
  label.name.ascii = name.c_str();  // the tool copies it (the samples pass a temporary too)
  nvtxMemRegionsNameBatch_t names{};
  names.extCompatID = NVTX_EXT_COMPATID_MEM;
  names.structSize = sizeof names;
  names.regionCount = 1;
  names.regionElementSize = sizeof label;
  names.regionElements = &label;
  nvtxMemRegionsName(scratch_domain(), &names);
}

void ScratchArena::unregister_region(std::size_t offset) {
  nvtxMemRegionRef_t ref{};
  ref.pointer = buffer_.data() + offset;
  nvtxMemRegionsUnregisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof batch;
  batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  batch.refCount = 1;
  batch.refElementSize = sizeof ref;
  batch.refElements = &ref;
  nvtxMemRegionsUnregister(scratch_domain(), &batch);
}

void ScratchArena::taken(std::size_t index, const ScratchRegion& region) {
  if (region.bytes > 0) register_region(region.offset, region.bytes, region_name(index, region));
}

// fresh(): the last run's regions are gone ("as if it were a fresh heap", nvToolsExtMem.h).
void ScratchArena::reset() { nvtxMemHeapReset(scratch_domain(), heap_handle(heap_)); }

// Guards lie in no region: while a tool listens, the kit's own memset of one is a region for the
// time it takes, so that memcheck reports only the stage's accesses.
void ScratchArena::fill(std::size_t offset, std::size_t bytes, unsigned char value) {
  if (heap_) register_region(offset, bytes, "scratch guard (the harness's fill)");
  GPULAB_CUDA_CHECK(cudaMemsetAsync(buffer_.data() + offset, value, bytes));
  if (heap_) {
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    unregister_region(offset);
  }
}

void ScratchArena::read(std::size_t offset, std::size_t bytes, unsigned char* out) {
  if (heap_) register_region(offset, bytes, "scratch guard (the harness's check)");
  GPULAB_CUDA_CHECK(cudaMemcpy(out, buffer_.data() + offset, bytes, cudaMemcpyDeviceToHost));
  if (heap_) unregister_region(offset);
}

}  // namespace gpulab
