// Misuse of autograd: backward twice without retain_graph, backward of a non-scalar without a
// gradient or with a wrong one, accumulation into a .grad that does not fit its leaf, in-place
// writes to tensors saved for backward (version counter) and to tensors that require grad, hooks
// that return the wrong gradient, unpack hooks that return another tensor than was saved, custom
// functions whose backward disagrees with their forward, NaN gradients under AnomalyMode. Tables
// of the misuse suite (tests/misuse/misuse_testing.h).
#include <any>
#include <functional>
#include <optional>
#include <vector>

#include <leangrad/autograd/checkpoint.h>
#include <leangrad/autograd/custom_function.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/kernels/creation.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

Tensor leaf(const Shape& shape = {2}) {
  return ones(shape).requires_grad_();
}

// A custom function whose backward returns two gradients for its one input.
struct TooManyGradients : autograd::Function<TooManyGradients> {
  static Tensor forward(autograd::Context* /*ctx*/, const Tensor& x) { return x * 2.0; }
  static std::vector<Tensor> backward(autograd::Context* /*ctx*/, std::vector<Tensor> grads) {
    return {grads[0], grads[0]};
  }
};

// A custom function whose backward returns a gradient of the wrong shape.
struct WrongGradientShape : autograd::Function<WrongGradientShape> {
  static Tensor forward(autograd::Context* /*ctx*/, const Tensor& x) { return x * 2.0; }
  static std::vector<Tensor> backward(autograd::Context* /*ctx*/, std::vector<Tensor> /*grads*/) {
    return {ones({3})};
  }
};

// A custom function that saves its input, which the caller then modifies in place.
struct SavesInput : autograd::Function<SavesInput> {
  static Tensor forward(autograd::Context* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * 2.0;
  }
  static std::vector<Tensor> backward(autograd::Context* ctx, std::vector<Tensor> grads) {
    return {grads[0] * ctx->saved()[0]};
  }
};

// Backward of sum(x * x) for a leaf x of shape (2,), with every tensor MulBackward saved going
// through a pack hook that keeps it and an unpack hook that returns `unpack(saved)`.
void unpack_through(const std::function<Tensor(const Tensor&)>& unpack) {
  const Tensor x = leaf();
  Tensor y;
  {
    const autograd::SavedTensorHooksGuard guard(
        [](const Tensor& t) { return std::any(t); },
        [unpack](const std::any& packed) { return unpack(std::any_cast<Tensor>(packed)); });
    y = (x * x).sum();
  }
  y.backward();
}

