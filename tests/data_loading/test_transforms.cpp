// LibTorch's data idiom (data/transforms.h, MappableDataset::map, make_data_loader): Normalize
// against a reference loop in double, per element and per channel; map composes; Stack keeps
// the dataset; make_data_loader gives the batches a DataLoader gives, with any number of workers.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <leangrad/data/data.h>
#include <leangrad/kernels/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// (N, C, H, W) = (6, 3, 2, 2) float32 images with values from a formula, and int64 labels.
data::TensorDataset images() {
  std::vector<double> values;
  for (int i = 0; i < 6 * 3 * 2 * 2; ++i)
    values.push_back(std::sin(0.37 * i) * 4.0 + 0.5);
  return data::TensorDataset(test::make_tensor(values, {6, 3, 2, 2}),
                             arange(6, TensorOptions(kInt64)));
}

// Normalize's result per element in double, against the float32 kernel: it rounds the mean and
// the stddev to float32 (relative error u = 2^-24 each), then x - m and the division (u each).
// To first order |got - expected| <= u (|m| / s + 3 |expected|); the factor 1.01 covers the
// second-order terms (u^2).
void expect_normalized(const Tensor& got, const Tensor& x, const std::vector<double>& mean,
                       const std::vector<double>& stddev) {
  const std::vector<double> g = test::to_vector(got), v = test::to_vector(x);
  ASSERT_EQ(g.size(), v.size());
  const std::size_t per_channel = v.size() / mean.size();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::size_t c = mean.size() == 1 ? 0 : i / per_channel;
    const double expected = (v[i] - mean[c]) / stddev[c];
    const double u = std::ldexp(1.0, -24);  // float32 unit roundoff
    const double bound = 1.01 * u * (std::fabs(mean[c]) / stddev[c] + 3.0 * std::fabs(expected));
    EXPECT_NEAR(g[i], expected, bound) << "element " << i;
  }
}

TEST(Transforms, NormalizeOneMeanAndPerChannel) {
  const data::TensorDataset ds = images();
  const data::MapDataset one = ds.map(data::transforms::Normalize<>(0.5, 2.0));
  const data::MapDataset per_channel =
      ds.map(data::transforms::Normalize<>({0.1, -0.2, 0.3}, {1.5, 0.5, 4.0}));
  ASSERT_EQ(one.size(), 6);
  for (std::int64_t i = 0; i < ds.size(); ++i) {
    const data::Example raw = ds.get(i);
    const data::Example a = one.get(i);
    const data::Example b = per_channel.get(i);
    EXPECT_TRUE(a.target.equal(raw.target));
    EXPECT_EQ(b.data.shape(), raw.data.shape());
    EXPECT_EQ(b.data.dtype(), kFloat32);
    expect_normalized(a.data, raw.data, {0.5}, {2.0});
    expect_normalized(b.data, raw.data, {0.1, -0.2, 0.3}, {1.5, 0.5, 4.0});
  }
}

TEST(Transforms, MapComposesAndStackKeepsTheDataset) {
  const data::TensorDataset ds = images();
  auto twice = ds.map(data::transforms::Normalize<>(1.0, 2.0))
                   .map(data::transforms::Lambda<>([](data::Example e) {
                     e.data = e.data * 3.0;
                     return e;
                   }))
                   .map(data::transforms::Stack<>());
  static_assert(std::is_same_v<decltype(twice), data::MapDataset>);
  const data::Example e = twice.get(4);
  expect_normalized(e.data / 3.0, ds.get(4).data, {1.0}, {2.0});
  auto stacked = ds.map(data::transforms::Stack<>());
  static_assert(std::is_same_v<decltype(stacked), data::TensorDataset>);
  EXPECT_TRUE(stacked.get(2).data.equal(ds.get(2).data));
  // An empty function is refused where it is given, not as std::bad_function_call in a worker.
  EXPECT_THROW(data::transforms::Lambda<>(nullptr), Error);
  EXPECT_THROW(data::MapDataset(std::make_shared<data::TensorDataset>(ds), nullptr), Error);
  EXPECT_THROW(data::MapDataset(nullptr, [](data::Example e) { return e; }), Error);
}

TEST(Transforms, MakeDataLoaderGivesTheBatchesOfADataLoader) {
  auto normalized = images().map(data::transforms::Normalize<>({0.1, -0.2, 0.3}, {1.5, 0.5, 4.0}));
  data::DataLoader reference(normalized, data::DataLoaderOptions().batch_size(4));
  std::vector<data::Batch> expected;
  for (const data::Batch& batch : reference)
    expected.push_back(batch);
  ASSERT_EQ(expected.size(), 2u);  // 4 + 2
  for (int workers : {0, 2}) {
    SCOPED_TRACE(workers);
    auto loader = data::make_data_loader(normalized,
                                         data::DataLoaderOptions().batch_size(4).workers(workers));
    EXPECT_EQ(loader->options().num_workers(), workers);
    std::size_t k = 0;
    for (auto& batch : *loader) {
      ASSERT_LT(k, expected.size());
      EXPECT_TRUE(batch.data.equal(expected[k].data));
      EXPECT_TRUE(batch.target.equal(expected[k].target));
      ++k;
    }
    EXPECT_EQ(k, expected.size());
  }
  auto by_size = data::make_data_loader(images(), 3);
  EXPECT_EQ(by_size->size(), 2);
}

TEST(Transforms, NormalizeRefusesBadArgumentsAndData) {
  EXPECT_THROW(data::transforms::Normalize<>(0.0, 0.0), Error);
  EXPECT_THROW(data::transforms::Normalize<>({0.0, 1.0}, {1.0}), Error);
  EXPECT_THROW(data::transforms::Normalize<>(std::nan(""), 1.0), Error);
  const data::MapDataset wrong_channels =
      images().map(data::transforms::Normalize<>({0.0, 0.0}, {1.0, 1.0}));
  EXPECT_THROW(wrong_channels.get(0), ShapeError);
  const data::TensorDataset integers(arange(4, TensorOptions(kInt64)).reshape({4, 1}), Tensor());
  EXPECT_THROW(integers.map(data::transforms::Normalize<>(0.0, 1.0)).get(0), DTypeError);
}

}  // namespace
}  // namespace leangrad
