// The fused CPU attention kernel (kernels/cpu/attention.cpp, Note [Fused attention]) against the
// plain loops of kernels/cpu/attention_reference.h (output and the three gradients, float32 and
// float64, shapes that end in partial query and key blocks, causal with L < S and L > S, Bool and
// float masks broadcast over the batch, a row with no key in reach), float16 and bfloat16 as the
// float32 kernel on widened operands, and scaled_dot_product_
// attention's two backends against each other through autograd (with and without dropout, which
// must drop the same weights in both): the same values and gradients,
// what each saves for backward, SdpaKernelGuard's choice and its refusals. The composed path is
// checked against PyTorch in tests/nn/test_attention.cpp, which runs the fused kernel too.
#include <gtest/gtest.h>

#include <algorithm>
#include <any>
#include <cmath>
#include <string>
#include <vector>

#include <leangrad/autograd/attention.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/saved_tensor.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/cpu/attention.h>
#include <leangrad/kernels/cpu/attention_reference.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using kernels::cpu::AttentionGeometry;
using kernels::cpu::AttentionMask;

// How far the fused kernel may be from the reference loops (or the composed path). Each stage
// (the scores, the weighted sum of values, and in backward d_p, d_scores and the three products)
// is a sum of at most n products, n = max(L, S, E, Ev); two summation orders of one sum differ by
// at most 2 n u times the sum of its terms' magnitudes, which with inputs in [-1, 1] and weights
// summing to 1 stays within a small multiple of the largest value involved. softmax turns an
// absolute error d of a score into a relative error of at most 2 d of a weight; e^x adds
// 1.02 ulps (float) and each of the at most S / 128 + 1 online rescales one rounding. Five
// stages in a chain, each at most doubling what it is given: 64 n u max(1, max|want|), as the
// PyTorch comparisons of tests/nn/test_attention.cpp. A wrong mask, block edge, rescale or
// transpose moves values by O(0.1).
void expect_close(const Tensor& got, const Tensor& want, double n, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const double u = test::math_unit_roundoff(want.dtype());
  const double bound = 64 * n * u * std::max(1.0, test::max_abs(want));
  const std::vector<double> g = test::to_vector(got), w = test::to_vector(want);
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      ASSERT_TRUE(std::isnan(g[i])) << what << " element " << i << ": " << g[i] << " vs NaN";
      continue;
    }
    ASSERT_LE(std::abs(g[i] - w[i]), bound)
        << what << " element " << i << ": " << g[i] << " vs " << w[i];
  }
}

Tensor uniform(const Shape& shape, DType dtype) {
  return sub(mul(rand(shape, TensorOptions().dtype(dtype)), 2.0), 1.0);
}

struct Case {
  std::string name;
  std::int64_t batch, l, s, e, ev;
  bool is_causal = false;
  enum class MaskKind { None, Bool, Float } mask = MaskKind::None;
};

// The mask of a case as the kernel reads it: Bool (L, S) shared by every batch, with query 3's
// row all false when L > 3 (no key in reach: NaN); float (B, 1, S), one row per batch broadcast
// over the queries.
struct MaskData {
  Tensor tensor;
  AttentionMask view;
};

MaskData make_mask(const Case& c, DType dtype) {
  MaskData m;
  if (c.mask == Case::MaskKind::None) return m;
  if (c.mask == Case::MaskKind::Bool) {
    m.tensor = gt(rand({c.l, c.s}), 0.3);
    if (c.l > 3) m.tensor.select(0, 3).fill_(0.0);
    m.view.data = m.tensor.data_ptr();
    m.view.is_bool = true;
    m.view.batch_offsets.assign(static_cast<std::size_t>(c.batch), 0);
    m.view.stride_l = c.s;
    m.view.stride_s = 1;
  } else {
    m.tensor = uniform({c.batch, 1, c.s}, dtype);
    m.view.data = m.tensor.data_ptr();
    for (std::int64_t b = 0; b < c.batch; ++b)
      m.view.batch_offsets.push_back(b * c.s);
    m.view.stride_l = 0;
    m.view.stride_s = 1;
  }
  return m;
}

