// The rearranging functions (autograd/shape_functions.h) and isclose, isin, isposinf, isneginf
// against PyTorch 1.13 (tests/data/shape_functions.json, written by make_shape_functions.py):
// values bit for bit (they move elements, or compare) and the gradients of sum(out * w) of every
// floating input, which are moved weights or their sums (a few roundings at most); views where
// torch's are views. Misuse: the Views table of tests/misuse/test_misuse_tensors.cpp.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("shape_functions.json");
  return all;
}

const ReferenceCase& case_named(const std::string& name) {
  for (const ReferenceCase& c : cases())
    if (c.name == name) return c;
  throw std::runtime_error("no reference case " + name);
}

std::vector<std::int64_t> ints(const nlohmann::json& j) {
  return j.get<std::vector<std::int64_t>>();
}

// The functions under test, by case name: each takes the case's inputs (leaves that require grad
// when floating) in the order the script lists them.
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&, const nlohmann::json&)>;
std::vector<Tensor> one(const Tensor& t) {
  return {t};
}

const std::map<std::string, Fn>& functions() {
  static const std::map<std::string, Fn> all = {
      {"hstack_1d", [](const auto& x, const auto&) { return one(hstack(x)); }},
      {"hstack_2d", [](const auto& x, const auto&) { return one(hstack(x)); }},
      {"vstack", [](const auto& x, const auto&) { return one(vstack(x)); }},
      {"dstack", [](const auto& x, const auto&) { return one(dstack(x)); }},
      {"dstack_1d", [](const auto& x, const auto&) { return one(dstack(x)); }},
      {"column_stack", [](const auto& x, const auto&) { return one(column_stack(x)); }},
      {"atleast",
       [](const auto& x, const auto&) {
         return std::vector<Tensor>{atleast_1d(x[0]), atleast_2d(x[0]), atleast_3d(x[0]),
                                    atleast_2d(x[1]), atleast_3d(x[1]), atleast_3d(x[2])};
       }},
      {"tensor_split_sections",
       [](const auto& x, const auto& p) {
         return tensor_split(x[0], p.at("sections").template get<std::int64_t>(),
                             p.at("dim").template get<std::int64_t>());
       }},
      {"tensor_split_sections_more_than_size",
       [](const auto& x, const auto& p) {
         return tensor_split(x[0], p.at("sections").template get<std::int64_t>(),
                             p.at("dim").template get<std::int64_t>());
       }},
      {"tensor_split_indices",
       [](const auto& x, const auto& p) {
         return tensor_split(x[0], ints(p.at("indices")), p.at("dim").template get<std::int64_t>());
       }},
      {"tensor_split_indices_decreasing",
       [](const auto& x, const auto& p) {
         return tensor_split(x[0], ints(p.at("indices")), p.at("dim").template get<std::int64_t>());
       }},
      {"movedim",
       [](const auto& x, const auto& p) {
         return one(movedim(x[0], ints(p.at("source")), ints(p.at("destination"))));
       }},
      {"movedim_one", [](const auto& x, const auto&) { return one(x[0].movedim(-1, 0)); }},
      {"swapaxes", [](const auto& x, const auto&) { return one(swapaxes(x[0], 0, -1)); }},
      {"broadcast_tensors", [](const auto& x, const auto&) { return broadcast_tensors(x); }},
      {"fliplr_flipud",
       [](const auto& x, const auto&) {
         return std::vector<Tensor>{fliplr(x[0]), x[0].flipud()};
       }},
      {"take_along_dim",
       [](const auto& x, const auto& p) {
         return one(take_along_dim(x[0], x[1], p.at("dim").template get<std::int64_t>()));
       }},
      {"take_along_dim_broadcast",
       [](const auto& x, const auto& p) {
         return one(x[0].take_along_dim(x[1], p.at("dim").template get<std::int64_t>()));
       }},
      {"take_along_dim_flat",
       [](const auto& x, const auto&) { return one(take_along_dim(x[0], x[1])); }},
      {"block_diag", [](const auto& x, const auto&) { return one(block_diag(x)); }},
      {"cartesian_prod", [](const auto& x, const auto&) { return one(cartesian_prod(x)); }},
      {"cartesian_prod_one", [](const auto& x, const auto&) { return one(cartesian_prod(x)); }},
  };
  return all;
}

