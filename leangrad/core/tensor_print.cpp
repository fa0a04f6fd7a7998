// Printing tensors as PyTorch 1.13's repr does (torch/_tensor_str.py with its default print
// options), so a printed leangrad tensor reads like the PyTorch one: tensor([ 1.5000, -2.0000]),
// tensor([1., 2.]), tensor([[0, 1], ...]), dtype=float64, requires_grad=True.
//
// Note [PyTorch's print format]
//   - One formatter for the whole tensor, built from the elements that will be shown. Floating
//     dtypes: when every nonzero finite element is an integer, "int mode" prints "3." (with the
//     point, "nan"/"inf" without); otherwise 4 decimals ("%.4f"). Either switches to "%.4e" when
//     the largest nonzero finite magnitude over the smallest exceeds 1000 or the largest exceeds
//     1e8, and the decimal form also when the smallest is below 1e-4. Every element is padded on
//     the left to the widest nonzero finite one (integral and bool dtypes: the widest of all).
//   - Over 1000 elements, each dim of more than 6 shows its first and last 3 entries around
//     "..."; only those shown count for the formatter.
//   - A row wraps after floor((80 - indent) / (width + 2)) elements; rows of a matrix are
//     separated by one newline, blocks of higher dims by one more blank line per dim.
//   - Suffixes in PyTorch's order, each moved to a new line when it would pass column 80:
//     device (CUDA tensors), size (empty tensors of other than 1 dim) and dtype (empty tensors:
//     any but float32; otherwise any but float32, int64 and bool), then requires_grad=True for a
//     leaf that requires grad, or grad_fn=<MulBackward> for a tensor with history.
//   Differences: the dtype is written without PyTorch's "torch." (dtype=float64), and a node's
//   name is leangrad's, without the digit PyTorch appends to tell an op's overloads apart
//   (grad_fn=<MulBackward> where PyTorch prints <MulBackward0>). Sizes are Python tuples, as
//   PyTorch writes them (size=(2, 0)).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

namespace {

constexpr std::int64_t kSummarizeThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;
constexpr std::size_t kLineWidth = 80;

std::string printf_string(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, v);
  return buffer;
}

// Whether dim `d` of `shape` is shown as its first and last kEdgeItems entries.
bool elides(const Shape& shape, std::size_t d, bool summarize) {
  return summarize && shape[d] > 2 * kEdgeItems;
}

// The flat offsets (into a contiguous tensor of `shape`) of the elements that will be shown.
void shown_offsets(const Shape& shape, std::size_t d, std::int64_t flat, std::int64_t stride,
                   bool summarize, std::vector<std::int64_t>& out) {
  if (d == shape.size()) {
    out.push_back(flat);
    return;
  }
  const std::int64_t inner = stride / std::max<std::int64_t>(shape[d], 1);
  for (std::int64_t i = 0; i < shape[d]; ++i) {
    if (elides(shape, d, summarize) && i == kEdgeItems) i = shape[d] - kEdgeItems;
    shown_offsets(shape, d + 1, flat + i * inner, inner, summarize, out);
  }
}

// See Note [PyTorch's print format].
class Formatter {
 public:
  // values: contiguous on the CPU, float64 for floating dtypes, int64 for integral and bool.
  Formatter(const Tensor& values, bool floating, bool boolean,
            const std::vector<std::int64_t>& shown)
      : values_(values), floating_(floating), boolean_(boolean) {
    if (!floating_) {
      for (std::int64_t flat : shown)
        width_ = std::max(width_, plain(flat).size());
      return;
    }
    std::vector<double> nonzero_finite;
    for (std::int64_t flat : shown) {
      const double v = values_.data_ptr<double>()[flat];
      if (std::isfinite(v) && v != 0) nonzero_finite.push_back(v);
    }
    if (nonzero_finite.empty()) return;
    double min_abs = INFINITY;
    double max_abs = 0;
    for (double v : nonzero_finite) {
      if (v != std::ceil(v)) int_mode_ = false;
      min_abs = std::min(min_abs, std::fabs(v));
      max_abs = std::max(max_abs, std::fabs(v));
    }
    sci_mode_ = max_abs / min_abs > 1000.0 || max_abs > 1e8 || (!int_mode_ && min_abs < 1e-4);
    for (double v : nonzero_finite)
      width_ = std::max(width_, plain_float(v).size());
  }

  std::size_t width() const { return width_; }

