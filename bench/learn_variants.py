"""Per-episode page variants for bench/learn.py: the page must be seen, because where the menu is
changes from one episode to the next and only the screenshot says where.

Each site is written once per header variant of its page grammar (`EPISODE_HEADERS`), as instances of
the site (weblica/synth/instances.py: `<bundle>/instances/<k>/<site id>/`, served by the site server for
the episode's instance). The variants share the site's name, data, tasks and instructions (all built from
instance 0's data); only the header component differs, and with it where the department menu is. Measured
on one fitness site (compiled oracles, 1280x720): the hover on a department lands at y 31 with `bar`
(x 229-474), y 69 with `centered` (x 515-759) and y 98 with `utility` (x 70-315), so the variants put the
same department 150-450 px apart, more than one department's width (~120 px): a policy that does not look
can at best click the variant it guesses.

A task then has one member per variant; `pinned_tasks` writes each member as a task of its own
(`<task id>@<header>`, with `metadata.instance` naming its instance), so SFT's teacher plays every variant,
GRPO's groups are one (task, variant) each, and an evaluation scores every stage on the very same
(task, variant) pairs (a paired comparison, no draw of instances by episode seed).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

# the header variants an episode draws from: the three that move the menu furthest apart (`mega` puts it
# 56 px from `centered`, `drawer` 76 px from `bar`)
EPISODE_HEADERS = ("bar", "centered", "utility")
VARIANT_SKELETON = "plain"  # the skeleton moves the menu sideways too: the same on every variant
ID_SEPARATOR = "@"


def variant_site(spec: Any, header: str) -> Any:
    """The site of `spec` (instance 0's data) with its page grammar's header set to `header`."""
    from weblica.synth.generate import build_site
    from weblica.synth.page_grammar import compose

    site = build_site(spec)
    compose(site)  # draws the grammar and adds the pages its components link to; then the header is swapped
    site.layout = dataclasses.replace(site.layout, header=header, skeleton=VARIANT_SKELETON)
    return site


def write_variants(spec: Any, out: Path, headers: Sequence[str]) -> list[Path]:
    """The unvalidated bundles of one site, `<out>/<site id>/` for `headers[0]` and its instance k for
    `headers[k]`; every path to validate, the ordinary bundle first."""
    from weblica.synth.components import VARIANTS
    from weblica.synth.generate import emitted_drafts
    from weblica.synth.instances import instance_root
    from weblica.synth.site import draft_to_task, write_bundle

    unknown = [h for h in headers if h not in VARIANTS["header"]]
    if unknown or len(set(headers)) != len(headers) or not headers:
        raise ValueError(f"episode headers must be distinct page-grammar headers ({', '.join(VARIANTS['header'])}); "
                         f"not {','.join(headers)}")
    paths: list[Path] = []
    for k, header in enumerate(headers):  # instance 0 first: writing it clears the bundle, instances included
        site = variant_site(spec, header)
        tasks = [draft_to_task(site, i + 1, d) for i, d in enumerate(emitted_drafts(site))]
        for task in tasks:
            task.metadata["episode_header"] = header
            if k:
                task.metadata["instance"] = k
        path = write_bundle(site, out if k == 0 else instance_root(out / spec.site_id, k), tasks)
        if k:
            meta = json.loads((path / "site.json").read_text(encoding="utf-8"))
            meta["instance"] = k
            (path / "site.json").write_text(json.dumps(meta, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
        paths.append(path)
    return paths


def pinned_tasks(bundle: Path, headers: Sequence[str]) -> list[Any]:
    """Every validated task of the bundle once per variant, each pinned to its instance; a task is kept
    only when it validated on every variant with the same instruction and checks (so each task is asked
    on all variants alike, and a policy that ignores the page cannot gain by a variant missing)."""
    from weblica.env.task import load_tasks
    from weblica.synth.instances import instance_root

    per_variant = []
    for k in range(len(headers)):
        root = bundle if k == 0 else next(iter(sorted(instance_root(bundle, k).glob("*/tasks.jsonl"))), None)
        path = bundle / "tasks.jsonl" if k == 0 else root
        per_variant.append({t.id: t for t in load_tasks(path)} if path is not None and path.exists() else {})
    out = []
    for task_id, first in per_variant[0].items():
        members = [variant.get(task_id) for variant in per_variant]
        if any(m is None or m.instruction != first.instruction or
               [c.to_dict() for c in m.checks] != [c.to_dict() for c in first.checks] for m in members):
            continue
        for k, (member, header) in enumerate(zip(members, headers)):
            member = dataclasses.replace(member, id=f"{task_id}{ID_SEPARATOR}{header}",
                                         metadata={**member.metadata, "instance": k, "episode_header": header})
            member.source.bundle = str(bundle)  # the server finds the instances under the ordinary bundle
            out.append(member)
    return out


def variant_of(task_id: str) -> str | None:
    """The header variant a pinned task id names (None: a task of the one-layout design)."""
    return task_id.rsplit(ID_SEPARATOR, 1)[1] if ID_SEPARATOR in task_id else None
