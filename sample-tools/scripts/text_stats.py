#!/usr/bin/env python3
"""text_stats: word, character and sentence counts of a text.

Reads {"text": "..."} as JSON on stdin, writes one JSON object on stdout.
Errors go to stderr with exit status 1. Standard library only.
"""
import json
import re
import sys


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def main():
    try:
        args = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        fail(f"arguments are not JSON: {e}")
    if not isinstance(args, dict):
        fail("arguments must be a JSON object")
    text = args.get("text")
    if not isinstance(text, str):
        fail("'text' must be a string")
    words = re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", text)
    # A sentence ends at . ! or ? followed by space or the end; a trailing
    # fragment without a final stop still counts as one.
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if re.search(r"\w", s)]
    result = {
        "words": len(words),
        "characters": len(text),
        "letters": sum(1 for c in text if c.isalpha()),
        "sentences": len(sentences),
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
