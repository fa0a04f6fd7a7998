// The synthetic classification task of the optimizer training tests (test_optim_mlp.cpp,
// test_mixed_precision_training.cpp): inputs (n, kTaskInputs) from N(0, 1), labels from a fixed
// random linear teacher (kTaskInputs, kTaskClasses), 30% of them replaced by random classes (an
// irreducible loss: a model cannot reach 0, and the Bayes accuracy is 77.5%). Fresh samples every
// step, so nothing is memorised and the loss plateaus.
#pragma once

#include <cstdint>

#include <leangrad/autograd/functions.h>
#include <leangrad/kernels/creation.h>

namespace leangrad::test {

inline constexpr std::int64_t kTaskInputs = 32, kTaskClasses = 4;

struct TeacherBatch {
  Tensor x;       // (n, kTaskInputs)
  Tensor target;  // (n,) int64
};

// n samples drawn from the default generator.
inline TeacherBatch sample_teacher_task(std::int64_t n, const Tensor& teacher) {
  TeacherBatch b;
  b.x = randn({n, kTaskInputs});
  const Tensor labels = matmul(b.x, teacher).argmax(1);
  const Tensor noisy = (rand({n}) * static_cast<double>(kTaskClasses)).to(kInt64);
  b.target = where(rand({n}).lt(0.3), noisy, labels);
  return b;
}

}  // namespace leangrad::test
