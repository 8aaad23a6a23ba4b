// gpulab-info: the device, its measured copy bandwidth (the roof of every lab) and, when the
// machine model is built in, the model's parameters measured on this GPU.
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "gpulab/cuda_check.hpp"
#include "gpulab/device_info.hpp"
#include "gpulab/machine_model.hpp"
#include "gpulab/table.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpulab info: the GPU, its measured copy bandwidth and its model parameters"};
  std::string format = "table";
  app.add_option("--format", format, "table or json")->capture_default_str();
  bool full_model = false, no_model = false;
  app.add_flag("--full-model", full_model, "measure lambda, B and sigma with the full sweeps (a few seconds)");
  app.add_flag("--no-model", no_model, "skip the model parameters (device and copy bandwidth only)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (format != "table" && format != "json") {
    std::cerr << "error: --format " << format << ": use table or json\n";
    return 2;
  }
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  nlohmann::ordered_json doc{{"cuda_runtime", std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)}};
  try {
    auto device = gpulab::query_device();
    if (!device) {
      doc["device"] = nullptr;
      doc["no_gpu"] = gpulab::no_gpu_reason();
      if (format == "json") std::cout << doc.dump(2) << "\n";
      else std::cout << "CUDA runtime " << doc["cuda_runtime"].get<std::string>() << "\n" << gpulab::no_gpu_line() << "\n";
      return 0;
    }
    const auto copy = gpulab::measure_copy_bandwidth();
    const auto& d = *device;
    doc["device"] = {{"name", d.name},
                     {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                     {"multiprocessors", d.multiprocessors},
                     {"warp_size", d.warp_size},
                     {"global_memory_bytes", d.global_memory_bytes},
                     {"shared_memory_per_block", d.shared_memory_per_block},
                     {"shared_memory_per_block_optin", d.shared_memory_per_block_optin},
                     {"shared_memory_per_multiprocessor", d.shared_memory_per_multiprocessor},
                     {"l2_bytes", d.l2_bytes},
                     {"memory_clock_khz", d.memory_clock_khz},
                     {"sm_clock_khz", d.sm_clock_khz},
                     {"memory_bus_width_bits", d.memory_bus_width_bits},
                     {"theoretical_gbps", d.theoretical_bandwidth_gbps()}};
    doc["copy"] = {{"memcpy_gbps", copy.memcpy_gbps},
                   {"kernel_gbps", copy.kernel_gbps},
                   {"kernel_over_memcpy", copy.kernel_gbps / copy.memcpy_gbps}};
    std::optional<gpulab::MachineModel> model;
    if (!no_model) {
      model = gpulab::measure_machine_model(!full_model);
      doc["model"] = {{"latency_ns", model->latency_ns},     {"latency_cycles", model->latency_cycles},
                      {"l2_latency_ns", model->l2_latency_ns}, {"sm_clock_ghz", model->sm_clock_ghz},
                      {"block_bytes", model->block_bytes},   {"block_gbps", model->block_gbps},
                      {"barrier_us", model->barrier_us},     {"barrier_graph_us", model->barrier_graph_us},
                      {"sigma_over_lambda", model->sigma_over_lambda()}, {"quick", !full_model}};
    }
    if (format == "json") {
      std::cout << doc.dump(2) << "\n";
      return 0;
    }
    auto mib = [](std::size_t b) { return static_cast<std::int64_t>(b >> 10); };
    gpulab::Table t({{"what", "what"}, {"value", "value", 1}, {"unit", "unit"}}, d.name + " (CUDA runtime " + doc["cuda_runtime"].get<std::string>() + ")");
    t.add_row({std::string("compute capability"), std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor), std::string("")});
    t.add_row({std::string("multiprocessors (P)"), std::int64_t{d.multiprocessors}, std::string("")});
    t.add_row({std::string("warp size (w)"), std::int64_t{d.warp_size}, std::string("threads")});
    t.add_row({std::string("shared memory per block"), mib(d.shared_memory_per_block), std::string("KiB")});
    t.add_row({std::string("shared memory per block (opt-in)"), mib(d.shared_memory_per_block_optin), std::string("KiB")});
    t.add_row({std::string("shared memory per SM"), mib(d.shared_memory_per_multiprocessor), std::string("KiB")});
    t.add_row({std::string("L2 cache"), mib(d.l2_bytes), std::string("KiB")});
    t.add_row({std::string("global memory"), static_cast<double>(d.global_memory_bytes) / (1 << 30), std::string("GiB")});
    t.add_row({std::string("theoretical bandwidth (2 x clock x bus)"), d.theoretical_bandwidth_gbps(), std::string("GB/s")});
    t.add_row({std::string("copy, cudaMemcpy device to device"), copy.memcpy_gbps, std::string("GB/s (read + write)")});
    t.add_row({std::string("copy, 128-bit kernel"), copy.kernel_gbps, std::string("GB/s (read + write)")});
    t.add_row({std::string("kernel / cudaMemcpy"), 100.0 * copy.kernel_gbps / copy.memcpy_gbps, std::string("%")});
    t.add_note("The copy roof every lab's '% copy' column divides by is the larger of the two copies.");
    t.print(std::cout, gpulab::OutputFormat::table);
    if (model) {
      std::cout << "\n";
      gpulab::machine_model_table(*model).print(std::cout, gpulab::OutputFormat::table);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
