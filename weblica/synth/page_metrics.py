"""What a rendered page holds, measured in the page by one probe (issue 18 points 2 and 9): its element
count, `a[href]` links, screens of content at the viewport (`scrollHeight / innerHeight`; 1280x720 in
validation's browser), and its tag paths, the set of chains of tag names from <html> to each element
of the body ("html>body>main>ul>li>a"), which says what structure a page is built of regardless of
its text and styling. The LLM generator's gate and `bench/synth.py` both measure pages with this.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterable

# One round trip: counts always, visible text and tag paths when asked (they are larger to send).
PAGE_PROBE_JS = """([withText, withPaths]) => {
  const out = {
    elements: document.getElementsByTagName('*').length,
    links: document.querySelectorAll('a[href]').length,
    screens: document.documentElement.scrollHeight / Math.max(1, window.innerHeight),
  };
  if (withText) out.text = document.body ? document.body.innerText : '';
  if (withPaths && document.body) {
    const paths = new Set();
    const walk = (el, prefix) => {
      const path = prefix + '>' + el.tagName.toLowerCase();
      paths.add(path);
      for (const child of el.children) walk(child, path);
    };
    walk(document.body, document.documentElement.tagName.toLowerCase());
    out.paths = Array.from(paths);
  }
  return out;
}"""


@dataclass
class PageSize:
    elements: int
    links: int
    screens: float
    text: str | None = None  # visible text, when measured with `text=True`
    tag_paths: frozenset[str] = field(default_factory=frozenset)  # when measured with `tag_paths=True`

    def to_dict(self) -> dict[str, Any]:
        return {"elements": self.elements, "links": self.links, "screens": round(self.screens, 2)}


async def measure(page: Any, text: bool = False, tag_paths: bool = False) -> PageSize:
    """Measure the page as it is now (call it after the load that matters)."""
    probe = await page.evaluate(PAGE_PROBE_JS, [text, tag_paths])
    return PageSize(int(probe["elements"]), int(probe["links"]), float(probe["screens"]), probe.get("text"),
                    frozenset(probe.get("paths") or ()))


def jaccard_distance(a: Iterable[str], b: Iterable[str]) -> float:
    """1 - |a ∩ b| / |a ∪ b|: 0 for the same set, 1 for disjoint ones (and 0 for two empty sets)."""
    a, b = set(a), set(b)
    union = a | b
    return 1 - len(a & b) / len(union) if union else 0.0


def mean_pairwise_jaccard(sets: list[Iterable[str]]) -> float:
    """The mean Jaccard distance over every pair of the sets; 0.0 with fewer than two."""
    pairs = list(itertools.combinations([set(s) for s in sets], 2))
    return sum(jaccard_distance(a, b) for a, b in pairs) / len(pairs) if pairs else 0.0

