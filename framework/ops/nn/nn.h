#pragma once
/// \file nn.h
/// (nn ops: being written.)

#include "framework/tensor/tensor.h"
