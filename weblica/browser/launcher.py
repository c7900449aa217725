"""Finding and launching Chromium with the flags that work on these machines."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from weblica.browser.mitm_ca import ca_spki

VIEWPORT = {"width": 1280, "height": 720}
DEVICE_SCALE_FACTOR = 1
TIMEZONE = "UTC"
LOCALE = "en-US"

# Chromium honours only the last --disable-features switch, and ours comes after Playwright's, so ours
# repeats the features Playwright disables (its list as of 1.65). Among them HttpsUpgrades: without it an
# http:// navigation to a real host name is first tried over HTTPS (a CONNECT through the recording
# proxy, and a different page load than the site's); also PaintHolding, ThirdPartyStoragePartitioning.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect", "OptimizationHints",
    "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch",
)
# Translate, AutofillServerCommunication: services that would call Google's hosts through the env's
# proxy (and so into recordings). WebUIOmniboxPopup, WebUIOmniboxAimPopup, PreloadTopChromeWebUI: every
# browser context is a window whose omnibox popups Chromium (156) renders ahead of time as WebUI pages in
# a renderer of their own, about 0.5 CPU-s per context; the env opens a context per episode.
# RenderDocument: Chromium builds a new frame host (and renderer-side frame) for every cross-document
# navigation, even to the same site, for the back/forward cache that Playwright turns off anyway; a
# link click on a synth site cost ~20% more CPU with it (all processes: 68-79 ms vs 55-63 ms here).
OWN_DISABLED_FEATURES = ("Translate", "AutofillServerCommunication", "WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
                         "PreloadTopChromeWebUI", "RenderDocument")
DISABLED_FEATURES = tuple(dict.fromkeys(PLAYWRIGHT_DISABLED_FEATURES + OWN_DISABLED_FEATURES))

# Flags that work in a closed network as root: without the background-networking ones Chromium keeps
# dialling Google's hosts; QUIC would bypass an HTTP proxy.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-features=" + ",".join(DISABLED_FEATURES),
    # rendering that does not depend on the machine's display settings
    "--force-color-profile=srgb",
    "--font-render-hinting=none",
    "--disable-lcd-text",
    "--disable-smooth-scrolling",
    "--disable-partial-raster",  # repaint whole tiles: partial raster flips anti-aliased pixels between runs
    # proxies apply to loopback too, so synth host names can point at a local gateway
    "--proxy-bypass-list=<-loopback>",
    # nothing reaches the network beside the proxy: WebRTC sends no UDP of its own (STUN to any host
    # got through without this), and host names are never resolved ahead of a request
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
]

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable")
# Headless runs prefer Chromium's headless shell (Debian's chromium-headless-shell: the same version,
# built without the browser window UI). A full Chromium lays out and paints a hidden window for every
# browser context, which the env opens once per episode: a reset cost about 440 ms of CPU with the full
# browser and 180 ms with the shell here (browser process 270 ms -> 75 ms).
HEADLESS_SHELL_CANDIDATES = ("/usr/bin/chromium-headless-shell",)
INSTALL_HINT = ("Chromium not found: run `apt-get update && apt-get install -y chromium chromium-headless-shell` "
                "(or set WEBLICA_CHROMIUM=/path/to/chrome)")

FONT_DIR = Path(__file__).parent / "fonts"


class ChromiumNotFound(RuntimeError):
    pass


def find_chromium(headless: bool = False) -> str:
    """Path of the Chromium executable: $WEBLICA_CHROMIUM, then (headless) the headless shell, then the
    Debian locations, then PATH."""
    override = os.environ.get("WEBLICA_CHROMIUM")
    if override:
        if Path(override).is_file() and os.access(override, os.X_OK):
            return override
        raise ChromiumNotFound(f"WEBLICA_CHROMIUM={override} is not an executable file. {INSTALL_HINT}")
    for path in (HEADLESS_SHELL_CANDIDATES if headless else ()) + CANDIDATES:
        if Path(path).is_file() and os.access(path, os.X_OK):
            return path
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise ChromiumNotFound(INSTALL_HINT)


@lru_cache(maxsize=1)
def fontconfig_file() -> str:
    """A fontconfig file that knows only the project's fonts and maps the generic families onto them,
    so text renders with the same glyphs on every machine."""
    cache_dir = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "weblica" / "fontconfig"
    cache_dir.mkdir(parents=True, exist_ok=True)
    aliases = {"sans-serif": "DejaVu Sans", "serif": "DejaVu Serif", "monospace": "DejaVu Sans Mono",
               "system-ui": "DejaVu Sans", "Arial": "DejaVu Sans", "Helvetica": "DejaVu Sans",
               "Times New Roman": "DejaVu Serif", "Courier New": "DejaVu Sans Mono"}
    alias_xml = "\n".join(
        f"  <alias binding=\"strong\"><family>{k}</family><prefer><family>{v}</family></prefer></alias>"
        for k, v in aliases.items())
    xml = f"""<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>{FONT_DIR}</dir>
  <cachedir>{cache_dir}</cachedir>
{alias_xml}
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>false</bool></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
  </match>
