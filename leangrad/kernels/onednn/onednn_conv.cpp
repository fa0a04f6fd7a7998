// oneDNN's direct convolution behind kernels/cpu/conv_direct.h (built with LEANGRAD_WITH_ONEDNN).
// Per call: reorder the plain operands into the blocked layouts the primitive chose (format
// `any`), run the primitive, reorder the result back to NCHW. What is built once per problem
// (the primitive, its reorders, their scratch sizes) is cached, see Note [Direct convolution
// cache]. The choice between this and im2col + GEMM is kernels/cpu/conv.cpp's.
#include <leangrad/kernels/cpu/conv_direct.h>

#include <omp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
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

struct Key {
  Op op;
  Conv2dGeometry geometry;
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

// The plain layouts of x, w (grouped: (g, C_out/g, C_in/g, kH, kW), the same memory), y.
struct PlainLayouts {
  memory::desc x, w, y, bias;
};

PlainLayouts plain_layouts(const Conv2dGeometry& g) {
  const auto f32 = memory::data_type::f32;
  PlainLayouts p;
  p.x = memory::desc({g.batch, g.in_channels, g.in_h, g.in_w}, f32, Tag::nchw);
  p.y = memory::desc({g.batch, g.out_channels, g.out_h, g.out_w}, f32, Tag::nchw);
  if (g.groups == 1) {
    p.w = memory::desc({g.out_channels, g.in_channels, g.kernel_h, g.kernel_w}, f32, Tag::oihw);
  } else {
    p.w = memory::desc(
        {g.groups, g.out_channels_per_group(), g.in_channels_per_group(), g.kernel_h, g.kernel_w},
        f32, Tag::goihw);
  }
  p.bias = memory::desc({g.out_channels}, f32, Tag::x);
  return p;
}

// Generated (jit) code only: oneDNN's own im2col + GEMM ("gemm:jit") would only repeat our GEMM
// path, and its reference loop ("ref:any") is far slower than either.
bool is_direct(const std::string& impl) {
  return impl.find("gemm") == std::string::npos && impl.find("ref") == std::string::npos;
}

DirectConv build(Op op, const Conv2dGeometry& g, bool has_bias) {
  const auto f32 = memory::data_type::f32;
  const PlainLayouts plain = plain_layouts(g);
  auto any = [&](const memory::desc& d) { return memory::desc(d.dims(), f32, Tag::any); };
  const memory::dims strides = {g.stride_h, g.stride_w};
  const memory::dims dilation = {g.dilation_h - 1, g.dilation_w - 1};  // oneDNN counts the gaps
  // Right/bottom padding as left/top: oneDNN checks the output size with the same floor division.
  const memory::dims padding = {g.pad_h, g.pad_w};
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
std::shared_ptr<const DirectConv> cached(Op op, const Conv2dGeometry& g, bool has_bias,
                                         int threads) {
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

const char* op_name(Op op) {
  switch (op) {
    case Op::Forward:
      return "conv2d";
    case Op::InputGrad:
      return "conv2d_input_grad";
    case Op::WeightGrad:
      return "conv2d_weight_grad";
  }
  return "conv2d";
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
void run_primitive(Op op, const DirectConv& conv, const Conv2dGeometry& g, float* out,
                   const float* a, const float* b, const float* bias) {
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
    LG_THROW(Error, op_name(op), " (cpu kernel, oneDNN direct convolution): input (", g.batch, ", ",
             g.in_channels, ", ", g.in_h, ", ", g.in_w, "), weight (", g.out_channels, ", ",
             g.in_channels_per_group(), ", ", g.kernel_h, ", ", g.kernel_w, "), groups ", g.groups,
             " failed: ", dnnl_status2str(e.status), " (", e.what(), ")");
  }
}

// Note [Direct convolution threads]
//   As the GEMM path does (kernels/cpu/conv.cpp): the batch is cut into one contiguous chunk of
//   samples per thread, and every thread runs the whole convolution of its chunk (reorders
//   included) on a primitive built for one thread, inside one parallel_for. So a call is one
//   OpenMP region, not three (reorder in, convolution, reorder out, each with its barrier, as
//   when oneDNN threads the call itself): on a shared machine with libgomp's default spin, 2
//   threads then took 4x the time of 1 on the CNN's 14 x 14 convolution (docs/kernels.md). The
//   weight gradient sums per-chunk partials in chunk order afterwards: the result depends on the
//   thread count, not on timing. Chunks differ by at most one sample, so at most two primitives.
//   A batch of one sample (or one thread) is one call with oneDNN's own threading.
bool run(Op op, const Conv2dGeometry& g, float* out, const float* a, const float* b,
         const float* bias) {
  // The thread count oneDNN would use: set_num_threads' (max_threads() makes it the calling
  // thread's OpenMP default, which oneDNN follows), or 1 inside a parallel region.
  const int threads = omp_in_parallel() ? 1 : max_threads();
  const std::int64_t chunks = std::min<std::int64_t>(threads, g.batch);
  // As around every oneDNN product: Note [Signals and oneDNN's GEMM kernels].
  const AsyncSignalsDeferred signals_deferred;
  if (chunks <= 1) {
    const std::shared_ptr<const DirectConv> conv = cached(op, g, bias != nullptr, threads);
    if (conv == nullptr) return false;
    run_primitive(op, *conv, g, out, a, b, bias);
    return true;
  }
  Conv2dGeometry small = g;
  small.batch = g.batch / chunks;
  Conv2dGeometry large = small;
  large.batch = small.batch + 1;
  const std::shared_ptr<const DirectConv> small_conv = cached(op, small, bias != nullptr, 1);
  const std::shared_ptr<const DirectConv> large_conv =
      g.batch % chunks == 0 ? small_conv : cached(op, large, bias != nullptr, 1);
  if (small_conv == nullptr || large_conv == nullptr) return false;

  const std::int64_t x_sample = g.in_channels * g.in_pixels();
  const std::int64_t y_sample = g.out_channels * g.out_pixels();
  const std::int64_t dw_size = g.out_channels * g.patch_size();
  std::vector<std::vector<float>> partial_dw(op == Op::WeightGrad ? chunks - 1 : 0,
                                             std::vector<float>(dw_size));
  // A task's exception (run_primitive's Error) reaches the caller through parallel_for (Note
  // [Exceptions out of a parallel region] in kernels/cpu/parallel_for.h).
  parallel_for(chunks, 1, [&](std::int64_t chunk_begin, std::int64_t chunk_end) {
    for (std::int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      const std::int64_t n = chunk * g.batch / chunks;
      const std::int64_t samples = (chunk + 1) * g.batch / chunks - n;
      const DirectConv& conv = samples == small.batch ? *small_conv : *large_conv;
      const Conv2dGeometry& cg = samples == small.batch ? small : large;
      switch (op) {
        case Op::Forward:  // a = x, b = w, out = y
          run_primitive(op, conv, cg, out + n * y_sample, a + n * x_sample, b, bias);
          break;
        case Op::InputGrad:  // a = dy, b = w, out = dx
          run_primitive(op, conv, cg, out + n * x_sample, a + n * y_sample, b, nullptr);
          break;
        case Op::WeightGrad:  // a = dy, b = x, out = dw
          run_primitive(op, conv, cg, chunk == 0 ? out : partial_dw[chunk - 1].data(),
                        a + n * y_sample, b + n * x_sample, nullptr);
          break;
      }
    }
  });
  for (const std::vector<float>& partial : partial_dw) {
    for (std::int64_t i = 0; i < dw_size; ++i)
      out[i] += partial[i];
  }
  return true;
}

}  // namespace

bool conv2d_direct_forward(const Conv2dGeometry& g, float* y, const float* x, const float* w,
                           const float* bias) {
  return run(Op::Forward, g, y, x, w, bias);
}

bool conv2d_direct_input_grad(const Conv2dGeometry& g, float* dx, const float* dy, const float* w) {
  return run(Op::InputGrad, g, dx, dy, w, nullptr);
}

bool conv2d_direct_weight_grad(const Conv2dGeometry& g, float* dw, const float* dy,
                               const float* x) {
  return run(Op::WeightGrad, g, dw, dy, x, nullptr);
}

}  // namespace leangrad::kernels::cpu::onednn
