// Threads used by the CPU kernels (OpenMP). Defaults to the number of cores, or OMP_NUM_THREADS.
#pragma once

namespace leangrad {

void set_num_threads(int num_threads);
int get_num_threads();

}  // namespace leangrad
