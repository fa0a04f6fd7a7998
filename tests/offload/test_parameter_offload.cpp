// offload::ParameterOffload (offload/parameter_offload.cpp), run with the CPU as the computing
// device (device copies from the CPU allocator, host copies from the pinned pool: the same life
// cycle, with synchronous copies), and on CUDA when a GPU is present (SKIPPED otherwise):
// - five training steps leave the parameters bitwise equal to resident training, also with a
//   checkpointed block and SaveOnCpu, with SGD momentum and Adam (on CUDA, resident training
//   whose optimizer steps host copies, as the offloaded one does);
// - after backward every gradient is in host memory, and between steps the parameters are too;
// - units are copied in module order in the forward and in reverse order in the backward;
// - ParameterOffload::step gives the same training and starts the next forward's first copies,
//   and a parameter changed on the host after it is copied again;
// - the computing device's peak holds about two units' parameters, not the model's;
// - misuse is refused before anything changes.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/memory.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/group_norm.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/pooling.h>
#include <leangrad/offload/parameter_offload.h>
#include <leangrad/offload/save_on_cpu.h>
#include <leangrad/optim/adam.h>
#include <leangrad/optim/sgd.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// (B, 2, 6, 6) -> (B, 3): a conv block, then two linear layers.
nn::Sequential small_cnn(Device device) {
  manual_seed(11);
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1)),
                       nn::GroupNorm(nn::GroupNormOptions(2, 4)), nn::TanhExp(), nn::Flatten(),
                       nn::Linear(4 * 6 * 6, 8), nn::TanhExp(), nn::Linear(8, 3));
  model->to(device);
  return model;
}

// Recompute for module `index` of the model (autograd::checkpoint around its call).
void checkpoint_module(nn::Sequential& model, std::size_t index) {
  model[index]->set_forward_wrapper([](const Tensor& input, const nn::ForwardCall& call) {
    return autograd::checkpoint(
        [call](const std::vector<Tensor>& in) { return std::vector<Tensor>{call(in[0])}; },
        {input})[0];
  });
}

enum class Technique { Plain, Checkpoint, SaveOnCpu };

// Who steps the offloaded model: the optimizer itself, or ParameterOffload::step (unit by unit,
// the next forward's first copies started as it goes).
enum class Stepper { Optimizer, Offload };

struct Case {
  std::string optimizer;
  Technique technique;
  Stepper stepper = Stepper::Optimizer;
};

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name,
                                                 const std::vector<Tensor>& params) {
  if (name == "sgd")
    return std::make_unique<optim::SGD>(params, optim::SGDOptions(0.05).momentum(0.9));
  return std::make_unique<optim::Adam>(params, optim::AdamOptions(0.01));
}

// Where resident training's optimizer steps. ParameterOffload's steps the host copies, with the
// CPU's kernels; a CUDA optimizer rounds differently (fused multiply-adds), so resident training
// on CUDA is compared with `Host`: the optimizer steps host copies of the parameters, which are
// copied back after each step.
enum class ResidentOptimizer { OnTheDevice, Host };

