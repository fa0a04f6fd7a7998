// Tensor-level entry of the matrix product (kernels/ops.h): ops::matmul. Checks dtypes, devices
// and shapes, views both operands as (batch, rows, cols) with BLAS-compatible strides (copying an
// operand only when it has none, see MatmulGeometry), allocates the output and calls the CPU
// (kernels/cpu/gemm.h) or cuBLAS launcher (matmul of kernels/backend.h). Also the CPU GEMM backend
// setting (set_cpu_gemm_backend), which kernels/cpu/gemm.cpp reads for every float32 product.
//
// Shapes, as torch.matmul for up to 3 dims:
//   (M, K) @ (K, N) -> (M, N)                 (B, M, K) @ (B, K, N) -> (B, M, N)
//   (B, M, K) @ (K, N) -> (B, M, N)           (M, K) @ (B, K, N) -> (B, M, N)
//   a batch of 1 broadcasts against a batch of B
//   1-D operands: (K) @ (K) -> () (dot product); (K) @ (.., K, N) -> (.., N) (a row vector whose
//   dim is removed again); (.., M, K) @ (K) -> (.., M) (a column vector, likewise)
// More than 3 dims is a ShapeError (flatten the batch dims first). Both operands must have the
// same floating dtype and device. K = 0 gives zeros; an empty output is returned as is.
// float16/bfloat16 on the CPU are multiplied in float32 and rounded back once.
#include <algorithm>
#include <atomic>
#include <optional>

#include <Eigen/Core>

#include <leangrad/core/cuda.h>
#include <leangrad/core/env_choice.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/gemm.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/matmul_geometry.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::ops {

namespace {

// An operand seen as (batch, rows, cols) with its strides; 1-D and 2-D operands have batch 1.
struct Matrix3d {
  std::int64_t batch = 1, rows = 1, cols = 1;
  std::int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
};

// A 1-D left operand is a row vector (1, K), a 1-D right operand a column vector (K, 1).
Matrix3d as_matrix3d(const Tensor& t, bool left) {
  const Shape& s = t.shape();
  const Strides& st = t.strides();
  Matrix3d m;
  switch (t.dim()) {
    case 1:
      if (left) {
        m.cols = s[0];
        m.col_stride = st[0];
      } else {
        m.rows = s[0];
        m.row_stride = st[0];
      }
      break;
    case 2:
      m.rows = s[0], m.cols = s[1];
      m.row_stride = st[0], m.col_stride = st[1];
      break;
    default:
      m.batch = s[0], m.rows = s[1], m.cols = s[2];
      m.batch_stride = st[0], m.row_stride = st[1], m.col_stride = st[2];
      break;
  }
  return m;
}

// The operand with row-major or column-major strides (MatmulGeometry), or nothing if its layout
// has neither (overlapping or doubly strided rows): then it must be copied. The stride of a
// size-1 dim is meaningless and is chosen to fit.
std::optional<MatmulOperand> blas_operand(const Tensor& t, const Matrix3d& m) {
  MatmulOperand op;
  op.data = t.data_ptr();
  op.batch_stride = m.batch == 1 ? 0 : m.batch_stride;
  std::int64_t rs = m.row_stride;
  std::int64_t cs = m.col_stride;
  if (cs == 1 || m.cols == 1) {
    cs = 1;
    if (m.rows == 1) rs = std::max<std::int64_t>(m.cols, 1);
    if (rs >= std::max<std::int64_t>(m.cols, 1)) {
      op.row_stride = rs, op.col_stride = 1;
      return op;
    }
  }
  rs = m.row_stride;
  cs = m.col_stride;
  if (rs == 1 || m.rows == 1) {
    rs = 1;
    if (m.cols == 1) cs = std::max<std::int64_t>(m.rows, 1);
    if (cs >= std::max<std::int64_t>(m.rows, 1)) {
      op.row_stride = 1, op.col_stride = cs;
      return op;
    }
  }
  return std::nullopt;
}

// blas_operand, after a contiguous copy if needed (`holder` keeps the copy alive).
MatmulOperand operand_for(const Tensor& t, bool left, Tensor& holder) {
  holder = t;
  if (auto op = blas_operand(t, as_matrix3d(t, left))) return *op;
  holder = cast(t, t.dtype());  // contiguous copy: always row-major
  return *blas_operand(holder, as_matrix3d(holder, left));
}

// LEANGRAD_CPU_GEMM, read once (Note [Settings from the environment] in core/env_choice.h):
// the build's default when unset or unknown; onednn is a choice only in a build with oneDNN.
CpuGemmBackend gemm_backend_from_environment() {
  if (!kernels::cpu::onednn::built()) {
    detail::env_choice("LEANGRAD_CPU_GEMM", {"eigen"}, 0, "built without oneDNN");
    return CpuGemmBackend::Eigen;
  }
  return detail::env_choice("LEANGRAD_CPU_GEMM", {"onednn", "eigen"}, 0) == 0
             ? CpuGemmBackend::OneDnn
             : CpuGemmBackend::Eigen;
}

std::atomic<CpuGemmBackend>& gemm_backend_setting() {
  static std::atomic<CpuGemmBackend> backend{gemm_backend_from_environment()};
  return backend;
}

}  // namespace

