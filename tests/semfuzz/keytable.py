"""keytable: stallsim's scenario keys and kinds, read from the program itself.

`stallsim help keys` lists every key (scope, type, default, range or choices)
and `stallsim help kinds` which kind owns which key. The generator draws the
keys it knows realistic values for and uses this table to find the others
(a key added later is then fuzzed generically and named in the summary).

    table = KeyTable.load("build/sim/stallsim")
    table.keys["server.cpus"]      # {'type': 'integer', 'default': '24', 'lo': 1, 'hi': 65536, ...}
    table.owners["loader.num_workers"]   # {('loader.kind', 'pytorch')}
"""
import math
import re
import subprocess

_ROW = re.compile(
    r"^(?P<name>\S+)\s+(?P<type>string|integer|number|choice|bool)\s+(?P<mid>.*?)"
    r"default (?P<default>\S+)\s*(?P<rest>.*)$")


def _bound(text):
    text = text.strip()
    if text in ("inf", "+inf"):
        return math.inf
    if text == "-inf":
        return -math.inf
    return float(text)


def _parse_range(rest):
    """'[0, inf)' -> (0, inf, closed_lo, closed_hi); choices 'a, b' -> list."""
    rest = rest.strip()
    m = re.match(r"^([\[(])\s*([^,]+),\s*([^\])]+)([\])])$", rest)
    if m:
        return {"lo": _bound(m.group(2)), "hi": _bound(m.group(3)),
                "lo_closed": m.group(1) == "[", "hi_closed": m.group(4) == "]"}
    if rest:
        return {"choices": [c.strip() for c in rest.split(",") if c.strip()]}
    return {}


class KeyTable:
    def __init__(self, keys, job_keys, owners, kinds):
        self.keys = keys          # scenario scope: name -> row
        self.job_keys = job_keys  # job scope: name -> row
        self.owners = owners      # key -> {(family key, kind name)}
        self.kinds = kinds        # family key -> [kind names]

    @staticmethod
    def load(stallsim):
        keys_txt = subprocess.run([stallsim, "help", "keys"], capture_output=True, text=True,
                                  check=True).stdout
        kinds_txt = subprocess.run([stallsim, "help", "kinds"], capture_output=True,
                                   text=True, check=True).stdout
        keys, job_keys = {}, {}
        for line in keys_txt.splitlines():
            m = _ROW.match(line)
            if not m:
                continue
            row = {"type": m.group("type"), "default": m.group("default").strip('"')}
            row.update(_parse_range(m.group("rest")))
            name = m.group("name")
            if name.startswith("jobs[]."):
                job_keys[name[len("jobs[]."):]] = row
            else:
                keys[name] = row
        owners, kinds, family, kind = {}, {}, None, None
        for line in kinds_txt.splitlines():
            if re.match(r"^\S.*:$", line):
                family = line[:-1]
                kinds[family] = []
                continue
            m = re.match(r"^  (\S+)\s", line)
            if m and family:
                kind = m.group(1)
                kinds[family].append(kind)
                continue
            m = re.match(r"^\s+key (\S+)", line)
            if m and family and kind:
                owners.setdefault(m.group(1), set()).add((family, kind))
        return KeyTable(keys, job_keys, owners, kinds)
