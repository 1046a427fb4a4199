"""A correct consumer that prints DATETIME and TIME with the fractional digits the column declares.

Debezium carries DATETIME as epoch milli- or microseconds and TIME as microseconds, so a
consumer that does not look further prints 3 or 6 fraction digits (docs/fidelity.md). This one
takes each column's fsp from the CREATE TABLE / ALTER TABLE in the stream and prints exactly that
many, which is how TiDB prints the value: the check must accept it as conformant.
"""
from _outsider import run_rewriting


def with_declared_fsp(value, column_type):
    whole, dot, fraction = str(value).partition(".")
    fsp = column_type.fsp
    # the digits past fsp are zeros: the value never had more precision than its column
    fraction = (fraction + "0" * fsp)[:fsp]
    return f"{whole}.{fraction}" if fsp else whole


if __name__ == "__main__":
    run_rewriting({"DATETIME", "TIME"}, lambda manifest: with_declared_fsp)
