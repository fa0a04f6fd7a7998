// oneDNN's direct convolution behind kernels/cpu/conv_direct.h (built with LEANGRAD_WITH_ONEDNN),
// of 2 or 3 spatial dims. Per call: reorder the plain operands into the blocked layouts the
// primitive chose (format `any`), run the primitive, reorder the result back to NCHW (NCDHW).
// What is built once per problem (the primitive, its reorders, their scratch sizes) is cached,
// see Note [Direct convolution cache]. The choice between this and im2col + GEMM for conv2d is
// kernels/cpu/conv.cpp's; for conv3d, ops::use_conv3d_kernel's (kernels/ops_conv.cpp).
#include <leangrad/kernels/cpu/conv_direct.h>

#include <omp.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl_debug.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/async_signals.h>
#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu::onednn {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Note [Direct convolution cache]
//   - Key: the operation (forward, input grad, weight grad), every size of the geometry, whether
//     there is a bias, and the thread count: oneDNN fixes a primitive's split over threads when
//     it builds it, so a primitive is only run with the count it was built for.
//   - Value: the primitive, the reorders into and out of its layouts, and the scratch size of
//     each (scratchpad_mode::user: every call allocates its own scratch, so one primitive may
//     run on several threads at once), or "not supported" when oneDNN offers no direct
//     implementation, so that the question is asked once.
//   - A mutex guards the map; entries are shared_ptr, so a call keeps using its entry even if
//     another thread clears the map. The map is cleared when it reaches kMaxCachedProblems
//     (a program that convolves ever new shapes does not grow without bound; a network has a
//     handful of shapes).
constexpr std::size_t kMaxCachedProblems = 1024;

enum class Op : std::int64_t { Forward, InputGrad, WeightGrad };

// A convolution over 2 or 3 spatial dims as oneDNN takes it: conv2d's geometry with an extent of
// 1 in depth, or conv3d's. Arrays are (depth, height, width).
struct Problem {
  int spatial_dims = 2;
  std::int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  std::array<std::int64_t, 3> in{}, kernel{}, out{}, stride{}, pad{}, dilation{};

  std::int64_t in_per_group() const { return in_channels / groups; }
  std::int64_t out_per_group() const { return out_channels / groups; }
  std::int64_t spatial(const std::array<std::int64_t, 3>& a) const { return a[0] * a[1] * a[2]; }
  std::int64_t x_sample() const { return in_channels * spatial(in); }
  std::int64_t y_sample() const { return out_channels * spatial(out); }
  std::int64_t weight_size() const { return out_channels * in_per_group() * spatial(kernel); }
  // The trailing `spatial_dims` entries of a (depth, height, width) array.
  memory::dims dims(const std::array<std::int64_t, 3>& a) const {
    return memory::dims(a.begin() + (3 - spatial_dims), a.end());
  }
  auto operator<=>(const Problem&) const = default;
};

Problem problem_of(const Conv2dGeometry& g) {
  Problem p;
  p.spatial_dims = 2;
  p.batch = g.batch, p.in_channels = g.in_channels, p.out_channels = g.out_channels;
  p.groups = g.groups;
  p.in = {1, g.in_h, g.in_w}, p.kernel = {1, g.kernel_h, g.kernel_w}, p.out = {1, g.out_h, g.out_w};
  p.stride = {1, g.stride_h, g.stride_w}, p.pad = {0, g.pad_h, g.pad_w};
  p.dilation = {1, g.dilation_h, g.dilation_w};
  return p;
}

Problem problem_of(const Conv3dGeometry& g) {
  Problem p;
  p.spatial_dims = 3;
  p.batch = g.batch, p.in_channels = g.in_channels, p.out_channels = g.out_channels;
  p.groups = g.groups;
  p.in = g.in, p.kernel = g.kernel, p.out = g.out;
  p.stride = g.stride, p.pad = g.pad, p.dilation = g.dilation;
  return p;
}

