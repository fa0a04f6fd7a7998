// Random fills: reserve Philox counters from the generator, then fill on the tensor's device.
// A non-contiguous target is filled through a contiguous temporary, so element i (in row-major
// order) gets the same number whatever the target's strides.
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/random_math.h>

namespace leangrad::ops {

namespace {

template <typename Launch>
void random_fill(const Tensor& self, const char* op, std::int64_t per_block, Launch launch) {
  LG_CHECK_DTYPE(is_floating(self.dtype()), op, ": expected a floating tensor, got ", self.dtype());
  const std::int64_t numel = self.numel();
  if (numel == 0) return;
  const auto counters = static_cast<std::uint64_t>((numel + per_block - 1) / per_block);
  Tensor target = self.is_contiguous() ? self : empty(self.shape(), self.options());
  launch(target, counters);
  if (!target.is_same(self)) copy_(self, target);
  self.bump_version();
}

}  // namespace

void uniform_(const Tensor& self, double low, double high, Generator& gen) {
  LG_CHECK(low <= high, "uniform_: expected low <= high, got [", low, ", ", high, ")");
  const std::int64_t per_block = self.dtype() == kFloat64 ? random_math::uniform_per_block<double>
                                                          : random_math::uniform_per_block<float>;
  random_fill(self, "uniform_", per_block, [&](const Tensor& t, std::uint64_t counters) {
    const Generator::State s = gen.reserve(counters);
    const cuda::DeviceGuard guard(t.device());
    switch (t.device().type) {
      case DeviceType::CPU:
        kernels::cpu::uniform(t.dtype(), t.data_ptr(), t.numel(), s.seed, s.offset, low, high);
        break;
      case DeviceType::CUDA:
        kernels::cuda::uniform(t.dtype(), t.data_ptr(), t.numel(), s.seed, s.offset, low, high);
        break;
    }
  });
}

void normal_(const Tensor& self, double mean, double std, Generator& gen) {
  LG_CHECK(std >= 0, "normal_: expected std >= 0, got ", std);
  const std::int64_t per_block = self.dtype() == kFloat64 ? random_math::normal_per_block<double>
                                                          : random_math::normal_per_block<float>;
  random_fill(self, "normal_", per_block, [&](const Tensor& t, std::uint64_t counters) {
    const Generator::State s = gen.reserve(counters);
    const cuda::DeviceGuard guard(t.device());
    switch (t.device().type) {
      case DeviceType::CPU:
        kernels::cpu::normal(t.dtype(), t.data_ptr(), t.numel(), s.seed, s.offset, mean, std);
        break;
      case DeviceType::CUDA:
        kernels::cuda::normal(t.dtype(), t.data_ptr(), t.numel(), s.seed, s.offset, mean, std);
        break;
    }
  });
}

}  // namespace leangrad::ops
