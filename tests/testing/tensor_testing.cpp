// Implementation of the shared test helpers (tests/testing/tensor_testing.h).
#include "testing/tensor_testing.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <sstream>

#include <leangrad/core/creation.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::test {
namespace {

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

bool close(double actual, double expected, double rtol, double atol) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return actual == expected;
  return std::fabs(actual - expected) <= atol + rtol * std::fabs(expected);
}

}  // namespace

std::int64_t storage_offset_of(const Tensor& t, std::int64_t i) {
  std::int64_t offset = 0;
  for (std::size_t d = t.shape().size(); d-- > 0;) {
    offset += (i % t.shape()[d]) * t.strides()[d];
    i /= t.shape()[d];
  }
  return offset;
}

std::vector<std::int64_t> unravel(std::int64_t i, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

Tensor make_tensor(const std::vector<double>& values, const Shape& shape, DType dtype) {
  Tensor t = empty(shape, TensorOptions(dtype));
  EXPECT_EQ(static_cast<std::size_t>(t.numel()), values.size())
      << "make_tensor: " << values.size() << " values for shape " << shape_str(shape);
  dispatch_all(dtype, "make_tensor", [&]<typename T>() {
    T* data = static_cast<T*>(t.data_ptr());
    for (std::size_t i = 0; i < values.size() && i < static_cast<std::size_t>(t.numel()); ++i) {
      data[i] = from_double<T>(values[i]);
    }
  });
  return t;
}

std::string error_message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<double> to_vector(const Tensor& t) {
  const Tensor host = t.device().is_cpu() ? t : t.cpu();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(host.numel()));
  dispatch_all(host.dtype(), "to_vector", [&]<typename T>() {
    const T* base = static_cast<const T*>(host.data_ptr());
    for (std::int64_t i = 0; i < host.numel(); ++i) {
      out.push_back(to_double(base[storage_offset_of(host, i)]));
    }
  });
  return out;
}

Tensor every_sixteen_bit_value(DType dtype, std::uint16_t shift) {
  LG_CHECK(dtype == kFloat16 || dtype == kBFloat16,
           "every_sixteen_bit_value: expected float16 or bfloat16, got ", dtype);
  Tensor t = empty({65536}, dtype);
  auto* bits = static_cast<std::uint16_t*>(t.data_ptr());
  for (std::uint32_t i = 0; i < 65536; ++i)
    bits[i] = static_cast<std::uint16_t>(i + shift);
  return t;
}

std::vector<std::uint16_t> sixteen_bit_patterns(const Tensor& t) {
  LG_CHECK(t.dtype() == kFloat16 || t.dtype() == kBFloat16,
           "sixteen_bit_patterns: expected float16 or bfloat16, got ", t.dtype());
  const Tensor host = t.device().is_cpu() ? t : t.cpu();
  const auto* base = static_cast<const std::uint16_t*>(host.data_ptr());
  std::vector<std::uint16_t> out;
  out.reserve(static_cast<std::size_t>(host.numel()));
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    out.push_back(base[storage_offset_of(host, i)]);
  }
  return out;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (const double x : to_vector(t))
    m = std::max(m, std::abs(x));
  return m;
}

double math_unit_roundoff(DType dtype) {
  return dtype == DType::Float64 ? 0x1p-53 : 0x1p-24;
}

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::Float64:
      return {1e-12, 1e-12};
    case DType::Float32:
      return {1e-5, 1e-6};
    case DType::Float16:
      return {1e-3, 1e-4};
    case DType::BFloat16:
      return {8e-3, 1e-3};
    default:
      return {0, 0};
  }
}

