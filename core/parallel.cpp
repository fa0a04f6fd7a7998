// set_num_threads / get_num_threads: a thin layer over OpenMP's thread count.
#include "core/parallel.h"

#include <omp.h>

#include "core/error.h"

namespace leangrad {

void set_num_threads(int num_threads) {
  LG_CHECK(num_threads >= 1, "set_num_threads: expected at least 1 thread, got ", num_threads);
  omp_set_num_threads(num_threads);
}

int get_num_threads() {
  return omp_get_max_threads();
}

}  // namespace leangrad
