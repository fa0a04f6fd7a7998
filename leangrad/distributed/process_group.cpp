// The blocking collectives of ProcessGroup (process_group.h): each is its async form, waited
// for, so blocking and async calls run in the order they were made.
#include <leangrad/distributed/process_group.h>

namespace leangrad::distributed {

void ProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
  all_reduce_async(tensor, op)->wait();
}

void ProcessGroup::broadcast(const Tensor& tensor, int root) {
  broadcast_async(tensor, root)->wait();
}

std::vector<Tensor> ProcessGroup::all_gather(const Tensor& tensor) {
  return all_gather_async(tensor)->result();
}

void ProcessGroup::reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                                  ReduceOp op) {
  reduce_scatter_async(output, inputs, op)->wait();
}

void ProcessGroup::barrier() {
  barrier_async()->wait();
}

}  // namespace leangrad::distributed
