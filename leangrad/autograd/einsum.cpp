// einsum (autograd/einsum.h).
//
// Note [einsum by pairs]
//   The equation is parsed into labels, and each operand is brought into one layout of rank R:
//   the output's dims in the output's order ("..." standing for its dims, broadcast and
//   right-aligned), then the summed labels in order of first appearance, then the "..." dims if
//   the output lacks them (they are summed then, as torch.einsum's); a label an operand lacks is
//   a dim of size 1 there. A label repeated within a term is that operand's diagonal first
//   (`diagonal` of autograd/linalg_functions.h: the two dims moved last, made one of n * n
//   elements, and every (n + 1)-th taken, so the gradient is a strided copy back).
//   The operands are then multiplied together left to right, each product summing the labels
//   that no later operand and not the output has, as torch.einsum does (its sumproduct_pair). A
//   product of A and B is one batched matrix product: the dims both have (and keep) are the
//   batch, the summed dims both have are the inner dim, the dims only A has (B has size 1 there)
//   the rows and those only B has the columns; a summed dim only one of them has is summed
//   within that operand first. So "bij,bjk->bik" is a bmm of (b, i, j) and (b, j, k), and never
//   forms the (b, i, j, k) product that multiplying first and summing after would. A pair with
//   nothing to contract ("ij,ij->ij", "i,j->ij") is an elementwise product. The result
//   has the layout's rank again; the last step sums what is left, and the output is the layout's
//   leading dims.
//   Everything is a differentiable function (permute, reshape, slice, sum, matmul), so the
//   gradient and its gradient come from theirs. PyTorch may pick another contraction order (with
//   opt_einsum); the value is the same up to rounding.
#include <leangrad/autograd/einsum.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>

namespace leangrad {
namespace {

constexpr const char* kOp = "einsum";
constexpr int kNumLabels = 52;  // A-Z, then a-z: ASCII order
constexpr int kEllipsis = -1;   // "..." in a term

int label_index(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return 26 + (c - 'a');
}

char label_char(int label) {
  return label < 26 ? static_cast<char>('A' + label) : static_cast<char>('a' + label - 26);
}

bool is_label(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

// One term's labels in order, kEllipsis where "..." stands. `where`: the term's description for
// errors ("operand 1", "the output").
std::vector<int> parse_term(std::string_view term, std::string_view equation,
                            const std::string& where) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (std::size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      LG_CHECK(term.substr(i, 3) == "...", kOp, ": equation \"", equation, "\": ", where,
               "'s term has a '.' outside an ellipsis \"...\"");
      LG_CHECK(!ellipsis, kOp, ": equation \"", equation, "\": ", where,
               "'s term has more than one ellipsis \"...\"");
      ellipsis = true;
      labels.push_back(kEllipsis);
      i += 2;
    } else {
      LG_CHECK(is_label(c), kOp, ": equation \"", equation, "\": invalid character '", c, "' in ",
               where, "'s term (expected letters a-z, A-Z, \"...\", ',' and \"->\")");
      labels.push_back(label_index(c));
    }
  }
  return labels;
}

std::string shapes_str(const std::vector<Tensor>& operands) {
  std::string out;
  for (std::size_t i = 0; i < operands.size(); ++i)
    out += (i ? ", " : "") + shape_str(operands[i].shape());
  return out;
}

// The product of a and b (one rank, broadcastable shapes) with the dims in `summed` summed out,
// the result of that rank with size 1 there (Note [einsum by pairs]).
Tensor sum_product(Tensor a, Tensor b, const std::vector<bool>& summed) {
  const auto rank = static_cast<std::int64_t>(summed.size());
  // A summed dim only one operand has is summed within it first.
  DimList a_only;
  DimList b_only;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (!summed[d]) continue;
    if (a.size(d) != 1 && b.size(d) == 1) a_only.push_back(d);
    if (b.size(d) != 1 && a.size(d) == 1) b_only.push_back(d);
  }
  if (!a_only.empty()) a = sum(a, a_only, /*keepdim=*/true);
  if (!b_only.empty()) b = sum(b, b_only, /*keepdim=*/true);

