import asyncio


def run(coro):
    return asyncio.run(coro)


async def fetch_json(page, method: str, url: str, body):
    """A JSON request from inside the page (its episode headers, its origin), as a script that goes
    around the page's own forms would send it: (status, reply body)."""
    return tuple(await page.evaluate(
        """async ([method, url, body]) => { const r = await fetch(url, {method, headers: {"Content-Type": "application/json"},
             body: JSON.stringify(body)}); return [r.status, await r.json()]; }""", [method, url, body]))


async def synth_episode(bundles, task, episode: str, body):
    """Serve synth bundles for real, open one Chromium page in `episode` of `task` and run
    `await body(page, backend)`; returns what it returns. Everything is closed afterwards."""
    from playwright.async_api import async_playwright

    from weblica.browser.launcher import context_kwargs, launch_browser
    from weblica.serve.backend import SynthBackend
    from weblica.serve.server import SiteServer

    async with async_playwright() as pw:
        browser = await launch_browser(pw)
        try:
            with SiteServer(list(bundles)) as server:
                backend = SynthBackend(server)
                context = await browser.new_context(**context_kwargs(proxy=server.url))
                try:
                    net = await backend.begin(task, episode, 0)
                    page = await context.new_page()
                    await page.set_extra_http_headers(net.extra_headers)
                    return await body(page, backend)
                finally:
                    await context.close()
        finally:
            await browser.close()
