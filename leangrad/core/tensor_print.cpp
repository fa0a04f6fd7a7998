// Printing tensors in PyTorch's style: tensor([[1.0000, 2.0000], ...], dtype=float64).
// Large tensors (over 1000 elements) show the first and last 3 entries of each dim.
#include <cmath>
#include <cstdio>
#include <sstream>

#include <leangrad/core/creation.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

namespace {

constexpr std::int64_t kSummarizeThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;

struct Printer {
  const Tensor& values;  // float64 (or int64 for integral/bool dtypes), contiguous, on the CPU
  bool integral;
  bool boolean;
  bool summarize;
  bool scientific;
  std::ostringstream out;

  std::string format(std::int64_t flat) {
    char buffer[64];
    if (boolean) return values.data_ptr<std::int64_t>()[flat] != 0 ? "True" : "False";
    if (integral) {
      std::snprintf(buffer, sizeof(buffer), "%lld",
                    static_cast<long long>(values.data_ptr<std::int64_t>()[flat]));
    } else {
      const double v = values.data_ptr<double>()[flat];
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      std::snprintf(buffer, sizeof(buffer), scientific ? "%.4e" : "%.4f", v);
    }
    return buffer;
  }

  void print(std::int64_t dim, std::int64_t flat, int indent) {
    const Shape& shape = values.shape();
    if (dim == static_cast<std::int64_t>(shape.size())) {
      out << format(flat);
      return;
    }
    const std::int64_t size = shape[dim];
    const std::int64_t stride = values.strides()[dim];
    const bool last_dim = dim + 1 == static_cast<std::int64_t>(shape.size());
    out << "[";
    for (std::int64_t i = 0; i < size; ++i) {
      if (summarize && size > 2 * kEdgeItems && i == kEdgeItems) {
        out << (last_dim ? "..., " : "...,\n" + std::string(indent + 1, ' '));
        i = size - kEdgeItems;
      }
      print(dim + 1, flat + i * stride, indent + 1);
      if (i + 1 < size) {
        out << (last_dim ? ", " : ",\n" + std::string(indent + 1, ' '));
      }
    }
    out << "]";
  }
};

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "Tensor()";
  const bool integral = is_integral(dtype(), /*include_bool=*/true);
  const Tensor host = to(Device::cpu()).to(integral ? kInt64 : kFloat64).contiguous();
  bool scientific = false;
  if (!integral) {
    double max_abs = 0, min_abs = INFINITY;
    for (std::int64_t i = 0; i < host.numel(); ++i) {
      const double v = std::fabs(host.data_ptr<double>()[i]);
      if (!std::isfinite(v)) continue;
      max_abs = std::max(max_abs, v);
      if (v > 0) min_abs = std::min(min_abs, v);
    }
    scientific = max_abs >= 1e8 || (min_abs < 1e-4 && min_abs != INFINITY);
  }
  Printer printer{host, integral, dtype() == kBool, numel() > kSummarizeThreshold, scientific, {}};
  printer.out << "tensor(";
  if (numel() == 0) {
    // As PyTorch: no nested brackets (a size like [10^9, 0] would make a billion), the size
    // after them unless the tensor is 1-D.
    printer.out << "[]";
    if (dim() != 1) printer.out << ", size=" << shape();
  } else {
    printer.print(0, 0, 7);
  }
  if (dtype() != kFloat32 && dtype() != kInt64 && dtype() != kBool) {
    printer.out << ", dtype=" << dtype_name(dtype());
  }
  if (device().is_cuda()) printer.out << ", device='" << device() << "'";
  printer.out << ")";
  return printer.out.str();
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  return out << t.str();
}

}  // namespace leangrad
