// The CUDA activations of kernels/backend.h: activation and activation_backward. Their element
// functors are kernels/elementwise_math.h's, __host__ __device__, launched as they are by
// kernels/cuda/elementwise_loops.cuh.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/cuda/elementwise_loops.cuh>

namespace leangrad::kernels::cuda {

// The functors of kernels/elementwise_math.h are __host__ __device__: launched as they are.
void activation(ActivationOp op, DType dtype, const ElementwiseGeometry& g, void* out,
                const void* a, double p0, double p1) {
  if (is_one_rounding_activation(op)) {
    with_one_rounding_activation(op, [&]<ActivationOp kOp>() {
      dispatch_floating(dtype, op_name(op), [&]<typename T>() {
        launch_elementwise(
            g, OneRoundingActivationElement<kOp, T>{make_activation_params<T>(op, p0, p1)},
            static_cast<T*>(out), static_cast<const T*>(a));
      });
    });
    return;
  }
  const auto launch = [&]<typename T>() {
    with_activation_element<T>(op, p0, p1, [&](const auto& element) {
      launch_elementwise(g, element, static_cast<T*>(out), static_cast<const T*>(a));
    });
  };
  if (op == ActivationOp::Clamp) {
    dispatch_numeric(dtype, op_name(op), launch);  // clamp_ takes integers too
  } else {
    dispatch_floating(dtype, op_name(op), launch);
  }
}

void activation_backward(ActivationOp op, DType dtype, const ElementwiseGeometry& g,
                         void* grad_input, const void* grad_output, const void* x, double p0,
                         double p1) {
  with_activation_gradient(op, [&]<ActivationOp kOp>() {
    dispatch_floating(dtype, op_name(op), [&]<typename T>() {
      launch_elementwise(g,
                         ActivationBackwardElement<kOp, T>{make_activation_params<T>(op, p0, p1)},
                         static_cast<T*>(grad_input), static_cast<const T*>(grad_output),
                         static_cast<const T*>(x));
    });
  });
}

}  // namespace leangrad::kernels::cuda
