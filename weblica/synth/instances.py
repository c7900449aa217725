"""Fresh instances per episode seed (MiniWoB-style, opt-in: `weblica synth --instances K`).

Design: instances are built and validated ahead of time, never lazily at reset, so nothing unvalidated
is served and every gold comes from a compiled, checked oracle.
- Instance 0 is the site's ordinary bundle `<out>/<site id>/`. Instance k = 1..K-1 is the same spec
  built with its data drawn afresh (`build_site(spec, k)`: same name, look and host; other entities,
  prices, slots...), written as its own bundle under `<out>/<site id>/instances/<k>/<site id>/`
  with `"instance": k` in its site.json and on its tasks; each is validated like any bundle.
- A task of the ordinary bundle is a *family*: `metadata.instances` lists, for each instance where the
  task of the same intent validated, that instance's task (instruction, start URL, checks, oracle).
  Tasks of one family are matched by (intent, the kinds and paths of their checks, their ordinal among
  such tasks), never by position alone, since a skill may skip an ambiguous draft on some data.
- `episode_task(task, seed)` (weblica.env.task) picks the family member `seed % len(members)`; the
  rollout and the env resolve a task with it before anything reads it, so the instruction, the gold
  and the oracle follow the data. The backend names the instance in a header, and the site server
  serves that instance's pages and keeps its state apart (weblica/serve/app.py).
"""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

from weblica.env.task import MEMBER_FIELDS, Task, load_tasks, save_tasks
from weblica.synth.generate import SynthResult, build_site, keep_valid, write_unvalidated
from weblica.synth.site import draft_to_task, write_bundle
from weblica.synth.spec import SiteSpec

INSTANCES_DIR = "instances"


def instance_root(bundle: Path, instance: int) -> Path:
    return bundle / INSTANCES_DIR / str(instance)


def write_instance(spec: SiteSpec, bundle: Path, instance: int) -> Path:
    """Instance `instance` (> 0) of the site whose bundle is `bundle`, unvalidated."""
    site = build_site(spec, instance)
    tasks = [draft_to_task(site, i + 1, d) for i, d in enumerate(site.tasks)]
    for task in tasks:
        task.metadata["instance"] = instance
    path = write_bundle(site, instance_root(bundle, instance), tasks)
    meta = json.loads((path / "site.json").read_text(encoding="utf-8"))
    meta["instance"] = instance
    (path / "site.json").write_text(json.dumps(meta, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    return path


def family_keys(tasks: list[Task]) -> list[tuple[Any, ...]]:
    """What makes tasks of two instances the same task: intent, check kinds and paths, and the ordinal."""
    seen: Counter[tuple[Any, ...]] = Counter()
    keys = []
    for task in tasks:
        shape = (task.metadata.get("intent", ""), task.skill,
                 tuple((c.type, getattr(c, "path", None) or "") for c in task.checks))
        keys.append((*shape, seen[shape]))
        seen[shape] += 1
    return keys


def attach_instances(bundle: Path, count: int) -> int:
    """Write each family's validated members into the ordinary bundle's tasks; returns how many tasks
    have more than one member."""
    base = load_tasks(bundle / "tasks.jsonl")
    members: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for k in range(1, count):
        found = sorted(instance_root(bundle, k).glob("*/tasks.jsonl"))
        tasks = load_tasks(found[0]) if found else []
        for key, task in zip(family_keys(tasks), tasks):
            data = task.to_dict()
            members.setdefault(key, []).append({"instance": k, **{f: data[f] for f in MEMBER_FIELDS if f in data}})
    with_more = 0
    for key, task in zip(family_keys(base), base):
        task.metadata.pop("instances", None)
        others = members.get(key, [])
        if others:
            task.metadata["instances"] = [{"instance": 0}, *others]
            with_more += 1
    save_tasks(base, bundle / "tasks.jsonl")
    return with_more


def synthesize_instances(specs: list[SiteSpec], out: Path, count: int, concurrency: int = 4,
                         progress: bool = False, episode_seeds: int | None = None) -> list[SynthResult]:
    """Each site's ordinary bundle and its `count - 1` further instances, all validated in one browser;
    the ordinary bundles' tasks then carry their families (see the module's notes)."""
    if count < 1:
        raise ValueError("--instances must be at least 1")
    out.mkdir(parents=True, exist_ok=True)
    bundles = [write_unvalidated(spec, out) for spec in specs]
    extra = [write_instance(spec, bundle, k) for spec, bundle in zip(specs, bundles) for k in range(1, count)]
    results = asyncio.run(keep_valid(bundles + extra, concurrency, progress=progress, episode_seeds=episode_seeds))
    for bundle in bundles:
        attach_instances(bundle, count)
    return results[:len(bundles)]
