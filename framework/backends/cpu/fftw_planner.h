#pragma once
/// \file fftw_planner.h
/// FFTW's planner is not thread-safe (plan execution is). Every FFTW plan made
/// in the process, by the FFT kernels or by code that calls FFTW directly (the
/// science suite's spectral solver), is made and destroyed under this mutex.
#include <mutex>

namespace skiff::cpu {

std::mutex& fftw_planner_mutex();

}  // namespace skiff::cpu
