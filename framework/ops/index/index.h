#pragma once
/// \file index.h
/// (index ops: being written.)

#include "framework/tensor/tensor.h"
