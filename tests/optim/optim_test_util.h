// Helpers shared by the optimizer tests (tests/optim): building an optimizer from a reference
// case's JSON description, and bitwise comparison of tensors.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include <leangrad/optim/optim.h>

namespace leangrad::test {

// params["optimizer"] in {sgd, adam, adamw, radam}; params["options"] as PyTorch's keyword
// arguments; params["groups"] (optional) [{"params": [indices], "lr": ..., "weight_decay": ...}].
inline std::unique_ptr<optim::Optimizer> make_optimizer(const nlohmann::json& params,
                                                        const std::vector<Tensor>& tensors) {
  const std::string kind = params.at("optimizer");
  const nlohmann::json& o = params.at("options");
  std::vector<optim::ParamGroup> groups;
  if (params.contains("groups")) {
    for (const nlohmann::json& g : params.at("groups")) {
      std::vector<Tensor> members;
      for (int index : g.at("params"))
        members.push_back(tensors[static_cast<std::size_t>(index)]);
      groups.emplace_back(members, g.at("lr").get<double>(), g.at("weight_decay").get<double>());
    }
  } else {
    groups.emplace_back(tensors);
  }
  const double lr = o.at("lr");
  const double wd = o.value("weight_decay", kind == "adamw" ? 1e-2 : 0.0);
  std::tuple<double, double> betas(0.9, 0.999);
  if (o.contains("betas")) betas = {o.at("betas")[0], o.at("betas")[1]};
  const double eps = o.value("eps", 1e-8);
  const bool amsgrad = o.value("amsgrad", false);
  const bool maximize = o.value("maximize", false);
  if (kind == "sgd") {
    return std::make_unique<optim::SGD>(groups, optim::SGDOptions(lr)
                                                    .momentum(o.value("momentum", 0.0))
                                                    .dampening(o.value("dampening", 0.0))
                                                    .weight_decay(wd)
                                                    .nesterov(o.value("nesterov", false))
                                                    .maximize(maximize));
  }
  if (kind == "adam") {
    return std::make_unique<optim::Adam>(
        groups,
        optim::AdamOptions(lr).betas(betas).eps(eps).weight_decay(wd).amsgrad(amsgrad).maximize(
            maximize));
  }
  if (kind == "adamw") {
    return std::make_unique<optim::AdamW>(
        groups,
        optim::AdamWOptions(lr).betas(betas).eps(eps).weight_decay(wd).amsgrad(amsgrad).maximize(
            maximize));
  }
  if (kind == "radam") {
    return std::make_unique<optim::RAdam>(
        groups, optim::RAdamOptions(lr).betas(betas).eps(eps).weight_decay(wd));
  }
  return nullptr;
}

// Same dtype, shape and bytes (CPU copies compared with memcmp).
inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ca = a.cpu().contiguous();
  const Tensor cb = b.cpu().contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

}  // namespace leangrad::test
