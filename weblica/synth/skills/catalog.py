"""Reading skills over a catalog: search, table reasoning, multi-page seeking, hidden content, infeasible."""
from __future__ import annotations

from weblica.synth.checks import answer_count, answer_infeasible, answer_text, url_is
from weblica.synth.intents import catalog as asks
from weblica.synth.intents import composed as chains
from weblica.synth.intents import is_are, is_noun, say
from weblica.synth.intents.difficulty import planned
from weblica.synth.data import FIRST_NAMES, LAST_NAMES
from weblica.synth.entities import absent_names
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import (ONE_PAGE, catalog_shell, count_confusers, distinct, matches, name_check, open_item,
                                         others, price_check, shown_money, skill, unique_extreme)

RUBRIC_READ = ["The final answer states the value shown on the site", "No data was invented"]


def _price_task(site: SiteBuilder, item: dict, via: str) -> TaskDraft:
    items = site.data["items"]
    prices = [i["price"] for i in items if i is not item]
    plan = open_item(site, item, via) + [{"op": "done", "answer": site.money(item["price"])}]
    return TaskDraft(
        **say(site, asks.ASK_PRICE, item=item["name"]),
        start_path="/", plan=plan,
        checks=[price_check(site, item["price"], prices)], difficulty=planned(plan), rubric=RUBRIC_READ,
        wrong_answers=shown_money(site, distinct(prices, item["price"])) + ["I don't know"])


@skill("search")
def search(site: SiteBuilder) -> None:
    items = catalog_shell(site, list_page=False)
    rng = site.rng
    picks = rng.sample(items, 10)
    for index, item in enumerate(picks[:4]):
        # one guided variant per site says to use the search; the others only ask for the page
        which = asks.SEARCH_OPEN_GUIDED if index == 0 else asks.OPEN_ITEM
        plan = open_item(site, item, "search")
        site.task(TaskDraft(
            **say(site, which, item=item["name"]),
            start_path="/", plan=plan, checks=[url_is(site.url(f"/item/{item['slug']}"))],
            difficulty=planned(plan), rubric=["The page of the requested item is open"],
            wrong_urls=[f"/item/{i['slug']}" for i in others(items, item)] + ["/search?q=" + item["name"].split()[0]]))
    for item in picks[4:7]:
        site.task(_price_task(site, item, "search"))
    kinds = sorted({i["kind"] for i in items})
    counts = {kind: sum(matches(i, kind) for i in items) for kind in kinds}
    made = 0
    for kind in rng.sample(kinds, len(kinds)):
        count = counts[kind]
        # another type's search, or the whole catalog, must not give the same number
        confusers = count_confusers(count, [n for k, n in counts.items() if k != kind] + [len(items)])
        if confusers is None:
            continue
        plan = [{"op": "fill", "sel": "#search-input", "text": kind, "enter": True},
                {"op": "reach", "sel": "[data-search-summary]"}, {"op": "done", "answer": str(count)}]
        site.task(TaskDraft(
            **say(site, asks.SEARCH_COUNT, query=kind),
            start_path="/", plan=plan, checks=[answer_count(count, confusers, unit="results")], difficulty=planned(plan),
            rubric=["The answer is the number of results"], wrong_answers=[str(c) for c in confusers[:3]] + ["many"]))
        made += 1
        if made == 2:
            break
    hard = 0
    for maker in rng.sample(site.data["makers"], len(site.data["makers"])):
        group = [i for i in items if matches(i, maker["name"])]
        ratings = sorted((i["rating"] for i in group), reverse=True)
        if len(group) < 2 or ratings[0] == ratings[1] or not site.labels["rates"]:
            continue
        best = max(group, key=lambda i: i["rating"])
        plan = [{"op": "fill", "sel": "#search-input", "text": maker["name"], "enter": True},
                {"op": "click", "sel": f"[data-search-results] [data-link=item-{best['id']}]"}]
        site.task(TaskDraft(
            **say(site, asks.SEARCH_BEST_RESULT, query=maker["name"]),
            start_path="/", plan=plan, checks=[url_is(site.url(f"/item/{best['slug']}"))], difficulty=planned(plan),
            rubric=["The open page is the best-rated result of the search"],
            wrong_urls=[f"/item/{i['slug']}" for i in group if i is not best][:3]))
        hard += 1
        if hard == 3:
            break
    _search_and_compare(site, items)


