// Device op table rows for conv2d (see op_table.h).
#include "kernels/op_table.h"

namespace leangrad::test {

std::vector<OpCase> conv_op_cases() { return {}; }

}  // namespace leangrad::test