// Five steps of `technique` on `model` (inputs drawn from one seed), returns the parameters on
// the CPU. With `offload`, checks after each backward that the gradients are in host memory.
std::vector<std::vector<double>> train_five_steps(
    nn::Sequential model, const Case& c, Device device, offload::ParameterOffload* offload,
    ResidentOptimizer where = ResidentOptimizer::OnTheDevice) {
  if (c.technique == Technique::Checkpoint) checkpoint_module(model, 1);
  std::vector<Tensor> params = model->parameters();
  std::vector<Tensor> host_params;
  if (where == ResidentOptimizer::Host) {
    for (const Tensor& p : params)
      host_params.push_back(p.detach().to(Device::cpu()).requires_grad_(true));
  }
  std::unique_ptr<optim::Optimizer> optimizer =
      make_optimizer(c.optimizer, host_params.empty() ? params : host_params);
  manual_seed(5);
  for (int step = 0; step < 5; ++step) {
    const Tensor x = randn({4, 2, 6, 6}).to(device);
    const Tensor target = randn({4, 3}).to(device);
    optimizer->zero_grad();
    model->zero_grad();
    Tensor loss;
    {
      std::unique_ptr<offload::SaveOnCpu> save_on_cpu;
      if (c.technique == Technique::SaveOnCpu)
        save_on_cpu = std::make_unique<offload::SaveOnCpu>(true, model->parameters());
      loss = ((*model)(x)-target).pow(2.0).mean();
    }
    loss.backward();
    if (offload != nullptr) {
      for (const auto& [name, p] : model->named_parameters()) {
        EXPECT_TRUE(p.device().is_cpu() && p.is_pinned()) << name << " is on " << p.device();
        EXPECT_TRUE(p.grad().defined() && p.grad().device().is_cpu() && p.grad().is_pinned())
            << name << ": its gradient is not in pinned host memory";
      }
    }
    if (!host_params.empty()) {
      for (std::size_t i = 0; i < params.size(); ++i)
        host_params[i].set_grad(params[i].grad().to(Device::cpu()));
    }
    if (offload != nullptr && c.stepper == Stepper::Offload) {
      offload->step(*optimizer);
    } else {
      optimizer->step();
    }
    if (!host_params.empty()) {
      NoGradGuard no_grad;
      for (std::size_t i = 0; i < params.size(); ++i)
        params[i].copy_(host_params[i]);
    }
  }
  std::vector<std::vector<double>> out;
  for (const Tensor& p : model->parameters())
    out.push_back(test::to_vector(p));
  return out;
}

class ParameterOffloadTraining : public ::testing::TestWithParam<Case> {};

TEST_P(ParameterOffloadTraining, SameParametersAsResidentTrainingOnTheCpu) {
  const Device cpu = Device::cpu();
  const auto resident = train_five_steps(small_cnn(cpu), GetParam(), cpu, nullptr);
  auto model = small_cnn(cpu);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(cpu));
  const auto offloaded = train_five_steps(model, GetParam(), cpu, &offload);
  EXPECT_EQ(offloaded, resident);  // bitwise: the same kernels on the same values
  EXPECT_GT(offload.stats().to_device_bytes, 0);
  EXPECT_GT(offload.stats().to_host_bytes, 0);
}

TEST_P(ParameterOffloadTraining, SameParametersAsResidentTrainingOnCuda) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Device gpu = Device::cuda();
  const auto resident =
      train_five_steps(small_cnn(gpu), GetParam(), gpu, nullptr, ResidentOptimizer::Host);
  auto model = small_cnn(gpu);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(gpu));
  const auto offloaded = train_five_steps(model, GetParam(), gpu, &offload);
  // The same kernels on the same values, in the same order on one stream: bitwise too.
  EXPECT_EQ(offloaded, resident);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const char* technique[] = {"Plain", "Checkpoint", "SaveOnCpu"};
  return info.param.optimizer + technique[static_cast<int>(info.param.technique)] +
         (info.param.stepper == Stepper::Offload ? "OffloadStep" : "");
}

void PrintTo(const Case& c, std::ostream* out) {
  *out << case_name(::testing::TestParamInfo<Case>(c, 0));
}

INSTANTIATE_TEST_SUITE_P(, ParameterOffloadTraining,
                         ::testing::Values(Case{"sgd", Technique::Plain},
                                           Case{"adam", Technique::Plain},
                                           Case{"adam", Technique::Checkpoint},
                                           Case{"sgd", Technique::SaveOnCpu},
                                           Case{"sgd", Technique::Plain, Stepper::Offload},
                                           Case{"adam", Technique::Checkpoint, Stepper::Offload},
                                           Case{"adam", Technique::SaveOnCpu, Stepper::Offload}),
                         case_name);