def _search_and_compare(site: SiteBuilder, items: list[dict]) -> None:
    """Composed (search, compare the results, then open one or read it): the cheapest entity of a
    type, opened; the best-rated one's price, read. Only where a search for the type finds exactly the
    entities of that type (no name or offerer that also matches), two or more, with no tie."""
    kinds = sorted({i["kind"] for i in items})
    prices = [i["price"] for i in items]
    opened = read = 0
    for kind in site.rng.sample(kinds, len(kinds)):
        group = [i for i in items if matches(i, kind)]
        if len(group) < 2 or any(i["kind"] != kind for i in group):
            continue
        search = [{"op": "fill", "sel": "#search-input", "text": kind, "enter": True}]
        low = unique_extreme(group, "price")
        if low is not None and opened < 2:
            plan = search + [{"op": "click", "sel": f"[data-search-results] [data-link=item-{low['id']}]"}]
            site.task(TaskDraft(
                **say(site, chains.OPEN_CHEAPEST_MATCH, kind=kind), start_path="/", plan=plan,
                checks=[url_is(site.url(f"/item/{low['slug']}"))], difficulty=planned(plan),
                rubric=["The page of the cheapest match is open"],
                wrong_urls=[f"/item/{i['slug']}" for i in group if i is not low][:3] + ["/search?q=" + kind]))
            opened += 1
        best = unique_extreme(group, "rating", highest=True) if site.labels["rates"] else None
        if best is not None and read < 1:
            plan = search + [{"op": "reach", "sel": f"[data-search-results] [data-link=item-{best['id']}]"},
                             {"op": "done", "answer": site.money(best["price"])}]
            site.task(TaskDraft(
                **say(site, chains.PRICE_OF_BEST_RATED_MATCH, kind=kind), start_path="/", plan=plan,
                checks=[price_check(site, best["price"], prices)], difficulty=planned(plan),
                rubric=["The price of the best-rated match"],
                wrong_answers=shown_money(site, distinct([i["price"] for i in group], best["price"]))))
            read += 1
        if opened == 2 and read == 1:
            return


def _table_page(site: SiteBuilder, items: list[dict]) -> None:
    site.add_nav(("Compare", "/table"))
    site.page("/table", "table.html.j2", title="Compare", heading=f"Compare {site.items_noun}", items=items,
              page_kind="table")