  // The element at `flat`, padded on the left to the formatter's width.
  std::string format(std::int64_t flat) const {
    const std::string s = plain(flat);
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

 private:
  std::string plain(std::int64_t flat) const {
    if (floating_) return plain_float(values_.data_ptr<double>()[flat]);
    const std::int64_t v = values_.data_ptr<std::int64_t>()[flat];
    if (boolean_) return v != 0 ? "True" : "False";
    return std::to_string(v);
  }

  std::string plain_float(double v) const {
    if (std::isnan(v)) return "nan";  // never printf's "-nan"
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode_) return printf_string("%.4e", v);
    if (int_mode_) return printf_string("%.0f", v) + ".";
    return printf_string("%.4f", v);
  }

  const Tensor& values_;
  bool floating_;
  bool boolean_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t width_ = 1;
};

// PyTorch's _tensor_str_with_formatter: dims d.. of `values` starting at `flat`, whose first
// character is in column `indent` + 1.
std::string tensor_str(const Tensor& values, const Formatter& f, std::size_t d, std::int64_t flat,
                       std::size_t indent, bool summarize) {
  const Shape& shape = values.shape();
  if (d == shape.size()) return f.format(flat);
  const std::int64_t stride = values.strides()[d];
  std::vector<std::string> items;
  const bool last_dim = d + 1 == shape.size();
  for (std::int64_t i = 0; i < shape[d]; ++i) {
    if (elides(shape, d, summarize) && i == kEdgeItems) {
      items.push_back(last_dim ? " ..." : "...");
      i = shape[d] - kEdgeItems;
    }
    items.push_back(last_dim
                        ? f.format(flat + i * stride)
                        : tensor_str(values, f, d + 1, flat + i * stride, indent + 1, summarize));
  }
  std::string out = "[";
  if (last_dim) {
    const std::size_t per_line =
        std::max<std::size_t>(1, (kLineWidth - std::min(indent, kLineWidth)) / (f.width() + 2));
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += i % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      out += items[i];
    }
  } else {
    const std::string separator =
        "," + std::string(shape.size() - d - 1, '\n') + std::string(indent + 1, ' ');
    for (std::size_t i = 0; i < items.size(); ++i)
      out += (i > 0 ? separator : "") + items[i];
  }
  return out + "]";
}

// PyTorch's _add_suffixes: ", suffix" on the last line while it fits in 80 columns.
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes,
                         std::size_t indent) {
  // PyTorch's len(text) - text.rfind('\n') + 1 (rfind gives -1 when there is no newline).
  const std::size_t newline = text.rfind('\n');
  std::size_t last_line =
      newline == std::string::npos ? text.size() + 2 : text.size() - newline + 1;
  for (const std::string& suffix : suffixes) {
    if (last_line + suffix.size() + 2 > kLineWidth) {
      text += ",\n" + std::string(indent, ' ') + suffix;
      last_line = indent + suffix.size();
    } else {
      text += ", " + suffix;
      last_line += suffix.size() + 2;
    }
  }
  return text + ")";
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "Tensor()";
  const bool floating = is_floating(dtype());
  const std::string prefix = "tensor(";
  const std::size_t indent = prefix.size();
  std::vector<std::string> suffixes;
  if (device().is_cuda()) {
    std::ostringstream device_text;
    device_text << device();
    suffixes.push_back("device='" + device_text.str() + "'");
  }
  std::string body;
  if (numel() == 0) {
    // As PyTorch: no nested brackets (a size like [10^9, 0] would make a billion), the size
    // after them unless the tensor is 1-D, and the dtype unless it is the default.
    body = "[]";
    if (dim() != 1) {
      std::string size = "size=(";
      for (std::int64_t d = 0; d < dim(); ++d)
        size += (d > 0 ? ", " : "") + std::to_string(shape()[d]);
      suffixes.push_back(size + ")");
    }
    if (dtype() != kFloat32) suffixes.push_back(std::string("dtype=") + dtype_name(dtype()));
  } else {
    const Tensor host = to(Device::cpu()).to(floating ? kFloat64 : kInt64).contiguous();
    const bool summarize = numel() > kSummarizeThreshold;
    std::vector<std::int64_t> shown;
    shown_offsets(host.shape(), 0, 0, host.numel(), summarize, shown);
    const Formatter formatter(host, floating, dtype() == kBool, shown);
    body = tensor_str(host, formatter, 0, 0, indent, summarize);
    if (dtype() != kFloat32 && dtype() != kInt64 && dtype() != kBool) {
      suffixes.push_back(std::string("dtype=") + dtype_name(dtype()));
    }
  }
  if (const std::string node = autograd::grad_fn_name(*this); !node.empty()) {
    suffixes.push_back("grad_fn=<" + node + ">");
  } else if (requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  return out << t.str();
}

}  // namespace leangrad
