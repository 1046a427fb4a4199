"""A correct Canal-JSON consumer that writes ENUM and SET values as their member names.

Canal-JSON (without content-compatible) carries an ENUM as its 1-based member index and a SET as
its member bitmask (spec 003, sqlType INTEGER(4) / BIT(-7)); the members themselves are in the
CREATE TABLE / ALTER TABLE the stream carries. This consumer reads them from there and writes the
names, the upstream value itself: the check must accept it as conformant.
"""
from _outsider import run_rewriting


def member_names(value, column_type):
    number = int(value)
    members = column_type.args
    if column_type.name == "ENUM":
        # index 0 is the empty string MySQL stores for a value it could not take
        return members[number - 1] if number else ""
    return ",".join(m for i, m in enumerate(members) if number >> i & 1)


if __name__ == "__main__":
    run_rewriting({"ENUM", "SET"}, lambda manifest: member_names)
