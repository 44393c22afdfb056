#include "suites/nlp/encoder/mlm_masking.h"

#include <random>

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::nlp {
namespace {

// Uniform [0, 1) from the top 53 bits: the same numbers on every standard library
// (std::uniform_real_distribution's algorithm is implementation-defined).
double unit(std::mt19937_64& g) { return double(g() >> 11) * 0x1.0p-53; }

}  // namespace

MaskedBatch mask_tokens(const Tensor& ids, const EncoderConfig& c, const MlmMaskOptions& o, uint64_t seed,
                        uint64_t step) {
  SKIFF_CHECK(o.probability > 0 && o.probability <= 1, "mask_tokens: probability must be in (0, 1], got {}",
              o.probability);
  SKIFF_CHECK(o.mask_share >= 0 && o.random_share >= 0 && o.mask_share + o.random_share <= 1,
              "mask_tokens: mask_share={} and random_share={} must be >= 0 with a sum <= 1", o.mask_share,
              o.random_share);
  Tensor src = contiguous(ids);
  Tensor out = clone(src);
  int64_t* p = out.data<int64_t>();
  const int64_t n = out.numel();
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(step), uint32_t(step >> 32)};
  std::mt19937_64 gen(seq);
  const int64_t lo = c.first_regular_id(), span = c.pieces - lo;
  std::vector<int64_t> positions, labels;
  int64_t last_real = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] == c.pad_id() || p[i] == c.cls_id()) continue;
    last_real = i;
    if (unit(gen) >= o.probability) continue;
    positions.push_back(i);
    labels.push_back(p[i]);
    const double r = unit(gen);
    if (r < o.mask_share) p[i] = c.mask_id();
    else if (r < o.mask_share + o.random_share && span > 0) p[i] = lo + int64_t(gen() % uint64_t(span));
  }
  if (positions.empty() && last_real >= 0) {  // a short batch drew nothing: mask its last token
    positions.push_back(last_real);
    labels.push_back(p[last_real]);
    p[last_real] = c.mask_id();
  }
  MaskedBatch m;
  m.ids = out;
  m.positions = from_vector(positions);
  m.labels = from_vector(labels);
  return m;
}

}  // namespace skiff::nlp
