// ZeroRedundancyOptimizer scenarios run by every rank of a multi-process test (dist_worker
// zero_*). The reference is the wrapped optimizer itself, run whole on every rank over a replica
// that gets the same gradients: a ZeRO step updates each parameter with the same kernel on the
// same values (on its owner) and copies the result to the others, so parameters and states are
// compared bitwise.
#include "distributed/ddp_scenarios.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/data/safetensors.h>
#include <leangrad/distributed/ddp.h>
#include <leangrad/distributed/distributed.h>
#include <leangrad/distributed/zero_redundancy_optimizer.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/optim/optim.h>
#include "testing/tensor_testing.h"

namespace dist = leangrad::distributed;

namespace leangrad::test {
namespace {

constexpr std::int64_t kBatchPerRank = 16;
constexpr std::uint64_t kModelSeed = 2000;

// Parameters of 5120, 256, 16384, 64, 640 and 10 elements: the partition gives the ranks unequal
// counts, and Adam8bit quantises the large ones (at least 4096 elements) and not the small.
std::shared_ptr<nn::Module> make_model(std::uint64_t seed) {  // (N, 20) -> (N, 10)
  manual_seed(seed);
  return nn::Sequential(nn::Linear(20, 256), nn::ReLU(), nn::Linear(256, 64), nn::Tanh(),
                        nn::Linear(64, 10));
}

struct Batch {
  Tensor x, y;
};

// Step `step`'s global batch (the same on every rank), or this rank's rows of it.
Batch batch_of(int step, bool this_ranks_rows) {
  const int size = dist::get_world_size();
  const std::int64_t n = kBatchPerRank * size;
  manual_seed(7000 + static_cast<std::uint64_t>(step));
  const Tensor x = randn({n, 20});
  std::vector<double> labels;
  for (std::int64_t i = 0; i < n; ++i)
    labels.push_back(static_cast<double>((i * 3 + step) % 10));
  const Tensor y = make_tensor(labels, {n}, kInt64);
  if (!this_ranks_rows) return {x, y};
  const std::int64_t begin = dist::get_rank() * kBatchPerRank;
  return {x.slice(0, begin, begin + kBatchPerRank).contiguous(),
          y.slice(0, begin, begin + kBatchPerRank).contiguous()};
}

dist::OptimizerFactory factory_of(const std::string& kind) {
  if (kind == "adam") return dist::optimizer_class<optim::Adam>(optim::AdamOptions(1e-2));
  if (kind == "adamw")
    return dist::optimizer_class<optim::AdamW>(optim::AdamWOptions(1e-2).weight_decay(0.1));
  if (kind == "sgd")
    return dist::optimizer_class<optim::SGD>(
        optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-3));
  if (kind == "radam") return dist::optimizer_class<optim::RAdam>(optim::RAdamOptions(1e-2));
  if (kind == "adam8bit")
    return dist::optimizer_class<optim::Adam8bit>(optim::Adam8bitOptions(1e-2));
  LG_THROW(Error, "unknown optimizer kind ", kind);
}

void check_bitwise(const std::vector<Tensor>& ours, const std::vector<Tensor>& theirs,
                   const std::string& when) {
  check(ours.size() == theirs.size(), when + ": the parameter lists differ in length");
  for (std::size_t i = 0; i < ours.size(); ++i) {
    check(to_vector(ours[i]) == to_vector(theirs[i]),
          detail::str_cat(when, ": parameter ", i, " ", ours[i].shape(),
                          " differs from the plain optimizer's; largest difference ",
                          max_abs(ours[i] - theirs[i])));
  }
}

std::int64_t state_elements(const optim::Optimizer& opt) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < opt.num_params(); ++i)
    for (const auto& [name, t] : opt.state(i).tensors)
      n += t.numel();
  return n;
}

