// conv2d 3 x 3, padding 1, at batch 64: forward, input gradient and weight gradient under
// CpuConv2dAlgorithm::Gemm (im2col + GEMM) and ::Rows (kernels/cpu/conv_rows.cpp), the best of 15
// calls after 3, both in one process (bench/results/2026-12-06-cpu-conv-rows-zen4-2core.md):
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-06-cpu-conv-rows.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/conv-rows
//   OMP_NUM_THREADS=1 /tmp/conv-rows
#include <leangrad/kernels/ops.h>
#include <leangrad/leangrad.h>
#include <cstdio>
#include "best_of.h"
using namespace leangrad;
int main() {
  struct C {
    Shape x;
    std::int64_t cout;
  };
  C cases[] = {{{64, 16, 28, 28}, 1}, {{64, 16, 28, 28}, 2}, {{64, 16, 28, 28}, 4},
               {{64, 16, 28, 28}, 8}, {{64, 1, 28, 28}, 1},  {{64, 1, 14, 14}, 64},
               {{64, 1, 28, 28}, 32}, {{64, 32, 14, 14}, 4}};
  ops::Conv2dParams p;
  p.pad_h = p.pad_w = 1;
  for (auto& c : cases) {
    Tensor x = randn(c.x), w = randn({c.cout, c.x[1], 3, 3}), b = randn({c.cout});
    Tensor dy = randn({c.x[0], c.cout, c.x[2], c.x[3]});
    double t[2][3];
    for (int a = 0; a < 2; ++a) {
      ops::CpuConv2dAlgorithmGuard guard(a == 0 ? ops::CpuConv2dAlgorithm::Gemm
                                                : ops::CpuConv2dAlgorithm::Rows);
      t[a][0] = best_of_ms(15, 3, [&] { ops::conv2d(x, w, b, p); });
      t[a][1] = best_of_ms(15, 3, [&] { ops::conv2d_input_grad(dy, w, x.shape(), p); });
      t[a][2] = best_of_ms(15, 3, [&] { ops::conv2d_weight_grad(dy, x, w.shape(), p); });
    }
    std::printf(
        "x (%ld,%ld,%ld,%ld) -> %ld: forward %.3f / %.3f  input grad %.3f / %.3f  weight grad %.3f "
        "/ %.3f ms (gemm / rows)\n",
        c.x[0], c.x[1], c.x[2], c.x[3], c.cout, t[0][0], t[1][0], t[0][1], t[1][1], t[0][2],
        t[1][2]);
  }
}
