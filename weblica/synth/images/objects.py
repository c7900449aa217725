"""One drawing per family of things (a shoe, trousers, a car, a house…), in a Pen's unit box.

Each drawing takes the pen, the item's colours, a seeded rng (for details: laces or none, a pocket,
how many windows are lit) and the item's kind and name in lower case (for sub-variants: a boot is a
taller shoe, a van a boxier car). `ASPECT` is each drawing's natural width/height, so the composer can
give it a box of the right shape.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

from weblica.synth.images.canvas import RGB, Pen, font, mix

WHITE, BLACK = (255, 255, 255), (24, 24, 28)
SKIN = [(241, 204, 176), (224, 172, 128), (198, 134, 92), (141, 85, 54), (96, 62, 42), (250, 220, 196)]
HAIR = [(40, 30, 25), (90, 60, 35), (160, 110, 60), (210, 180, 120), (120, 120, 125), (60, 40, 30)]


@dataclass(frozen=True)
class Colors:
    body: RGB
    dark: RGB
    light: RGB
    accent: RGB

    @classmethod
    def of(cls, body: RGB, accent: RGB) -> "Colors":
        return cls(body, mix(body, BLACK, 0.45), mix(body, WHITE, 0.6), accent)


Draw = Callable[[Pen, Colors, random.Random, str, str], None]
DRAWINGS: dict[str, Draw] = {}
ASPECT: dict[str, float] = {}


def family(name: str, aspect: float) -> Callable[[Draw], Draw]:
    def register(fn: Draw) -> Draw:
        DRAWINGS[name], ASPECT[name] = fn, aspect
        return fn
    return register


# ---- clothing ----------------------------------------------------------------------------------------
@family("shoe", 2.0)
def shoe(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    boot = "boot" in kind or "boot" in name
    dress_shoe = any(w in kind + name for w in ("loafer", "oxford", "heel"))
    top = 0.02 if boot else 0.2
    p.poly([(0.03, 0.84), (0.05, top + 0.1), (0.2, top), (0.33, top + 0.16 if not boot else top),
            (0.44, top + 0.02 if not dress_shoe else 0.4), (0.55, 0.3 if not dress_shoe else 0.42),
            (0.64, 0.46), (0.86, 0.58), (0.97, 0.68), (0.98, 0.84)], fill=c.body, outline=c.dark, width=0.015)
    if dress_shoe:
        p.rect(0.03, 0.8, 0.98, 0.9, fill=c.dark, radius=0.03)
        p.rect(0.03, 0.84, 0.2, 0.98, fill=c.dark)  # heel block
        p.line([(0.42, 0.5), (0.6, 0.48)], fill=c.light, width=0.025)
        return
    sole = WHITE if rng.random() < 0.7 else c.light
    p.rect(0.02, 0.78, 0.99, 0.9, fill=sole, radius=0.04, outline=mix(sole, BLACK, 0.25), width=0.01)
    p.rect(0.02, 0.88, 0.99, 0.97, fill=mix(c.dark, BLACK, 0.4), radius=0.03)
    p.poly([(0.75, 0.56), (0.97, 0.68), (0.98, 0.8), (0.78, 0.8)], fill=mix(c.body, WHITE, 0.35))  # toe cap
    stripe = c.accent
    p.line([(0.18, 0.66), (0.42, 0.6), (0.66, 0.66), (0.52, 0.52), (0.28, 0.56)], fill=stripe, width=0.045)
    p.rect(0.04, top + 0.14, 0.14, 0.78, fill=c.dark, radius=0.02)  # heel counter
    for i in range(5 if boot else 4):  # laces up the tongue
        u = 0.42 + i * 0.055
        v = (top + 0.12 if boot else 0.3) + i * 0.07
        p.line([(u - 0.04, v + 0.03), (u + 0.05, v - 0.02)], fill=WHITE, width=0.028)
        p.circle(u - 0.045, v + 0.035, 0.012, fill=c.dark)


@family("trousers", 0.62)
def trousers(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    flare = 0.04 if "jean" in kind else rng.uniform(-0.02, 0.05)
    p.poly([(0.18, 0.07), (0.82, 0.07), (0.86 + flare, 0.98), (0.55, 0.98), (0.5, 0.3), (0.45, 0.98),
            (0.14 - flare, 0.98)], fill=c.body, outline=c.dark, width=0.008)
    p.rect(0.17, 0.0, 0.83, 0.08, fill=c.dark, radius=0.01)
    for u in (0.25, 0.42, 0.58, 0.75):  # belt loops
        p.rect(u - 0.012, 0.0, u + 0.012, 0.1, fill=mix(c.dark, BLACK, 0.3))
    stitch = (230, 150, 60) if "jean" in kind else c.light
    p.line([(0.5, 0.08), (0.5, 0.28)], fill=c.dark, width=0.01)  # fly
    p.line([(0.2, 0.1), (0.32, 0.24)], fill=stitch, width=0.008)  # front pockets
    p.line([(0.8, 0.1), (0.68, 0.24)], fill=stitch, width=0.008)
    p.line([(0.3, 0.3), (0.3, 0.96)], fill=mix(c.body, BLACK, 0.2), width=0.005)  # crease/seam
    p.line([(0.7, 0.3), (0.7, 0.96)], fill=mix(c.body, BLACK, 0.2), width=0.005)
    if rng.random() < 0.5:  # rolled cuffs
        p.rect(0.14 - flare, 0.92, 0.45, 0.98, fill=c.light)
        p.rect(0.55, 0.92, 0.86 + flare, 0.98, fill=c.light)


@family("top", 1.05)
def top(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    coat = any(w in kind + name for w in ("jacket", "parka", "trench", "blazer", "bomber", "coat"))
    hem = 1.0 if coat else 0.9
    p.poly([(0.4, 0.03), (0.26, 0.08), (0.04, 0.62), (0.15, 0.67), (0.28, 0.35), (0.28, hem), (0.72, hem),
            (0.72, 0.35), (0.85, 0.67), (0.96, 0.62), (0.74, 0.08), (0.6, 0.03)], fill=c.body, outline=c.dark,
           width=0.01)
    p.rect(0.04, 0.58, 0.16, 0.66, fill=c.dark)  # cuffs
    p.poly([(0.84, 0.66), (0.96, 0.6), (0.97, 0.63), (0.85, 0.69)], fill=c.dark)
    if coat:
        p.poly([(0.4, 0.03), (0.5, 0.4), (0.36, 0.28)], fill=c.dark)  # lapels
        p.poly([(0.6, 0.03), (0.5, 0.4), (0.64, 0.28)], fill=c.dark)
        p.line([(0.5, 0.4), (0.5, hem)], fill=c.dark, width=0.012)
        for v in (0.5, 0.66, 0.82):
            p.circle(0.53, v, 0.015, fill=c.accent)
        p.rect(0.32, 0.7, 0.44, 0.74, fill=c.dark)
        p.rect(0.56, 0.7, 0.68, 0.74, fill=c.dark)
    else:
        p.poly([(0.4, 0.03), (0.5, 0.16), (0.6, 0.03), (0.56, 0.01), (0.5, 0.08), (0.44, 0.01)], fill=c.light)
        for v in (0.22, 0.38, 0.54, 0.7):
            p.circle(0.5, v, 0.013, fill=c.dark)
        if rng.random() < 0.5:
            p.rect(0.32, 0.24, 0.43, 0.34, fill=None, outline=c.dark, width=0.008)


@family("dress", 0.7)
def dress(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.poly([(0.36, 0.02), (0.42, 0.02), (0.44, 0.12), (0.56, 0.12), (0.58, 0.02), (0.64, 0.02), (0.68, 0.38),
            (0.95, 0.98), (0.05, 0.98), (0.32, 0.38)], fill=c.body, outline=c.dark, width=0.008)
    p.rect(0.31, 0.36, 0.69, 0.42, fill=c.accent)  # belt
    for i in range(6):  # skirt folds
        u = 0.2 + i * 0.12
        p.line([(0.5 + (u - 0.5) * 0.3, 0.45), (u, 0.96)], fill=mix(c.body, BLACK, 0.15), width=0.006)


@family("scarf", 0.8)
def scarf(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.ellipse(0.2, 0.0, 0.8, 0.3, fill=None, outline=c.body, width=0.1)
    p.poly([(0.22, 0.15), (0.42, 0.2), (0.45, 0.9), (0.25, 0.9)], fill=c.body)
    p.poly([(0.5, 0.2), (0.7, 0.14), (0.74, 0.8), (0.54, 0.82)], fill=mix(c.body, BLACK, 0.12))
    for v in (0.4, 0.6):
        p.line([(0.23, v), (0.44, v)], fill=c.accent, width=0.03)
        p.line([(0.52, v - 0.03), (0.72, v - 0.04)], fill=c.accent, width=0.03)
    for i in range(6):
        p.line([(0.26 + i * 0.035, 0.9), (0.26 + i * 0.035, 0.98)], fill=c.dark, width=0.01)
        p.line([(0.55 + i * 0.035, 0.82), (0.55 + i * 0.035, 0.9)], fill=c.dark, width=0.01)


# ---- furniture and home ----------------------------------------------------------------------------------
@family("chair", 0.8)
def chair(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    legs = mix(c.dark, (120, 90, 60), 0.5)
    stool = "stool" in kind + name
    for u0, u1 in ((0.18, 0.16), (0.8, 0.84), (0.3, 0.3), (0.9, 0.92)):
        p.line([(u0, 0.6), (u1, 1.0)], fill=legs, width=0.035)
    if not stool:
        p.rect(0.16, 0.02, 0.3, 0.6, fill=c.body, radius=0.03)  # backrest
        p.rect(0.2, 0.1, 0.26, 0.5, fill=c.light, radius=0.02)
    p.poly([(0.12, 0.54), (0.8, 0.54), (0.94, 0.64), (0.26, 0.64)], fill=c.body, outline=c.dark, width=0.01)
    p.rect(0.26, 0.64, 0.94, 0.68, fill=c.dark)


@family("sofa", 2.0)
def sofa(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.08, 0.12, 0.92, 0.6, fill=mix(c.body, BLACK, 0.12), radius=0.08)  # back
    p.rect(0.04, 0.5, 0.96, 0.86, fill=c.body, radius=0.06)  # seat base
    seats = rng.choice([2, 3])
    for i in range(seats):
        u0 = 0.14 + i * 0.72 / seats
        p.rect(u0 + 0.005, 0.46, u0 + 0.72 / seats - 0.005, 0.62, fill=c.light, radius=0.05)
    p.rect(0.0, 0.34, 0.14, 0.86, fill=mix(c.body, BLACK, 0.2), radius=0.06)  # arms
    p.rect(0.86, 0.34, 1.0, 0.86, fill=mix(c.body, BLACK, 0.2), radius=0.06)
    p.poly([(0.18, 0.3), (0.3, 0.26), (0.32, 0.46), (0.2, 0.48)], fill=c.accent)  # cushion
    for u in (0.08, 0.9):
        p.rect(u, 0.86, u + 0.03, 0.98, fill=BLACK)


@family("table", 1.6)
def table(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    wood = mix(c.body, (150, 100, 60), 0.5)
    p.poly([(0.06, 0.38), (0.88, 0.38), (0.98, 0.48), (0.14, 0.48)], fill=wood)
    p.rect(0.14, 0.48, 0.98, 0.53, fill=mix(wood, BLACK, 0.3))
    for u in (0.17, 0.93):
        p.rect(u, 0.53, u + 0.035, 1.0, fill=mix(wood, BLACK, 0.35))
    for u in (0.1, 0.84):
        p.rect(u, 0.47, u + 0.03, 0.9, fill=mix(wood, BLACK, 0.5))
    if rng.random() < 0.7:  # a vase on top
        p.ellipse(0.44, 0.14, 0.56, 0.4, fill=c.accent)
        p.line([(0.5, 0.16), (0.46, 0.02)], fill=(70, 140, 70), width=0.02)
        p.circle(0.46, 0.03, 0.04, fill=(230, 90, 110))


@family("lamp", 0.65)
def lamp(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    pendant = "pendant" in kind + name
    p.circle(0.5, 0.4 if pendant else 0.3, 0.32, fill=(255, 244, 200))  # glow
    if pendant:
        p.line([(0.5, 0.0), (0.5, 0.3)], fill=BLACK, width=0.012)
        p.poly([(0.5, 0.28), (0.85, 0.62), (0.15, 0.62)], fill=c.body, outline=c.dark, width=0.01)
        p.ellipse(0.4, 0.58, 0.6, 0.68, fill=(255, 250, 220))
        return
    p.poly([(0.28, 0.04), (0.72, 0.04), (0.9, 0.42), (0.1, 0.42)], fill=c.body, outline=c.dark, width=0.01)
    p.rect(0.1, 0.39, 0.9, 0.43, fill=c.dark)
    p.rect(0.475, 0.43, 0.525, 0.92, fill=mix(c.dark, (180, 160, 120), 0.4))
    p.ellipse(0.28, 0.88, 0.72, 1.0, fill=c.dark)
    p.line([(0.56, 0.43), (0.58, 0.56)], fill=BLACK, width=0.008)  # pull chain


@family("plant", 0.75)
def plant(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    green = rng.choice([(70, 140, 80), (50, 120, 70), (100, 160, 90)])
    for i in range(rng.randint(5, 8)):
        angle = -150 + i * 120 / 7 + rng.uniform(-8, 8)
        length = rng.uniform(0.35, 0.52)
        leaf(p, 0.5, 0.55, angle, length, mix(green, BLACK, 0.15 * (i % 2)))
    p.poly([(0.25, 0.55), (0.75, 0.55), (0.68, 1.0), (0.32, 1.0)], fill=c.body)
    p.rect(0.22, 0.52, 0.78, 0.6, fill=c.dark)


def leaf(p: Pen, u: float, v: float, angle: float, length: float, color: RGB) -> None:
    a = math.radians(angle)
    tip = (u + math.cos(a) * length * 0.75, v + math.sin(a) * length)
    side = (math.cos(a + math.pi / 2) * 0.07, math.sin(a + math.pi / 2) * 0.09)
    mid = ((u + tip[0]) / 2, (v + tip[1]) / 2)
    p.poly([(u, v), (mid[0] + side[0], mid[1] + side[1]), tip, (mid[0] - side[0], mid[1] - side[1])], fill=color)
    p.line([(u, v), tip], fill=mix(color, BLACK, 0.3), width=0.006)


@family("rug", 1.7)
def rug(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    outer = [(0.14, 0.2), (0.86, 0.2), (1.0, 0.9), (0.0, 0.9)]
    p.poly(outer, fill=c.body)
    p.poly([(0.2, 0.28), (0.8, 0.28), (0.9, 0.82), (0.1, 0.82)], fill=c.light)
    p.poly([(0.5, 0.34), (0.72, 0.55), (0.5, 0.76), (0.28, 0.55)], fill=c.accent)
    p.poly([(0.5, 0.44), (0.6, 0.55), (0.5, 0.66), (0.4, 0.55)], fill=c.body)
    for i in range(14):
        u = 0.02 + i * 0.07
        p.line([(u, 0.9), (u - 0.01, 0.97)], fill=c.dark, width=0.012)


# ---- electronics ------------------------------------------------------------------------------------------
def _screen_ui(p: Pen, u0: float, v0: float, u1: float, v1: float, c: Colors, rng: random.Random) -> None:
    p.rect(u0, v0, u1, v1, fill=mix(c.body, WHITE, 0.35))
    p.rect(u0, v0, u1, v0 + (v1 - v0) * 0.12, fill=c.body)
    cols = 3
    for i in range(6):
        x = u0 + (u1 - u0) * (0.1 + (i % cols) * 0.3)
        y = v0 + (v1 - v0) * (0.22 + (i // cols) * 0.36)
        p.rect(x, y, x + (u1 - u0) * 0.22, y + (v1 - v0) * 0.26, fill=mix(c.accent, WHITE, 0.15 * (i % 3)), radius=0.01)


@family("phone", 0.55)
def phone(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.08, 0.0, 0.92, 1.0, fill=BLACK, radius=0.08)
    p.rect(0.13, 0.04, 0.87, 0.96, fill=mix(c.body, WHITE, 0.2), radius=0.05)
    for i in range(12):  # app icons
        u, v = 0.2 + (i % 4) * 0.16, 0.16 + (i // 4) * 0.12
        p.rect(u, v, u + 0.11, v + 0.07, fill=mix(c.accent, c.body, (i % 5) / 5), radius=0.015)
    p.rect(0.38, 0.055, 0.62, 0.085, fill=BLACK, radius=0.015)  # notch
    p.rect(0.35, 0.9, 0.65, 0.915, fill=WHITE, radius=0.01)


@family("tablet", 0.78)
def tablet(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.02, 0.0, 0.98, 1.0, fill=BLACK, radius=0.06)
    _screen_ui(p, 0.07, 0.05, 0.93, 0.95, c, rng)
    p.circle(0.5, 0.025, 0.008, fill=(80, 80, 90))


@family("laptop", 1.5)
def laptop(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    monitor = "monitor" in kind
    p.rect(0.12, 0.02, 0.88, 0.74, fill=BLACK, radius=0.03)
    _screen_ui(p, 0.15, 0.06, 0.85, 0.7, c, rng)
    if monitor:
        p.rect(0.46, 0.74, 0.54, 0.92, fill=(90, 90, 100))
        p.ellipse(0.3, 0.9, 0.7, 1.0, fill=(70, 70, 80))
        return
    p.poly([(0.1, 0.76), (0.9, 0.76), (1.0, 0.92), (0.0, 0.92)], fill=(190, 192, 200))
    p.rect(0.0, 0.92, 1.0, 0.96, fill=(150, 152, 160), radius=0.02)
    for row in range(3):
        v = 0.79 + row * 0.035
        p.line([(0.14 - row * 0.02, v), (0.86 + row * 0.02, v)], fill=(120, 122, 130), width=0.012)
    p.poly([(0.42, 0.89), (0.58, 0.89), (0.59, 0.915), (0.41, 0.915)], fill=(160, 162, 170))


@family("headphones", 1.0)
def headphones(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.arc(0.12, 0.04, 0.88, 0.9, 180, 360, fill=c.dark, width=0.07)
    p.arc(0.16, 0.1, 0.84, 0.86, 200, 340, fill=c.light, width=0.02)
    for u in (0.04, 0.74):
        p.rect(u, 0.44, u + 0.22, 0.92, fill=c.body, radius=0.08)
        p.rect(u + (0.14 if u < 0.5 else 0.0), 0.5, u + (0.22 if u < 0.5 else 0.08), 0.86, fill=c.dark, radius=0.04)


@family("camera", 1.45)
def camera(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.28, 0.08, 0.58, 0.3, fill=(40, 40, 46), radius=0.04)  # viewfinder hump
    p.rect(0.02, 0.22, 0.98, 0.96, fill=(40, 40, 46), radius=0.08)
    p.rect(0.02, 0.4, 0.98, 0.82, fill=c.body)  # leatherette band
    p.circle(0.5, 0.58, 0.33, fill=(25, 25, 30))
    p.circle(0.5, 0.58, 0.26, fill=(70, 75, 90))
    p.circle(0.5, 0.58, 0.16, fill=(20, 30, 60))
    p.circle(0.45, 0.52, 0.05, fill=(180, 200, 240))
    p.rect(0.76, 0.1, 0.88, 0.22, fill=c.accent, radius=0.02)  # shutter
    p.rect(0.08, 0.28, 0.2, 0.36, fill=(230, 230, 235), radius=0.01)  # flash


# ---- vehicles and buildings -----------------------------------------------------------------------------------
CAR_BODIES = ("sedan", "hatchback", "coupe", "suv", "van", "pickup")
# words of a kind (or name) that say which body to draw; "estate" and "wagon" read as a long hatchback
_BODY_WORDS = (("pickup", "pickup"), ("truck", "pickup"), ("van", "van"), ("minivan", "van"),
               ("suv", "suv"), ("crossover", "suv"), ("4x4", "suv"), ("hatchback", "hatchback"), ("estate", "hatchback"),
               ("wagon", "hatchback"), ("coupe", "coupe"), ("coupé", "coupe"), ("sport", "coupe"), ("sedan", "sedan"),
               ("saloon", "sedan"))


def car_body(kind: str, name: str, rng: random.Random) -> str:
    """The body a car is drawn with: the one its kind (else its name) names, so a "Pickup" is a pickup;
    a kind that names none ("Electric", "Family car") gets one by the drawing's seed."""
    for text in (kind, name):
        words = [w.rstrip("s") for w in text.lower().replace("/", " ").replace("-", " ").split()]
        for word, body in _BODY_WORDS:
            if word in words:
                return body
    return rng.choice(CAR_BODIES)


