// sum_over_sample_chunks: how the CPU convolutions' weight gradients (kernels/cpu/conv.cpp,
// kernels/cpu/conv_rows.cpp) sum over the samples of a batch without depending on thread timing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu {

// out[0, size) = the sum over the batch's samples, split into min(threads, batch) contiguous
// chunks: add_chunk(first, last, partial) adds samples [first, last) into its chunk's own zeroed
// partial of `size` elements (on the threads, one call per chunk, so scratch it allocates is per
// chunk), and the partials are then added in chunk order. batch >= 1.
template <typename T, typename AddChunk>
void sum_over_sample_chunks(std::int64_t batch, std::int64_t size, T* out,
                            const AddChunk& add_chunk) {
  const std::int64_t chunks = std::clamp<std::int64_t>(max_threads(), 1, batch);
  std::vector<std::vector<T>> partial(chunks, std::vector<T>(size, T(0)));
  parallel_for(chunks, 1, [&](std::int64_t chunk_begin, std::int64_t chunk_end) {
    for (std::int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk)
      add_chunk(chunk * batch / chunks, (chunk + 1) * batch / chunks, partial[chunk].data());
  });
  std::copy(partial[0].begin(), partial[0].end(), out);
  for (std::int64_t chunk = 1; chunk < chunks; ++chunk) {
    for (std::int64_t i = 0; i < size; ++i)
      out[i] += partial[chunk][i];
  }
}

}  // namespace leangrad::kernels::cpu
