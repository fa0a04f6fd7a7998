// Tensor-level entries of the elementwise ops (kernels/ops.h): binary, binary_, unary, unary_,
// activation_, compare, where, and the op names. Each checks devices, dtypes and shapes, converts
// the inputs to the compute dtype, allocates the output (the in-place ones write self) and
// switches on the device to a raw-pointer launcher in kernels/backend.h.
//
// Note [Elementwise dtype rules] (PyTorch's, unless said otherwise)
//   - tensor op tensor: promote_types(a, b), except that a 0-d tensor beside one with dims sets
//     the dtype only when its category (bool < integral < floating) is higher, as a scalar does
//     (PyTorch's result_type: float16 x * 0-d float32 stays float16, int64 x + 0-d float64 gives
//     float64); Div of two integral operands gives float32. where() promotes its two values so.
//   - tensor op scalar: a floating tensor keeps its dtype; an integral tensor keeps it with an
//     integral-valued scalar and gives float32 otherwise; a bool tensor gives int64 with an
//     integral-valued scalar. Integral scalars are converted to the tensor's dtype like
//     cast_value (wrapping; Note [Defined integer semantics] in kernels/elementwise_math.h).
//   - two bool operands: add and maximum are logical or, mul and minimum logical and, with a
//     bool result (computed in uint8 and cast back); sub and pow of bools are a DTypeError, and
//     so are neg, abs and relu on bool. div of bools is true division (float32), and atan2 of
//     integral or bool operands is computed in float32.
//   - an integral tensor to a negative integral scalar power is a DTypeError (PyTorch's "Integers
//     to negative integer powers are not allowed"); a tensor of negative exponents is not checked
//     (PyTorch's powi: 1 for 1, +-1 for -1, 0 otherwise), as PyTorch. exp/log/sqrt/tanh/sigmoid of
//     integral or bool input are computed in float32.
//   - compare with a scalar: integral tensors compare with an integral scalar in their own dtype
//     when it fits (int64 otherwise), and with a non-integral scalar in float64, which is exact
//     (PyTorch uses float32 there and can misorder large int32 values).
//   - in place: the result dtype of `self op other` must be castable to self's dtype (no
//     floating -> integral, nothing -> bool); the op is computed in the promoted dtype and the
//     result cast into self, as PyTorch. unary_ never promotes: a floating-only op (exp_, log_,
//     sigmoid_, ...) of an integral or bool self is refused (its result type float32 cannot be
//     cast to self's), as PyTorch.
#include <cmath>
#include <limits>
#include <string>

#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/ops_checks.h>
#include <leangrad/kernels/result_type.h>

namespace leangrad {

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "add";
    case BinaryOp::Sub:
      return "sub";
    case BinaryOp::Mul:
      return "mul";
    case BinaryOp::Div:
      return "div";
    case BinaryOp::Pow:
      return "pow";
    case BinaryOp::Maximum:
      return "maximum";
    case BinaryOp::Minimum:
      return "minimum";
    case BinaryOp::Atan2:
      return "atan2";
    case BinaryOp::Remainder:
      return "remainder";
    case BinaryOp::Fmod:
      return "fmod";
    case BinaryOp::FloorDivide:
      return "floor_divide";
    case BinaryOp::BitwiseAnd:
      return "bitwise_and";
    case BinaryOp::BitwiseOr:
      return "bitwise_or";
    case BinaryOp::BitwiseXor:
      return "bitwise_xor";
    case BinaryOp::Zeta:
      return "zeta";
    case BinaryOp::Hypot:
      return "hypot";
    case BinaryOp::Copysign:
      return "copysign";
    case BinaryOp::Nextafter:
      return "nextafter";
    case BinaryOp::Fmax:
      return "fmax";
    case BinaryOp::Fmin:
      return "fmin";
    case BinaryOp::Igamma:
      return "igamma";
    case BinaryOp::Igammac:
      return "igammac";
    case BinaryOp::Gcd:
      return "gcd";
    case BinaryOp::Lcm:
      return "lcm";
    case BinaryOp::LeftShift:
      return "bitwise_left_shift";
    case BinaryOp::RightShift:
      return "bitwise_right_shift";
  }
  return "unknown_binary_op";
}