struct Key {
  Op op;
  Problem problem;
  bool bias;
  int threads;
  auto operator<=>(const Key&) const = default;
};

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A reorder from a plain layout into the primitive's (or back), absent when they are the same.
struct Reorder {
  memory::desc from, to;
  dnnl::primitive primitive;
  memory::desc scratch;
  bool needed = false;
};

Reorder make_reorder(const memory::desc& from, const memory::desc& to) {
  Reorder r;
  r.from = from;
  r.to = to;
  if (from == to) return r;
  const dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratchpad());
  r.primitive = dnnl::reorder(pd);
  r.scratch = pd.scratchpad_desc();
  r.needed = true;
  return r;
}

// One cached problem: operands a and b (in the primitive's argument slots arg_a and arg_b), the
// result (arg_out), the optional bias (plain, no reorder).
struct DirectConv {
  bool supported = false;
  dnnl::primitive conv;
  memory::desc conv_scratch;
  int arg_a = 0, arg_b = 0, arg_out = 0;
  Reorder a, b, out;  // out: from the primitive's layout to the plain one
  memory::desc bias;
};

// The plain layouts of x, w (grouped: (g, C_out/g, C_in/g, k...), the same memory), y.
struct PlainLayouts {
  memory::desc x, w, y, bias;
};

PlainLayouts plain_layouts(const Problem& p) {
  const auto f32 = memory::data_type::f32;
  const bool volume = p.spatial_dims == 3;
  auto shape = [&](std::initializer_list<std::int64_t> leading,
                   const std::array<std::int64_t, 3>& extent) {
    memory::dims d(leading);
    const memory::dims tail = p.dims(extent);
    d.insert(d.end(), tail.begin(), tail.end());
    return d;
  };
  PlainLayouts plain;
  plain.x =
      memory::desc(shape({p.batch, p.in_channels}, p.in), f32, volume ? Tag::ncdhw : Tag::nchw);
  plain.y =
      memory::desc(shape({p.batch, p.out_channels}, p.out), f32, volume ? Tag::ncdhw : Tag::nchw);
  if (p.groups == 1) {
    plain.w = memory::desc(shape({p.out_channels, p.in_channels}, p.kernel), f32,
                           volume ? Tag::oidhw : Tag::oihw);
  } else {
    plain.w = memory::desc(shape({p.groups, p.out_per_group(), p.in_per_group()}, p.kernel), f32,
                           volume ? Tag::goidhw : Tag::goihw);
  }
  plain.bias = memory::desc({p.out_channels}, f32, Tag::x);
  return plain;
}

// Generated (jit) code only: oneDNN's own im2col + GEMM ("gemm:jit") would only repeat our GEMM
// path, and its reference loop ("ref:any") is far slower than either.
bool is_direct(const std::string& impl) {
  return impl.find("gemm") == std::string::npos && impl.find("ref") == std::string::npos;
}

