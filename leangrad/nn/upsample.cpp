// nn::Upsample (nn/upsample.h).
#include <leangrad/nn/upsample.h>

#include <sstream>

#include <leangrad/core/error.h>

namespace leangrad::nn {

namespace {

// One value for both dims, or (height, width).
template <typename T>
std::array<T, 2> pair_of(const std::vector<T>& v, const char* name) {
  LG_CHECK(v.size() == 1 || v.size() == 2, "Upsample: expected ", name,
           " of 1 or 2 values (height, width), got ", v.size());
  return {v[0], v.back()};
}

template <typename T>
void print_values(std::ostream& out, const std::vector<T>& v) {
  out << "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out << (i > 0 ? ", " : "") << v[i];
  out << "]";
}

}  // namespace

UpsampleImpl::UpsampleImpl(const UpsampleOptions& options) : Module("Upsample"), options_(options) {
  LG_CHECK(options.size().has_value() != options.scale_factor().has_value(),
           "Upsample: expected exactly one of size and scale_factor, got ",
           options.size().has_value() ? "both" : "neither");
  if (options.size().has_value()) pair_of(*options.size(), "size");
  if (options.scale_factor().has_value()) pair_of(*options.scale_factor(), "scale_factor");
  LG_CHECK(options.mode() == kBilinear || options.mode() == kBicubic ||
               !options.align_corners().has_value(),
           "Upsample: align_corners can only be set with the interpolating modes bilinear and "
           "bicubic, not ",
           interpolate_mode_name(options.mode()));
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  std::optional<Size2> size;
  std::optional<Scale2> scale_factor;
  if (options_.size().has_value()) size = pair_of(*options_.size(), "size");
  if (options_.scale_factor().has_value())
    scale_factor = pair_of(*options_.scale_factor(), "scale_factor");
  return interpolate(input, size, scale_factor, options_.mode(), options_.align_corners());
}

std::string UpsampleImpl::extra_repr() const {
  std::ostringstream out;
  if (options_.size().has_value()) {
    out << "size=";
    print_values(out, *options_.size());
  } else {
    out << "scale_factor=";
    print_values(out, *options_.scale_factor());
  }
  out << ", mode=" << interpolate_mode_name(options_.mode());
  if (options_.align_corners().has_value())
    out << ", align_corners=" << (*options_.align_corners() ? "true" : "false");
  return out.str();
}

}  // namespace leangrad::nn
