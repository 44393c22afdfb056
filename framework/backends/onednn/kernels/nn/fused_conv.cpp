// oneDNN kernels of the fused inference ops (framework/ops/nn/fused.h), float32 on the CPU device,
// priority 10 over the reference kernels (framework/backends/cpu/kernels/nn/fused.cpp):
// fused_conv2d = conv2d + bias + a chain of element-wise post-ops (relu, clip, hardswish, linear,
// logistic, swish, sum with a residual), eltwise_chain = the same chain on its own, and
// unblock_channels (nChw16c -> NCHW).
// Algorithm: one oneDNN convolution primitive with primitive_attr post-ops, created like the plain
// conv kernel (kernels/nn/conv.cpp: format_tag::any, forward_training so NCHW tensors get the
// channel-blocked kernels, user-mode scratchpads, primitives cached per geometry + thread count).
// Wide 3x3 stride-1 layers run as Winograd F(4x4, 3x3) (prefer_winograd()), which takes no
// eltwise post-ops: their chain runs afterwards, in place on the result (blocked_conv.h's loops).
// Pointwise, depthwise and most dense convs (blocked_conv_kind()), and eltwise_chain, run on
// blocked_conv.h's loops: no primitive (and no JIT kernel) per geometry. Strided inputs, empty
// tensors and geometries oneDNN cannot plan are declined (supports()), so the reference runs.
// Differences: the weights are reordered into the primitive's layout once and cached by weight
// storage (weak reference + version), not on every call; a Sum residual is reordered into the
// primitive's destination buffer before the convolution runs.
// Reference: the reference kernels; the op spec table (tests/framework/ops/specs/conv_pool_specs.cpp,
// fused_specs.cpp) runs every kernel against them, and tests/framework/backends/blocked_conv_test.cpp
// the loops of every ISA against conv2d and the chain.
#include <dnnl.hpp>
#include <omp.h>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "framework/backends/onednn/engine.h"
#include "framework/backends/onednn/dnnl_check.h"
#include "framework/backends/onednn/blocked_layout.h"
#include "framework/backends/onednn/kernels/nn/blocked_conv.h"
#include "framework/backends/onednn/kernels/nn/conv_dims.h"
#include "framework/core/cpu_features.h"
#include "framework/core/threading.h"
#include "framework/ops/nn/conv_params.h"
#include "framework/ops/nn/fused.h"
#include "framework/tensor/storage.h"

