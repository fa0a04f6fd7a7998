// The main() of the LibTorch benchmark programs (libtorch-optim, libtorch-tanhexp-group-norm,
// libtorch-conv): Google Benchmark's, after two options of ours are taken out of the command line.
//   --threads N     LibTorch's intra-op threads (one inter-op thread), as leangrad's side runs
//   --show-config   prints LibTorch's build flags (at::show_config()) and exits
// The run's context names LibTorch's version and thread count.
#pragma once

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

inline int run_libtorch_benchmarks(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--show-config") == 0) {
      std::cout << at::show_config();
      return 0;
    }
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      at::set_num_interop_threads(1);
      at::set_num_threads(std::atoi(argv[++i]));
      continue;
    }
    args.push_back(argv[i]);
  }
  int args_count = static_cast<int>(args.size());
  benchmark::AddCustomContext("torch_version", TORCH_VERSION);
  benchmark::AddCustomContext("torch_threads", std::to_string(at::get_num_threads()));
  benchmark::Initialize(&args_count, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