std::vector<MisuseCase> backward_cases() {
  MisuseTable t;
  t.add("backward_twice_without_retain_graph", Raises::Error,
        {"MulBackward", "second time", "retain_graph"}, [] {
          const Tensor x = leaf();
          const Tensor y = (x * x).sum();
          y.backward();
          y.backward();
        });
  t.add("backward_twice_through_custom_function", Raises::Error,
        {"SavesInput", "second time", "retain_graph"}, [] {
          const Tensor y = SavesInput::apply(leaf()).sum();
          y.backward();
          y.backward();
        });
  t.add("backward_of_non_scalar_without_gradient", Raises::ShapeError,
        {"backward", "one-element", "[2, 3]"}, [] {
          (leaf({2, 3}) * 2.0).backward();
        });
  t.add("backward_of_empty_without_gradient", Raises::ShapeError,
        {"backward", "one-element", "[0]"}, [] { (leaf({0}) * 2.0).backward(); });
  t.add("backward_gradient_shape", Raises::ShapeError, {"backward", "[3]", "[2]"},
        [] { (leaf() * 2.0).backward(ones({3})); });
  t.add("backward_of_tensor_without_grad", Raises::Error,
        {"backward", "does not require grad", "[1]"}, [] { ones({1}).backward(); });
  t.add("backward_of_output_under_no_grad", Raises::Error,
        {"backward", "does not require grad", "NoGradGuard"}, [] {
          const Tensor x = leaf({1});
          Tensor y;
          {
            NoGradGuard no_grad;
            y = x * 2.0;
          }
          y.backward();
        });
  t.add("backward_of_undefined", Raises::Error, {"backward", "undefined"},
        [] { Tensor().backward(); });
  t.add("backward_gradient_count", Raises::Error, {"backward", "2 gradients", "1 tensors"}, [] {
    const Tensor y = (leaf() * 2.0).sum();
    autograd::backward({y}, {ones({}), ones({})});
  });
  t.add("custom_backward_gradient_count", Raises::Error,
        {"TooManyGradients", "returned 2 gradients", "expected 1"},
        [] { TooManyGradients::apply(leaf()).sum().backward(); });
  t.add("custom_backward_gradient_shape", Raises::ShapeError, {"WrongGradientShape", "[3]", "[2]"},
        [] { WrongGradientShape::apply(leaf()).sum().backward(); });
  t.add("anomaly_mode_names_the_op", Raises::Error, {"AnomalyMode", "SqrtBackward", "'sqrt'"}, [] {
    const autograd::AnomalyMode anomaly;
    sqrt(zeros({2}).requires_grad_()).sum().backward();  // d sqrt(x)/dx at 0 is inf
  });
  t.add("checkpoint_without_function", Raises::Error, {"checkpoint", "function"},
        [] { autograd::checkpoint(nullptr, {leaf()}); });
  // A leaf's .grad has the leaf's shape, dtype and device. set_grad refuses anything else; what
  // the unchecked handle mutable_grad() put there is refused when backward accumulates into it
  // (a [3, 2] .grad took a [2] gradient by broadcasting, a float64 one stayed float64).
  t.add("accumulate_into_grad_of_another_shape", Raises::ShapeError,
        {"backward", "accumulating into .grad", "[3, 2]", "[2]"}, [] {
          const Tensor x = leaf();
          x.mutable_grad() = ones({3, 2});
          (x * 2.0).sum().backward();
        });
  t.add("accumulate_into_grad_of_another_dtype", Raises::DTypeError,
        {"backward", "accumulating into .grad", "float64", "float32"}, [] {
          const Tensor x = leaf();
          x.mutable_grad() = ones({2}, kFloat64);
          (x * 2.0).sum().backward();
        });
  t.add("accumulate_under_create_graph_into_grad_of_another_shape", Raises::ShapeError,
        {"backward", "accumulating into .grad", "[1, 2]", "[2]"}, [] {
          const Tensor x = leaf();
          x.mutable_grad() = ones({1, 2});
          (x * x).sum().backward(Tensor(), /*retain_graph=*/std::nullopt, /*create_graph=*/true);
        });
  // The leaf became float64 (set_data) between the forward and the backward: its float32
  // gradient was taken as .grad.
  t.add("leaf_dtype_changed_after_forward", Raises::DTypeError,
        {"backward", "accumulating a gradient", "float32", "float64", "set_data"}, [] {
          const Tensor x = leaf();
          const Tensor y = (x * 2.0).sum();
          x.set_data(zeros({2}, kFloat64));
          y.backward();
        });
  return t.cases();
}
LG_MISUSE_SUITE(Backward, backward_cases());

