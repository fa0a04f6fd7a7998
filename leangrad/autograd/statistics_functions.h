// Order statistics, the reductions that skip NaN, covariance, integration and searching sorted
// sequences, as torch's: median, nanmedian, kthvalue, mode, quantile, nanquantile, nansum,
// nanmean, aminmax, var_mean, std_mean, histc, histogram, histogramdd, cov, corrcoef, trapezoid,
// cumulative_trapezoid, unique, unique_dim, unique_consecutive, searchsorted and bucketize.
// Compositions of sort, gather, the reductions and the elementwise ops (so on every device,
// differentiable where torch's are) and, for searchsorted, the bisection kernel of kernels/ops.h.
// Note [Order statistics] in statistics_functions.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad {

// ---- Order statistics --------------------------------------------------------------------------
// The lower median of all elements (of n sorted, the one at (n - 1) / 2), as torch.median: NaN if
// any element is NaN, and NaN for an empty input. The gradient is split evenly among the elements
// equal to the median (among the NaNs for a NaN median), as PyTorch's.
Tensor median(const Tensor& input);
// (values, indices) of the lower median along dim: a slice holding NaN gives NaN and its first
// NaN's index; otherwise the index is the first position holding the median value. The gradient
// goes to that index. A dim of size 0 is an Error.
std::tuple<Tensor, Tensor> median(const Tensor& input, std::int64_t dim, bool keepdim = false);
// median ignoring NaN, as torch.nanmedian: the lower median of each slice's other elements; a
// slice of NaNs only gives NaN (index: its first NaN).
Tensor nanmedian(const Tensor& input);
std::tuple<Tensor, Tensor> nanmedian(const Tensor& input, std::int64_t dim, bool keepdim = false);
// (values, indices) of the k-th smallest element along dim (k from 1), as torch.kthvalue: NaN the
// largest; the index is the first position holding that value. The gradient goes to the index.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& input, std::int64_t k, std::int64_t dim = -1,
                                    bool keepdim = false);
// (values, indices) of the most frequent value along dim, as torch.mode: of values that tie, the
// smallest; the index is the last position holding it (PyTorch's CPU rule). NaNs count as one
// value, the largest (Note [Mode]). The gradient goes to the index. A dim of size 0 is an Error.
std::tuple<Tensor, Tensor> mode(const Tensor& input, std::int64_t dim = -1, bool keepdim = false);

// The q-th quantiles (q in [0, 1]) of all elements, or along dim, as torch.quantile: of n sorted
// elements the one at rank q (n - 1), computed in input's dtype; between two elements,
// interpolation picks "linear" (lerp by the rank's fraction), "lower", "higher", "nearest"
// (rounding half to even) or "midpoint". A slice holding NaN gives NaN. float32 and float64 input;
// q a number or a 0-d or 1-d tensor of input's dtype (1-d: the quantiles along a new first dim).
// Differentiable (through sort and lerp, as PyTorch's).
Tensor quantile(const Tensor& input, double q, std::optional<std::int64_t> dim = std::nullopt,
                bool keepdim = false, std::string_view interpolation = "linear");
