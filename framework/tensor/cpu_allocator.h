#pragma once
/// \file cpu_allocator.h
/// The CPU caching allocator behind Storage::allocate (internal to framework/tensor).
///
/// Two tiers, because tensors come in two kinds of sizes:
///  - small blocks (up to kLargeBlock) are cached in size buckets and reused for
///    requests of the same bucket, or up to 1.5x larger;
///  - large blocks are carved out of big segments, best fit, split on allocation and
///    merged with free neighbours on release. Images of different sizes ask for
///    activations of different sizes; with exact-size buckets those requests missed
///    each other and the cache grew to almost 4x the live bytes (`skiff ocr` over 40
///    mixed images: 74 MB live, 278 MB held). Carving lets a freed 6 MB block serve a
///    4 MB and a 2 MB request, so the memory held stays near the live peak, and memory
///    once touched is reused instead of faulting in fresh pages.
/// Segments are mapped lazily by the system, so an untouched tail costs no resident
/// memory. Nothing is returned to the system until empty() (or an allocation failure).
/// Under AddressSanitizer cached memory is poisoned, so a use after free is still caught.

#include <cstddef>
#include <cstdint>

namespace skiff::detail {

/// Requests above this size are carved from segments. Not higher: activations of a few
/// hundred KiB vary with the image size too, and as buckets they were held per size
/// (`skiff ocr` over 40 mixed images with 1 MiB: 38 MB of small blocks, 56k page faults;
/// with 256 KiB: 49k faults, peak RSS -27 MB).
inline constexpr size_t kLargeBlock = size_t(256) << 10;
/// A new segment's size, unless one request needs more.
inline constexpr size_t kSegmentSize = size_t(64) << 20;

/// 64-byte aligned memory for at least `nbytes`; `handle` receives what cpu_release() needs.
/// \throws DeviceError when the system has no memory left even after emptying the cache.
void* cpu_allocate(size_t nbytes, uintptr_t* handle);
/// Gives a block back to the cache.
void cpu_release(void* p, uintptr_t handle);

}  // namespace skiff::detail
