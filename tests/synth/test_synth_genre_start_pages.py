"""Genre-true pages (issue 38, point 2) for more genres: a work app (saas), a clinic (healthcare), a school
(education), a property portal (real-estate) and a restaurant open on what real sites of their kind open on
(a signed-in workspace with its sidebar, a find-a-doctor search, a course search with key dates, a buy/rent
property search, a restaurant's own page with a table booking), no shop skeleton or star ratings on any of
their pages, and their people and places drawn per site from the fake-data library (same-genre sites share at
most 5% of them). No browser: the validator's runs are in the report of the change."""
from __future__ import annotations

import itertools
import re

import pytest

from weblica.synth.genre_metrics import entity_names, overlap, page_text, shop_phrases
from weblica.synth.generate import build_site, emitted_drafts
from weblica.synth.site import render_pages
from weblica.synth.spec import sample_spec

GENRES = ("saas", "healthcare", "education", "real-estate", "restaurants")
# the start page's landmark (a form or region id) and a heading of the genre's own
LANDMARKS = {"saas": (r'<div class="app-shell" id="workspace-home">', r'<nav class="app-sidebar" aria-label="Workspace">'),
             "healthcare": (r'<form [^>]*id="find-doctor"[^>]*action="/doctors" method="get"', r">Our clinics</h2>"),
             "education": (r'<form [^>]*id="course-search"[^>]*action="/courses" method="get"', r">Key dates this term</h2>"),
             "real-estate": (r'<form [^>]*id="property-search"[^>]*action="/homes" method="get"', r">Just listed</h2>"),
             "restaurants": (r'<form [^>]*id="reserve-widget"[^>]*action="/reservations" method="get"', r">Opening hours</h2>")}
# what the catalog's start page says, which these start pages must not
CATALOG_HOME = ("Featured", "Shop by type", "New arrivals", "Top rated", "Best value", "Picked for you", "What people say")


@pytest.fixture(scope="module")
def sites():
    """Three sites of every genre, across skills, built once (no browser)."""
    return {g: [build_site(sample_spec(seed, category=g)) for seed in (11, 12, 13)] for g in GENRES}


@pytest.mark.parametrize("genre", GENRES)
def test_no_shop_skeleton_or_stars_on_any_page(sites, genre):
    for site in sites[genre]:
        for path, html in render_pages(site).items():
            found = shop_phrases(page_text(html))
            assert not found, (genre, site.spec.skill, path, found)


@pytest.mark.parametrize("genre", GENRES)
def test_the_start_page_is_the_genres_own(sites, genre):
    for site in sites[genre]:
        home = render_pages(site, ["/"])["/"]
        for landmark in LANDMARKS[genre]:
            assert re.search(landmark, home), (genre, site.spec.skill, landmark)
        text = page_text(home)
        assert not [h for h in CATALOG_HOME if h in text], (genre, site.spec.skill)
        # every link of the start page leads to a page of the site
        for href in set(re.findall(r'href="(/[^"?#]*)', home)):
            assert href in site.pages or href.startswith(("/_ds/", "/assets/", "/img/")), (genre, href)


def test_the_start_pages_searches_filter_the_genres_lists(sites):
    """The start page's search fields are the query parameters its result list filters by."""
    for site in sites["healthcare"]:
        directory = render_pages(site, ["/doctors"])["/doctors"]
        assert '"specialty": "eq"' in directory and '"insurance": "has"' in directory
    for site in sites["education"]:
        catalog = render_pages(site, ["/courses"])["/courses"]
        assert "data-rules='{\"q\": \"text\", \"dept\": \"eq\"}'" in catalog and "/assets/flows.js" in catalog
    for site in sites["real-estate"]:
        listings = render_pages(site, ["/homes"])["/homes"]
        assert '"bedrooms": "ge", "price": "le"' in listings
        home = site.data["homes"][0]
        page = page_text(render_pages(site, [f"/homes/{home['slug']}"])[f"/homes/{home['slug']}"])
        assert "Bathrooms" in page and "Bedrooms" in page


def test_a_workspace_home_lists_the_users_work_and_the_projects(sites):
    for site in sites["saas"]:
        home = page_text(render_pages(site, ["/"])["/"])
        assert re.search(r"Welcome back, \w", home)
        assert not re.search(r"\b0 open cards", home)  # the user has work waiting
        for project in site.data["projects"]:
            assert project["name"] in home
        assert "My work" in home and "Recent activity" in home
        assert not re.search(r"per user per month|Install", home)  # nothing of the app marketplace on it


def test_a_restaurant_books_a_table_from_its_start_page(sites):
    for site in sites["restaurants"]:
        assert "/reservations" in site.pages
        drafts = [d for d in emitted_drafts(site) if d.start_path == "/" and {"op": "click", "sel": "#find-table"} in d.plan]
        assert len(drafts) == 1
        plan = drafts[0].plan
        assert [s["sel"] for s in plan[:3]] == ["#f-day", "#f-time", "#f-party"]  # the start page's widget
        assert plan[-1] == {"op": "click", "sel": "#book-table"}
        reserve = render_pages(site, ["/reservations"])["/reservations"]
        assert 'data-api="/api/table_bookings"' in reserve and 'id="book-table"' in reserve


def test_hidden_content_skips_home_items_where_the_genre_has_its_own_start_page():
    for genre in GENRES:
        site = build_site(sample_spec(5, "hidden-content", genre))
        home = render_pages(site, ["/"])["/"]
        for draft in emitted_drafts(site):
            first = next(s for s in draft.plan if "sel" in s)
            if draft.start_path == "/" and first["sel"].startswith("[data-link=item-"):
                assert first["sel"][1:-1].replace("=", '="') + '"' in home, (genre, first)


def _entities(site) -> set[str]:
    return entity_names(site.data, site.name, list(site.cat["makers"]))


@pytest.mark.parametrize("genre", GENRES)
def test_same_genre_sites_share_at_most_5_percent_of_their_names(genre):
    sites = [build_site(sample_spec(seed, category=genre)) for seed in range(100, 106)]
    entity_sets = [_entities(s) for s in sites]
    assert all(len(e) >= 10 for e in entity_sets)
    shares = [overlap(a, b) for a, b in itertools.combinations(entity_sets, 2)]
    assert max(shares) <= 0.05, (genre, max(shares))