DirectConv build(Op op, const Problem& g, bool has_bias) {
  const auto f32 = memory::data_type::f32;
  const PlainLayouts plain = plain_layouts(g);
  auto any = [&](const memory::desc& d) { return memory::desc(d.dims(), f32, Tag::any); };
  const memory::dims strides = g.dims(g.stride);
  memory::dims dilation = g.dims(g.dilation);  // oneDNN counts the gaps
  for (auto& d : dilation)
    d -= 1;
  // Right/bottom padding as left/top: oneDNN checks the output size with the same floor division.
  const memory::dims padding = g.dims(g.pad);
  const auto algorithm = dnnl::algorithm::convolution_direct;
  const memory::desc no_bias;

  const dnnl::convolution_forward::primitive_desc forward_pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm, any(plain.x),
                                      any(plain.w), has_bias ? plain.bias : no_bias, any(plain.y),
                                      strides, dilation, padding, padding),
      user_scratchpad(), cpu_engine());
  DirectConv d;
  std::string impl;
  switch (op) {
    case Op::Forward:
      impl = forward_pd.impl_info_str();
      d.conv = dnnl::convolution_forward(forward_pd);
      d.conv_scratch = forward_pd.scratchpad_desc();
      d.arg_a = DNNL_ARG_SRC, d.arg_b = DNNL_ARG_WEIGHTS, d.arg_out = DNNL_ARG_DST;
      d.a = make_reorder(plain.x, forward_pd.src_desc());
      d.b = make_reorder(plain.w, forward_pd.weights_desc());
      d.out = make_reorder(forward_pd.dst_desc(), plain.y);
      if (has_bias) d.bias = plain.bias;
      break;
    case Op::InputGrad: {
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(algorithm, any(plain.x), any(plain.w), any(plain.y),
                                                strides, dilation, padding, padding),
          user_scratchpad(), cpu_engine(), forward_pd);
      impl = pd.impl_info_str();
      d.conv = dnnl::convolution_backward_data(pd);
      d.conv_scratch = pd.scratchpad_desc();
      d.arg_a = DNNL_ARG_DIFF_DST, d.arg_b = DNNL_ARG_WEIGHTS, d.arg_out = DNNL_ARG_DIFF_SRC;
      d.a = make_reorder(plain.y, pd.diff_dst_desc());
      d.b = make_reorder(plain.w, pd.weights_desc());
      d.out = make_reorder(pd.diff_src_desc(), plain.x);
      break;
    }
    case Op::WeightGrad: {
      const dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(algorithm, any(plain.x), any(plain.w),
                                                   any(plain.y), strides, dilation, padding,
                                                   padding),
          user_scratchpad(), cpu_engine(), forward_pd);
      impl = pd.impl_info_str();
      d.conv = dnnl::convolution_backward_weights(pd);
      d.conv_scratch = pd.scratchpad_desc();
      d.arg_a = DNNL_ARG_DIFF_DST, d.arg_b = DNNL_ARG_SRC, d.arg_out = DNNL_ARG_DIFF_WEIGHTS;
      d.a = make_reorder(plain.y, pd.diff_dst_desc());
      d.b = make_reorder(plain.x, pd.src_desc());
      d.out = make_reorder(pd.diff_weights_desc(), plain.w);
      break;
    }
  }
  d.supported = is_direct(impl);
  return d;
}

// The cached problem for (op, g, bias) at the calling thread's thread count, built on first use;
// nullptr when oneDNN has no direct implementation of it (also remembered).
std::shared_ptr<const DirectConv> cached(Op op, const Problem& g, bool has_bias, int threads) {
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const DirectConv>> cache;
  const Key key{op, g, has_bias, threads};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second->supported ? it->second : nullptr;
  }
  // Built outside the lock (oneDNN generates code here: milliseconds); two threads asking for the
  // same new problem at once both build it, and the second keeps the first one's.
  auto entry = std::make_shared<DirectConv>();
  // oneDNN splits the work for the calling thread's OpenMP default when it builds a primitive, and
  // a primitive run inside a parallel region executes only thread 0's share of that split: one
  // built for 2 threads and run by one chunk's thread left half the weight gradient unwritten. So
  // the default is `threads` while building, whatever the caller's.
  struct DefaultThreads {
    int previous = omp_get_max_threads();
    explicit DefaultThreads(int n) { omp_set_num_threads(n); }
    ~DefaultThreads() { omp_set_num_threads(previous); }
  };
  {
    const DefaultThreads building(threads);
    try {
      *entry = build(op, g, has_bias);
    } catch (const dnnl::error&) {
      entry->supported = false;  // "unimplemented" and dimensions oneDNN cannot take alike
    }
  }
  const std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxCachedProblems) cache.clear();
  auto [it, inserted] = cache.emplace(key, std::move(entry));
  return it->second->supported ? it->second : nullptr;
}

