// Threads used by the CPU kernels (OpenMP). Defaults to the number of cores, or OMP_NUM_THREADS.
// set_num_threads holds for every thread of the process: the kernels that a DataLoader worker or
// any other thread of the program runs use that count too (kernels/cpu/parallel_for.h applies it;
// OpenMP alone keeps the count per thread).
#pragma once

namespace leangrad {

void set_num_threads(int num_threads);
int get_num_threads();

}  // namespace leangrad
