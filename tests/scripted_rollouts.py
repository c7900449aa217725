"""Forced responses for tests whose assertions need known episode outcomes (issue #43).

A test that trains or scores on sampled episodes must not depend on what the tiny model happens to sample:
which episodes succeed changes with the torch/transformers build and with every change to the prompt. Here
the real weights answer a fixed text instead: the response is forced token by token and carries the
log-probs those weights give it (what sampling that text would log), so the rows a trainer sees are real
model rows while rewards, and whether a group's rewards differ, are decided by construction.

- `forced(backend, messages, text)`: one forced `Generation` over an `HFBackend`.
- `install_grpo_scripts(setattr)`: makes `weblica.train.grpo` play every task's group as GROUP_SCRIPTS says,
  by repeat: repeat 0 scrolls, then answers (reward 1 on an any-answer task); repeat 1 answers "" at once
  (reward 0: the check wants a character); later repeats sample freely, so the real sampler, its seeds and
  its log-probs stay under test. Every group holds a 1 and a 0, so every group is informative and every
  update moves the weights. In-process tests pass `monkeypatch.setattr`; processes a test starts (the
  `weblica train --nproc 2` ranks) get the same through `SCRIPTED_SITE` (tests/scripted_site/sitecustomize.py).
- `ScriptedTokenBackend`: an `HFBackend` whose `_sample` (the token servers of tests/token_server.py) answers
  the next script of a cycle, for the slime and verl adapters' groups.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Callable, Sequence

SCROLL = '<think>Look further down.</think>\n<tool_call>{"name": "scroll", "arguments": {"direction": "down"}}</tool_call>'
DONE = '<think>Answer.</think>\n<tool_call>{{"name": "done", "arguments": {{"answer": "{}"}}}}</tool_call>'
ANSWER, NO_ANSWER = DONE.format("ok"), DONE.format("")
GROUP_SCRIPTS: tuple[list[str] | None, ...] = ([SCROLL, ANSWER], [NO_ANSWER], None)

TESTS = Path(__file__).resolve().parent
SCRIPTED_SITE = TESTS / "scripted_site"


def response_ids(tokenizer: Any, text: str) -> list[int]:
    """The ids a model emits for `text`, closed by the stop token as a sampled response is."""
    return tokenizer.encode(text, add_special_tokens=False) + [tokenizer.convert_tokens_to_ids("<|im_end|>")]


def forced_sample(backend: Any, prompt: Any, text: str) -> Any:
    """`text` as a generation of `backend` after the encoded `prompt` (synchronous, like `_sample`)."""
    from weblica.policy.backends.base import Generation

    ids = response_ids(backend.tokenizer, text)
    logprobs = backend.sequence_logprobs(prompt, ids)
    return Generation(getattr(backend, "assistant_prefix", "") + text, list(prompt.input_ids), ids, logprobs,
                      "stop", {"prompt_tokens": len(prompt.input_ids), "completion_tokens": len(ids)})


async def forced(backend: Any, messages: Sequence[Any], text: str) -> Any:
    prompt = backend.encode(messages)
    return await asyncio.to_thread(forced_sample, backend, prompt, text)


class _EpisodeBackend:
    """What one episode's policy generates with: its script's turns, or the real backend's samples."""

    def __init__(self, inner: Any, policy: Any) -> None:
        self.inner, self.policy = inner, policy

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def generate(self, messages: Sequence[Any], seed: int) -> Any:
        script = self.policy.script
        if script is None:
            return await self.inner.generate(messages, seed)
        turn = sum(m.role == "assistant" for m in messages)
        return await forced(self.inner, messages, script[turn])  # outliving the script fails loudly


def install_grpo_scripts(set_attribute: Callable[[Any, str, Any], None] = setattr,
                         scripts: Sequence[list[str] | None] = GROUP_SCRIPTS) -> None:
    """Patch the GRPO trainer's rollouts: episode `repeat` of each group plays scripts[repeat] (the last
    entry for later repeats; None samples freely). `set_attribute` is `monkeypatch.setattr` in a test."""
    import importlib

    rollout = importlib.import_module("weblica.rollout")
    grpo = importlib.import_module("weblica.train.grpo")  # also while that module is still being imported

    class ScriptedRecordingPolicy(grpo.RecordingPolicy):
        script: list[str] | None = None

        def __init__(self, backend: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(backend, *args, **kwargs)
            self.backend.backend = _EpisodeBackend(backend, self)  # under the recorder of the turns

    play = rollout.run_episode

    async def run_episode(env, task, policy, seed, screens=None, repeat=0):  # type: ignore[no-untyped-def]
        if isinstance(policy, ScriptedRecordingPolicy):
            policy.script = scripts[min(repeat, len(scripts) - 1)]
        return await play(env, task, policy, seed, screens, repeat)

    set_attribute(grpo, "RecordingPolicy", ScriptedRecordingPolicy)
    set_attribute(rollout, "run_episode", run_episode)


def scripted_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a `weblica train grpo` process (and the ranks it starts) that plays GROUP_SCRIPTS."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SCRIPTED_SITE), str(TESTS), env.get("PYTHONPATH", "")) if p)
    return env


class ScriptedTokenBackend:
    """Wraps an `HFBackend` for a token server: each episode's first request claims the next script of
    `scripts` (in turn, cycling), later turns continue the script their episode's first response began.
    The real weights give every forced token its log-prob."""

    def __init__(self, inner: Any, scripts: Sequence[list[str]]) -> None:
        import threading

        self.inner, self.scripts, self.claimed = inner, list(scripts), 0
        self._claiming = threading.Lock()  # the SGLang stand-in answers requests on several threads

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "sampling":  # the servers set the request's sampling options on the backend
            setattr(self.inner, name, value)
        else:
            super().__setattr__(name, value)

    def _script_of(self, input_ids: list[int]) -> tuple[list[str], int]:
        text = self.inner.tokenizer.decode(input_ids)
        turn = text.count("<|im_start|>assistant\n") - 1
        if turn == 0:
            with self._claiming:
                script = self.scripts[self.claimed % len(self.scripts)]
                self.claimed += 1
            return script, 0
        for script in self.scripts:
            if len(script) > turn and all(t in text for t in script[:turn]):
                return script, turn
        raise AssertionError(f"no script continues this conversation at turn {turn}")

    def _sample(self, prompt: Any, seed: int) -> Any:
        script, turn = self._script_of(list(prompt.input_ids))
        return forced_sample(self.inner, prompt, script[turn])
