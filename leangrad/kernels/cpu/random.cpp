// Philox random fills on the CPU: element i computed independently (see kernels/random_math.h).
#include <leangrad/kernels/backend.h>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/random_math.h>

namespace leangrad::kernels::cpu {

void uniform(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
             double low, double high) {
  dispatch_floating(dtype, "uniform_", [&]<typename T>() {
    T* y = static_cast<T*>(out);
    const double range = high - low;
    parallel_for(numel, kElementwiseGrain / 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<T>(random_math::uniform_at<T>(i, seed, offset, low, range));
      }
    });
  });
}

void normal(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
            double mean, double stddev) {
  dispatch_floating(dtype, "normal_", [&]<typename T>() {
    T* y = static_cast<T*>(out);
    parallel_for(numel, kElementwiseGrain / 16, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<T>(random_math::normal_at<T>(i, seed, offset, mean, stddev));
      }
    });
  });
}

}  // namespace leangrad::kernels::cpu
