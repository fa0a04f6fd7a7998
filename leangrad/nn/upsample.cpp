// nn::Upsample (nn/upsample.h).
#include <leangrad/nn/upsample.h>

#include <sstream>

#include <leangrad/core/error.h>

namespace leangrad::nn {

namespace {

// One value for every spatial dim, or one per dim: (length), (height, width) or (depth, height,
// width).
template <typename T>
void check_values(const std::vector<T>& v, const char* name) {
  LG_CHECK(!v.empty() && v.size() <= 3, "Upsample: expected ", name,
           " of 1 to 3 values (one for every spatial dim, or one per dim), got ", v.size());
}

// `v` for an input of `dim` dims: one value repeated over its dim - 2 spatial dims; a list of
// another length goes on as it is, for interpolate to name the input it does not fit.
template <typename T>
std::vector<T> per_spatial_dim(const std::vector<T>& v, std::int64_t dim) {
  if (v.size() == 1 && dim >= 3) return std::vector<T>(static_cast<std::size_t>(dim - 2), v[0]);
  return v;
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
  if (options.size().has_value()) check_values(*options.size(), "size");
  if (options.scale_factor().has_value()) check_values(*options.scale_factor(), "scale_factor");
  const InterpolateMode mode = options.mode();
  LG_CHECK(mode == kBilinear || mode == kBicubic || mode == InterpolateMode::Linear ||
               mode == kTrilinear || !options.align_corners().has_value(),
           "Upsample: align_corners can only be set with the interpolating modes linear, "
           "bilinear, bicubic and trilinear, not ",
           interpolate_mode_name(mode));
}

Tensor UpsampleImpl::forward(const Tensor& input) {
  const std::int64_t dim = input.defined() ? input.dim() : 0;
  std::optional<std::vector<std::int64_t>> size;
  std::optional<std::vector<double>> scale_factor;
  if (options_.size().has_value()) size = per_spatial_dim(*options_.size(), dim);
  if (options_.scale_factor().has_value())
    scale_factor = per_spatial_dim(*options_.scale_factor(), dim);
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
