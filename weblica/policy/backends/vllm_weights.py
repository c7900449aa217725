"""Weight sync from the trainer to an in-process vLLM engine (written against vLLM 0.33).

vLLM's V1 engine runs the model in worker processes and talks to them over a msgpack channel that
refuses functions (a closure or lambda passed to `LLM.collective_rpc` needs
VLLM_ALLOW_INSECURE_SERIALIZATION and is then cloudpickled, with everything it captures, on every
call). So the sync is a method of a worker-extension class (`worker_extension_cls`, which vLLM mixes
into its worker class) called by name, and the weights do not travel through that channel at all:
the trainer writes them in buckets of `bucket_bytes` to safetensors files in shared memory
(/dev/shm), and every worker memory-maps the file it is told about, reads the tensors straight onto
its device and hands them to the model's own `load_weights` (which maps Hugging Face names onto
vLLM's fused/sharded layout, and shards for tensor parallelism). The RPC carries one path string.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

# the qualified name vLLM imports in each worker (engine arg `worker_extension_cls`)
EXTENSION = "weblica.policy.backends.vllm_weights.WeblicaWorkerExtension"
LOAD_METHOD = "weblica_load_weights"
DEFAULT_BUCKET_BYTES = 1 << 30


class WeblicaWorkerExtension:
    """Mixed into vLLM's worker class; `self` is the worker (it has `model_runner` and `device`)."""

    def weblica_load_weights(self, path: str) -> int:
        """Load every tensor of the safetensors file at `path` into the model; returns how many."""
        from safetensors import safe_open

        device = str(getattr(self, "device", "cpu"))
        with safe_open(path, framework="pt", device=device) as handle:
            weights = [(name, handle.get_tensor(name)) for name in handle.keys()]
        model = self.model_runner.model
        with _current_vllm_config(self):
            model.load_weights(weights=weights)
        return len(weights)


def _current_vllm_config(worker: Any) -> Any:
    """vLLM's own reload path runs weight loaders under the worker's config; do the same where it exists."""
    import contextlib

    config = getattr(worker, "vllm_config", None)
    try:
        from vllm.config import set_current_vllm_config
    except ImportError:
        return contextlib.nullcontext()
    return set_current_vllm_config(config) if config is not None else contextlib.nullcontext()


SHM = Path("/dev/shm")


class SharedMemoryError(RuntimeError):
    pass


def free_bytes(directory: Path) -> int:
    import shutil

    return shutil.disk_usage(directory).free


def shared_memory_dir(bucket_bytes: int = DEFAULT_BUCKET_BYTES, shm: Path = SHM,
                      fallback: Path | None = None) -> Path:
    """Where bucket files go: RAM-backed /dev/shm when it is writable and has room for a bucket (a bucket
    is at most `bucket_bytes` or one tensor, whichever is larger; twice `bucket_bytes` is asked for), else
    the temporary directory on disk, with a warning that says how to give /dev/shm room. Docker's default
    /dev/shm is 64 MB: the first 1 GiB bucket would fail with a bus error halfway through a sync."""
    import warnings

    need = 2 * bucket_bytes
    if shm.is_dir() and os.access(shm, os.W_OK):
        room = free_bytes(shm)
        if room >= need:
            return shm
        why = f"{shm} has {room / 2**20:.0f} MiB free and a weight bucket needs up to {need / 2**20:.0f} MiB"
    else:
        why = f"{shm} is not a writable directory"
    fallback = fallback or Path(tempfile.gettempdir())
    if free_bytes(fallback) < need:
        raise SharedMemoryError(f"{why}, and {fallback} has no room either: give the container shared memory "
                                "(docker run --shm-size=16g, or Kubernetes an emptyDir with medium: Memory on "
                                "/dev/shm), or sync in smaller buckets")
    warnings.warn(f"{why}: weight syncs go through {fallback} (disk, slower). Give the container shared memory "
                  "(docker run --shm-size=16g, or Kubernetes an emptyDir with medium: Memory on /dev/shm)",
                  RuntimeWarning, stacklevel=2)
    return fallback


def write_buckets(weights: Iterable[tuple[str, Any]], directory: Path,
                  bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> Iterator[tuple[Path, int]]:
    """Write (name, tensor) pairs into safetensors files of about `bucket_bytes` each, yielding
    (path, tensor count) as each is complete; the caller loads and deletes it before the next is
    written, so shared memory holds one bucket at a time."""
    from safetensors.torch import save_file

    bucket: dict[str, Any] = {}
    size = index = 0
    for name, tensor in weights:
        nbytes = tensor.numel() * tensor.element_size()
        if bucket and size + nbytes > bucket_bytes:  # a file holds at most bucket_bytes, or one larger tensor
            yield _save(save_file, bucket, directory, index), len(bucket)
            bucket, size, index = {}, 0, index + 1
        bucket[name] = tensor.detach().to("cpu", copy=True).contiguous()  # tied weights: separate copies
        size += nbytes
        if size >= bucket_bytes:
            yield _save(save_file, bucket, directory, index), len(bucket)
            bucket, size, index = {}, 0, index + 1
    if bucket:
        yield _save(save_file, bucket, directory, index), len(bucket)


def _save(save_file: Any, bucket: dict[str, Any], directory: Path, index: int) -> Path:
    path = directory / f"weblica-weights-{os.getpid()}-{index}.safetensors"
    save_file(bucket, str(path))
    return path


def weights_to_send(model: Any, everything: bool) -> Iterator[tuple[str, Any]]:
    """The named tensors a sync sends: the trainable parameters (frozen ones never change), or all of
    the state dict when the engine's copy was discarded (sleep level 2)."""
    if everything:
        yield from model.state_dict().items()
        return
    for name, param in model.named_parameters():
        if param.requires_grad:
            yield name, param


def sync_weights(llm: Any, weights: Iterable[tuple[str, Any]], bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                 directory: Path | None = None) -> int:
    """Push `weights` into every worker of `llm` by name-called RPC; returns the tensors sent."""
    sent = 0
    for path, count in write_buckets(weights, directory or shared_memory_dir(bucket_bytes), bucket_bytes):
        try:
            loaded = llm.collective_rpc(LOAD_METHOD, args=(str(path),))
        finally:
            path.unlink(missing_ok=True)
        if any(n != count for n in loaded):
            raise RuntimeError(f"a vLLM worker loaded {loaded} of the {count} tensors sent")
        sent += count
    return sent
