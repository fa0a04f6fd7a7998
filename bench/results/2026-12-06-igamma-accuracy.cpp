// igamma's accuracy for 2026-12-06-cpu-igamma-in-lanes-zen4-2core.md: the largest relative error
// against mpmath (2026-12-06-igamma-accuracy.py's file) of incomplete_gamma with libm's log and
// exp, as CUDA and the scalar path compute it, and of incomplete_gamma_of_positive with the CPU
// lanes' log and exp, in units of 2^-53. The flags are those of the lanes' file:
//   g++ -O2 -std=c++20 -march=x86-64-v3 -ffp-contract=off -I. \
//     bench/results/2026-12-06-igamma-accuracy.cpp -o /tmp/igamma-accuracy &&
//     /tmp/igamma-accuracy /tmp/igamma-reference.txt
#include <cmath>
#include <cstdio>
#include <map>

#include <leangrad/kernels/cpu/double_polynomials.h>
#include <leangrad/kernels/special_math.h>

namespace sm = leangrad::kernels::special_math;

struct LanesLog {
  double operator()(double v) const { return leangrad::kernels::cpu::log_of_positive_normal(v); }
};
struct LanesExp {
  double operator()(double v) const { return leangrad::kernels::cpu::exp_of_double(v); }
};

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* file = std::fopen(argv[1], "r");
  if (file == nullptr) return 2;
  double top = 0, a = 0, x = 0;
  long double p = 0, q = 0;
  std::map<double, double[4]> worst;  // P with libm's, P with the lanes', Q likewise
  while (std::fscanf(file, "%lf %lf %lf %Lf %Lf", &top, &a, &x, &p, &q) == 5) {
    double* w = worst[top];
    const long double reference[2] = {p, q};
    for (int k = 0; k < 2; ++k) {
      if (reference[k] < 1e-300L) continue;
      const bool lower = k == 0;
      const double libm = sm::incomplete_gamma(a, x, lower);
      const double lanes = sm::incomplete_gamma_of_positive(a, x, lower, LanesLog{}, LanesExp{});
      const auto units = [&](double v) {
        return static_cast<double>(fabsl(v - reference[k]) / reference[k]) / 0x1p-53;
      };
      w[2 * k] = std::fmax(w[2 * k], units(libm));
      w[2 * k + 1] = std::fmax(w[2 * k + 1], units(lanes));
    }
  }
  std::fclose(file);
  std::printf("| a, x in | P, libm's log and exp | P, the lanes' | Q, libm's | Q, the lanes' |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  for (const auto& [range, w] : worst)
    std::printf("| (0, %g] | %.0f | %.0f | %.0f | %.0f |\n", range, w[0], w[1], w[2], w[3]);
}