// DistributedDataParallel on every rank's rows, stepped by the plain optimizer of `kind` and,
// on a second replica, by a ZeroRedundancyOptimizer wrapping it, with a StepLR on each: bitwise
// the same parameters after every step, each parameter's state on its owner only (and bitwise
// the plain one's there), and the ranks' states adding up to one plain optimizer's.
void equal_to_wrapped(const std::string& kind, Device device) {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  auto on_device = [&](std::shared_ptr<nn::Module> m) {
    m->to(device);
    return m;
  };
  auto plain_ddp =
      std::make_shared<dist::DistributedDataParallel>(on_device(make_model(kModelSeed + rank)));
  auto zero_ddp =
      std::make_shared<dist::DistributedDataParallel>(on_device(make_model(kModelSeed + 7 * rank)));
  const dist::OptimizerFactory make = factory_of(kind);
  std::unique_ptr<optim::Optimizer> plain = make({optim::ParamGroup(plain_ddp->parameters())});
  dist::ZeroRedundancyOptimizer zero(zero_ddp->parameters(), make);
  optim::StepLR plain_schedule(*plain, 2, 0.5);
  optim::StepLR zero_schedule(zero, 2, 0.5);
  check_bitwise(zero_ddp->parameters(), plain_ddp->parameters(), "after construction");
  for (int step = 0; step < 6; ++step) {
    Batch mine = batch_of(step, /*this_ranks_rows=*/true);
    mine = {mine.x.to(device), mine.y.to(device)};
    plain->zero_grad();
    cross_entropy(plain_ddp->forward(mine.x), mine.y).backward();
    plain->step();
    plain_schedule.step();
    zero.zero_grad();
    cross_entropy(zero_ddp->forward(mine.x), mine.y).backward();
    zero.step();
    zero_schedule.step();
    check_bitwise(zero_ddp->parameters(), plain_ddp->parameters(),
                  kind + " after step " + std::to_string(step));
  }
  std::int64_t owned = 0;
  for (std::size_t i = 0; i < zero.num_params(); ++i) {
    const optim::ParamState ours = zero.state(i);
    const optim::ParamState theirs = plain->state(i);
    check(ours.step == theirs.step, "parameter " + std::to_string(i) + ": step counts differ");
    if (zero.owner(i) != rank) {  // what the wrapped optimizer holds, not what ZeRO shows
      check(ours.tensors.empty() && zero.local_optimizer().state(i).tensors.empty(),
            detail::str_cat("rank ", rank, " keeps a state of parameter ", i, ", which rank ",
                            zero.owner(i), " owns"));
      continue;
    }
    ++owned;
    check(ours.tensors.size() == theirs.tensors.size(),
          "parameter " + std::to_string(i) + ": another number of state tensors");
    for (std::size_t k = 0; k < ours.tensors.size(); ++k) {
      check(ours.tensors[k].first == theirs.tensors[k].first &&
                to_vector(ours.tensors[k].second) == to_vector(theirs.tensors[k].second),
            detail::str_cat("parameter ", i, ": state '", theirs.tensors[k].first,
                            "' differs from the plain optimizer's"));
    }
  }
  const std::int64_t held = state_elements(zero.local_optimizer());
  check(held == state_elements(zero), "the wrapped optimizer holds states ZeRO does not show");
  Tensor total = full({1}, static_cast<double>(held), TensorOptions(kInt64));
  dist::all_reduce(total);
  check(total.item<std::int64_t>() == state_elements(*plain),
        detail::str_cat("the ranks' states hold ", total.item<std::int64_t>(),
                        " elements, one plain optimizer's ", state_elements(*plain)));
  std::printf(
      "zero %s on %d ranks (%s): rank %d owns %lld of %zu parameters, %lld of %lld state "
      "elements; bitwise the plain optimizer after 6 steps\n",
      kind.c_str(), size, device.str().c_str(), rank, static_cast<long long>(owned),
      zero.num_params(), static_cast<long long>(state_elements(zero)),
      static_cast<long long>(state_elements(*plain)));
}

