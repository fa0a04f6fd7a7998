// The models and losses of leangrad-train (tools/train_models.h).
// - Gradient accumulation as leangrad-train does it (tools::accumulate_micro_batch): an optimizer
//   step over two micro-batches of 32, each loss scaled by 1/2, updates the parameters as one step
//   over the batch of 64 does, up to float rounding (the sums are grouped differently).
// - srnet: parameter names and count, output shape and range, the L1 + Laplacian loss and the
//   PSNR against loops written here, and --recompute giving the gradients of the plain backward.
#include <gtest/gtest.h>

#include <leangrad/leangrad.h>

#include <cmath>
#include <string>
#include <vector>

#include "train_models.h"

namespace {

using namespace leangrad;

tools::ModelOptions model_options(const std::string& name) {
  tools::ModelOptions options;
  options.name = name;
  options.width = 8;  // srnet: a toy
  options.blocks = 1;
  return options;
}

// tools::make_model, with srnet's zero-initialised tail made random: the untrained srnet outputs
// the upsampled input and passes no gradient to its blocks until the tail has moved.
std::shared_ptr<nn::Module> make_model(const std::string& name, tools::ModelOptions options) {
  options.name = name;
  std::shared_ptr<nn::Module> model = tools::make_model(options);
  NoGradGuard no_grad;
  for (auto& [param_name, p] : model->named_parameters()) {
    if (param_name.rfind("tail.", 0) == 0) p.copy_(randn(p.shape()) * 0.1);
  }
  return model;
}

// The parameters of a fresh `model_name` (seed 3) after one optimizer step over `micro_batches`
// equal slices of (images, labels).
std::vector<Tensor> one_step(const std::string& model_name, const std::string& optimizer_name,
                             const Tensor& images, const Tensor& labels,
                             std::int64_t micro_batches) {
  manual_seed(3);
  std::shared_ptr<nn::Module> model = make_model(model_name, model_options(model_name));
  // SGD: the update is lr times the gradient, so the float32 regrouping error stays ~1e-7 relative
  // (Adam's first step would magnify it; its accumulation is tested in float64 below).
  LG_CHECK(optimizer_name == "sgd", "one_step: only sgd, got ", optimizer_name);
  auto optimizer = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(0.1));
  const std::int64_t size = images.size(0) / micro_batches;
  optimizer->zero_grad();
  for (std::int64_t i = 0; i < micro_batches; ++i) {
    tools::accumulate_micro_batch(model_name, *model, images.slice(0, i * size, (i + 1) * size),
                                  labels.slice(0, i * size, (i + 1) * size),
                                  1.0 / static_cast<double>(micro_batches));
  }
  optimizer->step();
  std::vector<Tensor> params;
  for (const Tensor& p : model->parameters())
    params.push_back(p.clone());
  return params;
}

void expect_same_update(const std::string& model_name, const std::string& optimizer_name) {
  manual_seed(11);
  // srnet's targets are pixels in [0, 1) as the dataset's; the classifiers take any input.
  const Tensor images = model_name == "srnet" ? rand({64, 1, 28, 28}) : randn({64, 1, 28, 28});
  std::vector<std::int64_t> classes(64);
  for (std::size_t i = 0; i < classes.size(); ++i)
    classes[i] = static_cast<std::int64_t>((i * 7) % 10);
  const Tensor labels = tensor(classes);
  manual_seed(3);
  std::vector<Tensor> initial;
  for (const Tensor& p : make_model(model_name, model_options(model_name))->parameters())
    initial.push_back(p.clone());
  const std::vector<Tensor> whole = one_step(model_name, optimizer_name, images, labels, 1);
  const std::vector<Tensor> accumulated = one_step(model_name, optimizer_name, images, labels, 2);
  ASSERT_EQ(whole.size(), accumulated.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const float update = (whole[i] - initial[i]).abs().max().item<float>();
    const float difference = (whole[i] - accumulated[i]).abs().max().item<float>();
    EXPECT_GT(update, 0.0f) << "parameter " << i << " did not move";
    // The update itself is ~1e-3 or more; rounding of the regrouped sums is ~1e-7 relative.
    EXPECT_LE(difference, 1e-6f + 1e-4f * update)
        << model_name << " " << optimizer_name << " parameter " << i << ": update " << update;
  }
}

