"""Real design systems as synth's component layer (issue 38, point 1): the pinned npm packages that
`.ci/setup` installs, served by the site server from where they are installed (never from the bundle),
stylesheets rewritten so a page never leaves the site server, a clear error naming the setup step when a
package is missing, the system and version recorded in site.json, and pages that carry each system's
documented class names (every class a kit names exists in that system's own stylesheet)."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from weblica.serve.app import ServeConfig, create_app
from weblica.site_runtime.design_systems import (PACKAGES, SYSTEMS, DesignSystemMissing, design_asset,
                                                 install_root, installed, package_dir, require)
from weblica.synth.design import KITS, OWN, context, weights_for
from weblica.synth.design.markup import BARE, apply
from weblica.synth.generate import build_site, write_unvalidated
from weblica.synth.site import render_pages
from weblica.synth.spec import CatalogError, categories, sample_spec

pytestmark = pytest.mark.skipif(not all(installed(p) for p in PACKAGES.values()),
                                reason="design systems not installed: run .ci/setup")
CLASS = re.compile(r'\bclass="([^"]*)"')


def test_at_least_eight_real_systems_are_pinned_and_installed():
    assert len(SYSTEMS) >= 8 and OWN not in SYSTEMS
    for package in PACKAGES.values():
        assert re.fullmatch(r"\d+\.\d+\.\d+", package.version), package  # exact pins, never a range
        meta = json.loads((package_dir(package) / "package.json").read_text())
        assert (meta["name"], meta["version"]) == (package.name, package.version)
    for system in SYSTEMS.values():  # every file a page loads is in the package
        for sheet in system.stylesheets():
            assert design_asset(sheet.lstrip("/")), sheet


def test_every_class_a_kit_names_is_in_its_systems_stylesheet():
    """The markup follows each system's documented class names: a class no stylesheet of the system
    defines would be a guess (utility classes of Bootstrap and Tabler included)."""
    for kit in KITS.values():
        if kit.id == OWN:
            continue
        css = "".join(design_asset(s.lstrip("/")).decode("utf-8", "replace") for s in context(kit.id).stylesheets)
        named = {c for value in list(kit.classes.values()) + list(BARE.get(kit.id, {}).values()) for c in value.split()}
        # a stylesheet escapes ":" and "@" in a class name (USWDS's tablet:grid-col-8, UIkit's uk-width-1-3@m)
        escaped = {c: re.escape(c.replace(":", "\\:").replace("@", "\\@")) for c in named}
        missing = sorted(c for c in named if not re.search(r"\." + escaped[c] + r"(?![\w-])", css))
        # a hook the system documents without styling it (govuk-table__row) is in its own component templates
        templates = _templates(kit.id) if missing else ""
        missing = [c for c in missing if not re.search(r'class="[^"]*\b' + re.escape(c) + r'(?![\w-])', templates)]
        assert not missing, (kit.id, missing)


def _templates(system: str) -> str:
    root = package_dir(SYSTEMS[system].package)
    return "".join(p.read_text(errors="replace") for p in sorted(root.rglob("*")) if p.suffix in (".njk", ".html", ".twig"))


def test_stylesheets_never_reach_past_the_site_server():
    for system in SYSTEMS.values():
        for theme in ["", *list(system.themes)[:4]]:
            for sheet in system.stylesheets(theme):
                css = design_asset(sheet.lstrip("/")).decode("utf-8", "replace")
                assert not re.search(r"url\(\s*['\"]?(https?:)?//", css), sheet
                assert not re.search(r"@import\s+url\(\s*['\"]?(https?:)?//", css), sheet
                assert "url(/assets/" not in css and "url('/assets/" not in css, sheet  # into the package instead
    govuk = design_asset(SYSTEMS["govuk"].stylesheets()[0].lstrip("/")).decode()
    font = re.search(r"url\((/_ds/govuk-frontend@[^)]+\.woff2)\)", govuk).group(1)
    assert design_asset(font.lstrip("/"))[:4] == b"wOF2"


def test_only_listed_packages_and_only_their_files_are_served(tmp_path):
    assert design_asset("_ds/left-pad@1.3.0/index.js") is None
    assert design_asset("_ds/bootstrap@5.3.8/../../etc/passwd") is None
    assert design_asset("_ds/bootstrap@4.0.0/dist/css/bootstrap.min.css") is None  # not the pinned version
    assert design_asset("assets/site.js") is None


def test_a_missing_package_names_the_setup_step(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBLICA_DESIGN_SYSTEMS", str(tmp_path / "empty"))
    assert install_root() == tmp_path / "empty"
    with pytest.raises(DesignSystemMissing, match=r"govuk-frontend@6\.6\.0 is not installed .*\.ci/setup"):
        require(["govuk"])
    with pytest.raises(DesignSystemMissing, match=".ci/setup"):
        design_asset("_ds/bootstrap@5.3.8/dist/css/bootstrap.min.css")
    with pytest.raises(DesignSystemMissing, match="unknown design system 'tailwind'"):
        require(["tailwind"])
    # the site server refuses to serve a bundle whose system it cannot serve, naming the step
    bundle = write_unvalidated(sample_spec(1, "forms", "government", design="govuk"), tmp_path / "out")
    with pytest.raises(DesignSystemMissing, match=".ci/setup"):
        create_app(ServeConfig(sites=[bundle]))


def test_the_server_serves_the_assets_a_bundle_names_and_the_bundle_holds_none(tmp_path):
    spec = sample_spec(2, "forms", "government", design="govuk")
    bundle = write_unvalidated(spec, tmp_path)
    meta = json.loads((bundle / "site.json").read_text())
    assert meta["design"] == {"system": "govuk", "title": "GOV.UK Frontend", "package": "govuk-frontend",
                              "version": "6.6.0"}
    assert not any("_ds" in str(p) for p in bundle.rglob("*"))
    home = (bundle / "public" / "index.html").read_text()
    sheets = re.findall(r'<link rel="stylesheet" href="(/_ds/[^"]+)"', home)
    assert sheets == SYSTEMS["govuk"].stylesheets()
    client = create_app(ServeConfig(sites=[bundle])).test_client()
    for sheet in sheets:
        response = client.get(sheet, headers={"Host": spec.host})
        assert response.status_code == 200 and response.mimetype == "text/css"
    assert client.get("/_ds/left-pad@1.3.0/index.js", headers={"Host": spec.host}).status_code == 404


def test_a_sampled_site_records_its_system_and_most_sites_use_a_real_one():
    drawn = Counter()
    for seed in range(30):
        for category in sorted(categories()):
            drawn[sample_spec(seed, category=category).style.design] += 1
    assert drawn[OWN] / sum(drawn.values()) < 0.25  # weblica's own style is one option, not the default
    assert len([s for s in drawn if s != OWN]) >= 8
    assert set(weights_for("government")) >= {"govuk", "uswds"}
    with pytest.raises(CatalogError, match="unknown design system 'tailwind'"):
        sample_spec(1, design="tailwind")


@pytest.mark.parametrize("system", sorted(set(KITS) - {OWN}))
def test_every_system_renders_the_plan_hooks_and_its_own_classes(system):
    site = build_site(sample_spec(4, "forms", "healthcare" if system == "nhsuk" else "government", design=system))
    site.add_feature("search")
    pages = render_pages(site, ["/", "/contact"])
    for path, html in pages.items():
        ids = re.findall(r'\bid="([^"]+)"', html)
        assert len(ids) == len(set(ids)), (system, path)
        assert "search-input" in ids and 'class="site-header' in html, (system, path)
        classes = {c for value in CLASS.findall(html) for c in value.split()}
        kit = KITS[system].classes
        assert set(kit.get("btn", "").split()) <= classes, (system, path)
    form = pages["/contact"]
    classes = {c for value in CLASS.findall(form) for c in value.split()}
    for role in ("input", "label", "textarea"):
        if KITS[system].classes.get(role):
            assert set(KITS[system].classes[role].split()) <= classes, (system, role)


def test_weblica_own_pages_are_untouched_by_the_class_pass():
    html = '<p>x</p><button type="submit" class="button primary">Go</button><table><tr><th>A</th></tr></table>'
    assert apply(html, OWN) == html
    govuk = apply(html, "govuk")
    assert '<p class="govuk-body">' in govuk and 'class="button primary govuk-button"' in govuk
    assert '<th class="govuk-table__header">' in govuk
    assert apply('<label class="choice" for="x">', "bootstrap") == '<label class="choice" for="x">'  # a kit's own


def test_one_seed_one_bundle_with_a_design_system(tmp_path):
    spec = sample_spec(5, "search", "news", design="bootstrap")
    a, b = write_unvalidated(spec, tmp_path / "a"), write_unvalidated(sample_spec(5, "search", "news", design="bootstrap"),
                                                                      tmp_path / "b")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def test_the_cli_pins_a_system_and_refuses_an_unknown_one_in_one_line(tmp_path):
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "weblica.cli", "synth", "--skill", "forms", "--category", "government",
           "--no-validate", "--out", str(tmp_path), "--json"]
    bad = subprocess.run(cmd + ["--design", "tailwind"], capture_output=True, text=True)
    assert bad.returncode != 0 and json.loads(bad.stdout) == {
        "error": "unknown design system 'tailwind'; choose one of: " + ", ".join(sorted(KITS))}
    good = subprocess.run(cmd + ["--design", "uswds"], capture_output=True, text=True)
    site = json.loads(good.stdout)["sites"][0]["path"]
    assert json.loads((Path(site) / "site.json").read_text())["design"]["system"] == "uswds"


def test_the_runtime_serves_design_files_under_the_prefix_the_registry_uses():
    from weblica.site_runtime import DESIGN_PREFIX, runtime_asset, runtime_digest
    from weblica.site_runtime.design_systems import URL_PREFIX

    assert DESIGN_PREFIX == URL_PREFIX
    sheet = SYSTEMS["bulma"].stylesheets()[0].lstrip("/")
    assert runtime_asset(sheet) == design_asset(sheet)
    before = runtime_digest()
    assert runtime_digest() == before and not any(p.startswith(URL_PREFIX) for p in __import__(
        "weblica.site_runtime", fromlist=["runtime_paths"]).runtime_paths())