TEST(ParameterOffload, CopiesUnitsInModuleOrderThenInReverseForBackward) {
  auto model = small_cnn(Device::cpu());
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  const std::vector<std::string> units = {"0", "1", "4", "6"};  // the modules owning parameters
  EXPECT_EQ(offload.unit_names(), units);

  manual_seed(2);
  const Tensor x = randn({4, 2, 6, 6});
  (*model)(x).sum().backward();  // the first forward learns the order
  offload.clear_copy_log();
  const Tensor loss = (*model)(x).sum();
  EXPECT_EQ(offload.copy_log(), units);  // each unit once, in order, the next one prefetched
  offload.clear_copy_log();
  loss.backward();
  // Backward brings back the units whose parameters autograd saved, last first: the linears'
  // weights (their inputs need gradients) and GroupNorm's weight at least.
  const std::vector<std::string>& back = offload.copy_log();
  ASSERT_GE(back.size(), 3u);
  EXPECT_EQ(back[0], "6");
  EXPECT_EQ(back[1], "4");
  EXPECT_EQ(back[2], "1");
  for (std::size_t i = 1; i < back.size(); ++i)
    EXPECT_GT(back[i - 1], back[i]) << "not in reverse module order";
}

// ParameterOffload::step: the first prefetch + 1 units in forward order are copied to the device
// as their update ends (Note [The host step and the next forward's copies]); the next forward
// copies only the rest; the gradients are still there after the step.
TEST(ParameterOffload, StepCopiesTheFirstUnitsOfTheNextForward) {
  auto model = small_cnn(Device::cpu());
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  manual_seed(2);
  const Tensor x = randn({4, 2, 6, 6});
  (*model)(x).sum().backward();  // the first forward learns the order
  offload.clear_copy_log();
  const std::int64_t copies_before = offload.stats().to_device_copies;
  offload.step(sgd);
  EXPECT_EQ(offload.copy_log(), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(offload.stats().to_device_copies, copies_before + 2);
  for (const auto& [name, p] : model->named_parameters()) {
    EXPECT_TRUE(p.grad().defined()) << name << " lost its gradient";
    EXPECT_TRUE(p.device().is_cpu()) << name;
  }
  offload.clear_copy_log();
  (*model)(x);
  EXPECT_EQ(offload.copy_log(), (std::vector<std::string>{"4", "6"}));
}

// A parameter changed on the host between ParameterOffload::step and the next forward (here the
// first unit's weight, whose copy the step already made) is copied again: the forward sees the
// change, as the same model without offload does.
TEST(ParameterOffload, AParameterChangedAfterTheStepIsCopiedAgain) {
  auto resident = small_cnn(Device::cpu());
  auto model = small_cnn(Device::cpu());
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  optim::SGD resident_sgd(resident->parameters(), optim::SGDOptions(0.1));
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  manual_seed(3);
  const Tensor x = randn({4, 2, 6, 6});
  (*resident)(x).sum().backward();
  (*model)(x).sum().backward();
  resident_sgd.step();
  offload.step(sgd);
  {
    NoGradGuard no_grad;
    resident[0]->named_parameters()["weight"].mul_(2.0);
    model[0]->named_parameters()["weight"].mul_(2.0);
  }
  offload.clear_copy_log();
  const std::vector<double> expected = test::to_vector((*resident)(x));
  EXPECT_EQ(test::to_vector((*model)(x)), expected);
  ASSERT_FALSE(offload.copy_log().empty());
  EXPECT_EQ(offload.copy_log()[0], "0");  // copied again; unit 1's copy from the step still serves
}

// Note [A forward that throws]: a unit whose forward threw keeps no stale device pointer that
// would swallow the next change of its parameters.
TEST(ParameterOffload, AForwardThatThrowsLosesNoLaterUpdate) {
  manual_seed(5);
  auto model = nn::Sequential(nn::Linear(4, 4), nn::Linear(4, 2));
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  EXPECT_THROW((*model)(randn({3, 5})), Error);  // the first Linear refuses 5 features
  {
    NoGradGuard no_grad;
    model[0]->named_parameters()["weight"].fill_(0.5);
  }
  (*model)(randn({3, 4}));
  EXPECT_EQ(test::to_vector(model[0]->named_parameters()["weight"]), std::vector<double>(16, 0.5));
  // And an optimizer step through the offload after another failed forward.
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  (*model)(randn({3, 4})).sum().backward();
  const std::vector<double> before = test::to_vector(model[1]->named_parameters()["bias"]);
  const std::vector<double> grad = test::to_vector(model[1]->named_parameters()["bias"].grad());
  EXPECT_THROW((*model)(randn({3, 5})), Error);
  offload.step(sgd);
  (*model)(randn({3, 4}));
  const std::vector<double> after = test::to_vector(model[1]->named_parameters()["bias"]);
  for (std::size_t i = 0; i < after.size(); ++i)
    EXPECT_FLOAT_EQ(after[i], before[i] - 0.1 * grad[i]);
}

// A backward that throws never ran its end-of-backward callback; the next forward does its work,
// so device memory brought back for backward goes again.
TEST(ParameterOffload, ABackwardThatThrowsStillReleasesTheDevice) {
  manual_seed(6);
  auto model = nn::Sequential(nn::Linear(64, 64), nn::Linear(64, 2));
  model[0]->named_parameters()["weight"].requires_grad_(false);  // frozen: no gradient hook
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  auto step = [&](bool fail) {
    Tensor x = randn({3, 64}).requires_grad_(true);
    if (fail)
      x.register_hook([](const Tensor&) -> Tensor { throw Error("hook", __FILE__, __LINE__); });
    try {
      (*model)(x).sum().backward();
    } catch (const Error&) {
    }
  };
  step(false);
  const std::int64_t settled = memory::stats(Device::cpu()).allocated;
  step(true);
  step(false);
  step(false);
  EXPECT_EQ(memory::stats(Device::cpu()).allocated, settled);
}

// The offload takes its hooks off and leaves every parameter in host memory, also those of a
// unit whose forward threw (they pointed at their device copies), with the values they had.
TEST(ParameterOffload, DestroyedAfterAForwardThatThrewLeavesTheParametersOnTheHost) {
  manual_seed(5);
  auto model = nn::Sequential(nn::Linear(4, 4), nn::Linear(4, 2));
  const Tensor x = randn({3, 4});
  const std::vector<double> expected = test::to_vector((*model)(x));
  {
    offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
    EXPECT_THROW((*model)(randn({3, 5})), Error);  // the first Linear refuses 5 features
  }
  for (const auto& [name, p] : model->named_parameters())
    EXPECT_TRUE(p.is_pinned()) << name << " was left on the computing device";
  EXPECT_EQ(test::to_vector((*model)(x)), expected);
}

// A parameter frozen when the offload was made and unfrozen later (fine-tuning that unfreezes
// layers as it goes) gets its gradient in host memory as the others do; it stayed in device
// memory.
TEST(ParameterOffload, AParameterUnfrozenAfterwardsGetsItsGradientOnTheHost) {
  auto make = [] {
    manual_seed(5);
    return nn::Sequential(nn::Linear(4, 4), nn::TanhExp(), nn::Linear(4, 2));
  };
  auto resident = make();
  auto model = make();
  model[0]->named_parameters()["weight"].requires_grad_(false);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  manual_seed(9);
  const Tensor x = randn({3, 4});
  (*model)(x).sum().backward();
  EXPECT_FALSE(model[0]->named_parameters()["weight"].grad().defined());
  model->zero_grad();
  model[0]->named_parameters()["weight"].requires_grad_(true);
  (*model)(x).sum().backward();
  (*resident)(x).sum().backward();
  const Tensor grad = model[0]->named_parameters()["weight"].grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_TRUE(grad.is_pinned());
  EXPECT_EQ(test::to_vector(grad),
            test::to_vector(resident[0]->named_parameters()["weight"].grad()));
}

TEST(ParameterOffload, NewDataWhileOffloadedIsRefused) {
  auto model = nn::Sequential(nn::Linear(4, 4));
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  model[0]->named_parameters()["weight"].set_data(full({4, 4}, 0.5));
  try {
    (*model)(randn({3, 4}));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("was given new data (set_data, Module::to) while offloaded"),
        std::string::npos)
        << e.what();
  }
}

