"""mypy over weblica/ against a baseline that may only shrink.

    .venv/bin/python .ci/typecheck.py            # fails on an error the baseline lacks, or on one it holds
                                                 # that is gone (then run --shrink)
    .venv/bin/python .ci/typecheck.py --shrink   # rewrite the baseline without the errors that are gone

mypy's settings are pyproject.toml's [tool.mypy]. The baseline (.ci/mypy-baseline.txt) holds one error a
line as `file: [code] message`, without line numbers, so an edit above an error does not move it; the
same error twice in a file is two lines. `--shrink` never adds an error: a new one is fixed, or, where it
cannot be, silenced where it stands with `# type: ignore[code]` and a reason.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
_ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+(?::\d+)?: error: (?P<message>.*?)\s+\[(?P<code>[a-z-]+)\]$")


def errors_of(output: str) -> Counter:
    """mypy's error lines as `file: [code] message` keys, counted."""
    found: Counter = Counter()
    for line in output.splitlines():
        match = _ERROR.match(line.strip())
        if match:
            found[f"{match['file']}: [{match['code']}] {match['message']}"] += 1
    return found


def read_baseline(path: Path | None = None) -> Counter:
    path = path or BASELINE
    if not path.exists():
        return Counter()
    return Counter(line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#"))


def write_baseline(errors: Counter, path: Path | None = None) -> None:
    path = path or BASELINE
    lines = sorted(errors.elements())
    header = ("# mypy errors weblica/ had when its type check began (issue 42); this list may only shrink.\n"
              "# .ci/typecheck.py compares; `.ci/typecheck.py --shrink` drops what was fixed.\n")
    path.write_text(header + "".join(f"{line}\n" for line in lines), encoding="utf-8")


def compare(current: Counter, baseline: Counter) -> tuple[list[str], list[str]]:
    """(new errors, baseline errors that are gone), each error once per occurrence."""
    return sorted((current - baseline).elements()), sorted((baseline - current).elements())


def run_mypy(mypy: list[str]) -> str:
    done = subprocess.run([*mypy, "--no-error-summary", "--no-pretty", "--show-error-codes"], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):   # 1: it found errors; 2: it could not check (a crash, a bad option)
        sys.exit(f"mypy did not run (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shrink", action="store_true", help="drop the errors that are gone from the baseline")
    parser.add_argument("--mypy", default=f"{sys.executable} -m mypy", help="the mypy command (default: %(default)s)")
    parser.add_argument("--init", action="store_true", help="write the baseline from scratch (once, when it begins)")
    args = parser.parse_args(argv)
    current = errors_of(run_mypy(args.mypy.split()))
    if args.init:
        write_baseline(current)
        print(f"baseline: {sum(current.values())} errors")
        return 0
    baseline = read_baseline()
    new, gone = compare(current, baseline)
    if new:
        print(f"{len(new)} type error(s) the baseline does not hold (fix them; the baseline only shrinks):")
        print("\n".join(f"  {e}" for e in new))
        print(f"mypy's own lines: {args.mypy} (from the repository root)")
        return 1
    if gone and not args.shrink:
        print(f"{len(gone)} baseline error(s) are fixed: shrink the baseline with `.venv/bin/python .ci/typecheck.py "
              "--shrink` and commit it")
        print("\n".join(f"  {e}" for e in gone[:20]))
        return 1
    if gone:
        write_baseline(current)
        print(f"baseline shrunk by {len(gone)} to {sum(current.values())} errors")
    else:
        print(f"type check: {sum(current.values())} errors, all in the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
