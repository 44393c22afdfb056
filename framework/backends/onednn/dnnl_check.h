#pragma once
/// \file dnnl_check.h
/// SKIFF_DNNL_CHECK(op, statements...): runs oneDNN library calls and turns a
/// dnnl::error they throw into a DeviceError naming the skiff op and oneDNN's
/// status, e.g. "conv2d (onednn): execution failed: could not execute a primitive
/// (status 5)". The oneDNN C++ API reports failures by throwing, so this is the
/// counterpart of checking a status code (STYLE.md, "Macros").
///
///   SKIFF_DNNL_CHECK("conv2d", plan.prim.execute(stream, args); stream.wait());
///
/// The statements run in a lambda that captures by reference: `return` inside
/// leaves the lambda, not the caller. Expected failures that have a fallback
/// (a primitive oneDNN cannot create for a shape) are caught where they occur
/// instead.
#include <dnnl.hpp>

#include "framework/core/error.h"

namespace skiff::onednn_detail {

template <typename Body>
void run_dnnl_checked(const char* op, Body&& body) {
  try {
    body();
  } catch (const dnnl::error& e) {
    SKIFF_THROW(DeviceError, "{} (onednn): execution failed: {} (status {})", op, e.what(), int(e.status));
  }
}

}  // namespace skiff::onednn_detail

#define SKIFF_DNNL_CHECK(op, ...) ::skiff::onednn_detail::run_dnnl_checked(op, [&] { __VA_ARGS__; })