</fontconfig>
"""
    path = cache_dir / "fonts.conf"
    if not path.exists() or path.read_text() != xml:
        path.write_text(xml)
    return str(path)


@dataclass
class BrowserOptions:
    headless: bool = True
    executable: str | None = None
    extra_args: list[str] = field(default_factory=list)

    def launch_kwargs(self) -> dict[str, Any]:
        env = dict(os.environ)
        env["FONTCONFIG_FILE"] = fontconfig_file()
        env["TZ"] = TIMEZONE
        spki = ca_spki()   # the recording proxy's CA, so a site's service worker may register under it
        trust = [f"--ignore-certificate-errors-spki-list={spki}"] if spki else []
        return {
            "executable_path": self.executable or find_chromium(headless=self.headless),
            "headless": self.headless,
            "args": CHROMIUM_FLAGS + trust + self.extra_args,
            "env": env,
        }


def context_kwargs(proxy: str | None = None, extra_headers: dict[str, str] | None = None,
                   ignore_https_errors: bool = False, service_workers: bool = False) -> dict[str, Any]:
    """Options for one episode's browser context. Service workers run only with `service_workers`:
    recording and replaying a site (its worker's own fetches go through the proxy like the page's, so
    they are recorded and replayed, and a PWA behaves as live). Elsewhere they stay blocked: a synth
    site registers none, and a worker answers from its own cache, outside the gateway's view."""
    kwargs: dict[str, Any] = {
        "viewport": dict(VIEWPORT),
        "screen": dict(VIEWPORT),
        "device_scale_factor": DEVICE_SCALE_FACTOR,
        "timezone_id": TIMEZONE,
        "locale": LOCALE,
        "reduced_motion": "reduce",
        "color_scheme": "light",
        "ignore_https_errors": ignore_https_errors,
        "service_workers": "allow" if service_workers else "block",
        "extra_http_headers": dict(extra_headers or {}),
    }
    if proxy:
        # the bypass list is empty on purpose: loopback traffic must reach the gateway too
        kwargs["proxy"] = {"server": proxy, "bypass": ""}
    return kwargs


async def launch_browser(playwright: Any, options: BrowserOptions | None = None) -> Any:
    """Launch Chromium through Playwright; a missing executable raises ChromiumNotFound with the fix."""
    options = options or BrowserOptions()
    kwargs = options.launch_kwargs()
    try:
        return await playwright.chromium.launch(**kwargs)
    except Exception as exc:  # Playwright raises its own Error type; turn the common cause into the fix
        if "Executable doesn't exist" in str(exc) or "ENOENT" in str(exc):
            raise ChromiumNotFound(INSTALL_HINT) from exc
        raise
