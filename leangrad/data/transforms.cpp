// Normalize's checks and arithmetic (data/transforms.h).
#include <leangrad/data/transforms.h>

#include <cmath>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>

namespace leangrad::data::transforms {

void check_normalize(const std::vector<double>& mean, const std::vector<double>& stddev) {
  LG_CHECK(!mean.empty() && mean.size() == stddev.size(),
           "transforms::Normalize: expected as many means as standard deviations (at least one), "
           "got ",
           mean.size(), " and ", stddev.size());
  for (std::size_t c = 0; c < mean.size(); ++c) {
    LG_CHECK(std::isfinite(mean[c]) && std::isfinite(stddev[c]) && stddev[c] > 0,
             "transforms::Normalize: channel ", c, " has mean ", mean[c], " and stddev ", stddev[c],
             "; expected finite values and stddev > 0");
  }
}

Tensor normalize(const Tensor& data, const std::vector<double>& mean,
                 const std::vector<double>& stddev) {
  LG_CHECK(data.defined(), "transforms::Normalize: the example has no data");
  LG_CHECK_DTYPE(is_floating(data.dtype()), "transforms::Normalize: expected floating data, got ",
                 data.dtype(), " (convert it first, e.g. with .to(kFloat32))");
  NoGradGuard no_grad;  // data preparation, not part of a model's graph
  if (mean.size() == 1) return (data - mean[0]) / stddev[0];
  const auto channels = static_cast<std::int64_t>(mean.size());
  LG_CHECK_SHAPE(data.dim() >= 1 && data.size(0) == channels, "transforms::Normalize: ", channels,
                 " channel means for data of shape ", data.shape(),
                 " (expected (C, ...) with C = ", channels, ")");
  // (C, 1, ..., 1): one value per channel, broadcast over the rest.
  Shape per_channel(static_cast<std::size_t>(data.dim()), 1);
  per_channel[0] = channels;
  const Tensor m = tensor(mean, {channels}).to(data.dtype()).to(data.device()).reshape(per_channel);
  const Tensor s =
      tensor(stddev, {channels}).to(data.dtype()).to(data.device()).reshape(per_channel);
  return (data - m) / s;
}

}  // namespace leangrad::data::transforms
