// The CUDA elementwise kernels of kernels/backend.h: binary, binary_scalar, unary, activation,
// compare, compare_scalar, where, cast and fill. The per-element math is the CPU's own
// (kernels/elementwise_math.h); this file only walks the iteration space, in three layers:
//   per-element functors (one per family)  -> what one output element is
//   two generic grid-stride kernels        -> contiguous (16-byte vectors of every dtype) or
//                                             strided (geometry; 32-bit FastDivmod index math
//                                             below 2^31 elements, int64 above)
//   launchers                              -> dtype/op dispatch, choice of kernel, launch + check
// Every family shares the two kernels, so the profiler shows e.g.
// elementwise_contiguous_kernel<4, BinaryFunctor<Add, float>, ...>.
#include <algorithm>
#include <cstdint>
#include <utility>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {
namespace {

// ---- Per-element functors --------------------------------------------------------------------
// Each holds what a family needs beyond its inputs (a scalar, a fill value) and calls the shared
// math. They are passed to the kernels by value.

template <BinaryOp op, typename T>
struct BinaryFunctor {
  __device__ T operator()(T a, T b) const { return binary_element<op, T>(a, b); }
};

// a op s, or s op a when scalar_first; s is already in the math type (converted on the host).
// pow of a floating a with the exponent s takes its kind's shortcut (Note [pow with a scalar
// exponent]), the kind chosen on the host: a branch every thread takes alike.
template <BinaryOp op, typename T>
struct BinaryScalarFunctor {
  opmath_t<T> s;
  bool scalar_first;
  PowExponent pow_kind = PowExponent::Other;
  __device__ T operator()(T a) const {
    const opmath_t<T> m = to_opmath(a);
    if constexpr (op == BinaryOp::Pow && kPowScalarShortcuts<T>) {
      if (!scalar_first) return static_cast<T>(pow_scalar_apply(m, s, pow_kind));
    }
    return static_cast<T>(scalar_first ? binary_op_apply<op>(s, m) : binary_op_apply<op>(m, s));
  }
};

template <UnaryOp op, typename T>
struct UnaryFunctor {
  __device__ T operator()(T a) const { return unary_element<op, T>(a); }
};

template <CompareOp op, typename T>
struct CompareFunctor {
  __device__ bool operator()(T a, T b) const { return compare_element<op, T>(a, b); }
};

// s is already rounded to T, as on the CPU (PyTorch compares in the tensor's dtype).
template <CompareOp op, typename T>
struct CompareScalarFunctor {
  T s;
  __device__ bool operator()(T a) const { return compare_element<op, T>(a, s); }
};

template <typename T>
struct WhereFunctor {
  __device__ T operator()(bool cond, T a, T b) const { return cond ? a : b; }
};

template <typename To, typename From>
struct CastFunctor {
  __device__ To operator()(From x) const { return cast_value<To>(x); }
};

template <typename T>
struct FillFunctor {
  T value;
  __device__ T operator()() const { return value; }
};

// ---- Device helpers --------------------------------------------------------------------------

// The vector width of an op: 16 bytes of its widest operand type (4 float32, 8 float16, 2 int64,
// 16 uint8/bool; a float32 -> bool compare reads 4 floats and writes 4 bools per step).
template <typename... Types>
inline constexpr int kOpVectorWidth = kVectorBytes / static_cast<int>(std::max({sizeof(Types)...}));

template <int kWidth, typename Out, typename F, typename... In>
__device__ __forceinline__ Vector<Out, kWidth> apply_lanes(const F& f,
                                                           const Vector<In, kWidth>&... in) {
  Vector<Out, kWidth> out;
#pragma unroll
  for (int lane = 0; lane < kWidth; ++lane)
    out.val[lane] = f(in.val[lane]...);
  return out;
}

// The element offsets of all operands for linear output index i: ElementwiseGeometry::offset
// for every operand in one pass, so the divisions are done once per element, not per operand.
// Index is int64 (any size) or uint32 with FastDivmod (numel < 2^31, see launch_elementwise).
template <int kNumOperands>
__device__ __forceinline__ void operand_offsets(const ElementwiseGeometry& g, std::int64_t i,
                                                std::int64_t (&offsets)[kNumOperands]) {
#pragma unroll
  for (int k = 0; k < kNumOperands; ++k)
    offsets[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const std::int64_t size = g.sizes[d];
    const std::int64_t index = i % size;
    i /= size;
#pragma unroll
    for (int k = 0; k < kNumOperands; ++k)
      offsets[k] += index * g.strides[k][d];
  }
}

// The geometry with a FastDivmod per dim, for iteration spaces of fewer than 2^31 elements.
struct ElementwiseGeometry32 {
  int ndim = 0;
  FastDivmod sizes[kMaxDims];
  std::int64_t strides[kMaxOperands][kMaxDims] = {};
};

template <int kNumOperands>
__device__ __forceinline__ void operand_offsets(const ElementwiseGeometry32& g, std::uint32_t i,
                                                std::int64_t (&offsets)[kNumOperands]) {
#pragma unroll
  for (int k = 0; k < kNumOperands; ++k)
    offsets[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const std::uint32_t quotient = g.sizes[d].div(i);
    const std::int64_t index = g.sizes[d].mod(i, quotient);
    i = quotient;
#pragma unroll
    for (int k = 0; k < kNumOperands; ++k)
      offsets[k] += index * g.strides[k][d];
  }
}

template <typename F, typename Out, typename... In, std::size_t... k>
__device__ __forceinline__ void apply_strided(const F& f, Out* out, const std::int64_t* offsets,
                                              std::index_sequence<k...>, const In*... in) {
  out[offsets[0]] = f(in[offsets[k + 1]]...);
}

// ---- Kernels ---------------------------------------------------------------------------------

// out[i] = f(in[i]...) for i < n, every operand contiguous and aligned to Vector<., kWidth>:
// whole vectors first, then the last n % kWidth elements one by one. out may alias an input
// (in-place ops): each element is read before it is written, by the same thread.
template <int kWidth, typename F, typename Out, typename... In>
__global__ void elementwise_contiguous_kernel(std::int64_t n, F f, Out* out, const In*... in) {
  const std::int64_t num_vectors = n / kWidth;
  const std::int64_t step = grid_thread_count();
  for (std::int64_t v = global_thread_index(); v < num_vectors; v += step)
    store_vector<kWidth>(out, v, apply_lanes<kWidth, Out>(f, load_vector<kWidth>(in, v)...));
  for (std::int64_t i = num_vectors * kWidth + global_thread_index(); i < n; i += step)
    out[i] = f(in[i]...);
}

// out[off0(i)] = f(in[offk(i)]...) for every linear index i of the geometry (any strides,
// broadcast inputs with stride 0). Geometry is ElementwiseGeometry (int64 indices) or
// ElementwiseGeometry32 (uint32 indices, numel < 2^31), passed by value (kernel parameter
// space, ~0.5 KB).
template <typename Geometry, typename Index, typename F, typename Out, typename... In>
__global__ void elementwise_strided_kernel(Geometry g, Index numel, F f, Out* out,
                                           const In*... in) {
  constexpr int kNumOperands = 1 + static_cast<int>(sizeof...(In));
  const auto step = static_cast<Index>(grid_thread_count());
  for (auto i = static_cast<Index>(global_thread_index()); i < numel; i += step) {
    std::int64_t offsets[kNumOperands];
    operand_offsets(g, i, offsets);
    apply_strided(f, out, offsets, std::index_sequence_for<In...>{}, in...);
  }
}

// ---- Launch helpers --------------------------------------------------------------------------

constexpr int kThreadsPerBlock = 256;

ElementwiseGeometry32 to_geometry32(const ElementwiseGeometry& g) {
  ElementwiseGeometry32 g32;
  g32.ndim = g.ndim;
  for (int d = 0; d < g.ndim; ++d) {
    g32.sizes[d] = FastDivmod(static_cast<std::uint32_t>(g.sizes[d]));
    for (int k = 0; k < g.num_operands; ++k)
      g32.strides[k][d] = g.strides[k][d];
  }
  return g32;
}

// Runs f over the geometry: the contiguous kernel when every operand is contiguous and aligned
// for vector access, the strided kernel otherwise (32-bit index math below 2^31 elements).
// Operand 0 of g is out, then in... in order.
template <typename F, typename Out, typename... In>
void launch_elementwise(const ElementwiseGeometry& g, const F& f, Out* out, const In*... in) {
  LG_INTERNAL_ASSERT(g.num_operands == 1 + static_cast<int>(sizeof...(In)),
                     "elementwise launch: geometry has ", g.num_operands, " operands, kernel ",
                     1 + sizeof...(In));
  if (g.numel == 0) return;
  constexpr int kWidth = kOpVectorWidth<Out, In...>;
  bool contiguous = true;
  for (int k = 0; k < g.num_operands; ++k)
    contiguous = contiguous && g.is_contiguous(k);
  const cudaStream_t stream = current_stream();
  if (contiguous && vector_aligned<Out, kWidth>(out) && (vector_aligned<In, kWidth>(in) && ...)) {
    auto* kernel = elementwise_contiguous_kernel<kWidth, F, Out, In...>;
    const unsigned int blocks =
        grid_size(kernel, kThreadsPerBlock, ceil_div(ceil_div(g.numel, kWidth), kThreadsPerBlock));
    kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(g.numel, f, out, in...);
  } else if (g.numel < (std::int64_t{1} << 31)) {
    auto* kernel = elementwise_strided_kernel<ElementwiseGeometry32, std::uint32_t, F, Out, In...>;
    const unsigned int blocks =
        grid_size(kernel, kThreadsPerBlock, ceil_div(g.numel, kThreadsPerBlock));
    kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(
        to_geometry32(g), static_cast<std::uint32_t>(g.numel), f, out, in...);
  } else {
    auto* kernel = elementwise_strided_kernel<ElementwiseGeometry, std::int64_t, F, Out, In...>;
    const unsigned int blocks =
        grid_size(kernel, kThreadsPerBlock, ceil_div(g.numel, kThreadsPerBlock));
    kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(g, g.numel, f, out, in...);
  }
  LG_CUDA_CHECK_LAUNCH();
}

// Runtime op enum -> template argument: f.template operator()<op>().
template <typename F>
void dispatch_binary_op(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::Add:
      return f.template operator()<BinaryOp::Add>();
    case BinaryOp::Sub:
      return f.template operator()<BinaryOp::Sub>();
    case BinaryOp::Mul:
      return f.template operator()<BinaryOp::Mul>();
    case BinaryOp::Div:
      return f.template operator()<BinaryOp::Div>();
    case BinaryOp::Pow:
      return f.template operator()<BinaryOp::Pow>();
    case BinaryOp::Maximum:
      return f.template operator()<BinaryOp::Maximum>();
    case BinaryOp::Minimum:
      return f.template operator()<BinaryOp::Minimum>();
    case BinaryOp::Atan2:
      return f.template operator()<BinaryOp::Atan2>();
    case BinaryOp::Remainder:
      return f.template operator()<BinaryOp::Remainder>();
    case BinaryOp::Fmod:
      return f.template operator()<BinaryOp::Fmod>();
    case BinaryOp::FloorDivide:
      return f.template operator()<BinaryOp::FloorDivide>();
    case BinaryOp::BitwiseAnd:
      return f.template operator()<BinaryOp::BitwiseAnd>();
    case BinaryOp::BitwiseOr:
      return f.template operator()<BinaryOp::BitwiseOr>();
    case BinaryOp::BitwiseXor:
      return f.template operator()<BinaryOp::BitwiseXor>();
    case BinaryOp::Zeta:
      return f.template operator()<BinaryOp::Zeta>();
    case BinaryOp::Hypot:
      return f.template operator()<BinaryOp::Hypot>();
    case BinaryOp::Copysign:
      return f.template operator()<BinaryOp::Copysign>();
    case BinaryOp::Nextafter:
      return f.template operator()<BinaryOp::Nextafter>();
    case BinaryOp::Fmax:
      return f.template operator()<BinaryOp::Fmax>();
    case BinaryOp::Fmin:
      return f.template operator()<BinaryOp::Fmin>();
    case BinaryOp::Igamma:
      return f.template operator()<BinaryOp::Igamma>();
    case BinaryOp::Igammac:
      return f.template operator()<BinaryOp::Igammac>();
    case BinaryOp::Gcd:
      return f.template operator()<BinaryOp::Gcd>();
    case BinaryOp::Lcm:
      return f.template operator()<BinaryOp::Lcm>();
    case BinaryOp::LeftShift:
      return f.template operator()<BinaryOp::LeftShift>();
    case BinaryOp::RightShift:
      return f.template operator()<BinaryOp::RightShift>();
  }
  LG_THROW(Error, "CUDA elementwise: unknown binary op ", static_cast<int>(op));
}

