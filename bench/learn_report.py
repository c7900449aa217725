"""The report of bench/learn.py: success per stage and split, paired comparisons with intervals, the
compute each stage trained on, held-out successes per section; all of it also in learn.json."""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from learn_data import section_of
from learn_variants import ID_SEPARATOR, variant_of

# (a, b): a - b is reported; each asks whether a stage beats the stage (or control) it is set against
COMPARISONS = (("grpo", "sft"), ("grpo", "sft_more"), ("grpo", "filtered_bc"), ("sft", "blind_sft"),
               ("grpo", "blind_grpo"))
Stages = dict[int, dict[str, dict[str, Any]]]  # seed -> stage -> its record (with "eval": split -> result)


def task_ids(out: Path, split: str) -> list[str]:
    path = out / f"{split}.jsonl"
    return [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]


def comparisons(by_seed: Stages, splits: Sequence[str], out: Path, resamples: int) -> list[dict[str, Any]]:
    """Every comparison of COMPARISONS on every held-out split, over the seeds where both stages ran; on
the train split too when its tasks are asked on several page variants (a memorised click cannot fit
them all, so there it measures whether the page is seen)."""
    from weblica.eval.paired import compare, solved_table

    rows = []
    for split in splits:
        ids = task_ids(out, split)
        if not ids or (split == "train" and not any(variant_of(i) for i in ids)):
            continue
        for a, b in COMPARISONS:
            seeds = [s for s, stages in sorted(by_seed.items()) if a in stages and b in stages]
            if not seeds:
                continue
            table = {name: solved_table([by_seed[s][name]["eval"][split]["solved_ids"] for s in seeds], ids)
                     for name in (a, b)}
            result = compare(table[a], table[b], resamples=resamples)
            rows.append({"split": split, "a": a, "b": b, "seed_list": seeds, **result.to_dict()})
            if any(variant_of(i) for i in ids):  # the same, a task counted solved only on every variant
                tasks = list(variants_solved([], ids))
                table = {name: solved_table([solved_everywhere(by_seed[s][name]["eval"][split]["solved_ids"], ids)
                                             for s in seeds], tasks) for name in (a, b)}
                result = compare(table[a], table[b], resamples=resamples)
                rows.append({"split": split + EVERY_VARIANT, "a": a, "b": b, "seed_list": seeds, **result.to_dict()})
    return rows


EVERY_VARIANT = ":all-variants"  # the split name of a comparison over tasks solved on every variant


def solved_everywhere(solved_ids: Sequence[str], ids: Sequence[str]) -> list[str]:
    """The tasks of `ids` (variants stripped) solved on every one of their variants: a policy that does not
    see the page solves none (it solves a task on one variant at most), so a stage's lead here is looking."""
    per_task = Counter(i.rsplit(ID_SEPARATOR, 1)[0] for i in ids)
    return [t for t, n in variants_solved(solved_ids, ids).items() if n == per_task[t]]


def verdict(row: dict[str, Any]) -> str:
    """What the interval says: a ahead, b ahead, or no clear difference (it holds 0)."""
    if row["low"] > 0:
        return f"{row['a']} ahead"
    if row["high"] < 0:
        return f"{row['b']} ahead"
    return "no clear difference"


def _pct(value: float) -> str:
    return f"{value * 100:+.1f}"