std::vector<MisuseCase> version_cases() {
  MisuseTable t;
  t.add("saved_tensor_modified_in_place", Raises::Error,
        {"MulBackward", "modified by an in-place operation", "its version is"}, [] {
          Tensor w = ones({2});
          const Tensor y = (leaf() * w).sum();
          w.add_(1.0);
          y.backward();
        });
  t.add("saved_tensor_modified_through_a_view", Raises::Error,
        {"MatmulBackward", "modified by an in-place operation"}, [] {
          const Tensor w = ones({2, 2});
          const Tensor y = matmul(leaf({2, 2}), w).sum();
          w.select(0, 1).fill_(3.0);
          y.backward();
        });
  t.add("saved_output_modified_in_place", Raises::Error,
        {"ExpBackward", "modified by an in-place operation"}, [] {
          const Tensor x = leaf();
          const Tensor y = x.exp();  // ExpBackward saves its output
          Tensor alias = y.detach();
          alias.mul_(2.0);
          y.sum().backward();
        });
  t.add("custom_function_input_modified_in_place", Raises::Error,
        {"SavesInput", "modified by an in-place operation"}, [] {
          Tensor x = leaf();
          const Tensor y = SavesInput::apply(x).sum();
          NoGradGuard no_grad;
          x.zero_();
          y.backward();
        });
  t.add("add_in_place_to_leaf_requiring_grad", Raises::Error, {"add_", "requires grad", "[2]"},
        [] { leaf().add_(1.0); });
  t.add("mul_in_place_to_leaf_requiring_grad", Raises::Error, {"mul_", "requires grad"},
        [] { leaf().mul_(ones({2})); });
  t.add("zero_leaf_requiring_grad", Raises::Error, {"zero_", "requires grad", "[3]"},
        [] { leaf({3}).zero_(); });
  t.add("fill_leaf_requiring_grad", Raises::Error, {"fill_", "requires grad"},
        [] { leaf().fill_(0.5); });
  t.add("copy_into_leaf_requiring_grad", Raises::Error, {"copy_", "requires grad"},
        [] { leaf().copy_(zeros({2})); });
  // Writes through views autograd cannot follow (Note [In-place writes through views]).
  t.add("in_place_on_a_view_of_a_leaf", Raises::Error, {"add_", "view", "[2]", "leaf"}, [] {
    leaf({2, 2}).select(0, 1).add_(1.0);
  });
  t.add("in_place_on_a_view_made_with_grad_mode_off", Raises::Error, {"add_", "grad mode was off"},
        [] {
          Tensor y = leaf() * 2.0;
          Tensor view;
          {
            NoGradGuard no_grad;
            view = y.view({1, 2});
          }
          view.add_(leaf({1, 2}));
        });
  t.add("exp_in_place_to_leaf_requiring_grad", Raises::Error, {"exp_", "leaf", "[2]"},
        [] { leaf().exp_(); });
  t.add("copy_into_a_view_of_a_base_that_is_not_contiguous", Raises::Error,
        {"copy_", "not contiguous", "[2, 3]"}, [] {
          Tensor base = zeros({3, 2}).t().detach();  // strides (1, 2)
          base.select(0, 0).copy_(leaf({3}));
        });
  t.add("clamp_in_place_to_leaf_requiring_grad", Raises::Error, {"clamp_", "leaf", "[2]"},
        [] { leaf().clamp_(0.0, 1.0); });
  t.add("masked_fill_in_place_to_leaf_requiring_grad", Raises::Error,
        {"masked_fill_", "leaf", "[2]"}, [] { leaf().masked_fill_(ones({2}, kBool), 0.0); });
  t.add("atan2_in_place_to_leaf_requiring_grad", Raises::Error, {"atan2_", "leaf", "[2]"},
        [] { leaf().atan2_(ones({2})); });
  t.add("acosh_on_a_view_whose_elements_overlap", Raises::Error, {"acosh_", "share memory"}, [] {
    (leaf({4}) * 2.0).as_strided({2, 2}, {1, 1}).acosh_();
  });
  // masked_fill_ saves its mask, atan2_ its other operand: a write to either before backward.
  t.add("masked_fill_mask_modified_in_place", Raises::Error,
        {"MaskedFillBackward", "modified by an in-place operation"}, [] {
          Tensor mask = ones({2}, kBool);
          Tensor y = leaf() * 2.0;
          y.masked_fill_(mask, 0.0);
          mask.fill_(0.0);
          y.sum().backward();
        });
  t.add("atan2_other_modified_in_place", Raises::Error,
        {"Atan2Backward", "modified by an in-place operation"}, [] {
          Tensor other = ones({2});
          Tensor y = leaf() * 2.0;
          y.atan2_(other);
          other.add_(1.0);
          y.sum().backward();
        });
  t.add("in_place_of_a_gradient_into_an_integer_tensor", Raises::Error, {"add_", "int64"},
        [] { zeros({2}, kInt64).add_(leaf()); });
  return t.cases();
}
LG_MISUSE_SUITE(VersionCounter, version_cases());

