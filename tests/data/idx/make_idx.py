"""Tiny Fashion-MNIST folders for leangrad-train's error tests (tests/tools/test_train_cli.cmake,
MODE errors), which a CMake script cannot write (IDX files begin with zero bytes):
- empty-train/: every split has 0 images;
- empty-test/: one training image (label 3), 0 test images.
Run with any python3: python3 tests/data/idx/make_idx.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def idx_ubyte(dims, payload):
    # Magic 0x00000803 (images, 3 dims) or 0x00000801 (labels): two zero bytes, the type
    # (0x08, unsigned byte), the number of dims; then each dim as a big-endian uint32.
    return bytes([0, 0, 0x08, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


def write_split(folder, prefix, n):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(idx_ubyte([n, 28, 28], bytes(range(256)) * 3 + bytes(16) if n else b""))
    with open(os.path.join(folder, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(idx_ubyte([n], bytes([3]) * n))


write_split(os.path.join(HERE, "empty-train"), "train", 0)
write_split(os.path.join(HERE, "empty-train"), "t10k", 0)
write_split(os.path.join(HERE, "empty-test"), "train", 1)
write_split(os.path.join(HERE, "empty-test"), "t10k", 0)
