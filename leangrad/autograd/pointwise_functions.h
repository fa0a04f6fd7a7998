// The rest of torch's pointwise math, as LibTorch's functions: hypot, copysign, nextafter, fmax,
// fmin, gcd, lcm, the shifts, heaviside, logaddexp2, float_power, ldexp, frexp, deg2rad, rad2deg,
// frac, sgn, fix, positive, signbit and isreal. Two tensors broadcast together and promote as add's
// operands (autograd/functions.h); the floating ones compute integral operands in float32. The
// binary kernels are kernels/elementwise_math.h's (BinaryOp Hypot, Copysign, Nextafter, Fmax,
// Fmin, Gcd, Lcm, LeftShift, RightShift; UnaryOp FrexpMantissa, FrexpExponent); the others are
// compositions. Gradients are PyTorch's formulas, written with differentiable functions.
//   Tensor r = hypot(dx, dy);                          // the distance, without overflow
//   Tensor m = fmax(a, b);                             // a NaN loses to a number
//   Tensor flags = bitwise_left_shift(ones, bit);      // 1 << bit, 0 past the width
#pragma once

#include <tuple>

#include <leangrad/core/tensor.h>

namespace leangrad {

// sqrt(a^2 + b^2) without overflow or underflow in the squares (C's hypot). Gradients a / out and
// b / out (NaN at (0, 0), as PyTorch's).
Tensor hypot(const Tensor& a, const Tensor& b);
// |a| with the sign bit of b (-0 and a NaN's sign included). Gradient out / a for a (0 where a is
// 0), 0 for b, as PyTorch's.
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, double b);
// The next float after a toward b (b itself where they are equal), float32 and float64 only; a
// 16-bit operand is a DTypeError (PyTorch 1.13 refuses float16 too). No derivative: a backward
// through it raises, as PyTorch's.
Tensor nextafter(const Tensor& a, const Tensor& b);
// The larger (fmax) or smaller (fmin) of a and b, a NaN ignored unless both are NaN (C's fmax;
// maximum and minimum propagate NaN instead). Integral and bool operands too. The gradient goes
// to a where a >= b (a <= b for fmin) or b is NaN, to b elsewhere, as PyTorch's.
Tensor fmax(const Tensor& a, const Tensor& b);
Tensor fmin(const Tensor& a, const Tensor& b);
// The greatest common divisor (>= 0; gcd(0, 0) = 0) and the least common multiple (>= 0; 0 where
// either is 0) of integral tensors; float and bool operands are a DTypeError, as PyTorch's.
// Products that overflow wrap, and gcd of the most negative value with 0 is that value (Note
// [Defined integer semantics]).
Tensor gcd(const Tensor& a, const Tensor& b);
Tensor lcm(const Tensor& a, const Tensor& b);
// a << b and a >> b (arithmetic) of integral tensors, defined for every b: a shift by a negative
// count or by the width or more gives 0 (left) or the sign's fill, 0 or -1 (right), PyTorch 2's
// rule (PyTorch 1.13 hands such counts to the C shift, whose result is undefined). Float and bool
// operands are a DTypeError, as PyTorch 1.13's.
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, double b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, double b);
// The step function: 0 where input < 0, 1 where input > 0, values where input == 0 (values
// broadcast with input), 0 for NaN; input and values of one dtype, as PyTorch's. Differentiable
// in values (the gradient passes where input == 0; PyTorch's raises), 0 in input.
Tensor heaviside(const Tensor& input, const Tensor& values);
// log2(2^a + 2^b) without overflow: max(a, b) + log2(1 + 2^-|a - b|), a where both are the same
// infinity, as torch.logaddexp2. Gradient 1 / (1 + 2^(b - a)) for a. Floating dtypes.
Tensor logaddexp2(const Tensor& a, const Tensor& b);
// a^b computed in float64 whatever the operands' dtypes, as torch.float_power (float64 result).
Tensor float_power(const Tensor& a, const Tensor& b);
Tensor float_power(const Tensor& a, double b);
Tensor float_power(double a, const Tensor& b);
// a * 2^e, as torch.ldexp (a times exp2(e), in the floating type a and e promote to: a power of
// two past that type's range is inf there, as PyTorch's).
Tensor ldexp(const Tensor& a, const Tensor& e);
// The mantissa m and exponent e of a = m 2^e with 1/2 <= |m| < 1 (0 and 0 for a zero; an infinity
// or NaN is its own mantissa, with exponent 0), as torch.frexp: m in a's dtype, e int32; floating
// a only (a DTypeError otherwise, as PyTorch's). Gradient of m: 1 / 2^e; e has none.
std::tuple<Tensor, Tensor> frexp(const Tensor& a);
// Degrees to radians and back: a * (pi / 180) and a * (180 / pi); integral input gives float32.
Tensor deg2rad(const Tensor& a);
Tensor rad2deg(const Tensor& a);
// a - trunc(a), the fraction with a's sign (NaN at +-inf); floating only, as PyTorch's.
// Gradient 1.
Tensor frac(const Tensor& a);
// sign(a) for real tensors (torch.sgn's complex case does not arise); fix is trunc.
Tensor sgn(const Tensor& a);
Tensor fix(const Tensor& a);
// a itself (torch.positive); a bool tensor is a DTypeError, as PyTorch's.
Tensor positive(const Tensor& a);
// True where the sign bit is set: negative numbers, -0.0, -inf and a NaN with its sign bit (the
// sign of copysign(1, a)); false for unsigned and bool tensors.
Tensor signbit(const Tensor& a);
// True everywhere (leangrad's dtypes are all real), a bool tensor of a's shape.
Tensor isreal(const Tensor& a);
// The argument of each element as a complex number, as torch.angle for real tensors: pi where
// a < 0, 0 where a >= 0 (-0.0 too), NaN where a is NaN; integral and bool tensors give float32.
// Gradient 0.
Tensor angle(const Tensor& a);

}  // namespace leangrad
