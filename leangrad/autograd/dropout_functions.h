// The dropouts beside plain dropout (autograd/nn_functions.h), as torch's: channel dropout over
// 1-d, 2-d and 3-d feature maps, and alpha dropout for SELU networks, elementwise or per channel.
// Each draws its mask with bernoulli (autograd/sampling_functions.h: Philox, the default
// generator of the input's device) and is composed of tensor functions, so it runs on every
// device and differentiates to any order; each is the identity when !training or p == 0.
//   y = dropout2d(features, 0.1, is_training());  // whole (n, c) maps zeroed
//   y = alpha_dropout(selu(x), 0.05, is_training());
#pragma once

#include <leangrad/core/tensor.h>

namespace leangrad {

// Zeroes each channel (a whole (n, c) slice) with probability p and scales the others by
// 1 / (1 - p): dropout1d over (N, C, L) or unbatched (C, L), dropout2d over (N, C, H, W) or
// (C, H, W), dropout3d over (N, C, D, H, W) or (C, D, H, W). p == 1 gives input * 0.
Tensor dropout1d(const Tensor& x, double p = 0.5, bool training = true);
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true);
Tensor dropout3d(const Tensor& x, double p = 0.5, bool training = true);

// Alpha dropout (Klambauer et al.: keeps a SELU network's zero mean and unit variance): each
// element kept with probability 1 - p becomes a x + alpha a p, each dropped one alpha a (p - 1),
// with alpha = 1.7580993408473766 (SELU's -scale * alpha) and a = 1 / sqrt((alpha^2 p + 1)
// (1 - p)), as PyTorch's. feature_alpha_dropout keeps or drops whole channels of an input of at
// least 2 dims (N, C, *). p == 1 gives input * 0.
Tensor alpha_dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor feature_alpha_dropout(const Tensor& x, double p = 0.5, bool training = true);

}  // namespace leangrad
