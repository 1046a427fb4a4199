"""The number a consumer reads from a FLOAT column, for the fidelity projections.

TiDB keeps FLOAT as float32, and every TiCDC encoder prints it with Go's shortest float32 digits
(strconv, precision -1, bit size 32: the fewest digits that read back as the same float32, the
closest among them); a reader parses those digits as a double. numpy's unique formatting picks the
same digits. Trying "%.{p}g" for growing p does not: at a power of two the nearest p-digit decimal
can fall outside the float32's narrower lower half-gap while another p-digit one fits.
"""
from __future__ import annotations

import math
import struct

import numpy as np


def float32_as_read(x: float) -> float:
    """The double read back from Go's shortest text of float32(x); ±inf beyond the float32 range."""
    try:
        f = struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # rounds past the largest float32
        return math.copysign(math.inf, x)
    return float(np.format_float_scientific(np.float32(f), unique=True))
