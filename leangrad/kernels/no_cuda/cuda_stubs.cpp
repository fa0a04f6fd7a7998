// The CUDA side of the backend contract (kernels/backend.h) and of the CUDA-only copy
// (kernels/cuda/copy.h) in a build without CUDA (LEANGRAD_WITH_CUDA=OFF): every launcher throws
// DeviceError naming the op. They are unreachable in practice (no CUDA tensor can be allocated
// in such a build, so no entry's switch reaches its CUDA case); they exist so the library links.
#include <leangrad/core/error.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cuda/copy.h>

namespace leangrad::kernels::cuda {

using detail::throw_cuda_not_built;
using layers_math::Pool2dShape;

void binary(BinaryOp op, DType, const ElementwiseGeometry&, void*, const void*, const void*) {
  throw_cuda_not_built(op_name(op));
}
void binary_scalar(BinaryOp op, DType, const ElementwiseGeometry&, void*, const void*, double,
                   bool) {
  throw_cuda_not_built(op_name(op));
}
void unary(UnaryOp op, DType, const ElementwiseGeometry&, void*, const void*) {
  throw_cuda_not_built(op_name(op));
}
void activation(ActivationOp op, DType, const ElementwiseGeometry&, void*, const void*, double,
                double) {
  throw_cuda_not_built(op_name(op));
}
void activation_backward(ActivationOp op, DType, const ElementwiseGeometry&, void*, const void*,
                         const void*, double, double) {
  throw_cuda_not_built(op_name(op));
}
void compare(CompareOp op, DType, const ElementwiseGeometry&, bool*, const void*, const void*) {
  throw_cuda_not_built(op_name(op));
}
void compare_scalar(CompareOp op, DType, const ElementwiseGeometry&, bool*, const void*, double) {
  throw_cuda_not_built(op_name(op));
}
void where(DType, const ElementwiseGeometry&, void*, const bool*, const void*, const void*) {
  throw_cuda_not_built("where");
}
void cast(DType, DType, const ElementwiseGeometry&, void*, const void*) {
  throw_cuda_not_built("cast");
}
void fill(DType, const ElementwiseGeometry&, void*, double) {
  throw_cuda_not_built("fill");
}

void uniform(DType, void*, std::int64_t, std::uint64_t, std::uint64_t, double, double) {
  throw_cuda_not_built("uniform_");
}
void normal(DType, void*, std::int64_t, std::uint64_t, std::uint64_t, double, double) {
  throw_cuda_not_built("normal_");
}

void reduce(ReduceOp op, DType, DType, void*, const void*, std::int64_t, std::int64_t,
            std::int64_t) {
  throw_cuda_not_built(op_name(op));
}
void argmax(DType, std::int64_t*, const void*, std::int64_t, std::int64_t) {
  throw_cuda_not_built("argmax");
}

void matmul(DType, const MatmulGeometry&, void*) {
  throw_cuda_not_built("matmul");
}

void orthogonal_polynomial(OrthogonalPolynomial, bool, DType, std::int64_t, void*, const void*,
                           const void*) {
  throw_cuda_not_built("orthogonal_polynomial");
}
void tanhexp_forward(DType, std::int64_t, void*, const void*) {
  throw_cuda_not_built("tanhexp");
}
void tanhexp_backward(DType, std::int64_t, void*, const void*, const void*) {
  throw_cuda_not_built("tanhexp_backward");
}

void group_norm_forward(DType, const GroupNormSizes&, void*, void*, void*, const void*, const void*,
                        const void*, double) {
  throw_cuda_not_built("group_norm");
}
void group_norm_backward(DType, const GroupNormSizes&, void*, void*, void*, const void*,
                         const void*, const void*, const void*, const void*) {
  throw_cuda_not_built("group_norm_backward");
}

void layer_norm_forward(DType, std::int64_t, std::int64_t, void*, void*, void*, const void*,
                        const void*, const void*, double) {
  throw_cuda_not_built("layer_norm");
}
void layer_norm_backward(DType, std::int64_t, std::int64_t, void*, void*, void*, const void*,
                         const void*, const void*, const void*, const void*) {
  throw_cuda_not_built("layer_norm_backward");
}

void batch_norm_statistics(DType, const BatchNormSizes&, void*, void*, const void*, double) {
  throw_cuda_not_built("batch_norm");
}
void batch_norm_forward(DType, const BatchNormSizes&, void*, const void*, const void*, const void*,
                        const void*, const void*) {
  throw_cuda_not_built("batch_norm");
}
void batch_norm_backward(DType, const BatchNormSizes&, bool, void*, void*, void*, const void*,
                         const void*, const void*, const void*, const void*) {
  throw_cuda_not_built("batch_norm_backward");
}

void conv2d_forward(DType, const Conv2dGeometry&, void*, const void*, const void*, const void*) {
  throw_cuda_not_built("conv2d");
}
void conv2d_input_grad(DType, const Conv2dGeometry&, void*, const void*, const void*) {
  throw_cuda_not_built("conv2d_input_grad");
}
void conv2d_weight_grad(DType, const Conv2dGeometry&, void*, const void*, const void*) {
  throw_cuda_not_built("conv2d_weight_grad");
}

void max_pool2d(DType, void*, std::int64_t*, const void*, const Pool2dShape&) {
  throw_cuda_not_built("max_pool2d");
}
void max_pool2d_backward(DType, void*, const void*, const std::int64_t*, const Pool2dShape&) {
  throw_cuda_not_built("max_pool2d_backward");
}
void adaptive_max_pool2d(DType, void*, std::int64_t*, const void*, const Pool2dShape&) {
  throw_cuda_not_built("adaptive_max_pool2d");
}
void adaptive_max_pool2d_backward(DType, void*, const void*, const std::int64_t*,
                                  const Pool2dShape&) {
  throw_cuda_not_built("adaptive_max_pool2d_backward");
}
void avg_pool2d(DType, void*, const void*, const Pool2dShape&) {
  throw_cuda_not_built("avg_pool2d");
}
void avg_pool2d_backward(DType, void*, const void*, const Pool2dShape&) {
  throw_cuda_not_built("avg_pool2d_backward");
}
void dropout(DType, void*, bool*, const void*, std::int64_t, double, double, std::uint64_t,
             std::uint64_t) {
  throw_cuda_not_built("dropout");
}
void dropout_backward(DType, void*, const void*, const bool*, std::int64_t, double) {
  throw_cuda_not_built("dropout_backward");
}
void softmax(DType, void*, const void*, std::int64_t, std::int64_t, std::int64_t, bool) {
  throw_cuda_not_built("softmax");
}
void softmax_backward(DType, void*, const void*, const void*, std::int64_t, std::int64_t,
                      std::int64_t, bool) {
  throw_cuda_not_built("softmax_backward");
}
void cross_entropy(DType, void*, void*, void*, const void*, const std::int64_t*, const void*,
                   std::int64_t, std::int64_t, std::int64_t) {
  throw_cuda_not_built("cross_entropy");
}
void cross_entropy_backward(DType, void*, const void*, const void*, const void*,
                            const std::int64_t*, const void*, std::int64_t, std::int64_t,
                            std::int64_t) {
  throw_cuda_not_built("cross_entropy_backward");
}
void nll_loss(DType, void*, void*, const void*, const std::int64_t*, const void*, std::int64_t,
              std::int64_t, std::int64_t) {
  throw_cuda_not_built("nll_loss");
}
void nll_loss_backward(DType, void*, const void*, const std::int64_t*, const void*, std::int64_t,
                       std::int64_t, std::int64_t) {
  throw_cuda_not_built("nll_loss_backward");
}
void upsample2d_forward(DType, const layers_math::Resize2dShape&, void*, const void*) {
  throw_cuda_not_built("interpolate");
}
void upsample2d_backward(DType, const layers_math::Resize2dShape&, void*, const void*) {
  throw_cuda_not_built("interpolate_backward");
}
void index_select(DType, void*, const void*, const std::int64_t*, std::int64_t, std::int64_t,
                  std::int64_t, std::int64_t) {
  throw_cuda_not_built("index_select");
}
void index_select_backward(DType, void*, const void*, const std::int64_t*, std::int64_t,
                           std::int64_t, std::int64_t, std::int64_t, std::int64_t) {
  throw_cuda_not_built("index_select_backward");
}
void gather(DType, void*, const void*, const std::int64_t*, const GatherGeometry&) {
  throw_cuda_not_built("gather");
}
void scatter(ScatterOp op, DType, void*, const void*, const std::int64_t*, const GatherGeometry&) {
  throw_cuda_not_built(op_name(op));
}

void scan(ScanOp op, DType, void*, const void*, std::int64_t, std::int64_t, std::int64_t, bool) {
  throw_cuda_not_built(op_name(op));
}
void scan_extremum(DType, void*, std::int64_t*, const void*, std::int64_t, std::int64_t,
                   std::int64_t, bool is_max) {
  throw_cuda_not_built(is_max ? "cummax" : "cummin");
}

void argsort(DType, std::int64_t*, const void*, std::int64_t, std::int64_t, std::int64_t, bool) {
  throw_cuda_not_built("argsort");
}
void select_rank(DType, std::int64_t*, const void*, const std::int64_t*, std::int64_t,
                 std::int64_t) {
  throw_cuda_not_built("select_rank");
}
void argsort_at(DType, std::int64_t*, const void*, const std::int64_t*, std::int64_t, std::int64_t,
                std::int64_t) {
  throw_cuda_not_built("argsort_at");
}
void searchsorted(DType, std::int64_t*, const void*, const void*, const std::int64_t*, std::int64_t,
                  std::int64_t, std::int64_t, bool) {
  throw_cuda_not_built("searchsorted");
}

template <typename T>
void sgd_step(const SgdUpdateOf<T>&, const std::vector<OptimTensor<SgdUpdateOf<T>>>&, const int*) {
  throw_cuda_not_built("sgd_step");
}
template <typename T>
void adam_step(const AdamUpdateOf<T>&, const std::vector<OptimTensor<AdamUpdateOf<T>>>&, const int*,
               int*) {
  throw_cuda_not_built("adam_step");
}
template <typename T>
void radam_step(const RAdamUpdateOf<T>&, const std::vector<OptimTensor<RAdamUpdateOf<T>>>&,
                const int*) {
  throw_cuda_not_built("radam_step");
}
void adam8bit_step(const AdamUpdate&, const std::vector<Adam8bitTensor>&, const int*, int*) {
  throw_cuda_not_built("adam8bit_step");
}
template <typename T>
void grad_norm(const std::vector<GradSpanOf<T>>&, opmath_t<T>, opmath_t<T>*) {
  throw_cuda_not_built("clip_grad_norm_");
}
template <typename T>
void clip_grads(const std::vector<GradSpanOf<T>>&, opmath_t<T>, const opmath_t<T>*) {
  throw_cuda_not_built("clip_grad_norm_");
}
#define LG_INSTANTIATE_OPTIM_STUBS(T)                                                             \
  template void sgd_step<T>(const SgdUpdateOf<T>&,                                                \
                            const std::vector<OptimTensor<SgdUpdateOf<T>>>&, const int*);         \
  template void adam_step<T>(const AdamUpdateOf<T>&,                                              \
                             const std::vector<OptimTensor<AdamUpdateOf<T>>>&, const int*, int*); \
  template void radam_step<T>(const RAdamUpdateOf<T>&,                                            \
                              const std::vector<OptimTensor<RAdamUpdateOf<T>>>&, const int*);     \
  template void grad_norm<T>(const std::vector<GradSpanOf<T>>&, opmath_t<T>, opmath_t<T>*);       \
  template void clip_grads<T>(const std::vector<GradSpanOf<T>>&, opmath_t<T>, const opmath_t<T>*);
LG_INSTANTIATE_OPTIM_STUBS(float)
LG_INSTANTIATE_OPTIM_STUBS(double)
LG_INSTANTIATE_OPTIM_STUBS(Half)
LG_INSTANTIATE_OPTIM_STUBS(BFloat16)
#undef LG_INSTANTIATE_OPTIM_STUBS
void unscale_and_check_finite(const std::vector<GradSpan>&, const float*, int*) {
  throw_cuda_not_built("unscale_and_check_finite");
}
void update_scale(float*, int*, const int*, double, double, int) {
  throw_cuda_not_built("update_scale");
}

void copy_bytes(void*, Device dst_device, bool, const void*, Device src_device, bool, std::size_t,
                bool) {
  throw_cuda_not_built(detail::str_cat("copy from ", src_device, " to ", dst_device).c_str());
}

}  // namespace leangrad::kernels::cuda
