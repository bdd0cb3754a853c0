#!/usr/bin/env python3
"""roman_numerals: converts an integer (1-3999) to Roman numerals, or a
Roman numeral to an integer.

Reads {"value": "1994"} or {"value": "MCMXCIV"} as JSON on stdin (a JSON
number is accepted too), writes {"result": ...} on stdout. Errors go to
stderr with exit status 1. Standard library only.
"""
import json
import re
import sys

PAIRS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]
# Only canonical numerals: IIII, VX or IC are refused.
CANONICAL = re.compile(r"^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def to_roman(n):
    out = []
    for value, letters in PAIRS:
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)


def from_roman(s):
    total, i = 0, 0
    for value, letters in PAIRS:
        while s.startswith(letters, i):
            total += value
            i += len(letters)
    return total


def main():
    try:
        args = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        fail(f"arguments are not JSON: {e}")
    if not isinstance(args, dict) or "value" not in args:
        fail("arguments must be a JSON object with 'value'")
    value = args["value"]
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        fail("'value' must be an integer or a Roman numeral")
    text = str(value).strip()
    if re.fullmatch(r"[+-]?\d+", text):
        n = int(text)
        if not 1 <= n <= 3999:
            fail(f"{n} is out of range: Roman numerals cover 1 to 3999")
        result = {"result": to_roman(n)}
    else:
        numeral = text.upper()
        if not numeral or not CANONICAL.match(numeral):
            fail(f"'{text}' is not a valid Roman numeral")
        result = {"result": from_roman(numeral)}
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
