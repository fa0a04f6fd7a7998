// The data layer: datasets, the multi-threaded DataLoader, DistributedSampler, the IDX reader
// behind MNIST / Fashion-MNIST, and safetensors checkpoints. docs/data.md explains the formats
// and the loader's design.
//   data::FashionMNIST train("/usr/share/datasets/fashion-mnist", data::Split::Train);
//   data::DataLoader loader(train, data::DataLoaderOptions().batch_size(64).shuffle(true));
//   for (const auto& [images, labels] : loader) { ... }  // (B, 1, 28, 28), (B,)
#pragma once

#include <leangrad/data/dataloader.h>
#include <leangrad/data/dataset.h>
#include <leangrad/data/file_io.h>
#include <leangrad/data/mnist.h>
#include <leangrad/data/safetensors.h>
#include <leangrad/data/sampler.h>
#include <leangrad/data/transforms.h>
