// The lab's manifest in the runner: labs/<lab>/lab.toml, the one place a lab's facts are written
// (its title, student files, default size, knobs and every stage's id, title, file, where it runs,
// bank-conflict contract, knobs and accepted knob values). gpulab_add_lab compiles it into the lab's
// harness as JSON (autograder/gpulab/manifest.py converts it at configure time), and
// lab_from_manifest() turns it into a Lab whose stages have every fact and no code yet: lab.cu gives
// each stage its code with Lab::bind and returns the whole from make_lab() (README, "Adding a lab").
#pragma once
#include <string_view>

#include "gpulab/lab.hpp"

namespace gpulab {

// The manifest as JSON, defined in the lab's generated lab_manifest.cpp (one per lab).
extern const std::string_view kLabManifestJson;

// Every fact of the manifest, stages without code (Lab::bind adds it; Lab::check_complete says
// which stage still has none).
Lab lab_from_manifest(std::string_view json = kLabManifestJson);

}  // namespace gpulab
