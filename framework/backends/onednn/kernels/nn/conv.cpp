// oneDNN kernels for conv2d (with fused bias), conv2d_backward_input and conv2d_backward_weight,
// float32 on the CPU device, priority 10 over the reference "cpu" kernels.
// Algorithm: oneDNN convolution primitives (Winograd for wide 3x3 stride-1 layers where oneDNN
// has it, see prefer_winograd(); otherwise direct JIT, depthwise JIT or gemm, oneDNN's choice)
// created with format_tag::any, so each primitive picks its preferred (usually channel-blocked)
// layouts. Skiff tensors are NCHW / OIHW (goihw for groups); a tensor is reordered into the
// primitive's layout only when the two differ, into thread-local workspace buffers that are reused
// across calls. Primitives and their reorders are cached, keyed by (kind, shapes, strides, padding,
// dilation, groups), under a mutex; execution uses user-mode scratchpads, so one cached primitive
// may run on several threads at once.
// Depthwise stride-1 forward runs directly on NCHW instead (depthwise_nchw.h says why).
// Windows that stop short of the bottom/right edge (negative right padding, which oneDNN rejects)
// run on the cropped input (conv_dims.h). Geometries oneDNN rejects and empty tensors are
// declined (supports()), so the reference kernel takes them.
// Reference: the "cpu" kernels (framework/backends/cpu/kernels/nn/conv.cpp); tested to agree to
// 1e-4 relative in tests/framework/ops/nn/conv_test.cpp (OnednnMatchesReference cases).
#include <dnnl.hpp>
#include <omp.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "framework/backends/onednn/engine.h"
#include "framework/backends/onednn/dnnl_check.h"
#include "framework/backends/onednn/kernels/nn/conv_dims.h"
#include "framework/backends/onednn/kernels/nn/depthwise_nchw.h"
#include "framework/core/threading.h"
#include "framework/ops/nn/conv_params.h"

