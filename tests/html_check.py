#!/usr/bin/python3
"""Checks a headless-Chromium rendering of a stallsim HTML page: the browser
logged no console message, and the screenshot shows the charts, counted by
their pixels (the page's own colours, the share of the page that is drawn).

usage: html_check.py SHOT.png CHROMIUM.log run|sweep   (exit 1 with the reasons)"""
import re
import struct
import sys
import zlib


def read_png(path):
    """(width, height, rows of RGB tuples): 8-bit RGB or RGBA, not interlaced."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise SystemExit(f"{path}: PNG depth {depth} type {ctype} interlace {interlace}")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    pixels = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.append(bytes(line))
        prev = line
    return w, h, bpp, pixels


def count_colours(w, h, bpp, pixels):
    counts = {}
    for row in pixels:
        for x in range(0, w * bpp, bpp):
            rgb = row[x:x + 3]
            counts[rgb] = counts.get(rgb, 0) + 1
    return counts


def hexrgb(s):
    return bytes(int(s[i:i + 2], 16) for i in (1, 3, 5))


errors = []
shot, log, mode = sys.argv[1:4]
console = [l for l in open(log, errors="replace") if re.search(r":CONSOLE\(|:CONSOLE:|Uncaught", l)]
if console:
    errors.append("the browser's console said: " + " | ".join(l.strip() for l in console[:3]))
w, h, bpp, pixels = read_png(shot)
counts = count_colours(w, h, bpp, pixels)
total = w * h
white = counts.get(b"\xff\xff\xff", 0)
drawn = 1 - white / total
if mode == "run":
    # The split's three bar colours (html.c) and the first hit-rate line (svg_color(3)).
    want = {"compute": ("#4e79a7", 3000), "prep stall": ("#f28e2b", 800),
            "fetch stall": ("#e15759", 800), "hit-rate line": ("#76b7b2", 100)}
    min_drawn = 0.03
else:
    # The first four series' colours (svg_color(0..3)) in the curves.
    want = {f"series {k + 1}": (c, 400) for k, c in
            enumerate(("#4e79a7", "#f28e2b", "#e15759", "#76b7b2"))}
    min_drawn = 0.03
def near(colour, tol=24):
    """Pixels within tol of the colour in every channel (lines are anti-aliased)."""
    c = hexrgb(colour)
    return sum(n for rgb, n in counts.items() if max(abs(rgb[i] - c[i]) for i in range(3)) <= tol)


for what, (colour, least) in want.items():
    n = near(colour)
    if n < least:
        errors.append(f"{what} ({colour}): {n} pixels, want at least {least}")
if drawn < min_drawn:
    errors.append(f"only {100 * drawn:.1f}% of the page is drawn (not white)")
print(f"html_check: {shot}: {w}x{h}, {100 * drawn:.1f}% drawn, " +
      ", ".join(f"{k} {near(c)} px" for k, (c, _) in want.items()))
if errors:
    print("\n".join(errors))
    sys.exit(1)
