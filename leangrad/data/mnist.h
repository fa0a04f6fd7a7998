// MNIST and Fashion-MNIST: the IDX file reader and the two datasets built on it.
// IDX (LeCun's format): a big-endian magic (0, 0, element type, number of dims), one big-endian
// uint32 size per dim, then the elements, big-endian, row-major. Files may be gzipped (as they
// are distributed); read_idx decompresses them with zlib. docs/data.md describes the checks.
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/core/tensor.h>
#include <leangrad/data/dataset.h>

namespace leangrad::data {

// Reads an IDX file (gzipped or not, told apart by the gzip magic bytes) into a CPU tensor with
// the file's dims. Element types: 0x08 -> uint8, 0x0C -> int32, 0x0D -> float32,
// 0x0E -> float64 (0x09 int8 and 0x0B int16 have no leangrad dtype and are refused). Throws
// Error for a bad magic, a size that does not match the dims, or corrupt / truncated gzip data.
Tensor read_idx(const std::string& path);

// kTrain and kTest are LibTorch's spellings (MNIST::Mode::kTrain there).
enum class Split { Train, Test, kTrain = Train, kTest = Test };

// The 28x28 grey-level digit (MNIST) or clothing (Fashion-MNIST) images and their labels 0-9,
// from the four files of the original distribution in `root` (each file gzipped or not):
//   train-images-idx3-ubyte  train-labels-idx1-ubyte  (60000 examples)
//   t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte   (10000 examples)
// Images are float32 in [0, 1] (pixel / 255), one example's data has shape (1, 28, 28) (C, H, W);
// targets are int64 class indices (0-d per example). Everything is decoded once, at construction.
class MNIST : public MappableDataset<MNIST> {
 public:
  using Mode = Split;  // LibTorch: MNIST(root, MNIST::Mode::kTrain)
  MNIST(const std::string& root, Split split = Split::Train);

  std::int64_t size() const override;
  Example get(std::int64_t index) const override;
  // The images and labels at `indices` copied row by row (Dataset::get_batch); std::nullopt in a
  // subclass other than FashionMNIST, whose get() may differ.
  std::optional<Batch> get_batch(std::span<const std::int64_t> indices, bool pinned) const override;

  const Tensor& images() const { return images_; }    // (N, 1, 28, 28) float32
  const Tensor& targets() const { return targets_; }  // (N,) int64

 protected:
  MNIST(const std::string& root, Split split, const char* dataset_name);

 private:
  Tensor images_;
  Tensor targets_;
};

// The same files and layout as MNIST, with Zalando's clothing images (Debian package
// dataset-fashion-mnist installs them in /usr/share/datasets/fashion-mnist).
class FashionMNIST : public MNIST {
 public:
  FashionMNIST(const std::string& root, Split split = Split::Train);
};

// LibTorch's namespace for them: torch::data::datasets::MNIST.
namespace datasets {
using data::FashionMNIST;
using data::MNIST;
using data::TensorDataset;
}  // namespace datasets

}  // namespace leangrad::data
