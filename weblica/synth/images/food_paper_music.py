"""Drawings of food, paper things (books, tickets, documents, cards, courses), people, music gear and
pet supplies; registered in `objects.DRAWINGS` like the others (see `objects` for the contract)."""
from __future__ import annotations

import random

from weblica.synth.images.canvas import Pen, fit_text, font, mix, wrap
from weblica.synth.images.objects import BLACK, HAIR, SKIN, WHITE, Colors, leaf, family


# ---- food ------------------------------------------------------------------------------------------------
@family("fruit", 1.3)
def fruit(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    if "carrot" in name or ("veget" in kind and rng.random() < 0.6):
        for i in range(3):
            u = 0.3 + i * 0.2
            p.poly([(u - 0.08, 0.3), (u + 0.08, 0.3), (u + 0.01, 0.98), (u - 0.01, 0.98)], fill=(235, 130, 40))
            for j in range(3):
                p.line([(u - 0.04 + j * 0.03, 0.58 + j * 0.1), (u + 0.02 + j * 0.02, 0.6 + j * 0.1)],
                       fill=(190, 100, 30), width=0.01)
            for a in (-110, -90, -70):
                leaf(p, u, 0.3, a, 0.3, (70, 150, 60))
        return
    hues = [(210, 40, 45), (120, 180, 60), (245, 160, 30), (230, 200, 60), c.body]
    count = rng.choice([1, 2, 3])
    for i in range(count):
        u = 0.5 + (i - (count - 1) / 2) * 0.3
        r = 0.34 if count == 1 else 0.26
        color = hues[(i + rng.randrange(5)) % len(hues)]
        v = 1.0 - r
        p.circle(u, v, r, fill=color)
        p.circle(u - r * 0.35, v - r * 0.35, r * 0.25, fill=mix(color, WHITE, 0.5))
        p.line([(u, v - r * 0.9), (u + 0.02, v - r * 1.35)], fill=(100, 70, 40), width=0.025)
        leaf(p, u + 0.02, v - r * 1.2, -30, 0.2, (70, 150, 60))


@family("bottle", 0.45)
def bottle(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    glass = mix(c.body, WHITE, 0.25)
    p.rect(0.38, 0.0, 0.62, 0.08, fill=c.dark, radius=0.01)
    p.rect(0.4, 0.06, 0.6, 0.25, fill=glass)
    p.poly([(0.4, 0.24), (0.6, 0.24), (0.85, 0.4), (0.15, 0.4)], fill=glass)
    p.rect(0.15, 0.38, 0.85, 1.0, fill=glass, radius=0.06)
    p.rect(0.15, 0.52, 0.85, 0.8, fill=WHITE)
    label = (name.split()[-1] if name else kind)[:10].upper()
    p.text(0.5, 0.66, label, fit_text(p.d, label, p.w * 0.6, int(p.h * 0.07), bold=True), c.dark)
    p.rect(0.22, 0.42, 0.28, 0.95, fill=mix(glass, WHITE, 0.5), radius=0.02)  # highlight


@family("bread", 1.8)
def bread(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    crust = (196, 134, 70)
    p.ellipse(0.02, 0.2, 0.98, 0.95, fill=crust)
    p.rect(0.02, 0.6, 0.98, 0.95, fill=crust, radius=0.1)
    p.ellipse(0.1, 0.25, 0.9, 0.6, fill=mix(crust, WHITE, 0.2))
    for i in range(4):
        u = 0.22 + i * 0.17
        p.line([(u, 0.5), (u + 0.1, 0.3)], fill=(240, 215, 170), width=0.04)


@family("package", 0.8)
def package(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.poly([(0.1, 0.08), (0.9, 0.08), (0.96, 1.0), (0.04, 1.0)], fill=c.body)
    for i in range(12):  # crimped top seal
        u = 0.1 + i * 0.067
        p.poly([(u, 0.08), (u + 0.033, 0.0), (u + 0.067, 0.08)], fill=c.dark)
    p.ellipse(0.2, 0.3, 0.8, 0.72, fill=WHITE)
    word = (name.split()[-1] if name else kind)[:10]
    p.text(0.5, 0.51, word, fit_text(p.d, word, p.w * 0.5, int(p.h * 0.09), bold=True), c.dark)
    p.rect(0.1, 0.82, 0.9, 0.88, fill=c.accent)
    if "dog" in kind or "cat" in kind or "pet" in kind:  # a paw print
        p.circle(0.5, 0.94 - 0.02, 0.03, fill=WHITE)


@family("dish", 1.5)
def dish(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.ellipse(0.1, 0.2, 0.9, 0.98, fill=(250, 250, 248), outline=(210, 210, 205), width=0.01)
    p.ellipse(0.2, 0.32, 0.8, 0.86, fill=(238, 238, 234))
    k = kind + " " + name
    if "japan" in k or "sushi" in k or "noodle" in k:
        for i in range(4):
            u, v = 0.3 + (i % 2) * 0.22, 0.42 + (i // 2) * 0.2
            p.rect(u, v, u + 0.17, v + 0.16, fill=(30, 40, 35), radius=0.04)
            p.rect(u + 0.025, v + 0.03, u + 0.145, v + 0.13, fill=WHITE, radius=0.03)
            p.circle(u + 0.085, v + 0.08, 0.03, fill=(240, 110, 80))
    elif "mexic" in k:
        p.poly([(0.28, 0.72), (0.5, 0.36), (0.72, 0.72)], fill=(235, 200, 110))
        for j in range(5):
            p.circle(0.4 + j * 0.05, 0.6 - (j % 2) * 0.04, 0.04, fill=[(90, 160, 60), (220, 60, 50)][j % 2])
    elif "indian" in k or "curry" in k:
        p.ellipse(0.26, 0.4, 0.56, 0.8, fill=(250, 246, 236))
        p.ellipse(0.44, 0.38, 0.76, 0.78, fill=(220, 130, 40))
        p.circle(0.6, 0.55, 0.05, fill=(240, 200, 90))
    elif "vegan" in k or "salad" in k or "garden" in k:
        for j in range(9):
            p.circle(0.32 + (j % 3) * 0.16, 0.46 + (j // 3) * 0.12, 0.07, fill=[(90, 170, 70), (60, 140, 60), (230, 70, 60)][j % 3])
    else:  # pasta with sauce and basil; a bistro plate gets a steak too
        for j in range(5):
            p.ellipse(0.3 + j * 0.03, 0.42 + j * 0.02, 0.7 - j * 0.03, 0.78 - j * 0.02, fill=None,
                      outline=(240, 200, 90), width=0.02)
        p.circle(0.5, 0.6, 0.09, fill=(200, 50, 40))
        leaf(p, 0.52, 0.56, -40, 0.12, (60, 150, 60))
    p.rect(0.0, 0.3, 0.03, 0.95, fill=(180, 180, 185), radius=0.01)  # fork and knife
    p.rect(0.97, 0.3, 1.0, 0.95, fill=(180, 180, 185), radius=0.01)


# ---- paper things --------------------------------------------------------------------------------------------
@family("book", 0.7)
def book(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.1, 0.03, 0.97, 1.0, fill=(235, 230, 215))  # page block
    p.rect(0.03, 0.0, 0.92, 0.97, fill=c.body)
    p.rect(0.03, 0.0, 0.1, 0.97, fill=c.dark)  # spine
    p.rect(0.16, 0.06, 0.86, 0.9, fill=None, outline=c.light, width=0.008)
    emblem = rng.randrange(3)
    if emblem == 0:
        p.circle(0.51, 0.62, 0.12, fill=c.accent)
    elif emblem == 1:
        p.poly([(0.24, 0.76), (0.42, 0.5), (0.54, 0.64), (0.64, 0.54), (0.8, 0.76)], fill=c.accent)
    else:
        p.poly([(0.51, 0.46), (0.63, 0.62), (0.51, 0.78), (0.39, 0.62)], fill=c.accent)
    title = (name or kind).title()
    fnt = font(max(8, int(p.h * 0.075)), bold=True, serif=True)
    for i, line in enumerate(wrap(p.d, title, fnt, p.w * 0.64)[:3]):
        p.text(0.51, 0.14 + i * 0.09, line, fnt, WHITE)
    p.text(0.51, 0.85, kind.upper()[:14], font(max(7, int(p.h * 0.04))), c.light)


@family("ticket", 2.0)
def ticket(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.0, 0.1, 1.0, 0.9, fill=c.body, radius=0.06)
    p.rect(0.72, 0.1, 1.0, 0.9, fill=c.light, radius=0.06)
    p.rect(0.72, 0.1, 0.78, 0.9, fill=c.light)
    for end in (0.1, 0.9):
        p.circle(0.72, end, 0.07, fill=None)
    for i in range(9):  # perforation
        p.circle(0.72, 0.16 + i * 0.085, 0.012, fill=WHITE)
    big = font(max(8, int(p.h * 0.13)), bold=True)
    p.text(0.36, 0.3, "ADMIT ONE", big, WHITE)
    title = (name or kind).upper()
    p.text(0.36, 0.52, title, fit_text(p.d, title, p.w * 0.6, int(p.h * 0.1), bold=True), c.light)
    p.text(0.36, 0.7, f"ROW {rng.choice('ABCDEFGH')}  SEAT {rng.randint(1, 40)}", font(max(7, int(p.h * 0.07))), WHITE)
    for i in range(14):  # barcode
        u = 0.79 + i * 0.013
        p.rect(u, 0.28, u + (0.004 if i % 3 else 0.008), 0.72, fill=BLACK)


@family("document", 0.75)
def document(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.poly([(0.08, 0.0), (0.72, 0.0), (0.92, 0.2), (0.92, 1.0), (0.08, 1.0)], fill=WHITE,
           outline=(190, 190, 190), width=0.008)
    p.poly([(0.72, 0.0), (0.72, 0.2), (0.92, 0.2)], fill=(220, 220, 220))
    p.rect(0.16, 0.08, 0.6, 0.14, fill=c.body)
    for i in range(8):
        p.rect(0.16, 0.22 + i * 0.07, 0.84 - (0.2 if i % 3 == 2 else 0), 0.245 + i * 0.07, fill=(200, 200, 205))
    p.circle(0.7, 0.84, 0.09, fill=None, outline=c.accent, width=0.02)
    p.line([(0.16, 0.88), (0.24, 0.82), (0.3, 0.9), (0.38, 0.84), (0.44, 0.88)], fill=(40, 60, 140), width=0.012)


@family("card", 1.58)
def card(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.0, 0.0, 1.0, 1.0, fill=c.body, radius=0.08)
    p.poly([(0.55, 0.0), (1.0, 0.0), (1.0, 1.0), (0.3, 1.0)], fill=mix(c.body, WHITE, 0.12))
    p.rect(0.1, 0.3, 0.26, 0.52, fill=(220, 190, 100), radius=0.03)  # chip
    p.line([(0.1, 0.41), (0.26, 0.41)], fill=(170, 140, 60), width=0.01)
    digits = f"{rng.randint(1000, 9999)}"
    p.text(0.08, 0.7, "••••  ••••  ••••  " + digits, font(max(8, int(p.h * 0.1))), WHITE, anchor="lm")
    p.text(0.08, 0.88, (name or kind).upper()[:22], font(max(7, int(p.h * 0.07))), mix(WHITE, c.body, 0.2), anchor="lm")
    p.circle(0.78, 0.2, 0.1, fill=(235, 80, 60))
    p.circle(0.86, 0.2, 0.1, fill=(250, 180, 40))


@family("course", 1.6)
def course(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.0, 0.0, 1.0, 0.86, fill=mix(c.body, BLACK, 0.25), radius=0.04)
    p.rect(0.03, 0.05, 0.97, 0.8, fill=mix(c.body, WHITE, 0.1), radius=0.02)
    glyph = "".join(w[0] for w in (name or kind).split()[:2]).upper() or "A"
    p.text(0.22, 0.42, glyph, font(max(10, int(p.h * 0.3)), bold=True), WHITE)
    p.circle(0.66, 0.42, 0.2, fill=WHITE)
    p.poly([(0.62, 0.3), (0.62, 0.54), (0.76, 0.42)], fill=c.body)  # play
    p.rect(0.03, 0.9, 0.97, 0.95, fill=(210, 210, 215), radius=0.02)
    p.rect(0.03, 0.9, 0.03 + 0.94 * rng.uniform(0.2, 0.8), 0.95, fill=c.accent, radius=0.02)


@family("person", 1.0)
def person(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    skin, hair = rng.choice(SKIN), rng.choice(HAIR)
    medic = any(w in kind for w in ("dent", "pediat", "derma", "cardio", "physio", "optom", "doctor", "nurse",
                                    "therap", "clinic", "medic", "surgeon"))
    coat = (245, 246, 248) if medic else c.body
    p.ellipse(0.1, 0.66, 0.9, 1.3, fill=coat)  # shoulders
    p.rect(0.42, 0.56, 0.58, 0.72, fill=mix(skin, BLACK, 0.1))  # neck
    style = rng.randrange(3)
    if style == 2:  # long hair behind the head
        p.rect(0.26, 0.2, 0.74, 0.7, fill=hair, radius=0.12)
    p.ellipse(0.3, 0.16, 0.7, 0.64, fill=skin)
    if style == 0:
        p.poly([(0.28, 0.36), (0.32, 0.14), (0.5, 0.08), (0.68, 0.14), (0.72, 0.36), (0.62, 0.22), (0.38, 0.22)], fill=hair)
    else:
        p.ellipse(0.28, 0.1, 0.72, 0.34, fill=hair)
    p.circle(0.42, 0.4, 0.02, fill=BLACK)
    p.circle(0.58, 0.4, 0.02, fill=BLACK)
    p.arc(0.42, 0.44, 0.58, 0.54, 20, 160, fill=(150, 60, 60), width=0.015)
    if medic:
        p.poly([(0.42, 0.7), (0.5, 0.85), (0.58, 0.7), (0.5, 1.0)], fill=c.body)  # scrubs under the coat
        p.arc(0.36, 0.66, 0.64, 0.92, 0, 180, fill=(60, 60, 70), width=0.015)  # stethoscope
        p.circle(0.5, 0.93, 0.03, fill=(150, 150, 160))
    else:
        p.poly([(0.42, 0.7), (0.5, 0.8), (0.58, 0.7)], fill=c.light)  # collar


# ---- music, pets, other -----------------------------------------------------------------------------------------
@family("guitar", 0.45)
def guitar(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    small = "violin" in kind or "ukulele" in name
    p.rect(0.44, 0.0, 0.56, 0.1, fill=c.dark, radius=0.02)  # headstock
    p.rect(0.47, 0.08, 0.53, 0.55, fill=(120, 80, 45))  # neck
    p.circle(0.5, 0.62, 0.16 if not small else 0.13, fill=c.body)
    p.circle(0.5, 0.82, 0.2 if not small else 0.15, fill=c.body)
    p.circle(0.5, 0.68, 0.06, fill=BLACK)
    p.rect(0.42, 0.86, 0.58, 0.89, fill=c.dark)
    for i in range(4):
        u = 0.485 + i * 0.01
        p.line([(u, 0.06), (u, 0.87)], fill=(230, 230, 230), width=0.002)
    if small:
        p.line([(0.1, 0.45), (0.95, 0.9)], fill=(140, 100, 60), width=0.01)  # bow


@family("keyboard", 3.0)
def keyboard(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.0, 0.1, 1.0, 0.9, fill=(40, 40, 46), radius=0.06)
    for i in range(6):
        p.circle(0.1 + i * 0.06, 0.22, 0.035, fill=c.accent if i % 2 else (200, 200, 205))
    keys = 21
    for i in range(keys):
        u = 0.04 + i * 0.92 / keys
        p.rect(u, 0.36, u + 0.92 / keys - 0.004, 0.84, fill=WHITE)
    for i in range(keys - 1):
        if i % 7 in (2, 6):
            continue
        u = 0.04 + (i + 0.7) * 0.92 / keys
        p.rect(u, 0.36, u + 0.6 * 0.92 / keys, 0.64, fill=BLACK)


@family("drum", 1.2)
def drum(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.1, 0.3, 0.9, 0.85, fill=c.body)
    p.ellipse(0.1, 0.72, 0.9, 0.98, fill=c.body)
    for i in range(6):
        u = 0.14 + i * 0.144
        p.line([(u, 0.34), (u, 0.86)], fill=(210, 210, 215), width=0.015)
    p.ellipse(0.1, 0.18, 0.9, 0.42, fill=(240, 238, 230), outline=(190, 190, 195), width=0.02)
    p.line([(0.2, 0.0), (0.62, 0.3)], fill=(200, 160, 110), width=0.03)
    p.line([(0.82, 0.02), (0.42, 0.3)], fill=(200, 160, 110), width=0.03)


@family("microphone", 0.5)
def microphone(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.25, 0.0, 0.75, 0.4, fill=(170, 172, 178), radius=0.2)
    for i in range(5):
        p.line([(0.28, 0.08 + i * 0.07), (0.72, 0.08 + i * 0.07)], fill=(120, 122, 128), width=0.008)
    p.rect(0.22, 0.38, 0.78, 0.44, fill=c.body)
    p.poly([(0.32, 0.44), (0.68, 0.44), (0.58, 0.8), (0.42, 0.8)], fill=(40, 40, 46))
    p.rect(0.47, 0.8, 0.53, 0.96, fill=(60, 60, 66))
    p.ellipse(0.1, 0.94, 0.9, 1.0, fill=(50, 50, 56))


@family("speaker", 0.85)
def speaker(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.0, 0.0, 1.0, 1.0, fill=(35, 35, 40), radius=0.04)
    p.rect(0.06, 0.06, 0.94, 0.2, fill=c.body, radius=0.02)
    for i in range(5):
        p.circle(0.16 + i * 0.17, 0.13, 0.035, fill=(220, 220, 225))
    p.rect(0.06, 0.26, 0.94, 0.94, fill=(60, 58, 55))
    p.circle(0.5, 0.6, 0.28, fill=(25, 25, 28))
    p.circle(0.5, 0.6, 0.1, fill=(80, 80, 86))


@family("aquarium", 1.5)
def aquarium(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.rect(0.0, 0.05, 1.0, 0.95, fill=(150, 200, 235), outline=(60, 70, 80), width=0.03)
    p.rect(0.02, 0.2, 0.98, 0.93, fill=(90, 160, 215))
    p.rect(0.02, 0.84, 0.98, 0.93, fill=(200, 180, 140))
    for u in (0.12, 0.85):
        for a in (-100, -80):
            leaf(p, u, 0.86, a, 0.5, (60, 150, 80))
    for i in range(rng.randint(2, 4)):
        u, v = rng.uniform(0.25, 0.7), rng.uniform(0.35, 0.7)
        color = rng.choice([(250, 140, 40), (240, 220, 60), c.body])
        p.ellipse(u, v, u + 0.12, v + 0.1, fill=color)
        p.poly([(u + 0.11, v + 0.05), (u + 0.17, v), (u + 0.17, v + 0.1)], fill=color)
        p.circle(u + 0.03, v + 0.04, 0.012, fill=BLACK)


@family("cage", 0.8)
def cage(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    bars = mix(c.body, (200, 200, 205), 0.3)
    p.arc(0.1, 0.05, 0.9, 0.6, 180, 360, fill=bars, width=0.03)
    for i in range(9):
        u = 0.1 + i * 0.1
        p.line([(u, 0.32 if i in (0, 8) else 0.08 + abs(4 - i) * 0.04), (u, 0.9)], fill=bars, width=0.012)
    p.rect(0.05, 0.88, 0.95, 0.98, fill=c.dark, radius=0.02)
    p.line([(0.3, 0.6), (0.7, 0.6)], fill=(140, 100, 60), width=0.02)
    p.ellipse(0.42, 0.42, 0.6, 0.6, fill=(250, 210, 50))  # a bird on the perch
    p.poly([(0.6, 0.48), (0.66, 0.5), (0.6, 0.52)], fill=(240, 130, 40))


@family("cushion", 1.8)
def cushion(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    p.ellipse(0.0, 0.2, 1.0, 1.0, fill=c.body)
    p.ellipse(0.14, 0.34, 0.86, 0.86, fill=c.light)
    p.ellipse(0.2, 0.44, 0.8, 0.84, fill=mix(c.light, WHITE, 0.3))
    p.circle(0.5, 0.58, 0.07, fill=c.accent)


@family("photo", 1.5)
def photo(p: Pen, c: Colors, rng: random.Random, kind: str, name: str) -> None:
    """The fallback: a landscape snapshot (sky, sun, hills), coloured by the item."""
    p.rect(0.0, 0.0, 1.0, 1.0, fill=mix(c.body, WHITE, 0.6))
    p.circle(rng.uniform(0.2, 0.8), 0.28, 0.12, fill=(255, 220, 120))
    p.poly([(0.0, 1.0), (0.0, 0.62), (0.3, 0.34), (0.55, 0.66), (0.72, 0.48), (1.0, 0.72), (1.0, 1.0)], fill=c.body)
    p.poly([(0.0, 1.0), (0.0, 0.84), (0.4, 0.7), (1.0, 0.86), (1.0, 1.0)], fill=c.dark)
