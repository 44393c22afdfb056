// NCHW <-> nChw16c loops (framework/backends/onednn/blocked_layout.h) against oneDNN's own
// reorders, channel tails included: the padded channels must come out zero.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "framework/backends/onednn/blocked_layout.h"
#include "framework/backends/onednn/engine.h"

namespace skiff::onednn {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

std::vector<float> onednn_reorder(const std::vector<float>& src, const dnnl::memory::desc& from,
                                  const dnnl::memory::desc& to) {
  std::vector<float> out(to.get_size() / sizeof(float), -1.f);
  dnnl::memory a(from, cpu_engine(), const_cast<float*>(src.data())), b(to, cpu_engine(), out.data());
  dnnl::reorder(a, b).execute(thread_stream(), a, b);
  thread_stream().wait();
  return out;
}

// Every ISA this CPU has: AVX2 and AVX-512 transpose 16 x 16 tiles (widths from 16), then
// finish the row like the baseline loops.
TEST(BlockedLayout, MatchesOneDnnReordersBothWays) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (CpuIsa isa : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512}) {
    if (isa > active_isa()) continue;
    for (const dnnl::memory::dims& dims : std::vector<dnnl::memory::dims>{
             {1, 16, 4, 4}, {2, 20, 3, 5}, {1, 3, 7, 1}, {3, 33, 2, 9}, {1, 64, 40, 96}, {2, 20, 3, 37},
             {1, 3, 5, 16}, {1, 47, 2, 33}}) {
      SCOPED_TRACE(::testing::Message() << isa_name(isa) << " c" << dims[1] << " w" << dims[3]);
      const dnnl::memory::desc plain(dims, dt::f32, tag::nchw), blocked(dims, dt::f32, tag::nChw16c);
      std::vector<float> src(plain.get_size() / sizeof(float));
      for (float& v : src) v = dist(gen);
      ASSERT_EQ(blocked_reorder_kind(plain, blocked), BlockedReorder::Block);
      std::vector<float> ours(blocked.get_size() / sizeof(float), -1.f);
      run_blocked_reorder(BlockedReorder::Block, src.data(), ours.data(), dims, isa);
      EXPECT_EQ(ours, onednn_reorder(src, plain, blocked));

      ASSERT_EQ(blocked_reorder_kind(blocked, plain), BlockedReorder::Unblock);
      std::vector<float> back(src.size(), -1.f);
      run_blocked_reorder(BlockedReorder::Unblock, ours.data(), back.data(), dims, isa);
      EXPECT_EQ(back, src);
      EXPECT_EQ(back, onednn_reorder(ours, blocked, plain));
    }
  }
}

TEST(BlockedLayout, OtherPairsAreLeftToOneDnn) {
  const dnnl::memory::dims dims{1, 20, 3, 5};
  const dnnl::memory::desc nchw(dims, dt::f32, tag::nchw), blocked(dims, dt::f32, tag::nChw16c);
  EXPECT_EQ(blocked_reorder_kind(nchw, dnnl::memory::desc(dims, dt::f32, tag::nhwc)), BlockedReorder::None);
  EXPECT_EQ(blocked_reorder_kind(nchw, dnnl::memory::desc(dims, dt::f32, tag::nChw8c)), BlockedReorder::None);
  EXPECT_EQ(blocked_reorder_kind(dnnl::memory::desc(dims, dt::bf16, tag::nchw), blocked), BlockedReorder::None);
  EXPECT_EQ(blocked_reorder_kind(nchw, dnnl::memory::desc({1, 20, 3, 6}, dt::f32, tag::nChw16c)),
            BlockedReorder::None);
  // A strided (cropped) view is not dense NCHW.
  EXPECT_EQ(blocked_reorder_kind(dnnl::memory::desc(dims, dt::f32, {400, 20, 6, 1}), blocked), BlockedReorder::None);
}

}  // namespace
}  // namespace skiff::onednn
