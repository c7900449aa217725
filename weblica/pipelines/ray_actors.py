"""What the Ray pipelines share: starting Ray, and handing jobs to free actors one at a time."""
from __future__ import annotations

import socket
from typing import Any, Callable, Iterator

REACH_TIMEOUT_S = 5.0   # a cluster's head answers a TCP connect at once; Ray's own client retries for minutes


class RayUnavailable(RuntimeError):
    """Ray is not installed here."""


class RayAddressError(RuntimeError):
    """No Ray cluster answers at the address given (its message names the fix)."""


def _fix(address: str, reason: str) -> str:
    return (f"--ray {address}: {reason}; start a cluster with `ray start --head` and pass its HOST:PORT (6379 by "
            "default), 'auto' to join the one this machine belongs to, or 'local' to start one here")


def check_ray_address(address: str) -> None:
    """Fail fast, in one line, where nothing answers at `address`: `ray.init` itself would retry a dead
    address for minutes while printing warnings. 'local' and 'auto' need no check here ('auto' fails at
    once when no cluster runs on this machine)."""
    if address in ("local", "auto"):
        return
    hostport = address.split("://", 1)[1] if "://" in address else address
    host, _, port = hostport.rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        raise RayAddressError(_fix(address, "not a HOST:PORT address"))
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S).close()
    except OSError as exc:
        raise RayAddressError(_fix(address, f"nothing answers there ({exc.strerror or exc})")) from None


def init_ray(address: str, ray_init_kwargs: dict[str, Any] | None = None) -> Any:
    """The `ray` module, connected: `address` 'local' starts a local cluster, 'auto' or an address joins one.
    Without Ray installed: RayUnavailable, naming the extra to install; with no cluster at the address:
    RayAddressError, naming the fix."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("Ray is not installed: pip install 'weblica[ray]'") from None
    if not ray.is_initialized():
        check_ray_address(address)
        try:
            ray.init(address=None if address == "local" else address, **(ray_init_kwargs or {}))
        except (ConnectionError, ValueError) as exc:   # no cluster at 'auto', an address Ray cannot parse
            reason = ("no Ray cluster runs on this machine" if address == "auto" and isinstance(exc, ConnectionError)
                      else " ".join(str(exc).split()))
            raise RayAddressError(_fix(address, reason)) from None
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