namespace skiff::onednn {
namespace {

using nn_detail::Conv2dParams;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// ---- post-op chain ---------------------------------------------------------------------------

/// The oneDNN eltwise algorithm and its (alpha, beta) for a non-Sum step.
std::tuple<dnnl::algorithm, float, float> eltwise_of(const PostStep& s) {
  switch (s.kind) {
    case PostOpKind::Relu: return {dnnl::algorithm::eltwise_relu, 0.f, 0.f};
    case PostOpKind::LeakyRelu: return {dnnl::algorithm::eltwise_relu, s.alpha, 0.f};  // alpha: negative slope
    case PostOpKind::Clip: return {dnnl::algorithm::eltwise_clip, s.alpha, s.beta};
    case PostOpKind::HardSwish: return {dnnl::algorithm::eltwise_hardswish, 0.f, 0.f};
    case PostOpKind::Linear: return {dnnl::algorithm::eltwise_linear, s.alpha, s.beta};
    case PostOpKind::Logistic: return {dnnl::algorithm::eltwise_logistic, 0.f, 0.f};
    case PostOpKind::Swish: return {dnnl::algorithm::eltwise_swish, s.alpha, 0.f};
    case PostOpKind::Sum: break;
  }
  SKIFF_THROW(InternalError, "fused kernels: Sum is not an eltwise step (this is a bug)");
}

// ---- fused convolution plans -------------------------------------------------------------------

/// A layout change between a skiff tensor and a primitive's argument: a plain loop for NCHW <->
/// nChw16c (blocked_layout.h: no JIT kernel per shape), else a oneDNN reorder.
struct Reorder {
  BlockedReorder loop = BlockedReorder::None;
  std::optional<dnnl::reorder> prim;
  dnnl::memory::desc scratch;
  explicit operator bool() const { return loop != BlockedReorder::None || prim.has_value(); }
};

struct FusedConvPlan {
  dnnl::convolution_forward prim;
  /// The chain the convolution primitive could not take as post-ops (Winograd plans: no Sum
  /// step), run in place on its destination afterwards.
  std::vector<PostStep> after;
  dnnl::memory::desc scratch, bias, src_user, src_prim, wei_user, wei_prim, dst_user, dst_prim, res_user;
  Reorder src_reorder, dst_in_reorder, dst_out_reorder;
  bool with_sum = false;
};

/// Geometry, thread count, bias flag, then three numbers per chain step.
using PlanKey = std::vector<double>;

/// Activation layouts on the skiff side: NCHW, or nChw16c (a [N, ceil(C / 16), H, W, 16] tensor).
struct Layouts {
  bool src_blocked = false;
  bool dst_blocked = false;
  bool res_blocked = false;  ///< the Sum step's residual (when there is one)
};

PlanKey make_key(const Conv2dParams& p, bool with_bias, const std::vector<PostStep>& chain, Layouts lay) {
  PlanKey k{double(p.n), double(p.c), double(p.h), double(p.w), double(p.o), double(p.kh), double(p.kw),
            double(p.oh), double(p.ow), double(p.sh), double(p.sw), double(p.ph), double(p.pw), double(p.dh),
            double(p.dw), double(p.groups), double(omp_get_max_threads()), double(with_bias),
            double(lay.src_blocked), double(lay.dst_blocked), double(lay.res_blocked)};
  for (const PostStep& s : chain) {
    k.push_back(double(int64_t(s.kind)));
    k.push_back(s.alpha);
    k.push_back(s.beta);
  }
  return k;
}

Reorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  Reorder r;
  if (from == to) return r;
  r.loop = blocked_reorder_kind(from, to);
  if (r.loop != BlockedReorder::None) return r;
  dnnl::engine& eng = cpu_engine();
  dnnl::reorder::primitive_desc pd(eng, from, eng, to, user_scratchpad_attr());
  r.scratch = pd.scratchpad_desc();
  r.prim = dnnl::reorder(pd);
  return r;
}

/// Whether to run a fused conv as Winograd F(4x4, 3x3) (oneDNN's jit_wino_4x3, AVX-512 only): 2.25x
/// fewer multiplications for 3x3 stride-1 windows, but its tile transforms cost more than they save
/// on small maps and narrow layers. Measured on this AVX-512 machine (1 image, 1 and 2 threads,
/// NanoDet's geometries): 0.45-0.6x the direct time from 32 channels at 52x52 and 104x104, 0.7-0.8x
/// at 26x26, 1.6-1.9x slower at 13x13 (kernels/nn/conv.cpp measured 1.5-2x slower with 16
/// channels). Whole channel blocks only: the chain then runs on the result without padded
/// channels. Results differ from direct convolution by rounding only.
bool prefer_winograd(const Conv2dParams& p, const std::vector<PostStep>& chain) {
  for (const PostStep& s : chain)
    if (s.kind == PostOpKind::Sum) return false;  // keeps the chain order simple: eltwise steps only
  return p.groups == 1 && p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 &&
         p.c >= 32 && p.o >= 32 && p.o % kBlock == 0 && p.n * p.oh * p.ow >= 26 * 26;
}

/// The plan of one fused conv with convolution algorithm `algo`; a Winograd plan takes no post-ops
/// (jit_wino_4x3 rejects leaky relu and most other steps) and runs the chain after the convolution.
std::optional<FusedConvPlan> build_plan(const Conv2dParams& p, bool with_bias, const std::vector<PostStep>& chain,
                                        Layouts lay, dnnl::algorithm algo) {
  const bool wino = algo == dnnl::algorithm::convolution_winograd;
  using dims = dnnl::memory::dims;
  const auto cd = ::skiff::onednn_detail::conv_dims(p);
  if (!cd) return std::nullopt;
  const dims &src_dims = cd->src, &dst_dims = cd->dst, &wei_dims = cd->wei;
  const dims &strides = cd->strides, &dilates = cd->dilates, &pad_l = cd->pad_l, &pad_r = cd->pad_r;
  const bool grouped = p.groups > 1;

  const dnnl::memory::desc src_any(src_dims, dt::f32, tag::any), dst_any(dst_dims, dt::f32, tag::any),
      wei_any(wei_dims, dt::f32, tag::any), bias_md({p.o}, dt::f32, tag::a);
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops ops;
  bool with_sum = false;
  const std::vector<PostStep> post = wino ? std::vector<PostStep>{} : chain;  // the steps fused into the conv
  for (const PostStep& s : post) {
    if (s.kind == PostOpKind::Sum) {
      with_sum = true;
      ops.append_sum(1.f);
    } else {
      auto [alg, alpha, beta] = eltwise_of(s);
      ops.append_eltwise(1.f, alg, alpha, beta);
    }
  }
  attr.set_post_ops(ops);
  // forward_training: see kernels/nn/conv.cpp (selects the blocked kernels for NCHW tensors).
  const auto prop = dnnl::prop_kind::forward_training;
  auto desc = with_bias ? dnnl::convolution_forward::desc(prop, algo, src_any, wei_any, bias_md, dst_any, strides,
                                                          dilates, pad_l, pad_r)
                        : dnnl::convolution_forward::desc(prop, algo, src_any, wei_any, dst_any, strides, dilates,
                                                          pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine(), /*allow_empty=*/true);
  if (!pd) return std::nullopt;

  FusedConvPlan plan;
  plan.with_sum = with_sum;
  plan.bias = bias_md;
  plan.src_user = dnnl::memory::desc(src_dims, dt::f32, lay.src_blocked ? tag::nChw16c : tag::nchw);
  plan.wei_user = dnnl::memory::desc(wei_dims, dt::f32, grouped ? tag::goihw : tag::oihw);
  plan.dst_user = dnnl::memory::desc(dst_dims, dt::f32, lay.dst_blocked ? tag::nChw16c : tag::nchw);
  plan.res_user = dnnl::memory::desc(dst_dims, dt::f32, lay.res_blocked ? tag::nChw16c : tag::nchw);
  plan.src_prim = pd.src_desc();
  plan.wei_prim = pd.weights_desc();
  plan.dst_prim = pd.dst_desc();
  plan.scratch = pd.scratchpad_desc();
  plan.prim = dnnl::convolution_forward(pd);
  if (wino) plan.after = chain;
  plan.src_reorder = make_reorder(plan.src_user, plan.src_prim);
  plan.dst_out_reorder = make_reorder(plan.dst_prim, plan.dst_user);
  if (with_sum) plan.dst_in_reorder = make_reorder(plan.res_user, plan.dst_prim);
  return plan;
}

std::shared_ptr<const FusedConvPlan> get_plan(const Conv2dParams& p, bool with_bias, const std::vector<PostStep>& chain,
                                              Layouts lay) {
  static std::mutex mu;
  static std::map<PlanKey, std::shared_ptr<const FusedConvPlan>> cache;
  constexpr size_t kMaxPlans = 512;
  PlanKey key = make_key(p, with_bias, chain, lay);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const FusedConvPlan> plan;
  // Winograd where it pays and oneDNN has it (AVX-512), else direct convolution.
  std::vector<dnnl::algorithm> algos{dnnl::algorithm::convolution_direct};
  if (prefer_winograd(p, chain)) algos.insert(algos.begin(), dnnl::algorithm::convolution_winograd);
  for (dnnl::algorithm algo : algos) {
    try {
      if (auto built = build_plan(p, with_bias, chain, lay, algo)) {
        plan = std::make_shared<const FusedConvPlan>(std::move(*built));
        break;
      }
    } catch (const dnnl::error&) {
      plan = nullptr;
    }
  }
  if (cache.size() >= kMaxPlans) cache.clear();
  cache.emplace(std::move(key), plan);
  return plan;
}

// ---- reordered weights ---------------------------------------------------------------------

/// Weights in a primitive's layout, valid while the source storage is alive and unchanged.
struct PackedWeights {
  std::weak_ptr<Storage> source;
  uint32_t version = 0;
  std::shared_ptr<void> data;
};

/// The weights of `w` in another layout: `pack` writes them (`bytes` bytes) once per weight
/// storage, version and `layout_key`; later calls get the cached copy.
std::shared_ptr<void> cached_weights(const Tensor& w, std::vector<int64_t> layout_key, size_t bytes,
                                     const std::function<void(void*)>& pack) {
  static std::mutex mu;
  // Keyed by the weight pointer and the target layout (which depends on the geometry).
  static std::map<std::pair<const void*, std::vector<int64_t>>, PackedWeights> cache;
  constexpr size_t kMaxEntries = 4096;
  const std::shared_ptr<Storage>& storage = w.storage();
  const uint32_t version = storage->version();
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(static_cast<const void*>(w.data_ptr()), std::move(layout_key));
  auto it = cache.find(key);
  if (it != cache.end()) {
    auto alive = it->second.source.lock();
    if (alive == storage && it->second.version == version) return it->second.data;
    cache.erase(it);
  }
  if (cache.size() >= kMaxEntries) cache.clear();
  // From the tensor allocator, as long-lived as the cache entry (an alias keeps the storage alive).
  std::shared_ptr<Storage> packed = Storage::allocate(int64_t(bytes), kCPU);
  std::shared_ptr<void> data(packed, packed->data());
  pack(data.get());
  cache.emplace(std::move(key), PackedWeights{storage, version, data});
  return data;
}

/// The weights of `w` in `plan`'s layout: `w` itself when the layouts agree, else a cached copy.
std::shared_ptr<void> packed_weights(const FusedConvPlan& plan, const Tensor& w) {
  if (plan.wei_user == plan.wei_prim) return std::shared_ptr<void>(w.data_ptr(), [](void*) {});
  std::vector<int64_t> layout_key;
  const auto& dims = plan.wei_prim.dims();
  layout_key.assign(dims.begin(), dims.end());
  layout_key.push_back(int64_t(plan.wei_prim.get_size()));
  // Two layouts of one size: distinguish by the blocking, read through the C API descriptor.
  const dnnl_memory_desc_t& c = plan.wei_prim.data;
  layout_key.push_back(c.format_desc.blocking.inner_nblks);
  for (int i = 0; i < c.format_desc.blocking.inner_nblks; ++i) {
    layout_key.push_back(c.format_desc.blocking.inner_blks[i]);
    layout_key.push_back(c.format_desc.blocking.inner_idxs[i]);
  }
  for (int i = 0; i < c.ndims; ++i) layout_key.push_back(c.format_desc.blocking.strides[i]);
  return cached_weights(w, std::move(layout_key), plan.wei_prim.get_size(), [&](void* to_ptr) {
    dnnl::engine& eng = cpu_engine();
    dnnl::memory from(plan.wei_user, eng, w.data_ptr()), to(plan.wei_prim, eng, to_ptr);
    dnnl::reorder(from, to).execute(thread_stream(), from, to);
    thread_stream().wait();
  });
}

void run_reorder(const Reorder& r, dnnl::memory& from, dnnl::memory& to, Workspace& ws) {
  if (r.loop != BlockedReorder::None) {
    run_blocked_reorder(r.loop, static_cast<const float*>(from.get_data_handle()), static_cast<float*>(to.get_data_handle()),
                        from.get_desc().dims());
    return;
  }
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (r.scratch.get_size() > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(r.scratch, cpu_engine(), ws.get(Workspace::ReorderScratchpad, r.scratch.get_size())));
  r.prim->execute(thread_stream(), args);
}

/// One fused_conv2d call as its kernel sees it: inputs {x, weight, [bias], [residual]}.
struct FusedCall {
  const Tensor& x;
  const Tensor& w;
  const Tensor* bias = nullptr;
  const Tensor* residual = nullptr;
  std::vector<PostStep> chain;
  Layouts lay;
  Conv2dParams p;
  BlockedConvKind loops = BlockedConvKind::None;  ///< set when blocked_conv.h's loops serve it

