// Stand-ins for kernels/onednn/onednn_conv.cpp in a build without oneDNN
// (LEANGRAD_WITH_ONEDNN=OFF): there is no direct convolution, so every entry declines:
// kernels/cpu/conv.cpp runs im2col + GEMM, and autograd's conv3d composes conv2d.
#include <leangrad/kernels/cpu/conv_direct.h>

namespace leangrad::kernels::cpu::onednn {

bool conv2d_direct_forward(const Conv2dGeometry&, float*, const float*, const float*,
                           const float*) {
  return false;
}

bool conv2d_direct_input_grad(const Conv2dGeometry&, float*, const float*, const float*) {
  return false;
}

bool conv2d_direct_weight_grad(const Conv2dGeometry&, float*, const float*, const float*) {
  return false;
}

bool conv3d_direct_forward(const Conv3dGeometry&, float*, const float*, const float*,
                           const float*) {
  return false;
}

bool conv3d_direct_input_grad(const Conv3dGeometry&, float*, const float*, const float*) {
  return false;
}

bool conv3d_direct_weight_grad(const Conv3dGeometry&, float*, const float*, const float*) {
  return false;
}

bool conv3d_direct_available(const Conv3dGeometry&, bool) {
  return false;
}

}  // namespace leangrad::kernels::cpu::onednn