std::vector<Case> cases() {
  using K = Case::MaskKind;
  return {
      {"one_by_one", 1, 1, 1, 3, 2},
      {"partial_blocks", 2, 70, 150, 16, 24},
      {"several_key_blocks", 1, 130, 300, 8, 8},
      {"causal_more_keys", 2, 70, 150, 16, 12, true},
      {"causal_more_queries", 2, 150, 70, 12, 16, true},
      {"bool_mask_dead_row", 2, 67, 131, 8, 5, false, K::Bool},
      {"float_mask", 3, 20, 140, 8, 8, false, K::Float},
      {"no_features", 2, 5, 7, 0, 3},
  };
}

class AttentionKernel : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionKernel, MatchesReferenceLoops) {
  const DType dtype = GetParam();
  manual_seed(7);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Tensor q = uniform({c.batch, c.l, c.e}, dtype);
    const Tensor k = uniform({c.batch, c.s, c.e}, dtype);
    const Tensor v = uniform({c.batch, c.s, c.ev}, dtype);
    const Tensor dy = uniform({c.batch, c.l, c.ev}, dtype);
    const MaskData mask = make_mask(c, dtype);
    const double scale = c.e > 0 ? 1.0 / std::sqrt(static_cast<double>(c.e)) : 1.0;
    const AttentionGeometry g{c.batch, c.l, c.s, c.e, c.ev, scale, c.is_causal};

    const ops::AttentionOutput fused = ops::attention(q, k, v, mask.tensor, c.is_causal, scale);
    const ops::AttentionGrads grads =
        ops::attention_backward(dy, q, k, v, fused.output, fused.logsumexp, mask.tensor,
                                c.is_causal, scale, 0.0, 0, 0, true, true, true);

    Tensor out = empty({c.batch, c.l, c.ev}, TensorOptions().dtype(dtype));
    Tensor dq = empty(q.shape(), q.options()), dk = empty(k.shape(), k.options()),
           dv = empty(v.shape(), v.options());
    auto reference = [&]<typename T>(T) {
      kernels::cpu::reference::attention_forward<T>(g, mask.view, q.data_ptr<T>(), k.data_ptr<T>(),
                                                    v.data_ptr<T>(), out.data_ptr<T>());
      kernels::cpu::reference::attention_backward<T>(
          g, mask.view, dy.data_ptr<T>(), q.data_ptr<T>(), k.data_ptr<T>(), v.data_ptr<T>(),
          dq.data_ptr<T>(), dk.data_ptr<T>(), dv.data_ptr<T>());
    };
    if (dtype == kFloat32) {
      reference(float{});
    } else {
      reference(double{});
    }
    const double n = static_cast<double>(std::max({c.l, c.s, c.e, c.ev}));
    expect_close(fused.output, out, n, "output");
    if (c.mask == Case::MaskKind::Bool && c.l > 3) {
      // Query 3 reaches no key: NaN, as softmax over -inf everywhere (and so the value's
      // gradient it feeds), and its logsumexp -inf; its scores take no gradient (masked_fill's
      // rule in the composed path), so its query's gradient is 0.
      EXPECT_TRUE(std::isnan(test::to_vector(fused.output.select(1, 3))[0]));
      EXPECT_EQ(test::to_vector(fused.logsumexp.select(1, 3))[0],
                -std::numeric_limits<double>::infinity());
      EXPECT_EQ(test::max_abs(grads.grad_query.select(1, 3)), 0.0);
    }
    expect_close(grads.grad_query, dq, n, "query's gradient");
    expect_close(grads.grad_key, dk, n, "key's gradient");
    expect_close(grads.grad_value, dv, n, "value's gradient");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionKernel, ::testing::Values(kFloat32, kFloat64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// The backward computes only the gradients asked for, and the same ones as when all are asked.
TEST(AttentionKernel, GradientsOnlyWhenAsked) {
  manual_seed(3);
  const Tensor q = uniform({2, 9, 4}, kFloat64), k = uniform({2, 11, 4}, kFloat64),
               v = uniform({2, 11, 3}, kFloat64), dy = uniform({2, 9, 3}, kFloat64);
  const ops::AttentionOutput f = ops::attention(q, k, v, Tensor(), true, 0.5);
  const ops::AttentionGrads all = ops::attention_backward(
      dy, q, k, v, f.output, f.logsumexp, Tensor(), true, 0.5, 0.0, 0, 0, true, true, true);
  const ops::AttentionGrads key_only = ops::attention_backward(
      dy, q, k, v, f.output, f.logsumexp, Tensor(), true, 0.5, 0.0, 0, 0, false, true, false);
  EXPECT_FALSE(key_only.grad_query.defined());
  EXPECT_FALSE(key_only.grad_value.defined());
  EXPECT_EQ(test::to_vector(key_only.grad_key), test::to_vector(all.grad_key));
}

// ---- float16 and bfloat16 -----------------------------------------------------------------------

// got and want of one dtype and shape, element for element the same value (and sign of zero), or
// both NaN.
void expect_same_values(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = test::to_vector(got), w = test::to_vector(want);
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      ASSERT_TRUE(std::isnan(g[i])) << what << " element " << i << ": " << g[i] << " vs NaN";
      continue;
    }
    ASSERT_TRUE(g[i] == w[i] && std::signbit(g[i]) == std::signbit(w[i]))
        << what << " element " << i << ": " << g[i] << " vs " << w[i];
  }
}

