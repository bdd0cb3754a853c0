"""Every relative Markdown link resolves: the file exists and, for `#anchor`,
the target has a heading whose mdBook/GitHub slug is the anchor. Prints each
broken link as FILE:LINE: LINK: why, and exits 1 if there is one."""
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(text):
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[`*]", "", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def lines_outside_code(path):
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        seen = {}
        out = set()
        for _, line in lines_outside_code(path):
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                out.add(s if k == 0 else f"{s}-{k}")
        anchors_cache[path] = out
    return anchors_cache[path]


def check(path):
    bad = []
    for n, line in lines_outside_code(path):
        line = re.sub(r"`[^`]*`", "", line)
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append(f"{path}:{n}: {target}: no such file {dest}")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append(f"{path}:{n}: {target}: no heading '#{anchor}' in {dest}")
    return bad


def main(args):
    files = []
    for a in args:
        if os.path.isdir(a):
            for d, _, names in os.walk(a):
                files += [os.path.join(d, x) for x in sorted(names) if x.endswith(".md")]
        elif os.path.exists(a):
            files.append(a)
        else:
            print(f"links: {a}: no such file", file=sys.stderr)
            return 1
    bad = [b for f in files for b in check(f)]
    for b in bad:
        print(b, file=sys.stderr)
    print(f"links: {len(files)} files, {len(bad)} broken links", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