TEST(TrainAccumulate, TwoMicroBatchesOf32EqualOneBatchOf64Sgd) {
  expect_same_update("mlp", "sgd");
}

// The gradients the optimizer is given, whatever it is: those of two micro-batches of 32 against
// those of one batch of 64, in float64 so the bound holds on any CPU. Regrouping a sum of 64
// per-example terms changes it by at most about 2 * 64 * 2^-53 times the sum of their magnitudes;
// with per-example gradients well below 10^3 that is under 10^-11, and the bound below leaves a
// factor 10 more. A mistake in the accumulation (a scale of 1 instead of 1/2, a micro-batch
// dropped or zeroed) moves the gradients by a fraction of themselves, orders of magnitude more.
// (Adam's update itself is float32-only, and its first step lr g / (|g| + eps) magnifies the
// float32 regrouping error of gradients that nearly cancel by up to lr / eps on some CPUs: an
// update comparison would test that kink, not the accumulation.)
void expect_same_gradients_float64(const std::string& model_name) {
  manual_seed(11);
  const Tensor images = randn({64, 1, 28, 28}).to(kFloat64);
  std::vector<std::int64_t> classes(64);
  for (std::size_t i = 0; i < classes.size(); ++i)
    classes[i] = static_cast<std::int64_t>((i * 7) % 10);
  const Tensor labels = tensor(classes);
  auto gradients = [&](std::int64_t micro_batches) {
    manual_seed(3);
    std::shared_ptr<nn::Module> model = make_model(model_name, model_options(model_name));
    model->to(kFloat64);
    model->zero_grad();
    const std::int64_t size = 64 / micro_batches;
    for (std::int64_t i = 0; i < micro_batches; ++i) {
      tools::accumulate_micro_batch(model_name, *model, images.slice(0, i * size, (i + 1) * size),
                                    labels.slice(0, i * size, (i + 1) * size),
                                    1.0 / static_cast<double>(micro_batches));
    }
    std::vector<Tensor> grads;
    for (const Tensor& p : model->parameters())
      grads.push_back(p.grad().clone());
    return grads;
  };
  const std::vector<Tensor> whole = gradients(1), accumulated = gradients(2);
  ASSERT_EQ(whole.size(), accumulated.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    ASSERT_EQ(accumulated[i].dtype(), kFloat64);
    const double size = whole[i].abs().max().item<double>();
    const double difference = (whole[i] - accumulated[i]).abs().max().item<double>();
    EXPECT_GT(size, 0.0) << "parameter " << i << " has no gradient";
    EXPECT_LE(difference, 1e-10) << model_name << " parameter " << i << ": gradient " << size;
  }
}

TEST(TrainAccumulate, TwoMicroBatchesOf32GiveTheGradientsOfOneBatchOf64Mlp) {
  expect_same_gradients_float64("mlp");
}

TEST(TrainAccumulate, TwoMicroBatchesOf32GiveTheGradientsOfOneBatchOf64Cnn) {
  expect_same_gradients_float64("cnn");
}

// GroupNorm normalises each image on its own, so srnet's batch splits like the classifiers'. (SGD:
// Adam's first step divides by |g| + 1e-8, which magnifies the regrouping's rounding of the
// gradients that nearly cancel over the batch.)
TEST(TrainAccumulate, TwoMicroBatchesOf32EqualOneBatchOf64Srnet) {
  expect_same_update("srnet", "sgd");
}

std::vector<float> to_vector(const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).to(kFloat32).contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