Fn function_for(const std::string& name) {
  if (name.rfind("rot90_", 0) == 0)
    return [](const std::vector<Tensor>& x, const nlohmann::json& p) {
      return one(rot90(x[0], p.at("k").get<std::int64_t>(), ints(p.at("dims"))));
    };
  if (name.rfind("diag_embed", 0) == 0)
    return [](const std::vector<Tensor>& x, const nlohmann::json& p) {
      return one(diag_embed(x[0], p.at("offset").get<std::int64_t>(),
                            p.at("dim1").get<std::int64_t>(), p.at("dim2").get<std::int64_t>()));
    };
  const auto it = functions().find(name);
  return it == functions().end() ? Fn() : it->second;
}

// Values moved, so bit for bit; gradients are the weights moved or summed over the places an
// input went to (broadcast_tensors, cartesian_prod): within a few roundings.
TEST(ShapeFunctions, MatchPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    const Fn fn = function_for(c.name);
    if (!fn) continue;
    SCOPED_TRACE(c.name);
    // The inputs in the script's order.
    const std::vector<std::string> order = c.params.at("inputs").get<std::vector<std::string>>();
    std::vector<Tensor> inputs;
    for (const std::string& name : order) {
      const Tensor& t = c.at(name);
      inputs.push_back(is_floating(t.dtype()) ? t.clone().requires_grad_() : t);
    }
    const std::vector<Tensor> outs = fn(inputs, c.params);
    ASSERT_EQ(static_cast<std::int64_t>(outs.size()), c.params.at("outputs").get<std::int64_t>());
    Tensor loss;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const std::string index = std::to_string(i);
      const Tensor& want = c.at("out" + index);
      ASSERT_EQ(outs[i].shape(), want.shape()) << "output " << i;
      EXPECT_TRUE(equal(outs[i], want)) << "output " << i;
      if (c.tensors.count("w" + index) && outs[i].requires_grad()) {
        const Tensor term = sum(mul(outs[i], c.at("w" + index)));
        loss = loss.defined() ? add(loss, term) : term;
      }
    }
    if (loss.defined()) {
      loss.backward();
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!c.tensors.count("d_" + order[i])) continue;
        ASSERT_TRUE(inputs[i].grad().defined()) << order[i];
        EXPECT_TRUE(
            matches_within_roundoff(inputs[i].grad(), c.at("d_" + order[i]), {}, {.ulps = 16}))
            << "gradient of " << order[i];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 31);  // every case of make_shape_functions.py's case()
}

TEST(ShapeFunctions, TrilAndTriuIndicesArePyTorchs) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (c.name.rfind("tril_triu_indices_", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const auto row = c.params.at("row").get<std::int64_t>();
    const auto col = c.params.at("col").get<std::int64_t>();
    const auto offset = c.params.at("offset").get<std::int64_t>();
    const Tensor lower = tril_indices(row, col, offset);
    const Tensor upper = triu_indices(row, col, offset);
    EXPECT_EQ(lower.dtype(), kInt64);
    EXPECT_EQ(lower.shape(), c.at("tril").shape());
    EXPECT_TRUE(equal(lower, c.at("tril")));
    EXPECT_EQ(upper.shape(), c.at("triu").shape());
    EXPECT_TRUE(equal(upper, c.at("triu")));
    ++checked;
  }
  EXPECT_EQ(checked, 6);
  EXPECT_EQ(tril_indices(3, 3, 0, kInt32).dtype(), kInt32);
}

// Every coordinate of small matrices against the definition c - r <= offset (lower) or
// c - r >= offset (upper), offsets up to the ends of int64 included: r + offset overflowed there
// and gave an empty or spurious triangle. A triangle too large for memory is refused at once
// (it pushed 5.5e11 coordinates into a vector first).
TEST(ShapeFunctions, TrilAndTriuIndicesAreTheirDefinition) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  std::vector<std::int64_t> offsets = {kMin, kMin + 1, kMax - 1, kMax};
  for (std::int64_t o = -7; o <= 7; ++o)
    offsets.push_back(o);
  for (std::int64_t row = 0; row <= 5; ++row) {
    for (std::int64_t col = 0; col <= 5; ++col) {
      for (const std::int64_t offset : offsets) {
        SCOPED_TRACE(std::to_string(row) + " x " + std::to_string(col) + ", offset " +
                     std::to_string(offset));
        std::vector<double> lower_rows, lower_cols, upper_rows, upper_cols;
        for (std::int64_t r = 0; r < row; ++r) {
          for (std::int64_t c = 0; c < col; ++c) {
            const bool below = c - r <= offset;  // |c - r| <= 5: no overflow
            (below ? lower_rows : upper_rows).push_back(static_cast<double>(r));
            (below ? lower_cols : upper_cols).push_back(static_cast<double>(c));
            if (c - r == offset) {  // on the diagonal: in both (in row order, as every push)
              upper_rows.push_back(static_cast<double>(r));
              upper_cols.push_back(static_cast<double>(c));
            }
          }
        }
        std::vector<double> lower_want = lower_rows, upper_want = upper_rows;
        lower_want.insert(lower_want.end(), lower_cols.begin(), lower_cols.end());
        upper_want.insert(upper_want.end(), upper_cols.begin(), upper_cols.end());
        const Tensor lower = tril_indices(row, col, offset);
        const Tensor upper_got = triu_indices(row, col, offset);
        EXPECT_EQ(lower.shape(), (Shape{2, static_cast<std::int64_t>(lower_rows.size())}));
        EXPECT_EQ(to_vector(lower), lower_want);
        EXPECT_EQ(upper_got.shape(), (Shape{2, static_cast<std::int64_t>(upper_rows.size())}));
        EXPECT_EQ(to_vector(upper_got), upper_want);
      }
    }
  }
  EXPECT_THROW(tril_indices(std::int64_t{1} << 40, std::int64_t{1} << 40), ShapeError);
  EXPECT_THROW(triu_indices(std::int64_t{1} << 40, std::int64_t{1} << 40, kMin), ShapeError);
  // Rows that hold nothing are not visited: a tall matrix whose triangle is empty.
  EXPECT_EQ(tril_indices(std::int64_t{1} << 40, 1, -(std::int64_t{1} << 41)).shape(),
            (Shape{2, 0}));
  EXPECT_EQ(triu_indices(std::int64_t{1} << 40, 1, 1).shape(), (Shape{2, 0}));
}

