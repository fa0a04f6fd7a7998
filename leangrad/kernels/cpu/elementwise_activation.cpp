// CPU launchers of the activations and their gradients (kernels/backend.h), elementwise over one
// tensor and two parameters: the one-rounding ones (each a float computation rounded once to the
// dtype) through their float math in lanes, the others through their element functors. The math
// is kernels/elementwise_math.h's, shared with CUDA. The other elementwise families:
// kernels/cpu/elementwise.cpp.
#include <leangrad/kernels/backend.h>

#include <type_traits>

#include <leangrad/kernels/cpu/elementwise_loops.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>

namespace leangrad::kernels::cpu {

void activation(ActivationOp op, DType dtype, const ElementwiseGeometry& g, void* out,
                const void* a, double p0, double p1) {
  if (is_one_rounding_activation(op)) {
    with_one_rounding_activation(op, [&]<ActivationOp kOp>() {
      dispatch_floating(dtype, op_name(op), [&]<typename T>() {
        const OneRoundingActivationElement<kOp, T> element{make_activation_params<T>(op, p0, p1)};
        elementwise_loop_as<T>(
            g, element, [element](float x) LG_LAMBDA_ALWAYS_INLINE { return element.math(x); },
            static_cast<T*>(out), static_cast<const T*>(a));
      });
    });
    return;
  }
  const auto run = [&]<typename T>() {
    with_activation_element<T>(op, p0, p1, [&](const auto& element) {
      if constexpr (std::is_same_v<std::decay_t<decltype(element)>, LeakyReluElement<Half>>) {
        // x where x > 0 is Half(float(x)): the same bits as the element's select of x.
        const float slope = element.negative_slope;
        half_loop(
            g, [slope](float m) { return m > 0.0f ? m : m * slope; }, static_cast<Half*>(out),
            static_cast<const Half*>(a));
      } else {
        elementwise_loop(g, element, static_cast<T*>(out), static_cast<const T*>(a));
      }
    });
  };
  if (op == ActivationOp::Clamp) {
    dispatch_numeric(dtype, op_name(op), run);  // clamp_ takes integers too
  } else {
    dispatch_floating(dtype, op_name(op), run);
  }
}

void activation_backward(ActivationOp op, DType dtype, const ElementwiseGeometry& g,
                         void* grad_input, const void* grad_output, const void* x, double p0,
                         double p1) {
  with_activation_gradient(op, [&]<ActivationOp kOp>() {
    dispatch_floating(dtype, op_name(op), [&]<typename T>() {
      const ActivationBackwardElement<kOp, T> element{make_activation_params<T>(op, p0, p1)};
      elementwise_loop_as<T>(
          g, element,
          [element](float dy, float v) LG_LAMBDA_ALWAYS_INLINE { return element.math(dy, v); },
          static_cast<T*>(grad_input), static_cast<const T*>(grad_output),
          static_cast<const T*>(x));
    });
  });
}

}  // namespace leangrad::kernels::cpu
