"""Gathering the requests of concurrent episodes into one batched engine call.

An offline engine (`vllm.LLM`) is not re-entrant, but batches: one `generate` over N prompts decodes
them together. `BatchingQueue.submit` may be awaited from any event loop or thread; a worker thread
waits for the first request, lets the others that are on their way arrive (`gather_s`), and runs
everything pending as one call (`run_batch` returns one result per request, or an exception for a
request that failed alone). Requests that arrive while a batch runs form the next batch. Each
request carries its own seed, so what it samples does not depend on its batch-mates.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import Any, Callable, Sequence


class BatchingQueue:
    def __init__(self, run_batch: Callable[[list[Any]], Sequence[Any]], gather_s: float = 0.01,
                 max_batch: int = 512) -> None:
        self._run_batch = run_batch
        self.gather_s = gather_s
        self.max_batch = max_batch
        self._pending: list[tuple[Any, concurrent.futures.Future]] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        # held while a batch runs: control calls (weight sync, sleep) take it to run between batches
        self.engine_lock = threading.Lock()

    async def submit(self, request: Any) -> Any:
        """The result of `request`, computed in a batch with whatever else is pending."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._wake:
            if self._closed:
                raise RuntimeError("the batching queue is closed")
            self._pending.append((request, future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="weblica-batching", daemon=True)
                self._thread.start()
            self._wake.notify()
        return await asyncio.wrap_future(future)

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closed:
                    self._wake.wait()
                if self._closed and not self._pending:
                    return
            time.sleep(self.gather_s)  # the other episodes' requests are a few ms behind the first
            with self._wake:
                batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
            try:
                with self.engine_lock:
                    results = list(self._run_batch([request for request, _ in batch]))
                if len(results) != len(batch):
                    raise RuntimeError(f"the engine returned {len(results)} results for {len(batch)} requests")
            except BaseException as exc:  # every waiter gets the failure, none hangs
                for _, future in batch:
                    future.set_exception(exc)
                continue
            for (_, future), result in zip(batch, results):
                # a request that failed on its own (a bad prompt) fails alone
                future.set_exception(result) if isinstance(result, BaseException) else future.set_result(result)

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)
