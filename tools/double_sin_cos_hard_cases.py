#!/usr/bin/python3
"""The doubles closest to a multiple of pi/2 up to 2^20, for sin_cos_moderate's argument reduction.

Note [Double polynomials] (leangrad/kernels/cpu/double_polynomials.h) reduces a to
r = a - n pi/2 to 2^-133 absolutely; this finds how small |r| gets over the doubles it takes, so
how much relative accuracy r keeps where a cancels most. For every n up to 2^20 * 2/pi, the
double nearest n pi/2 (in exact fixed point, 250 fractional bits) and its distance to n pi/2.
Prints the smallest distances, log2 of each and n. Runs in about a second:
  /usr/bin/python3 tools/double_sin_cos_hard_cases.py
"""
import math

import mpmath

FRACTION_BITS = 250
LIMIT = 2**20  # kSinCosModerateLimit


def main():
    mpmath.mp.prec = FRACTION_BITS + 50
    half_pi = int(mpmath.floor(mpmath.pi / 2 * mpmath.mpf(2) ** FRACTION_BITS))
    closest = []
    for n in range(1, int(LIMIT * 2 / math.pi) + 1):
        v = n * half_pi
        exponent = v.bit_length() - 1 - FRACTION_BITS  # floor(log2(n pi/2))
        spacing_bits = FRACTION_BITS + exponent - 52  # the doubles' spacing there, 2^(e - 52)
        remainder = v & ((1 << spacing_bits) - 1)
        distance = min(remainder, (1 << spacing_bits) - remainder) / 2**FRACTION_BITS
        closest.append((distance, n))
    closest.sort()
    for distance, n in closest[:5]:
        print(f"n = {n}: |a - n pi/2| = {distance:.4g} = 2^{math.log2(distance):.2f}")


if __name__ == "__main__":
    main()
