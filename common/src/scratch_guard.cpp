// The guard logic of scratch_guard.hpp: host-only, so common/tests/test_kit.cpp checks it on host
// memory.
#include "gpulab/scratch_guard.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace gpulab {

namespace {

// typeid(T).name() as the type is spelt: "i" -> "int", "N9reduction4Mat2E" -> "reduction::Mat2".
std::string demangled(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

std::string hex_byte(unsigned char b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", b);
  return text;
}

// The stage instance whose reset_output() ran last on this thread (StageScratch::before_run).
thread_local StageScratch* t_running = nullptr;

}  // namespace

std::string describe_take(const ScratchRegion& region) {
  return "take<" + demangled(region.type) + ">(" + std::to_string(region.count) + ")";
}

void ScratchGuards::rearm(const Scratch& scratch, ScratchMemory& memory) {
  if (runs_ == 0) return;  // nothing ran since the arena was filled whole: every guard still holds it
  spans_.clear();
  for (const ScratchRegion& r : scratch.regions()) {
    if (r.guard == 0) continue;
    memory.fill(r.offset + r.bytes, r.guard, kScratchGuardByte);
    spans_.push_back({r.offset + r.bytes, r.guard});
  }
  whole_arena_ = false;
  armed_run_ = runs_ + 1;
}

bool ScratchGuards::armed(const Span& guard) const {
  return whole_arena_ || std::find(spans_.begin(), spans_.end(), guard) != spans_.end();
}

std::optional<std::string> ScratchGuards::overrun(const Scratch& scratch, ScratchMemory& memory) const {
  if (runs_ != armed_run_) return std::nullopt;  // this run's guards were not filled before it
  const auto regions = scratch.regions();
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const ScratchRegion& r = regions[i];
    const Span guard{r.offset + r.bytes, r.guard};
    if (guard.bytes == 0 || !armed(guard)) continue;
    bytes.resize(guard.bytes);
    memory.read(guard.offset, guard.bytes, bytes.data());
    const auto changed = std::find_if(bytes.begin(), bytes.end(), [](unsigned char b) { return b != kScratchGuardByte; });
    if (changed != bytes.end())
      return describe_overrun(i, r, static_cast<std::size_t>(changed - bytes.begin()), i + 1 < regions.size()) +
             " (it holds " + hex_byte(*changed) + ", the guard " + hex_byte(kScratchGuardByte) + ")";
  }
  return std::nullopt;
}

std::string describe_overrun(std::size_t index, const ScratchRegion& region, std::size_t first_changed, bool has_next) {
  const std::string k = std::to_string(index + 1);
  std::string s = "the stage wrote past scratch region #" + k + " (" + describe_take(region) + ", " +
                  std::to_string(region.bytes) + " bytes): the first changed guard byte is at offset " +
                  std::to_string(region.bytes + first_changed) + " of the region, " + std::to_string(first_changed) +
                  " bytes past its end";
  if (region.element_bytes > 0)
    s += " (element index " + std::to_string(region.count + first_changed / region.element_bytes) + " of a region of " +
         std::to_string(region.count) + ")";
  if (has_next) s += "; a write before region #" + std::to_string(index + 2) + " lands there too";
  return s;
}

GuardedScratch::~GuardedScratch() {
  if (stage_) std::erase(stage_->members_, this);
}

void GuardedScratch::join_running_stage() {
  StageScratch* running = t_running;
  if (running == stage_ || running == nullptr) return;
  if (stage_) std::erase(stage_->members_, this);
  running->members_.push_back(this);
  stage_ = running;
}

StageScratch::~StageScratch() {
  for (GuardedScratch* m : members_) m->stage_ = nullptr;
  if (t_running == this) t_running = nullptr;
}

void StageScratch::before_run() {
  for (GuardedScratch* m : members_) m->rearm_guards();
  t_running = this;
}

std::optional<std::string> StageScratch::overrun() const {
  for (GuardedScratch* m : members_)
    if (auto found = m->overrun()) return found;
  return std::nullopt;
}

}  // namespace gpulab
