"""Building one site bundle: pages rendered from jinja2 templates, images, data.json, task drafts.

A skill module and then the site's genre (weblica/synth/genres) receive a SiteBuilder and add pages, data,
state and task drafts through its methods; the builder's collections are read-only to everything else,
so no part of a site overwrites another's by accident. `write_bundle` lays the site out as `<out>/<site_id>/` with
`site.json`, `data.json`, `tasks.jsonl` and the served files under `public/` (only `public/` is ever
served, so gold answers in tasks.jsonl never reach the browser). The site runtime's scripts are not in
the bundle: the site server serves them from the package (weblica/site_runtime).
"""
from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import jinja2

from weblica.env.task import Check, Task, TaskSource
from weblica.site_runtime import runtime_digest
from weblica.synth import design, images
from weblica.synth.design.markup import apply as with_design_classes
from weblica.synth.data import make_items, make_makers, price_scale, site_category, site_name
from weblica.synth.intents import article, kinds_said
from weblica.synth.page_grammar import compose, hero_copy, page_context
from weblica.synth.spec import SiteSpec, synth_dir

if TYPE_CHECKING:
    from weblica.synth.genres.genre import Genre

PUBLIC = "public"
FileBody = bytes | Callable[[], bytes]  # a file's bytes, or what draws them when the bundle is written


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
    """What skills and genres build a site with: the spec, its genre, a seeded rng, and methods that add
    pages, data, state, navigation, files and task drafts. The collections they fill are read-only views
    (`data`, `initial_state`, `record_rules`, `files`, `public_json`, `pages`: `Sealed` dicts; `nav` a
    tuple, `features` a frozenset): a part of a site adds to them through the methods, which refuse to
    change what another part set."""

    def __init__(self, spec: SiteSpec, genre: Genre, instance: int = 0) -> None:
        """`genre`: the category's plug-in (weblica.synth.genres.registry.new_site gives it). Instance k > 0
        (weblica/synth/instances.py) keeps the site's name and draws its data from another rng."""
        if genre.category != spec.category:
            raise ValueError(f"genre '{genre.category}' given for a '{spec.category}' site")
        self.spec = spec
        self.genre = genre
        self.rng = random.Random(f"site:{spec.site_id}:{spec.seed}")
        self.cat = site_category(spec)  # the genre file, with this site's own makers where it names them
        self.fmt = spec.style.locale_format
        self.name = site_name(spec, self.rng)
        if instance:
            self.rng = random.Random(f"site:{spec.site_id}:{spec.seed}:instance:{instance}")
        self._data = Sealed(site_name=self.name)
        self._state = Sealed()
        # what the backend refuses to store, per collection (weblica/serve/rules.py)
        self._rules = Sealed()
        self._pages = Sealed()
        self._files = Sealed()
        self._public = Sealed()  # served as /assets/catalog.json for client-side pages
        self._nav: list[tuple[str, str]] = [("Home", "/")]
        self._features: set[str] = set()
        self.tasks: list[TaskDraft] = []
        self.layout: Any = None  # the page grammar's Layout, chosen when the site is rendered

    # ---- what the site holds, read-only ---------------------------------------------------------
    @property
    def data(self) -> dict[str, Any]:
        """The seeded content (data.json): every gold answer is computed from it."""
        return self._data

    @property
    def initial_state(self) -> dict[str, Any]:
        """Each server-side collection and what it holds when an episode starts."""
        return self._state

    @property
    def record_rules(self) -> dict[str, list[dict[str, Any]]]:
        return self._rules

    @property
    def pages(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """URL path -> (template, its context)."""
        return self._pages

    @property
    def files(self) -> dict[str, FileBody]:
        """Served files besides the pages (images), path under public/ -> bytes or their drawing."""
        return self._files

    @property
    def public_json(self) -> dict[str, Any]:
        return self._public

    @property
    def nav(self) -> tuple[tuple[str, str], ...]:
        """The main navigation's (label, path) links, in order."""
        return tuple(self._nav)

    @property
    def features(self) -> frozenset[str]:
        """What the site offers that shared components link to ("search", "cart", "account", ...)."""
        return frozenset(self._features)

    # ---- adding to it ----------------------------------------------------------------------------
    def add_data(self, **values: Any) -> None:
        """Content keys for data.json. A key set again must hold the same value: two parts of a site
        never hold two truths under one name."""
        _add(self._data, values, "data")

    def add_state(self, **collections: Any) -> None:
        """Server-side collections and their start. Two parts of a site may share a collection (a shop's
        checkout and a restaurant's basket both store `orders`) only if they start it alike."""
        _add(self._state, collections, "state collection")

    def add_record_rules(self, collection: str, *rules: dict[str, Any]) -> None:
        """Rules the site server checks before it stores a record of the collection (weblica/serve/rules.py)."""
        dict.__setitem__(self._rules, collection, [*self._rules.get(collection, []), *rules])

    def add_nav(self, *links: tuple[str, str]) -> None:
        """(label, path) links appended to the main navigation."""
        self._nav.extend(links)

    def add_feature(self, name: str) -> None:
        """Say the site offers `name` (a search page, a cart, accounts), which shared components link to."""
        self._features.add(name)

    def add_file(self, rel: str, body: FileBody) -> None:
        """A served file at public/<rel>: its bytes, or what draws them when the bundle is written (so
        building a site for tests and previews stays cheap). A file's path is never reused."""
        _add(self._files, {rel: body}, "file")

    def share(self, key: str, value: Any) -> None:
        """A value the pages' scripts read from /assets/catalog.json."""
        _add(self._public, {key: value}, "shared value")

    # ---- content ---------------------------------------------------------------------------------
    def items(self, count: int = 30) -> list[dict[str, Any]]:
        """The site's catalog of `count` entities, made once: drawn from the genre's vocabulary, or, for a
        genre whose entities are its flow's own (an events site's programme), made by that genre
        (`Genre.catalog`), so one site never lists two unrelated sets of the same things."""
        if "items" not in self._data:
            items = self.genre.catalog(self, count)
            if items is None:
                items = make_items(self.spec, self.rng, count)
            self.add_data(items=items, makers=make_makers(self.spec, self.rng))
            for item in items:
                self.add_file(item["image"].lstrip("/"), partial(images.item_image, item["name"], item["kind"],
                                                                 item["color"], seed=spec_seed(self.spec)))
            self.share("items", [{k: v for k, v in item.items() if k != "facts"} for item in items])
        return self._data["items"]

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
        of its genre file, weblica/synth/genres/<genre>/genre.yaml; the defaults are a shop's words):
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
        what one price buys where that is not the entity ("ticket": "How much is a ticket for X?"), `rates` whether
        its users rate its entities (stars, reviews and rating tasks only where they do: nobody rates a bank
        account, a permit, a bus line, a job ad or a news story), `browse` (optional) the mega menu's label
        for the entity types where "Shop by type" is wrong though the site sells ("Property types"), `types`
        (optional) what the sidebar calls them where "Types" reads as a shop's ("Specialties", "Subjects")."""
        defaults = {"maker": "brand", "makers": "brands", "price": "price", "per": "", "buy": "Add to cart",
                    "sells": True, "place": "store", "places": "stores", "saved": "Wishlist",
                    "reserve": "Reserve for pick-up", "pickup": "Pick-up location", "book": f"Book {article(self.item_noun)}",
                    "request": f"Request {article(self.item_noun)}", "support": "Order support", "founded": "founded",
                    "available": "Available from", "stock": "in stock", "since": "", "team": "Team", "rates": True}
        labels = {**defaults, **self.cat.get("labels", {})}
        labels.setdefault("ships", bool(labels["sells"]))
        if not labels["ships"] and "stock" not in self.cat.get("labels", {}):
            labels["stock"] = ""  # a doctor, an article or a route is not "in stock": only shipped goods are
        return labels

    # ---- pages and tasks ---------------------------------------------------------------------------
    def page(self, path: str, template: str, **context: Any) -> None:
        """Register a page; `path` is the URL path ('/', '/item/x'), served from public/<path>.html;
        `template` a shared template ("listing.html.j2") or one of the genre's ("news/front.html.j2")."""
        dict.__setitem__(self._pages, path, (template, context))

    def url(self, path: str) -> str:
        return self.spec.base_url + path

    def task(self, draft: TaskDraft) -> None:
        self.tasks.append(draft)


class Sealed(dict):
    """A SiteBuilder collection: a dict to every reader (templates, json, checks), which only the builder's
    methods fill; writing into it raises. A copy or a pickle of it is a plain dict."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a site's collections are filled through SiteBuilder's methods "
                        "(add_data, add_state, add_record_rules, add_file, share, page)")

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _refuse  # type: ignore[assignment]

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return dict, (dict(self),)


def _add(target: Sealed, values: dict[str, Any], what: str) -> None:
    for key, value in values.items():
        if key in target and target[key] is not value and target[key] != value:
            raise ValueError(f"the site's {what} '{key}' is already set to something else: two parts of the "
                             f"site use one name; give one of them another")
        dict.__setitem__(target, key, value)


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


def _jinja_env(genre: Genre) -> jinja2.Environment:
    """The shared templates (weblica/synth/templates) and the genre's own, named "<its folder>/<file>"."""
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(synth_dir() / "templates")),
                                  jinja2.PrefixLoader({genre.folder: jinja2.FileSystemLoader(str(genre.templates))})])
    env = jinja2.Environment(loader=loader,
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
    layout = compose(site)
    env = _jinja_env(site.genre)
    env.filters["money"] = _per_site(site.money)
    env.filters["date"] = _per_site(site.date)
    env.filters["kinds"] = _per_site(partial(kinds_said, site.cat, items_noun=site.items_noun))  # "More coupes", "All poetry books"
    style = site.spec.style
    # a global, not a context value: the macros that templates import without context read it too
    env.globals["ds"] = design.context(style.design, style.theme)
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
    system = site.spec.style.design
    return {path: with_design_classes(env.get_template(site.pages[path][0]).render(**common, path=path,
                                                                                   **site.pages[path][1]), system)
            for path in wanted}


def render_site(site: SiteBuilder) -> dict[str, bytes]:
    """All served files of the site, path -> bytes, in a deterministic order."""
    env, common = _renderer(site)
    for rel, body in _site_images(site).items():
        if rel not in site.files:
            site.add_file(rel, body)
    files: dict[str, bytes] = {path: body() if callable(body) else body for path, body in site.files.items()}
    for path, (template, context) in sorted(site.pages.items()):
        html = with_design_classes(env.get_template(template).render(**common, path=path, **context),
                                   site.spec.style.design)
        files[page_file(path)] = html.encode("utf-8")
    files["assets/site.css"] = env.get_template("site.css.j2").render(**common).encode("utf-8")
    # the runtime's scripts (/assets/site.js, ...) are served from the package, not written here
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
    # "runtime": the digest of the scripts the site server serves it (weblica/site_runtime), which its
    # tasks were validated with
    site_json = {"spec": site.spec.to_dict(), "name": site.name, "initial_state": site.initial_state,
                 "pages": sorted(site.pages), "generator": site.spec.generator,
                 "layout": site.layout.to_dict(), "runtime": runtime_digest(),
                 # the component layer its pages load (weblica/synth/design): a system, its version and theme
                 "design": design.context(site.spec.style.design, site.spec.style.theme).record()}
    if site.record_rules:
        site_json["record_rules"] = site.record_rules
    (root / "site.json").write_text(json.dumps(site_json, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    (root / "data.json").write_text(json.dumps(site.data, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    save_tasks(tasks, root / "tasks.jsonl")
    return root