  // Nothing left to contract (every summed dim is of size 1 now): an elementwise product.
  bool contracts = false;
  for (std::int64_t d = 0; d < rank; ++d)
    contracts = contracts || (summed[d] && a.size(d) != 1);
  if (!contracts) return mul(a, b);

  std::vector<std::int64_t> batch, rows, inner, cols;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (summed[d]) {
      inner.push_back(d);  // size 1 in both, or one size in both
    } else if (a.size(d) == b.size(d)) {
      batch.push_back(d);
    } else if (b.size(d) == 1) {
      rows.push_back(d);
    } else {
      cols.push_back(d);
    }
  }
  const auto product = [](const Tensor& t, const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (const std::int64_t d : dims)
      n = checked_mul(n, t.size(d), kOp);
    return n;
  };
  const auto concat = [](std::initializer_list<const std::vector<std::int64_t>*> parts) {
    std::vector<std::int64_t> out;
    for (const auto* p : parts)
      out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  const std::int64_t nb = product(a, batch);
  const std::int64_t nr = product(a, rows);
  const std::int64_t nk = product(a, inner);
  const std::int64_t nc = product(b, cols);
  // a's cols and b's rows are dims of size 1: they go last, where the reshape drops them.
  const Tensor a3 = reshape(permute(a, concat({&batch, &rows, &inner, &cols})), {nb, nr, nk});
  const Tensor b3 = reshape(permute(b, concat({&batch, &inner, &cols, &rows})), {nb, nk, nc});
  const Tensor c3 = matmul(a3, b3);
  // Back to the layout: batch, rows, inner (size 1), cols in that order, then permuted home.
  Shape grouped;
  for (const std::int64_t d : batch)
    grouped.push_back(a.size(d));
  for (const std::int64_t d : rows)
    grouped.push_back(a.size(d));
  for (std::size_t i = 0; i < inner.size(); ++i)
    grouped.push_back(1);
  for (const std::int64_t d : cols)
    grouped.push_back(b.size(d));
  const std::vector<std::int64_t> order = concat({&batch, &rows, &inner, &cols});
  std::vector<std::int64_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    inverse[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
  return permute(reshape(c3, grouped), inverse);
}

}  // namespace