std::string op_name(Op op, const Problem& g) {
  const std::string conv = g.spatial_dims == 3 ? "conv3d" : "conv2d";
  switch (op) {
    case Op::Forward:
      return conv;
    case Op::InputGrad:
      return conv + "_input_grad";
    case Op::WeightGrad:
      return conv + "_weight_grad";
  }
  return conv;
}

// "(a, b, c...)" of the leading sizes and the trailing spatial_dims of `extent`.
std::string shape_text(const Problem& g, std::initializer_list<std::int64_t> leading,
                       const std::array<std::int64_t, 3>& extent) {
  std::string text = "(";
  for (std::int64_t v : leading)
    text += std::to_string(v) + ", ";
  const memory::dims tail = g.dims(extent);
  for (std::size_t i = 0; i < tail.size(); ++i)
    text += std::to_string(tail[i]) + (i + 1 < tail.size() ? ", " : ")");
  return text;
}

void execute(const dnnl::primitive& primitive, const memory::desc& scratch,
             std::unordered_map<int, memory> args, const dnnl::stream& stream) {
  args.insert({DNNL_ARG_SCRATCHPAD, memory(scratch, cpu_engine())});
  primitive.execute(stream, args);
}

// The operand in the layout `r` leads to: the user's memory itself, or a reordered copy.
memory operand(const Reorder& r, const float* data, const dnnl::stream& stream) {
  memory user(r.from, cpu_engine(), const_cast<float*>(data));  // only read
  if (!r.needed) return user;
  memory blocked(r.to, cpu_engine());
  execute(r.primitive, r.scratch, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, blocked}}, stream);
  return blocked;
}

// One call of the cached primitive `conv` on all of g's samples: reorders in, the convolution,
// the reorder out.
void run_primitive(Op op, const DirectConv& conv, const Problem& g, float* out, const float* a,
                   const float* b, const float* bias) {
  try {
    dnnl::stream stream(cpu_engine());
    std::unordered_map<int, memory> args = {{conv.arg_a, operand(conv.a, a, stream)},
                                            {conv.arg_b, operand(conv.b, b, stream)}};
    if (bias != nullptr)
      args.insert({DNNL_ARG_BIAS, memory(conv.bias, cpu_engine(), const_cast<float*>(bias))});
    const memory user_out(conv.out.to, cpu_engine(), out);
    const memory conv_out = conv.out.needed ? memory(conv.out.from, cpu_engine()) : user_out;
    args.insert({conv.arg_out, conv_out});
    execute(conv.conv, conv.conv_scratch, std::move(args), stream);
    if (conv.out.needed) {
      execute(conv.out.primitive, conv.out.scratch,
              {{DNNL_ARG_FROM, conv_out}, {DNNL_ARG_TO, user_out}}, stream);
    }
    stream.wait();
  } catch (const dnnl::error& e) {
    LG_THROW(Error, op_name(op, g), " (cpu kernel, oneDNN direct convolution): input ",
             shape_text(g, {g.batch, g.in_channels}, g.in), ", weight ",
             shape_text(g, {g.out_channels, g.in_per_group()}, g.kernel), ", groups ", g.groups,
             " failed: ", dnnl_status2str(e.status), " (", e.what(), ")");
  }
}