// 16-bit operands run the float32 kernel (Note [Fused attention in 16 bits] in
// kernels/ops_attention.cpp): the output is the float32 kernel's on the widened operands, rounded
// once; the logsumexp is that kernel's, in float32; the three gradients are the float32
// kernel's from the widened gradient, operands and rounded output, each rounded once. With
// every mask kind, causal, and dropout drawn from equally seeded generators.
TEST(AttentionKernel16Bit, IsTheFloat32KernelOnTheWidenedOperandsRoundedOnce) {
  manual_seed(3);
  const std::int64_t n = 2, l = 37, s = 150, e = 8, ev = 6;
  for (const DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor q = uniform({n, l, e}, kFloat32).to(dtype),
                 k = uniform({n, s, e}, kFloat32).to(dtype),
                 v = uniform({n, s, ev}, kFloat32).to(dtype),
                 dy = uniform({n, l, ev}, kFloat32).to(dtype);
    const std::vector<Tensor> masks = {Tensor(), gt(rand({l, s}), 0.2),
                                       uniform({n, 1, s}, kFloat32).to(dtype)};
    for (std::size_t m = 0; m < masks.size(); ++m) {
      for (const bool causal : {false, true}) {
        if (causal && masks[m].defined()) continue;
        for (const double dropout_p : {0.0, 0.3}) {
          SCOPED_TRACE("mask " + std::to_string(m) + (causal ? " causal" : "") + " dropout " +
                       std::to_string(dropout_p));
          const Tensor& mask = masks[m];
          const Tensor wide_mask =
              mask.defined() && mask.dtype() != kBool ? mask.to(kFloat32) : mask;
          const double scale = 0.4;
          Generator g16, g32;
          g16.manual_seed(8);
          g32.manual_seed(8);
          const ops::AttentionOutput y =
              ops::attention(q, k, v, mask, causal, scale, dropout_p, &g16);
          const ops::AttentionOutput y32 =
              ops::attention(q.to(kFloat32), k.to(kFloat32), v.to(kFloat32), wide_mask, causal,
                             scale, dropout_p, &g32);
          expect_same_values(y.output, y32.output.to(dtype), "output");
          expect_same_values(y.logsumexp, y32.logsumexp, "logsumexp");
          const ops::AttentionGrads grads = ops::attention_backward(
              dy, q, k, v, y.output, y.logsumexp, mask, causal, scale, dropout_p, y.dropout_seed,
              y.dropout_offset, true, true, true);
          const ops::AttentionGrads grads32 = ops::attention_backward(
              dy.to(kFloat32), q.to(kFloat32), k.to(kFloat32), v.to(kFloat32),
              y.output.to(kFloat32), y.logsumexp, wide_mask, causal, scale, dropout_p,
              y.dropout_seed, y.dropout_offset, true, true, true);
          expect_same_values(grads.grad_query, grads32.grad_query.to(dtype), "query's gradient");
          expect_same_values(grads.grad_key, grads32.grad_key.to(dtype), "key's gradient");
          expect_same_values(grads.grad_value, grads32.grad_value.to(dtype), "value's gradient");
        }
      }
    }
  }
}

