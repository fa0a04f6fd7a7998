// Element access by subscripts, as LibTorch's TensorAccessor: t.accessor<float, 2>() gives `a`
// with a[i][j] the element at i * stride(0) + j * stride(1) from the tensor's first element.
// For loops over a tensor of known dtype and rank; the subscripts are not checked (the accessor
// is data_ptr<T>() with the strides applied; Tensor::accessor checked dtype, rank and device).
//
// TensorAccessor<T, N> points at the sizes and strides it reads them from (the tensor's own,
// which must outlive it); PackedTensorAccessor64/32<T, N> hold copies of them, so one can be
// passed by value to a CUDA kernel and indexed there: packed[i] is a TensorAccessor<T, N - 1>
// into the packed accessor's arrays. The 32-bit form is for kernels that index in int32
// (Tensor::packed_accessor32 checks that every offset fits).
#pragma once

#include <cstddef>
#include <cstdint>

#include <leangrad/core/macros.h>

namespace leangrad {

template <typename T, std::size_t N, typename index_t = std::int64_t>
class TensorAccessor {
  static_assert(N > 0, "an accessor has at least one dim (read a 0-d tensor with item())");

 public:
  LG_HOST_DEVICE TensorAccessor(T* data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}

  LG_HOST_DEVICE index_t size(std::size_t dim) const { return sizes_[dim]; }
  LG_HOST_DEVICE index_t stride(std::size_t dim) const { return strides_[dim]; }
  LG_HOST_DEVICE T* data() const { return data_; }

  // The slice at i along the first dim, or (one dim) the element at i.
  LG_HOST_DEVICE TensorAccessor<T, N - 1, index_t> operator[](index_t i) const requires(N > 1) {
    return TensorAccessor<T, N - 1, index_t>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  LG_HOST_DEVICE T& operator[](index_t i) const requires(N == 1) { return data_[strides_[0] * i]; }

 private:
  T* data_;
  const index_t* sizes_;
  const index_t* strides_;
};

template <typename T, std::size_t N, typename index_t>
class PackedTensorAccessor {
  static_assert(N > 0, "an accessor has at least one dim (read a 0-d tensor with item())");

 public:
  // Made by Tensor::packed_accessor64/32, which checked that the values fit index_t.
  PackedTensorAccessor(T* data, const std::int64_t* sizes, const std::int64_t* strides)
      : data_(data) {
    for (std::size_t d = 0; d < N; ++d) {
      sizes_[d] = static_cast<index_t>(sizes[d]);
      strides_[d] = static_cast<index_t>(strides[d]);
    }
  }

  LG_HOST_DEVICE index_t size(std::size_t dim) const { return sizes_[dim]; }
  LG_HOST_DEVICE index_t stride(std::size_t dim) const { return strides_[dim]; }
  LG_HOST_DEVICE T* data() const { return data_; }

  // As TensorAccessor's, through this accessor's own sizes and strides.
  LG_HOST_DEVICE decltype(auto) operator[](index_t i) const {
    return TensorAccessor<T, N, index_t>(data_, sizes_, strides_)[i];
  }

 private:
  T* data_;
  index_t sizes_[N];
  index_t strides_[N];
};

template <typename T, std::size_t N>
using PackedTensorAccessor64 = PackedTensorAccessor<T, N, std::int64_t>;
template <typename T, std::size_t N>
using PackedTensorAccessor32 = PackedTensorAccessor<T, N, std::int32_t>;

}  // namespace leangrad
