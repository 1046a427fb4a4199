"""A correct consumer that prints every DECIMAL as a JSON number with all its digits, as a Java
consumer's Jackson prints a BigDecimal or a Python one's simplejson a Decimal (`use_decimal`):
3046274941999.9964 stays 3046274941999.9964, beyond what a float64 holds. JSON numbers have no
fixed precision, so the value is the decimal upstream holds and the check must accept it.
"""
from decimal import Decimal

import simplejson
from _outsider import run_rewriting


def as_number(value, column_type):
    return Decimal(value) if isinstance(value, str) else value


def write(obj) -> str:
    return simplejson.dumps(obj, ensure_ascii=False, separators=(",", ":"), use_decimal=True)


if __name__ == "__main__":
    run_rewriting({"DECIMAL"}, lambda manifest: as_number, write)