// Through scaled_dot_product_attention a 16-bit call takes the fused kernel (it saves no
// weights), and autograd hands the kernel's float32 logsumexp to its backward.
TEST(AttentionKernel16Bit, ScaledDotProductAttentionTakesTheFusedKernel) {
  const std::int64_t n = 2, l = 20, s = 40, e = 8;
  const Tensor q = uniform({n, l, e}, kFloat32).to(kBFloat16).requires_grad_();
  const Tensor k = uniform({n, s, e}, kFloat32).to(kBFloat16).requires_grad_();
  const Tensor v = uniform({n, s, e}, kFloat32).to(kBFloat16).requires_grad_();
  const Tensor dy = uniform({n, l, e}, kFloat32).to(kBFloat16);
  const SdpaKernelGuard guard({SDPBackend::FlashAttention});
  const Tensor out = scaled_dot_product_attention(q, k, v);
  out.backward(dy);
  const double scale = 1.0 / std::sqrt(static_cast<double>(e));
  const ops::AttentionOutput y =
      ops::attention(q.detach(), k.detach(), v.detach(), {}, false, scale);
  const ops::AttentionGrads grads =
      ops::attention_backward(dy, q.detach(), k.detach(), v.detach(), y.output, y.logsumexp, {},
                              false, scale, 0.0, 0, 0, true, true, true);
  expect_same_values(out.detach(), y.output, "output");
  expect_same_values(q.grad(), grads.grad_query, "query's gradient");
  expect_same_values(k.grad(), grads.grad_key, "key's gradient");
  expect_same_values(v.grad(), grads.grad_value, "value's gradient");
}

// ---- Through scaled_dot_product_attention -----------------------------------------------------

// Output and gradients of q, k, v with only `backend` allowed, dropout drawn after seeding the
// generators with 21 (so both backends draw the same numbers).
std::vector<Tensor> run(SDPBackend backend, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& mask, bool causal, const Tensor& w, double dropout_p) {
  const SdpaKernelGuard guard({backend});
  std::vector<Tensor> in = {q.detach().requires_grad_(), k.detach().requires_grad_(),
                            v.detach().requires_grad_()};
  manual_seed(21);
  const Tensor out = scaled_dot_product_attention(in[0], in[1], in[2], mask, dropout_p, causal);
  sum(mul(out, w)).backward();
  return {out, in[0].grad(), in[1].grad(), in[2].grad()};
}

TEST(ScaledDotProductAttentionFused, EqualsTheComposedPath) {
  manual_seed(11);
  for (const DType dtype : {kFloat64, kFloat32}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::int64_t n = 2, heads = 3, l = 33, s = 140, e = 8;
    const Tensor q = uniform({n, heads, l, e}, dtype), k = uniform({n, heads, s, e}, dtype),
                 v = uniform({n, heads, s, e}, dtype), w = uniform({n, heads, l, e}, dtype);
    const std::vector<Tensor> masks = {Tensor(), gt(rand({l, s}), 0.2),
                                       uniform({n, 1, 1, s}, dtype)};
    for (std::size_t m = 0; m < masks.size(); ++m) {
      for (const bool causal : {false, true}) {
        if (causal && masks[m].defined()) continue;
        for (const double dropout_p : {0.0, 0.3}) {
          SCOPED_TRACE("mask " + std::to_string(m) + (causal ? " causal" : "") + " dropout " +
                       std::to_string(dropout_p));
          const std::vector<Tensor> fused =
              run(SDPBackend::FlashAttention, q, k, v, masks[m], causal, w, dropout_p);
          const std::vector<Tensor> math =
              run(SDPBackend::Math, q, k, v, masks[m], causal, w, dropout_p);
          const char* names[] = {"output", "query's gradient", "key's gradient",
                                 "value's gradient"};
          for (std::size_t i = 0; i < fused.size(); ++i)
            expect_close(fused[i], math[i], static_cast<double>(s), names[i]);
          if (dropout_p > 0.0) {
            // The same weights dropped, and some were: without dropout the output differs.
            const std::vector<Tensor> kept =
                run(SDPBackend::FlashAttention, q, k, v, masks[m], causal, w, 0.0);
            EXPECT_GT(test::max_abs(sub(kept[0], fused[0])), 0.01);
          }
        }
      }
    }
  }
}

