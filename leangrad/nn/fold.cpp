// nn::Unfold and nn::Fold (nn/fold.h).
#include <leangrad/nn/fold.h>

#include <sstream>

namespace leangrad::nn {

namespace {

std::string pair_str(Size2 s) {
  std::ostringstream out;
  out << "(" << s[0] << ", " << s[1] << ")";
  return out.str();
}

}  // namespace

UnfoldImpl::UnfoldImpl(const UnfoldOptions& options) : Module("Unfold"), options(options) {}

Tensor UnfoldImpl::forward(const Tensor& input) {
  return unfold(input, options.kernel_size(), options.dilation(), options.padding(),
                options.stride());
}

std::string UnfoldImpl::extra_repr() const {
  return "kernel_size=" + pair_str(options.kernel_size()) +
         ", dilation=" + pair_str(options.dilation()) + ", padding=" + pair_str(options.padding()) +
         ", stride=" + pair_str(options.stride());
}

FoldImpl::FoldImpl(const FoldOptions& options) : Module("Fold"), options(options) {}

Tensor FoldImpl::forward(const Tensor& input) {
  return fold(input, options.output_size(), options.kernel_size(), options.dilation(),
              options.padding(), options.stride());
}

std::string FoldImpl::extra_repr() const {
  return "output_size=" + pair_str(options.output_size()) +
         ", kernel_size=" + pair_str(options.kernel_size()) +
         ", dilation=" + pair_str(options.dilation()) + ", padding=" + pair_str(options.padding()) +
         ", stride=" + pair_str(options.stride());
}

}  // namespace leangrad::nn