// movedim and take_along_dim of a 0-d tensor: dim 0 and -1 name its one pseudo-dim, as torch's
// (movedim indexed an empty vector with it, take_along_dim read a size of no dim).
TEST(ShapeFunctions, ZeroDimensionalTensorsInMovedimAndTakeAlongDim) {
  const Tensor s = full({}, 3.0);
  for (const std::int64_t dim : {0, -1}) {
    const Tensor moved = movedim(s, dim, 0);
    EXPECT_EQ(moved.dim(), 0);
    EXPECT_EQ(moved.item<float>(), 3.0f);
    EXPECT_EQ(moved.data_ptr(), s.data_ptr());
    EXPECT_THROW(take_along_dim(s, zeros({}, kInt64), dim), ShapeError);
  }
  EXPECT_THROW(movedim(s, 1, 0), Error);
  EXPECT_EQ(take_along_dim(s, zeros({}, kInt64)).item<float>(), 3.0f);  // no dim: flattened
}

TEST(ShapeFunctions, PredicatesArePyTorchs) {
  const ReferenceCase& close = case_named("isclose");
  EXPECT_TRUE(equal(isclose(close.at("a"), close.at("b")), close.at("default")));
  EXPECT_TRUE(
      equal(isclose(close.at("a"), close.at("b"), 1e-5, 1e-8, true), close.at("equal_nan")));
  EXPECT_TRUE(equal(close.at("a").isclose(close.at("b"), 1e-3, 1e-6), close.at("loose")));
  EXPECT_TRUE(equal(isclose(close.at("a64"), close.at("b64")), close.at("default64")));
  const ReferenceCase& in = case_named("isin");
  EXPECT_TRUE(equal(isin(in.at("elements"), in.at("test")), in.at("isin")));
  EXPECT_TRUE(equal(isin(in.at("elements"), in.at("test"), false, true), in.at("invert")));
  EXPECT_TRUE(equal(isin(in.at("felements"), in.at("ftest")), in.at("fisin")));
  EXPECT_EQ(isin(in.at("elements"), in.at("test")).shape(), (Shape{2, 3}));
  const ReferenceCase& inf = case_named("isposinf_isneginf");
  EXPECT_TRUE(equal(isposinf(inf.at("x")), inf.at("pos")));
  EXPECT_TRUE(equal(inf.at("x").isneginf(), inf.at("neg")));
  EXPECT_TRUE(equal(isposinf(inf.at("ints")), inf.at("ints_pos")));
}

// Views where torch's are views: writing through one reaches the input.
TEST(ShapeFunctions, ViewsShareMemory) {
  const Tensor x = zeros({4, 6});
  const std::vector<Tensor> parts = tensor_split(x, {2, 5}, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].data_ptr(), static_cast<const char*>(x.data_ptr()) + 2 * sizeof(float));
  EXPECT_EQ(movedim(x, 0, 1).data_ptr(), x.data_ptr());
  EXPECT_EQ(swapaxes(x, 0, 1).data_ptr(), x.data_ptr());
  EXPECT_EQ(broadcast_to(zeros({1, 6}), {3, 6}).strides()[0], 0);
}

}  // namespace
}  // namespace leangrad::test
