// Adam8bit trains like Adam: a small MLP (32 -> 128 -> 4, its first weight quantised) on a
// synthetic classification task with 30% label noise and fresh batches every step (so the loss
// plateaus well above 0) reaches the same evaluation loss, within 2%, after 500 steps from the
// same initialisation.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>
#include "optim/teacher_task.h"

namespace leangrad {
namespace {

constexpr std::int64_t kBatch = 128, kEvalSamples = 4096;
constexpr std::int64_t kInputs = test::kTaskInputs, kHidden = 128, kClasses = test::kTaskClasses;

using Batch = test::TeacherBatch;

// The MLP's parameters: w1 (kInputs, kHidden) with 4096 elements (8-bit states), b1, w2, b2.
std::vector<Tensor> init_params() {
  manual_seed(12);
  return {(randn({kInputs, kHidden}) * (1.0 / std::sqrt(kInputs))).requires_grad_(true),
          zeros({kHidden}).requires_grad_(true),
          (randn({kHidden, kClasses}) * (1.0 / std::sqrt(kHidden))).requires_grad_(true),
          zeros({kClasses}).requires_grad_(true)};
}

Tensor loss_of(const std::vector<Tensor>& p, const Batch& batch) {
  const Tensor hidden = (matmul(batch.x, p[0]) + p[1]).relu();
  return cross_entropy(matmul(hidden, p[2]) + p[3], batch.target);
}

// 500 steps on fresh batches (the same sequence for every optimizer), then the loss on `eval`.
double train(optim::Optimizer& opt, const std::vector<Tensor>& params, const Tensor& teacher,
             const Batch& eval) {
  manual_seed(13);
  for (int step = 0; step < 500; ++step) {
    const Batch batch = test::sample_teacher_task(kBatch, teacher);
    opt.zero_grad();
    loss_of(params, batch).backward();
    opt.step();
  }
  NoGradGuard no_grad;
  return loss_of(params, eval).item<double>();
}

TEST(AdamMlp, Adam8bitReachesAdamLoss) {
  manual_seed(11);
  const Tensor teacher = randn({kInputs, kClasses});
  const Batch eval = test::sample_teacher_task(kEvalSamples, teacher);
  std::vector<Tensor> p32 = init_params();
  std::vector<Tensor> p8 = init_params();
  optim::Adam adam(p32, optim::AdamOptions(3e-3));
  optim::Adam8bit adam8(p8, optim::Adam8bitOptions(3e-3));
  const double initial = loss_of(p32, eval).item<double>();
  const double loss32 = train(adam, p32, teacher, eval);
  const double loss8 = train(adam8, p8, teacher, eval);
  std::cout << "[ AdamMlp ] loss " << initial << " -> Adam " << loss32 << ", Adam8bit " << loss8
            << "\n";
  EXPECT_LT(loss32, 0.8 * initial);
  EXPECT_NEAR(loss8, loss32, 0.02 * loss32);
  EXPECT_EQ(adam8.state(0).at("state1").dtype(), kUInt8);  // w1 really was quantised
}

}  // namespace
}  // namespace leangrad
