"""What the launched Chromium does on the wire: an http:// page load stays the page load the site had."""
import asyncio

from weblica.browser.launcher import DISABLED_FEATURES, context_kwargs, launch_browser


async def _request_lines_through_proxy(urls: list[str]) -> list[str]:
    """Load `urls` in Chromium through a loopback proxy that answers every GET with a tiny page and
    refuses CONNECT; returns the request lines the proxy saw (no traffic leaves the machine)."""
    from playwright.async_api import async_playwright

    lines: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        lines.append(line.decode().strip())
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        if line.startswith(b"CONNECT"):
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        else:
            body = b"<html><body>page</body></html>"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                page = await (await browser.new_context(**context_kwargs(proxy=f"http://127.0.0.1:{port}"))).new_page()
                for url in urls:
                    await page.goto(url, wait_until="load")
            finally:
                await browser.close()
    finally:
        server.close()
    return lines


def test_http_navigations_to_real_host_names_are_not_upgraded_to_https():
    """Chromium keeps only the last --disable-features switch; ours must still carry Playwright's
    HttpsUpgrades, or the proxy (the recorder) sees a CONNECT to :443 before the site's own request."""
    lines = asyncio.run(_request_lines_through_proxy(["http://www.example.com/", "http://news.example.org/a?b=1"]))
    assert not [line for line in lines if line.startswith("CONNECT")], lines
    assert "GET http://www.example.com/ HTTP/1.1" in lines and "GET http://news.example.org/a?b=1 HTTP/1.1" in lines


def test_disabled_features_keep_playwrights_and_ours():
    assert {"HttpsUpgrades", "PaintHolding", "ThirdPartyStoragePartitioning", "Translate"} <= set(DISABLED_FEATURES)
    assert len(DISABLED_FEATURES) == len(set(DISABLED_FEATURES))


def test_a_new_context_renders_no_browser_ui_pages():
    """Each context is a headless window; Chromium would render its omnibox popups as hidden WebUI
    pages (`browser_ui` targets), a renderer's start-up work for every episode's context."""
    from playwright.async_api import async_playwright

    async def targets() -> list[tuple[str, str]]:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                for _ in range(2):
                    await (await browser.new_context(**context_kwargs())).new_page()
                session = await browser.new_browser_cdp_session()
                await asyncio.sleep(0.5)  # the popups are created right after the window
                infos = (await session.send("Target.getTargets"))["targetInfos"]
            finally:
                await browser.close()
        return [(t["type"], t["url"]) for t in infos]

    found = asyncio.run(targets())
    assert [t for t in found if t[0] == "page"] == [("page", "about:blank")] * 2
    assert not [t for t in found if t[0] == "browser_ui" or t[1].startswith("chrome://")], found


def test_headless_work_prefers_the_headless_shell(monkeypatch):
    """Headless launches take Chromium's headless shell when it is installed (.ci/setup installs it);
    headed ones (recording) and the fallback take the full browser."""
    from pathlib import Path

    import pytest

    from weblica.browser.launcher import HEADLESS_SHELL_CANDIDATES, BrowserOptions, find_chromium

    monkeypatch.delenv("WEBLICA_CHROMIUM", raising=False)
    full = find_chromium()
    assert "headless-shell" not in full
    assert BrowserOptions(headless=False).launch_kwargs()["executable_path"] == full
    shell = next((p for p in HEADLESS_SHELL_CANDIDATES if Path(p).is_file()), None)
    if shell is None:
        pytest.skip("chromium-headless-shell is not installed")
    assert find_chromium(headless=True) == shell
    assert BrowserOptions().launch_kwargs()["executable_path"] == shell
    monkeypatch.setenv("WEBLICA_CHROMIUM", full)  # the override wins, headless or not
    assert BrowserOptions().launch_kwargs()["executable_path"] == full
