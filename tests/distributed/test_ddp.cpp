// DistributedDataParallel in one process (a group of one, no launcher needed): training bitwise
// as the plain model across steps and both kinds of zero_grad with no bucket memory (Note [A group
// of one] in reducer.cpp), bucket layout, no_sync, the errors (unused parameters, a parameter
// reduced twice, options), the step timeline, and a module whose parameters
// offload::ParameterOffload keeps on the host. Gradients as views of the buckets, which only
// groups of two or more have, are test_ddp_multiprocess.cpp's (ddp_scenarios.cpp).
#include <gtest/gtest.h>

#include <memory>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/distributed/ddp.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/offload/parameter_offload.h>
#include <leangrad/optim/optim.h>
#include "distributed/launch.h"
#include "testing/tensor_testing.h"

namespace leangrad::distributed {
namespace {

class DDPOneProcess : public test::GroupOfOneTest {};

nn::Sequential mlp(std::uint64_t seed) {  // (N, 6) -> (N, 3)
  manual_seed(seed);
  return nn::Sequential(nn::Linear(6, 8), nn::ReLU(), nn::Linear(8, 3));
}

Tensor batch_x(int step) {
  manual_seed(100 + static_cast<std::uint64_t>(step));
  return randn({5, 6});
}
Tensor batch_y() {
  return test::make_tensor({0, 1, 2, 1, 0}, {5}, kInt64);
}

// mlp plus a head that forward never uses.
struct WithHead : nn::Module {
  explicit WithHead(std::uint64_t seed) : Module("WithHead") {
    body = register_module("body", mlp(seed));
    head = register_module("head", nn::Linear(3, 2));
  }
  Tensor forward(const Tensor& x) override { return body->forward(x); }
  nn::Sequential body{nullptr};
  nn::Linear head{nullptr};
};

TEST_F(DDPOneProcess, AGroupOfOneHoldsNoBucketsAndTrainsAsThePlainModel) {
  auto plain = mlp(1);
  DistributedDataParallel ddp(mlp(1), DDPOptions().first_bucket_mb(0.0001));
  ASSERT_EQ(ddp.buckets().size(), 2u);  // (8,3)+(3) = 108 B > 104.8 B closes bucket 0
  EXPECT_EQ(ddp.buckets()[0].parameters,
            (std::vector<std::string>{"module.2.bias", "module.2.weight"}));
  EXPECT_EQ(ddp.buckets()[1].parameters,
            (std::vector<std::string>{"module.0.bias", "module.0.weight"}));
  EXPECT_EQ(ddp.buckets()[1].numel, 8 + 48);
  optim::SGD opt_plain(plain->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD opt_ddp(ddp.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  const std::vector<Tensor> params = ddp.parameters();
  for (int step = 0; step < 4; ++step) {
    const bool set_to_none = step % 2 == 1;
    opt_plain.zero_grad(set_to_none);
    opt_ddp.zero_grad(set_to_none);
    if (step > 0 && set_to_none) {
      EXPECT_FALSE(params[0].grad().defined());
    }
    cross_entropy(plain->forward(batch_x(step)), batch_y()).backward();
    cross_entropy(ddp.forward(batch_x(step)), batch_y()).backward();
    // No bucket holds a copy: the gradients are the ones autograd made, bitwise the plain ones.
    for (std::size_t i = 0; i < params.size(); ++i) {
      EXPECT_EQ(test::to_vector(params[i].grad()), test::to_vector(plain->parameters()[i].grad()))
          << "parameter " << i << " at step " << step;
    }
    opt_plain.step();
    opt_ddp.step();
  }
  // Averaging over one rank changes nothing: bitwise the plain model's training.
  const std::vector<Tensor> expected = plain->parameters();
  for (std::size_t i = 0; i < params.size(); ++i)
    EXPECT_EQ(test::to_vector(params[i]), test::to_vector(expected[i])) << "parameter " << i;
  for (std::size_t b = 0; b < ddp.buckets().size(); ++b)
    EXPECT_FALSE(ddp.reducer().bucket_tensor(b).defined()) << "bucket " << b;
}

// (Two ranks move it into its bucket: the ddp_broadcast scenario.)
TEST_F(DDPOneProcess, AGradientPresentAtConstructionIsKept) {
  auto model = mlp(2);
  cross_entropy(model->forward(batch_x(0)), batch_y()).backward();
  const Tensor before = model->parameters()[0].grad();
  const std::vector<double> values = test::to_vector(before);
  DistributedDataParallel ddp(model);
  const Tensor grad = model->parameters()[0].grad();
  EXPECT_TRUE(grad.storage() == before.storage());
  EXPECT_EQ(test::to_vector(grad), values);
}

TEST_F(DDPOneProcess, NoSyncForwardsLeaveTheReducerAlone) {
  DistributedDataParallel ddp(mlp(3));
  {
    auto no_sync = ddp.no_sync();
    cross_entropy(ddp.forward(batch_x(0)), batch_y()).backward();
  }
  EXPECT_TRUE(ddp.reducer().last_step().buckets.empty());  // no synchronised backward yet
  const Tensor w = ddp.parameters()[0];
  const std::vector<double> local = test::to_vector(w.grad());
  cross_entropy(ddp.forward(batch_x(1)), batch_y()).backward();
  EXPECT_EQ(ddp.reducer().last_step().buckets.size(), 1u);
  EXPECT_NE(test::to_vector(w.grad()), local);  // accumulated: both micro-batches
}

TEST_F(DDPOneProcess, ForwardWithoutGradModeDoesNotArm) {
  DistributedDataParallel ddp(mlp(4));
  {
    leangrad::NoGradGuard no_grad;
    ddp.forward(batch_x(0));
  }
  // A graph built outside DDP's forward: the hooks do nothing (Note [Armed by forward]).
  cross_entropy(ddp.module()->forward(batch_x(0)), batch_y()).backward();
  EXPECT_TRUE(ddp.reducer().last_step().buckets.empty());
}

TEST_F(DDPOneProcess, TheTimelineOrdersReadyStartedFinished) {
  DistributedDataParallel ddp(mlp(5), DDPOptions().first_bucket_mb(0.0001));
  cross_entropy(ddp.forward(batch_x(0)), batch_y()).backward();
  const StepTimeline& t = ddp.reducer().last_step();
  ASSERT_EQ(t.buckets.size(), 2u);
  for (const BucketTimeline& b : t.buckets) {
    EXPECT_LE(t.first_gradient, b.ready);
    EXPECT_LE(b.ready, b.started);
    EXPECT_LE(b.started, b.finished);
    EXPECT_LE(b.finished, t.reduced);
    // A group of one launches no all-reduce (Note [A group of one] in reducer.cpp): the bucket
    // is reduced the moment it is complete. (A collective through Gloo's worker thread takes
    // microseconds, which the steady clock resolves.)
    EXPECT_EQ(b.started, b.finished);
  }
  EXPECT_LE(t.buckets[0].ready, t.buckets[1].ready);
  EXPECT_LE(t.buckets[1].ready, t.last_gradient);
  EXPECT_LE(t.last_gradient, t.backward_done);
  EXPECT_LE(t.backward_done, t.reduced);
}

TEST_F(DDPOneProcess, AnUnusedParameterIsNamedAndTheNextStepWorks) {
  auto model = std::make_shared<WithHead>(6);
  DistributedDataParallel ddp(model);
  const std::string message =
      test::error_message([&] { cross_entropy(ddp.forward(batch_x(0)), batch_y()).backward(); });
  EXPECT_CONTAINS(message,
                  "DistributedDataParallel: 2 parameters received no gradient in this "
                  "backward on rank 0: module.head.weight, module.head.bias.");
  // The unused layer frozen in a new wrapper: training goes on.
  for (Tensor& p : model->head->parameters())
    p.requires_grad_(false);
  DistributedDataParallel frozen(model);
  cross_entropy(frozen.forward(batch_x(1)), batch_y()).backward();
  EXPECT_EQ(frozen.reducer().last_step().buckets.size(), 1u);
}

TEST_F(DDPOneProcess, FindUnusedParametersLeavesAnUnusedGradientUndefined) {
  auto model = std::make_shared<WithHead>(7);
  DistributedDataParallel ddp(model, DDPOptions().find_unused_parameters(true));
  for (int step = 0; step < 2; ++step) {
    cross_entropy(ddp.forward(batch_x(step)), batch_y()).backward();
    EXPECT_FALSE(model->head->weight.grad().defined());
    EXPECT_TRUE(model->body->parameters()[0].grad().defined());
  }
}

TEST_F(DDPOneProcess, AParameterReducedTwiceInOneBackwardIsNamed) {
  // A checkpointed segment runs its own backward: a weight used inside and outside it
  // accumulates twice.
  struct Shared : nn::Module {
    Shared() : Module("Shared") { lin = register_module("lin", nn::Linear(6, 6)); }
    Tensor forward(const Tensor& x) override {
      Tensor inside = autograd::checkpoint(
          [this](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{lin->forward(in[0])};
          },
          {x})[0];
      return lin->forward(inside);
    }
    nn::Linear lin{nullptr};
  };
  DistributedDataParallel ddp(std::make_shared<Shared>());
  Tensor x = batch_x(0).requires_grad_();
  EXPECT_CONTAINS(test::error_message([&] { ddp.forward(x).sum().backward(); }),
                  "parameter 'module.lin.bias' received its gradient twice in one backward");
  // The next forward starts clean.
  EXPECT_CONTAINS(test::error_message([&] { ddp.forward(x).sum().backward(); }),
                  "received its gradient twice");
}

TEST_F(DDPOneProcess, ACheckpointedSegmentIsReducedWithTheRest) {
  // The segment's parameters get their gradients in the recompute's own backward, nested in the
  // outer one; the end-of-backward callback still runs once, after both.
  struct Recomputed : nn::Module {
    explicit Recomputed(std::uint64_t seed) : Module("Recomputed") {
      manual_seed(seed);
      first = register_module("first", nn::Linear(6, 8));
      inner = register_module("inner", nn::Linear(8, 8));
      last = register_module("last", nn::Linear(8, 3));
    }
    Tensor forward(const Tensor& x) override {
      Tensor h = relu(first->forward(x));
      h = autograd::checkpoint(
          [this](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{relu(inner->forward(in[0]))};
          },
          {h})[0];
      return last->forward(h);
    }
    nn::Linear first{nullptr}, inner{nullptr}, last{nullptr};
  };
  auto plain = std::make_shared<Recomputed>(10);
  DistributedDataParallel ddp(std::make_shared<Recomputed>(10),
                              DDPOptions().first_bucket_mb(0.0001).bucket_cap_mb(0.0001));
  ASSERT_EQ(ddp.buckets().size(), 3u);  // one per layer: last, inner (recomputed), first
  cross_entropy(plain->forward(batch_x(0)), batch_y()).backward();
  cross_entropy(ddp.forward(batch_x(0)), batch_y()).backward();
  EXPECT_EQ(ddp.reducer().last_step().buckets.size(), 3u);
  const std::vector<Tensor> expected = plain->parameters(), params = ddp.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(test::to_vector(params[i].grad()), test::to_vector(expected[i].grad()))
        << "parameter " << i;
  }
}

TEST_F(DDPOneProcess, OptionsAndModulesAreChecked) {
  EXPECT_CONTAINS(
      test::error_message([] { DistributedDataParallel(mlp(8), DDPOptions().bucket_cap_mb(0)); }),
      "bucket_cap_mb must be positive, got 0");
  EXPECT_CONTAINS(test::error_message([] { DistributedDataParallel(nullptr); }),
                  "the module is null");
  DistributedDataParallel ddp(mlp(8));
  EXPECT_EQ(ddp.named_parameters()[0].first, "module.0.weight");
  EXPECT_CONTAINS(ddp.extra_repr(), "world_size=1, buckets=1, bucket_cap_mb=25");
  // A cap past any model: one bucket (its bytes past int64 once made every bucket 1 byte).
  for (double cap : {1e6, 1e13, 1e300}) {
    DistributedDataParallel huge(mlp(8), DDPOptions().first_bucket_mb(cap).bucket_cap_mb(cap));
    EXPECT_EQ(huge.buckets().size(), 1u) << cap;
  }
}

TEST_F(DDPOneProcess, MixedDtypesGetBucketsOfTheirOwn) {
  auto model = mlp(9);
  model->ptr<nn::Linear>(0)->to(kFloat64);
  DistributedDataParallel ddp(model);
  ASSERT_EQ(ddp.buckets().size(), 2u);
  EXPECT_EQ(ddp.buckets()[0].dtype, kFloat32);
  EXPECT_EQ(ddp.buckets()[1].dtype, kFloat64);
}

// Note [Offloaded parameters] (reducer.cpp): DDP over a module whose parameters
// offload::ParameterOffload keeps in host memory has host buckets, and trains bitwise as DDP over
// the resident module (the CPU as the computing device), through ParameterOffload::step and the
// optimizer's own step alike.
TEST_F(DDPOneProcess, OffloadedParametersTrainAsResidentOnes) {
  DistributedDataParallel resident(mlp(11), DDPOptions().first_bucket_mb(0.0001));
  auto model = mlp(11);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  DistributedDataParallel offloaded(model, DDPOptions().first_bucket_mb(0.0001));
  ASSERT_EQ(offloaded.buckets().size(), 2u);
  for (const BucketInfo& bucket : offloaded.buckets())
    EXPECT_TRUE(bucket.device.is_cpu());
  optim::Adam resident_adam(resident.parameters(), optim::AdamOptions(1e-2));
  optim::Adam offloaded_adam(offloaded.parameters(), optim::AdamOptions(1e-2));
  const std::vector<Tensor> expected = resident.parameters();
  const std::vector<Tensor> params = offloaded.parameters();
  for (int step = 0; step < 4; ++step) {
    const bool set_to_none = step % 2 == 1;
    resident_adam.zero_grad(set_to_none);
    offloaded_adam.zero_grad(set_to_none);
    cross_entropy(resident.forward(batch_x(step)), batch_y()).backward();
    cross_entropy(offloaded.forward(batch_x(step)), batch_y()).backward();
    for (std::size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(params[i].grad().device().is_cpu()) << "parameter " << i << " at step " << step;
      EXPECT_EQ(test::to_vector(params[i].grad()), test::to_vector(expected[i].grad()))
          << "parameter " << i << " at step " << step;
    }
    resident_adam.step();
    if (step % 2 == 0) {
      offload.step(offloaded_adam);
    } else {
      offloaded_adam.step();
    }
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(params[i].is_pinned()) << "parameter " << i;
    EXPECT_EQ(test::to_vector(params[i]), test::to_vector(expected[i])) << "parameter " << i;
  }
}

// On CUDA the offload's gradient copies to the host are asynchronous, and backward() returns with
// every one landed: each step starts both models from the same parameters, and the gradients are
// bitwise equal. (A group of one has no buckets, Note [A group of one] in reducer.cpp, so the
// reducer's own copy into a host bucket, which must wait for each gradient's copy, is checked
// with two ranks: DistributedDDP.OffloadedParametersTrainAsResidentOnesOnCuda.)
TEST_F(DDPOneProcess, OffloadedParametersGetTheResidentGradientsOnCuda) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Device gpu = Device::cuda(0);
  auto resident_model = mlp(12);
  resident_model->to(gpu);
  DistributedDataParallel resident(resident_model, DDPOptions().first_bucket_mb(0.0001));
  auto model = mlp(13);
  model->to(gpu);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(gpu));
  DistributedDataParallel offloaded(model, DDPOptions().first_bucket_mb(0.0001));
  for (const BucketInfo& bucket : offloaded.buckets())
    EXPECT_TRUE(bucket.device.is_cpu());
  const std::vector<Tensor> expected = resident.parameters();
  const std::vector<Tensor> params = offloaded.parameters();
  for (int step = 0; step < 4; ++step) {
    model->load_state_dict(resident_model->state_dict());
    resident.zero_grad(/*set_to_none=*/step % 2 == 1);
    offloaded.zero_grad(/*set_to_none=*/step % 2 == 1);
    const Tensor x = batch_x(step).to(gpu), y = batch_y().to(gpu);
    cross_entropy(resident.forward(x), y).backward();
    cross_entropy(offloaded.forward(x), y).backward();
    for (std::size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(params[i].grad().device().is_cpu()) << "parameter " << i;
      EXPECT_EQ(test::to_vector(params[i].grad()), test::to_vector(expected[i].grad().cpu()))
          << "parameter " << i << " at step " << step;
    }
    NoGradGuard no_grad;
    for (const Tensor& p : expected)
      Tensor(p).add_(p.grad(), -0.1);
  }
}

// Which parameters are reduced, and in which dtype, is fixed when the module is wrapped. A
// parameter unfrozen afterwards has no bucket slot: with two ranks its gradient would stay each
// rank's own and the replicas would drift apart without a word. A module converted to another
// dtype afterwards has parameters of another dtype than their buckets. Both are refused, naming
// the parameter, in a group of one too (so a program tried on one rank fails the same way).
TEST_F(DDPOneProcess, AParameterUnfrozenAfterWrappingIsNamed) {
  auto model = mlp(15);
  for (Tensor& p : model->ptr<nn::Linear>(0)->parameters())
    p.requires_grad_(false);
  DistributedDataParallel ddp(model);
  cross_entropy(ddp.forward(batch_x(0)), batch_y()).backward();  // frozen: fine
  model->ptr<nn::Linear>(0)->weight.requires_grad_(true);
  EXPECT_CONTAINS(test::error_message([&] { (void)ddp.forward(batch_x(1)); }),
                  "DistributedDataParallel: parameter 'module.0.weight' was frozen "
                  "(requires_grad false) when the module was wrapped and requires grad now");
  {
    NoGradGuard no_grad;  // evaluation reduces nothing: allowed
    (void)ddp.forward(batch_x(1));
  }
  model->ptr<nn::Linear>(0)->weight.requires_grad_(false);
  cross_entropy(ddp.forward(batch_x(2)), batch_y()).backward();  // frozen again: fine
}

TEST_F(DDPOneProcess, AModuleConvertedAfterWrappingIsNamed) {
  auto model = mlp(16);
  DistributedDataParallel ddp(model);
  model->to(kFloat64);
  EXPECT_CONTAINS(
      test::error_message(
          [&] { cross_entropy(ddp.forward(batch_x(0).to(kFloat64)), batch_y()).backward(); }),
      "parameter 'module.2.bias' is float64 but its bucket float32: the module was converted "
      "after it was wrapped. Convert the module (to(dtype)) before wrapping it");
}

// The offload built on a module already wrapped would leave device buckets under host
// parameters: its first backward raises, naming the parameter.
TEST_F(DDPOneProcess, AnOffloadBuiltAfterWrappingIsRefusedOnCuda) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Device gpu = Device::cuda(0);
  auto model = mlp(14);
  model->to(gpu);
  DistributedDataParallel ddp(model);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(gpu));
  const Tensor x = batch_x(0).to(gpu), y = batch_y().to(gpu);
  EXPECT_CONTAINS(test::error_message([&] { cross_entropy(ddp.forward(x), y).backward(); }),
                  "is on cpu but its bucket on cuda:0: the parameters moved after the module was "
                  "wrapped");
}

}  // namespace
}  // namespace leangrad::distributed
