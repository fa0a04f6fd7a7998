// The blocking collectives of ProcessGroup (process_group.h): each is its async form, waited
// for, so blocking and async calls run in the order they were made.
#include <leangrad/distributed/process_group.h>

#include <leangrad/core/profiler.h>

namespace leangrad::distributed {

void ProcessGroup::all_reduce(const Tensor& tensor, ReduceOp op) {
  const profiler::Span span("all_reduce", profiler::Category::Collective);
  all_reduce_async(tensor, op)->wait();
}

void ProcessGroup::broadcast(const Tensor& tensor, int root) {
  const profiler::Span span("broadcast", profiler::Category::Collective);
  broadcast_async(tensor, root)->wait();
}

std::vector<Tensor> ProcessGroup::all_gather(const Tensor& tensor) {
  const profiler::Span span("all_gather", profiler::Category::Collective);
  return all_gather_async(tensor)->result();
}

void ProcessGroup::reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                                  ReduceOp op) {
  const profiler::Span span("reduce_scatter", profiler::Category::Collective);
  reduce_scatter_async(output, inputs, op)->wait();
}

void ProcessGroup::barrier() {
  const profiler::Span span("barrier", profiler::Category::Collective);
  barrier_async()->wait();
}

}  // namespace leangrad::distributed
