#!/usr/bin/python3
"""Writes the small .npy files under tests/data/npy/ that tests/test_ndarray.cpp checks.

Run with a Python that has numpy (Debian: /usr/bin/python3 after
`apt-get install python3-numpy`):  /usr/bin/python3 scripts/gen_npy_test_data.py
The test hard-codes the contents written here; keep the two in step.
"""
import os
import shutil
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "npy")
GRID_SAMPLE_INPUT = "/work/shared/data/gridsample/gs2d_bilinear_zeros_ac0_s1_f32/input.npy"


def save(name, array, version=None):
    path = os.path.join(OUT, name)
    if version is None:
        np.save(path, array)  # numpy picks version 1.0
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version)


def main():
    os.makedirs(OUT, exist_ok=True)
    # Version 1.0, one file per dtype, extremes included.
    save("bool_2x3.npy", np.array([[True, False, True], [False, False, True]]))
    save("int8_5.npy", np.array([-128, -1, 0, 1, 127], dtype=np.int8))
    save("uint8_5.npy", np.array([0, 1, 127, 128, 255], dtype=np.uint8))
    save("int16_2x3.npy", np.array([[-32768, -1, 0], [1, 2, 32767]], dtype=np.int16))
    save("uint16_2x3.npy", np.array([[0, 1, 2], [255, 256, 65535]], dtype=np.uint16))
    save("int32_2x2.npy", np.array([[-2**31, -1], [7, 2**31 - 1]], dtype=np.int32))
    save("uint32_4.npy", np.array([0, 1, 65536, 2**32 - 1], dtype=np.uint32))
    save("int64_3.npy", np.array([-2**63, -1, 2**63 - 1], dtype=np.int64))
    save("uint64_3.npy", np.array([0, 1, 2**64 - 1], dtype=np.uint64))
    save("float16_2x4.npy",
         np.array([[0.0, -0.0, 1.0, -2.5], [65504.0, 2.0**-24, np.inf, np.nan]], dtype=np.float16))
    save("float32_2x3x2.npy", (np.arange(12, dtype=np.float32) * 0.5 - 3).reshape(2, 3, 2))
    save("float64_3x2.npy",
         np.array([[0.1, -0.2], [1e300, -1e-300], [5e-324, -np.inf]], dtype=np.float64))
    save("float64_0d.npy", np.array(3.5))
    save("float32_empty_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    # 15 dims: numpy's spare room for the growing axis pushes the data from byte 128 to 192.
    save("uint8_15d_growth_pad.npy", np.full((1,) * 15, 42, dtype=np.uint8))
    # A header that would end exactly on a 64-byte boundary: numpy still adds a full block
    # of padding, so the data starts at 192, not 128.
    save("uint8_14d_full_pad_block.npy",
         np.arange(100, dtype=np.uint8).reshape((1, 100) + (1,) * 12))
    # Other versions.
    save("float32_v2_2x3.npy", np.arange(6, dtype=np.float32).reshape(2, 3), version=(2, 0))
    save("int16_v3_3.npy", np.array([-5, 0, 5], dtype=np.int16), version=(3, 0))
    # Files the loader must reject.
    save("int32_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)))
    save("int32_bigendian_3.npy", np.arange(3, dtype=">i4"))
    # A real grid_sample case input, shape (2, 3, 5, 7).
    if os.path.exists(GRID_SAMPLE_INPUT):
        shutil.copyfile(GRID_SAMPLE_INPUT, os.path.join(OUT, "gs2d_input_2x3x5x7_f32.npy"))
    else:
        print("note: %s not found; gs2d_input_2x3x5x7_f32.npy left as is" % GRID_SAMPLE_INPUT,
              file=sys.stderr)


if __name__ == "__main__":
    main()
