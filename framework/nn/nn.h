#pragma once
/// \file nn.h
/// Umbrella header: Module, containers, initializers and every layer.

#include "framework/nn/activation.h"
#include "framework/nn/attention.h"
#include "framework/nn/containers.h"
#include "framework/nn/conv.h"
#include "framework/nn/embedding.h"
#include "framework/nn/init.h"
#include "framework/nn/linear.h"
#include "framework/nn/module.h"
#include "framework/nn/norm.h"
#include "framework/nn/rnn.h"
#include "framework/nn/rotary.h"
#include "framework/nn/transformer.h"
