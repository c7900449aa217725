"""A task file that is not there, under a synth site's folder: which `weblica synth` command writes it.

A synth site's id is `<skill>-<category>-<digest>`, the digest hashing skill, category, aesthetic and seed
(weblica.synth.spec.SiteSpec.site_id), and `weblica synth --n 1 --seed K` builds its one site from seed K.
So the command that makes a site can be found from the id alone by trying the aesthetics and small seeds:
a recipe naming a site that was never generated fails at once, naming the command that generates it.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

SEEDS_TRIED = 1000   # run seeds a recipe's site may have been made with


def synth_command_for(site_id: str) -> str | None:
    """`weblica synth --skill S --category C --style A --n 1 --seed K` for the site `site_id`, or None when
    no skill, category, aesthetic and seed below SEEDS_TRIED give that id."""
    from weblica.synth.spec import all_skills, categories, style_space

    for skill in all_skills():
        for category in categories():
            prefix = f"{skill}-{category}-"
            if not site_id.startswith(prefix):
                continue
            digest = site_id[len(prefix):]
            for aesthetic in sorted(style_space()["aesthetics"]):
                for seed in range(SEEDS_TRIED):
                    if hashlib.sha256(f"{skill}|{category}|{aesthetic}|{seed}".encode()).hexdigest()[:8] == digest:
                        return (f"weblica synth --skill {skill} --category {category} --style {aesthetic} "
                                f"--n 1 --seed {seed}")
    return None


def missing_tasks_message(path: str | Path, what: str = "task file") -> str:
    """The error for a `what` that is not there: for `.../<site id>/tasks.jsonl` of a synth site, the
    command that writes it (into ./sites; --out DIR elsewhere)."""
    path = Path(path)
    message = f"{what} {path} not found"
    command = synth_command_for(path.parent.name) if path.name == "tasks.jsonl" else None
    if command is None:
        return message
    out = "" if path.parent.parent == Path("sites") else f" --out {path.parent.parent}"
    return f"{message}: site {path.parent.name} was not generated yet; make it with `{command}{out}`"
