"""Building one site bundle: pages rendered from jinja2 templates, images, data.json, task drafts.

A skill module receives a SiteBuilder, adds pages and task drafts; `write_bundle` lays them out as
`<out>/<site_id>/` with `site.json`, `data.json`, `tasks.jsonl` and the served files under `public/`
(only `public/` is ever served, so gold answers in tasks.jsonl never reach the browser).
"""
from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import jinja2

from weblica.env.task import Check, Task, TaskSource
from weblica.synth import images
from weblica.synth.data import make_items, make_makers, price_scale, site_name
from weblica.synth.page_grammar import compose, hero_copy, page_context
from weblica.synth.spec import SiteSpec, categories, synth_dir

PUBLIC = "public"
# category -> the builder of its catalog from the genre's own data (weblica/synth/genres registers them)
CATALOG_SOURCES: dict[str, Callable[["SiteBuilder", int], list[dict[str, Any]]]] = {}


# from this many units of a two-decimal currency on (a salary, an income limit, a house), a whole
# amount is written without its cents, as real sites do ("$93,000 a year", not "$93,000.00")
WHOLE_FROM = 10_000


def format_money(value: float, fmt: dict[str, Any], whole: bool = False) -> str:
    """`value` in the site's currency format; `whole`: a whole amount without its decimals ("$93,000")."""
    decimals = 0 if whole and float(value).is_integer() else int(fmt["decimals"])
    whole, _, frac = f"{abs(value):,.{decimals}f}".partition(".")
    text = whole.replace(",", fmt["thousands"]) + (fmt["decimal"] + frac if decimals else "")
    text = ("-" if value < 0 else "") + text
    return f"{fmt['currency']}{text}" if fmt["position"] == "prefix" else f"{text} {fmt['currency']}"


def format_date(iso: str, fmt: dict[str, Any]) -> str:
    return dt.date.fromisoformat(iso).strftime(fmt["date"])


@dataclass
class TaskDraft:
    """A task before validation: an abstract plan (element selectors, not pixels) and its negatives."""

    instruction: str
    start_path: str
    plan: list[dict[str, Any]]
    checks: list[Check]
    difficulty: str
    rubric: list[str]
    wrong_answers: list[str] = field(default_factory=list)
    wrong_urls: list[str] = field(default_factory=list)
    max_steps: int = 15
    # plan steps after the oracle's that a "do everything" negative also takes (every item added to the
    # cart, every other record toggled); validation runs them and the checks must reject the result
    maximal: list[dict[str, Any]] = field(default_factory=list)
    intent: str = ""  # the task grammar's intent id (weblica/synth/intents), for de-duplication and reports
    guided: bool = False  # an instruction that may say how to do it (hints); unguided ones never do


