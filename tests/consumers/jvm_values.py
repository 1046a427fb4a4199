"""A correct consumer whose values come from a JVM stack: JDBC reads BIT(1) as a Boolean, a DECIMAL
is printed by BigDecimal.toString() (which writes an exponent where the plain digits would run
long: 0E-30, 1E-7), and a SET is held as a java.util.List of its member names, which Jackson
prints as a JSON array. Every value is upstream's, spelled as that stack spells it, so the check
must accept them.
"""
from decimal import Decimal

from _outsider import run_rewriting


def jvm(value, column_type):
    if column_type.name == "BIT":
        width = int(column_type.args[0]) if column_type.args else 1
        return bool(value) if width == 1 else value
    if column_type.name == "DECIMAL":
        return str(Decimal(value))  # the same notation rule as BigDecimal.toString()
    # SET: Canal-JSON carries the member bitmask, the other protocols the names.
    if isinstance(value, int):
        return [m for i, m in enumerate(column_type.args) if value >> i & 1]
    return value.split(",") if value else []


if __name__ == "__main__":
    run_rewriting({"BIT", "DECIMAL", "SET"}, lambda manifest: jvm)
