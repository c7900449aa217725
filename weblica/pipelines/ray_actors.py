"""What the Ray pipelines share: starting Ray, and handing jobs to free actors one at a time."""
from __future__ import annotations

from typing import Any, Callable, Iterator


class RayUnavailable(RuntimeError):
    """Ray is not installed here."""


def init_ray(address: str, ray_init_kwargs: dict[str, Any] | None = None) -> Any:
    """The `ray` module, connected: `address` 'local' starts a local cluster, 'auto' or an address joins one.
    Without Ray installed: RayUnavailable, naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed: pip install 'weblica[ray]'") from None
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, **(ray_init_kwargs or {}))
    return ray


def dispatch(actors: list[Any], jobs: list[Any], submit: Callable[[Any, Any], Any],
             respawn: Callable[[], Any] | None = None) -> Iterator[tuple[int, Any, BaseException | None]]:
    """Hand `jobs` to free actors one at a time (`submit(actor, job)` returns the call's object ref), so a
    slow job never holds back the others; yields (job index, result, error) as each call finishes. An
    actor that died is replaced by `respawn()` when given (its job reports the error)."""
    import ray

    pending: dict[Any, tuple[int, Any]] = {}
    free = list(actors)
    next_job = 0
    while next_job < len(jobs) or pending:
        while free and next_job < len(jobs):
            actor = free.pop()
            pending[submit(actor, jobs[next_job])] = (next_job, actor)
            next_job += 1
        done, _ = ray.wait(list(pending), num_returns=1)
        index, actor = pending.pop(done[0])
        error: BaseException | None
        try:
            result, error = ray.get(done[0]), None
        except ray.exceptions.RayActorError as exc:   # the worker process died (a crash, out of memory)
            result, error = None, exc
            if respawn is not None:
                actor = respawn()
        except ray.exceptions.RayTaskError as exc:
            result, error = None, exc
        free.append(actor)
        yield index, result, error
