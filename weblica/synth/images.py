"""Product and photo images drawn locally with Pillow. The same item always gives the same PNG bytes:
no timestamps or random state leak into the encoder."""
from __future__ import annotations

import functools
import hashlib
import io
import random

from PIL import Image, ImageDraw

SIZE = (240, 160)


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    return tuple(int(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


def item_image(name: str, kind: str, color: str, size: tuple[int, int] = SIZE) -> bytes:
    """A still life: gradient backdrop, a ground line, and a kind-dependent object silhouette."""
    seed = int(hashlib.sha256(f"{name}|{kind}".encode()).hexdigest()[:12], 16)
    rng = random.Random(seed)
    w, h = size
    base = _rgb(color)
    image = Image.new("RGB", size, _mix(base, (255, 255, 255), 0.75))
    draw = ImageDraw.Draw(image)
    top, bottom = _mix(base, (255, 255, 255), 0.85), _mix(base, (40, 40, 60), 0.35)
    # vertical gradient backdrop, composed in C rather than line by line
    mask = _gradient_mask(size)
    image.paste(Image.composite(Image.new("RGB", size, bottom), Image.new("RGB", size, top), mask))
    ground = int(h * rng.uniform(0.68, 0.8))
    draw.rectangle([0, ground, w, h], fill=_mix(base, (30, 30, 30), 0.45))
    shape = int(hashlib.sha256(kind.encode()).hexdigest()[:4], 16) % 4  # one silhouette family per kind
    cx, body = w // 2 + rng.randint(-30, 30), _mix(base, (20, 20, 20), rng.uniform(0.1, 0.4))
    if shape == 0:
        r = rng.randint(28, 46)
        draw.ellipse([cx - r, ground - 2 * r, cx + r, ground], fill=body)
    elif shape == 1:
        bw, bh = rng.randint(60, 110), rng.randint(40, 80)
        draw.rounded_rectangle([cx - bw // 2, ground - bh, cx + bw // 2, ground], radius=8, fill=body)
    elif shape == 2:
        bw, bh = rng.randint(60, 100), rng.randint(60, 95)
        draw.polygon([(cx - bw // 2, ground), (cx + bw // 2, ground), (cx, ground - bh)], fill=body)
    else:
        for i in range(3):
            r = rng.randint(14, 24)
            x = cx - 50 + i * 50
            draw.ellipse([x - r, ground - 2 * r, x + r, ground], fill=_mix(body, (255, 255, 255), i * 0.2))
    for _ in range(rng.randint(2, 5)):  # highlights, so photos of one kind still differ
        x, y, r = rng.randint(0, w), rng.randint(0, ground), rng.randint(3, 9)
        draw.ellipse([x - r, y - r, x + r, y + r], fill=_mix(top, (255, 255, 255), 0.6))
    return _png(image)


@functools.lru_cache(maxsize=8)
def _gradient_mask(size: tuple[int, int]) -> Image.Image:
    """The backdrop's blend mask; the same for every image of a size (callers only read it)."""
    return Image.linear_gradient("L").resize(size).point(lambda v: int(v * 0.6))


def map_image(stores: list[dict], home: tuple[int, int], palette: dict[str, str], size: tuple[int, int] = (700, 420)) -> bytes:
    """A city map: blocks, a river and roads; pins are drawn by the page over it so they stay clickable."""
    w, h = size
    rng = random.Random(f"map:{len(stores)}:{home}")
    image = Image.new("RGB", size, (236, 232, 222))
    draw = ImageDraw.Draw(image)
    for gx in range(0, w, 70):
        for gy in range(0, h, 60):
            shade = rng.randint(212, 228)
            draw.rectangle([gx + 8, gy + 8, gx + 62, gy + 52], fill=(shade, shade - 4, shade - 12))
    draw.line([(0, int(h * 0.7)), (w // 3, int(h * 0.55)), (w, int(h * 0.8))], fill=(150, 190, 230), width=18)
    for x in range(0, w, 140):
        draw.line([(x, 0), (x, h)], fill=(255, 255, 255), width=6)
    draw.line([(0, h // 3), (w, h // 3)], fill=(250, 215, 120), width=8)
    return _png(image)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=1)
    return buffer.getvalue()
