#pragma once
/// \file loss.h
/// (loss ops: being written.)

#include "framework/tensor/tensor.h"