// amp::GradScaler over the ZeRO optimizer and over the plain one: the same scale, the same
// parameters, and step 2, whose loss is made infinite, skipped by both (found_inf decided on the
// device, step_unless).
void with_grad_scaler() {
  const int rank = dist::get_rank();
  auto plain_model = make_model(kModelSeed);
  auto zero_model = make_model(kModelSeed);
  optim::Adam plain(plain_model->parameters(), optim::AdamOptions(1e-2));
  dist::ZeroRedundancyOptimizer zero(zero_model->parameters(),
                                     dist::optimizer_class<optim::Adam>(optim::AdamOptions(1e-2)));
  amp::GradScaler plain_scaler, zero_scaler;
  for (int step = 0; step < 4; ++step) {
    const Batch all = batch_of(step, /*this_ranks_rows=*/false);  // every rank: the same gradients
    const double factor = step == 2 ? std::numeric_limits<double>::infinity() : 1.0;
    std::vector<Tensor> before;
    for (const Tensor& p : zero_model->parameters())
      before.push_back(p.detach().clone());
    plain.zero_grad();
    plain_scaler.scale(cross_entropy(plain_model->forward(all.x), all.y) * factor).backward();
    plain_scaler.step(plain);
    plain_scaler.update();
    zero.zero_grad();
    zero_scaler.scale(cross_entropy(zero_model->forward(all.x), all.y) * factor).backward();
    zero_scaler.step(zero);
    zero_scaler.update();
    const std::string when = "GradScaler step " + std::to_string(step);
    check_bitwise(zero_model->parameters(), plain_model->parameters(), when);
    check(zero_scaler.get_scale() == plain_scaler.get_scale(), when + ": the scales differ");
    if (step == 2) check_bitwise(zero_model->parameters(), before, when + " (skipped)");
  }
  for (std::size_t i = 0; i < zero.num_params(); ++i) {
    check(zero.state(i).step == 3 && plain.state(i).step == 3,
          detail::str_cat("parameter ", i, " (owned by rank ", zero.owner(i), ") counts ",
                          zero.state(i).step, " steps, the plain Adam ", plain.state(i).step,
                          ": the skipped step was counted"));
  }
  std::printf(
      "zero with GradScaler: rank %d, bitwise the plain Adam, the infinite step skipped, "
      "scale %g\n",
      rank, zero_scaler.get_scale());
}

// A directory every rank of this job names alike (the job's port is in it).
std::filesystem::path job_directory() {
  const char* port = std::getenv("MASTER_PORT");
  return std::filesystem::temp_directory_path() /
         detail::str_cat("leangrad_zero_", port != nullptr ? port : "0");
}