Tensor einsum(std::string_view equation_in, const std::vector<Tensor>& operands) {
  LG_PROFILE_OP(operands);
  std::string equation;
  for (const char c : equation_in)
    if (c != ' ') equation.push_back(c);
  LG_CHECK(!operands.empty(), kOp, ": expected at least one operand, got none");
  autograd::check_operands(kOp, operands);

  // ---- Parse -----------------------------------------------------------------------------------
  const std::size_t arrow = equation.find("->");
  LG_CHECK(arrow == std::string::npos || equation.find("->", arrow + 2) == std::string::npos, kOp,
           ": equation \"", equation, "\" has more than one \"->\"");
  const std::string_view lhs = std::string_view(equation).substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (std::size_t start = 0;;) {
    const std::size_t comma = lhs.find(',', start);
    const std::string where = "operand " + std::to_string(terms.size());
    terms.push_back(parse_term(lhs.substr(start, comma - start), equation, where));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  LG_CHECK(terms.size() == operands.size(), kOp, ": equation \"", equation, "\" has ", terms.size(),
           " term(s) before \"->\", but ", operands.size(), " operand(s) were given (shapes ",
           shapes_str(operands), ")");

  // Each label's size (-1: not seen yet), how often it occurs, and the "..." dims' broadcast shape.
  std::array<std::int64_t, kNumLabels> size;
  size.fill(-1);
  std::array<int, kNumLabels> count{};
  std::int64_t ellipsis_rank = 0;
  bool any_ellipsis = false;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto letters = static_cast<std::int64_t>(
        std::count_if(terms[i].begin(), terms[i].end(), [](int l) { return l != kEllipsis; }));
    const bool has_ellipsis = letters != static_cast<std::int64_t>(terms[i].size());
    const std::int64_t rank = operands[i].dim();
    LG_CHECK_SHAPE(has_ellipsis ? rank >= letters : rank == letters, kOp, ": equation \"", equation,
                   "\": operand ", i, "'s term has ", letters, " label(s)",
                   has_ellipsis ? " and \"...\"" : "", ", but the operand has ", rank,
                   " dim(s) (shape ", operands[i].shape(), ")");
    if (has_ellipsis) {
      any_ellipsis = true;
      ellipsis_rank = std::max(ellipsis_rank, rank - letters);
    }
  }
  Shape ellipsis_shape(static_cast<std::size_t>(ellipsis_rank), 1);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Tensor& x = operands[i];
    const std::int64_t covered = x.dim() - static_cast<std::int64_t>(terms[i].size()) + 1;
    std::int64_t d = 0;
    for (const int label : terms[i]) {
      if (label == kEllipsis) {
        for (std::int64_t e = 0; e < covered; ++e, ++d) {
          std::int64_t& s = ellipsis_shape[static_cast<std::size_t>(ellipsis_rank - covered + e)];
          LG_CHECK_SHAPE(s == 1 || x.size(d) == 1 || s == x.size(d), kOp, ": equation \"", equation,
                         "\": the dims \"...\" stands for do not broadcast (shapes ",
                         shapes_str(operands), ")");
          if (x.size(d) != 1) s = x.size(d);
        }
        continue;
      }
      std::int64_t& s = size[static_cast<std::size_t>(label)];
      LG_CHECK_SHAPE(s == -1 || s == 1 || x.size(d) == 1 || s == x.size(d), kOp, ": equation \"",
                     equation, "\": label '", label_char(label), "' has size ", s,
                     " in one place and ", x.size(d), " in operand ", i, " (shapes ",
                     shapes_str(operands), ")");
      if (s == -1 || s == 1) s = x.size(d);
      ++count[static_cast<std::size_t>(label)];
      ++d;
    }
  }

  // The output's labels: given after "->", or "..." and the labels that occur once, in order.
  std::vector<int> output;
  if (arrow != std::string::npos) {
    output = parse_term(std::string_view(equation).substr(arrow + 2), equation, "the output");
    std::array<bool, kNumLabels> seen{};
    for (const int label : output) {
      if (label == kEllipsis) {
        LG_CHECK(any_ellipsis, kOp, ": equation \"", equation,
                 "\": the output has \"...\", but no operand's term does");
        continue;
      }
      LG_CHECK(count[static_cast<std::size_t>(label)] > 0, kOp, ": equation \"", equation,
               "\": output label '", label_char(label), "' is in no operand's term");
      LG_CHECK(!seen[static_cast<std::size_t>(label)], kOp, ": equation \"", equation,
               "\": output label '", label_char(label), "' occurs more than once");
      seen[static_cast<std::size_t>(label)] = true;
    }
  } else {
    if (any_ellipsis) output.push_back(kEllipsis);
    for (int label = 0; label < kNumLabels; ++label)
      if (count[static_cast<std::size_t>(label)] == 1) output.push_back(label);
  }

  // ---- The layout: the output's dims in its order, then the summed labels, then "..." if the
  // output lacks it (its dims are summed then, as torch.einsum's) --------------------------------
  std::array<std::int64_t, kNumLabels> position;
  position.fill(-1);
  std::int64_t ellipsis_start = -1;
  std::int64_t rank = 0;
  for (const int label : output) {
    if (label == kEllipsis) {
      ellipsis_start = rank;
      rank += ellipsis_rank;
    } else {
      position[static_cast<std::size_t>(label)] = rank++;
    }
  }
  const std::int64_t output_rank = rank;
  for (const auto& term : terms)
    for (const int label : term)
      if (label != kEllipsis && position[static_cast<std::size_t>(label)] == -1)
        position[static_cast<std::size_t>(label)] = rank++;
  if (ellipsis_start == -1) {
    ellipsis_start = rank;
    rank += ellipsis_rank;
  }
  // The label at a layout position (for errors).
  const auto label_at = [&](std::int64_t p) {
    for (int label = 0; label < kNumLabels; ++label)
      if (position[static_cast<std::size_t>(label)] == p) return label_char(label);
    return '.';
  };

  // Each operand in the layout: its diagonals taken, its dims permuted, size 1 where it lacks one.
  std::vector<Tensor> laid_out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Tensor x = operands[i];
    // Each dim's place in the layout; "..." dims right-aligned among the layout's first.
    std::vector<std::int64_t> place;
    const std::int64_t covered = x.dim() - static_cast<std::int64_t>(terms[i].size()) + 1;
    for (const int label : terms[i]) {
      if (label == kEllipsis) {
        for (std::int64_t e = 0; e < covered; ++e)
          place.push_back(ellipsis_start + ellipsis_rank - covered + e);
      } else {
        place.push_back(position[static_cast<std::size_t>(label)]);
      }
    }
    // A repeated label: the diagonal of its two dims, appended last (place moves with it).
    for (bool repeated = true; repeated;) {
      repeated = false;
      for (std::size_t a = 0; a < place.size() && !repeated; ++a) {
        for (std::size_t b = a + 1; b < place.size() && !repeated; ++b) {
          if (place[a] != place[b]) continue;  // "..." dims have places of their own
          LG_CHECK_SHAPE(
              x.size(static_cast<std::int64_t>(a)) == x.size(static_cast<std::int64_t>(b)), kOp,
              ": equation \"", equation, "\": label '", label_at(place[a]), "' repeats in operand ",
              i, " over dims of sizes ", x.size(static_cast<std::int64_t>(a)), " and ",
              x.size(static_cast<std::int64_t>(b)), " (shape ", x.shape(), ")");
          const std::int64_t p = place[a];
          x = diagonal(x, 0, static_cast<std::int64_t>(a), static_cast<std::int64_t>(b));
          place.erase(place.begin() + static_cast<std::ptrdiff_t>(b));
          place.erase(place.begin() + static_cast<std::ptrdiff_t>(a));
          place.push_back(p);
          repeated = true;
        }
      }
    }
    // Permute the dims into layout order, then insert size-1 dims for the rest.
    std::vector<std::int64_t> order(place.size());
    for (std::size_t k = 0; k < order.size(); ++k)
      order[k] = static_cast<std::int64_t>(k);
    std::sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) {
      return place[static_cast<std::size_t>(l)] < place[static_cast<std::size_t>(r)];
    });
    Shape shape(static_cast<std::size_t>(rank), 1);
    for (std::size_t k = 0; k < place.size(); ++k)
      shape[static_cast<std::size_t>(place[k])] = x.size(static_cast<std::int64_t>(k));
    laid_out.push_back(reshape(permute(x, order), shape));
  }

  // ---- Products left to right, each summing what nothing later needs -------------------------
  // last_use[d]: the last operand with a dim of size > 1 at layout position d (an output dim is
  // never summed).
  std::vector<std::int64_t> last_use(static_cast<std::size_t>(rank), -1);
  for (std::size_t i = 0; i < laid_out.size(); ++i)
    for (std::int64_t d = 0; d < rank; ++d)
      if (laid_out[i].size(d) != 1)
        last_use[static_cast<std::size_t>(d)] = static_cast<std::int64_t>(i);
  const auto summed_after = [&](std::size_t i) {
    std::vector<bool> summed(static_cast<std::size_t>(rank), false);
    for (std::int64_t d = output_rank; d < rank; ++d)
      summed[static_cast<std::size_t>(d)] =
          last_use[static_cast<std::size_t>(d)] <= static_cast<std::int64_t>(i);
    return summed;
  };
  Tensor result = laid_out[0];
  for (std::size_t i = 1; i < laid_out.size(); ++i)
    result = sum_product(result, laid_out[i], summed_after(i));
  // What is left to sum: the summed dims of a single operand (size 1 elsewhere).
  DimList rest;
  for (std::int64_t d = output_rank; d < rank; ++d)
    if (result.size(d) != 1) rest.push_back(d);
  if (!rest.empty()) result = sum(result, rest, /*keepdim=*/true);
  // The output: the layout's first output_rank dims, already in the equation's order.
  return reshape(result, Shape(result.shape().begin(), result.shape().begin() + output_rank));
}

}  // namespace leangrad
