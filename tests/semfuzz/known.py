"""known: findings the lead knows of and has not fixed yet.

Each entry names the invariant, a minimal case (YAML, as the shrinker printed
it), why it is open, and `match(scen, finding)`: which generated scenarios'
findings it covers. The CI run reports every match as KNOWN (never silent)
and passes; a finding no entry matches fails it. Remove an entry once its
fix lands (`semfuzz.py --check-known` says which no longer fail).
"""

KNOWN = {}


def match(scen, f):
    for k, e in KNOWN.items():
        if e["invariant"] == f["invariant"] and e["match"](scen, f):
            return k
    return None
