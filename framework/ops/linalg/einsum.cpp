// einsum for one or two operands, composed of differentiable ops (no kernel, no backward
// of its own): diagonals for repeated letters, sums for letters used once, and for two
// operands one batched matmul after permuting to [batch, free, contracted].
#include <algorithm>
#include <cctype>
#include <map>

#include "framework/ops/linalg/linalg.h"
#include "framework/ops/linalg/linalg_internal.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Equation parse_equation(const std::string& equation, size_t num_operands) {
  std::string eq;
  for (char ch : equation)
    if (!std::isspace(static_cast<unsigned char>(ch))) eq += ch;
  SKIFF_CHECK_T(NotImplementedError, eq.find('.') == std::string::npos,
                "einsum: ellipsis ('...') is not supported, in \"{}\"", equation);
  SKIFF_CHECK_T(NotImplementedError, num_operands <= 2,
                "einsum: at most two operands are supported, got {} for \"{}\"", num_operands, equation);
  Equation out;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    out.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  SKIFF_CHECK(out.inputs.size() == num_operands, "einsum: expected {} subscripts for {} operands, got {} in \"{}\"",
              num_operands, num_operands, out.inputs.size(), equation);
  std::map<char, int> count;
  for (const auto& s : out.inputs)
    for (char ch : s) {
      SKIFF_CHECK(std::isalpha(static_cast<unsigned char>(ch)),
                  "einsum: expected subscripts made of letters, got '{}' in \"{}\"", ch, equation);
      ++count[ch];
    }
  if (arrow == std::string::npos) {
    for (const auto& [ch, n] : count)  // NumPy's implicit mode: letters used once, sorted
      if (n == 1) out.output += ch;
    return out;
  }
  out.output = eq.substr(arrow + 2);
  for (size_t i = 0; i < out.output.size(); ++i) {
    const char ch = out.output[i];
    SKIFF_CHECK(count.count(ch) > 0, "einsum: output letter '{}' does not appear in the inputs of \"{}\"", ch,
                equation);
    SKIFF_CHECK(out.output.find(ch, i + 1) == std::string::npos,
                "einsum: output letter '{}' appears more than once in \"{}\"", ch, equation);
  }
  return out;
}

bool contains(const std::string& s, char ch) { return s.find(ch) != std::string::npos; }

// Takes the diagonal for every letter repeated within one operand; the merged dim goes last.
void take_diagonals(Tensor& x, std::string& subs) {
  for (size_t i = 0; i < subs.size(); ++i) {
    const size_t j = subs.find(subs[i], i + 1);
    if (j == std::string::npos) continue;
    const char ch = subs[i];
    x = diagonal(x, 0, int64_t(i), int64_t(j));
    subs.erase(j, 1);
    subs.erase(i, 1);
    subs += ch;
    i = size_t(-1);  // restart: positions moved
  }
}

// Sums out the letters of `subs` that appear neither in `keep1` nor in `keep2`.
void sum_unused(Tensor& x, std::string& subs, const std::string& keep1, const std::string& keep2) {
  std::vector<int64_t> dims;
  std::string kept;
  for (size_t i = 0; i < subs.size(); ++i) {
    if (contains(keep1, subs[i]) || contains(keep2, subs[i])) kept += subs[i];
    else dims.push_back(int64_t(i));
  }
  if (dims.empty()) return;
  x = sum(x, dims);
  subs = kept;
}

std::vector<int64_t> positions(const std::string& subs, const std::string& letters) {
  std::vector<int64_t> p;
  for (char ch : letters) p.push_back(int64_t(subs.find(ch)));
  return p;
}

// Permutes x (labelled `subs`) so that its letters come in the order of `order`.
Tensor permute_to(const Tensor& x, const std::string& subs, const std::string& order) {
  if (subs == order) return x;
  return permute(x, positions(subs, order));
}

int64_t size_product(const std::map<char, int64_t>& sizes, const std::string& letters) {
  int64_t n = 1;
  for (char ch : letters) n *= sizes.at(ch);
  return n;
}

// x (labelled subs) as [batch, first, second] with the letter groups flattened; when the
// groups sit in the other order in memory, lays it out as [batch, second, first] and
// returns a transposed view, which the matmul kernels read without copying.
Tensor as_batched_matrix(const Tensor& x, const std::string& subs, const std::string& batch, const std::string& first,
                         const std::string& second, const std::map<char, int64_t>& sizes) {
  const Shape mat{size_product(sizes, batch), size_product(sizes, first), size_product(sizes, second)};
  const bool swapped = !first.empty() && !second.empty() && subs.find(second[0]) < subs.find(first[0]);
  if (!swapped) return reshape(permute_to(x, subs, batch + first + second), mat);
  Tensor y = reshape(permute_to(x, subs, batch + second + first), {mat[0], mat[2], mat[1]});
  return transpose(y, 1, 2);
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  SKIFF_CHECK(!operands.empty(), "einsum: expected at least one operand for \"{}\"", equation);
  Equation eq = parse_equation(equation, operands.size());
  std::map<char, int64_t> sizes;
  std::vector<Tensor> xs = operands;
  for (size_t o = 0; o < xs.size(); ++o) {
    const std::string& subs = eq.inputs[o];
    SKIFF_CHECK_SHAPE(int64_t(subs.size()) == xs[o].dim(),
                      "einsum: operand {} has shape {} but subscripts \"{}\" in \"{}\"", o, xs[o].shape(), subs,
                      equation);
    for (size_t d = 0; d < subs.size(); ++d) {
      auto [it, fresh] = sizes.emplace(subs[d], xs[o].shape()[int64_t(d)]);
      SKIFF_CHECK_SHAPE(fresh || it->second == xs[o].shape()[int64_t(d)],
                        "einsum: letter '{}' has sizes {} and {} in \"{}\" (operand shapes {})", subs[d],
                        it->second, xs[o].shape()[int64_t(d)], equation,
                        xs.size() == 1 ? xs[0].shape().str() : xs[0].shape().str() + " and " + xs[1].shape().str());
    }
  }
  for (size_t o = 0; o < xs.size(); ++o) take_diagonals(xs[o], eq.inputs[o]);

  if (xs.size() == 1) {
    sum_unused(xs[0], eq.inputs[0], eq.output, "");
    return permute_to(xs[0], eq.inputs[0], eq.output);
  }

  std::string &sa = eq.inputs[0], &sb = eq.inputs[1];
  sum_unused(xs[0], sa, eq.output, sb);
  sum_unused(xs[1], sb, eq.output, sa);
  std::string batch, left, right, contracted;
  for (char ch : eq.output) {
    const bool in_a = contains(sa, ch), in_b = contains(sb, ch);
    if (in_a && in_b) batch += ch;
    else if (in_a) left += ch;
    else right += ch;
  }
  for (char ch : sa)
    if (contains(sb, ch) && !contains(eq.output, ch)) contracted += ch;
  Tensor a = as_batched_matrix(xs[0], sa, batch, left, contracted, sizes);
  Tensor b = as_batched_matrix(xs[1], sb, batch, contracted, right, sizes);
  Tensor prod = matmul(a, b);  // [batch, left, right]
  Shape unflat;
  for (char ch : batch + left + right) unflat.push_back(sizes.at(ch));
  return permute_to(reshape(prod, unflat), batch + left + right, eq.output);
}

}  // namespace skiff
