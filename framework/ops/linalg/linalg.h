#pragma once
/// \file linalg.h
/// (linalg ops: being written.)

#include "framework/tensor/tensor.h"
