// Threads used by the CPU kernels (OpenMP). Defaults to the number of cores, or OMP_NUM_THREADS.
// set_num_threads holds for every thread of the process: the kernels that a DataLoader worker or
// any other thread of the program runs use that count too (kernels/cpu/parallel_for.h applies it;
// OpenMP alone keeps the count per thread).
#pragma once

#include <string>

namespace leangrad {

// 1 to 1024 threads; an Error otherwise.
void set_num_threads(int num_threads);
int get_num_threads();

// How idle OpenMP threads wait, for a program on a machine shared with other work (Note [OpenMP
// threads on a shared machine] in core/parallel.cpp). Call it first in main: unless
// OMP_WAIT_POLICY or GOMP_SPINCOUNT is set (yours win), or the program runs under valgrind, it
// sets GOMP_SPINCOUNT=1000 and executes the program again with `argv` (the same process id). It
// returns when it does nothing, or when the exec failed (then nothing changed). leangrad-train
// calls it.
void use_short_openmp_spin(char** argv);

// How OpenMP threads wait in this process: "GOMP_SPINCOUNT=1000 (set by use_short_openmp_spin)",
// "OMP_WAIT_POLICY=passive (from the environment)", "libgomp's default (spin 300,000 times, then
// sleep)", ...
std::string openmp_wait_setting();

}  // namespace leangrad