def print_report(info: dict[str, Any], by_seed: Stages, splits: Sequence[str], args: argparse.Namespace,
                 skipped: dict[int, dict[str, str]] | None = None) -> None:
    out = args.out
    skipped = skipped or {}
    print(f"sites {info['sites']}; tasks per split {info['tasks']}")
    print(f"held-out sections (never asked in training): {', '.join(info['heldout_sections'])}; "
          f"held-out-site tasks whose instruction text a training task has: "
          f"{info['heldout_sites_instruction_seen_in_train']}/{info['tasks']['heldout_sites']}")
    names = [n for n in dict.fromkeys(n for stages in by_seed.values() for n in stages)]
    seeds = sorted(by_seed)
    print(f"\nsolved, summed over seeds {seeds} (per seed in brackets)")
    print(f"{'stage':12} " + " ".join(f"{s:>24}" for s in splits))
    for name in names:
        cells = []
        for split in splits:
            results = [by_seed[s][name]["eval"][split] for s in seeds if name in by_seed[s]]
            solved, tasks = sum(r["solved"] for r in results), sum(r["tasks"] for r in results)
            rate = f"{solved / tasks:4.0%}" if tasks else "  - "
            cells.append(f"{solved}/{tasks} {rate} [{','.join(str(r['solved']) for r in results)}]")
        print(f"{name:12} " + " ".join(f"{c:>24}" for c in cells))
    for seed, reasons in sorted(skipped.items()):
        for name, reason in reasons.items():
            print(f"{name:12} not run in seed {seed}: {reason}")
    rows = comparisons(by_seed, splits, out, args.resamples)
    print("\npaired differences in success (points), 95% bootstrap interval over seeds and tasks, "
          "sign test over discordant (seed, task) pairs; SPLIT:all-variants counts a task solved only when it is "
          "solved on every page variant (a policy that does not see the page solves none)")
    print(f"{'split':24} {'a - b':24} {'diff':>6} {'95% interval':>16} {'a>b':>4} {'b>a':>4} {'sign p':>7} "
          f"{'per seed':>20}  verdict")
    for r in rows:
        interval = f"[{_pct(r['low'])}, {_pct(r['high'])}]"
        per_seed = ",".join(_pct(d) for d in r["per_seed"])
        print(f"{r['split']:24} {r['a'] + ' - ' + r['b']:24} {_pct(r['difference']):>6} {interval:>16} "
              f"{r['wins']:>4} {r['losses']:>4} {r['sign_p']:>7.3f} {per_seed:>20}  {verdict(r)}")
    print("\ncompute trained on (mean over seeds): optimizer steps, trained samples (forward+backward), "
          "GRPO rollout episodes, wall times (stages trained in an earlier run: that run's)")
    for name in names:
        records = [by_seed[s][name] for s in seeds if name in by_seed[s]]
        mean = {k: sum(r["compute"].get(k, 0) for r in records) / len(records)
                for k in ("steps", "samples", "episodes")}
        train = sum(r["train_seconds"] for r in records) / len(records)
        evaluation = sum(r.get("eval_seconds", 0.0) for r in records) / len(records)
        print(f"  {name:12} steps {mean['steps']:>8.0f}  samples {mean['samples']:>8.0f}  "
              f"episodes {mean['episodes']:>6.0f}  training {train:>6.0f} s  evaluation {evaluation:>6.0f} s")
    print_by_section(out, by_seed, names, splits)
    print_by_variant(out, by_seed, names, splits)
    looks = print_first_actions(out, by_seed, names, splits)
    (out / "learn.json").write_text(json.dumps({"data": info, "seeds": {str(s): st for s, st in by_seed.items()},
                                                "skipped": {str(s): r for s, r in skipped.items()},
                                                "comparisons": rows, "first_action_varies": looks}, indent=1, sort_keys=True) + "\n")
    print(f"details: {out / 'learn.json'}")


def print_by_section(out: Path, by_seed: Stages, names: Sequence[str], splits: Sequence[str]) -> None:
    """Held-out successes per section asked for (tasks and successes summed over seeds): a gain from always clicking one
    section per department (a policy ignoring the instruction) shows here. * marks held-out sections."""
    from weblica.env.task import load_tasks

    target: dict[str, str] = {}
    held: set[str] = set()
    shown = [s for s in ("heldout_sites", "heldout_sections") if s in splits]  # those evaluated
    if not shown:
        return
    for split in shown:
        for task in load_tasks(out / f"{split}.jsonl"):
            target[task.id] = section_of(task) or "?"
            if split == "heldout_sections":
                held.add(target[task.id])
    print(f"\nheld-out sites, by section  {'tasks':>5} " + " ".join(f"{n:>11}" for n in names))
    for section in sorted(set(target.values())):
        ids = {i for i, s in target.items() if s == section}
        solved = []
        for name in names:
            got = 0
            for stages in by_seed.values():
                if name in stages:
                    for split in shown:
                        got += len(ids & set(stages[name]["eval"][split]["solved_ids"]))
            solved.append(got)
        mark = "*" if section in held else " "
        print(f"  {mark}{section:<25} {len(ids) * len(by_seed):>5} " + " ".join(f"{k:>11}" for k in solved))


