// What the autograd-level functions share (activations.cpp, losses.cpp, nn_functions.cpp,
// tensor_methods.cpp): the input checks a composed function makes before it reaches a kernel, so
// the Error names the function the user called rather than the first op inside it, the losses'
// reduction, the undoing of broadcasting in a gradient, and the in-place machinery of Note
// [In-place ops in the graph]. Internal: no public header includes it.
#pragma once

#include <functional>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/tensor.h>

namespace leangrad::autograd {

// A defined tensor of a floating dtype; the Error names `op`, the dtype and the shape.
inline void check_floating_input(const char* op, const Tensor& x) {
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(x.dtype()), op,
                 ": expected a floating input (float32, float64, float16, bfloat16), got ",
                 x.dtype(), " (shape ", x.shape(), ")");
}

// An elementwise loss's input and target: defined, of one shape, floating (PyTorch's losses are
// not defined on integers either) and on one device.
inline void check_elementwise_loss(const char* op, const Tensor& input, const Tensor& target) {
  LG_CHECK(input.defined() && target.defined(), op, ": expected defined input and target");
  LG_CHECK_SHAPE(input.shape() == target.shape(), op,
                 ": expected input and target of one shape, got ", input.shape(), " and ",
                 target.shape());
  LG_CHECK_DTYPE(is_floating(input.dtype()) && is_floating(target.dtype()), op,
                 ": expected floating input and target, got ", input.dtype(), " and ",
                 target.dtype());
  LG_CHECK_DEVICE(input.device() == target.device(), op,
                  ": expected input and target on one device, got ", input.device(), " and ",
                  target.device());
}

// Per-element losses reduced: None keeps them, Sum adds them, Mean averages them.
inline Tensor reduce_losses(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return losses;
    case Reduction::Sum:
      return sum(losses);
    case Reduction::Mean:
      return mean(losses);
  }
  return losses;
}

// Sums `g` over the dims that broadcasting added or expanded, so it has `shape` again (the
// gradient of an operand that was broadcast; functions.cpp).
Tensor sum_to(const Tensor& g, const Shape& shape);

// Whether the in-place op `op` on self (with `other`, if any) is recorded by autograd; throws,
// naming op, where it is refused (Note [In-place ops in the graph] in tensor_methods.cpp).
bool records_inplace(const char* op, const Tensor& self, const Tensor& other = Tensor());

// The in-place form of an elementwise function whose gradient is written from its output: the
// value `compute(self)` (computed without recording) is written into self and, when autograd
// records the op, a node saving self after the write becomes self's history, with `backward`
// (saved[0] is the output). relu_, sigmoid_, tanh_ and the activations of activations.h.
Tensor& unary_in_place(const char* op, Tensor& self,
                       const std::function<Tensor(const Tensor&)>& compute,
                       FunctionNode::Backward backward);

}  // namespace leangrad::autograd