Tensor quantile(const Tensor& input, const Tensor& q,
                std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
// quantile ignoring NaN, as torch.nanquantile: the rank is q (m - 1) for the m elements that are
// not NaN; a slice of NaNs only gives NaN.
Tensor nanquantile(const Tensor& input, double q, std::optional<std::int64_t> dim = std::nullopt,
                   bool keepdim = false, std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& input, const Tensor& q,
                   std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");

// ---- Reductions that skip NaN, pairs of reductions, histograms ---------------------------------
// The sum over dims (none: all) with NaN counted as 0, as torch.nansum: dtypes as sum's (integral
// input has no NaN and gives int64); NaN elements get a zero gradient.
Tensor nansum(const Tensor& input, const DimList& dims = {}, bool keepdim = false);
// nansum divided by the count of elements that are not NaN, as torch.nanmean (a slice of NaNs
// only gives 0 / 0 = NaN). Floating input only.
Tensor nanmean(const Tensor& input, const DimList& dims = {}, bool keepdim = false);
// (amin, amax) over all elements or along dim, as torch.aminmax: NaN propagates; the gradients
// are amin's and amax's (split evenly among equal extrema).
std::tuple<Tensor, Tensor> aminmax(const Tensor& input,
                                   std::optional<std::int64_t> dim = std::nullopt,
                                   bool keepdim = false);
// (var, mean) and (std, mean) over dims, as torch.var_mean and torch.std_mean: var's and std's
// rules (autograd/functions.h), mean over the same dims.
std::tuple<Tensor, Tensor> var_mean(const Tensor& input, const DimList& dims = {},
                                    bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& input, const DimList& dims = {},
                                    bool unbiased = true, bool keepdim = false);

// The histogram of input's elements over `bins` equal bins spanning [min, max], as torch.histc:
// element x goes to bin floor((x - min) * bins / (max - min)), computed in input's dtype as
// torch's (x == max to the last bin); elements outside [min, max] and NaN are not counted. min
// and max both 0 take the data's smallest and largest element (a NaN among them is an Error),
// and equal ones are widened by 1 each way. Counts in input's dtype; floating input only; not
// differentiable.
Tensor histc(const Tensor& input, std::int64_t bins = 100, double min = 0.0, double max = 0.0);

// ---- Covariance and integration ---------------------------------------------------------------
// The covariance matrix (vars, vars) of input's rows, each a variable observed in the columns
// (vars, obs) (a 1-d input: one variable, a 0-d result), as torch.cov: divided by the summed
// weights minus `correction` (N - 1 by default), NaN where that is not positive. fweights (obs),
// integral and non-negative, repeat each observation; aweights (obs), floating and non-negative,
// weigh it (the weights checked on the host). Integral input gives float32. Differentiable in
// input and aweights.
Tensor cov(const Tensor& input, std::int64_t correction = 1,
           const std::optional<Tensor>& fweights = std::nullopt,
           const std::optional<Tensor>& aweights = std::nullopt);
// Pearson's correlation coefficients of input's rows (cov scaled by the standard deviations,
// clamped to [-1, 1]), as torch.corrcoef: NaN for a variable that does not vary.
Tensor corrcoef(const Tensor& input);
// The trapezoidal rule along dim: sum of (x[i + 1] - x[i]) (y[i] + y[i + 1]) / 2 with sample
// points x (1-d with y's size along dim, or broadcastable to y) or spacing dx, as
// torch.trapezoid; fewer than 2 samples give 0. trapz is its old name. Integral y gives float32.
Tensor trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim = -1);
Tensor trapezoid(const Tensor& y, double dx = 1.0, std::int64_t dim = -1);
Tensor trapz(const Tensor& y, const Tensor& x, std::int64_t dim = -1);
Tensor trapz(const Tensor& y, double dx = 1.0, std::int64_t dim = -1);
// The running trapezoidal rule along dim, one value fewer than y has there (the integral up to
// each sample point after the first), as torch.cumulative_trapezoid.
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, std::int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, double dx = 1.0, std::int64_t dim = -1);

// (output, inverse_indices, counts) of input's distinct elements, as torch.unique: output the
// distinct elements ascending (always sorted: PyTorch's sorted=false leaves the order
// unspecified), inverse_indices in input's shape (each element's position in output) and counts
// (how often each occurs), int64 and empty unless asked for. NaN equals nothing, so each NaN is an
// element of its own, after the numbers (PyTorch 1.13's CPU unique miscounts NaN). With a dim,
// the distinct slices along dim, in lexicographic order (unique_dim, LibTorch's name): output
// keeps the other dims, inverse_indices and counts are 1-d. Not differentiable; any dtype.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& input, bool sorted = true,
                                          bool return_inverse = false, bool return_counts = false,
                                          std::optional<std::int64_t> dim = std::nullopt);
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& input, std::int64_t dim,
                                              bool sorted = true, bool return_inverse = false,
                                              bool return_counts = false);