namespace skiff::onednn {
namespace {

using nn_detail::Conv2dParams;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

enum class ConvKind : int64_t { Forward, ForwardBias, BackwardData, BackwardWeights };

// ---- plans ---------------------------------------------------------------------------------

/// One tensor argument of a primitive: its layout in skiff (user) and in the primitive, and the
/// reorder between them when they differ (user -> primitive for inputs, the reverse for outputs).
struct Slot {
  int arg = 0;
  dnnl::memory::desc user;
  dnnl::memory::desc prim;
  std::optional<dnnl::reorder> reorder;
  dnnl::memory::desc reorder_scratch;
};

struct ConvPlan {
  dnnl::primitive prim;
  dnnl::memory::desc scratch;
  dnnl::memory::desc bias;
  std::array<Slot, 3> slots;  // activation in/out "src", "weights", activation "dst"
  int output_slot = 0;        // which of the three the primitive writes
  bool zero_src_first = false;  // input gradient of a cropped input: clear the parts never written
};

using ConvKey = std::array<int64_t, 18>;

// The thread count is part of the key: oneDNN fixes a primitive's work split for
// the OpenMP team size it was created with, so a primitive made on 1 thread would
// keep running on 1 thread after set_num_threads(2).
ConvKey make_key(ConvKind kind, const Conv2dParams& p) {
  return {int64_t(kind), p.n, p.c, p.h, p.w, p.o, p.kh, p.kw, p.oh, p.ow, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw,
          p.groups, int64_t(omp_get_max_threads())};
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void finish_slot(Slot& s, bool is_input) {
  if (s.user == s.prim) return;
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::engine& eng = cpu_engine();
  auto pd = is_input ? dnnl::reorder::primitive_desc(eng, s.user, eng, s.prim, attr)
                     : dnnl::reorder::primitive_desc(eng, s.prim, eng, s.user, attr);
  s.reorder = dnnl::reorder(pd);
  s.reorder_scratch = pd.scratchpad_desc();
}

/// Whether to try Winograd F(4x4, 3x3) (oneDNN's jit_wino_4x3, AVX-512 only) before direct
/// convolution. It needs 2.25x fewer multiplications for 3x3 stride-1 windows and measured 0.57x
/// the direct time on N=8, 64->64, 56x56 forward and forward+backward (1 and 2 threads); for narrow
/// layers its transforms dominate: 5.6x slower with 3 input channels and 1.5-2x with 16 (ResNet-8's
/// first stage, 32x32 maps). Results differ from direct convolution by rounding only (~1e-6 relative).
bool prefer_winograd(const Conv2dParams& p) {
  return p.groups == 1 && p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && p.c >= 64 &&
         p.o >= 64;
}

/// Builds the primitive for one convolution; nullopt when oneDNN has no implementation.
std::optional<ConvPlan> build_plan(ConvKind kind, const Conv2dParams& p, dnnl::algorithm algo) {
  using dims = dnnl::memory::dims;
  const auto cd = ::skiff::onednn_detail::conv_dims(p, /*allow_crop=*/true);
  if (!cd) return std::nullopt;
  const dims &src_dims = cd->src, &dst_dims = cd->dst, &wei_dims = cd->wei;
  const dims &strides = cd->strides, &dilates = cd->dilates, &pad_l = cd->pad_l, &pad_r = cd->pad_r;
  const bool grouped = p.groups > 1;

  const dnnl::memory::desc src_any(src_dims, dt::f32, tag::any), dst_any(dst_dims, dt::f32, tag::any),
      wei_any(wei_dims, dt::f32, tag::any), bias_md({p.o}, dt::f32, tag::a);
  const bool with_bias = kind == ConvKind::ForwardBias;
  dnnl::engine& eng = cpu_engine();
  dnnl::primitive_attr attr = user_scratchpad_attr();

  // forward_training even for inference: for NCHW tensors it selects the channel-blocked (nChw16c)
  // kernels, whose reorders from/to NCHW are several times cheaper than those of the NHWC kernels
  // that forward_inference selects (measured on AVX-512; see bench/conv2d_timing.cpp).
  const auto prop = dnnl::prop_kind::forward_training;
  auto fwd_desc = with_bias ? dnnl::convolution_forward::desc(prop, algo, src_any, wei_any, bias_md, dst_any, strides,
                                                              dilates, pad_l, pad_r)
                            : dnnl::convolution_forward::desc(prop, algo, src_any, wei_any, dst_any, strides, dilates,
                                                              pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc fwd_pd(fwd_desc, attr, eng, /*allow_empty=*/true);
  if (!fwd_pd) return std::nullopt;

  ConvPlan plan;
  plan.bias = bias_md;
  // A cropped input is read (or, for the input gradient, written) through the strides of the
  // full tensor; the gradient's cropped-off rows and columns are zeroed by the caller.
  plan.slots[0].user = cd->cropped ? dnnl::memory::desc(src_dims, dt::f32, cd->src_strides)
                                   : dnnl::memory::desc(src_dims, dt::f32, tag::nchw);
  plan.zero_src_first = cd->cropped && kind == ConvKind::BackwardData;
  plan.slots[1].user = dnnl::memory::desc(wei_dims, dt::f32, grouped ? tag::goihw : tag::oihw);
  plan.slots[2].user = dnnl::memory::desc(dst_dims, dt::f32, tag::nchw);
  if (kind == ConvKind::Forward || kind == ConvKind::ForwardBias) {
    plan.slots[0].arg = DNNL_ARG_SRC, plan.slots[0].prim = fwd_pd.src_desc();
    plan.slots[1].arg = DNNL_ARG_WEIGHTS, plan.slots[1].prim = fwd_pd.weights_desc();
    plan.slots[2].arg = DNNL_ARG_DST, plan.slots[2].prim = fwd_pd.dst_desc();
    plan.output_slot = 2;
    plan.prim = dnnl::convolution_forward(fwd_pd);
    plan.scratch = fwd_pd.scratchpad_desc();
  } else if (kind == ConvKind::BackwardData) {
    dnnl::convolution_backward_data::desc d(algo, src_any, wei_any, dst_any, strides, dilates, pad_l, pad_r);
    dnnl::convolution_backward_data::primitive_desc pd(d, attr, eng, fwd_pd, /*allow_empty=*/true);
    if (!pd) return std::nullopt;
    plan.slots[0].arg = DNNL_ARG_DIFF_SRC, plan.slots[0].prim = pd.diff_src_desc();
    plan.slots[1].arg = DNNL_ARG_WEIGHTS, plan.slots[1].prim = pd.weights_desc();
    plan.slots[2].arg = DNNL_ARG_DIFF_DST, plan.slots[2].prim = pd.diff_dst_desc();
    plan.output_slot = 0;
    plan.prim = dnnl::convolution_backward_data(pd);
    plan.scratch = pd.scratchpad_desc();
  } else {
    dnnl::convolution_backward_weights::desc d(algo, src_any, wei_any, dst_any, strides, dilates, pad_l, pad_r);
    dnnl::convolution_backward_weights::primitive_desc pd(d, attr, eng, fwd_pd, /*allow_empty=*/true);
    if (!pd) return std::nullopt;
    plan.slots[0].arg = DNNL_ARG_SRC, plan.slots[0].prim = pd.src_desc();
    plan.slots[1].arg = DNNL_ARG_DIFF_WEIGHTS, plan.slots[1].prim = pd.diff_weights_desc();
    plan.slots[2].arg = DNNL_ARG_DIFF_DST, plan.slots[2].prim = pd.diff_dst_desc();
    plan.output_slot = 1;
    plan.prim = dnnl::convolution_backward_weights(pd);
    plan.scratch = pd.scratchpad_desc();
  }
  for (int i = 0; i < 3; ++i) finish_slot(plan.slots[size_t(i)], i != plan.output_slot);
  return plan;
}

/// Cached plan for (kind, geometry); null when oneDNN cannot run it.
std::shared_ptr<const ConvPlan> get_plan(ConvKind kind, const Conv2dParams& p) {
  static std::mutex mu;
  static std::map<ConvKey, std::shared_ptr<const ConvPlan>> cache;
  constexpr size_t kMaxPlans = 512;
  const ConvKey key = make_key(kind, p);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const ConvPlan> plan;
  try {
    std::optional<ConvPlan> built;
    if (prefer_winograd(p)) {
      try {
        built = build_plan(kind, p, dnnl::algorithm::convolution_winograd);
      } catch (const dnnl::error&) {
        // no Winograd kernel on this CPU for this geometry: direct below
      }
    }
    if (!built) built = build_plan(kind, p, dnnl::algorithm::convolution_direct);
    if (built) plan = std::make_shared<const ConvPlan>(std::move(*built));
  } catch (const dnnl::error&) {
    plan = nullptr;  // unsupported configuration: the reference kernel takes it
  }
  if (cache.size() >= kMaxPlans) cache.clear();
  cache.emplace(key, plan);
  return plan;
}

void run_plan(const ConvPlan& plan, const std::array<void*, 3>& user_ptrs, const void* bias, size_t src_bytes) {
  num_threads();  // applies SKIFF_NUM_THREADS to the OpenMP pool oneDNN runs on
  if (plan.zero_src_first) std::memset(user_ptrs[0], 0, src_bytes);
  dnnl::engine& eng = cpu_engine();
  dnnl::stream& stream = thread_stream();
  Workspace& ws = thread_workspace();
  std::array<dnnl::memory, 3> user_mem, prim_mem;
  for (size_t i = 0; i < 3; ++i) {
    const Slot& s = plan.slots[i];
    user_mem[i] = dnnl::memory(s.user, eng, user_ptrs[i]);
    prim_mem[i] = s.reorder ? dnnl::memory(s.prim, eng, ws.get(Workspace::Slot(i), s.prim.get_size())) : user_mem[i];
  }
  auto run_reorder = [&](size_t i, bool to_prim) {
    const Slot& s = plan.slots[i];
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, to_prim ? user_mem[i] : prim_mem[i]},
                                               {DNNL_ARG_TO, to_prim ? prim_mem[i] : user_mem[i]}};
    if (s.reorder_scratch.get_size() > 0)
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(s.reorder_scratch, eng, ws.get(Workspace::ReorderScratchpad, s.reorder_scratch.get_size())));
    s.reorder->execute(stream, args);
  };
  for (size_t i = 0; i < 3; ++i)
    if (int(i) != plan.output_slot && plan.slots[i].reorder) run_reorder(i, true);
  std::unordered_map<int, dnnl::memory> args;
  for (size_t i = 0; i < 3; ++i) args.emplace(plan.slots[i].arg, prim_mem[i]);
  if (bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan.bias, eng, const_cast<void*>(bias)));
  if (plan.scratch.get_size() > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.scratch, eng, ws.get(Workspace::Scratchpad, plan.scratch.get_size())));
  plan.prim.execute(stream, args);
  if (plan.slots[size_t(plan.output_slot)].reorder) run_reorder(size_t(plan.output_slot), false);
  stream.wait();
}