std::vector<MisuseCase> hook_cases() {
  MisuseTable t;
  t.add("requires_grad_on_integral", Raises::DTypeError, {"requires_grad_", "int64"},
        [] { ones({2}, kInt64).requires_grad_(); });
  t.add("requires_grad_false_on_non_leaf", Raises::Error,
        {"requires_grad_(false)", "MulBackward", "detach"},
        [] { (leaf() * 2.0).requires_grad_(false); });
  t.add("hook_on_tensor_without_grad", Raises::Error, {"register_hook", "does not require grad"},
        [] {
          Tensor x = ones({2});
          x.register_hook([](const Tensor&) {});
        });
  t.add("post_accumulate_hook_on_non_leaf", Raises::Error,
        {"register_post_accumulate_grad_hook", "leaf"}, [] {
          Tensor y = leaf() * 2.0;
          y.register_post_accumulate_grad_hook([](const Tensor&) {});
        });
  t.add("leaf_hook_returns_wrong_shape", Raises::ShapeError, {"hook", "[3]", "[2]"}, [] {
    Tensor x = leaf();
    x.register_hook([](const Tensor&) { return ones({3}); });
    (x * 2.0).sum().backward();
  });
  // Issue 14 item 7: this was reported as an internal error of the node below the hook.
  t.add("non_leaf_hook_returns_wrong_shape", Raises::ShapeError,
        {"hook", "[3]", "[2]", "MulBackward"}, [] {
          Tensor y = leaf() * 2.0;
          y.register_hook([](const Tensor&) { return ones({3}); });
          y.sum().backward();
        });
  t.add("leaf_hook_returns_wrong_dtype", Raises::DTypeError, {"hook", "float64", "float32"}, [] {
    Tensor x = leaf();
    x.register_hook([](const Tensor& g) { return g.to(kFloat64); });
    (x * 2.0).sum().backward();
  });
  t.add("non_leaf_hook_returns_wrong_dtype", Raises::DTypeError,
        {"hook", "float64", "float32", "MulBackward"}, [] {
          Tensor y = leaf() * 2.0;
          y.register_hook([](const Tensor& g) { return g.to(kFloat64); });
          y.sum().backward();
        });
  t.add("saved_tensor_hooks_missing_unpack", Raises::Error, {"SavedTensorHooksGuard", "unpack"},
        [] {
          const autograd::SavedTensorHooksGuard guard([](const Tensor& t) { return std::any(t); },
                                                      nullptr);
        });
  t.add("unpack_hook_returns_undefined", Raises::Error, {"unpack hook", "undefined", "MulBackward"},
        [] {
          const Tensor x = leaf();
          Tensor y;
          {
            const autograd::SavedTensorHooksGuard guard([](const Tensor& t) { return std::any(t); },
                                                        [](const std::any&) { return Tensor(); });
            y = (x * x).sum();
          }
          y.backward();
        });
  // An unpack hook must give back what was saved: the same shape, dtype and device (strides may
  // differ). A [1] tensor for a saved [2] broadcast into a wrong gradient, a [3] one failed inside
  // the backward formula, a float16 one rounded the gradient.
  t.add("unpack_hook_returns_another_shape", Raises::ShapeError,
        {"unpack hook", "MulBackward", "[1]", "[2]"},
        [] { unpack_through([](const Tensor&) { return ones({1}); }); });
  t.add("unpack_hook_returns_another_shape_that_cannot_broadcast", Raises::ShapeError,
        {"unpack hook", "MulBackward", "[3]", "[2]"},
        [] { unpack_through([](const Tensor&) { return ones({3}); }); });
  t.add("unpack_hook_returns_another_dtype", Raises::DTypeError,
        {"unpack hook", "MulBackward", "float16", "float32"},
        [] { unpack_through([](const Tensor& t) { return t.to(kFloat16); }); });
  t.add("unpack_hook_returns_another_shape_to_checkpoint", Raises::ShapeError,
        {"unpack hook", "CheckpointBackward", "[2, 1]", "[2]"}, [] {
          const Tensor x = leaf();
          Tensor y;
          {
            const autograd::SavedTensorHooksGuard guard(
                [](const Tensor& t) { return std::any(t); },
                [](const std::any& packed) {
                  return std::any_cast<Tensor>(packed).view({2, 1});
                });
            y = autograd::checkpoint(
                [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; },
                {x})[0];
          }
          y.sum().backward();
        });
  t.add("queue_callback_outside_backward", Raises::Error,
        {"queue_callback", "no backward is running"}, [] { autograd::queue_callback([] {}); });
  return t.cases();
}
LG_MISUSE_SUITE(Hooks, hook_cases());

}  // namespace
}  // namespace leangrad::test