// Note [Direct convolution threads]
//   As the GEMM path does (kernels/cpu/conv.cpp): the batch is cut into one contiguous chunk of
//   samples per thread, and every thread runs the whole convolution of its chunk (reorders
//   included) on primitives built for one thread, inside one parallel_for. So a call is one
//   OpenMP region, not three (reorder in, convolution, reorder out, each with its barrier, as
//   when oneDNN threads the call itself): on a shared machine with libgomp's default spin, 2
//   threads then took 4x the time of 1 on the CNN's 14 x 14 convolution (docs/kernels.md). A batch
//   of one sample (or one thread) is one chunk with oneDNN's own threading.
//
// Note [Direct convolution pieces]
//   A chunk runs as pieces of consecutive samples whose input and output together stay within
//   kPieceBytes (at least one sample each), one primitive call per piece: past the last-level
//   cache oneDNN's kernels slow down per sample, most where each output element is touched
//   several times (a strided input gradient: conv_transpose3d's (4, 16, 16, 32, 32) by a 3^3
//   kernel at stride 2, 16.7 MB per sample, took 130 ms as one call of 4 samples and 50 ms as four
//   calls of one, and conv3d's 3 MB samples 32.8 -> 31.3 ms; conv2d's benchmarks, whose pieces are
//   whole batches, did not move). Each piece size is a primitive of its own, from the same
//   cache. The weight gradient of a chunk is its pieces' gradients summed in order, then the
//   chunks' in chunk order: the result depends on the shape and the thread count, not on timing.
constexpr std::int64_t kPieceBytes = std::int64_t{8} << 20;

struct Piece {
  std::int64_t chunk = 0, first = 0, samples = 0;
};

struct Plan {
  std::int64_t chunks = 1;
  int primitive_threads = 1;  // the thread count each primitive is built for
  std::vector<Piece> pieces;  // in chunk order, each chunk's in sample order
};

Plan plan_of(const Problem& g, int threads) {
  Plan plan;
  plan.chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, g.batch));
  plan.primitive_threads = plan.chunks == 1 ? threads : 1;
  const std::int64_t sample_bytes = std::max<std::int64_t>(1, 4 * (g.x_sample() + g.y_sample()));
  const std::int64_t per_piece = std::max<std::int64_t>(1, kPieceBytes / sample_bytes);
  if (g.batch == 0) plan.pieces.push_back({0, 0, 0});  // one empty call, as oneDNN's own
  for (std::int64_t chunk = 0; chunk < plan.chunks; ++chunk) {
    const std::int64_t end = (chunk + 1) * g.batch / plan.chunks;
    for (std::int64_t n = chunk * g.batch / plan.chunks; n < end; n += per_piece)
      plan.pieces.push_back({chunk, n, std::min(per_piece, end - n)});
  }
  return plan;
}

// The primitive of each piece size of `plan`, built or taken from the cache; empty when oneDNN
// has no direct implementation of one of them.
std::map<std::int64_t, std::shared_ptr<const DirectConv>> primitives(Op op, const Problem& g,
                                                                     const Plan& plan,
                                                                     bool has_bias) {
  std::map<std::int64_t, std::shared_ptr<const DirectConv>> by_samples;
  for (const Piece& piece : plan.pieces) {
    if (by_samples.count(piece.samples) != 0) continue;
    Problem p = g;
    p.batch = piece.samples;
    std::shared_ptr<const DirectConv> conv = cached(op, p, has_bias, plan.primitive_threads);
    if (conv == nullptr) return {};
    by_samples.emplace(piece.samples, std::move(conv));
  }
  return by_samples;
}