// (hist, bin_edges): the histogram of input's elements over bins equal bins spanning range ({lo,
// hi}; the data's smallest and largest elements by default, widened by 1/2 each way when equal),
// or over the given bin_edges (1-d, increasing, input's dtype), as torch.histogram: element x
// counts in bin i when edges[i] <= x < edges[i + 1], the last bin including its right edge;
// elements outside the edges and NaN do not count. With weight (input's shape) each element adds
// its weight instead of 1; with density the histogram is divided by its sum times each bin's
// width. Floating input (PyTorch refuses integers too); not differentiable. The edges are
// linspace's (one rounding in double), PyTorch's its float32 linspace, which may differ by an ulp.
std::tuple<Tensor, Tensor> histogram(const Tensor& input, std::int64_t bins = 100,
                                     const std::optional<std::vector<double>>& range = std::nullopt,
                                     const std::optional<Tensor>& weight = std::nullopt,
                                     bool density = false);
std::tuple<Tensor, Tensor> histogram(const Tensor& input, const Tensor& bin_edges,
                                     const std::optional<Tensor>& weight = std::nullopt,
                                     bool density = false);
// (hist, bin_edges) of the points input (..., D), the last dim their D coordinates, as
// torch.histogramdd: hist (bins_0, ..., bins_(D-1)) counts the points in each cell (weighted by
// weight, input's shape without its last dim), each dim binned as histogram bins one (equal bins
// over range's {lo_d, hi_d} pairs, 2 D values, or the data's smallest and largest coordinate,
// widened by 1/2 each way when equal; or the given edges, one 1-d increasing tensor per dim); a
// point outside any dim's edges, or with a NaN coordinate, does not count. With density the
// histogram is divided by its sum times each cell's volume. Floating input; not differentiable.
std::tuple<Tensor, std::vector<Tensor>> histogramdd(
    const Tensor& input, const std::vector<std::int64_t>& bins,
    const std::optional<std::vector<double>>& range = std::nullopt,
    const std::optional<Tensor>& weight = std::nullopt, bool density = false);
std::tuple<Tensor, std::vector<Tensor>> histogramdd(
    const Tensor& input, std::int64_t bins,
    const std::optional<std::vector<double>>& range = std::nullopt,
    const std::optional<Tensor>& weight = std::nullopt, bool density = false);
std::tuple<Tensor, std::vector<Tensor>> histogramdd(
    const Tensor& input, const std::vector<Tensor>& bin_edges,
    const std::optional<Tensor>& weight = std::nullopt, bool density = false);

// (output, inverse_indices, counts) of input's runs of equal elements, as
// torch.unique_consecutive: without a dim, of the flattened input (output and counts 1-d, the
// inverse in input's shape: the run each element is in); with a dim, of its slices along dim
// (equal when every element is: output keeps the other dims, inverse and counts 1-d). NaN equals
// nothing, so each NaN is a run of its own. inverse_indices and counts are int64, and empty unless
// asked for (LibTorch's). Not differentiable.
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(
    const Tensor& input, bool return_inverse = false, bool return_counts = false,
    std::optional<std::int64_t> dim = std::nullopt);

// ---- Searching sorted sequences ------------------------------------------------------------
// For each element of input, the index at which it would be inserted into sorted_sequence's last
// dim to keep it sorted, as torch.searchsorted: the first position whose element is not smaller
// (right, or side "right": not smaller or equal). sorted_sequence is 1-d (one sequence for all of
// input) or has input's dims but the last; sorter, when given, holds each row's ascending order
// (argsort's). The two are promoted to a common dtype (not bool). int64 indices, int32 with
// out_int32. NaN, the largest, is inserted at the end. Rows are not checked for being sorted.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32 = false,
                    bool right = false, std::optional<std::string_view> side = std::nullopt,
                    const Tensor& sorter = Tensor());
Tensor searchsorted(const Tensor& sorted_sequence, double value, bool out_int32 = false,
                    bool right = false, std::optional<std::string_view> side = std::nullopt,
                    const Tensor& sorter = Tensor());
// The bucket of each element of input among the 1-d ascending boundaries, as torch.bucketize:
// searchsorted(boundaries, input, out_int32, right).
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);
Tensor bucketize(double value, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);

}  // namespace leangrad
