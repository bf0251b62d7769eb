"""python3 -m validation --suite [options] (validation/suite.py: every
validation test, busy-host check, retry, --budget); --list: the harnesses."""

import pkgutil
import sys

import validation
from validation import suite

NOT_HARNESSES = {"base", "suite", "predict", "fixtures"}


def harnesses():
    return sorted(m.name for m in pkgutil.iter_modules(validation.__path__)
                  if m.name not in NOT_HARNESSES and not m.name.startswith("_"))


def main(argv):
    if argv[:1] == ["--suite"]:
        return suite.main(argv[1:])
    if argv[:1] == ["--list"]:
        for h in harnesses():
            print(f"python3 -m validation.{h}")
        return 0
    print("usage: python3 -m validation --suite [--build DIR] [--wait S] [--budget S] "
          "[--only REGEX] [--no-torch-quick]  (--suite --help for more)\n"
          "       python3 -m validation --list\n"
          "       python3 -m validation.NAME [--help]", file=sys.stderr)
    return 0 if argv[:1] in (["-h"], ["--help"]) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
