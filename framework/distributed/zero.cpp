#include "framework/distributed/zero.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "framework/core/error.h"
#include "framework/io/safetensors.h"

namespace skiff::distributed {

ZeroRedundancy::ZeroRedundancy(optim::Optimizer& optimizer, std::shared_ptr<ProcessGroup> group)
    : opt_(optimizer), group_(std::move(group)) {
  SKIFF_CHECK(group_ != nullptr, "ZeRO: no process group");
  SKIFF_CHECK_T(NotImplementedError, opt_.name() != "LBFGS",
                "ZeRO: {} keeps state over all parameters together and cannot be sharded", opt_.name());
  for (const auto& g : opt_.param_groups())
    for (const Tensor& p : g.params) {
      SKIFF_CHECK_T(NotImplementedError, p.is_contiguous(), "ZeRO: parameter {} is not contiguous", params_.size());
      params_.push_back(p);
    }
  // Largest first, each to the least-loaded rank; ties by position, so every rank agrees.
  std::vector<size_t> order(params_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return params_[a].nbytes() > params_[b].nbytes(); });
  std::vector<int64_t> load(size_t(group_->size()), 0);
  owner_.assign(params_.size(), 0);
  for (size_t i : order) {
    const int r = int(std::min_element(load.begin(), load.end()) - load.begin());
    owner_[i] = r;
    load[size_t(r)] += params_[i].nbytes();
  }
}

void ZeroRedundancy::before_step() {
  for (size_t i = 0; i < params_.size(); ++i)
    if (owner_[i] != group_->rank()) params_[i].set_grad(Tensor());
}

void ZeroRedundancy::after_step() {
  // One broadcast per owner: its parameters' bytes packed together.
  for (int r = 0; r < group_->size(); ++r) {
    int64_t bytes = 0;
    for (size_t i = 0; i < params_.size(); ++i)
      if (owner_[i] == r) bytes += params_[i].nbytes();
    if (bytes == 0) continue;
    Tensor packed = empty({bytes}, DType::UInt8);
    auto* dst = static_cast<char*>(packed.data_ptr());
    const bool mine = r == group_->rank();
    if (mine)
      for (size_t i = 0; i < params_.size(); ++i)
        if (owner_[i] == r) {
          std::memcpy(dst, params_[i].data_ptr(), size_t(params_[i].nbytes()));
          dst += params_[i].nbytes();
        }
    group_->broadcast(packed, r);
    if (mine) continue;
    const auto* src = static_cast<const char*>(packed.data_ptr());
    for (size_t i = 0; i < params_.size(); ++i)
      if (owner_[i] == r) {
        std::memcpy(params_[i].data_ptr(), src, size_t(params_[i].nbytes()));
        params_[i].storage()->bump_version();  // written in place, as the optimizer would
        src += params_[i].nbytes();
      }
  }
}

optim::OptimizerState ZeroRedundancy::gather_state() {
  const optim::OptimizerState mine = opt_.state_dict();
  const std::string bytes = io::serialize_safetensors(mine.to_tensor_map());
  Tensor sizes = group_->all_gather(from_vector<int64_t>({int64_t(bytes.size())}));
  const auto size_of = sizes.to_vector<int64_t>();
  if (group_->rank() != 0) {
    Tensor out = empty({int64_t(bytes.size())}, DType::UInt8);
    std::memcpy(out.data_ptr(), bytes.data(), bytes.size());
    group_->send(out, 0, /*tag=*/7001);
    return mine;
  }
  std::map<std::string, Tensor> merged = mine.to_tensor_map();
  for (int r = 1; r < group_->size(); ++r) {
    Tensor in = empty({size_of[size_t(r)]}, DType::UInt8);
    group_->recv(in, r, /*tag=*/7001);
    io::SafetensorsFile part = io::parse_safetensors(
        std::string_view(static_cast<const char*>(in.data_ptr()), size_t(in.nbytes())), "rank optimizer state");
    for (auto& [k, t] : part.tensors) merged.emplace(k, t);  // disjoint state keys; group options agree
  }
  return optim::OptimizerState::from_tensor_map(merged);
}

void ZeroRedundancy::drop_foreign_state() {
  for (size_t i = 0; i < params_.size(); ++i)
    if (owner_[i] != group_->rank()) opt_.state(int64_t(i)) = optim::ParamState{};
}

std::string ZeroRedundancy::summary() const {
  int64_t all = 0, mine = 0, count = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    all += params_[i].nbytes();
    if (owner_[i] == group_->rank()) mine += params_[i].nbytes(), ++count;
  }
  return fmt::format("rank {} updates {} of {} parameters ({:.2f} of {:.2f} MB) and holds {:.2f} MB of optimizer state",
                     group_->rank(), count, params_.size(), double(mine) / 1e6, double(all) / 1e6,
                     double(state_bytes()) / 1e6);
}

int64_t ZeroRedundancy::state_bytes() const {
  int64_t total = 0;
  for (size_t i = 0; i < params_.size(); ++i)
    for (const auto& [k, t] : opt_.state(int64_t(i)).buffers) total += t.nbytes();
  return total;
}

}  // namespace skiff::distributed