TEST(ParameterOffload, ACudaDeviceMustExist) {
  if (cuda::is_available()) GTEST_SKIP() << "checks the refusal on a machine without CUDA";
  auto model = nn::Sequential(nn::Linear(4, 4));
  EXPECT_THROW(offload::ParameterOffload(model, offload::ParameterOffloadOptions(Device::cuda())),
               DeviceError);
  EXPECT_FALSE(model[0]->named_parameters()["weight"].is_pinned());  // nothing moved
}

TEST(ParameterOffload, ComputingDeviceHoldsAboutTwoUnitsNotTheModel) {
  const Device cpu = Device::cpu();
  auto make = [] {
    manual_seed(3);
    nn::Sequential layers;
    for (int i = 0; i < 6; ++i) {
      layers->push_back(nn::Linear(256, 256));
      layers->push_back(nn::TanhExp());
    }
    return layers;
  };
  manual_seed(4);
  const Tensor x = randn({2, 256});
  auto step_peak = [&](nn::Module& model) {
    model.zero_grad();
    memory::reset_peak(cpu);
    const std::int64_t before = memory::stats(cpu).allocated;
    (*model.shared_from_this())(x).sum().backward();
    return memory::stats(cpu).peak_allocated - before;
  };
  auto resident = make();
  step_peak(*resident);  // warm up
  const std::int64_t resident_peak = step_peak(*resident);

  auto model = make();
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(cpu));
  step_peak(*model);
  const std::int64_t offloaded_peak = step_peak(*model);

  // At most the unit computing, the one prefetched and one gradient on its way to the host, plus
  // the activations: (2, 256) float32 = 2 KiB each, a few per layer, and their gradients.
  const std::int64_t unit = offload.largest_unit_bytes();
  const std::int64_t activations = 6 * 4 * 2 * 256 * 4;
  EXPECT_EQ(unit, (256 * 256 + 256) * 4);
  EXPECT_LE(offloaded_peak, 3 * unit + activations);
  // Resident, the gradients of all six units (and the parameters, allocated before the peak was
  // reset) are on the device.
  EXPECT_GE(resident_peak, 6 * unit);

  // Between steps nothing of the model is on the computing device.
  const std::int64_t allocated = memory::stats(cpu).allocated;
  model->zero_grad();
  {
    NoGradGuard no_grad;
    (*model)(x);
  }
  EXPECT_EQ(memory::stats(cpu).allocated, allocated);
}

