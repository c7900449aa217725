"""Browsing skills: faceted filter + sort, pagination / load more / infinite scroll, menus and hierarchy."""
from __future__ import annotations

from weblica.synth.checks import answer_count, url_is
from weblica.synth.data import slugify
from weblica.synth.intents import say
from weblica.synth.intents import browse as asks
from weblica.synth.intents import catalog as catalog_asks
from weblica.synth.intents import composed as chains
from weblica.synth.intents.difficulty import planned
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import (catalog_shell, count_confusers, distinct, listing_pages, name_check,
                                         others, price_check, shown_money, skill, unique_extreme)

SORTS = {"price-asc": "Price: low to high", "price-desc": "Price: high to low", "rating-desc": "Rating: best first",
         "name-asc": "Name: A to Z"}
SORTS_SAID = {"price-asc": "cheapest first", "price-desc": "most expensive first", "rating-desc": "best rated first",
              "name-asc": "from A to Z"}  # how a person asks for each order


def _facet_steps(site: SiteBuilder, kinds: list[str] = (), maker: str | None = None, max_price: int | None = None,
                 sort: str | None = None) -> list[dict]:
    all_kinds = sorted({i["kind"] for i in site.data["items"]})
    steps: list[dict] = [{"op": "click", "sel": "a[href='/items']"}]
    for kind in kinds:
        steps.append({"op": "click", "sel": f"#kind-{all_kinds.index(kind) + 1}"})
    if maker:
        steps.append({"op": "select", "sel": "#f-maker", "value": maker})
    if max_price is not None:
        steps.append({"op": "fill", "sel": "#f-max", "text": str(max_price)})
    if sort:
        steps.append({"op": "select", "sel": "#f-sort", "value": sort})
    return steps


def _facet_url(site: SiteBuilder, kinds: list[str] = (), maker: str | None = None, max_price: int | None = None,
               sort: str | None = None) -> str:
    from urllib.parse import urlencode
    params = [("kind", k) for k in sorted(kinds)] + ([("maker", maker)] if maker else []) + \
        ([("max", str(max_price))] if max_price is not None else []) + ([("sort", sort)] if sort else [])
    return "/items" + ("?" + urlencode(params) if params else "")


