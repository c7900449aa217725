import asyncio


def run(coro):
    return asyncio.run(coro)