TEST(ParameterOffload, RefusesMisuseBeforeChangingAnything) {
  auto model = small_cnn(Device::cpu());
  {
    offload::ParameterOffload first(model, offload::ParameterOffloadOptions(Device::cpu()));
    try {
      offload::ParameterOffload second(model, offload::ParameterOffloadOptions(Device::cpu()));
      ADD_FAILURE() << "offloaded twice";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("parameter '0.weight' is already offloaded"),
                std::string::npos)
          << e.what();
    }
  }
  // A parameter that is a transposed view.
  struct Holder : nn::Module {
    explicit Holder(const Tensor& w) : Module("Holder") { register_parameter("w", w); }
  };
  struct Pair : nn::Module {
    Pair(const Tensor& a, const Tensor& b) : Module("Pair") {
      register_module("a", std::make_shared<Holder>(a));
      register_module("b", std::make_shared<Holder>(b));
    }
  };
  auto expect_refused = [](const std::shared_ptr<nn::Module>& m, const std::string& words) {
    const std::vector<std::vector<double>> before = [&] {
      std::vector<std::vector<double>> v;
      for (const Tensor& p : m->parameters())
        v.push_back(test::to_vector(p));
      return v;
    }();
    try {
      offload::ParameterOffload offload(m, offload::ParameterOffloadOptions(Device::cpu()));
      ADD_FAILURE() << "accepted; expected '" << words << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    for (const Tensor& p : m->parameters())
      EXPECT_FALSE(p.is_pinned()) << "the module changed";
    std::size_t i = 0;
    for (const Tensor& p : m->parameters())
      EXPECT_EQ(test::to_vector(p), before[i++]);
  };
  expect_refused(std::make_shared<Pair>(randn({3, 3}), randn({4, 3}).transpose(0, 1)),
                 "parameter 'b.w' of shape [3, 4] must be contiguous");
  // A weight tied between a module and its own submodule (Note [Tied weights]): the submodule
  // would give it back while the module still uses it. Also below a sibling that shares it.
  struct Nest : nn::Module {
    explicit Nest(const Tensor& w) : Module("Nest") {
      register_parameter("w", w);
      register_module("inner", std::make_shared<Holder>(w));
    }
  };
  expect_refused(std::make_shared<Nest>(randn({3, 3})),
                 "parameter 'inner.w' is the same tensor as 'w' of a module that contains it");
  const Tensor shared = randn({2, 2});
  struct Deep : nn::Module {
    explicit Deep(const Tensor& w) : Module("Deep") {
      register_module("a", std::make_shared<Holder>(w));
      register_module("b", std::make_shared<Nest>(w));
    }
  };
  expect_refused(std::make_shared<Deep>(shared),
                 "parameter 'b.inner.w' is the same tensor as 'b.w' of a module that contains it");
}

