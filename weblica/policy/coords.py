"""Coordinate conventions of model families, and their exact conversion to and from viewport pixels.

The env only knows absolute viewport pixels (1280x720). Models answer in their own frame:

- ``relative1000`` (Qwen3-VL): integers on a 0-1000 grid over each axis, whatever the image size.
- ``smart_resize`` (Qwen2.5-VL): absolute pixels of the image *as the model saw it*, i.e. after the
  processor's smart resize to multiples of 28 (1280x720 becomes 1288x728).
- ``viewport``: plain viewport pixels (API models that are shown the raw screenshot).

A policy converts the raw call dicts *before* they are validated into env `Action`s, because a model's
in-range coordinate (y=900 on the 0-1000 grid) may be out of range in viewport pixels.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH

# Qwen2.5-VL's processor defaults (preprocessor_config.json of the released checkpoints).
QWEN25_FACTOR = 28
QWEN25_MIN_PIXELS = 4 * 28 * 28
QWEN25_MAX_PIXELS = 16384 * 28 * 28

CONVENTIONS = ("relative1000", "smart_resize", "viewport")

# Argument names that hold coordinates, by axis; aliases (`type` with x/y) use the same names.
X_KEYS = ("x", "x1", "x2")
Y_KEYS = ("y", "y1", "y2")


def smart_resize(height: int, width: int, factor: int = QWEN25_FACTOR, min_pixels: int = QWEN25_MIN_PIXELS,
                 max_pixels: int = QWEN25_MAX_PIXELS) -> tuple[int, int]:
    """(height, width) of the image a Qwen2-/2.5-VL model sees: both sides multiples of `factor`, area
    within [min_pixels, max_pixels], aspect ratio kept as closely as possible (the processor's algorithm)."""
    if height <= 0 or width <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio must be below 200, got {width}x{height}")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


@dataclass(frozen=True)
class CoordinateFrame:
    """A model's coordinate frame: `model_width` x `model_height` units span the viewport."""

    convention: str
    model_width: float
    model_height: float
    viewport_width: int = VIEWPORT_WIDTH
    viewport_height: int = VIEWPORT_HEIGHT

    @classmethod
    def for_convention(cls, convention: str, viewport_width: int = VIEWPORT_WIDTH,
                       viewport_height: int = VIEWPORT_HEIGHT, **resize: int) -> "CoordinateFrame":
        """The frame of a named convention; `resize` passes factor/min_pixels/max_pixels to smart_resize."""
        if convention == "relative1000":
            return cls(convention, 1000, 1000, viewport_width, viewport_height)
        if convention == "smart_resize":
            h, w = smart_resize(viewport_height, viewport_width, **resize)
            return cls(convention, w, h, viewport_width, viewport_height)
        if convention == "viewport":
            return cls(convention, viewport_width, viewport_height, viewport_width, viewport_height)
        raise ValueError(f"unknown coordinate convention '{convention}'; use one of {', '.join(CONVENTIONS)}")

    def to_viewport(self, x: float, y: float) -> tuple[float, float]:
        """Model coordinates -> viewport pixels, clamped into the viewport (the grid's far edge, 1000,
        is one past the last pixel; models do emit it)."""
        px = x * self.viewport_width / self.model_width
        py = y * self.viewport_height / self.model_height
        return _clamp(px, self.viewport_width), _clamp(py, self.viewport_height)

    def from_viewport(self, px: float, py: float) -> tuple[int, int]:
        """Viewport pixels -> the integer model coordinates a model of this family would write."""
        return (round(px * self.model_width / self.viewport_width),
                round(py * self.model_height / self.viewport_height))

    def describe(self) -> str:
        """One sentence for the system prompt telling the model which frame to answer in."""
        if self.convention == "relative1000":
            return ("Coordinates are relative: integers from 0 to 1000 on each axis, (0, 0) the top-left "
                    "and (1000, 1000) the bottom-right corner of the screenshot.")
        return (f"Coordinates are absolute pixels of the screenshot, which is {int(self.model_width)}x"
                f"{int(self.model_height)}; (0, 0) is the top-left corner.")

    def convert_call(self, call: Any) -> Any:
        """A raw tool call dict with its coordinate arguments mapped to viewport pixels; anything that is
        not a well-formed call is returned unchanged so the action validator reports it."""
        if self.convention == "viewport" or not isinstance(call, dict):
            return call
        if "function" in call and isinstance(call["function"], dict):
            call = call["function"]
        key = next((k for k in ("arguments", "args", "parameters") if k in call), None)
        args = call.get(key) if key else None
        if not isinstance(args, dict):
            return call
        args = dict(args)
        if "coordinate" in args and isinstance(args["coordinate"], (list, tuple)) and len(args["coordinate"]) == 2:
            args["x"], args["y"] = args.pop("coordinate")  # computer-use style [x, y]
        for xk, yk in zip(X_KEYS, Y_KEYS):
            if xk in args and yk in args and _is_number(args[xk]) and _is_number(args[yk]):
                args[xk], args[yk] = self.to_viewport(float(args[xk]), float(args[yk]))
        return {**call, key: args}


def frame_for_model_type(model_type: str | None) -> CoordinateFrame:
    """The coordinate frame a checkpoint of this Hugging Face `model_type` was trained with."""
    if model_type and model_type.startswith("qwen3_vl"):
        return CoordinateFrame.for_convention("relative1000")
    if model_type in ("qwen2_5_vl", "qwen2_vl"):
        return CoordinateFrame.for_convention("smart_resize")
    return CoordinateFrame.for_convention("viewport")


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    if isinstance(value, str):
        try:
            return math.isfinite(float(value))
        except ValueError:
            return False
    return False


def _clamp(value: float, limit: int) -> float:
    # the env accepts 0 <= v < limit; an out-of-range value goes to the nearest pixel inside
    return value if 0 <= value < limit else min(max(value, 0.0), limit - 1.0)
