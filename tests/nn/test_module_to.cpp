// Tests of Module::to (nn/module.cpp): tensors converted in place with their gradients, tied
// weights once, and a conversion that fails part-way leaves the module exactly as it was (Note
// [Module::to changes all or nothing]).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/module.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// Buffers of its own (a floating one, converted, and an integer one, never), then two layers.
struct Net : nn::Module {
  Net() : Module("Net") {
    register_buffer("scale", full({2}, 0.5));
    register_buffer("steps", full({}, 7.0, kInt64));
    fc1 = register_module("fc1", nn::Linear(3, 4));
    fc2 = register_module("fc2", nn::Linear(4, 2));
  }
  nn::Linear fc1{nullptr}, fc2{nullptr};
};

// One tensor of a module as it was: the handle, its data (storage, dtype, values, version) and
// its gradient.
struct Snapshot {
  std::string name;
  Tensor tensor;
  DType dtype;
  const void* data;
  std::vector<double> values;
  std::uint32_t version;
  Tensor grad;
  std::vector<double> grad_values;
};

std::vector<Snapshot> snapshot(const nn::Module& module) {
  std::vector<Snapshot> out;
  for (const auto& [name, t] : module.state_dict()) {
    const Tensor grad = t.grad();
    out.push_back({name, t, t.dtype(), t.data_ptr(), test::to_vector(t), t.version(), grad,
                   grad.defined() ? test::to_vector(grad) : std::vector<double>()});
  }
  return out;
}

void expect_unchanged(const std::vector<Snapshot>& before) {
  for (const Snapshot& s : before) {
    SCOPED_TRACE(s.name);
    const Tensor& t = s.tensor;
    EXPECT_EQ(t.dtype(), s.dtype);
    EXPECT_EQ(t.device(), Device::cpu());
    EXPECT_EQ(t.data_ptr(), s.data);
    EXPECT_EQ(test::to_vector(t), s.values);
    EXPECT_EQ(t.version(), s.version);
    ASSERT_EQ(t.grad().defined(), s.grad.defined());
    if (!s.grad.defined()) continue;
    EXPECT_TRUE(t.grad().is_same(s.grad));
    EXPECT_EQ(t.grad().dtype(), s.grad.dtype());
    EXPECT_EQ(test::to_vector(t.grad()), s.grad_values);
  }
}

// A gradient assigned through mutable_grad() (which checks nothing) that does not fit its
// parameter: converting fc2.weight fails after the buffers and fc1 would have been converted.
// The Error names the parameter, and every parameter, buffer and gradient is as before: dtype,
// device, storage, values, version.
TEST(ModuleTo, FailureAtALaterParameterChangesNothing) {
  manual_seed(3);
  Net net;
  net.fc1->weight.set_grad(full({4, 3}, 0.25));
  net.fc1->bias.set_grad(full({4}, -1.0));
  net.fc2->weight.mutable_grad() = ones({2, 3});  // fc2.weight is (2, 4)
  const std::vector<Snapshot> before = snapshot(net);
  try {
    net.to(kFloat64);
    ADD_FAILURE() << "Module::to accepted a gradient of another shape";
  } catch (const ShapeError& e) {
    EXPECT_CONTAINS(e.what(), "'fc2.weight'");
    EXPECT_CONTAINS(e.what(), "[2, 3]");
    EXPECT_CONTAINS(e.what(), "[2, 4]");
  }
  expect_unchanged(before);
  // With the gradient cleared the same call converts everything, gradients included.
  net.fc2->weight.set_grad(Tensor());
  net.to(kFloat64);
  for (const auto& [name, t] : net.state_dict()) {
    EXPECT_EQ(t.dtype(), name == "steps" ? kInt64 : kFloat64) << name;
    if (t.grad().defined()) {
      EXPECT_EQ(t.grad().dtype(), kFloat64) << name;
    }
  }
  EXPECT_TRUE(test::all_close(net.fc1->bias.grad(), {-1, -1, -1, -1}, 0, 0));
}

// A tensor registered twice (tied weights) is converted once, and both names see the result;
// the optimizer's handles (parameters()) stay valid.
TEST(ModuleTo, TiedWeightsAreConvertedOnceInPlace) {
  struct Holder : nn::Module {
    explicit Holder(const Tensor& w) : Module("Holder") { register_parameter("w", w); }
  };
  const Tensor shared = full({2}, 1.5).requires_grad_();
  shared.set_grad(full({2}, 3.0));
  nn::Module pair("Pair");
  pair.register_module("a", std::make_shared<Holder>(shared));
  pair.register_module("b", std::make_shared<Holder>(shared));
  const std::vector<Tensor> params = pair.parameters();
  const std::uint32_t version = shared.version();
  pair.to(kFloat16);
  ASSERT_EQ(params.size(), 1u);
  EXPECT_TRUE(params[0].is_same(shared));
  EXPECT_EQ(shared.dtype(), kFloat16);
  EXPECT_EQ(shared.grad().dtype(), kFloat16);
  EXPECT_EQ(shared.version(), version + 1);  // one set_data
  EXPECT_TRUE(test::all_close(shared, {1.5, 1.5}, 0, 0));
  EXPECT_TRUE(test::all_close(shared.grad(), {3, 3}, 0, 0));
}

// A tensor that is already converted, but whose .grad (assigned through mutable_grad()) is not:
// the .grad is converted on its own, as PyTorch's Module._apply does, and the tensor's data is
// left where it is (same storage, same version). The device case, to(Device) with a tensor on
// the device and its .grad on the host, takes the same path (Note [Module::to changes all or
// nothing]).
TEST(ModuleTo, GradientOfAnAlreadyConvertedTensorIsConverted) {
  struct Holder : nn::Module {
    explicit Holder(const Tensor& w) : Module("Holder") { register_parameter("w", w); }
  };
  const Tensor w = full({3}, 2.0, kFloat64).requires_grad_();
  w.mutable_grad() = full({3}, 0.5);  // float32
  Holder holder(w);
  const void* data = w.data_ptr();
  const std::uint32_t version = w.version();
  holder.to(kFloat64);
  EXPECT_EQ(w.data_ptr(), data);
  EXPECT_EQ(w.version(), version);
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat64);
  EXPECT_TRUE(test::all_close(w.grad(), {0.5, 0.5, 0.5}, 0, 0));
}

}  // namespace
}  // namespace leangrad