  explicit FusedCall(const KernelContext& c)
      : x(c.inputs[0]), w(c.inputs[1]), chain(nn_detail::post_chain(c.attrs, "fused_conv2d")),
        lay{c.inputs[0].dim() == 5, c.outputs[0].dim() == 5} {
    if (c.attrs.get_bool("has_bias")) bias = &c.inputs[2];
    for (const PostStep& s : chain)
      if (s.kind == PostOpKind::Sum) residual = &c.inputs.back();
    lay.res_blocked = residual && residual->dim() == 5;
    // A blocked input [N, ceil(C / 16), H, W, 16] holds C = weight.size(1) * groups channels.
    const int64_t groups = c.attrs.get_int("groups");
    const Shape logical_x = lay.src_blocked ? Shape{x.size(0), w.size(1) * groups, x.size(2), x.size(3)} : x.shape();
    p = Conv2dParams::from(logical_x, w.shape(), c.attrs);
    // Winograd, where it pays, beats the loops on wide 3x3 layers; everything else the loops
    // serve runs on them, on AVX-512 CPUs. On AVX2 the loops took 1.7-1.8x oneDNN's AVX2
    // kernels' time (PP-OCRv4 det and rec, 1 thread), more than the JIT kernels they spare cost.
    const BlockedConvKind kind = active_isa() == CpuIsa::Avx512 ? blocked_conv_kind(p) : BlockedConvKind::None;
    if (!(kind == BlockedConvKind::Dense && prefer_winograd(p, chain))) loops = kind;
  }
};

/// A pointwise or depthwise fused conv on blocked_conv.h's loops (no primitive, whatever the
/// geometry). NCHW arguments are blocked (and the result unblocked) with the blocked_layout loops.
void fused_conv2d_loops(const FusedCall& f, Tensor& out_tensor) {
  Workspace& ws = thread_workspace();
  const Conv2dParams& p = f.p;
  const Layouts lay = f.lay;
  const Tensor& w = f.w;
  const dnnl::memory::dims in_dims{p.n, p.c, p.h, p.w}, out_dims{p.n, p.o, p.oh, p.ow};
  const auto blocked_bytes = [](const dnnl::memory::dims& d) {
    return size_t(d[0] * ((d[1] + kBlock - 1) / kBlock) * kBlock * d[2] * d[3]) * sizeof(float);
  };
  BlockedConvArgs args;
  args.src = f.x.data<float>();
  if (!lay.src_blocked) {
    auto* blocked = static_cast<float*>(ws.get(Workspace::Src, blocked_bytes(in_dims)));
    run_blocked_reorder(BlockedReorder::Block, args.src, blocked, in_dims);
    args.src = blocked;
  }
  if (f.residual && lay.res_blocked) {
    args.residual = f.residual->data<float>();
  } else if (f.residual) {
    auto* blocked = static_cast<float*>(ws.get(Workspace::Residual, blocked_bytes(out_dims)));
    run_blocked_reorder(BlockedReorder::Block, f.residual->data<float>(), blocked, out_dims);
    args.residual = blocked;
  }
  float* out = out_tensor.data<float>();
  args.dst = lay.dst_blocked ? out : static_cast<float*>(ws.get(Workspace::Dst, blocked_bytes(out_dims)));
  const size_t packed_floats = blocked_conv_packed_floats(p);
  // A negative first number keeps these keys apart from the oneDNN layouts' (dims first).
  std::shared_ptr<void> packed =
      cached_weights(w, {-1, int64_t(f.loops), p.o, p.c, p.kh, p.kw}, packed_floats * sizeof(float),
                     [&](void* to) { pack_blocked_conv_weights(p, w.data<float>(), static_cast<float*>(to)); });
  args.weights = static_cast<const float*>(packed.get());
  args.bias = f.bias ? f.bias->data<float>() : nullptr;
  run_blocked_conv(p, args, f.chain);
  if (!lay.dst_blocked) run_blocked_reorder(BlockedReorder::Unblock, args.dst, out, out_dims);
}

/// Contiguous, non-empty calls the loops serve or oneDNN can plan (the plan is built once and
/// cached); the reference kernel takes the others.
bool fused_conv2d_supported(const KernelContext& c) {
  for (const Tensor& t : c.inputs)
    if (!t.is_contiguous()) return false;
  const FusedCall f(c);
  if (f.p.n == 0 || f.p.c == 0 || f.p.o == 0) return false;
  return f.loops != BlockedConvKind::None || get_plan(f.p, f.bias != nullptr, f.chain, f.lay) != nullptr;
}

void fused_conv2d_onednn(const KernelContext& c) {
  const FusedCall f(c);
  if (f.loops != BlockedConvKind::None) {
    fused_conv2d_loops(f, c.outputs[0]);
    return;
  }
  const Conv2dParams& p = f.p;
  const Tensor& x = f.x;
  const Tensor& w = f.w;
  std::shared_ptr<const FusedConvPlan> plan = get_plan(p, f.bias != nullptr, f.chain, f.lay);
  SKIFF_CHECK(plan, "fused_conv2d: oneDNN has no kernel for this geometry (supports() should have declined it)");
  num_threads();  // applies SKIFF_NUM_THREADS to the OpenMP pool oneDNN runs on
  SKIFF_DNNL_CHECK("fused_conv2d", {
    dnnl::engine& eng = cpu_engine();
    Workspace& ws = thread_workspace();
    std::shared_ptr<void> wei = packed_weights(*plan, w);
    dnnl::memory src_user(plan->src_user, eng, x.data_ptr());
    dnnl::memory dst_user(plan->dst_user, eng, c.outputs[0].data_ptr());
    dnnl::memory src = plan->src_reorder ? dnnl::memory(plan->src_prim, eng, ws.get(Workspace::Src, plan->src_prim.get_size()))
                                         : src_user;
    dnnl::memory dst = plan->dst_out_reorder
                           ? dnnl::memory(plan->dst_prim, eng, ws.get(Workspace::Dst, plan->dst_prim.get_size()))
                           : dst_user;
    if (plan->src_reorder) run_reorder(plan->src_reorder, src_user, src, ws);
    if (f.residual) {
      const Tensor& r = *f.residual;
      if (plan->dst_in_reorder) {
        dnnl::memory res(plan->res_user, eng, r.data_ptr());
        run_reorder(plan->dst_in_reorder, res, dst, ws);
      } else {
        std::memcpy(dst.get_data_handle(), r.data_ptr(), plan->res_user.get_size());
      }
    }
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src},
                                               {DNNL_ARG_WEIGHTS, dnnl::memory(plan->wei_prim, eng, wei.get())},
                                               {DNNL_ARG_DST, dst}};
    if (f.bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan->bias, eng, f.bias->data_ptr()));
    if (plan->scratch.get_size() > 0)
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan->scratch, eng, ws.get(Workspace::Scratchpad, plan->scratch.get_size())));
    plan->prim.execute(thread_stream(), args);
    if (!plan->after.empty()) {
      thread_stream().wait();
      // Whole channel blocks only (prefer_winograd()): no padded channels for the chain to move.
      auto* d = static_cast<float*>(dst.get_data_handle());
      run_post_chain(d, d, int64_t(plan->dst_prim.get_size() / sizeof(float)), plan->after);
    }
    if (plan->dst_out_reorder) run_reorder(plan->dst_out_reorder, dst, dst_user, ws);
    thread_stream().wait();
  });
}

