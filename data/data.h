// The data layer: datasets, the multi-threaded DataLoader, DistributedSampler, the IDX reader
// behind MNIST / Fashion-MNIST, and safetensors checkpoints. docs/data.md explains the formats
// and the loader's design.
//   data::FashionMNIST train("/usr/share/datasets/fashion-mnist", data::Split::Train);
//   data::DataLoader loader(train, data::DataLoaderOptions().batch_size(64).shuffle(true));
//   for (const auto& [images, labels] : loader) { ... }  // (B, 1, 28, 28), (B,)
#pragma once

#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/file_io.h"
#include "data/mnist.h"
#include "data/safetensors.h"
#include "data/sampler.h"
