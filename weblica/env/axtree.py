"""The page's accessibility tree as an observation (`obs: axtree | both`), in BrowserGym's spirit: what
Chromium exposes to assistive technology -- each element's role, accessible name and state -- with the
centre of its box in viewport pixels, for the elements in view.

Read through the Chrome DevTools Protocol, as BrowserGym does: `Accessibility.getFullAXTree` gives the
nodes (ignored ones and their order included), `DOMSnapshot.captureSnapshot` the layout box of every DOM
node by backend node id; a node's centre is that of the part of its box inside the viewport. Kept: nodes
that are not ignored, whose role is not a mere container (generic, none, presentation, inline text boxes;
lists, rows, cells and the like when they have no name), and whose box is in view; a static text that
repeats its parent's name is dropped (a link's own label). Landmarks (banner, navigation, main) are kept
with or without a name: they say where a link sits.
Depth counts kept ancestors. The nodes are data (`AXNode` dicts); a policy renders them in its model's
coordinate frame (`weblica.policy.context`). Same page, same tree: nothing here depends on timing.
"""
from __future__ import annotations

from typing import Any

VIEWPORT = (1280, 720)
MAX_NODES = 250        # a prompt's budget: the first nodes in document order
MAX_NAME = 80          # characters of an accessible name
SKIPPED_ROLES = {"generic", "none", "presentation", "InlineTextBox", "LineBreak", "ignored", "GenericContainer"}
# structure that says nothing without a name: its children are kept, one level up
UNNAMED_SKIPPED = {"StaticText", "paragraph", "group", "list", "listitem", "table", "rowgroup", "row", "cell",
                   "gridcell", "Section", "section", "article", "figure", "LayoutTable", "LayoutTableRow",
                   "LayoutTableCell", "DescriptionList", "term", "definition", "Abbr", "emphasis", "strong"}
STATES = ("checked", "selected", "expanded", "disabled", "focused", "required", "pressed")


async def read_axtree(page: Any, viewport: tuple[int, int] = VIEWPORT) -> list[dict[str, Any]]:
    """The in-view accessibility nodes of `page`: [{role, name, x, y, depth, value?, <state>: True?}], x and y
    the centre of the node's visible box in viewport pixels; [] while the document is being replaced."""
    session = await page.context.new_cdp_session(page)
    try:
        tree = await session.send("Accessibility.getFullAXTree")
        snapshot = await session.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
    except Exception:  # navigating: no document to read
        return []
    finally:
        try:
            await session.detach()
        except Exception:
            pass
    return flatten(tree.get("nodes", []), layout_boxes(snapshot), viewport)


def layout_boxes(snapshot: dict[str, Any]) -> dict[int, tuple[float, float, float, float]]:
    """backend node id -> (x, y, width, height) in viewport pixels, for the main document."""
    documents = snapshot.get("documents") or []
    if not documents:
        return {}
    doc = documents[0]
    backend = doc["nodes"]["backendNodeId"]
    layout = doc["layout"]
    dx, dy = doc.get("scrollOffsetX", 0), doc.get("scrollOffsetY", 0)
    boxes: dict[int, tuple[float, float, float, float]] = {}
    for index, (x, y, w, h) in zip(layout["nodeIndex"], layout["bounds"]):
        node = backend[index]
        if node not in boxes:  # a node's first layout object is its own box
            boxes[node] = (x - dx, y - dy, w, h)
    return boxes


def _value(field: dict[str, Any] | None) -> Any:
    return (field or {}).get("value")


def visible_centre(box: tuple[float, float, float, float], viewport: tuple[int, int]) -> tuple[int, int] | None:
    """The centre of the part of `box` inside the viewport, rounded; None when none of it is."""
    x, y, w, h = box
    left, top = max(x, 0.0), max(y, 0.0)
    right, bottom = min(x + w, float(viewport[0])), min(y + h, float(viewport[1]))
    if w <= 0 or h <= 0 or right <= left or bottom <= top:
        return None
    return round((left + right) / 2), round((top + bottom) / 2)


def flatten(nodes: list[dict[str, Any]], boxes: dict[int, tuple[float, float, float, float]],
            viewport: tuple[int, int] = VIEWPORT) -> list[dict[str, Any]]:
    """The kept nodes in document order (module docstring), each with its depth among kept ancestors."""
    by_id = {n["nodeId"]: n for n in nodes}
    roots = [n for n in nodes if not n.get("parentId") or n.get("parentId") not in by_id]
    out: list[dict[str, Any]] = []
    # depth-first in document order, without recursion (a deep DOM must not hit Python's limit)
    stack: list[tuple[dict[str, Any], int, str]] = [(root, 0, "") for root in reversed(roots)]
    while stack and len(out) < MAX_NODES:
        node, depth, parent_name = stack.pop()
        role = str(_value(node.get("role")) or "")
        name = " ".join(str(_value(node.get("name")) or "").split())[:MAX_NAME]
        kept = False
        if not node.get("ignored") and role not in SKIPPED_ROLES and role != "RootWebArea":
            centre = visible_centre(boxes[node["backendDOMNodeId"]], viewport) \
                if node.get("backendDOMNodeId") in boxes else None
            redundant = role == "StaticText" and (not name or name == parent_name)
            if centre is not None and not redundant and (name or role not in UNNAMED_SKIPPED):
                entry: dict[str, Any] = {"role": role, "name": name, "x": centre[0], "y": centre[1], "depth": depth}
                value = _value(node.get("value"))
                if value not in (None, ""):
                    entry["value"] = str(value)[:MAX_NAME]
                for prop in node.get("properties") or []:
                    if prop.get("name") in STATES and _value(prop.get("value")) is True:
                        entry[prop["name"]] = True
                out.append(entry)
                kept = True
        children = [by_id[c] for c in node.get("childIds") or [] if c in by_id]
        stack.extend((child, depth + kept, name or parent_name) for child in reversed(children))
    return out
