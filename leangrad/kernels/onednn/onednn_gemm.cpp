// oneDNN's sgemm behind kernels/cpu/gemm.h (built with LEANGRAD_WITH_ONEDNN; Debian's
// libdnnl-dev). dnnl_sgemm takes row-major operands as gemm.h does, generates its kernels for the
// running CPU at the first call of each shape class, and threads with OpenMP (the same libgomp as
// leangrad's kernels), following the calling thread's default, which gemm() sets from
// set_num_threads; inside a parallel region it runs on the calling thread.
#include <leangrad/kernels/cpu/gemm.h>

#include <algorithm>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <leangrad/core/allocator.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu::onednn {

bool built() {
  return true;
}

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

// Note [oneDNN's sgemm with b transposed]
// oneDNN 2.6's sgemm on an AVX-512 CPU is slow for c = a b^T (trans_b, the layout of every
// nn::Linear forward: x (batch, in) times weight (out, in) transposed) once m reaches 16 rows,
// where its small-m kernel stops, and slower still on two threads than on one: (32, 512) x
// (512, 2048) took 0.94 ms on one thread and 1.16 on two, against 0.70 and 0.36 for the same
// product with b stored (512, 2048), and (32, 2048) x (2048, 512) 1.23 and 1.63 against 0.61 and
// 0.31 (Zen 4; bench/results/2026-12-05-cpu-transposed-gemm-zen4-2core.md). So there, b^T is
// copied into a row-major scratch by the CPU's strided copy (cpu::cast, which takes the tiled
// transposed copy: Note [Tiled transposed copy] in kernels/cpu/transpose_copy.cpp) and sgemm runs
// on the copy with trans_b false, a panel of c's columns at a time: panels of at most 256 KiB, at
// least one per thread, each thread copying its own panels and multiplying them alone, so a copy is
// read back from the cache of the core that wrote it. One 4 MiB copy shared by both threads ran as
// fast on a quiet machine, but on runs where the guest's two cores were slow with memory the copy
// took three times as long and the backward of a Linear after it up to 1.6 times its old time. The
// copy reads b once, k n floats, against the product's m k n multiply-adds. Measured, for b of at
// least 512K elements: 1.1 to 5.0 times the speed for 16 <= m <= 512 on two threads, 0.94 to 1.9
// for 16 <= m <= 64 on one, where above 64 rows it is a loss as often as a gain (0.90 to 1.14); for
// smaller b, (512, 784) and below, a loss of up to 16% on two threads in one run of the grid and a
// gain in another (bench/gemm_transposed_b.cpp prints the grid). With AVX2 alone
// (ONEDNN_MAX_CPU_ISA=AVX2 on the same machine) it is the other way around, b^T read in place is
// the faster layout, so there every product goes to oneDNN as it comes. The choice is fixed by the
// CPU, the thread count, the shapes and arguments, so a product's result does not change from call
// to call. A product called inside a parallel region (one of a batch, each on its own thread:
// conv2d's weight gradient per sample) stays as it comes: (64, 2304) x (2304, 576) there, on one
// thread with a copy of 5 MiB per sample, took conv2d's weight gradient of a (4, 64, 48, 48) input
// on its im2col path from 3.9-4.0 to 5.1-5.5 ms.

namespace {

constexpr std::int64_t kTransposedFirstMinRows = 16;
constexpr std::int64_t kTransposedFirstMaxRowsOneThread = 64;
constexpr std::int64_t kTransposedFirstMaxRows = 512;
constexpr std::int64_t kTransposedFirstMinElements = std::int64_t{1} << 19;
constexpr std::int64_t kTransposedPanelBytes = std::int64_t{256} << 10;
constexpr std::int64_t kPanelColumnMultiple = 16;

void checked_sgemm(char trans_a, char trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                   float beta, float* c, std::int64_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success) {
    LG_THROW(Error, "gemm (cpu kernel, oneDNN ", version(), " sgemm): m=", m, " n=", n, " k=", k,
             " lda=", lda, " ldb=", ldb, " ldc=", ldc, " trans_a=", trans_a == 'T',
             " trans_b=", trans_b == 'T', " failed: ", dnnl_status2str(status));
  }
}

