"""What the agent sees after reset and after each step."""
from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Tab:
    index: int
    url: str
    title: str


@dataclass
class Observation:
    """A 1280x720 screenshot (PNG bytes), the active URL, the tabs, and one feedback line per tool call."""

    screenshot: bytes
    url: str
    tabs: list[Tab]
    active_tab: int
    feedback: list[str] = field(default_factory=list)
    step: int = 0
    # for scripted policies that ask for it (weblica.scoring.page_snapshot): visible text and controls;
    # None otherwise, and never shown to a model
    page: dict[str, Any] | None = None
    # for policies that read it (`obs: axtree | both`, weblica.env.axtree): the in-view accessibility nodes
    # (role, name, box centre in viewport pixels); None otherwise
    axtree: list[dict[str, Any]] | None = None

    @property
    def screenshot_sha256(self) -> str:
        return hashlib.sha256(self.screenshot).hexdigest()

    def image(self) -> Any:
        """The screenshot as a PIL image (decoded on demand)."""
        from PIL import Image

        return Image.open(io.BytesIO(self.screenshot))

    def to_dict(self, with_screenshot: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "url": self.url,
            "tabs": [{"index": t.index, "url": t.url, "title": t.title} for t in self.tabs],
            "active_tab": self.active_tab,
            "feedback": list(self.feedback),
            "step": self.step,
            "screenshot_sha256": self.screenshot_sha256,
        }
        if with_screenshot:
            import base64

            out["screenshot_png_b64"] = base64.b64encode(self.screenshot).decode()
        return out
