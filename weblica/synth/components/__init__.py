"""The component library: every part of a page (header, navigation, listings, detail pages, footer,
start-page sections) in several structurally different variants, different DOM and not only CSS.

The markup lives in jinja macros under `weblica/synth/templates/components/` (one file per component); this
package names the variants (the page grammar, `weblica/synth/page_grammar.py`, picks one per site),
the filler content the sections show (`content`), and the info pages the footers link to
(`info_pages`). Every variant keeps the hooks the skills' oracle plans click (`#search-input`,
`#cart-link`, `#account-link`, the department menus), visible, in every header.
"""
from __future__ import annotations

# component -> its variants; the templates dispatch on these names
VARIANTS: dict[str, tuple[str, ...]] = {
    # how the page body nests (real sites differ in wrapper depth as much as in their widgets)
    "skeleton": ("plain", "container", "shell"),
    "header": ("bar", "centered", "utility", "mega", "drawer"),
    "nav": ("top", "sidebar", "tabs", "stacked"),
    "listing": ("grid", "list", "table", "cards", "masonry"),
    "detail": ("classic", "gallery", "wide"),
    "footer": ("columns", "mega", "compact", "accordion"),
    "hero": ("banner", "split", "slides", "text"),
    # start-page sections besides the skill's own list ("featured")
    "section": ("tiles", "promo", "arrivals", "top_rated", "deals", "reviews", "newsletter", "faq", "info",
                "brands", "guides", "perks", "searches", "masonry_picks"),
}

# the style axis `listing` (cards | rows | table) narrows the listing variants to ones of its look
LISTINGS_FOR: dict[str, tuple[str, ...]] = {
    "cards": ("grid", "cards", "masonry"),
    "rows": ("list", "cards", "table"),
    "table": ("table",),  # a pinned table look (government-plain) stays a table
}
