// leangrad-train in several processes (train_distributed.h).
#include "train_distributed.h"

#include <iostream>

#include <leangrad/core/cuda.h>
#include <leangrad/distributed/environment.h>

namespace leangrad::tools {

World join_world(const std::string& backend_option, Device& device, bool offload_params) {
  World world;
  const distributed::EnvironmentLookup lookup = distributed::process_environment();
  if (!lookup("RANK") && !lookup("OMPI_COMM_WORLD_RANK") && !lookup("SLURM_PROCID")) return world;
  const distributed::ProcessGroupConfig env =
      distributed::resolve_init_options(distributed::InitOptions(), lookup);
  if (env.world_size <= 1) return world;
  const std::string backend = !backend_option.empty()               ? backend_option
                              : device.is_cuda() && !offload_params ? "nccl"
                                                                    : "gloo";
  if (device.is_cuda() && env.local_rank >= 0) {
    // Gloo stages CUDA tensors through host memory, so ranks may share a GPU: local ranks beyond
    // the visible GPUs wrap around. NCCL refuses two ranks on one GPU (init_process_group says so).
    const int count = cuda::device_count();
    device = Device::cuda(backend == "gloo" && count > 0 ? env.local_rank % count : env.local_rank);
    // The rank's GPU current on this thread, as torch.cuda.set_device(local_rank) in a torchrun
    // script: what runs on the current device (a DataLoader without workers, a profiler span's
    // events) is on it, and no rank leaves a CUDA context on cuda:0 (since CUDA 12 restoring
    // cuda:0 after a DeviceGuard creates one there, a few hundred MiB for every rank).
    if (device.index < count) cuda::set_device(device.index);
  }
  LG_CHECK(backend == "gloo" || !offload_params,
           "--offload-params: the gradients are averaged in host memory, which --backend nccl "
           "cannot reduce (it takes CUDA tensors); use --backend gloo, the default with "
           "--offload-params");
  LG_CHECK(backend == "gloo" || device.is_cuda(),
           "--backend nccl takes CUDA tensors; train with --device cuda, or use --backend gloo");
  distributed::init_process_group(distributed::InitOptions().backend(
      backend == "nccl" ? distributed::Backend::NCCL : distributed::Backend::Gloo));
  world.rank = distributed::get_rank();
  world.size = distributed::get_world_size();
  if (!world.is_main()) std::cout.setstate(std::ios::badbit);  // Note [Several processes]
  return world;
}

std::vector<double> reduce_over_ranks(const World& world, std::vector<double> values, Device device,
                                      distributed::ReduceOp op) {
  if (world.size == 1) return values;
  Tensor t = tensor(values, {}, TensorOptions(device));
  distributed::all_reduce(t, op);
  const Tensor host = t.cpu();
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = host.data_ptr<double>()[i];
  return values;
}

}  // namespace leangrad::tools