// y = tanh(x W): a unit that owns W (the same tensor may be given to several).
struct TanhUnit : nn::Module {
  explicit TanhUnit(const Tensor& w) : Module("TanhUnit"), w(register_parameter("w", w)) {}
  Tensor forward(const Tensor& x) override { return tanh(x.mm(w)); }
  Tensor w;
};

// Three units, the first and last sharing their weight (tied weights): (B, 6) -> (B, 6).
struct Tied : nn::Module {
  Tied(const Tensor& shared, const Tensor& middle) : Module("Tied") {
    first = register_module("first", std::make_shared<TanhUnit>(shared));
    middle_unit = register_module("middle", std::make_shared<TanhUnit>(middle));
    last = register_module("last", std::make_shared<TanhUnit>(shared));
  }
  Tensor forward(const Tensor& x) override { return (*last)((*middle_unit)((*first)(x))); }
  std::shared_ptr<TanhUnit> first, middle_unit, last;
};

std::shared_ptr<Tied> tied_model() {
  manual_seed(21);
  return std::make_shared<Tied>(randn({6, 6}) * 0.5, randn({6, 6}) * 0.5);
}

// Five SGD-momentum steps; the parameters afterwards.
std::vector<std::vector<double>> train_tied(const std::shared_ptr<Tied>& model) {
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  manual_seed(6);
  for (int step = 0; step < 5; ++step) {
    const Tensor x = randn({4, 6});
    sgd.zero_grad();
    ((*model)(x)-x).pow(2.0).mean().backward();
    sgd.step();
  }
  std::vector<std::vector<double>> out;
  for (const Tensor& p : model->parameters())
    out.push_back(test::to_vector(p));
  return out;
}

// Tied weights: the shared tensor is one parameter (the optimizer sees two), offloaded once; it
// visits the device for each of its units' forwards, its gradient is the sum over both units
// and reaches the host once, and training matches resident training bitwise.
TEST(ParameterOffload, TiedWeightsTrainAsResidentOnes) {
  const auto resident = train_tied(tied_model());
  auto model = tied_model();
  ASSERT_EQ(model->parameters().size(), 2u);
  offload::ParameterOffload offload(model, offload::ParameterOffloadOptions(Device::cpu()));
  EXPECT_EQ(offload.unit_names(), (std::vector<std::string>{"first", "middle", "last"}));
  const auto offloaded = train_tied(model);
  EXPECT_EQ(offloaded, resident);
  // Per step: the forward brings W in for `first` and again for `last`, M for `middle`; W's and
  // M's gradients go to the host once each.
  const std::int64_t bytes = 6 * 6 * 4;
  EXPECT_EQ(offload.stats().to_host_bytes, 5 * 2 * bytes);
  EXPECT_GE(offload.stats().to_device_bytes, 5 * 3 * bytes);
  for (const Tensor& p : model->parameters()) {
    EXPECT_TRUE(p.is_pinned());
    EXPECT_TRUE(p.grad().defined() && p.grad().is_pinned());
  }
}

}  // namespace
}  // namespace leangrad