// A query row a bool mask keeps from every key: both backends give its output NaN (softmax over
// -inf everywhere) and so the value's gradient of its batch; its scores take no gradient
// (masked_fill's, in the composed path), so its query's gradient is 0 and the keys' gradients are
// the other rows' alone. The fused kernel's recomputed weights e^(-inf - -inf) had made the query's
// and every key's gradient of the batch NaN. The other batch entry, unmasked, agrees as ever.
TEST(ScaledDotProductAttentionFused, ARowWithNoKeyHasTheComposedPathsGradients) {
  manual_seed(12);
  const std::int64_t n = 2, l = 4, s = 5, e = 3;
  const Tensor q = uniform({n, l, e}, kFloat64), k = uniform({n, s, e}, kFloat64),
               v = uniform({n, s, e}, kFloat64), w = uniform({n, l, e}, kFloat64);
  Tensor mask = gt(rand({n, l, s}), 0.3);
  mask.select(0, 0).select(0, 2).fill_(0.0);               // batch 0, query 2: no key
  mask.select(0, 0).select(0, 1).select(0, 0).fill_(1.0);  // every other row reaches a key
  mask.select(0, 0).select(0, 3).select(0, 0).fill_(1.0);
  mask.select(0, 0).select(0, 0).select(0, 0).fill_(1.0);
  mask.select(0, 1).fill_(1.0);
  const std::vector<Tensor> fused = run(SDPBackend::FlashAttention, q, k, v, mask, false, w, 0.0);
  const std::vector<Tensor> math = run(SDPBackend::Math, q, k, v, mask, false, w, 0.0);
  const char* names[] = {"output", "query's gradient", "key's gradient", "value's gradient"};
  for (std::size_t i = 0; i < fused.size(); ++i) {
    SCOPED_TRACE(names[i]);
    const std::vector<double> f = test::to_vector(fused[i]), m = test::to_vector(math[i]);
    ASSERT_EQ(f.size(), m.size());
    for (std::size_t x = 0; x < f.size(); ++x) {
      if (std::isnan(m[x])) {
        EXPECT_TRUE(std::isnan(f[x])) << "element " << x << ": " << f[x];
      } else {
        EXPECT_NEAR(f[x], m[x], 1e-13) << "element " << x;
      }
    }
  }
  EXPECT_TRUE(std::isnan(test::to_vector(fused[0].select(0, 0).select(0, 2))[0]));
  EXPECT_EQ(test::to_vector(fused[1].select(0, 0).select(0, 2)), std::vector<double>(e, 0.0));
  EXPECT_FALSE(std::isnan(test::max_abs(fused[2])));
}

// The point of the kernel: backward keeps query, key, value, the output and one logsumexp per
// query row, where the composed path keeps the (..., L, S) weights besides.
TEST(ScaledDotProductAttentionFused, SavesNoWeights) {
  const std::int64_t n = 2, l = 50, s = 300, e = 16;
  const Tensor q = uniform({n, l, e}, kFloat32).requires_grad_();
  const Tensor k = uniform({n, s, e}, kFloat32).requires_grad_();
  const Tensor v = uniform({n, s, e}, kFloat32).requires_grad_();
  auto saved_bytes = [&](SDPBackend backend) {
    const SdpaKernelGuard guard({backend});
    std::size_t bytes = 0;
    const autograd::SavedTensorHooksGuard hooks(
        [&bytes](const Tensor& t) -> std::any {
          bytes += t.nbytes();
          return t;
        },
        [](const std::any& a) { return std::any_cast<Tensor>(a); });
    const Tensor out = scaled_dot_product_attention(q, k, v);
    sum(out).backward();
    return bytes;
  };
  const std::size_t element = sizeof(float);
  const std::size_t qkv = static_cast<std::size_t>(n * l * e + 2 * n * s * e) * element;
  EXPECT_EQ(saved_bytes(SDPBackend::FlashAttention),
            qkv + static_cast<std::size_t>(n * l * e + n * l) * element);
  EXPECT_GE(saved_bytes(SDPBackend::Math), qkv + static_cast<std::size_t>(n * l * s) * element);
}