TEST(Srnet, ParameterNamesCountAndOutput) {
  tools::ModelOptions options = model_options("srnet");
  options.blocks = 2;
  manual_seed(0);
  std::shared_ptr<nn::Module> model = tools::make_model(options);
  std::vector<std::string> names;
  std::int64_t count = 0;
  for (const auto& [name, p] : model->named_parameters()) {
    names.push_back(name);
    count += p.numel();
  }
  const std::vector<std::string> expected_names = {"head.weight",           "head.bias",
                                                   "blocks.0.conv1.weight", "blocks.0.norm1.weight",
                                                   "blocks.0.norm1.bias",   "blocks.0.conv2.weight",
                                                   "blocks.0.norm2.weight", "blocks.0.norm2.bias",
                                                   "blocks.1.conv1.weight", "blocks.1.norm1.weight",
                                                   "blocks.1.norm1.bias",   "blocks.1.conv2.weight",
                                                   "blocks.1.norm2.weight", "blocks.1.norm2.bias",
                                                   "tail.weight",           "tail.bias"};
  EXPECT_EQ(names, expected_names);
  // width w, b blocks: head 9 * 4w + 4w; each block two bias-free convs 2 * 9 w^2 and two
  // GroupNorms 2 * 2w; tail 9w + 1.
  const std::int64_t w = options.width, b = options.blocks;
  EXPECT_EQ(count, 40 * w + b * (18 * w * w + 4 * w) + 9 * w + 1);

  // Untrained (tail zero), the output is the nearest-neighbour upsampling of the input, squeezed
  // into [0.001, 0.999].
  const Tensor low = rand({3, 1, 14, 14});
  const Tensor out = model->forward(low);
  EXPECT_EQ(out.shape(), (Shape{3, 1, 28, 28}));
  const std::vector<float> in = to_vector(low), got = to_vector(out);
  for (std::int64_t i = 0; i < 3; ++i) {
    for (std::int64_t y = 0; y < 28; ++y) {
      for (std::int64_t x = 0; x < 28; ++x) {
        const float pixel = in[static_cast<std::size_t>((i * 14 + y / 2) * 14 + x / 2)];
        ASSERT_NEAR(got[static_cast<std::size_t>((i * 28 + y) * 28 + x)], 0.001f + 0.998f * pixel,
                    2e-6f);
      }
    }
  }
  // Trained (tail not zero), still in (0, 1).
  model = make_model("srnet", options);
  for (float v : to_vector(model->forward(low))) {
    ASSERT_GT(v, 0.0f);
    ASSERT_LT(v, 1.0f);
  }
}

TEST(Srnet, BadOptionsAreErrors) {
  tools::ModelOptions options = model_options("mlp");
  const std::shared_ptr<nn::Module> mlp = tools::make_model(options);
  EXPECT_THROW(tools::memory_blocks("mlp", *mlp, "--recompute"), Error);
  options = model_options("srnet");
  options.width = 0;
  EXPECT_THROW(tools::make_model(options), Error);
  options = model_options("transformer");
  EXPECT_THROW(tools::make_model(options), Error);
}

// The loss, from loops: mean |o - t| + kEdgeWeight * mean |lap(o) - lap(t)|, zero padding.
TEST(Srnet, LossIsL1PlusLaplacianEdgeTerm) {
  manual_seed(5);
  const std::int64_t n = 2, h = 6, w = 5;
  const Tensor output = rand({n, 1, h, w}), images = rand({n, 1, h, w});
  const std::vector<float> o = to_vector(output), t = to_vector(images);
  const auto at = [&](const std::vector<float>& v, std::int64_t i, std::int64_t y, std::int64_t x) {
    return (y < 0 || y >= h || x < 0 || x >= w) ? 0.0 : static_cast<double>(v[(i * h + y) * w + x]);
  };
  const auto lap = [&](const std::vector<float>& v, std::int64_t i, std::int64_t y,
                       std::int64_t x) {
    return at(v, i, y - 1, x) + at(v, i, y + 1, x) + at(v, i, y, x - 1) + at(v, i, y, x + 1) -
           4 * at(v, i, y, x);
  };
  double l1 = 0, edges = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t y = 0; y < h; ++y) {
      for (std::int64_t x = 0; x < w; ++x) {
        l1 += std::abs(at(o, i, y, x) - at(t, i, y, x));
        edges += std::abs(lap(o, i, y, x) - lap(t, i, y, x));
      }
    }
  }
  const double count = static_cast<double>(n * h * w);
  const double expected = l1 / count + tools::kEdgeWeight * edges / count;
  const Tensor loss = tools::training_loss("srnet", output, images, Tensor());
  EXPECT_NEAR(loss.item<float>(), expected, 1e-6 * expected);
}

