// How leangrad-train's OpenMP threads wait for work: it shortens libgomp's spin before main runs
// anything else (Note [OpenMP threads on a shared machine], openmp_wait.cpp), and --version says
// which setting holds.
#pragma once

#include <string>

namespace leangrad::tools {

// Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set (or under valgrind): sets GOMP_SPINCOUNT=1000
// and executes the program again with `argv`. Returns when it does nothing or the exec fails.
// Call it first in main.
void use_short_openmp_spin(char** argv);

// "GOMP_SPINCOUNT=1000 (leangrad-train's default)", "OMP_WAIT_POLICY=passive (from the
// environment)", ...: the --version line.
std::string openmp_wait_text();

}  // namespace leangrad::tools