TEST(ScaledDotProductAttentionFused, DerivativesMatchFiniteDifferences) {
  manual_seed(5);
  const Tensor q = uniform({2, 3, 2}, kFloat64).requires_grad_();
  const Tensor k = uniform({2, 4, 2}, kFloat64).requires_grad_();
  const Tensor v = uniform({2, 4, 3}, kFloat64).requires_grad_();
  const Tensor mask = uniform({3, 4}, kFloat64);
  const SdpaKernelGuard guard({SDPBackend::FlashAttention});
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal);
    // Causal with dropout: the same mask at every evaluation (the generators seeded first); the
    // second derivatives then go through the composed path with that mask drawn again.
    auto f = [&](const std::vector<Tensor>& in) {
      manual_seed(4);
      return scaled_dot_product_attention(in[0], in[1], in[2], causal ? Tensor() : mask,
                                          causal ? 0.25 : 0.0, causal);
    };
    EXPECT_TRUE(test::gradcheck(f, {q, k, v}));
    // Second order: the fused backward differentiates the composed path under create_graph.
    EXPECT_TRUE(test::gradcheck(
        [f](const std::vector<Tensor>& in) {
          AutoGradMode enable(true);
          const Tensor y = f(in);
          return autograd::grad({sum(mul(y, y))}, {in[0], in[1], in[2]}, {}, std::nullopt, true)[0];
        },
        {q, k, v}));
  }
}

TEST(ScaledDotProductAttentionFused, NoKeysGiveZeros) {
  const Tensor q = uniform({2, 3, 4}, kFloat64), k = uniform({2, 0, 4}, kFloat64),
               v = uniform({2, 0, 5}, kFloat64);
  for (const SDPBackend backend : {SDPBackend::FlashAttention, SDPBackend::Math}) {
    const SdpaKernelGuard guard({backend});
    const Tensor out = scaled_dot_product_attention(q, k, v);
    EXPECT_EQ(out.shape(), (Shape{2, 3, 5}));
    EXPECT_EQ(test::max_abs(out), 0.0);
  }
}

TEST(ScaledDotProductAttentionFused, GuardRefusesWhatTheKernelCannotTake) {
  const Tensor q = uniform({2, 3, 4}, kFloat32), k = uniform({2, 5, 4}, kFloat32),
               v = uniform({2, 5, 4}, kFloat32);
  const SdpaKernelGuard guard({SDPBackend::FlashAttention});
  const Tensor learned_mask = uniform({3, 5}, kFloat32).requires_grad_();
  EXPECT_THROW_MSG(scaled_dot_product_attention(q, k, v, learned_mask),
                   "it gives no gradient for the mask");
  EXPECT_THROW_MSG(scaled_dot_product_attention(q, k.select(0, 0), v.select(0, 0)),
                   "same leading dims");
  // Without the guard the same calls compose.
  const SdpaKernelGuard both({SDPBackend::Math, SDPBackend::FlashAttention});
  EXPECT_EQ(scaled_dot_product_attention(q, k.select(0, 0), v.select(0, 0)).shape(),
            (Shape{2, 3, 4}));
}

TEST(AttentionKernel, RefusesBadOperands) {
  const Tensor q = uniform({2, 3, 4}, kFloat32), k = uniform({2, 5, 4}, kFloat32),
               v = uniform({2, 5, 4}, kFloat32);
  EXPECT_THROW_MSG(ops::attention(q, k, v.to(kFloat64), {}, false, 1.0), "of one floating dtype");
  EXPECT_THROW_MSG(ops::attention(q, k, v, uniform({3, 5}, kFloat64), false, 1.0),
                   "attn_mask must be Bool or of the query's dtype");
  EXPECT_THROW_MSG(ops::attention(q, k.slice(1, 0, 4), v, {}, false, 1.0), "same leading dims");
  EXPECT_THROW_MSG(ops::attention(q, k, v, ones({4, 5}, TensorOptions().dtype(kBool)), false, 1.0),
                   "does not broadcast");
}

}  // namespace
}  // namespace leangrad