class SiteBuilder:
    """What skill modules use: the spec, a seeded rng, the data, and page/task registration."""

    def __init__(self, spec: SiteSpec) -> None:
        self.spec = spec
        self.rng = random.Random(f"site:{spec.site_id}:{spec.seed}")
        self.cat = categories()[spec.category]
        self.fmt = spec.style.locale_format
        self.name = site_name(spec, self.rng)
        self.data: dict[str, Any] = {"site_name": self.name}
        self.initial_state: dict[str, Any] = {}
        # what the backend refuses to store, per collection (weblica/serve/rules.py)
        self.record_rules: dict[str, list[dict[str, Any]]] = {}
        self.pages: dict[str, tuple[str, dict[str, Any]]] = {}
        self.files: dict[str, bytes | Callable[[], bytes]] = {}
        self.tasks: list[TaskDraft] = []
        self.nav: list[tuple[str, str]] = [("Home", "/")]
        self.public_json: dict[str, Any] = {}  # served as /assets/catalog.json for client-side pages
        self.features: set[str] = set()
        self.layout: Any = None  # the page grammar's Layout, chosen when the site is rendered

    # ---- content ---------------------------------------------------------------------------------
    def items(self, count: int = 30) -> list[dict[str, Any]]:
        """The site's catalog of `count` entities, made once: drawn from the genre's vocabulary, or, for a
        genre whose entities are its flow's own (an events site's programme), made by that genre
        (`CATALOG_SOURCES`), so one site never lists two unrelated sets of the same things."""
        if "items" not in self.data:
            import weblica.synth.genres  # noqa: F401  (registers the genres' catalog sources)

            source = CATALOG_SOURCES.get(self.spec.category)
            items = source(self, count) if source else make_items(self.spec, self.rng, count)
            self.data["items"] = items
            self.data["makers"] = make_makers(self.spec, self.rng)
            for item in items:
                # drawn when the bundle is written, so building a site (tests, previews) stays cheap
                self.files[item["image"].lstrip("/")] = partial(images.item_image, item["name"], item["kind"], item["color"],
                                                                seed=spec_seed(self.spec))
            self.public_json["items"] = [{k: v for k, v in item.items() if k != "facts"} for item in items]
        return self.data["items"]

    def money(self, value: float, whole: bool | None = None) -> str:
        """`value` as this site writes it. Whole amounts go without cents where real sites write them so:
        on a genre with `whole_money: true` (salaries, rents) and from WHOLE_FROM units on (an income
        limit, a house); `whole` says it for one context."""
        if whole is None:
            whole = bool(self.cat.get("whole_money")) or abs(value) >= WHOLE_FROM * price_scale(self.fmt)
        return format_money(value, self.fmt, whole)

    def date(self, iso: str) -> str:
        return format_date(iso, self.fmt)

    @property
    def locale(self) -> str:
        """The site's locale (e.g. "de-DE"): how its numbers and dates are written, for answer checks."""
        return self.spec.style.locale

    @property
    def item_noun(self) -> str:
        return self.cat["item"][0]

    @property
    def items_noun(self) -> str:
        return self.cat["item"][1]

    @property
    def labels(self) -> dict[str, Any]:
        """How this genre names the generic entity fields on pages and in instructions (the `labels:` key
        of its genre file, synth/genres/<category>.yaml; the defaults are a shop's words):
        `maker` / `makers` who makes or offers an entity ("brand", "airline", "clinic", "employer"),
        `price` what its price is ("price", "fare", "salary", "monthly rent", "consultation fee") and
        `per` its unit ("per night", "per year"; "" for a one-off price), `buy` the entity's main action
        ("Add to cart", "Apply", "Book appointment"), `sells` whether the site sells its entities at all,
        `place` / `places` its physical places for a locator ("store", "branch", "clinic", "station"),
        `saved` the user's saved list ("Wishlist", "Saved jobs", "Reading list"), `reserve` and `pickup`
        the title and place field of a reservation form ("Reserve for pick-up" / "Pick-up location",
        "Set up a job alert" / "Work location"), `book` a booking page's heading ("Book a table"),
        `request` a date-range request form's title ("Request a stay"), `support` the contact form's
        general topic ("Order support", "Application question"), `founded` how a maker began, on its
        page and in tasks ("founded"; a branch, venue, studio or restaurant "opened"), `available` and
        `stock` how an entity's page says its date and stock ("Available from" ... "in stock"; an event is
        "On" a day, an article "Published"; only what ships has a stock line: an event's ticket types say
        what is left), `since` and `team`
        the maker page's year and team rows ("Founded" / "Team"; a classifieds seller is a "Member
        since" and has no team), `ships` whether what it sells is delivered (its FAQ, help and footer
        speak of delivery, shipping and returns; tickets, stays and services are not shipped), `sold_as`
        what one price buys where that is not the entity ("ticket": "How much is a ticket for X?")."""
        from weblica.synth.intents import article  # the task grammar's article agreement ("an event")

        defaults = {"maker": "brand", "makers": "brands", "price": "price", "per": "", "buy": "Add to cart",
                    "sells": True, "place": "store", "places": "stores", "saved": "Wishlist",
                    "reserve": "Reserve for pick-up", "pickup": "Pick-up location", "book": f"Book {article(self.item_noun)}",
                    "request": f"Request {article(self.item_noun)}", "support": "Order support", "founded": "founded",
                    "available": "Available from", "stock": "in stock", "since": "", "team": "Team"}
        labels = {**defaults, **self.cat.get("labels", {})}
        labels.setdefault("ships", bool(labels["sells"]))
        if not labels["ships"] and "stock" not in self.cat.get("labels", {}):
            labels["stock"] = ""  # a doctor, an article or a route is not "in stock": only shipped goods are
        return labels

    # ---- pages and tasks ---------------------------------------------------------------------------
    def page(self, path: str, template: str, **context: Any) -> None:
        """Register a page; `path` is the URL path ('/', '/item/x'), served from public/<path>.html."""
        self.pages[path] = (template, context)

    def url(self, path: str) -> str:
        return self.spec.base_url + path

    def task(self, draft: TaskDraft) -> None:
        self.tasks.append(draft)


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates kept in memory for the process: every site gets its own environment (its
    filters format its locale), and parsing and compiling the templates again for each was most of
    a site's generation time. A bucket checks its template's source checksum on load, so an edited
    file recompiles."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


def _jinja_env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(synth_dir() / "templates")),
                             autoescape=lambda name: bool(name) and name.endswith(".html.j2"),  # never CSS
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             bytecode_cache=_COMPILED)
    return env


def page_file(path: str) -> str:
    return "index.html" if path == "/" else path.strip("/") + ".html"


def spec_seed(spec: SiteSpec) -> str:
    """What varies a site's drawings: two sites drawing one item (or one name) get different pictures."""
    return f"{spec.site_id}:{spec.seed}"