// The state dict spread over the ranks: refused without consolidation except on a group of one;
// consolidated on rank 0 it is bitwise the plain Adam's; this rank's local one and the whole one
// both load into a new ZeroRedundancyOptimizer that then steps as the plain one; another rank's
// local one is refused, naming the state missing.
void state_dict() {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  const auto make = dist::optimizer_class<optim::Adam>(optim::AdamOptions(1e-2).amsgrad(true));
  auto plain_model = make_model(kModelSeed);
  auto zero_model = make_model(kModelSeed);
  std::unique_ptr<optim::Optimizer> plain = make({optim::ParamGroup(plain_model->parameters())});
  dist::ZeroRedundancyOptimizer zero(zero_model->parameters(), make);
  auto train = [](nn::Module& model, optim::Optimizer& opt, int step) {
    const Batch all = batch_of(step, /*this_ranks_rows=*/false);
    opt.zero_grad();
    cross_entropy(model.forward(all.x), all.y).backward();
    opt.step();
  };
  for (int step = 0; step < 3; ++step) {
    train(*plain_model, *plain, step);
    train(*zero_model, zero, step);
  }
  if (size > 1) {
    try {
      (void)zero.state_dict();
      check(false, "state_dict without consolidate_state_dict did not throw");
    } catch (const Error& e) {
      check(std::string(e.what()).find("consolidate_state_dict(to) on every rank first") !=
                std::string::npos,
            std::string("unexpected message: ") + e.what());
    }
  }
  zero.consolidate_state_dict(0);
  // The local dict is this rank's share, also where the consolidated copies are held.
  for (const auto& [key, t] : zero.local_state_dict()) {
    if (key.rfind("state.", 0) != 0 || key.size() < 5 ||
        key.compare(key.size() - 5, 5, ".step") == 0)
      continue;
    const std::size_t i = std::stoull(key.substr(6, key.find('.', 6) - 6));
    check(zero.owner(i) == rank, detail::str_cat("local_state_dict on rank ", rank, " holds ", key,
                                                 " of rank ", zero.owner(i)));
  }
  if (rank == 0) {
    const NamedTensors ours = zero.state_dict();
    const NamedTensors theirs = plain->state_dict();
    check(ours.size() == theirs.size(), detail::str_cat("the consolidated dict has ", ours.size(),
                                                        " entries, the plain ", theirs.size()));
    for (std::size_t k = 0; k < ours.size() && k < theirs.size(); ++k) {
      check(ours[k].first == theirs[k].first &&
                ours[k].second.dtype() == theirs[k].second.dtype() &&
                to_vector(ours[k].second) == to_vector(theirs[k].second),
            "consolidated entry " + ours[k].first + " differs from the plain " + theirs[k].first);
    }
  } else {
    try {
      (void)zero.state_dict();
      check(false, "state_dict on a rank other than `to` did not throw");
    } catch (const Error&) {
      ++scenario_checks();
    }
  }
  // Both kinds of dict load, and training goes on as the plain optimizer's.
  auto local_model = make_model(kModelSeed);
  auto whole_model = make_model(kModelSeed);
  local_model->load_state_dict(plain_model->state_dict());
  whole_model->load_state_dict(plain_model->state_dict());
  dist::ZeroRedundancyOptimizer from_local(local_model->parameters(), make);
  dist::ZeroRedundancyOptimizer from_whole(whole_model->parameters(), make);
  from_local.load_state_dict(zero.local_state_dict());
  from_whole.load_state_dict(plain->state_dict());
  for (int step = 3; step < 5; ++step) {
    train(*plain_model, *plain, step);
    train(*zero_model, zero, step);
    train(*local_model, from_local, step);
    train(*whole_model, from_whole, step);
    const std::string when = "after step " + std::to_string(step);
    check_bitwise(zero_model->parameters(), plain_model->parameters(), when + " (the original)");
    check_bitwise(local_model->parameters(), plain_model->parameters(),
                  when + " (loaded from its local state dict)");
    check_bitwise(whole_model->parameters(), plain_model->parameters(),
                  when + " (loaded from the whole state dict)");
  }
  // Another rank's local dict lacks the states of this rank's parameters.
  if (size > 1) {
    const std::filesystem::path dir = job_directory();
    std::filesystem::create_directories(dir);
    save_safetensors((dir / detail::str_cat("rank", rank, ".safetensors")).string(),
                     zero.local_state_dict(), {});
    dist::barrier();
    const NamedTensors other = load_safetensors(
        (dir / detail::str_cat("rank", (rank + 1) % size, ".safetensors")).string());
    dist::ZeroRedundancyOptimizer wrong(make_model(kModelSeed)->parameters(), make);
    try {
      wrong.load_state_dict(other);
      check(false, "loading another rank's local state dict did not throw");
    } catch (const Error& e) {
      std::printf("CAUGHT: %s\n", e.what());
    }
    dist::barrier();
    if (rank == 0) std::filesystem::remove_all(dir);
  }
  std::printf("zero state dict on %d ranks: consolidated, local and whole dicts bitwise\n", size);
}

