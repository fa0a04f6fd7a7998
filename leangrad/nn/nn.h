// All of leangrad::nn: the Module base, the holders (LEANGRAD_MODULE) and every module.
#pragma once

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/attention.h>
#include <leangrad/nn/batch_norm.h>
#include <leangrad/nn/composed_layers.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/conv.h>
#include <leangrad/nn/distance.h>
#include <leangrad/nn/dropout.h>
#include <leangrad/nn/embedding.h>
#include <leangrad/nn/fold.h>
#include <leangrad/nn/functional.h>
#include <leangrad/nn/group_norm.h>
#include <leangrad/nn/init.h>
#include <leangrad/nn/layer_norm.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/loss.h>
#include <leangrad/nn/module.h>
#include <leangrad/nn/module_holder.h>
#include <leangrad/nn/packed_sequence.h>
#include <leangrad/nn/padding.h>
#include <leangrad/nn/pooling.h>
#include <leangrad/nn/rnn.h>
#include <leangrad/nn/transformer.h>
#include <leangrad/nn/upsample.h>
