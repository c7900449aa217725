"""Synth images: deterministic bytes, one family per catalog kind, distinct heroes per site, speed."""
from __future__ import annotations

import hashlib
import io
import time

import imagehash
import pytest
from PIL import Image

from weblica.synth import images
from weblica.synth.spec import categories

PALETTE = {"primary": "#1f5fbf", "accent": "#f2a900"}


def test_item_image_is_deterministic_and_a_png_of_the_asked_size():
    a = images.item_image("Swift Pro", "Laptop", "#3366cc")
    assert a == images.item_image("Swift Pro", "Laptop", "#3366cc")
    assert Image.open(io.BytesIO(a)).size == images.SIZE
    assert a != images.item_image("Swift Pro", "Laptop", "#3366cc", seed=1)  # another site's composition
    assert Image.open(io.BytesIO(images.item_image("x", "Sofa", "#aa3344", size=(320, 200)))).size == (320, 200)


def test_every_catalog_kind_has_its_own_drawing_family():
    unmapped = [(cid, kind) for cid, cat in categories().items() for kind in cat["kinds"]
                if images.family_of(kind) == images.FALLBACK]
    assert unmapped == []
    assert images.family_of("Sneakers") == "shoe" and images.family_of("Credit card") == "card"
    assert images.family_of("Cardigan") == "top" and images.family_of("Laptop") == "laptop"  # no substring traps
    assert images.family_of("Quantum foam") == images.FALLBACK


def test_kinds_of_one_family_look_alike_and_other_families_do_not():
    def phash(kind: str, name: str) -> imagehash.ImageHash:
        return imagehash.phash(Image.open(io.BytesIO(images.item_image(name, kind, "#cc4422"))))
    assert len({hashlib.sha256(images.item_image(f"Item {i}", "Sneakers", "#cc4422")).hexdigest()
                for i in range(8)}) == 8  # one kind, eight different pictures
    assert phash("Sedan", "A") - phash("Book", "A") > 8


def test_heroes_differ_across_twenty_sites():
    heroes = [images.hero_image(f"site-{i:02d}", "Volt Hub", "Gadgets for every day", PALETTE, kind="Laptop")
              for i in range(20)]
    assert len({hashlib.sha256(h).hexdigest() for h in heroes}) == 20
    hashes = [imagehash.phash(Image.open(io.BytesIO(h))) for h in heroes]
    close = [(i, j) for i in range(20) for j in range(i + 1, 20) if hashes[i] - hashes[j] <= 4]
    assert close == []
    assert heroes[3] == images.hero_image("site-03", "Volt Hub", "Gadgets for every day", PALETTE, kind="Laptop")


def test_logo_chart_and_map_are_deterministic_and_charts_reject_bad_data():
    assert images.logo_image("Volt Hub", PALETTE) == images.logo_image("Volt Hub", PALETTE)
    chart = images.chart_image([3, 5, -2], ["a", "b", "c"], PALETTE, kind="line", title="T")
    assert chart == images.chart_image([3, 5, -2], ["a", "b", "c"], PALETTE, kind="line", title="T")
    with pytest.raises(ValueError, match="one label per value"):
        images.chart_image([1, 2], ["a"], PALETTE)
    with pytest.raises(ValueError, match="bar or line"):
        images.chart_image([1], ["a"], PALETTE, kind="pie")
    stores = [{"id": "s1", "x": 20, "y": 10, "district": "Old Town"}, {"id": "s2", "x": 70, "y": 40, "district": "Eastwood"}]
    m = images.map_image(stores, (50, 30), PALETTE)
    assert m == images.map_image(stores, (50, 30), PALETTE) and m != images.map_image(stores[:1], (50, 30), PALETTE)
    assert Image.open(io.BytesIO(m)).size == (700, 420)


def test_ms_per_item_image(capsys):
    kinds = [k for cat in categories().values() for k in cat["kinds"]]
    start = time.thread_time()   # CPU time of this thread (drawing and PNG run in it): load stretches wall time
    for i, kind in enumerate(kinds):
        images.item_image(f"Item {i}", kind, "#4477aa")
    ms = (time.thread_time() - start) / len(kinds) * 1000
    with capsys.disabled():
        print(f"\nitem_image: {ms:.1f} ms per image over {len(kinds)} kinds")
    assert ms < 200


def test_map_never_fails_on_any_home_or_size():
    stores = [{"id": "s1", "x": 20, "y": 10, "district": "Old Town"}]
    for i in range(60):  # street cuts land anywhere; a sliver block at the edge once broke drawing
        images.map_image(stores, (i % 100, i % 60), PALETTE, size=(700 - i, 420 - i))
