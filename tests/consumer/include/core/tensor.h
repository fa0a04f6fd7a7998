// The consumer's own core/tensor.h, named like leangrad's on purpose (see data/dataset.h here).
// Were leangrad to include it in place of its own, Tensor would be missing and the build fail.
#pragma once

namespace consumer {
constexpr int kTensorHeaderValue = 7;
}  // namespace consumer
