"""Site graphics: hero banners with text overlays, monogram logos, dashboard charts and locator maps.
Each is a function of its inputs (a hero is keyed by the site id, so no two sites share one)."""
from __future__ import annotations

import math
import random
from typing import Any

from PIL import Image, ImageDraw

from weblica.synth.images.canvas import RGB, fit_text, font, gradient, luminance, mix, png, rgb, seeded, wrap

WHITE, INK = (255, 255, 255), (30, 32, 40)


def _palette(palette: dict[str, str]) -> tuple[RGB, RGB]:
    return rgb(palette.get("primary", "#1f5fbf")), rgb(palette.get("accent", "#f2a900"))


def _on(color: RGB) -> RGB:
    """Text colour readable on `color`."""
    return INK if luminance(color) > 0.6 else WHITE


def hero_image(site_id: str, title: str, tagline: str, palette: dict[str, str], size: tuple[int, int] = (1200, 400),
               kind: str | None = None, cta: str = "Shop now") -> bytes:
    """A banner: a seeded abstract composition in the site palette (blobs, waves, stripes or a grid of
    tiles), with `title`, `tagline` and a call-to-action button; with `kind`, a drawing of that kind of
    thing on the side. Keyed by `site_id`: two sites get different compositions."""
    from weblica.synth.images.kinds import family_of
    from weblica.synth.images.canvas import Pen
    from weblica.synth.images.objects import ASPECT, DRAWINGS, Colors

    rng = seeded("hero", site_id)
    primary, accent = _palette(palette)
    w, h = size
    image = Image.new("RGB", size, primary)
    draw = ImageDraw.Draw(image)
    a = mix(primary, rgb("#%06x" % rng.randrange(1 << 24)), rng.uniform(0.15, 0.45))
    b = mix(accent, primary, rng.uniform(0.0, 0.5))
    a = mix(a, rng.choice([WHITE, INK]), rng.uniform(0.0, 0.45))  # light and dark banners hash apart
    b = mix(b, rng.choice([WHITE, INK]), rng.uniform(0.0, 0.45))
    gradient(image, a, b, horizontal=rng.random() < 0.5)
    _hero_pattern(draw, rng, w, h, a, accent)
    text_left = rng.random() < 0.6
    panel = rng.random() < 0.5
    tx0 = int(w * (0.06 if text_left else 0.5))
    tw = int(w * 0.44)
    if panel:  # a translucent card behind the text
        overlay = Image.new("RGBA", size, (0, 0, 0, 0))
        ImageDraw.Draw(overlay).rounded_rectangle([tx0 - 24, int(h * 0.06), tx0 + tw + 24, int(h * 0.94)], radius=18,
                                                  fill=(*mix(primary, INK, 0.5), 150))
        image.paste(Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB"))
        draw = ImageDraw.Draw(image)
    fg = WHITE if panel else _on(mix(a, b, 0.3))
    title_font = fit_text(draw, title, tw, int(h * 0.2), bold=True, serif=rng.random() < 0.3)
    y = int(h * rng.uniform(0.1, 0.36))
    draw.text((tx0, y), title, font=title_font, fill=fg)
    y += int(title_font.size * 1.3)
    tag_font = font(max(10, int(h * 0.065)))
    for line in wrap(draw, tagline, tag_font, tw)[:2]:
        draw.text((tx0, y), line, font=tag_font, fill=fg)
        y += int(tag_font.size * 1.35)
    bw = int(draw.textlength(cta, font=tag_font)) + 40
    draw.rounded_rectangle([tx0, y + 12, tx0 + bw, y + 12 + int(tag_font.size * 2.1)], radius=rng.choice([0, 6, 30]),
                           fill=accent)
    draw.text((tx0 + bw // 2, y + 12 + int(tag_font.size * 1.05)), cta, font=tag_font, fill=_on(accent), anchor="mm")
    if kind:
        fam = family_of(kind)
        oh = h * rng.uniform(0.45, 0.85)
        ow = min(oh * ASPECT[fam], w * rng.uniform(0.25, 0.42))
        oh = ow / ASPECT[fam]
        ox = w * (rng.uniform(0.66, 0.8) if text_left else rng.uniform(0.2, 0.3)) - ow / 2
        oy = rng.uniform(0.05, 0.95) * (h - oh)
        body = mix(accent, primary, 0.3)
        DRAWINGS[fam](Pen(draw, (ox, oy, ox + ow, oy + oh)),
                      Colors.of(body, mix(WHITE, accent, 0.3)), rng, kind.lower(), title.lower())
    return png(image)


def _hero_pattern(draw: ImageDraw.ImageDraw, rng: random.Random, w: int, h: int, base: RGB, accent: RGB) -> None:
    style = rng.randrange(4)
    light = mix(base, WHITE, 0.25)
    if style == 0:  # blobs
        for _ in range(rng.randint(4, 8)):
            r = rng.uniform(0.1, 0.45) * h
            x, y = rng.uniform(0, w), rng.uniform(0, h)
            draw.ellipse([x - r, y - r, x + r, y + r], fill=mix(light, accent, rng.uniform(0, 0.5)))
    elif style == 1:  # waves
        for k in range(rng.randint(2, 4)):
            amp, phase, level = rng.uniform(0.04, 0.12) * h, rng.uniform(0, 6.28), h * (0.55 + 0.15 * k)
            pts = [(x, level + amp * math.sin(phase + x / w * rng.uniform(4, 9))) for x in range(0, w + 20, 20)]
            draw.polygon(pts + [(w, h), (0, h)], fill=mix(light, accent, 0.2 * k))
    elif style == 2:  # diagonal stripes
        step = int(rng.uniform(0.08, 0.2) * w)
        offset = rng.randrange(step)
        for x in range(-h + offset, w + h, step * 2):
            draw.polygon([(x, 0), (x + step, 0), (x + step - h, h), (x - h, h)], fill=light)
    else:  # tiles
        step = int(rng.uniform(0.08, 0.14) * h) + 8
        for y in range(0, h, step):
            for x in range(0, w, step):
                if rng.random() < 0.3:
                    draw.rounded_rectangle([x + 3, y + 3, x + step - 3, y + step - 3], radius=step // 4,
                                           fill=mix(light, accent, rng.uniform(0, 0.6)))


def logo_image(name: str, palette: dict[str, str], size: int = 96, seed: int | str = 0) -> bytes:
    """A monogram: the name's initials on a seeded badge shape (circle, rounded square, hexagon, shield)."""
    rng = seeded("logo", name, seed)
    primary, accent = _palette(palette)
    s = size * 2
    image = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    shape = rng.randrange(4)
    m = s * 0.04
    if shape == 0:
        draw.ellipse([m, m, s - m, s - m], fill=primary)
        draw.ellipse([s * 0.1, s * 0.1, s * 0.9, s * 0.9], outline=accent, width=int(s * 0.04))
    elif shape == 1:
        draw.rounded_rectangle([m, m, s - m, s - m], radius=int(s * 0.22), fill=primary)
        draw.rectangle([s * 0.2, s * 0.76, s * 0.8, s * 0.8], fill=accent)
    elif shape == 2:
        pts = [(s / 2 + (s / 2 - m) * math.cos(math.radians(60 * i + 30)),
                s / 2 + (s / 2 - m) * math.sin(math.radians(60 * i + 30))) for i in range(6)]
        draw.polygon(pts, fill=primary)
    else:
        draw.polygon([(m, m), (s - m, m), (s - m, s * 0.55), (s / 2, s - m), (m, s * 0.55)], fill=primary)
        draw.line([(m, s * 0.2), (s - m, s * 0.2)], fill=accent, width=int(s * 0.05))
    words = [w for w in name.replace("-", " ").split() if w[:1].isalnum()]
    initials = "".join(w[0] for w in words[:2]).upper() or "?"
    fnt = font(int(s * (0.42 if len(initials) > 1 else 0.5)), bold=True, serif=rng.random() < 0.35)
    draw.text((s / 2, s / 2), initials, font=fnt, fill=_on(primary), anchor="mm")
    return png(image.resize((size, size), Image.Resampling.LANCZOS))


def chart_image(values: list[float], labels: list[str], palette: dict[str, str], kind: str = "bar",
                title: str = "", size: tuple[int, int] = (480, 260), unit: str = "") -> bytes:
    """A bar or line chart of `values` (one per label) with axes, gridlines, tick values and labels."""
    if kind not in ("bar", "line"):
        raise ValueError(f"unknown chart kind {kind!r}: use bar or line")
    if len(values) != len(labels) or not values:
        raise ValueError("a chart needs one label per value and at least one value")
    primary, accent = _palette(palette)
    w, h = size
    image = Image.new("RGB", size, WHITE)
    draw = ImageDraw.Draw(image)
    small = font(11)
    left, right, top, bottom = 48, w - 14, 30 if title else 14, h - 30
    if title:
        draw.text((left, 8), title, font=font(14, bold=True), fill=INK)
    high = max(max(values), 0.0)
    low = min(min(values), 0.0)
    step = _nice_step((high - low) or 1.0)
    top_value = math.ceil(high / step) * step if high > 0 else 0.0
    bottom_value = math.floor(low / step) * step if low < 0 else 0.0
    span = (top_value - bottom_value) or step

    def y_of(v: float) -> float:
        return bottom - (v - bottom_value) / span * (bottom - top)

    tick = bottom_value
    while tick <= top_value + 1e-9:
        y = y_of(tick)
        draw.line([(left, y), (right, y)], fill=(228, 230, 236), width=1)
        text = f"{tick:g}{unit}"
        draw.text((left - 6, y), text, font=small, fill=(90, 94, 104), anchor="rm")
        tick += step
    draw.line([(left, top), (left, bottom)], fill=INK, width=1)
    draw.line([(left, y_of(0)), (right, y_of(0))], fill=INK, width=1)
    slot = (right - left) / len(values)
    points = []
    for i, (v, label) in enumerate(zip(values, labels)):
        cx = left + slot * (i + 0.5)
        if kind == "bar":
            bw = slot * 0.6
            y0, y1 = sorted((y_of(0), y_of(v)))
            draw.rectangle([cx - bw / 2, y0, cx + bw / 2, y1], fill=primary if v >= 0 else accent)
        points.append((cx, y_of(v)))
        draw.text((cx, bottom + 6), label[:8], font=small, fill=(60, 64, 74), anchor="mt")
    if kind == "line":
        draw.line(points, fill=primary, width=3, joint="curve")
        for x, y in points:
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=WHITE, outline=primary, width=2)
    return png(image)


def _nice_step(span: float) -> float:
    raw = span / 5
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def map_image(stores: list[dict[str, Any]], home: tuple[int, int], palette: dict[str, str],
              size: tuple[int, int] = (700, 420), labels: bool = True) -> bytes:
    """A city map on the stores' 100x60 km grid: blocks between streets, a river with a bridge, a park,
    main roads, street names, and (with `labels`) each store's district written under its spot. The
    clickable pins are drawn by the page over the image, at the same grid points."""
    w, h = size
    rng = seeded("map", home, *(f"{s.get('id')}:{s.get('x')}:{s.get('y')}" for s in stores))
    primary, accent = _palette(palette)
    image = Image.new("RGB", size, (238, 234, 224))
    draw = ImageDraw.Draw(image)
    xs = _cuts(rng, w, 52, 96)
    ys = _cuts(rng, h, 44, 80)
    for x0, x1 in zip(xs, xs[1:]):
        for y0, y1 in zip(ys, ys[1:]):
            if x1 - x0 < 12 or y1 - y0 < 12:
                continue
            shade = rng.randint(214, 230)
            draw.rounded_rectangle([x0 + 5, y0 + 5, x1 - 5, y1 - 5], radius=3, fill=(shade, shade - 3, shade - 10))
    px, py = rng.choice(list(zip(xs[1:-2], ys[1:-2]))) if len(xs) > 3 and len(ys) > 3 else (w // 3, h // 3)
    draw.rounded_rectangle([px + 5, py + 5, px + 110, py + 80], radius=8, fill=(176, 214, 160))  # park
    for _ in range(6):
        tx, ty = px + rng.randint(18, 98), py + rng.randint(18, 70)
        draw.ellipse([tx - 6, ty - 6, tx + 6, ty + 6], fill=(130, 180, 120))
    draw.text((px + 57, py + 42), "Park", font=font(11), fill=(60, 110, 60), anchor="mm")
    for x in xs[1:-1]:
        draw.line([(x, 0), (x, h)], fill=WHITE, width=7)
    for y in ys[1:-1]:
        draw.line([(0, y), (w, y)], fill=WHITE, width=7)
    level, amp, phase = h * rng.uniform(0.55, 0.8), h * rng.uniform(0.04, 0.1), rng.uniform(0, 6.28)
    river = [(x, level + amp * math.sin(phase + x / w * 5)) for x in range(-10, w + 20, 10)]
    draw.line(river, fill=(150, 192, 230), width=20, joint="curve")
    main_y = ys[len(ys) // 2]
    draw.line([(0, main_y), (w, main_y)], fill=(250, 214, 120), width=10)  # a main road
    main_x = xs[len(xs) // 2]
    draw.line([(main_x, 0), (main_x, h)], fill=(250, 214, 120), width=10)
    bridge_y = level + amp * math.sin(phase + main_x / w * 5)
    draw.rectangle([main_x - 8, bridge_y - 14, main_x + 8, bridge_y + 14], fill=(200, 200, 205))
    street_font = font(10)
    names = ["Maple St", "Harbor Rd", "Elm Ave", "Mill Ln", "Park Row", "King's Way", "Bridge St", "Oak St"]
    rng.shuffle(names)
    for name, y in zip(names, ys[1:-1]):
        draw.text((8 + rng.randint(0, w // 2), y), name, font=street_font, fill=(120, 120, 130), anchor="lm")
    if labels:
        label_font = font(10, bold=True)
        for store in stores:
            x, y = store["x"] * w / 100, store["y"] * h / 60
            text = str(store.get("district") or store.get("name", ""))
            tw = draw.textlength(text, font=label_font)
            draw.rounded_rectangle([x - tw / 2 - 4, y + 12, x + tw / 2 + 4, y + 26], radius=4, fill=WHITE,
                                   outline=primary, width=1)
            draw.text((x, y + 19), text, font=label_font, fill=mix(primary, INK, 0.4), anchor="mm")
    hx, hy = home[0] * w / 100, home[1] * h / 60
    draw.ellipse([hx - 18, hy - 18, hx + 18, hy + 18], fill=(*mix(accent, WHITE, 0.6),))  # your area
    return png(image)


def _cuts(rng: random.Random, length: int, low: int, high: int) -> list[int]:
    """Street positions: irregular spacing, from 0 to `length`."""
    cuts = [0]
    while cuts[-1] < length:
        cuts.append(cuts[-1] + rng.randint(low, high))
    if len(cuts) > 2 and length - cuts[-2] < low // 2:  # no sliver of a block at the edge
        cuts.pop()
    cuts[-1] = length
    return cuts