@family("car", 2.3)
def car(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    body = car_body(kind, name, rng)
    tall = body in ("suv", "van", "pickup")
    roof = 0.12 if tall else 0.3 if body == "coupe" else 0.26
    low = 0.46 if tall else 0.52
    glass = (170, 205, 235)
    if body == "pickup":  # a tall cab in front, an open bed behind it: lower sides, a rim, no roof
        p.poly([(0.5, low), (0.56, roof), (0.8, roof), (0.86, low)], fill=c.body)
        p.rect(0.44, low - 0.02, 0.99, 0.8, fill=c.body, radius=0.08)
        p.rect(0.01, low + 0.1, 0.5, 0.8, fill=c.body, radius=0.04)  # the bed's side
        p.rect(0.01, low + 0.06, 0.46, low + 0.12, fill=c.dark)  # its rim
        p.poly([(0.56, low), (0.6, roof + 0.05), (0.78, roof + 0.05), (0.82, low)], fill=glass)
    else:
        if body == "van":
            p.poly([(0.03, low), (0.05, roof), (0.8, roof), (0.95, low)], fill=c.body)
            start, end = 0.1, 0.9
        elif body == "hatchback":  # a short tail that falls steeply
            p.poly([(0.08, low), (0.14, roof), (0.62, roof), (0.8, low)], fill=c.body)
            start, end = 0.15, 0.74
        elif body == "coupe":  # a low, long sloping roof and a single long door
            p.poly([(0.16, low), (0.4, roof), (0.6, roof), (0.84, low)], fill=c.body)
            start, end = 0.24, 0.78
        else:  # sedan and suv: a three-box outline
            p.poly([(0.2, low), (0.34, roof), (0.66, roof), (0.8, low)], fill=c.body)
            start, end = 0.26, 0.74
        p.rect(0.01, low - 0.02, 0.99, 0.8, fill=c.body, radius=0.1)
        p.poly([(start, low), (start + 0.1, roof + 0.05), (end - 0.07, roof + 0.05), (end, low)], fill=glass)
        if body != "coupe":
            p.rect(0.49, roof + 0.04, 0.52, low, fill=c.body)  # pillar
        if body == "van":
            p.rect(0.74, roof + 0.04, 0.76, low, fill=c.body)
    if body == "suv":
        p.rect(0.3, roof - 0.04, 0.7, roof - 0.01, fill=c.dark)  # roof rails
    p.line([(0.5 if body != "coupe" else 0.56, low), (0.5 if body != "coupe" else 0.56, 0.76)], fill=c.dark, width=0.01)
    p.rect(0.55 if body != "pickup" else 0.64, low + 0.06, 0.6 if body != "pickup" else 0.69, low + 0.09, fill=c.dark, radius=0.01)
    p.rect(0.93, low + 0.04, 0.99, low + 0.1, fill=(255, 240, 170), radius=0.02)  # headlight
    p.rect(0.01, low + 0.12, 0.04, low + 0.18, fill=(220, 40, 40), radius=0.01)
    p.rect(0.01, 0.72, 0.99, 0.8, fill=c.dark, radius=0.04)
    for u in (0.22, 0.78):
        p.circle(u, 0.8, 0.17 if not tall else 0.19, fill=(30, 30, 34))
        p.circle(u, 0.8, 0.09, fill=(190, 192, 200))
        p.circle(u, 0.8, 0.03, fill=(80, 80, 90))


@family("house", 1.3)
def house(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    wall = mix(c.body, WHITE, 0.55)
    roof = mix(c.body, (120, 50, 40), 0.6)
    narrow = "town" in kind
    l, r = (0.25, 0.75) if narrow else (0.1, 0.9)
    p.rect(l + 0.02 if not narrow else l + 0.05, 0.05, l + 0.12 if not narrow else l + 0.12, 0.3, fill=mix(roof, BLACK, 0.3))  # chimney
    p.poly([(l - 0.06, 0.48), (0.5, 0.06), (r + 0.06, 0.48)], fill=roof)
    p.rect(l, 0.46, r, 1.0, fill=wall, outline=mix(wall, BLACK, 0.3), width=0.01)
    p.rect(0.44, 0.68, 0.56, 1.0, fill=c.dark, radius=0.01)  # door
    p.circle(0.535, 0.85, 0.01, fill=(230, 200, 80))
    for u in ((l + 0.05, r - 0.17) if not narrow else (l + 0.03,)):
        for v in (0.56,) if not narrow else (0.54,):
            p.rect(u, v, u + 0.13 if not narrow else u + 0.11, v + 0.16, fill=(170, 210, 240), outline=WHITE, width=0.012)
            mid_u = u + (0.065 if not narrow else 0.055)
            p.line([(mid_u, v), (mid_u, v + 0.16)], fill=WHITE, width=0.01)
    p.circle(0.5, 0.32, 0.05, fill=(170, 210, 240), outline=WHITE, width=0.01)  # attic window
    p.rect(0.0, 0.97, 1.0, 1.0, fill=(90, 150, 80))


@family("building", 0.8)
def building(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    back = mix(c.body, WHITE, 0.4)
    p.rect(0.6, 0.2, 0.98, 1.0, fill=back)
    wall = mix(c.body, (200, 190, 180), 0.4)
    p.rect(0.08, 0.04, 0.7, 1.0, fill=wall, outline=mix(wall, BLACK, 0.3), width=0.008)
    p.rect(0.05, 0.0, 0.73, 0.05, fill=mix(wall, BLACK, 0.35))
    floors, cols = rng.randint(5, 7), 3
    for f in range(floors):
        for k in range(cols):
            u = 0.14 + k * 0.18
            v = 0.1 + f * (0.72 / floors)
            lit = rng.random() < 0.35
            p.rect(u, v, u + 0.12, v + 0.72 / floors * 0.6, fill=(255, 225, 140) if lit else (150, 185, 215))
    p.rect(0.3, 0.86, 0.48, 1.0, fill=c.dark)
    if any(w in kind for w in ("hotel", "hostel", "resort", "inn", "guest")):
        fnt = font(max(8, int(p.h * 0.05)), bold=True)
        p.rect(0.2, 0.8, 0.58, 0.85, fill=c.accent)
        p.text(0.39, 0.825, "HOTEL", fnt, WHITE)
    for u in (0.66, 0.78, 0.9):  # windows of the building behind
        for v in (0.3, 0.45, 0.6, 0.75):
            p.rect(u, v, u + 0.06, v + 0.08, fill=mix(back, BLACK, 0.2))


