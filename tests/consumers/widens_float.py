"""A deliberately broken consumer: it writes a FLOAT column as the float64 its float32 widens to
(0.1 becomes 0.10000000149011612), as a consumer that reads FLOAT into a float32 and prints it as a
double would. Upstream's FLOAT is the float32 printed with its shortest digits; the widened number
is a different value, so the check must report CONSUMER-STATE-1.
"""
import struct

from _outsider import run_rewriting


def widened(value, column_type):
    return struct.unpack("<f", struct.pack("<f", float(value)))[0]


if __name__ == "__main__":
    run_rewriting({"FLOAT"}, lambda manifest: widened)
