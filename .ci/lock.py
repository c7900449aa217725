"""The tested package sets: lock files compiled from pyproject.toml, and the checks that keep them true.

    python3 .ci/lock.py refresh     # recompile both locks (uv pip compile), keeping today's pins where allowed
    python3 .ci/lock.py refresh --upgrade   # take the newest versions pyproject.toml allows; then fix any drift
    python3 .ci/lock.py check       # the locks were compiled from this pyproject.toml (CI runs it first)
    .venv/bin/python .ci/lock.py installed   # this environment holds exactly the main lock's set

Two locks, each for one Python and one platform (a lock pins wheels, and wheels are per platform):
- requirements/py311.txt: CI, development and `pip install`; Python 3.11, Linux x86_64, torch's CPU build
  (2.13.0+cpu, from https://download.pytorch.org/whl/cpu or a local file).
- requirements/gpu-py312.txt: the `gpu` extra (vLLM) with training; Python 3.12, Linux x86_64, CUDA torch.

Each lock's header carries a digest of the pyproject.toml fields it was compiled from, so `check` fails
when a dependency changed and the lock was not refreshed. Standard library only: `check` runs before
anything is installed.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UV = "uv==0.13.10"  # the resolver; pinned so a refresh is repeatable
PLATFORM = "x86_64-manylinux_2_28"
DIGEST_LINE = "# pyproject digest: "
# never pinned by a lock: the installer itself, and weblica (installed editable from the tree)
UNLOCKED = {"pip", "weblica"}


@dataclass(frozen=True)
class Lock:
    path: str
    python: str
    extras: tuple[str, ...]
    constraints: tuple[str, ...] = ()  # pins the lock must hold whatever the resolver prefers
    find_links: tuple[str, ...] = ()


LOCKS = (
    # torch: the CPU build (pip takes it from find-links; a plain torch is a multi-GB CUDA build)
    Lock("requirements/py311.txt", "3.11", ("llm", "train", "gym", "ray", "postgres", "dev"),
         constraints=("torch==2.13.0",), find_links=("/opt/wheels",)),
    Lock("requirements/gpu-py312.txt", "3.12", ("llm", "train", "gym", "ray", "postgres", "dev", "gpu")),
)
MAIN = LOCKS[0]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def digest(lock: Lock) -> str:
    """What the lock depends on in pyproject.toml: requires-python, the dependencies, the lock's extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project.get("optional-dependencies", {})
    unknown = [e for e in lock.extras if e not in optional]
    if unknown:
        raise SystemExit(f"{lock.path}: extras {unknown} are not in pyproject.toml's optional-dependencies")
    fields = {"requires-python": project.get("requires-python"), "dependencies": project.get("dependencies", []),
              "extras": {e: optional[e] for e in lock.extras}, "python": lock.python,
              "constraints": list(lock.constraints)}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def pins(path: Path) -> dict[str, str]:
    """name -> version of every `name==version` line."""
    out = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        if match:
            out[canonical(match[1])] = match[2]
    return out


def refresh(upgrade: bool = False) -> None:
    """Recompile both locks. Without `upgrade` the pins the locks hold are kept wherever pyproject.toml
    still allows them (uv reads its output file as preferences), so a new dependency changes only itself."""
    tool = ROOT / ".lock-venv"
    if not (tool / "bin" / "uv").exists():
        subprocess.run([sys.executable, "-m", "venv", str(tool)], check=True)
        subprocess.run([str(tool / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", UV], check=True)
    for lock in LOCKS:
        out = ROOT / lock.path
        out.parent.mkdir(exist_ok=True)
        constraints = ROOT / ".lock-venv" / "constraints.txt"
        constraints.write_text("".join(f"{c}\n" for c in lock.constraints))
        preferred = ROOT / ".lock-venv" / Path(lock.path).name
        preferred.write_text(out.read_text() if out.exists() and not upgrade else "")
        command = [str(tool / "bin" / "uv"), "pip", "compile", "pyproject.toml", "--quiet", "--no-header",
                   "--python-version", lock.python, "--python-platform", PLATFORM, "-c", str(constraints),
                   "-o", str(preferred)]
        command += [arg for extra in lock.extras for arg in ("--extra", extra)]
        command += [arg for link in lock.find_links for arg in ("--find-links", link)]
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
        body = "\n".join(line for line in preferred.read_text().splitlines() if not line.startswith("# pyproject digest")
                         and not line.startswith("# The tested package set") and not line.startswith("# Generated by"))
        body = body.replace(str(constraints), "lock constraints").lstrip("\n") + "\n"
        header = (f"# The tested package set: Python {lock.python}, Linux x86_64, extras {','.join(lock.extras)}.\n"
                  "# Generated by `python3 .ci/lock.py refresh` (uv pip compile); do not edit by hand.\n"
                  f"{DIGEST_LINE}{digest(lock)}\n")
        out.write_text(header + body)
        print(f"{lock.path}: {len(pins(out))} packages")


def check() -> list[str]:
    problems = []
    for lock in LOCKS:
        path = ROOT / lock.path
        if not path.exists():
            problems.append(f"{lock.path} is missing")
            continue
        recorded = next((line[len(DIGEST_LINE):].strip() for line in path.read_text().splitlines()
                         if line.startswith(DIGEST_LINE)), None)
        if recorded != digest(lock):
            problems.append(f"{lock.path} was compiled from other dependencies than pyproject.toml now names "
                            f"(digest {recorded}, now {digest(lock)})")
        for constraint in lock.constraints:
            name, version = constraint.split("==")
            pinned = pins(path).get(canonical(name), "")
            if pinned.split("+")[0] != version:
                problems.append(f"{lock.path} pins {name}=={pinned or '(nothing)'}, the lock asks {constraint}")
    return problems


def installed() -> list[str]:
    """Differences between this interpreter's distributions and the main lock."""
    want = pins(ROOT / MAIN.path)
    have = {canonical(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    problems = []
    for name in sorted(set(want) | set(have)):
        if name in UNLOCKED or want.get(name) == have.get(name):
            continue
        if name not in want:
            problems.append(f"{name}=={have[name]} is installed but not in the lock")
        elif name not in have:
            problems.append(f"{name}=={want[name]} is locked but not installed")
        else:
            problems.append(f"{name}: installed {have[name]}, locked {want[name]}")
    return problems


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "refresh":
        refresh(upgrade="--upgrade" in argv)
        return 0
    if command == "extras":  # what .ci/setup installs with the main lock
        print(",".join(MAIN.extras))
        return 0
    if command not in ("check", "installed"):
        print(__doc__, file=sys.stderr)
        return 2
    problems = check() if command == "check" else installed()
    for problem in problems:
        print(f"lock: {problem}", file=sys.stderr)
    if problems and command == "check":
        print("lock: run `python3 .ci/lock.py refresh`, review the diff, run the tests, and commit the locks",
              file=sys.stderr)
    elif problems:
        print("lock: this environment is not the tested set; rebuild it: rm -rf .venv && bash .ci/setup",
              file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
