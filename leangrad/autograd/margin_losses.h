// The margin and embedding losses, as torch.nn.functional's:
//   Tensor r = margin_ranking_loss(score_a, score_b, preferred, /*margin=*/0.5);  // +1 / -1
//   Tensor s = soft_margin_loss(logits, labels);                                  // +1 / -1
//   Tensor m = multilabel_soft_margin_loss(logits, multi_hot);                    // (N, C)
// and the distances they build on (cosine_similarity, pairwise_distance). Targets may be
// floating or integral (+1 / -1 labels, multi-hot rows); an integral target is converted to the
// input's dtype. Operands broadcast where PyTorch's do. Each is composed of differentiable
// functions, or recorded with PyTorch's backward written with them, so all differentiate again.
#pragma once

#include <cstdint>
#include <functional>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// max(0, -target * (input1 - input2) + margin) per element: target 1 asks input1 to rank above
// input2 by margin, -1 below. The three must have one number of dims (PyTorch's rule); their
// shapes broadcast. At the kink (exactly 0) the gradient is that of the linear side, as
// PyTorch's clamp's.
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0.0, Reduction reduction = Reduction::Mean);

// input where target is 1, max(0, margin - input) where target is -1 (PyTorch's where: any
// other target value gets both terms). input and target broadcast. The target gets no gradient.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            Reduction reduction = Reduction::Mean);

// log(1 + exp(-target * input)) per element, without overflow (PyTorch's overflows to inf past
// |input| ~ 88 in float32). target broadcasts to the input's shape.
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        Reduction reduction = Reduction::Mean);

// The mean over the last (class) dim of
// weight * (target * softplus(-input) + (1 - target) * softplus(input)): one loss per sample
// of (N, C) input, (C) a 0-d loss. target (multi-hot, or probabilities) and weight (usually
// (C,)) broadcast to the input's shape.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const Tensor& weight = Tensor(),
                                   Reduction reduction = Reduction::Mean);

// The cosine of the angle between x1 and x2 along `dim`: sum over dim of
// (x1 / sqrt(max(|x1|^2, eps^2))) * (x2 / sqrt(max(|x2|^2, eps^2))), PyTorch 1.13's form (each
// vector normalised first; the clamps pass the gradient straight through, as PyTorch's in-place
// clamps under no_grad: Note [Cosine similarity's clamp]). x1 and x2 broadcast; dim is of the
// broadcast shape, which loses it.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, std::int64_t dim = 1,
                         double eps = 1e-8);

// The p-norm of x1 - x2 + eps along the last dim (of the broadcast shape): (N, D) pairs give
// (N) distances ((N, 1) with keepdim). p >= 1, or infinity. The gradient where the distance is
// exactly 0 is 0, as PyTorch's norm's.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false);

// 1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1 (other target
// values add nothing), with cos = <input1, input2> / sqrt((|input1|^2 + 1e-12) (|input2|^2 +
// 1e-12)) over the last dim, as PyTorch's: (N, D) inputs with an (N) target, or (D) with a 0-d
// one. The target gets no gradient.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0.0, Reduction reduction = Reduction::Mean);

// max(0, margin + d(anchor, positive) - d(anchor, negative)), with d pairwise_distance(p, eps);
// swap takes min(d(anchor, negative), d(positive, negative)) as the negative distance. The three
// must have one number of dims (PyTorch's rule) and broadcast.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2.0, double eps = 1e-6,
                           bool swap = false, Reduction reduction = Reduction::Mean);

// The multi-class hinge loss, as torch's multi_margin_loss: for input (N, C) (or (C)) and class
// indices target (N) (or 0-d), each sample's loss is the sum over the classes i other than its
// target y of max(0, margin - x[y] + x[i])^p (p 1 or 2), times weight[y] when a class weight (C)
// is given, divided by C. At max's kink (exactly 0) the gradient is 0, as PyTorch's.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, std::int64_t p = 1,
                         double margin = 1.0, const Tensor& weight = Tensor(),
                         Reduction reduction = Reduction::Mean);

// The multi-label hinge loss, as torch's multilabel_margin_loss: target (N, C) (or (C)) int64
// holds each sample's class indices, ended by the first -1 (or the row's end); the loss is the
// sum over those indices j and the classes i not among them of max(0, 1 - (x[j] - x[i])),
// divided by C. The indices are read on the host (a CUDA target is copied back).
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              Reduction reduction = Reduction::Mean);

// A distance between two batches of embeddings, row by row: (N, D), (N, D) -> (N).
using DistanceFunction = std::function<Tensor(const Tensor&, const Tensor&)>;

// triplet_margin_loss with any distance: max(0, margin + d(anchor, positive) - d(anchor,
// negative)), d pairwise_distance when distance_function is empty; swap takes
// min(d(anchor, negative), d(positive, negative)). margin must be positive, as PyTorch's.
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                         const Tensor& negative,
                                         const DistanceFunction& distance_function = {},
                                         double margin = 1.0, bool swap = false,
                                         Reduction reduction = Reduction::Mean);

}  // namespace leangrad
