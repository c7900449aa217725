"""Drawing primitives shared by the image families: colours, fonts, a pen that draws in a box's unit
coordinates (so one drawing can be placed, scaled and mirrored anywhere), and deterministic PNG bytes."""
from __future__ import annotations

import functools
import hashlib
import io
import random
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

RGB = tuple[int, int, int]
SUPERSAMPLE = 2  # drawn at twice the size and downsampled: Pillow's polygons have no antialiasing
_FONTS = Path(__file__).resolve().parents[2] / "browser" / "fonts"  # the fonts pages render with too


def rgb(hex_color: str) -> RGB:
    h = hex_color.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def mix(a: RGB, b: RGB, t: float) -> RGB:
    return tuple(int(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


def luminance(c: RGB) -> float:
    return (0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]) / 255


def seeded(*parts: object) -> random.Random:
    """An rng from the inputs only (never the process's hash seed or the clock)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return random.Random(int(digest[:16], 16))


@functools.lru_cache(maxsize=32)
def font(size: int, bold: bool = False, serif: bool = False) -> ImageFont.FreeTypeFont:
    name = ("DejaVuSerif" if serif else "DejaVuSans") + ("-Bold" if bold else "") + ".ttf"
    return ImageFont.truetype(str(_FONTS / name), size)


def fit_text(draw: ImageDraw.ImageDraw, text: str, max_width: float, size: int, bold: bool = False,
             serif: bool = False, min_size: int = 8) -> ImageFont.FreeTypeFont:
    """The largest font up to `size` in which `text` fits `max_width`."""
    while size > min_size and draw.textlength(text, font=font(size, bold, serif)) > max_width:
        size -= 2
    return font(size, bold, serif)


def wrap(draw: ImageDraw.ImageDraw, text: str, fnt: ImageFont.FreeTypeFont, max_width: float) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and draw.textlength(lines[-1] + " " + word, font=fnt) <= max_width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


class Pen:
    """Draws in the unit square of `box` (u right, v down; 0..1), mirrored when `flip`; stroke widths
    and radii are fractions of the box height."""

    def __init__(self, draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], flip: bool = False) -> None:
        self.d = draw
        self.x0, self.y0, self.x1, self.y1 = box
        self.w, self.h = self.x1 - self.x0, self.y1 - self.y0
        self.flip = flip

    def pt(self, u: float, v: float) -> tuple[float, float]:
        if self.flip:
            u = 1 - u
        return self.x0 + u * self.w, self.y0 + v * self.h

    def _box(self, u0: float, v0: float, u1: float, v1: float) -> list[float]:
        (a, b), (c, d) = self.pt(u0, v0), self.pt(u1, v1)
        return [min(a, c), min(b, d), max(a, c), max(b, d)]

    def px(self, frac: float) -> int:
        return max(1, int(frac * self.h))

    def poly(self, pts: list[tuple[float, float]], fill: RGB | None, outline: RGB | None = None, width: float = 0) -> None:
        xy = [self.pt(u, v) for u, v in pts]
        self.d.polygon(xy, fill=fill, outline=outline, width=self.px(width) if outline else 0)

    def rect(self, u0: float, v0: float, u1: float, v1: float, fill: RGB | None, radius: float = 0,
             outline: RGB | None = None, width: float = 0) -> None:
        self.d.rounded_rectangle(self._box(u0, v0, u1, v1), radius=self.px(radius) if radius else 0, fill=fill,
                                 outline=outline, width=self.px(width) if outline else 0)

    def ellipse(self, u0: float, v0: float, u1: float, v1: float, fill: RGB | None, outline: RGB | None = None,
                width: float = 0) -> None:
        self.d.ellipse(self._box(u0, v0, u1, v1), fill=fill, outline=outline, width=self.px(width) if outline else 0)

    def circle(self, u: float, v: float, r: float, fill: RGB | None, outline: RGB | None = None, width: float = 0) -> None:
        """A true circle of radius `r` (a fraction of the box height) whatever the box's aspect."""
        x, y = self.pt(u, v)
        rr = r * self.h
        self.d.ellipse([x - rr, y - rr, x + rr, y + rr], fill=fill, outline=outline, width=self.px(width) if outline else 0)

    def line(self, pts: list[tuple[float, float]], fill: RGB, width: float = 0.02) -> None:
        self.d.line([self.pt(u, v) for u, v in pts], fill=fill, width=self.px(width), joint="curve")

    def arc(self, u0: float, v0: float, u1: float, v1: float, start: float, end: float, fill: RGB, width: float) -> None:
        if self.flip:
            start, end = 180 - end, 180 - start
        self.d.arc(self._box(u0, v0, u1, v1), start, end, fill=fill, width=self.px(width))

    def text(self, u: float, v: float, text: str, fnt: ImageFont.FreeTypeFont, fill: RGB, anchor: str = "mm") -> None:
        self.d.text(self.pt(u, v), text, font=fnt, fill=fill, anchor=anchor)


def new_canvas(size: tuple[int, int], color: RGB) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", (size[0] * SUPERSAMPLE, size[1] * SUPERSAMPLE), color)
    return image, ImageDraw.Draw(image)


@functools.lru_cache(maxsize=16)
def gradient_mask(size: tuple[int, int], horizontal: bool = False) -> Image.Image:
    """A blend mask (0 at the top/left, 255 at the bottom/right); the same for every image of a size."""
    mask = Image.linear_gradient("L")
    return (mask.rotate(90) if horizontal else mask).resize(size)


def gradient(image: Image.Image, top: RGB, bottom: RGB, box: tuple[int, int, int, int] | None = None,
             horizontal: bool = False) -> None:
    x0, y0, x1, y1 = box or (0, 0, image.width, image.height)
    size = (max(1, x1 - x0), max(1, y1 - y0))
    image.paste(Image.composite(Image.new("RGB", size, bottom), Image.new("RGB", size, top),
                                gradient_mask(size, horizontal)), (x0, y0))


def png(image: Image.Image, size: tuple[int, int] | None = None) -> bytes:
    """PNG bytes with no metadata (no time, no text chunks): the same pixels give the same bytes."""
    if size is not None and image.size != size:
        factors = (image.width // size[0], image.height // size[1])
        if (size[0] * factors[0], size[1] * factors[1]) == image.size:
            # a supersampled canvas: the box average of each block is the antialiasing, at ~1/5 of a
            # LANCZOS resize's time (the item images were ~40% of writing a bundle) and no ringing
            image = image.reduce(factors)
        else:
            image = image.resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=1)
    return buffer.getvalue()