const char* op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "neg";
    case UnaryOp::Abs:
      return "abs";
    case UnaryOp::Exp:
      return "exp";
    case UnaryOp::Log:
      return "log";
    case UnaryOp::Sqrt:
      return "sqrt";
    case UnaryOp::Tanh:
      return "tanh";
    case UnaryOp::Sigmoid:
      return "sigmoid";
    case UnaryOp::Relu:
      return "relu";
    case UnaryOp::Erf:
      return "erf";
    case UnaryOp::Expm1:
      return "expm1";
    case UnaryOp::Log1p:
      return "log1p";
    case UnaryOp::Sin:
      return "sin";
    case UnaryOp::Cos:
      return "cos";
    case UnaryOp::Rsqrt:
      return "rsqrt";
    case UnaryOp::Reciprocal:
      return "reciprocal";
    case UnaryOp::Sign:
      return "sign";
    case UnaryOp::Floor:
      return "floor";
    case UnaryOp::Ceil:
      return "ceil";
    case UnaryOp::Round:
      return "round";
    case UnaryOp::Trunc:
      return "trunc";
    case UnaryOp::Log2:
      return "log2";
    case UnaryOp::Log10:
      return "log10";
    case UnaryOp::Tan:
      return "tan";
    case UnaryOp::Asin:
      return "asin";
    case UnaryOp::Acos:
      return "acos";
    case UnaryOp::Atan:
      return "atan";
    case UnaryOp::Sinh:
      return "sinh";
    case UnaryOp::Cosh:
      return "cosh";
    case UnaryOp::Asinh:
      return "asinh";
    case UnaryOp::Acosh:
      return "acosh";
    case UnaryOp::Atanh:
      return "atanh";
    case UnaryOp::Exp2:
      return "exp2";
    case UnaryOp::Lgamma:
      return "lgamma";
    case UnaryOp::Digamma:
      return "digamma";
    case UnaryOp::Erfinv:
      return "erfinv";
    case UnaryOp::Erfc:
      return "erfc";
    case UnaryOp::Erfcx:
      return "special_erfcx";
    case UnaryOp::Sinc:
      return "sinc";
    case UnaryOp::I0:
      return "i0";
    case UnaryOp::I0e:
      return "special_i0e";
    case UnaryOp::I1:
      return "special_i1";
    case UnaryOp::I1e:
      return "special_i1e";
    case UnaryOp::Ndtri:
      return "special_ndtri";
    case UnaryOp::BesselJ0:
      return "special_bessel_j0";
    case UnaryOp::BesselJ1:
      return "special_bessel_j1";
    case UnaryOp::BesselY0:
      return "special_bessel_y0";
    case UnaryOp::BesselY1:
      return "special_bessel_y1";
    case UnaryOp::BesselK0:
      return "special_modified_bessel_k0";
    case UnaryOp::BesselK1:
      return "special_modified_bessel_k1";
    case UnaryOp::BesselK0e:
      return "special_scaled_modified_bessel_k0";
    case UnaryOp::BesselK1e:
      return "special_scaled_modified_bessel_k1";
    case UnaryOp::SphericalBesselJ0:
      return "special_spherical_bessel_j0";
    case UnaryOp::FrexpMantissa:  // frexp's two outputs (op_name names each UnaryOp once)
      return "frexp_mantissa";
    case UnaryOp::FrexpExponent:
      return "frexp_exponent";
    case UnaryOp::AiryAi:
      return "special_airy_ai";
    case UnaryOp::AiryAiPrime:
      return "special_airy_ai_prime";
  }
  return "unknown_unary_op";
}

const char* op_name(ActivationOp op) {
  switch (op) {
    case ActivationOp::LeakyRelu:
      return "leaky_relu";
    case ActivationOp::Elu:
    case ActivationOp::EluResult:  // its backward is elu_backward (with is_result)
      return "elu";
    case ActivationOp::Hardtanh:
      return "hardtanh";
    case ActivationOp::Clamp:
      return "clamp";
    case ActivationOp::Gelu:
      return "gelu";
    case ActivationOp::GeluTanh:
      return "gelu_tanh";
    case ActivationOp::Silu:
      return "silu";
    case ActivationOp::Mish:
      return "mish";
    case ActivationOp::Softplus:
      return "softplus";
    case ActivationOp::SmoothL1:
      return "smooth_l1_loss";
    case ActivationOp::Huber:
      return "huber_loss";
    case ActivationOp::Hardswish:
      return "hardswish";
    case ActivationOp::Hardsigmoid:
      return "hardsigmoid";
    case ActivationOp::LogSigmoid:
      return "log_sigmoid";
    case ActivationOp::Softsign:
      return "softsign";
    case ActivationOp::Tanhshrink:
      return "tanhshrink";
    case ActivationOp::Celu:
      return "celu";
    case ActivationOp::Softshrink:
      return "softshrink";
    case ActivationOp::Hardshrink:
      return "hardshrink";
    case ActivationOp::Threshold:
      return "threshold";
  }
  return "unknown_activation_op";
}