@skill("filter-sort")
def filter_sort(site: SiteBuilder) -> None:
    items = catalog_shell(site, search=False, list_page=False)  # the listing shows 48, then more
    site.add_nav((f"All {site.items_noun}", "/items"))
    kinds = sorted({i["kind"] for i in items})
    makers = sorted({i["maker"] for i in items})
    # the sort control's options are values with labels: custom selects show labels, data-value is the id
    sorts = [s for s in SORTS if site.labels["rates"] or not s.startswith("rating")]  # no rating where none rate
    site.page("/items", "facets.html.j2", title=f"All {site.items_noun}", heading=f"All {site.items_noun}", kinds=kinds,
              makers=makers, sorts=sorts, page_kind="facets")
    rng = site.rng
    for kind in rng.sample(kinds, 3):
        sort = rng.choice(sorts)
        plan = _facet_steps(site, [kind], sort=sort)
        site.task(TaskDraft(
            **say(site, asks.SHOW_KIND_SORTED, kind=kind, order=SORTS_SAID[sort]), start_path="/",
            plan=plan, checks=[url_is(site.url(_facet_url(site, [kind], sort=sort)))],
            difficulty=planned(plan), rubric=["The listing shows only the type, in the requested order"],
            wrong_urls=[_facet_url(site, [kind]), _facet_url(site, sort=sort),
                        _facet_url(site, [others(kinds, kind, 1)[0]], sort=sort)]))
    for maker in rng.sample(makers, 2) if site.labels["rates"] else []:  # nobody rates a permit or a bus line
        plan = _facet_steps(site, maker=maker, sort="rating-desc")
        site.task(TaskDraft(
            **say(site, asks.SHOW_MAKER_BEST_RATED, maker=maker), start_path="/", plan=plan,
            checks=[url_is(site.url(_facet_url(site, maker=maker, sort="rating-desc")))], difficulty=planned(plan),
            rubric=["Only the maker's items, by rating"], wrong_urls=[_facet_url(site, maker=maker)]))
    names = [i["name"] for i in items]
    prices = [i["price"] for i in items]
    answered = 0
    for kind in rng.sample(kinds, len(kinds)):
        group = [i for i in items if i["kind"] == kind]
        if len(group) < 2:
            continue
        low = unique_extreme(group, "price")
        high = unique_extreme(group, "price", highest=True)
        if low is not None:
            overall = min(items, key=lambda i: i["price"])
            # a guided variant on some sites: the first question says how (filters, sort)
            which = asks.CHEAPEST_OF_KIND_GUIDED if answered == 0 and site.spec.seed % 3 == 0 else asks.CHEAPEST_OF_KIND
            plan = _facet_steps(site, [kind], sort="price-asc") + [{"op": "done", "answer": low["name"]}]
            site.task(TaskDraft(
                **say(site, which, kind=kind), start_path="/", plan=plan,
                checks=[name_check(low["name"], names)], difficulty=planned(plan), rubric=["The cheapest item of the type"],
                wrong_answers=others([i["name"] for i in group], low["name"]) + [overall["name"]]
                if overall is not low else others(names, low["name"])))
        if high is not None:
            plan = _facet_steps(site, [kind], sort="price-desc") + [{"op": "done", "answer": site.money(high["price"])}]
            site.task(TaskDraft(
                **say(site, asks.TOP_PRICE_OF_KIND, kind=kind), start_path="/", plan=plan,
                checks=[price_check(site, high["price"], prices)], difficulty=planned(plan),
                rubric=["The top price of the type"],
                wrong_answers=shown_money(site, distinct([i["price"] for i in group], high["price"]))))
        group_prices = sorted(i["price"] for i in group)
        cap = int(group_prices[len(group_prices) // 2]) + 1
        n = sum(p <= cap for p in group_prices)
        # the type without the price cap, the cap without the type, other types under the cap
        competing = [len(group), sum(p <= cap for p in prices)] + \
            [sum(i["price"] <= cap for i in items if i["kind"] == k) for k in kinds if k != kind]
        confusers = count_confusers(n, competing)
        if confusers is not None:
            plan = _facet_steps(site, [kind], max_price=cap) + [{"op": "done", "answer": str(n)}]
            site.task(TaskDraft(
                **say(site, asks.COUNT_KIND_UNDER, kind=kind, cap=site.money(cap)), start_path="/", plan=plan,
                checks=[answer_count(n, confusers, unit=site.items_noun)], difficulty=planned(plan),
                rubric=["Count after filtering by type and price"], wrong_answers=[str(c) for c in confusers[:3]]))
        answered += 1
        if answered == 2:
            break
    for maker in rng.sample(makers, len(makers)):
        group = [i for i in items if i["maker"] == maker]
        best = unique_extreme(group, "rating", highest=True) if len(group) >= 2 and site.labels["rates"] else None
        if best is None:
            continue
        plan = _facet_steps(site, maker=maker, sort="rating-desc") + [{"op": "done", "answer": best["name"]}]
        site.task(TaskDraft(
            **say(site, asks.BEST_RATED_OF_MAKER, maker=maker), start_path="/", plan=plan,
            checks=[name_check(best["name"], names)], difficulty=planned(plan), rubric=["The best-rated item of the maker"],
            wrong_answers=others([i["name"] for i in group], best["name"])))
        break
    _open_cheapest_of_kind_and_maker(site, items, kinds, makers)


def _open_cheapest_of_kind_and_maker(site: SiteBuilder, items: list[dict], kinds: list[str], makers: list[str]) -> None:
    """Composed (filter by two facets, sort, open): the cheapest of a type from one offerer, whose page
    is the only right end. Only where two or more such entities exist and the cheapest is not tied."""
    made = 0
    for kind in site.rng.sample(kinds, len(kinds)):
        for maker in makers:
            group = [i for i in items if i["kind"] == kind and i["maker"] == maker]
            low = unique_extreme(group, "price") if len(group) >= 2 else None
            if low is None:
                continue
            plan = _facet_steps(site, [kind], maker=maker, sort="price-asc") + \
                [{"op": "click", "sel": f"[data-link=item-{low['id']}]"}]
            site.task(TaskDraft(
                **say(site, chains.OPEN_CHEAPEST_OF_KIND_AND_MAKER, kind=kind, maker=maker), start_path="/", plan=plan,
                checks=[url_is(site.url(f"/item/{low['slug']}"))], difficulty=planned(plan),
                rubric=["The page of the cheapest entity of the type from that offerer is open"],
                wrong_urls=[f"/item/{i['slug']}" for i in group if i is not low][:3]
                + [_facet_url(site, [kind], maker=maker, sort="price-asc")]))
            made += 1
            break
        if made == 2:
            return


PAGED_MOST = 150  # the end of a load-more or infinite list stays a few loads (and scrolls) away
PAGER_SIZES = (12, 16, 20, 24)


@skill("pagination")
def pagination(site: SiteBuilder) -> None:
    items = catalog_shell(site, most=PAGED_MOST, search=False, list_page=False, home_items=4)
    variant = {"native": "pager"}.get(site.spec.style.widgets, site.rng.choice(["pager", "load-more", "infinite"]))
    # a pager's pages hold 12-24 entities; load-more and infinite scroll add 24 at a time (a few loads
    # reach the end of the list)
    size = site.rng.choice(PAGER_SIZES) if variant == "pager" else 24
    pages = (len(items) + size - 1) // size
    site.add_data(paging=variant)
    site.add_nav((f"All {site.items_noun}", "/items"))
    if variant == "pager":
        listing_pages(site, items, size)
    else:
        site.page("/items", "paged.html.j2", title=f"All {site.items_noun}", heading=f"All {site.items_noun}",
                  items=items[:size], total=len(items), page_size=size, variant=variant, page_kind="paged")
    rng = site.rng
    names = [i["name"] for i in items]
    prices = [i["price"] for i in items]

    def reach(item: dict) -> list[dict]:
        index = items.index(item)
        steps: list[dict] = [{"op": "click", "sel": "a[href='/items']"}]
        if variant == "pager":
            if index >= size:
                steps.append({"op": "click", "sel": f"[data-pager='{index // size + 1}']"})
        elif variant == "load-more":
            steps.append({"op": "click_until", "sel": "#load-more", "until": f"[data-link=item-{item['id']}]"})
        else:
            steps.append({"op": "scroll_until", "sel": f"[data-link=item-{item['id']}]"})
        return steps

    late = items[size:]
    for index, item in enumerate(rng.sample(late, 5)):
        # the first asks with a hint (it is further down the list) on some sites: a guided variant
        which = asks.PRICE_FAR_DOWN_GUIDED if index == 0 and site.spec.seed % 2 == 0 else catalog_asks.ASK_PRICE
        plan = reach(item) + [{"op": "reach", "sel": f"[data-link=item-{item['id']}]"},
                              {"op": "done", "answer": site.money(item["price"])}]
        site.task(TaskDraft(
            **say(site, which, item=item["name"]), start_path="/", plan=plan,
            checks=[price_check(site, item["price"], prices)],
            difficulty=planned(plan), rubric=["The price is read from the listing"],
            wrong_answers=shown_money(site, distinct(prices, item["price"]))))
    for item in rng.sample(late, 3):
        plan = reach(item) + [{"op": "click", "sel": f"[data-link=item-{item['id']}]"}]
        site.task(TaskDraft(
            **say(site, catalog_asks.OPEN_ITEM, item=item["name"]), start_path="/", plan=plan,
            checks=[url_is(site.url(f"/item/{item['slug']}"))], difficulty=planned(plan),
            rubric=["The item's page is open"], wrong_urls=[f"/item/{i['slug']}" for i in others(items, item)]))
    last = items[-1]
    plan = reach(last) + [{"op": "reach", "sel": f"[data-link=item-{last['id']}]"}, {"op": "done", "answer": last["name"]}]
    site.task(TaskDraft(
        **say(site, asks.LAST_IN_LIST), start_path="/", plan=plan,
        checks=[name_check(last["name"], names)], difficulty=planned(plan), rubric=["The last item after paging to the end"],
        wrong_answers=[items[0]["name"], items[-2]["name"], items[size - 1]["name"]]))
    _open_cheapest_in_list(site, items, reach, size)
    if variant == "pager":
        for p in rng.sample(range(2, pages + 1), 2):
            plan = [{"op": "click", "sel": "a[href='/items']"}, {"op": "click", "sel": f"[data-pager='{p}']"}]
            site.task(TaskDraft(
                **say(site, asks.GO_TO_PAGE, p=p), start_path="/", plan=plan,
                checks=[url_is(site.url(f"/items/page/{p}"))], difficulty=planned(plan), rubric=["The requested page is shown"],
                wrong_urls=["/items", f"/items/page/{p - 1 if p > 2 else p + 1}"]))
    else:
        kinds = sorted({i["kind"] for i in items})
        counts = {k: sum(i["kind"] == k for i in items) for k in kinds}
        for kind in rng.sample(kinds, len(kinds)):
            n = counts[kind]
            # other types, and the count on the first page only (nothing loaded), give the wrong numbers
            confusers = count_confusers(n, [c for k, c in counts.items() if k != kind]
                                        + [sum(i["kind"] == kind for i in items[:size])])
            if confusers is None:
                continue
            plan = reach(last) + [{"op": "done", "answer": str(n)}]
            site.task(TaskDraft(
                **say(site, asks.COUNT_KIND_ALL, kind=kind), start_path="/", plan=plan,
                checks=[answer_count(n, confusers, unit=site.items_noun)], difficulty=planned(plan),
                rubric=["All pages were loaded before counting"], wrong_answers=[str(c) for c in confusers[:3]]))
            break
        total = count_confusers(len(items), [size, len(late)])
        plan = [{"op": "click", "sel": "a[href='/items']"}, {"op": "done", "answer": str(len(items))}]
        site.task(TaskDraft(
            **say(site, asks.COUNT_ALL), start_path="/", plan=plan,
            checks=[answer_count(len(items), total, unit=site.items_noun)], difficulty=planned(plan),
            rubric=["The total count"],
            wrong_answers=[str(size), str(len(items) - 1)]))


def _open_cheapest_in_list(site: SiteBuilder, items: list[dict], reach, first: int) -> None:
    """Composed (compare over the whole long list, then open): the cheapest entity of a type, which
    may sit on any page; its page is the only right end. Skipped for a tied cheapest."""
    kinds = sorted({i["kind"] for i in items})
    for kind in site.rng.sample(kinds, len(kinds)):
        group = [i for i in items if i["kind"] == kind]
        low = unique_extreme(group, "price") if len(group) >= 3 else None
        if low is None or items.index(low) < first:  # on the first page it is no walk through the list
            continue
        plan = reach(low) + [{"op": "click", "sel": f"[data-link=item-{low['id']}]"}]
        site.task(TaskDraft(
            **say(site, chains.OPEN_CHEAPEST_MATCH, kind=kind), start_path="/", plan=plan,
            checks=[url_is(site.url(f"/item/{low['slug']}"))], difficulty=planned(plan),
            rubric=["The page of the cheapest entity of the type is open"],
            wrong_urls=[f"/item/{i['slug']}" for i in group if i is not low][:3]))
        return


def section_kinds(cat: dict, names: list[str]) -> dict[str, frozenset[str]]:
    """What each menu section may hold, where it is not open to every kind: the genre file's
    `section_kinds` say it ("Heart": cardiologists), a section named for a kind ("Sedans", "SUVs") holds
    that kind's entities alone, and an `info_sections` section (a dealer's "Insurance", a transit site's
    "Disruptions") holds none (the empty set). Sections not in the map hold the kinds that have no
    section of their own."""
    from weblica.synth.intents import kind_noun, plural

    out: dict[str, frozenset[str]] = {name: frozenset() for name in names if name in (cat.get("info_sections") or [])}
    out.update({name: frozenset(kinds) for name, kinds in (cat.get("section_kinds") or {}).items() if name in names})
    for kind in cat["kinds"]:
        said = {kind.lower(), plural(kind).lower()} | {w.lower() for w in (kind_noun(cat, kind) or ())}
        for name in names:
            if name not in out and name.lower() in said:
                out[name] = frozenset({kind})
    return out


def sections_for(kind: str, sections: list[dict], holds: dict[str, frozenset[str]]) -> list[dict]:
    """The sections an entity of `kind` may be filed in: its kind's own, else the open ones (else any
    that holds entities, so every entity has a section)."""
    own = [s for s in sections if kind in holds.get(s["name"], ())]
    open_ = [s for s in sections if s["name"] not in holds]
    return own or open_ or [s for s in sections if holds.get(s["name"])]


@skill("menus")
def menus(site: SiteBuilder) -> None:
    items = catalog_shell(site, search=False, list_page=False)
    site.add_feature("menus")
    site.menu_kind = "mega" if site.spec.style.widgets == "custom" else "tree"  # type: ignore[attr-defined]
    departments = site.cat["departments"]
    menu, sections = [], []
    for dept_name, section_names in departments.items():
        dept = {"name": dept_name, "slug": slugify(dept_name)}
        secs = [{"name": s, "slug": slugify(s), "dept": dept} for s in section_names]
        menu.append((dept, secs))
        sections.extend(secs)
    site.menu = menu  # type: ignore[attr-defined]
    rng = site.rng
    assigned: dict[str, list[dict]] = {f"{s['dept']['slug']}/{s['slug']}": [] for s in sections}
    holds = section_kinds(site.cat, [s["name"] for s in sections])
    for item in items:
        s = rng.choice(sections_for(item["kind"], sections, holds))
        item["section"] = f"{s['dept']['slug']}/{s['slug']}"
        assigned[item["section"]].append(item)
    # a section left empty (open to no kind: "Women › Tops" where every kind has its own) is not in the menu
    menu = [(dept, kept) for dept, secs in menu
            if (kept := [s for s in secs if assigned[f"{dept['slug']}/{s['slug']}"] or holds.get(s["name"]) == frozenset()])]
    sections = [s for _, secs in menu for s in secs]
    site.menu = menu  # type: ignore[attr-defined]
    for dept, secs in menu:
        site.page(f"/d/{dept['slug']}", "home.html.j2", title=dept["name"], heading=dept["name"],
                  intro=f"Sections in {dept['name']}.", items=[],
                  links=[(s["name"], f"/d/{dept['slug']}/{s['slug']}") for s in secs], page_kind="dept")
        for s in secs:
            key = f"{dept['slug']}/{s['slug']}"
            about = (f"{s['name']}: ask our team at any {site.labels['place']} or from the contact page."
                     if holds.get(s["name"]) == frozenset() else f"{len(assigned[key])} {site.items_noun} in this section.")
            site.page(f"/d/{key}", "listing.html.j2", title=s["name"], heading=f"{dept['name']} › {s['name']}",
                      intro=about, items=assigned[key], pages=0, page_kind="section")

    def open_section(s: dict) -> list[dict]:
        key = f"{s['dept']['slug']}/{s['slug']}"
        first = ({"op": "hover", "sel": f"[data-dept={s['dept']['slug']}] .dept-link"} if site.menu_kind == "mega"
                 else {"op": "click", "sel": f"[data-tree-toggle={s['dept']['slug']}]"})
        return [first, {"op": "click", "sel": f"[data-section='{key}']"}]

    prices = [i["price"] for i in items]

    def open_task(s: dict) -> None:
        key = f"{s['dept']['slug']}/{s['slug']}"
        plan = open_section(s)
        site.task(TaskDraft(
            **say(site, asks.OPEN_SECTION, section=s["name"], dept=s["dept"]["name"]), start_path="/",
            plan=plan, checks=[url_is(site.url(f"/d/{key}"))], difficulty=planned(plan),
            rubric=["The section page is open"],
            wrong_urls=[f"/d/{o['dept']['slug']}/{o['slug']}" for o in others(sections, s)] + [f"/d/{s['dept']['slug']}"]))

    opened = rng.sample(sections, len(sections))
    for s in opened[:4]:
        open_task(s)
    section_counts = {key: len(group) for key, group in assigned.items()}
    made = 0
    for s in rng.sample(sections, len(sections)):
        key = f"{s['dept']['slug']}/{s['slug']}"
        n = len(assigned[key])
        if holds.get(s["name"]) == frozenset():  # a service section lists no entities: nothing to count
            continue
        # another section's count, or the whole department's, must not give the same number
        dept_total = sum(c for k, c in section_counts.items() if k.split("/")[0] == s["dept"]["slug"])
        confusers = count_confusers(n, [c for k, c in section_counts.items() if k != key] + [dept_total])
        if confusers is None:
            continue
        plan = open_section(s) + [{"op": "done", "answer": str(n)}]
        site.task(TaskDraft(
            **say(site, asks.COUNT_IN_SECTION, section=s["name"], dept=s["dept"]["name"]), start_path="/",
            plan=plan, checks=[answer_count(n, confusers, unit=site.items_noun)], difficulty=planned(plan),
            rubric=["Counted in the right section"], wrong_answers=[str(c) for c in confusers[:3]]))
        made += 1
        if made == 4:
            break
    done = 0
    # the cheapest of a section, then (where ties or small sections left too few) the most expensive
    for highest, word in ((False, "cheapest"), (True, "most expensive")):
        for s in rng.sample(sections, len(sections)):
            group = assigned[f"{s['dept']['slug']}/{s['slug']}"]
            pick = unique_extreme(group, "price", highest) if len(group) >= 2 else None
            if pick is None or done == 3 + 2 * highest:
                continue
            plan = open_section(s) + [{"op": "done", "answer": site.money(pick["price"])}]
            site.task(TaskDraft(
                **say(site, asks.EXTREME_PRICE_IN_SECTION, extreme=word, section=s["name"], dept=s["dept"]["name"]),
                start_path="/", plan=plan, checks=[price_check(site, pick["price"], prices)], difficulty=planned(plan),
                rubric=[f"The {'maximum' if highest else 'minimum'} price in the section"],
                wrong_answers=shown_money(site, distinct([i["price"] for i in group], pick["price"]))))
            done += 1
        if len(site.tasks) + 1 >= 12:
            break
    widths = [len(secs) for _, secs in menu]
    for index, (dept, secs) in enumerate(menu):
        confusers = count_confusers(len(secs), widths[:index] + widths[index + 1:] + [len(menu)])
        if confusers is None:
            continue
        plan = [open_section(secs[0])[0], {"op": "done", "answer": str(len(secs))}]
        site.task(TaskDraft(
            **say(site, asks.COUNT_SECTIONS, dept=dept["name"]), start_path="/", plan=plan,
            checks=[answer_count(len(secs), confusers, unit="sections")], difficulty=planned(plan),
            rubric=["Counted from the menu"], wrong_answers=[str(c) for c in confusers[:3]]))
        break
    names = [i["name"] for i in items]
    best_made = 0
    for s in rng.sample(sections, len(sections)):  # composed: open a section through the menu, then read it
        group = assigned[f"{s['dept']['slug']}/{s['slug']}"]
        best = unique_extreme(group, "rating", highest=True) if len(group) >= 2 and site.labels["rates"] else None
        if best is None or best_made == 2:
            continue
        plan = open_section(s) + [{"op": "done", "answer": best["name"]}]
        site.task(TaskDraft(
            **say(site, chains.BEST_RATED_IN_SECTION, section=s["name"], dept=s["dept"]["name"]), start_path="/",
            plan=plan, checks=[name_check(best["name"], names)], difficulty=planned(plan),
            rubric=["The best-rated entity of the section"],
            wrong_answers=others([i["name"] for i in group], best["name"]) + others(names, best["name"], 1)))
        best_made += 1
    for s in opened[4:4 + max(0, 12 - len(site.tasks))]:  # ties left fewer answer tasks: more to open
        open_task(s)