// ---- eltwise chain -------------------------------------------------------------------------

/// The chain on its own: blocked_conv.h's loops (a oneDNN eltwise primitive per step was one JIT
/// kernel per tensor size). Contiguous inputs only.
void eltwise_chain_loops(const KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const std::vector<PostStep> chain = nn_detail::post_chain(c.attrs, "eltwise_chain");
  const int64_t numel = x.numel();
  if (numel == 0) return;
  if (chain.empty()) {
    std::memcpy(c.outputs[0].data_ptr(), x.data_ptr(), size_t(numel) * sizeof(float));
    return;
  }
  run_post_chain(x.data<float>(), c.outputs[0].data<float>(), numel, chain);
}

/// nChw16c -> NCHW with blocked_layout.h's register transposes. Contiguous inputs only.
void unblock_channels_onednn(const KernelContext& c) {
  const Tensor& y = c.outputs[0];
  const dnnl::memory::dims dims{y.size(0), y.size(1), y.size(2), y.size(3)};
  run_blocked_reorder(BlockedReorder::Unblock, c.inputs[0].data<float>(), y.data<float>(), dims);
}

bool input_contiguous(const KernelContext& c) { return c.inputs[0].is_contiguous(); }

}  // namespace

SKIFF_REGISTER_KERNEL_IF(fused_conv2d, CPU, "onednn", dtype_bit(DType::Float32), 10, fused_conv2d_onednn,
                         fused_conv2d_supported);
SKIFF_REGISTER_KERNEL_IF(eltwise_chain, CPU, "onednn", dtype_bit(DType::Float32), 10, eltwise_chain_loops,
                         input_contiguous);
SKIFF_REGISTER_KERNEL_IF(unblock_channels, CPU, "onednn", dtype_bit(DType::Float32), 10, unblock_channels_onednn,
                         input_contiguous);

}  // namespace skiff::onednn