Tensor contiguous_input(const Tensor& t) { return t.is_contiguous() ? t : detail::contiguous_copy(t); }

constexpr const char* kOpNames[] = {"conv2d", "conv2d", "conv2d_backward_input", "conv2d_backward_weight"};

/// Runs `kind` on its plan (supports() checked that there is one). ptrs: {src, weights, dst} (user layout).
void run(ConvKind kind, const Conv2dParams& p, const std::array<void*, 3>& ptrs, const void* bias) {
  std::shared_ptr<const ConvPlan> plan = get_plan(kind, p);
  SKIFF_CHECK(plan, "{}: oneDNN has no kernel for this geometry (supports() should have declined it)",
              kOpNames[int(kind)]);
  const size_t src_bytes = size_t(p.n * p.c * p.h * p.w) * sizeof(float);
  SKIFF_DNNL_CHECK(kOpNames[int(kind)], run_plan(*plan, ptrs, bias, src_bytes));
}

/// Whether oneDNN can run `kind` on this geometry (the plan is built once and cached);
/// the reference kernel takes what it cannot.
bool plannable(ConvKind kind, const Conv2dParams& p) {
  return p.n > 0 && p.c > 0 && p.o > 0 && get_plan(kind, p) != nullptr;
}

Conv2dParams forward_params(const KernelContext& c) {
  return Conv2dParams::from(c.inputs[0].shape(), c.inputs[1].shape(), c.attrs);
}
Conv2dParams backward_input_params(const KernelContext& c) {
  return Conv2dParams::from(Shape(c.attrs.get_ints("input_size")), c.inputs[1].shape(), c.attrs);
}
Conv2dParams backward_weight_params(const KernelContext& c) {
  return Conv2dParams::from(c.inputs[1].shape(), Shape(c.attrs.get_ints("weight_size")), c.attrs);
}