void set_cpu_gemm_backend(CpuGemmBackend backend) {
  if (backend == CpuGemmBackend::OneDnn && !kernels::cpu::onednn::built()) {
    LG_THROW(Error,
             "set_cpu_gemm_backend(OneDnn): leangrad was built without oneDNN "
             "(LEANGRAD_WITH_ONEDNN=OFF); install libdnnl-dev (tools/bootstrap.sh does) "
             "and configure again");
  }
  gemm_backend_setting().store(backend);
}

CpuGemmBackend cpu_gemm_backend() {
  return gemm_backend_setting().load(std::memory_order_relaxed);
}

std::string cpu_gemm_library() {
  if (cpu_gemm_backend() == CpuGemmBackend::OneDnn)
    return "oneDNN " + kernels::cpu::onednn::version();
  return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
         std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  LG_CHECK(a.defined() && b.defined(), "matmul: expected defined tensors");
  LG_CHECK_SHAPE(a.dim() >= 1 && a.dim() <= 3 && b.dim() >= 1 && b.dim() <= 3,
                 "matmul: expected 1-D, 2-D or 3-D operands, got shapes ", a.shape(), " and ",
                 b.shape());
  LG_CHECK_DTYPE(a.dtype() == b.dtype(), "matmul: expected operands of the same dtype, got ",
                 a.dtype(), " and ", b.dtype(), " (convert one with .to(dtype))");
  LG_CHECK_DTYPE(is_floating(a.dtype()),
                 "matmul: expected a floating dtype (float32, float64, float16, bfloat16), got ",
                 a.dtype());
  LG_CHECK_DEVICE(a.device() == b.device(),
                  "matmul: expected both operands on the same device, got ", a.device(), " and ",
                  b.device());

  const Matrix3d ma = as_matrix3d(a, /*left=*/true);
  const Matrix3d mb = as_matrix3d(b, /*left=*/false);
  LG_CHECK_SHAPE(ma.cols == mb.rows, "matmul: shapes ", a.shape(), " and ", b.shape(),
                 " cannot be multiplied (", ma.cols, " != ", mb.rows, ")");
  LG_CHECK_SHAPE(ma.batch == mb.batch || ma.batch == 1 || mb.batch == 1,
                 "matmul: batch sizes of shapes ", a.shape(), " and ", b.shape(), " do not match (",
                 ma.batch, " != ", mb.batch, ")");
  const std::int64_t batch = ma.batch == 1 ? mb.batch : ma.batch;  // 1 broadcasts, even to 0

  Shape out_shape;
  if (a.dim() == 3 || b.dim() == 3) out_shape.push_back(batch);
  if (a.dim() >= 2) out_shape.push_back(ma.rows);
  if (b.dim() >= 2) out_shape.push_back(mb.cols);

  if (shape_numel(out_shape, "matmul") == 0) return empty(out_shape, a.options());
  if (ma.cols == 0) return zeros(out_shape, a.options());  // K = 0: sums of nothing

  if (a.device().is_cpu() && is_reduced_precision(a.dtype())) {
    return cast(matmul(cast(a, DType::Float32), cast(b, DType::Float32)), a.dtype());
  }

  Tensor a_holder, b_holder;
  MatmulGeometry g;
  g.batch = batch;
  g.m = ma.rows;
  g.n = mb.cols;
  g.k = ma.cols;
  g.a = operand_for(a, /*left=*/true, a_holder);
  g.b = operand_for(b, /*left=*/false, b_holder);
  Tensor out = empty(out_shape, a.options());
  const cuda::DeviceGuard guard(a.device());
  switch (a.device().type) {
    case DeviceType::CPU:
      kernels::cpu::matmul(a.dtype(), g, out.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::matmul(a.dtype(), g, out.data_ptr());
      break;
  }
  return out;
}

}  // namespace leangrad::ops
