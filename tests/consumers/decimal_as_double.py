"""A deliberately broken consumer: it reads every DECIMAL into a float64 (a Java `double`, a Go
`float64`, JavaScript's only number) and prints that, so 3046274941999.9964 becomes
3046274941999.9966 and 99999999999999.999999 becomes 100000000000000.0. The value is no longer
the decimal upstream holds; the check must report it wherever the double lost a digit.
"""
from _outsider import run_rewriting


def as_double(value, column_type):
    return float(value) if isinstance(value, str) else value


if __name__ == "__main__":
    run_rewriting({"DECIMAL"}, lambda manifest: as_double)
