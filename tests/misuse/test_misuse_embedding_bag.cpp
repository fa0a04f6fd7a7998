// Misuse of embedding_bag and nn::EmbeddingBag (autograd/nn_functions.h, nn/embedding.h): input
// and offsets of the wrong rank or dtype, offsets that do not start at 0, decrease or pass the
// input's end, per-sample weights outside mode sum or of the wrong shape, padding_idx and
// indices out of range. Tables of the misuse suite (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/embedding.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

Tensor ints(std::vector<std::int64_t> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return tensor(values, {n});
}

std::vector<MisuseCase> embedding_bag_cases() {
  MisuseTable t;
  const auto weight = [] { return ones({10, 3}); };
  t.add("offsets_with_2d_input", Raises::Error, {"embedding_bag", "offsets must be undefined"},
        [&] {
          embedding_bag(ones({2, 3}, kInt64), weight(), ints({0, 1}));
        });
  t.add("1d_input_without_offsets", Raises::Error, {"embedding_bag", "needs offsets"}, [&] {
    embedding_bag(ints({1, 2}), weight());
  });
  t.add("float_input", Raises::DTypeError, {"embedding_bag", "int64 indices", "float32"}, [&] {
    embedding_bag(ones({2, 3}), weight());
  });
  t.add("3d_input", Raises::ShapeError, {"embedding_bag", "[2, 3, 1]"}, [&] {
    embedding_bag(ones({2, 3, 1}, kInt64), weight());
  });
  t.add("integral_weight", Raises::DTypeError, {"embedding_bag", "int64"}, [&] {
    embedding_bag(ones({2, 3}, kInt64), ones({10, 3}, kInt64));
  });
  t.add("first_offset_not_zero", Raises::Error, {"embedding_bag", "offsets[0] must be 0", "got 1"},
        [&] {
          embedding_bag(ints({1, 2, 3}), weight(), ints({1, 2}));
        });
  t.add("decreasing_offsets", Raises::Error, {"embedding_bag", "non-decreasing", "1 after 2"}, [&] {
    embedding_bag(ints({1, 2, 3}), weight(), ints({0, 2, 1}));
  });
  t.add("offset_past_end", Raises::Error, {"embedding_bag", "length 3", "got 5"}, [&] {
    embedding_bag(ints({1, 2, 3}), weight(), ints({0, 5}));
  });
  t.add("last_offset_not_length", Raises::Error,
        {"embedding_bag", "include_last_offset", "length 3, got 2"}, [&] {
          embedding_bag(ints({1, 2, 3}), weight(), ints({0, 2}), kSum, Tensor(), true);
        });
  t.add("per_sample_weights_with_mean", Raises::Error,
        {"embedding_bag", "only supported with mode sum", "mean"}, [&] {
          embedding_bag(ones({2, 3}, kInt64), weight(), Tensor(), kMean, ones({2, 3}));
        });
  t.add("per_sample_weights_shape", Raises::ShapeError,
        {"embedding_bag", "per_sample_weights of input's shape [2, 3]", "[3, 2]"}, [&] {
          embedding_bag(ones({2, 3}, kInt64), weight(), Tensor(), kSum, ones({3, 2}));
        });
  t.add("per_sample_weights_dtype", Raises::DTypeError, {"embedding_bag", "float64"}, [&] {
    embedding_bag(ones({2, 3}, kInt64), weight(), Tensor(), kSum, ones({2, 3}, kFloat64));
  });
  t.add("padding_idx_out_of_range", Raises::Error, {"embedding_bag", "padding_idx 10"}, [&] {
    embedding_bag(ones({2, 3}, kInt64), weight(), Tensor(), kSum, Tensor(), false, 10);
  });
  t.add("index_out_of_range", Raises::Error, {"embedding", "12"}, [&] {
    embedding_bag(ints({1, 12}), weight(), ints({0}));
  });
  // -1 without a padding_idx is an index out of range like any other (it was taken for the
  // padding row and left out of the bag), in every mode and in the module.
  for (const EmbeddingBagMode mode :
       {EmbeddingBagMode::Sum, EmbeddingBagMode::Mean, EmbeddingBagMode::Max}) {
    t.add(std::string("index_minus_one_") + embedding_bag_mode_name(mode), Raises::Error,
          {"embedding", "index -1"}, [&, mode] {
            embedding_bag(ints({1, -1}), weight(), ints({0}), mode);
          });
  }
  t.add("module_index_minus_one", Raises::Error, {"embedding", "index -1"}, [] {
    nn::EmbeddingBag bag(6, 2);
    bag(ints({1, -1}), ints({0}));
  });
  t.add("module_padding_idx_out_of_range", Raises::Error,
        {"EmbeddingBag", "padding_idx -7 is out of range"},
        [] { nn::EmbeddingBag(nn::EmbeddingBagOptions(6, 2).padding_idx(-7)); });
  return t.cases();
}
LG_MISUSE_SUITE(EmbeddingBag, embedding_bag_cases());

}  // namespace
}  // namespace leangrad::test
