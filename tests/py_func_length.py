#!/usr/bin/env python3
"""py_func_length: no Python function of the project (validation/, python/,
scripts/, tests/) is over 100 lines (the rule tests/func_length.sh holds
the C to), counted from its `def` (decorators included) to its last line,
by the ast. It first checks itself on a function of 101 lines, which must
fail. Any function over the limit fails: there are no known exceptions
(issue 54's step 4 took apart the last, the probe's main).
usage: py_func_length.py SOURCE_DIR"""
import ast
import os
import sys

LIMIT = 100
FOLDERS = ("validation", "python", "scripts", "tests")


def lengths(path, text=None):
    """(lines, path, line, name) of every function in the file."""
    tree = ast.parse(text if text is not None else open(path).read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((node.end_lineno - first + 1, path, first, node.name))
    return out


def main(src):
    body = "def long_one(a,\n             b):\n" + "    a += 1\n" * 98 + "    return a\n"
    n = lengths("self-check", body)[0][0]
    if n != 101:
        print(f"FAIL: the counter gives {n} lines for a function of 101")
        return 1
    found = []
    for folder in FOLDERS:
        for d, _, fs in os.walk(os.path.join(src, folder)):
            for f in sorted(fs):
                if f.endswith(".py"):
                    p = os.path.join(d, f)
                    found += [(n, os.path.relpath(p, src), line, name)
                              for n, _, line, name in lengths(p)]
    found.sort(reverse=True)
    print(f"longest: {found[0][0]} lines, {found[0][1]}:{found[0][2]} {found[0][3]}")
    bad = [f"{n} lines: {p}:{line} {name}" for n, p, line, name in found if n > LIMIT]
    if bad:
        print(f"FAIL: Python functions over {LIMIT} lines:\n" + "\n".join(bad))
        return 1
    print(f"no Python function in {', '.join(FOLDERS)} over {LIMIT} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")))
