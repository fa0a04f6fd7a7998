// All of leangrad::nn: the Module base and every module.
#pragma once

#include "autograd/nn_functions.h"
#include "nn/module.h"