bool run(Op op, const Problem& g, float* out, const float* a, const float* b, const float* bias) {
  // The thread count oneDNN would use: set_num_threads' (max_threads() makes it the calling
  // thread's OpenMP default, which oneDNN follows), or 1 inside a parallel region.
  const Plan plan = plan_of(g, omp_in_parallel() ? 1 : max_threads());
  // As around every oneDNN product: Note [Signals and oneDNN's GEMM kernels].
  const AsyncSignalsDeferred signals_deferred;
  const auto by_samples = primitives(op, g, plan, bias != nullptr);
  if (by_samples.empty()) return false;

  const std::int64_t x_sample = g.x_sample();
  const std::int64_t y_sample = g.y_sample();
  const std::int64_t dw_size = g.weight_size();
  std::vector<std::vector<float>> partial_dw(op == Op::WeightGrad ? plan.chunks - 1 : 0,
                                             std::vector<float>(dw_size));
  auto run_chunk = [&](std::int64_t chunk) {
    std::vector<float> piece_dw;  // a weight gradient piece after the chunk's first
    bool first = true;
    for (const Piece& piece : plan.pieces) {
      if (piece.chunk != chunk) continue;
      const DirectConv& conv = *by_samples.at(piece.samples);
      Problem p = g;
      p.batch = piece.samples;
      const std::int64_t n = piece.first;
      switch (op) {
        case Op::Forward:  // a = x, b = w, out = y
          run_primitive(op, conv, p, out + n * y_sample, a + n * x_sample, b, bias);
          break;
        case Op::InputGrad:  // a = dy, b = w, out = dx
          run_primitive(op, conv, p, out + n * x_sample, a + n * y_sample, b, nullptr);
          break;
        case Op::WeightGrad: {  // a = dy, b = x, out = dw
          float* dw = chunk == 0 ? out : partial_dw[static_cast<std::size_t>(chunk - 1)].data();
          if (first) {
            run_primitive(op, conv, p, dw, a + n * y_sample, b + n * x_sample, nullptr);
          } else {
            piece_dw.resize(static_cast<std::size_t>(dw_size));
            run_primitive(op, conv, p, piece_dw.data(), a + n * y_sample, b + n * x_sample,
                          nullptr);
            for (std::int64_t i = 0; i < dw_size; ++i)
              dw[i] += piece_dw[static_cast<std::size_t>(i)];
          }
          break;
        }
      }
      first = false;
    }
  };
  if (plan.chunks == 1) {
    run_chunk(0);
  } else {
    // A task's exception (run_primitive's Error) reaches the caller through parallel_for (Note
    // [Exceptions out of a parallel region] in kernels/cpu/parallel_for.h).
    parallel_for(plan.chunks, 1, [&](std::int64_t chunk_begin, std::int64_t chunk_end) {
      for (std::int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk)
        run_chunk(chunk);
    });
  }
  for (const std::vector<float>& partial : partial_dw) {
    for (std::int64_t i = 0; i < dw_size; ++i)
      out[i] += partial[static_cast<std::size_t>(i)];
  }
  return true;
}

}  // namespace

bool conv2d_direct_forward(const Conv2dGeometry& g, float* y, const float* x, const float* w,
                           const float* bias) {
  return run(Op::Forward, problem_of(g), y, x, w, bias);
}

bool conv2d_direct_input_grad(const Conv2dGeometry& g, float* dx, const float* dy, const float* w) {
  return run(Op::InputGrad, problem_of(g), dx, dy, w, nullptr);
}

bool conv2d_direct_weight_grad(const Conv2dGeometry& g, float* dw, const float* dy,
                               const float* x) {
  return run(Op::WeightGrad, problem_of(g), dw, dy, x, nullptr);
}

bool conv3d_direct_forward(const Conv3dGeometry& g, float* y, const float* x, const float* w,
                           const float* bias) {
  return run(Op::Forward, problem_of(g), y, x, w, bias);
}

bool conv3d_direct_input_grad(const Conv3dGeometry& g, float* dx, const float* dy, const float* w) {
  return run(Op::InputGrad, problem_of(g), dx, dy, w, nullptr);
}

bool conv3d_direct_weight_grad(const Conv3dGeometry& g, float* dw, const float* dy,
                               const float* x) {
  return run(Op::WeightGrad, problem_of(g), dw, dy, x, nullptr);
}

bool conv3d_direct_available(const Conv3dGeometry& g, bool has_bias) {
  // The primitives run() will ask for at this thread count (Note [Direct convolution threads],
  // Note [Direct convolution pieces]), each built once and kept.
  const Problem problem = problem_of(g);
  const Plan plan = plan_of(problem, omp_in_parallel() ? 1 : max_threads());
  return !primitives(Op::Forward, problem, plan, has_bias).empty() &&
         !primitives(Op::InputGrad, problem, plan, false).empty() &&
         !primitives(Op::WeightGrad, problem, plan, false).empty();
}

}  // namespace leangrad::kernels::cpu::onednn