def _site_images(site: SiteBuilder) -> dict[str, bytes | Callable[[], bytes]]:
    """The hero banner (keyed by the site id: no two sites share one) and the logo in the header."""
    palette = site.spec.style.palette
    hero = hero_copy(site)
    kinds = list(site.cat.get("kinds") or [None])  # a list of kinds, or a genre model's kind -> nouns
    kind = random.Random(f"hero-kind:{site.spec.site_id}").choice(kinds)
    return {"img/hero.png": partial(images.hero_image, site.spec.site_id, hero["title"], hero["tagline"], palette,
                                    kind=kind, cta=hero["cta"]),
            "img/logo.png": partial(images.logo_image, site.name, palette, 64, seed=spec_seed(site.spec))}


def _per_site(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A filter that reads the site (its currency, date format, nouns), kept out of jinja's constant
    folding: `{{ 0|money }}` would otherwise be computed once, when the template is compiled, and the
    templates are compiled once per process (_COMPILED), so a second site would show the first one's
    currency."""
    return jinja2.pass_context(lambda _context, *args, **kwargs: fn(*args, **kwargs))


def _renderer(site: SiteBuilder) -> tuple[jinja2.Environment, dict[str, Any]]:
    """The site's jinja environment (its locale's filters) and the context every page shares, after the
    page grammar (weblica/synth/page_grammar.py) picked the site's component variants and added its
    info pages."""
    from weblica.synth.intents import kinds_said  # the task grammar's agreement (intents import no site module)

    layout = compose(site)
    env = _jinja_env()
    env.filters["money"] = _per_site(site.money)
    env.filters["date"] = _per_site(site.date)
    env.filters["kinds"] = _per_site(partial(kinds_said, site.cat, items_noun=site.items_noun))  # "More coupes", "All poetry books"
    style = site.spec.style
    common = {"site": site, "spec": site.spec, "style": style, "nav": site.nav, "fmt": site.fmt,
              "distractors": site.spec.distractors, "cat": site.cat,
              "site_config": json.dumps({"locale": site.fmt, "id": site.spec.site_id, "name": site.name,
                                         "widgets": style.widgets, "listing": style.listing}, sort_keys=True),
              **page_context(site, layout)}
    return env, common


def render_pages(site: SiteBuilder, paths: list[str] | None = None) -> dict[str, str]:
    """The HTML of the site's pages (all, or those of `paths`), URL path -> text; draws no image."""
    env, common = _renderer(site)
    wanted = sorted(site.pages) if paths is None else paths
    return {path: env.get_template(site.pages[path][0]).render(**common, path=path, **site.pages[path][1])
            for path in wanted}


def render_site(site: SiteBuilder) -> dict[str, bytes]:
    """All served files of the site, path -> bytes, in a deterministic order."""
    env, common = _renderer(site)
    for rel, body in _site_images(site).items():
        site.files.setdefault(rel, body)
    files: dict[str, bytes] = {path: body() if callable(body) else body for path, body in site.files.items()}
    for path, (template, context) in sorted(site.pages.items()):
        html = env.get_template(template).render(**common, path=path, **context)
        files[page_file(path)] = html.encode("utf-8")
    files["assets/site.css"] = env.get_template("site.css.j2").render(**common).encode("utf-8")
    for script in ("site.js", "widgets.js", "distractors.js"):
        files[f"assets/{script}"] = (synth_dir() / "static" / script).read_bytes()
    files["assets/catalog.json"] = json.dumps(site.public_json, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return dict(sorted(files.items()))


def draft_to_task(site: SiteBuilder, index: int, draft: TaskDraft) -> Task:
    spec = site.spec
    return Task(
        id=f"{spec.site_id}-t{index:02d}", start_url=site.url(draft.start_path), instruction=draft.instruction,
        source=TaskSource(kind="synth", site=spec.site_id, bundle=spec.site_id), max_steps=draft.max_steps,
        checks=draft.checks, rubric=draft.rubric, oracle=None, skill=spec.skill, difficulty=draft.difficulty,
        category=spec.category,
        metadata={"plan": draft.plan, "negatives": {"answers": draft.wrong_answers,
                                                     "urls": [site.url(u) for u in draft.wrong_urls]},
                  **({"maximal": draft.maximal} if draft.maximal else {}),
                  **({"intent": draft.intent} if draft.intent else {}), **({"guided": True} if draft.guided else {})},
    )


def write_bundle(site: SiteBuilder, out_dir: Path, tasks: list[Task]) -> Path:
    """Write `<out_dir>/<site_id>/`; the same site always gives the same bytes."""
    from weblica.env.task import save_tasks

    root = out_dir / site.spec.site_id
    if root.exists():
        shutil.rmtree(root)
    (root / PUBLIC).mkdir(parents=True)
    for rel, body in render_site(site).items():
        target = root / PUBLIC / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    site_json = {"spec": site.spec.to_dict(), "name": site.name, "initial_state": site.initial_state,
                 "pages": sorted(site.pages), "generator": site.spec.generator,
                 "layout": site.layout.to_dict()}
    if site.record_rules:
        site_json["record_rules"] = site.record_rules
    (root / "site.json").write_text(json.dumps(site_json, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    (root / "data.json").write_text(json.dumps(site.data, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    save_tasks(tasks, root / "tasks.jsonl")
    return root