@skill("table-reasoning")
def table_reasoning(site: SiteBuilder) -> None:
    items = catalog_shell(site, most=ONE_PAGE, search=False, list_page=False)
    _table_page(site, items)
    rng, dec, attr = site.rng, site.fmt["decimals"], site.cat["attr"]
    to_table = [{"op": "click", "sel": "a[href='/table']"}]
    names = [i["name"] for i in items]

    def add(asked: dict, answer: str, check, wrong: list[str], reach: str | None = None) -> None:
        plan = list(to_table) + ([{"op": "reach", "sel": reach}] if reach else []) + [{"op": "done", "answer": answer}]
        site.task(TaskDraft(**asked, start_path="/", plan=plan, checks=[check], difficulty=planned(plan),
                            rubric=["The answer is computed from the table's values"], wrong_answers=wrong))

    prices = [i["price"] for i in items]
    for which, best in ((asks.CHEAPEST_OVERALL, unique_extreme(items, "price")),
                        (asks.PRICIEST_OVERALL, unique_extreme(items, "price", True))):
        if best is not None:
            add(say(site, which), best["name"], name_check(best["name"], names), others(names, best["name"]))
    kinds = sorted({i["kind"] for i in items})
    kind_counts = {k: sum(i["kind"] == k for i in items) for k in kinds}
    for kind in rng.sample(kinds, min(3, len(kinds))):
        group = [i for i in items if i["kind"] == kind]
        confusers = count_confusers(len(group), [n for k, n in kind_counts.items() if k != kind] + [len(items)])
        if confusers is not None:
            add(say(site, asks.COUNT_KIND_LISTED, kind=kind), str(len(group)),
                answer_count(len(group), confusers, unit=site.items_noun), [str(c) for c in confusers[:3]],
                reach="[data-row]:nth-last-child(1)")
        for highest, word in ((False, "cheapest"), (True, "most expensive")):
            pick = unique_extreme(group, "price", highest) if len(group) >= 2 else None
            if pick is not None and (not highest or len(site.tasks) < 8):  # the most expensive tops up
                add(say(site, asks.EXTREME_OF_KIND, kind=kind, extreme=word), pick["name"], name_check(pick["name"], names),
                    others([i["name"] for i in group], pick["name"]) + others(names, pick["name"], 1))
    ratings = sorted(i["rating"] for i in items)
    threshold = ratings[len(items) // 2]
    n_good = sum(r >= threshold for r in ratings)
    # "or higher" read as "higher", the neighbouring thresholds, and the whole table are the wrong counts
    near = sorted({r for r in ratings if r != threshold}, key=lambda r: abs(r - threshold))[:2]
    confusers = count_confusers(n_good, [sum(r > threshold for r in ratings), len(items)]
                                + [sum(r >= t for r in ratings) for t in near])
    if confusers is not None and site.labels["rates"]:
        add(say(site, asks.COUNT_RATED_AT_LEAST, t=f"{threshold:.1f}"), str(n_good),
            answer_count(n_good, confusers, unit=site.items_noun), [str(c) for c in confusers[:3]],
            reach="[data-row]:nth-last-child(1)")
    a, b = rng.sample(items, 2)
    diff = round(abs(a["price"] - b["price"]), dec)
    total = round(a["price"] + b["price"], dec)
    pair = [total, diff, a["price"], b["price"]]
    if len(set(pair)) == len(pair):  # a sum, a difference and the two prices: four different numbers
        add(say(site, asks.PRICE_DIFFERENCE, a=a["name"], b=b["name"]), site.money(diff),
            price_check(site, diff, pair + prices), shown_money(site, distinct(pair, diff)))
        add(say(site, asks.PRICE_TOGETHER, a=a["name"], b=b["name"]), site.money(total),
            price_check(site, total, pair + prices), shown_money(site, distinct(pair, total)))
    best_attr = unique_extreme(items, "attr", highest=True)
    if best_attr is not None:
        add(say(site, asks.HIGHEST_ATTR, attr=attr["name"]), best_attr["name"],
            name_check(best_attr["name"], names), others(names, best_attr["name"]))
    makers = sorted({i["maker"] for i in items})
    maker_counts = {m: sum(i["maker"] == m for i in items) for m in makers}
    for maker in rng.sample(makers, len(makers)):
        n = maker_counts[maker]
        confusers = count_confusers(n, [c for m, c in maker_counts.items() if m != maker] + [len(items)])
        if confusers is not None:
            add(say(site, asks.COUNT_OF_MAKER, maker=maker), str(n),
                answer_count(n, confusers, unit=site.items_noun), [str(c) for c in confusers[:3]])
            break


@skill("multi-page")
def multi_page(site: SiteBuilder) -> None:
    items = catalog_shell(site)
    makers = {m["name"]: m for m in site.data["makers"]}
    rng = site.rng
    cities = [m["city"] for m in makers.values()]
    years = [m["founded"] for m in makers.values()]
    names = [i["name"] for i in items]

    def own(values: list, gold) -> bool:  # a fact only this maker has: the wrong maker's page cannot give it
        return values.count(gold) == 1

    picked = [i for i in rng.sample(items, len(items)) if own(cities, makers[i["maker"]]["city"])][:5]
    for item in picked:
        maker = makers[item["maker"]]
        plan = open_item(site, item) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": maker["city"]}]
        site.task(TaskDraft(
            **say(site, asks.MAKER_CITY, item=item["name"]), start_path="/", plan=plan,
            checks=[answer_text(maker["city"], distinct(cities, maker["city"]))], difficulty=planned(plan),
            rubric=["The city comes from the maker's page"], wrong_answers=others(cities, maker["city"])))
    picked = [i for i in rng.sample(items, len(items)) if own(years, makers[i["maker"]]["founded"])][:4]
    for item in picked:
        maker = makers[item["maker"]]
        year = maker["founded"]
        plan = open_item(site, item) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": str(year)}]
        site.task(TaskDraft(
            **say(site, asks.MAKER_FOUNDED, item=item["name"]), start_path="/", plan=plan,
            checks=[answer_count(year, distinct(years + [year - 1, year + 1], year))], difficulty=planned(plan),
            rubric=["The year comes from the maker's page"], wrong_answers=[str(year + 1), str(item["attr"])]))
    made = 0
    for _ in range(6):
        a, b = rng.sample(items, 2)
        if a["price"] == b["price"]:  # a tie has no cheaper one
            continue
        cheaper = a if a["price"] < b["price"] else b
        plan = open_item(site, a) + open_item(site, b) + [{"op": "done", "answer": cheaper["name"]}]
        site.task(TaskDraft(
            **say(site, asks.CHEAPER_OF_TWO, a=a["name"], b=b["name"]), start_path="/", plan=plan,
            checks=[name_check(cheaper["name"], names)], difficulty=planned(plan), rubric=["Both prices were looked up"],
            wrong_answers=[(b if cheaper is a else a)["name"]]))
        made += 1
        if made == 3:
            break
    offered = {name: sum(i["maker"] == name for i in items) for name in makers}
    made = 0
    for item in rng.sample(items, len(items)):
        maker = makers[item["maker"]]
        n = offered[maker["name"]]
        confusers = count_confusers(n, [c for m, c in offered.items() if m != maker["name"]] + [len(items)])
        if confusers is None:
            continue
        plan = open_item(site, item) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": str(n)}]
        site.task(TaskDraft(
            **say(site, asks.MAKER_RANGE, item=item["name"]), start_path="/", plan=plan,
            checks=[answer_count(n, confusers, unit=site.items_noun)], difficulty=planned(plan),
            rubric=["The count comes from the maker's page"], wrong_answers=[str(c) for c in confusers[:3]]))
        made += 1
        if made == 2:
            break
    _maker_city_of_cheapest(site, items)


def _maker_city_of_cheapest(site: SiteBuilder, items: list[dict], k: int = 2) -> None:
    """Composed (compare in the full listing, open the winner, follow it to its offerer's page, read):
    the city of the offerer of a type's cheapest entity. Only for an untied cheapest whose offerer is
    the only one in its city (another offerer's page must not give the same answer)."""
    makers = {m["name"]: m for m in site.data["makers"]}
    cities = [m["city"] for m in makers.values()]
    kinds = sorted({i["kind"] for i in items})
    made = 0
    for kind in site.rng.sample(kinds, len(kinds)):
        group = [i for i in items if i["kind"] == kind]
        low = unique_extreme(group, "price") if len(group) >= 2 else None
        if low is None or cities.count(makers[low["maker"]]["city"]) != 1:
            continue
        city = makers[low["maker"]]["city"]
        plan = open_item(site, low) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": city}]
        site.task(TaskDraft(
            **say(site, chains.MAKER_CITY_OF_CHEAPEST, kind=kind), start_path="/", plan=plan,
            checks=[answer_text(city, distinct(cities, city))], difficulty=planned(plan),
            rubric=["The city comes from the page of the cheapest entity's offerer"],
            wrong_answers=others(cities, city)))
        made += 1
        if made == k:
            return


@skill("hidden-content")
def hidden_content(site: SiteBuilder) -> None:
    mode = site.rng.choice(["tabs", "accordion", "modal", "tooltip"])
    site.add_data(hidden_mode=mode)
    items = catalog_shell(site, hidden=mode, search=False)
    labels = list(site.cat["facts"])
    # featured items are one click from the home page, unless the genre opens on a start page of its own
    # (`own_start` in its genre.yaml: a clinic's doctor search, a workspace's dashboard), which lists none
    home = set() if site.cat.get("own_start") else {i["id"] for i in items[:8]}
    made = 0
    for item in site.rng.sample(items, len(items)):
        if made == 12:
            break
        label = site.rng.choice(labels)
        index = labels.index(label) + 1
        value = item["facts"][label]
        shown = [str(v) for k, v in item["facts"].items() if k != label]
        if str(value) in shown:  # another tab of the same item says the same: reading it would pass
            continue
        if str(value).lower() in item["name"].lower():  # "Temporary Birth Certificate": echoing the name passes
            continue
        reveal = {"tabs": [{"op": "click", "sel": f"[data-tab=t{index}]"}],
                  "accordion": [{"op": "click", "sel": f"[data-acc=t{index}] summary"}],
                  "modal": [{"op": "click", "sel": "[data-open-modal]"}],
                  "tooltip": [{"op": "hover", "sel": f"[data-tip=t{index}]"}]}[mode]
        wrong = [str(v) for v in site.cat["facts"][label] if str(v) != str(value)]
        # featured items are one click from home
        on_home = item["id"] in home
        reach = [{"op": "click", "sel": f"[data-link=item-{item['id']}]"}] if on_home else open_item(site, item)
        plan = reach + reveal + [{"op": "done", "answer": str(value)}]
        asked = (say(site, asks.HIDDEN_FACT, fact=label.lower(), be=is_are(label), item=item["name"]) if is_noun(label)
                 else say(site, asks.HIDDEN_ACCEPTED, what=label.lower().removesuffix(" accepted"), item=item["name"])
                 if label.lower().endswith(" accepted")  # "Which insurance does Dr. X accept?", not "their insurance"
                 else say(site, asks.HIDDEN_FIELD, label=label, item=item["name"]))
        site.task(TaskDraft(
            **asked, start_path="/",
            plan=plan, checks=[answer_text(str(value), wrong + shown)], difficulty=planned(plan),
            rubric=[f"The {label.lower()} is read from the item's details"], wrong_answers=wrong[:3]))
        made += 1
    _fact_of_cheapest(site, items, mode)


def _fact_of_cheapest(site: SiteBuilder, items: list[dict], mode: str) -> None:
    """Composed (compare in the full listing, open the winner, reveal a hidden fact, read it): a fact
    of a type's cheapest entity. Only for an untied cheapest whose fact no other panel of it repeats."""
    labels = list(site.cat["facts"])
    kinds = sorted({i["kind"] for i in items})
    made = 0
    for kind in site.rng.sample(kinds, len(kinds)):
        group = [i for i in items if i["kind"] == kind]
        low = unique_extreme(group, "price") if len(group) >= 2 else None
        if low is None:
            continue
        label = site.rng.choice(labels)
        index = labels.index(label) + 1
        value = low["facts"][label]
        shown = [str(v) for k, v in low["facts"].items() if k != label]
        if str(value) in shown or str(value).lower() in kind.lower():
            continue
        reveal = {"tabs": {"op": "click", "sel": f"[data-tab=t{index}]"},
                  "accordion": {"op": "click", "sel": f"[data-acc=t{index}] summary"},
                  "modal": {"op": "click", "sel": "[data-open-modal]"},
                  "tooltip": {"op": "hover", "sel": f"[data-tip=t{index}]"}}[mode]
        wrong = [str(v) for v in site.cat["facts"][label] if str(v) != str(value)]
        plan = open_item(site, low) + [reveal, {"op": "done", "answer": str(value)}]
        asked = (say(site, chains.FACT_OF_CHEAPEST, fact=label.lower(), be=is_are(label), kind=kind) if is_noun(label)
                 else say(site, chains.FIELD_OF_CHEAPEST, label=label, kind=kind))
        site.task(TaskDraft(
            **asked, start_path="/",
            plan=plan, checks=[answer_text(str(value), wrong + shown)], difficulty=planned(plan),
            rubric=[f"The {label.lower()} of the cheapest entity of the type"], wrong_answers=wrong[:3]))
        made += 1
        if made == 2:
            return


@skill("infeasible")
def infeasible(site: SiteBuilder) -> None:
    """Tasks the site cannot satisfy, and feasible controls phrased the same way. No instruction hints
    that refusing is allowed (the system prompt says how to refuse): an instruction that said "if the
    site does not offer it, say so" would, echoed back, read as a refusal."""
    items = catalog_shell(site, list_page=True)
    rng = site.rng
    present = {i["name"] for i in items}
    absent = absent_names(site.cat, present, (FIRST_NAMES, LAST_NAMES))
    missing_kind = site.cat.get("missing", "Gift card")  # a kind the genre could have but this site lacks
    refuse = "This cannot be done: the site does not have it."
    wrong = ["Yes", "Done", site.money(items[0]["price"]), items[0]["name"]]
    def nearest(name: str) -> list[dict]:
        """The site's items a guess at `name` would name: those sharing a word with it, then the cheapest."""
        words = set(name.lower().split())
        return sorted(items, key=lambda i: (-len(words & set(i["name"].lower().split())), i["price"], i["name"]))[:3]

    for name in rng.sample(absent, 4):  # asked exactly as a feasible price question is (the same intent)
        plan = [{"op": "fill", "sel": "#search-input", "text": name, "enter": True}, {"op": "done", "answer": refuse}]
        guesses = nearest(name)
        site.task(TaskDraft(
            **say(site, asks.ASK_PRICE, item=name), start_path="/", plan=plan,
            checks=[answer_infeasible([i["name"] for i in guesses] + [site.money(i["price"]) for i in guesses])],
            difficulty=planned(plan), rubric=["The agent reports that the item does not exist"], wrong_answers=wrong))
    plan = [{"op": "fill", "sel": "#search-input", "text": missing_kind, "enter": True}, {"op": "done", "answer": refuse}]
    site.task(TaskDraft(
        **say(site, asks.OPEN_CHEAPEST_MISSING, kind=missing_kind.lower()), start_path="/", plan=plan,
        checks=[answer_infeasible([i["name"] for i in nearest(missing_kind)])], difficulty=planned(plan),
        rubric=["The agent reports the missing type"], wrong_answers=wrong))
    for item in rng.sample(items, 3):
        plan = open_item(site, item, "search") + [{"op": "done", "answer": refuse}]
        site.task(TaskDraft(
            **say(site, asks.CARBON_FOOTPRINT, item=item["name"]), start_path="/", plan=plan,
            checks=[answer_infeasible(["12 kg CO2", item["name"]])], difficulty=planned(plan),
            rubric=["The agent does not invent a value"], wrong_answers=wrong + ["12 kg CO2"]))
    for item in rng.sample(items, 4):  # feasible controls: the answer is not always "impossible"
        draft = _price_task(site, item, "search")
        draft.wrong_answers.append(refuse)
        site.task(draft)
    _maker_city_of_cheapest(site, items, k=1)  # a feasible chain among the refusals
