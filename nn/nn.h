// All of leangrad::nn: the Module base, the holders (LEANGRAD_MODULE) and every module.
#pragma once

#include "autograd/nn_functions.h"
#include "nn/activation.h"
#include "nn/container.h"
#include "nn/conv.h"
#include "nn/dropout.h"
#include "nn/functional.h"
#include "nn/group_norm.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/pooling.h"
