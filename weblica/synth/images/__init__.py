"""Images drawn locally with Pillow: item pictures that look like their kind (a shoe, a car, a house…),
hero banners, logos, dashboard charts and locator maps. Every image is a function of its inputs only:
the same inputs give the same PNG bytes (no timestamps, no process-seeded hashing, no clock).

`item_image` picks a drawing family from the kind (`family_of`), then composes it: a backdrop (studio
gradient, flat colour with a floor, split tones, a dotted pattern), the object at a seeded place, scale
and facing, a soft shadow, and sometimes a prop; so two items of one kind still differ.
"""
from __future__ import annotations

from PIL import Image, ImageDraw

from weblica.synth.images.canvas import Pen, gradient, mix, new_canvas, png, rgb, seeded
from weblica.synth.images.graphics import chart_image, hero_image, logo_image, map_image
from weblica.synth.images.kinds import FALLBACK, KEYWORDS, family_of
from weblica.synth.images import food_paper_music  # noqa: F401  (registers its drawings)
from weblica.synth.images.objects import ASPECT, DRAWINGS, Colors

SIZE = (240, 160)
FAMILIES = tuple(sorted(DRAWINGS))
# families that stand on the ground (a shadow under them) rather than fill the frame
_FLAT = {"card", "ticket", "document", "book", "photo", "course", "rug", "dish", "person"}

__all__ = ["SIZE", "FAMILIES", "FALLBACK", "KEYWORDS", "family_of", "item_image", "hero_image", "logo_image",
           "chart_image", "map_image"]


def item_image(name: str, kind: str, color: str, size: tuple[int, int] = SIZE, seed: int | str = 0) -> bytes:
    """A picture of `name`, a thing of `kind`, mainly in `color` (#rrggbb); `seed` varies the composition
    (a site's seed, so one item drawn for two sites differs)."""
    rng = seeded("item", name, kind, color, size, seed)
    fam = family_of(kind, name)
    body = rgb(color)
    accent = mix(tuple(255 - v for v in body), (230, 180, 60), 0.4)  # type: ignore[arg-type]
    colors = Colors.of(body, accent)
    image, draw = new_canvas(size, (255, 255, 255))
    w, h = image.size
    ground = _backdrop(image, draw, body, rng)
    aspect = ASPECT[fam]
    height = h * rng.uniform(0.62, 0.8) if fam not in _FLAT else h * rng.uniform(0.72, 0.86)
    width = height * aspect
    if width > w * 0.9:
        width = w * rng.uniform(0.78, 0.9)
        height = width / aspect
    cx = w / 2 + rng.uniform(-0.12, 0.12) * (w - width)
    bottom = ground + rng.uniform(0.0, 0.03) * h if fam not in _FLAT else (h + height) / 2 + rng.uniform(-0.04, 0.04) * h
    bottom = min(bottom, h - 2)
    box = (cx - width / 2, bottom - height, cx + width / 2, bottom)
    if fam not in _FLAT:
        draw.ellipse([box[0] + width * 0.05, bottom - h * 0.03, box[2] - width * 0.05, bottom + h * 0.03],
                     fill=mix(_shade_at(image, int(cx), min(h - 1, int(bottom))), (0, 0, 0), 0.25))
    DRAWINGS[fam](Pen(draw, box, flip=rng.random() < 0.5 and fam not in _READS), colors, rng, kind.lower(), name.lower())
    if rng.random() < 0.35:  # a sale sticker or sparkle, props that vary the frame
        _prop(draw, rng, w, h, accent)
    return png(image, size)


# drawings with text or a handedness people read: never mirrored
_READS = {"book", "ticket", "card", "document", "course", "bottle", "package", "person", "building", "keyboard"}


def _backdrop(image: Image.Image, draw: ImageDraw.ImageDraw, base: tuple[int, int, int], rng) -> float:
    """Paint a backdrop; returns the floor line (y) objects stand on."""
    w, h = image.size
    style = rng.randrange(4)
    tint = mix(base, (255, 255, 255), rng.uniform(0.72, 0.9))
    ground = h * rng.uniform(0.8, 0.9)
    if style == 0:  # studio sweep
        gradient(image, mix(tint, (255, 255, 255), 0.5), mix(tint, (90, 90, 110), 0.25))
    elif style == 1:  # wall and floor
        draw.rectangle([0, 0, w, ground], fill=tint)
        draw.rectangle([0, int(ground), w, h], fill=mix(tint, (120, 100, 80), 0.35))
    elif style == 2:  # split tones
        other = mix(tint, (255, 255, 255), 0.6)
        split = int(w * rng.uniform(0.3, 0.7))
        draw.rectangle([0, 0, split, h], fill=tint)
        draw.rectangle([split, 0, w, h], fill=other)
    else:  # dots
        draw.rectangle([0, 0, w, h], fill=mix(tint, (255, 255, 255), 0.4))
        step = int(h * rng.uniform(0.1, 0.16))
        r = max(2, step // 7)
        dot = mix(tint, base, 0.25)
        for y in range(step // 2, h, step):
            for x in range(step // 2 + (y // step % 2) * step // 2, w, step):
                draw.ellipse([x - r, y - r, x + r, y + r], fill=dot)
    return ground


def _shade_at(image: Image.Image, x: int, y: int) -> tuple[int, int, int]:
    return image.getpixel((max(0, min(image.width - 1, x)), max(0, min(image.height - 1, y))))[:3]


def _prop(draw: ImageDraw.ImageDraw, rng, w: int, h: int, accent: tuple[int, int, int]) -> None:
    from weblica.synth.images.canvas import font

    x = w * rng.choice([0.12, 0.88])
    y = h * 0.16
    r = h * 0.1
    if rng.random() < 0.5:
        draw.ellipse([x - r, y - r, x + r, y + r], fill=accent)
        label = rng.choice(["NEW", "SALE", "-20%", "HOT", "TOP"])
        draw.text((x, y), label, font=font(int(r * 0.62), bold=True), fill=(255, 255, 255), anchor="mm")
    else:
        for i in range(3):
            s = r * (0.5 - i * 0.12)
            cx, cy = x + (i - 1) * r * 0.9, y + (i % 2) * r * 0.8
            draw.polygon([(cx, cy - s), (cx + s * 0.3, cy), (cx, cy + s), (cx - s * 0.3, cy)], fill=(255, 255, 255))
            draw.polygon([(cx - s, cy), (cx, cy - s * 0.3), (cx + s, cy), (cx, cy + s * 0.3)], fill=(255, 255, 255))


def contact_sheet(entries: list[tuple[str, str, str]], columns: int = 6, size: tuple[int, int] = SIZE,
                  seed: int | str = 0) -> bytes:
    """A grid of item images with their kind under each: (name, kind, color) entries; for looking."""
    from weblica.synth.images.canvas import font

    rows = (len(entries) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * (size[0] + 8) + 8, rows * (size[1] + 26) + 8), (250, 250, 250))
    draw = ImageDraw.Draw(sheet)
    import io
    for i, (name, kind, color) in enumerate(entries):
        x, y = 8 + (i % columns) * (size[0] + 8), 8 + (i // columns) * (size[1] + 26)
        sheet.paste(Image.open(io.BytesIO(item_image(name, kind, color, size, seed))), (x, y))
        draw.text((x, y + size[1] + 3), f"{kind} · {family_of(kind, name)}", font=font(12), fill=(40, 40, 40))
    return png(sheet)
