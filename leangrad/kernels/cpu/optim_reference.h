// The plain reference loops of the CPU optimizer steps (kernels/cpu/optim.cpp): the specification
// that the launchers of kernels/backend.h (the vectorised kernels of
// kernels/cpu/optim_vectorized.cpp) and the CUDA kernels are tested against. Same signatures and
// contract as those launchers (kernels/backend_launchers.inc, "Optimizers"). Private to kernels/
// and the tests; also the quantisation tables both CPU kernels of Adam8bit read.
#pragma once

#include <array>
#include <vector>

#include <leangrad/kernels/optim_math.h>
#include <leangrad/kernels/quantization_math.h>

namespace leangrad::kernels::cpu {

// The two dynamic maps and their midpoint thresholds (kernels/quantization_math.h), built once.
struct QuantMaps {
  std::array<float, kQuantCodes> signed_map;
  std::array<float, kQuantCodes> unsigned_map;
  std::array<float, kQuantCodes - 1> signed_thresholds;
  std::array<float, kQuantCodes - 1> unsigned_thresholds;
  QuantMaps();
};
const QuantMaps& quant_maps();

namespace reference {

// T: float, double, Half or BFloat16 (defined for each; the math of the 16-bit types in float).
template <typename T>
void sgd_step(const SgdUpdateOf<T>& update, const std::vector<OptimTensor<SgdUpdateOf<T>>>& tensors,
              const int* found_inf);
template <typename T>
void adam_step(const AdamUpdateOf<T>& update,
               const std::vector<OptimTensor<AdamUpdateOf<T>>>& tensors, const int* found_inf,
               int* skipped_nonfinite);
template <typename T>
void radam_step(const RAdamUpdateOf<T>& update,
                const std::vector<OptimTensor<RAdamUpdateOf<T>>>& tensors, const int* found_inf);
void adam8bit_step(const AdamUpdate& update, const std::vector<Adam8bitTensor>& tensors,
                   const int* found_inf, int* skipped_nonfinite);

}  // namespace reference
}  // namespace leangrad::kernels::cpu