bool avx512_kernels() {
  static const bool avx512 =
      (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
  return avx512;
}

// Whether sgemm copies b^T first (the Note's rule). Inside a parallel region (a batch of
// products, conv2d's weight gradient per sample) the product runs on its thread alone and is left
// as it comes.
bool copies_b_transposed_first(bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (!trans_b || m < kTransposedFirstMinRows || n * k < kTransposedFirstMinElements ||
      omp_in_parallel() || !avx512_kernels()) {
    return false;
  }
  return m <= (max_threads() > 1 ? kTransposedFirstMaxRows : kTransposedFirstMaxRowsOneThread);
}

// The (cols, rows) float matrix out, rows ld_out apart, = in (rows, cols), rows ld_in apart,
// transposed, through the CPU's strided copy: out's index (j, i) runs along in's rows of out
// (out's stride ld_out, in's 1), then along out's rows (out's stride 1, in's ld_in).
void copy_transposed_floats(const float* in, std::int64_t rows, std::int64_t cols,
                            std::int64_t ld_in, float* out, std::int64_t ld_out) {
  ElementwiseGeometry g;
  g.ndim = 2;
  g.num_operands = 2;
  g.numel = rows * cols;
  g.sizes[0] = cols;
  g.sizes[1] = rows;
  g.strides[0][0] = ld_out;
  g.strides[0][1] = 1;
  g.strides[1][0] = 1;
  g.strides[1][1] = ld_in;
  cast(DType::Float32, DType::Float32, g, out, in);
}

}  // namespace

void sgemm_b_transposed_first(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k,
                              float alpha, const float* a, std::int64_t lda, const float* b,
                              std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                              std::int64_t panel_bytes) {
  // Panels of a multiple of 16 columns, at least one per thread, each within panel_bytes.
  const auto round_up = [](std::int64_t x) {
    return (x + kPanelColumnMultiple - 1) / kPanelColumnMultiple * kPanelColumnMultiple;
  };
  const std::int64_t fitting = panel_bytes / static_cast<std::int64_t>(sizeof(float)) /
                               std::max<std::int64_t>(k, 1) / kPanelColumnMultiple *
                               kPanelColumnMultiple;
  const std::int64_t threads = max_threads();
  const std::int64_t per_thread = round_up((n + threads - 1) / threads);
  const std::int64_t panel =
      std::min(n, std::max(std::min(fitting, per_thread), kPanelColumnMultiple));
  const std::int64_t panels = (n + panel - 1) / panel;
  // A thread copies its panels and multiplies them alone (sgemm inside a parallel region runs
  // on the calling thread): the copy is read by the core that wrote it.
  parallel_for(panels, 1, [&](std::int64_t begin, std::int64_t end) {
    // From the CPU caching allocator, as a tensor's memory: reused from call to call without the
    // page faults of fresh memory, counted in the memory stats, and 64-byte aligned.
    const DataPtr block =
        allocator_for(Device::cpu()).allocate(static_cast<std::size_t>(panel * k) * sizeof(float));
    auto* const scratch = static_cast<float*>(block.get());
    for (std::int64_t p = begin; p < end; ++p) {
      const std::int64_t j0 = p * panel;
      const std::int64_t width = std::min(panel, n - j0);
      // b's rows j0 .. j0 + width (k floats each) become the panel's columns.
      copy_transposed_floats(b + j0 * ldb, width, k, ldb, scratch, width);
      checked_sgemm(trans_a ? 'T' : 'N', 'N', m, width, k, alpha, a, lda, scratch, width, beta,
                    c + j0, ldc);
    }
  });
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  if (copies_b_transposed_first(trans_b, m, n, k)) {
    sgemm_b_transposed_first(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                             kTransposedPanelBytes);
    return;
  }
  checked_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
}

}  // namespace leangrad::kernels::cpu::onednn
