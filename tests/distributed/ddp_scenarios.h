// The DistributedDataParallel scenarios of dist_worker (ddp_scenarios.cpp): each rank of a test
// runs one, named on dist_worker's command line ("ddp_equal_mlp_f32", ...), against a
// single-process reference it computes itself.
#pragma once

#include <string>

namespace leangrad::test {

// A check of a scenario that did not hold (dist_worker exits 1 with its text).
struct ScenarioCheckFailed {
  std::string what;
};

// A check of a scenario (ddp_scenarios.cpp and zero_scenarios.cpp): counted, and
// ScenarioCheckFailed{what} unless `ok`. run_*_scenario start the count at 0 and return it.
void check(bool ok, const std::string& what);
int& scenario_checks();

// Runs the scenario `name` (starting with "ddp_") on the default process group; returns how
// many checks it made. Throws ScenarioCheckFailed, or leangrad::Error for an unknown name.
int run_ddp_scenario(const std::string& name);

// The same for the ZeroRedundancyOptimizer scenarios ("zero_*", zero_scenarios.cpp).
int run_zero_scenario(const std::string& name);

}  // namespace leangrad::test