template <typename F>
void dispatch_unary_op(UnaryOp op, F&& f) {
  switch (op) {
    case UnaryOp::Neg:
      return f.template operator()<UnaryOp::Neg>();
    case UnaryOp::Abs:
      return f.template operator()<UnaryOp::Abs>();
    case UnaryOp::Exp:
      return f.template operator()<UnaryOp::Exp>();
    case UnaryOp::Log:
      return f.template operator()<UnaryOp::Log>();
    case UnaryOp::Sqrt:
      return f.template operator()<UnaryOp::Sqrt>();
    case UnaryOp::Tanh:
      return f.template operator()<UnaryOp::Tanh>();
    case UnaryOp::Sigmoid:
      return f.template operator()<UnaryOp::Sigmoid>();
    case UnaryOp::Relu:
      return f.template operator()<UnaryOp::Relu>();
    case UnaryOp::Erf:
      return f.template operator()<UnaryOp::Erf>();
    case UnaryOp::Expm1:
      return f.template operator()<UnaryOp::Expm1>();
    case UnaryOp::Log1p:
      return f.template operator()<UnaryOp::Log1p>();
    case UnaryOp::Sin:
      return f.template operator()<UnaryOp::Sin>();
    case UnaryOp::Cos:
      return f.template operator()<UnaryOp::Cos>();
    case UnaryOp::Rsqrt:
      return f.template operator()<UnaryOp::Rsqrt>();
    case UnaryOp::Reciprocal:
      return f.template operator()<UnaryOp::Reciprocal>();
    case UnaryOp::Sign:
      return f.template operator()<UnaryOp::Sign>();
    case UnaryOp::Floor:
      return f.template operator()<UnaryOp::Floor>();
    case UnaryOp::Ceil:
      return f.template operator()<UnaryOp::Ceil>();
    case UnaryOp::Round:
      return f.template operator()<UnaryOp::Round>();
    case UnaryOp::Trunc:
      return f.template operator()<UnaryOp::Trunc>();
    case UnaryOp::Log2:
      return f.template operator()<UnaryOp::Log2>();
    case UnaryOp::Log10:
      return f.template operator()<UnaryOp::Log10>();
    case UnaryOp::Tan:
      return f.template operator()<UnaryOp::Tan>();
    case UnaryOp::Asin:
      return f.template operator()<UnaryOp::Asin>();
    case UnaryOp::Acos:
      return f.template operator()<UnaryOp::Acos>();
    case UnaryOp::Atan:
      return f.template operator()<UnaryOp::Atan>();
    case UnaryOp::Sinh:
      return f.template operator()<UnaryOp::Sinh>();
    case UnaryOp::Cosh:
      return f.template operator()<UnaryOp::Cosh>();
    case UnaryOp::Asinh:
      return f.template operator()<UnaryOp::Asinh>();
    case UnaryOp::Acosh:
      return f.template operator()<UnaryOp::Acosh>();
    case UnaryOp::Atanh:
      return f.template operator()<UnaryOp::Atanh>();
    case UnaryOp::Exp2:
      return f.template operator()<UnaryOp::Exp2>();
    case UnaryOp::Lgamma:
      return f.template operator()<UnaryOp::Lgamma>();
    case UnaryOp::Digamma:
      return f.template operator()<UnaryOp::Digamma>();
    case UnaryOp::Erfinv:
      return f.template operator()<UnaryOp::Erfinv>();
    case UnaryOp::Erfc:
      return f.template operator()<UnaryOp::Erfc>();
    case UnaryOp::Erfcx:
      return f.template operator()<UnaryOp::Erfcx>();
    case UnaryOp::Sinc:
      return f.template operator()<UnaryOp::Sinc>();
    case UnaryOp::I0:
      return f.template operator()<UnaryOp::I0>();
    case UnaryOp::I0e:
      return f.template operator()<UnaryOp::I0e>();
    case UnaryOp::I1:
      return f.template operator()<UnaryOp::I1>();
    case UnaryOp::I1e:
      return f.template operator()<UnaryOp::I1e>();
    case UnaryOp::Ndtri:
      return f.template operator()<UnaryOp::Ndtri>();
    case UnaryOp::BesselJ0:
      return f.template operator()<UnaryOp::BesselJ0>();
    case UnaryOp::BesselJ1:
      return f.template operator()<UnaryOp::BesselJ1>();
    case UnaryOp::BesselY0:
      return f.template operator()<UnaryOp::BesselY0>();
    case UnaryOp::BesselY1:
      return f.template operator()<UnaryOp::BesselY1>();
    case UnaryOp::BesselK0:
      return f.template operator()<UnaryOp::BesselK0>();
    case UnaryOp::BesselK1:
      return f.template operator()<UnaryOp::BesselK1>();
    case UnaryOp::BesselK0e:
      return f.template operator()<UnaryOp::BesselK0e>();
    case UnaryOp::BesselK1e:
      return f.template operator()<UnaryOp::BesselK1e>();
    case UnaryOp::SphericalBesselJ0:
      return f.template operator()<UnaryOp::SphericalBesselJ0>();
    case UnaryOp::FrexpMantissa:
      return f.template operator()<UnaryOp::FrexpMantissa>();
    case UnaryOp::FrexpExponent:
      return f.template operator()<UnaryOp::FrexpExponent>();
    case UnaryOp::AiryAi:
      return f.template operator()<UnaryOp::AiryAi>();
    case UnaryOp::AiryAiPrime:
      return f.template operator()<UnaryOp::AiryAiPrime>();
  }
  LG_THROW(Error, "CUDA elementwise: unknown unary op ", static_cast<int>(op));
}

