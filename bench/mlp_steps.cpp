// N training steps of the mlp (784 -> 128 -> 10, batch 64, SGD, cross-entropy) on one thread, for
// counting instructions with callgrind, which machine load does not move (issue 19's "step's fixed
// cost"). The per-step count is the difference of two runs divided by the difference of steps:
//   OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=a.out build-v3/bench/mlp_steps
//   60 OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=b.out
//   build-v3/bench/mlp_steps 120
// (valgrind does not decode AVX-512: use an x86-64-v3 build). Prints the losses' sum.
#include <leangrad/leangrad.h>

#include <cstdio>
#include <cstdlib>

using namespace leangrad;

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  set_num_threads(1);
  manual_seed(0);
  nn::Sequential model(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1));
  const Tensor x = rand({64, 784});
  const Tensor target = randint(0, 10, {64}, TensorOptions(kInt64));
  double sum = 0;
  for (int i = 0; i < steps; ++i) {
    sgd.zero_grad();
    const Tensor loss = cross_entropy(model->forward(x), target);
    loss.backward();
    sgd.step();
    sum += loss.item<double>();
  }
  std::printf("%d steps, losses sum to %.6f\n", steps, sum);
  return 0;
}