const char* op_name(CompareOp op) {
  switch (op) {
    case CompareOp::Gt:
      return "gt";
    case CompareOp::Lt:
      return "lt";
    case CompareOp::Ge:
      return "ge";
    case CompareOp::Le:
      return "le";
    case CompareOp::Eq:
      return "eq";
    case CompareOp::Ne:
      return "ne";
  }
  return "unknown_compare_op";
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Mean:
      return "mean";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Prod:
      return "prod";
    case ReduceOp::Min:
      return "min";
  }
  return "unknown_reduce_op";
}

const char* op_name(ScanOp op) {
  switch (op) {
    case ScanOp::Sum:
      return "cumsum";
    case ScanOp::Prod:
      return "cumprod";
    case ScanOp::LogSumExp:
      return "logcumsumexp";
  }
  return "unknown_scan_op";
}

const char* op_name(ScatterOp op) {
  switch (op) {
    case ScatterOp::Assign:
      return "scatter";
    case ScatterOp::Sum:
      return "scatter_add";
    case ScatterOp::Prod:
      return "scatter_prod";
    case ScatterOp::Max:
      return "scatter_amax";
    case ScatterOp::Min:
      return "scatter_amin";
  }
  return "unknown_scatter_op";
}

namespace ops {
namespace {

void check_defined(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    ops::check_defined(op, *t);
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  LG_CHECK_DEVICE(a.device() == b.device(), op, ": expected all tensors on the same device, got ",
                  a.device(), " and ", b.device());
}

bool is_integral_value(double s) {
  return std::isfinite(s) && std::trunc(s) == s;
}

// Div of integral operands is true division in float32; atan2 of them is computed in float32.
DType binary_result_dtype(BinaryOp op, DType promoted) {
  const bool to_float = op == BinaryOp::Div || kernels::is_floating_only(op);
  return to_float && !is_floating(promoted) ? DType::Float32 : promoted;
}

// Add, mul, maximum and minimum of two bool operands: logical or / and (see the Note); the
// bitwise ops of two bools are the logical and, or and xor. Computed in uint8 and cast back.
bool is_logical_on_bool(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Mul || op == BinaryOp::Maximum ||
         op == BinaryOp::Minimum || op == BinaryOp::Fmax || op == BinaryOp::Fmin ||
         kernels::is_bitwise(op);
}

// The bitwise ops take integral and bool operands only, gcd, lcm and the shifts integral ones
// (bool is refused by check_not_bool), as PyTorch's; nextafter float32 and float64 (a 16-bit
// next value is not the float one rounded).
void check_operand_dtype(BinaryOp op, const char* name, DType dtype) {
  LG_CHECK_DTYPE(!kernels::is_integral_only(op) || !is_floating(dtype), name, ": expected integral",
                 kernels::is_bitwise(op) ? " or bool" : "", " operands, got ", dtype, " (", name,
                 " is not defined for floating types)");
  LG_CHECK_DTYPE(op != BinaryOp::Nextafter || dtype == DType::Float32 || dtype == DType::Float64,
                 name, ": expected float32 or float64 operands, got ", dtype);
}

// PyTorch's pow(Tensor, Scalar) refuses an integral base with a negative integral exponent (the
// result would be 0 for most bases).
void check_integer_power(const char* op, DType dtype, double exponent) {
  LG_CHECK_DTYPE(is_floating(dtype) || exponent >= 0, op,
                 ": integers to negative integer powers are not allowed (a ", dtype,
                 " tensor to the power ", exponent,
                 "); convert the tensor with .to(kFloat32) first");
}

void check_not_bool(const char* op, DType dtype) {
  LG_CHECK_DTYPE(dtype != DType::Bool, op, ": not supported for dtype bool (convert with ",
                 ".to(kInt64) or .to(kFloat32) first)");
}

// PyTorch's can_cast: floating -> integral and non-bool -> bool are not allowed.
bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

Tensor to_dtype(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? t : cast(t, dtype);
}

Tensor new_output(const char* op, const Shape& shape, DType dtype, Device device) {
  return empty_for(op, shape, TensorOptions(dtype).device(device));
}

void launch_binary_scalar(BinaryOp op, const char* name, const Tensor& out, const Tensor& a_in,
                          double s, bool scalar_first) {
  if (out.numel() == 0) return;
  const Tensor a = rows_for(out, a_in);
  const ElementwiseGeometry g = make_elementwise_geometry(name, out, {&a});
  const cuda::DeviceGuard guard(out.device());
  switch (out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::binary_scalar(op, out.dtype(), g, out.data_ptr(), a.data_ptr(), s,
                                  scalar_first);
      break;
    case DeviceType::CUDA:
      kernels::cuda::binary_scalar(op, out.dtype(), g, out.data_ptr(), a.data_ptr(), s,
                                   scalar_first);
      break;
  }
}

// Note [One-element operands]
// A CPU operand that holds one element broadcast over the output (a 0-d tensor, or mean's
// gradient expanded to the loss's input) runs as a number: binary_scalar's loop over the other
// operand, which vectorises, where the strided loop read the one element at stride 0, one lane
// at a time (mul of an expanded 0-d tensor by a (4096, 4096) one took 9.3 ms against 5.7 for two
// contiguous operands, and every loss.backward() starts with one). PyTorch's TensorIterator takes
// a CPU scalar so too. The number is the element read as a double, exact for every floating
// dtype, and binary_scalar computes each element as binary does: binary_op_apply of the two in
// opmath_t, rounded once. Not pow, whose scalar exponents take shortcuts (Note [pow with a
// scalar exponent]), nor zeta, whose scalar 2 takes its own form, nor igamma and igammac, whose
// two-tensor loop runs in lanes with the lanes' log and exp (Note [Incomplete gamma in lanes])
// where binary_scalar's takes the C library's, nor integers (an int64 need not fit a double):
// they keep the strided loop. The element is read before the loop writes, so an in-place op whose
// output holds it reads it as it was.
bool runs_as_number(BinaryOp op, const Tensor& out, const Tensor& operand) {
  if (out.device().type != DeviceType::CPU || !is_floating(out.dtype()) || out.numel() < 2 ||
      op == BinaryOp::Pow || op == BinaryOp::Zeta || op == BinaryOp::Igamma ||
      op == BinaryOp::Igammac)
    return false;
  for (std::int64_t d = 0; d < operand.dim(); ++d)
    if (operand.size(d) > 1 && operand.stride(d) != 0) return false;
  return true;
}

// The one element of a CPU operand that runs_as_number, as a double (exact).
double element_value(const Tensor& operand) {
  return dispatch_floating(operand.dtype(), "element_value", [&]<typename T>() {
    return static_cast<double>(kernels::to_opmath(*static_cast<const T*>(operand.data_ptr())));
  });
}

// out (already shaped and typed) = a op b, with a and b of out's dtype.
void launch_binary(BinaryOp op, const char* name, const Tensor& out, const Tensor& a_in,
                   const Tensor& b_in) {
  if (out.numel() == 0) return;
  if (runs_as_number(op, out, b_in))  // Note [One-element operands]
    return launch_binary_scalar(op, name, out, a_in, element_value(b_in), /*scalar_first=*/false);
  if (runs_as_number(op, out, a_in))
    return launch_binary_scalar(op, name, out, b_in, element_value(a_in), /*scalar_first=*/true);
  const Tensor a = rows_for(out, a_in);
  const Tensor b = b_in.is_same(a_in) ? a : rows_for(out, b_in);  // x + x: one copy
  const ElementwiseGeometry g = make_elementwise_geometry(name, out, {&a, &b});
  const cuda::DeviceGuard guard(out.device());
  switch (out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::binary(op, out.dtype(), g, out.data_ptr(), a.data_ptr(), b.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::binary(op, out.dtype(), g, out.data_ptr(), a.data_ptr(), b.data_ptr());
      break;
  }
}

// out (already shaped and typed) = op(a), with a of out's dtype; out may be a itself (unary_).
void launch_unary(UnaryOp op, const char* name, const Tensor& out, const Tensor& a_in) {
  if (out.numel() == 0) return;
  const Tensor a = rows_for(out, a_in);
  const ElementwiseGeometry g = make_elementwise_geometry(name, out, {&a});
  const cuda::DeviceGuard guard(out.device());
  switch (out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::unary(op, out.dtype(), g, out.data_ptr(), a.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::unary(op, out.dtype(), g, out.data_ptr(), a.data_ptr());
      break;
  }
}

// out = the activation of a (out may be a itself: activation_).
void launch_activation(ActivationOp op, const char* name, const Tensor& out, const Tensor& a_in,
                       double p0, double p1) {
  if (out.numel() == 0) return;
  const Tensor a = rows_for(out, a_in);
  const ElementwiseGeometry g = make_elementwise_geometry(name, out, {&a});
  const cuda::DeviceGuard guard(out.device());
  switch (out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::activation(op, out.dtype(), g, out.data_ptr(), a.data_ptr(), p0, p1);
      break;
    case DeviceType::CUDA:
      kernels::cuda::activation(op, out.dtype(), g, out.data_ptr(), a.data_ptr(), p0, p1);
      break;
  }
}

}  // namespace

DType scalar_result_dtype(DType t, double s) {
  if (is_floating(t)) return t;
  if (!is_integral_value(s)) return DType::Float32;
  return t == DType::Bool ? DType::Int64 : t;
}

DType result_type(const Tensor& a, const Tensor& b) {
  if ((a.dim() == 0) == (b.dim() == 0)) return promote_types(a.dtype(), b.dtype());
  const DType dims = a.dim() == 0 ? b.dtype() : a.dtype();
  const DType zero_dim = a.dim() == 0 ? a.dtype() : b.dtype();
  if (is_floating(dims)) return dims;
  if (dims == DType::Bool || is_floating(zero_dim)) return promote_types(dims, zero_dim);
  return dims;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = op_name(op);
  check_defined(name, {&a, &b});
  check_same_device(name, a, b);
  const DType dtype = binary_result_dtype(op, result_type(a, b));
  check_operand_dtype(op, name, dtype);
  if (dtype == DType::Bool && is_logical_on_bool(op)) {
    return cast(binary(op, cast(a, DType::UInt8), cast(b, DType::UInt8)), DType::Bool);
  }
  check_not_bool(name, dtype);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  const Tensor a_cast = to_dtype(a, dtype);
  const Tensor b_cast = to_dtype(b, dtype);
  Tensor out = new_output(name, shape, dtype, a.device());
  launch_binary(op, name, out, a_cast, b_cast);
  return out;
}

Tensor binary(BinaryOp op, const Tensor& a, double s, bool scalar_first) {
  const char* name = op_name(op);
  check_defined(name, {&a});
  const DType dtype = binary_result_dtype(op, scalar_result_dtype(a.dtype(), s));
  check_operand_dtype(op, name, dtype);
  check_not_bool(name, dtype);
  if (op == BinaryOp::Pow && !scalar_first) check_integer_power(name, dtype, s);
  const Tensor a_cast = to_dtype(a, dtype);
  Tensor out = new_output(name, a.shape(), dtype, a.device());
  launch_binary_scalar(op, name, out, a_cast, s, scalar_first);
  return out;
}

void binary_(BinaryOp op, const Tensor& self, const Tensor& other) {
  const std::string name_str = std::string(op_name(op)) + "_";
  const char* name = name_str.c_str();
  check_defined(name, {&self, &other});
  check_same_device(name, self, other);
  const DType dtype = binary_result_dtype(op, result_type(self, other));
  check_operand_dtype(op, name, dtype);
  const bool logical = dtype == DType::Bool && is_logical_on_bool(op);
  if (!logical) check_not_bool(name, dtype);
  LG_CHECK_DTYPE(can_cast(dtype, self.dtype()), name, ": result type ", dtype,
                 " can't be cast to the desired output type ", self.dtype());
  LG_CHECK_SHAPE(broadcasts_to(other.shape(), self.shape()), name, ": cannot broadcast ",
                 shape_str(other.shape()), " to ", shape_str(self.shape()),
                 " (the in-place result keeps self's shape)");
  check_writable(name, self);
  if (dtype == self.dtype() && !logical) {
    // Any view of self's memory other than self's own elements is copied first.
    const bool overlaps = !safe_to_read_while_writing(self, other);
    const Tensor source = overlaps ? cast(other, dtype) : to_dtype(other, dtype);
    launch_binary(op, name, self, self, source);
  } else {
    copy_(self, binary(op, self, other));  // compute in the promoted dtype, cast back
  }
  self.bump_version();
}

void binary_(BinaryOp op, const Tensor& self, double s) {
  const std::string name_str = std::string(op_name(op)) + "_";
  const char* name = name_str.c_str();
  check_defined(name, {&self});
  const DType dtype = binary_result_dtype(op, scalar_result_dtype(self.dtype(), s));
  check_operand_dtype(op, name, dtype);
  check_not_bool(name, dtype);
  if (op == BinaryOp::Pow) check_integer_power(name, dtype, s);
  LG_CHECK_DTYPE(can_cast(dtype, self.dtype()), name, ": result type ", dtype,
                 " can't be cast to the desired output type ", self.dtype());
  check_writable(name, self);
  if (dtype == self.dtype()) {
    launch_binary_scalar(op, name, self, self, s, /*scalar_first=*/false);
  } else {
    copy_(self, binary(op, self, s));
  }
  self.bump_version();
}

Tensor unary(UnaryOp op, const Tensor& a) {
  const char* name = op_name(op);
  check_defined(name, {&a});
  DType dtype = a.dtype();
  if (!is_floating(dtype) && kernels::is_floating_only(op)) dtype = DType::Float32;
  check_not_bool(name, dtype);
  const Tensor a_cast = to_dtype(a, dtype);
  Tensor out = new_output(name, a.shape(), dtype, a.device());
  launch_unary(op, name, out, a_cast);
  return out;
}

void unary_(UnaryOp op, const Tensor& self) {
  const std::string name_str = std::string(op_name(op)) + "_";
  const char* name = name_str.c_str();
  check_defined(name, {&self});
  const DType dtype = self.dtype();
  // unary(op, self) would be float32 (Note [Elementwise dtype rules]), which self cannot hold.
  LG_CHECK_DTYPE(is_floating(dtype) || !kernels::is_floating_only(op), name, ": result type ",
                 DType::Float32, " can't be cast to the desired output type ", dtype, " (shape ",
                 self.shape(), "); use the out-of-place ", op_name(op));
  check_not_bool(name, dtype);
  check_writable(name, self);
  launch_unary(op, name, self, self);  // the launcher reads each element before it writes it
  self.bump_version();
}

namespace {

// Clamp's x and bounds: a numeric x (integers too, not bool); each bound present (not NaN) fits
// x's dtype and, for an integral x, is integral (compared with the values exactly).
void check_clamp_input(const char* name, const Tensor& x, double min, double max) {
  const DType dtype = x.dtype();
  check_not_bool(name, dtype);
  for (const double bound : {min, max}) {
    if (std::isnan(bound)) continue;  // absent
    LG_CHECK_DTYPE(is_floating(dtype) || is_integral_value(bound), name, ": result type ",
                   DType::Float32, " can't be cast to the desired output type ", dtype, " (bound ",
                   bound, ", shape ", x.shape(), ")");
    LG_CHECK(scalar_fits(bound, dtype), name, ": bound ", bound, " cannot be converted to dtype ",
             dtype, " without overflow");
  }
}

void check_floating_input(const char* name, const Tensor& x) {
  LG_CHECK_DTYPE(is_floating(x.dtype()), name,
                 ": expected a floating tensor (float32, float64, float16, bfloat16), got ",
                 x.dtype(), " (shape ", x.shape(), ")");
}

// A floating x for every activation but clamp (check_clamp_input), hardtanh's bounds within x's
// dtype (as masked_fill's value), softplus's beta finite and > 0 (it divides by it), and
// smooth_l1's beta and huber's delta > 0 (beta divides; beta = 0, l1_loss, is autograd's case).
void check_activation_input(ActivationOp op, const char* name, const Tensor& x, double p0,
                            double p1) {
  if (op == ActivationOp::Clamp) {
    check_clamp_input(name, x, p0, p1);
    return;
  }
  check_floating_input(name, x);
  if (op == ActivationOp::Hardtanh || op == ActivationOp::Threshold) {
    for (const double bound : {p0, p1}) {
      LG_CHECK(scalar_fits(bound, x.dtype()), name, ": ",
               op == ActivationOp::Hardtanh ? "bound " : "threshold or value ", bound,
               " cannot be converted to dtype ", x.dtype(), " without overflow");
    }
  }
  if (op == ActivationOp::Softshrink || op == ActivationOp::Hardshrink) {
    LG_CHECK(scalar_fits(p0, x.dtype()), name, ": lambda ", p0, " cannot be converted to dtype ",
             x.dtype(), " without overflow");
  }
  LG_CHECK(op != ActivationOp::Softshrink || p0 >= 0.0, name, ": expected lambda >= 0, got ", p0);
  LG_CHECK(op != ActivationOp::Celu || (p0 != 0.0 && std::isfinite(p0)), name,
           ": expected a finite alpha != 0, got ", p0);
  LG_CHECK(op != ActivationOp::Softplus || (p0 > 0.0 && std::isfinite(p0)), name,
           ": expected a finite beta > 0, got ", p0);
  LG_CHECK(op != ActivationOp::SmoothL1 || p0 > 0.0, name, ": expected beta > 0, got ", p0);
  LG_CHECK(op != ActivationOp::Huber || p0 > 0.0, name, ": expected delta > 0, got ", p0);
}

}  // namespace

void activation_(ActivationOp op, const Tensor& self, double p0, double p1) {
  const std::string name_str = std::string(op_name(op)) + "_";
  const char* name = name_str.c_str();
  check_defined(name, {&self});
  LG_CHECK(!kernels::is_one_rounding_activation(op), name, ": ", op_name(op),
           " has no in-place kernel; ops::activation computes it out of place");
  check_activation_input(op, name, self, p0, p1);
  check_writable(name, self);
  launch_activation(op, name, self, self, p0, p1);  // each element read, then written
  self.bump_version();
}

Tensor activation(ActivationOp op, const Tensor& x, double p0, double p1) {
  const char* name = op_name(op);
  check_defined(name, {&x});
  check_activation_input(op, name, x, p0, p1);
  Tensor out = new_output(name, x.shape(), x.dtype(), x.device());
  launch_activation(op, name, out, x, p0, p1);
  return out;
}

Tensor activation_backward(ActivationOp op, const Tensor& grad_output, const Tensor& x, double p0,
                           double p1) {
  const std::string name_str = std::string(op_name(op)) + "_backward";
  const char* name = name_str.c_str();
  check_defined(name, {&grad_output, &x});
  // Clamp's forward takes integers too, its gradient only floats (the others' check says so).
  if (op == ActivationOp::Clamp) check_floating_input(name, x);
  check_activation_input(op, name, x, p0, p1);
  check_same_device(name, grad_output, x);
  LG_CHECK_DTYPE(grad_output.dtype() == x.dtype(), name, ": grad_output is ", grad_output.dtype(),
                 " and the input ", x.dtype(), "; expected one dtype");
  LG_CHECK_SHAPE(grad_output.shape() == x.shape(), name, ": grad_output has shape ",
                 shape_str(grad_output.shape()), " and the input ", shape_str(x.shape()),
                 "; expected one shape");
  Tensor grad_input = new_output(name, x.shape(), x.dtype(), x.device());
  if (grad_input.numel() > 0) {
    const Tensor grad_rows = rows_for(grad_input, grad_output), x_rows = rows_for(grad_input, x);
    const ElementwiseGeometry g =
        make_elementwise_geometry(name, grad_input, {&grad_rows, &x_rows});
    const cuda::DeviceGuard guard(x.device());
    switch (x.device().type) {
      case DeviceType::CPU:
        kernels::cpu::activation_backward(op, x.dtype(), g, grad_input.data_ptr(),
                                          grad_rows.data_ptr(), x_rows.data_ptr(), p0, p1);
        break;
      case DeviceType::CUDA:
        kernels::cuda::activation_backward(op, x.dtype(), g, grad_input.data_ptr(),
                                           grad_rows.data_ptr(), x_rows.data_ptr(), p0, p1);
        break;
    }
  }
  return grad_input;
}

void masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value) {
  const char* name = "masked_fill_";
  check_defined(name, {&self, &mask, &value});
  check_same_device(name, self, mask);
  LG_CHECK_DTYPE(mask.dtype() == DType::Bool, name, ": the mask must be bool, got ", mask.dtype(),
                 " (shape ", mask.shape(), ")");
  LG_CHECK_SHAPE(value.dim() == 0, name, ": the value must be a 0-d tensor, got shape ",
                 value.shape());
  LG_CHECK_SHAPE(broadcasts_to(mask.shape(), self.shape()), name, ": cannot broadcast the mask ",
                 shape_str(mask.shape()), " to ", shape_str(self.shape()),
                 " (the in-place result keeps self's shape)");
  LG_CHECK_DEVICE(value.device() == self.device() || value.device().is_cpu(), name,
                  ": the value is on ", value.device(), ", the tensor on ", self.device());
  check_writable(name, self);
  // The value is read now, into a tensor of its own (it may be an element of self), and the mask
  // copied if the writes could reach it before it is read.
  const Tensor fill = new_output(name, {}, self.dtype(), self.device());
  copy_(fill, value);
  const Tensor cond =
      safe_to_read_while_writing(self, mask) ? rows_for(self, mask) : cast(mask, DType::Bool);
  if (self.numel() > 0) {
    // where(cond, fill, self) into self: each element of self is read, then written, by one step.
    const ElementwiseGeometry g = make_elementwise_geometry(name, self, {&cond, &fill, &self});
    const bool* cond_ptr = static_cast<const bool*>(cond.data_ptr());
    const cuda::DeviceGuard guard(self.device());
    switch (self.device().type) {
      case DeviceType::CPU:
        kernels::cpu::where(self.dtype(), g, self.data_ptr(), cond_ptr, fill.data_ptr(),
                            self.data_ptr());
        break;
      case DeviceType::CUDA:
        kernels::cuda::where(self.dtype(), g, self.data_ptr(), cond_ptr, fill.data_ptr(),
                             self.data_ptr());
        break;
    }
  }
  self.bump_version();
}

Tensor compare(CompareOp op, const Tensor& a, const Tensor& b) {
  const char* name = op_name(op);
  check_defined(name, {&a, &b});
  check_same_device(name, a, b);
  const DType dtype = result_type(a, b);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = new_output(name, shape, DType::Bool, a.device());
  if (out.numel() == 0) return out;
  const Tensor a_cast = rows_for(out, to_dtype(a, dtype));
  const Tensor b_cast = rows_for(out, to_dtype(b, dtype));
  const ElementwiseGeometry g = make_elementwise_geometry(name, out, {&a_cast, &b_cast});
  bool* out_ptr = static_cast<bool*>(out.data_ptr());
  const cuda::DeviceGuard guard(out.device());
  switch (out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::compare(op, dtype, g, out_ptr, a_cast.data_ptr(), b_cast.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::compare(op, dtype, g, out_ptr, a_cast.data_ptr(), b_cast.data_ptr());
      break;
  }
  return out;
}

namespace {

// The dtype in which `t op s` is compared: one that holds s exactly when possible.
// See Note [Elementwise dtype rules].
DType compare_scalar_dtype(DType t, double s) {
  if (is_floating(t)) return t;
  if (!is_integral_value(s)) return DType::Float64;
  double low = 0;
  double high = 0;
  switch (t) {
    case DType::Bool:
      high = 1;
      break;
    case DType::UInt8:
      high = 255;
      break;
    case DType::Int32:
      low = std::numeric_limits<std::int32_t>::min();
      high = std::numeric_limits<std::int32_t>::max();
      break;
    default:                         // int64
      low = -9223372036854775808.0;  // -2^63
      high = 9223372036854775807.0;  // rounds to 2^63 in double: compare with < below
      break;
  }
  if (s >= low && (t == DType::Int64 ? s < high : s <= high)) return t;
  if (s >= -9223372036854775808.0 && s < 9223372036854775808.0) return DType::Int64;
  return DType::Float64;
}

}  // namespace

Tensor compare(CompareOp op, const Tensor& a, double s) {
  const char* name = op_name(op);
  check_defined(name, {&a});
  const DType dtype = compare_scalar_dtype(a.dtype(), s);
  Tensor out = new_output(name, a.shape(), DType::Bool, a.device());
  if (out.numel() == 0) return out;
  const Tensor a_cast = rows_for(out, to_dtype(a, dtype));
  const ElementwiseGeometry g = make_elementwise_geometry(name, out, {&a_cast});
  bool* out_ptr = static_cast<bool*>(out.data_ptr());
  const cuda::DeviceGuard guard(out.device());
  switch (out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::compare_scalar(op, dtype, g, out_ptr, a_cast.data_ptr(), s);
      break;
    case DeviceType::CUDA:
      kernels::cuda::compare_scalar(op, dtype, g, out_ptr, a_cast.data_ptr(), s);
      break;
  }
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_defined("where", {&cond, &a, &b});
  check_same_device("where", cond, a);
  check_same_device("where", cond, b);
  LG_CHECK_DTYPE(cond.dtype() == DType::Bool, "where: expected cond of dtype bool, got ",
                 cond.dtype());
  const DType dtype = result_type(a, b);
  const Shape shape =
      broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = new_output("where", shape, dtype, a.device());
  if (out.numel() == 0) return out;
  const Tensor cond_rows = rows_for(out, cond);
  const Tensor a_cast = rows_for(out, to_dtype(a, dtype));
  const Tensor b_cast = rows_for(out, to_dtype(b, dtype));
  const ElementwiseGeometry g =
      make_elementwise_geometry("where", out, {&cond_rows, &a_cast, &b_cast});
  const bool* cond_ptr = static_cast<const bool*>(cond_rows.data_ptr());
  const cuda::DeviceGuard guard(out.device());
  switch (out.device().type) {
    case DeviceType::CPU:
      kernels::cpu::where(dtype, g, out.data_ptr(), cond_ptr, a_cast.data_ptr(), b_cast.data_ptr());
      break;
    case DeviceType::CUDA:
      kernels::cuda::where(dtype, g, out.data_ptr(), cond_ptr, a_cast.data_ptr(),
                           b_cast.data_ptr());
      break;
  }
  return out;
}

}  // namespace ops
}  // namespace leangrad