template <typename F>
void dispatch_compare_op(CompareOp op, F&& f) {
  switch (op) {
    case CompareOp::Gt:
      return f.template operator()<CompareOp::Gt>();
    case CompareOp::Lt:
      return f.template operator()<CompareOp::Lt>();
    case CompareOp::Ge:
      return f.template operator()<CompareOp::Ge>();
    case CompareOp::Le:
      return f.template operator()<CompareOp::Le>();
    case CompareOp::Eq:
      return f.template operator()<CompareOp::Eq>();
    case CompareOp::Ne:
      return f.template operator()<CompareOp::Ne>();
  }
  LG_THROW(Error, "CUDA elementwise: unknown compare op ", static_cast<int>(op));
}

}  // namespace

// ---- Launchers -------------------------------------------------------------------------------

void binary(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
            const void* b) {
  dispatch_binary_op(op, [&]<BinaryOp kOp>() {
    dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
      launch_elementwise(g, BinaryFunctor<kOp, T>{}, static_cast<T*>(out), static_cast<const T*>(a),
                         static_cast<const T*>(b));
    });
  });
}

void binary_scalar(BinaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a,
                   double s, bool scalar_first) {
  dispatch_binary_op(op, [&]<BinaryOp kOp>() {
    dispatch_binary_dtype<kOp>(dtype, [&]<typename T>() {
      const opmath_t<T> scalar = cast_value<opmath_t<T>>(s);
      launch_elementwise(g, BinaryScalarFunctor<kOp, T>{scalar, scalar_first, pow_exponent_kind(s)},
                         static_cast<T*>(out), static_cast<const T*>(a));
    });
  });
}

void unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out, const void* a) {
  dispatch_unary_op(op, [&]<UnaryOp kOp>() {
    const auto launch = [&]<typename T>() {
      launch_elementwise(g, UnaryFunctor<kOp, T>{}, static_cast<T*>(out), static_cast<const T*>(a));
    };
    // exp, log, ... exist only for floating types (ops::unary computes integers in float32).
    if constexpr (is_floating_only(kOp)) {
      dispatch_floating(dtype, op_name(op), launch);
    } else {
      dispatch_numeric(dtype, op_name(op), launch);
    }
  });
}

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

void compare(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out, const void* a,
             const void* b) {
  dispatch_all(dtype, op_name(op), [&]<typename T>() {
    dispatch_compare_op(op, [&]<CompareOp kOp>() {
      launch_elementwise(g, CompareFunctor<kOp, T>{}, out, static_cast<const T*>(a),
                         static_cast<const T*>(b));
    });
  });
}

void compare_scalar(CompareOp op, DType dtype, const ElementwiseGeometry& g, bool* out,
                    const void* a, double s) {
  dispatch_all(dtype, op_name(op), [&]<typename T>() {
    const T scalar = cast_value<T>(s);
    dispatch_compare_op(op, [&]<CompareOp kOp>() {
      launch_elementwise(g, CompareScalarFunctor<kOp, T>{scalar}, out, static_cast<const T*>(a));
    });
  });
}

void where(DType dtype, const ElementwiseGeometry& g, void* out, const bool* cond, const void* a,
           const void* b) {
  dispatch_all(dtype, "where", [&]<typename T>() {
    launch_elementwise(g, WhereFunctor<T>{}, static_cast<T*>(out), cond, static_cast<const T*>(a),
                       static_cast<const T*>(b));
  });
}

void cast(DType out_dtype, DType in_dtype, const ElementwiseGeometry& g, void* out,
          const void* in) {
  dispatch_all(out_dtype, "cast", [&]<typename To>() {
    dispatch_all(in_dtype, "cast", [&]<typename From>() {
      launch_elementwise(g, CastFunctor<To, From>{}, static_cast<To*>(out),
                         static_cast<const From*>(in));
    });
  });
}

void fill(DType dtype, const ElementwiseGeometry& g, void* out, double value) {
  dispatch_all(dtype, "fill", [&]<typename T>() {
    launch_elementwise(g, FillFunctor<T>{cast_value<T>(value)}, static_cast<T*>(out));
  });
}

}  // namespace leangrad::kernels::cuda