def print_by_variant(out: Path, by_seed: Stages, names: Sequence[str], splits: Sequence[str]) -> None:
    """Successes per episode header variant (summed over seeds), split by split: a policy that does not see
    the page can at best fit the variant it guesses, and shows so here. Nothing with one layout per site."""
    variants = list(dict.fromkeys(v for split in splits for i in task_ids(out, split) if (v := variant_of(i))))
    if not variants:
        return
    print("\nsolved by episode header variant, solved/tasks summed over seeds; a policy that does not see the page "
          "solves a task on one variant at most")
    print(f"{'split':24} {'stage':12} " + " ".join(f"{v:>10}" for v in variants))
    for split in splits:
        ids = task_ids(out, split)
        count = {v: sum(variant_of(i) == v for i in ids) * len(by_seed) for v in variants}
        for name in names:
            runs = [stages[name]["eval"][split]["solved_ids"] for stages in by_seed.values() if name in stages]
            if not runs:
                continue
            got = {v: sum(variant_of(i) == v for solved in runs for i in solved) for v in variants}
            spread = Counter(n for solved in runs for n in variants_solved(solved, ids).values())
            print(f"{split:24} {name:12} " + " ".join(f"{f'{got[v]}/{count[v]}':>10}" for v in variants) +
                  "   (seed, task) cases solved on 0/1/2/3 variants: " +
                  "/".join(str(spread[k]) for k in range(len(variants) + 1)))


def variants_solved(solved_ids: Sequence[str], ids: Sequence[str]) -> dict[str, int]:
    """For every task of `ids` (its variants stripped), on how many of its variants it was solved: a
    policy that does not see the page cannot solve a task on more than one (the menu moves with each)."""
    solved = set(solved_ids)
    out: dict[str, int] = {}
    for i in ids:
        task = i.rsplit(ID_SEPARATOR, 1)[0]
        out[task] = out.get(task, 0) + (i in solved)
    return out


def first_actions(eval_dir: Path) -> dict[str, str]:
    """The first turn's actions of every episode a stage's evaluation played (task id -> the actions as
    canonical JSON; "" for an episode that took no step), from the episodes.jsonl files of its run
    directories (the first run's and those of splits added later)."""
    found: dict[str, str] = {}
    for path in sorted(eval_dir.rglob("episodes.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                episode = json.loads(line)
                steps = episode.get("steps") or []
                found[episode["task_id"]] = json.dumps(steps[0]["actions"], sort_keys=True) if steps else ""
    return found


def first_action_varies(actions: dict[str, str], ids: Sequence[str]) -> dict[str, bool]:
    """For every task of `ids` (its variants stripped) whose variants were all played, whether its first
    action differs between them: what a policy that does not look cannot do (the same input on every
    variant), so it measures looking apart from success."""
    by_task: dict[str, list[str | None]] = {}
    for i in ids:
        by_task.setdefault(i.rsplit(ID_SEPARATOR, 1)[0], []).append(actions.get(i))
    return {task: len(set(firsts)) > 1 for task, firsts in by_task.items() if None not in firsts}


def print_first_actions(out: Path, by_seed: Stages, names: Sequence[str],
                        splits: Sequence[str]) -> dict[str, dict[str, list[int]]]:
    """Per split and stage, the (seed, task) cases whose first action differs across the task's variants
    and the cases counted: {split: {stage: [varies, cases]}}; nothing with one layout per site."""
    shown: dict[str, dict[str, list[int]]] = {}
    for split in splits:
        ids = task_ids(out, split)
        if not any(variant_of(i) for i in ids):
            continue
        for name in names:
            varies = cases = 0
            for seed, stages in sorted(by_seed.items()):
                if name in stages:
                    flags = first_action_varies(first_actions(out / f"seed-{seed}" / "eval" / name), ids)
                    varies, cases = varies + sum(flags.values()), cases + len(flags)
            if cases:
                shown.setdefault(split, {})[name] = [varies, cases]
    if shown:
        print("\n(seed, task) cases whose first action differs across the variants (a policy that does not look "
              "cannot): " + "; ".join(f"{split} " + ", ".join(f"{n} {v}/{c}" for n, (v, c) in stages.items())
                                     for split, stages in shown.items()))
    return shown
