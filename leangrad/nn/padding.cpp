// The padding modules (nn/padding.h).
#include <leangrad/nn/padding.h>

#include <sstream>
#include <utility>

#include <leangrad/core/error.h>

namespace leangrad::nn {

PadImplBase::PadImplBase(const char* name, PadMode mode, std::size_t dims,
                         std::vector<std::int64_t> padding, double value, bool print_value)
    : Module(name),
      mode_(mode),
      dims_(dims),
      padding_(std::move(padding)),
      value_(value),
      print_value_(print_value) {}

Tensor PadImplBase::forward(const Tensor& input) {
  LG_CHECK(input.defined(), name(), ": expected a defined input, got an undefined Tensor()");
  const auto rank = static_cast<std::size_t>(input.dim());
  // PyTorch's reflection and replication take (C, *spatial) or (N, C, *spatial); a constant pad
  // takes any input with the dims it pads.
  const bool rank_ok =
      mode_ == kConstant ? rank >= dims_ : (rank == dims_ + 1 || rank == dims_ + 2);
  LG_CHECK_SHAPE(rank_ok, name(), ": expected ",
                 mode_ == kConstant
                     ? "at least " + std::to_string(dims_) + "-d"
                     : std::to_string(dims_ + 1) + "-d or " + std::to_string(dims_ + 2) + "-d",
                 " input, got shape ", input.shape());
  return pad(input, padding_, mode_, value_);
}

std::string PadImplBase::extra_repr() const {
  std::ostringstream out;
  if (print_value_) out << "padding=";
  out << "(";
  for (std::size_t i = 0; i < padding_.size(); ++i)
    out << (i > 0 ? ", " : "") << padding_[i];
  out << ")";
  if (print_value_) out << ", value=" << value_;
  return out.str();
}

}  // namespace leangrad::nn
