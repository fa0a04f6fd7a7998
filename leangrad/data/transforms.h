// Per-example transforms for MappableDataset::map (data/dataset.h), in LibTorch's spellings:
//   auto ds = data::FashionMNIST(root)
//                 .map(data::transforms::Normalize<>(0.2860, 0.3530))
//                 .map(data::transforms::Stack<>());
// Each is a callable Example(Example), safe to call from several loader workers at once (it
// only reads its own constants). The template parameter exists so that LibTorch's `Normalize<>()`
// compiles; it is not used.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <leangrad/core/error.h>

#include <leangrad/core/tensor.h>
#include <leangrad/data/dataset.h>

namespace leangrad::data::transforms {

// data = (data - mean) / stddev, with one mean and stddev for every element, or one per channel
// (dim 0 of an example's data, (C, ...)). The result keeps the data's dtype (floating).
template <typename Target = Example>
struct Normalize {
  Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, {stddev}) {}
  Normalize(std::vector<double> mean, std::vector<double> stddev);

  Example operator()(Example example) const;

  std::vector<double> mean;
  std::vector<double> stddev;
};

// Batches are stacked by the loader whatever the dataset; mapping Stack keeps the dataset as it
// is (MappableDataset::map), so LibTorch's `.map(Stack<>())` ports unchanged.
template <typename Target = Example>
struct Stack {};

// Any callable on an example, under LibTorch's name.
template <typename Target = Example>
struct Lambda {
  explicit Lambda(std::function<Example(Example)> fn) : fn(std::move(fn)) {
    LG_CHECK(static_cast<bool>(this->fn),
             "transforms::Lambda: expected a function, got an empty one");
  }
  Example operator()(Example example) const { return fn(std::move(example)); }
  std::function<Example(Example)> fn;
};

// The non-template work of Normalize (data/transforms.cpp).
void check_normalize(const std::vector<double>& mean, const std::vector<double>& stddev);
Tensor normalize(const Tensor& data, const std::vector<double>& mean,
                 const std::vector<double>& stddev);

template <typename Target>
Normalize<Target>::Normalize(std::vector<double> mean_, std::vector<double> stddev_)
    : mean(std::move(mean_)), stddev(std::move(stddev_)) {
  check_normalize(mean, stddev);
}

template <typename Target>
Example Normalize<Target>::operator()(Example example) const {
  example.data = normalize(example.data, mean, stddev);
  return example;
}

}  // namespace leangrad::data::transforms
