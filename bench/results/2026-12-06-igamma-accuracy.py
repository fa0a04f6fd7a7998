# The reference values for 2026-12-06-igamma-accuracy.cpp: P(a, x) and Q(a, x) by mpmath at 40
# digits for 1,500 random pairs (a, x) in each of (0, 10], (0, 100] and (0, 1000]. Debian's
# python3 (mpmath):
#   /usr/bin/python3 bench/results/2026-12-06-igamma-accuracy.py /tmp/igamma-reference.txt
import random
import sys

import mpmath

mpmath.mp.dps = 40
random.seed(7)
with open(sys.argv[1], "w") as out:
    for top in (10.0, 100.0, 1000.0):
        for _ in range(1500):
            a = top * random.random() + 1e-3
            x = top * random.random() + 1e-3
            p = mpmath.gammainc(a, 0, x, regularized=True)
            q = mpmath.gammainc(a, x, mpmath.inf, regularized=True)
            out.write("%r %r %r %s %s\n" % (top, a, x, mpmath.nstr(p, 25), mpmath.nstr(q, 25)))