bool conv2d_supported(const KernelContext& c) {
  const Conv2dParams p = forward_params(c);
  return ::skiff::onednn_detail::depthwise_nchw_applies(p) ||
         plannable(c.inputs.size() > 2 ? ConvKind::ForwardBias : ConvKind::Forward, p);
}
bool conv2d_backward_input_supported(const KernelContext& c) {
  return plannable(ConvKind::BackwardData, backward_input_params(c));
}
bool conv2d_backward_weight_supported(const KernelContext& c) {
  const Conv2dParams p = backward_weight_params(c);
  return ::skiff::onednn_detail::depthwise_nchw_backward_weight_applies(p) || plannable(ConvKind::BackwardWeights, p);
}

void conv2d_onednn(const KernelContext& c) {
  Tensor x = contiguous_input(c.inputs[0]), w = contiguous_input(c.inputs[1]);
  Tensor b = c.inputs.size() > 2 ? contiguous_input(c.inputs[2]) : Tensor();
  const Conv2dParams p = forward_params(c);
  if (::skiff::onednn_detail::depthwise_nchw_applies(p)) {
    ::skiff::onednn_detail::depthwise_nchw_forward(p, x.data<float>(), w.data<float>(),
                                                   b.defined() ? b.data<float>() : nullptr,
                                                   c.outputs[0].data<float>());
    return;
  }
  run(b.defined() ? ConvKind::ForwardBias : ConvKind::Forward, p, {x.data_ptr(), w.data_ptr(), c.outputs[0].data_ptr()},
      b.defined() ? b.data_ptr() : nullptr);
}

void conv2d_backward_input_onednn(const KernelContext& c) {
  Tensor gy = contiguous_input(c.inputs[0]), w = contiguous_input(c.inputs[1]);
  run(ConvKind::BackwardData, backward_input_params(c), {c.outputs[0].data_ptr(), w.data_ptr(), gy.data_ptr()},
      nullptr);
}

void conv2d_backward_weight_onednn(const KernelContext& c) {
  Tensor gy = contiguous_input(c.inputs[0]), x = contiguous_input(c.inputs[1]);
  const Conv2dParams p = backward_weight_params(c);
  if (::skiff::onednn_detail::depthwise_nchw_backward_weight_applies(p)) {
    ::skiff::onednn_detail::depthwise_nchw_backward_weight(p, gy.data<float>(), x.data<float>(),
                                                           c.outputs[0].data<float>());
    return;
  }
  run(ConvKind::BackwardWeights, p, {x.data_ptr(), c.outputs[0].data_ptr(), gy.data_ptr()}, nullptr);
}

}  // namespace

SKIFF_REGISTER_KERNEL_IF(conv2d, CPU, "onednn", dtype_bit(DType::Float32), 10, conv2d_onednn, conv2d_supported);
SKIFF_REGISTER_KERNEL_IF(conv2d_backward_input, CPU, "onednn", dtype_bit(DType::Float32), 10,
                         conv2d_backward_input_onednn, conv2d_backward_input_supported);
SKIFF_REGISTER_KERNEL_IF(conv2d_backward_weight, CPU, "onednn", dtype_bit(DType::Float32), 10,
                         conv2d_backward_weight_onednn, conv2d_backward_weight_supported);

}  // namespace skiff::onednn
