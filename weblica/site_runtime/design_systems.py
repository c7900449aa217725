"""The real design systems synth sites are built with: which npm package at which pinned version, which of
its files a page loads, and serving those files from where `.ci/setup` installed them.

The packages are dependencies, never copied into the repository: `python -m weblica.site_runtime.design_systems
install` (run by `.ci/setup`) unpacks each pinned npm tarball into `.design-systems/<package>@<version>/`
(or the folder `WEBLICA_DESIGN_SYSTEMS` names). The site server serves `/_ds/<package>@<version>/<path>` from
there: only the packages listed here, only files inside them. A stylesheet is served rewritten so that a
page never reaches past the site server: its root-relative asset URLs (GOV.UK Frontend's `/assets/fonts/...`)
point into its package, and web fonts fetched from another host (Bootswatch's Google Fonts, NHS.UK's
Frutiger) are dropped, the system's own fallback stack taking their place.

Like the rest of weblica/site_runtime, this module imports no synth module: the server reads it alone.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

URL_PREFIX = "_ds/"  # pages load a system's files from /_ds/<package>@<version>/<path>
ENV_ROOT = "WEBLICA_DESIGN_SYSTEMS"
SETUP_STEP = "run `.ci/setup` (or `python -m weblica.site_runtime.design_systems install`)"


@dataclass(frozen=True)
class Package:
    """One pinned npm package."""

    name: str
    version: str

    @property
    def key(self) -> str:
        """"<name>@<version>": its folder under the install root and its URL segment."""
        return f"{self.name}@{self.version}"

    def url(self, path: str) -> str:
        return f"/{URL_PREFIX}{self.key}/{path}"


@dataclass(frozen=True)
class DesignSystem:
    """A design system as pages load it: `css` and `js` are (package, path inside it) pairs, `assets` the
    folder a stylesheet's root-relative "/assets/" URLs mean (GOV.UK and NHS.UK compile theirs so),
    `themes` the stylesheets a site may load instead of the base one (Bootswatch's, by theme name)."""

    id: str
    title: str
    package: Package
    css: tuple[tuple[Package, str], ...]
    js: tuple[tuple[Package, str], ...] = ()
    assets: str = ""
    themes: dict[str, tuple[Package, str]] = field(default_factory=dict)

    def stylesheets(self, theme: str = "") -> list[str]:
        """The stylesheet URLs a page of this system loads, in order (a theme replaces the first)."""
        sheets = list(self.css)
        if theme:
            sheets[0] = self.themes[theme]
        return [package.url(path) for package, path in sheets]

    def scripts(self) -> list[str]:
        return [package.url(path) for package, path in self.js]

    def packages(self) -> list[Package]:
        return sorted({p for p, _ in (*self.css, *self.js, *self.themes.values())}, key=lambda p: p.key)


GOVUK = Package("govuk-frontend", "6.6.0")
NHSUK = Package("nhsuk-frontend", "10.6.1")
USWDS = Package("@uswds/uswds", "3.14.0")
BOOTSTRAP = Package("bootstrap", "5.3.8")
BOOTSWATCH = Package("bootswatch", "5.3.8")
BOOTSTRAP_ICONS = Package("bootstrap-icons", "1.13.2")
BULMA = Package("bulma", "1.0.4")
TABLER = Package("@tabler/core", "1.6.1")
PICO = Package("@picocss/pico", "2.1.1")
UIKIT = Package("uikit", "3.25.25")
FOUNDATION = Package("foundation-sites", "6.9.0")
PRIMER = Package("@primer/css", "21.5.1")  # 22 dropped Box, Label, flash: the classes Primer sites are built of

# Bootswatch themes whose look differs most from stock Bootstrap and from each other
BOOTSWATCH_THEMES = ("cerulean", "cosmo", "flatly", "journal", "litera", "lumen", "minty", "sandstone", "simplex",
                     "spacelab", "united", "yeti", "zephyr", "darkly", "lux", "materia", "pulse", "superhero")

SYSTEMS: dict[str, DesignSystem] = {s.id: s for s in (
    DesignSystem("govuk", "GOV.UK Frontend", GOVUK, ((GOVUK, "dist/govuk/govuk-frontend.min.css"),),
                 assets="dist/govuk/assets"),
    DesignSystem("nhsuk", "NHS.UK frontend", NHSUK, ((NHSUK, "dist/nhsuk/nhsuk-frontend.min.css"),),
                 assets="dist/nhsuk/assets"),
    DesignSystem("uswds", "U.S. Web Design System", USWDS, ((USWDS, "dist/css/uswds.min.css"),)),
    DesignSystem("bootstrap", "Bootstrap", BOOTSTRAP,
                 ((BOOTSTRAP, "dist/css/bootstrap.min.css"), (BOOTSTRAP_ICONS, "font/bootstrap-icons.min.css")),
                 themes={t: (BOOTSWATCH, f"dist/{t}/bootstrap.min.css") for t in BOOTSWATCH_THEMES}),
    DesignSystem("bulma", "Bulma", BULMA, ((BULMA, "css/bulma.min.css"),)),
    DesignSystem("tabler", "Tabler", TABLER, ((TABLER, "dist/css/tabler.min.css"),
                                              (BOOTSTRAP_ICONS, "font/bootstrap-icons.min.css"))),
    DesignSystem("pico", "Pico CSS", PICO, ((PICO, "css/pico.min.css"),)),
    DesignSystem("uikit", "UIkit", UIKIT, ((UIKIT, "dist/css/uikit.min.css"),)),
    DesignSystem("foundation", "Foundation", FOUNDATION, ((FOUNDATION, "dist/css/foundation.min.css"),)),
    DesignSystem("primer", "Primer CSS", PRIMER, ((PRIMER, "dist/primer.css"),)),
)}
PACKAGES: dict[str, Package] = {p.key: p for s in SYSTEMS.values() for p in s.packages()}


class DesignSystemMissing(LookupError):
    """A design system's package is not installed where the server looks."""


def _checkout() -> Path | None:
    """The repository root when weblica runs from a checkout (not from an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "weblica").is_dir() else None


def user_root() -> Path:
    """The machine's copy, which an installed weblica (a wheel, another checkout) finds too."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "weblica" / "design-systems"


def install_root() -> Path:
    """Where the packages are: $WEBLICA_DESIGN_SYSTEMS; else a checkout's `.design-systems/`; else the
    machine's copy (`~/.cache/weblica/design-systems`, which `install` points at the checkout's)."""
    env = os.environ.get(ENV_ROOT)
    if env:
        return Path(env)
    checkout = _checkout()
    return checkout / ".design-systems" if checkout is not None else user_root()


def package_dir(package: Package, root: Path | None = None) -> Path:
    return (root or install_root()) / package.key


def installed(package: Package, root: Path | None = None) -> bool:
    """Whether the package is unpacked at its pinned version."""
    manifest = package_dir(package, root) / "package.json"
    try:
        meta = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("name") == package.name and meta.get("version") == package.version


def missing_message(package: Package, root: Path | None = None) -> str:
    return (f"design system package {package.key} is not installed in {root or install_root()}: {SETUP_STEP}")


def require(system_ids: list[str], root: Path | None = None) -> None:
    """Raise DesignSystemMissing naming the setup step when a package of one of the systems is missing;
    an unknown system id is refused naming the known ones."""
    for system_id in system_ids:
        if system_id not in SYSTEMS:
            raise DesignSystemMissing(f"unknown design system '{system_id}'; known: {', '.join(sorted(SYSTEMS))}")
        for package in SYSTEMS[system_id].packages():
            if not installed(package, root):
                raise DesignSystemMissing(missing_message(package, root))


# ---- serving -----------------------------------------------------------------------------------------
_EXTERNAL_IMPORT = re.compile(r"@import\s+url\(\s*['\"]?(?:https?:)?//[^)]*\)[^;]*;")
_EXTERNAL_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*url\(\s*['\"]?(?:https?:)?//[^}]*\}")
_ROOT_ASSETS = re.compile(r"url\(\s*(['\"]?)/assets/")


def _rewrite_css(text: str, package: Package, assets: str) -> str:
    text = _EXTERNAL_IMPORT.sub("", text)
    text = _EXTERNAL_FONT_FACE.sub("", text)
    if assets:
        text = _ROOT_ASSETS.sub(lambda m: f"url({m.group(1)}{package.url(assets)}/", text)
    return text


def _assets_dir_of(package: Package) -> str:
    return next((s.assets for s in SYSTEMS.values() if s.package == package and s.assets), "")


@lru_cache(maxsize=256)
def _read(key: str, path: str, root: str) -> bytes | None:
    package = PACKAGES[key]
    base = (Path(root) / key).resolve()
    target = (base / path).resolve()
    if base not in target.parents or not target.is_file():
        return None
    body = target.read_bytes()
    if target.suffix == ".css":
        body = _rewrite_css(body.decode("utf-8"), package, _assets_dir_of(package)).encode("utf-8")
    return body


def design_asset(rel: str, root: Path | None = None) -> bytes | None:
    """The file served at /<rel> when `rel` is "_ds/<package>@<version>/<path>" of a listed package; None
    for any other path. A listed package that is not installed raises DesignSystemMissing."""
    if not rel.startswith(URL_PREFIX):
        return None
    rest = rel[len(URL_PREFIX):]
    for key, package in PACKAGES.items():
        if rest.startswith(key + "/"):
            if not installed(package, root):
                raise DesignSystemMissing(missing_message(package, root))
            path = rest[len(key) + 1:]
            if not path or ".." in path.split("/"):
                return None
            return _read(key, path, str(root or install_root()))
    return None


# ---- installing --------------------------------------------------------------------------------------
def _share(root: Path) -> None:
    """Point the machine's copy at `root` (unless it is a folder of its own), so an installed weblica
    finds the packages a checkout's setup unpacked."""
    link = user_root()
    if link.is_symlink() and link.resolve() == root.resolve():
        return
    if link.exists() and not link.is_symlink():
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink():  # dangling, or another checkout's
        link.unlink()
    link.symlink_to(root.resolve(), target_is_directory=True)


def install(root: Path | None = None, quiet: bool = False) -> list[str]:
    """Unpack every pinned package that is not yet installed (`npm pack` fetches its tarball, checked
    against the registry's integrity); returns the keys it installed. Idempotent: installed ones are skipped.
    A checkout's install is shared with the machine (`user_root`)."""
    shared = root is None and os.environ.get(ENV_ROOT) is None and _checkout() is not None
    root = root or install_root()
    if shared:
        root.mkdir(parents=True, exist_ok=True)
        _share(root)
    todo = [p for p in sorted(PACKAGES.values(), key=lambda p: p.key) if not installed(p, root)]
    if not todo:
        return []
    if shutil.which("npm") is None:
        raise DesignSystemMissing("npm not found: install Node.js and npm (`apt-get install -y nodejs npm`), then "
                                  + SETUP_STEP)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        cmd = ["npm", "pack", "--silent", "--json", "--pack-destination", tmp, *[p.key for p in todo]]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise DesignSystemMissing(f"`{' '.join(cmd[:3])} ...` failed: {done.stderr.strip()[-400:]}")
        tarballs = {entry["name"] + "@" + entry["version"]: Path(tmp) / entry["filename"] for entry in json.loads(done.stdout)}
        for package in todo:
            staging = Path(tmp) / ("unpack-" + package.key.replace("/", "+"))
            with tarfile.open(tarballs[package.key]) as archive:
                archive.extractall(staging, filter="data")
            target = package_dir(package, root)
            if target.exists():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            (staging / "package").rename(target)
            if not quiet:
                print(f"installed {package.key}", file=sys.stderr)
    _read.cache_clear()
    return [p.key for p in todo]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["install"]:
        try:
            install()
        except DesignSystemMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    if args[:1] == ["check"]:
        try:
            require(sorted(SYSTEMS))
        except DesignSystemMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"{len(PACKAGES)} design system packages installed in {install_root()}")
        return 0
    print("usage: python -m weblica.site_runtime.design_systems install|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
