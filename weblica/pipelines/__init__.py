"""Pipelines: the multi-step jobs the command line runs, below it and free of click.

| module | job |
|---|---|
| `rollouts` | play a task file with a policy (local env pool); `weblica run`, training's teacher runs |
| `rollouts_ray` | the same on Ray actors (`weblica run --ray`) |
| `cache_build` | live tasks -> cache tasks: record, infer, verify, keep (`weblica cache build`), local workers |
| `cache_build_ray` | the same on Ray actors (`weblica cache build --ray`) |
| `synth_ray` | `weblica synth --ray`: one site a job on Ray actors, into a shared folder; resumable |
| `ray_actors` | what the Ray pipelines share: starting Ray, handing jobs to free actors |

Validation's keep-valid step (play each synth task's oracle and adversaries, keep the tasks that pass)
stays in `weblica.synth.validate` for now, beside the synth code it drives.

A command parses its options and calls one function here; everything a pipeline needs comes in as
arguments (no click context, no global state), so tests and notebooks call the same functions.
"""