::testing::AssertionResult all_close(const Tensor& t, const std::vector<double>& expected,
                                     double rtol, double atol) {
  if (!t.defined()) return ::testing::AssertionFailure() << "tensor is undefined";
  const std::vector<double> actual = to_vector(t);
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "tensor of shape " << shape_str(t.shape()) << " has " << actual.size()
           << " elements, expected " << expected.size();
  }
  std::size_t mismatches = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (!close(actual[i], expected[i], rtol, atol)) {
      if (mismatches == 0) first = i;
      ++mismatches;
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  std::ostringstream message;
  message.precision(17);
  message << "first mismatch at index " << first << " "
          << shape_str(unravel(static_cast<std::int64_t>(first), t.shape())) << ": actual "
          << actual[first] << ", expected " << expected[first] << " (rtol " << rtol << ", atol "
          << atol << "); " << mismatches << " of " << actual.size()
          << " elements differ; tensor shape " << shape_str(t.shape()) << ", dtype "
          << dtype_name(t.dtype());
  return ::testing::AssertionFailure() << message.str();
}

::testing::AssertionResult all_close(const Tensor& t, const std::vector<double>& expected) {
  const Tolerance tol = tolerance_for(t.defined() ? t.dtype() : DType::Float32);
  return all_close(t, expected, tol.rtol, tol.atol);
}

::testing::AssertionResult matches_within_roundoff(const Tensor& got, const Tensor& want,
                                                   const std::vector<NamedInput>& inputs,
                                                   const RoundoffMatch& match) {
  if (!got.defined() || !want.defined())
    return ::testing::AssertionFailure() << "got or the reference is an undefined tensor";
  const std::vector<double> g = to_vector(got), e = to_vector(want);
  if (g.size() != e.size()) {
    return ::testing::AssertionFailure()
           << "got has " << g.size() << " elements, the reference " << e.size();
  }
  std::vector<std::vector<double>> in;
  for (const NamedInput& input : inputs) {
    in.push_back(to_vector(input.values));
    if (in.back().size() != g.size()) {
      return ::testing::AssertionFailure() << "input " << input.name << " has " << in.back().size()
                                           << " elements, got " << g.size();
    }
  }
  if (!match.bitwise && got.dtype() != DType::Float64 && got.dtype() != DType::Float32) {
    return ::testing::AssertionFailure()
           << "a roundoff bound is derived for float32 and float64 results, got "
           << dtype_name(got.dtype());
  }
  const double u = math_unit_roundoff(got.dtype());
  std::ostringstream failures;
  failures.precision(17);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    // Only finite magnitudes scale the bound: an infinite one would make it check nothing.
    double scale = std::isfinite(e[i]) ? std::max(1.0, std::abs(e[i])) : 1.0;
    for (const std::vector<double>& values : in)
      if (std::isfinite(values[i])) scale = std::max(scale, std::abs(values[i]));
    const double bound = match.ulps * u * scale;
    bool ok;
    if (match.bitwise) {
      ok = std::bit_cast<std::uint64_t>(g[i]) == std::bit_cast<std::uint64_t>(e[i]);
    } else if (!std::isfinite(e[i])) {
      ok = match.non_finite == NonFinite::MustMatch &&
           (std::isnan(e[i]) ? std::isnan(g[i]) : g[i] == e[i]);
    } else {
      ok = std::abs(g[i] - e[i]) <= bound;  // false for a NaN or infinite got
    }
    if (ok) continue;
    ++mismatches;
    failures << "\n  [" << i << "]";
    for (std::size_t k = 0; k < in.size(); ++k)
      failures << (k == 0 ? " at " : ", ") << inputs[k].name << " = " << in[k][i];
    failures << ": " << g[i] << " against the reference's " << e[i];
    if (!match.bitwise) failures << " (bound " << bound << ")";
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << mismatches << " of " << g.size() << " elements differ from the reference ";
  if (match.bitwise)
    failure << "bit for bit";
  else
    failure << "by more than " << match.ulps << " u of their scale";
  return failure << " (dtype " << dtype_name(got.dtype()) << "):" << failures.str();
}

void expect_close(const Tensor& t, const std::vector<double>& expected, double rtol, double atol) {
  EXPECT_TRUE(all_close(t, expected, rtol, atol));
}

void expect_close(const Tensor& t, const std::vector<double>& expected) {
  EXPECT_TRUE(all_close(t, expected));
}

}  // namespace leangrad::test
