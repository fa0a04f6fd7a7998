// The smallest distributed program: every rank contributes a tensor filled with rank + 1, and
// all_reduce sums them in place, so every rank ends with the same sum. One process per rank,
// started by a launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT:
//   build/tools/leangrad-run --nproc-per-node 2 build/examples/example_all_reduce
// (mpirun, srun and torchrun work too: docs/distributed.md, "Launching").
#include <leangrad/leangrad.h>

#include <cstdio>
#include <exception>

int main() {
  namespace dist = leangrad::distributed;
  try {
    dist::init_process_group(dist::Backend::Gloo);  // meets the other ranks through rank 0
    const int rank = dist::get_rank();
    const int world_size = dist::get_world_size();
    leangrad::Tensor t = leangrad::full({4}, rank + 1.0);  // (4,) float32
    dist::all_reduce(t);                                   // the sum over the ranks, in place
    const float element = t.sum().item<float>() / 4;
    const float expected = world_size * (world_size + 1) / 2.0f;  // 1 + 2 + ... + world_size
    std::printf("rank %d of %d: all_reduce gives %g (expected %g)\n", rank, world_size, element,
                expected);
    dist::destroy_process_group();
    return element == expected ? 0 : 1;
  } catch (const std::exception& e) {  // leangrad::Error: no launcher variables, a lost rank...
    std::fprintf(stderr, "all_reduce: %s\n", e.what());
    return 1;
  }
}
