// The positions of a bool mask's true elements on the CPU (kernels/cpu/nonzero.cpp): what
// ops::nonzero launches for nonzero, argwhere, masked_select and indexing by a bool mask. CPU
// only: a CUDA mask takes the composed path of autograd/indexing_functions.cpp (cumsum, where and
// scatter_add). Note [True positions in two passes].
#pragma once

#include <cstdint>
#include <vector>

namespace leangrad::kernels::cpu {

// The number of nonzero bytes among mask[0, n) (a bool tensor's elements).
std::int64_t count_true(const std::uint8_t* mask, std::int64_t n);

// The positions of mask's nonzero bytes, in increasing order, into out (room for count_true of
// them), and, when sizes is not empty, each position's index along each of sizes.size() dims of
// that row-major shape instead: out then holds one row of sizes.size() indices per position.
void true_positions(const std::uint8_t* mask, std::int64_t n,
                    const std::vector<std::int64_t>& sizes, std::int64_t* out);

}  // namespace leangrad::kernels::cpu