// Ranks that pass other parameters are named on every rank, before any step.
void mismatch(const std::string& how) {
  const int rank = dist::get_rank();
  std::vector<Tensor> params = make_model(kModelSeed)->parameters();
  if (rank == 1 && how == "count") params.pop_back();
  if (rank == 1 && how == "shape") params[1] = randn({128, 2}).requires_grad_();
  try {
    dist::ZeroRedundancyOptimizer zero(params,
                                       dist::optimizer_class<optim::Adam>(optim::AdamOptions()));
    check(false, "different parameters on the ranks did not throw");
  } catch (const Error& e) {
    std::printf("CAUGHT: %s\n", e.what());
  }
  dist::barrier();  // the group still works
}

// Ranks whose gradients differ: `subset`, each rank has gradients on its own half of the
// parameters (a parameter unused on one rank); `one`, rank 0 alone has any. SGD with lr 1 and a
// gradient of ones: a parameter whose owner had its gradient goes down by 1 on every rank, any
// other keeps its value on every rank. Before the broadcasts followed the partition, the ranks
// paired other parameters' bytes without an error (`subset`), or one rank raised and the other
// went on (`one`).
void different_gradients(const std::string& how) {
  const int rank = dist::get_rank();
  const int size = dist::get_world_size();
  const std::vector<Tensor> params = make_model(kModelSeed)->parameters();
  std::vector<Tensor> before;
  for (const Tensor& p : params)
    before.push_back(p.detach().clone());
  dist::ZeroRedundancyOptimizer zero(params,
                                     dist::optimizer_class<optim::SGD>(optim::SGDOptions(1.0)));
  // Whether `r` has a gradient on parameter i.
  const auto has_grad = [&](int r, std::size_t i) {
    return how == "subset" ? static_cast<int>(i % static_cast<std::size_t>(size)) == r : r == 0;
  };
  for (std::size_t i = 0; i < params.size(); ++i)
    if (has_grad(rank, i)) params[i].set_grad(ones_like(params[i]));
  zero.step();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const bool updated = has_grad(zero.owner(i), i);
    const Tensor want = updated ? before[i] - 1.0 : before[i];
    check(params[i].detach().equal(want),
          detail::str_cat(how, ": parameter ", i, " (owner rank ", zero.owner(i), ") is not ",
                          updated ? "its owner's update" : "unchanged", " on rank ", rank));
    // And the same bits on every rank.
    const std::vector<Tensor> replicas = dist::all_gather(params[i].detach().contiguous());
    for (int r = 0; r < size; ++r)
      check(replicas[static_cast<std::size_t>(r)].equal(replicas[0]),
            detail::str_cat(how, ": parameter ", i, " differs between ranks 0 and ", r));
  }
  std::printf("zero %s gradients: every parameter its owner's on every rank\n", how.c_str());
}

}  // namespace

int run_zero_scenario(const std::string& name) {
  scenario_checks() = 0;
  const std::string equal = "zero_equal_";
  if (name == "zero_equal_adam_cuda") {
    equal_to_wrapped("adam", Device::cuda(0));  // both ranks on cuda:0, over Gloo
  } else if (name.rfind(equal, 0) == 0) {
    equal_to_wrapped(name.substr(equal.size()), Device::cpu());
  } else if (name == "zero_grad_scaler") {
    with_grad_scaler();
  } else if (name == "zero_state_dict") {
    state_dict();
  } else if (name == "zero_mismatch_count") {
    mismatch("count");
  } else if (name == "zero_mismatch_shape") {
    mismatch("shape");
  } else if (name == "zero_gradients_subset") {
    different_gradients("subset");
  } else if (name == "zero_gradients_one") {
    different_gradients("one");
  } else {
    LG_THROW(Error, "unknown ZeRO scenario ", name);
  }
  return scenario_checks();
}

}  // namespace leangrad::test