// --recompute reruns each block's forward in backward (a Recompute policy on each of
// memory_blocks): the same loss and the same gradients.
TEST(Srnet, RecomputeGivesTheSameGradients) {
  manual_seed(2);
  const Tensor images = rand({4, 1, 28, 28});
  std::vector<std::vector<Tensor>> grads;
  std::vector<float> losses;
  for (bool recompute : {false, true}) {
    tools::ModelOptions options = model_options("srnet");
    options.blocks = 2;
    manual_seed(7);
    std::shared_ptr<nn::Module> model = make_model("srnet", options);
    const std::vector<std::shared_ptr<nn::Module>> blocks =
        tools::memory_blocks("srnet", *model, "--recompute");
    ASSERT_EQ(blocks.size(), 2u);
    const offload::AppliedPlan applied = offload::apply_policies(
        blocks, std::vector<offload::BlockPolicy>(
                    2, recompute ? offload::BlockPolicy::Recompute : offload::BlockPolicy::Keep));
    EXPECT_EQ(blocks[0]->has_forward_wrapper(), recompute);
    losses.push_back(tools::accumulate_micro_batch("srnet", *model, images, Tensor(), 1.0).loss);
    grads.emplace_back();
    for (const Tensor& p : model->parameters())
      grads.back().push_back(p.grad());
  }
  EXPECT_EQ(losses[0], losses[1]);
  ASSERT_EQ(grads[0].size(), grads[1].size());
  for (std::size_t i = 0; i < grads[0].size(); ++i) {
    ASSERT_TRUE(grads[0][i].defined() && grads[1][i].defined()) << "parameter " << i;
    EXPECT_GT(grads[0][i].abs().max().item<float>(), 0.0f) << "parameter " << i;
    // The same kernels on the same values in the same order: bitwise equal.
    EXPECT_EQ(to_vector(grads[0][i]), to_vector(grads[1][i])) << "parameter " << i;
  }
}

// Mean over images of -10 log10(mean squared error), with the prediction given per pixel.
template <typename Predict>
double loop_psnr(const std::vector<float>& images, std::int64_t n, const Predict& predict) {
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double squared = 0;
    for (std::int64_t y = 0; y < 28; ++y) {
      for (std::int64_t x = 0; x < 28; ++x) {
        const double d = predict(i, y, x) - images[static_cast<std::size_t>((i * 28 + y) * 28 + x)];
        squared += d * d;
      }
    }
    sum += -10.0 * std::log10(squared / (28.0 * 28.0));
  }
  return sum / static_cast<double>(n);
}

TEST(Srnet, PsnrOfNearestUpsamplingAndOfTheModel) {
  manual_seed(4);
  const std::int64_t n = 5;
  const Tensor images = rand({n, 1, 28, 28});
  const std::vector<float> pixels = to_vector(images);
  data::DataLoader loader(data::TensorDataset(images, zeros({n}, kInt64)),
                          data::DataLoaderOptions().batch_size(2));  // batches of 2, 2 and 1

  // Nearest-neighbour upsampling of the 2x2 averages.
  const double nearest = loop_psnr(pixels, n, [&](std::int64_t i, std::int64_t y, std::int64_t x) {
    const std::int64_t y0 = y / 2 * 2, x0 = x / 2 * 2;
    double sum = 0;
    for (std::int64_t dy = 0; dy < 2; ++dy) {
      for (std::int64_t dx = 0; dx < 2; ++dx)
        sum += pixels[static_cast<std::size_t>((i * 28 + y0 + dy) * 28 + x0 + dx)];
    }
    return sum / 4;
  });
  EXPECT_NEAR(tools::nearest_upsampling_psnr(loader), nearest, 1e-4);

  // The model's own output, computed here in one batch.
  manual_seed(1);
  std::shared_ptr<nn::Module> model = make_model("srnet", model_options("srnet"));
  std::vector<float> predicted;
  {
    NoGradGuard no_grad;
    predicted = to_vector(model->forward(avg_pool2d(images, {2, 2})));
  }
  const double expected = loop_psnr(pixels, n, [&](std::int64_t i, std::int64_t y, std::int64_t x) {
    return static_cast<double>(predicted[static_cast<std::size_t>((i * 28 + y) * 28 + x)]);
  });
  EXPECT_NEAR(tools::evaluate("srnet", *model, loader), expected, 1e-4);
  EXPECT_TRUE(model->is_training());  // evaluate restores training mode
}

}  // namespace
