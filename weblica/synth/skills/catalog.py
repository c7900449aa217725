"""Reading skills over a catalog: search, table reasoning, multi-page seeking, hidden content, infeasible."""
from __future__ import annotations

from weblica.synth.checks import answer_count, answer_infeasible, answer_text, url_is
from weblica.synth.data import FIRST_NAMES, LAST_NAMES
from weblica.synth.entities import absent_names
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import (catalog_shell, count_confusers, distinct, matches, name_check, open_item,
                                         others, price_check, shown_money, skill, unique_extreme)

RUBRIC_READ = ["The final answer states the value shown on the site", "No data was invented"]


def _price_task(site: SiteBuilder, item: dict, via: str, difficulty: str) -> TaskDraft:
    items = site.data["items"]
    prices = [i["price"] for i in items if i is not item]
    return TaskDraft(
        instruction=f"What is the price of the {item['name']}? Answer with the price.",
        start_path="/", plan=open_item(item, via) + [{"op": "done", "answer": site.money(item["price"])}],
        checks=[price_check(site, item["price"], prices)], difficulty=difficulty, rubric=RUBRIC_READ,
        wrong_answers=shown_money(site, distinct(prices, item["price"])) + ["I don't know"])


@skill("search")
def search(site: SiteBuilder) -> None:
    items = catalog_shell(site, 30, list_page=False)
    rng = site.rng
    picks = rng.sample(items, 10)
    for item in picks[:4]:
        site.task(TaskDraft(
            instruction=f"Use the search box to find the {item['name']} and open its page.",
            start_path="/", plan=open_item(item, "search"), checks=[url_is(site.url(f"/item/{item['slug']}"))],
            difficulty="easy", rubric=["The page of the requested item is open"],
            wrong_urls=[f"/item/{i['slug']}" for i in others(items, item)] + ["/search?q=" + item["name"].split()[0]]))
    for item in picks[4:7]:
        site.task(_price_task(site, item, "search", "medium"))
    kinds = sorted({i["kind"] for i in items})
    counts = {kind: sum(matches(i, kind) for i in items) for kind in kinds}
    made = 0
    for kind in rng.sample(kinds, len(kinds)):
        count = counts[kind]
        # another type's search, or the whole catalog, must not give the same number
        confusers = count_confusers(count, [n for k, n in counts.items() if k != kind] + [len(items)])
        if confusers is None:
            continue
        site.task(TaskDraft(
            instruction=f"How many results does a search for \"{kind}\" return?",
            start_path="/", plan=[{"op": "fill", "sel": "#search-input", "text": kind, "enter": True},
                                  {"op": "reach", "sel": "[data-search-summary]"}, {"op": "done", "answer": str(count)}],
            checks=[answer_count(count, confusers, unit="results")], difficulty="medium",
            rubric=["The answer is the number of results"], wrong_answers=[str(c) for c in confusers[:3]] + ["many"]))
        made += 1
        if made == 2:
            break
    hard = 0
    for maker in rng.sample(site.data["makers"], len(site.data["makers"])):
        group = [i for i in items if matches(i, maker["name"])]
        ratings = sorted((i["rating"] for i in group), reverse=True)
        if len(group) < 2 or ratings[0] == ratings[1]:
            continue
        best = max(group, key=lambda i: i["rating"])
        site.task(TaskDraft(
            instruction=f"Search for \"{maker['name']}\" and open the result with the highest rating.",
            start_path="/", plan=[{"op": "fill", "sel": "#search-input", "text": maker["name"], "enter": True},
                                  {"op": "click", "sel": f"[data-search-results] [data-link=item-{best['id']}]"}],
            checks=[url_is(site.url(f"/item/{best['slug']}"))], difficulty="hard",
            rubric=["The open page is the best-rated result of the search"],
            wrong_urls=[f"/item/{i['slug']}" for i in group if i is not best][:3]))
        hard += 1
        if hard == 3:
            break


def _table_page(site: SiteBuilder, items: list[dict]) -> None:
    site.nav.append(("Compare", "/table"))
    site.page("/table", "table.html.j2", title="Compare", heading=f"Compare {site.items_noun}", items=items,
              page_kind="table")


@skill("table-reasoning")
def table_reasoning(site: SiteBuilder) -> None:
    items = catalog_shell(site, 24, search=False, list_page=False)
    _table_page(site, items)
    rng, dec, attr = site.rng, site.fmt["decimals"], site.cat["attr"]
    to_table = [{"op": "click", "sel": "a[href='/table']"}]
    names = [i["name"] for i in items]

    def add(instruction: str, answer: str, check, wrong: list[str], difficulty: str, reach: str | None = None) -> None:
        plan = list(to_table) + ([{"op": "reach", "sel": reach}] if reach else []) + [{"op": "done", "answer": answer}]
        site.task(TaskDraft(instruction=instruction, start_path="/", plan=plan, checks=[check], difficulty=difficulty,
                            rubric=["The answer is computed from the table's values"], wrong_answers=wrong))

    prices = [i["price"] for i in items]
    for label, best in ((f"Which {site.item_noun} is the cheapest overall?", unique_extreme(items, "price")),
                        (f"Which {site.item_noun} is the most expensive?", unique_extreme(items, "price", True))):
        if best is not None:
            add(label, best["name"], name_check(best["name"], names), others(names, best["name"]), "easy")
    kinds = sorted({i["kind"] for i in items})
    kind_counts = {k: sum(i["kind"] == k for i in items) for k in kinds}
    for kind in rng.sample(kinds, min(3, len(kinds))):
        group = [i for i in items if i["kind"] == kind]
        confusers = count_confusers(len(group), [n for k, n in kind_counts.items() if k != kind] + [len(items)])
        if confusers is not None:
            add(f"How many {site.items_noun} of type {kind} are listed?", str(len(group)),
                answer_count(len(group), confusers, unit=site.items_noun), [str(c) for c in confusers[:3]], "medium",
                reach=f"[data-row]:nth-last-child(1)")
        for highest, word in ((False, "cheapest"), (True, "most expensive")):
            pick = unique_extreme(group, "price", highest) if len(group) >= 2 else None
            if pick is not None and (not highest or len(site.tasks) < 8):  # the most expensive tops up
                add(f"Which {kind} is the {word}?", pick["name"], name_check(pick["name"], names),
                    others([i["name"] for i in group], pick["name"]) + others(names, pick["name"], 1), "medium")
    ratings = sorted(i["rating"] for i in items)
    threshold = ratings[len(items) // 2]
    n_good = sum(r >= threshold for r in ratings)
    # "or higher" read as "higher", the neighbouring thresholds, and the whole table are the wrong counts
    near = sorted({r for r in ratings if r != threshold}, key=lambda r: abs(r - threshold))[:2]
    confusers = count_confusers(n_good, [sum(r > threshold for r in ratings), len(items)]
                                + [sum(r >= t for r in ratings) for t in near])
    if confusers is not None:
        add(f"How many {site.items_noun} have a rating of {threshold:.1f} or higher?", str(n_good),
            answer_count(n_good, confusers, unit=site.items_noun), [str(c) for c in confusers[:3]], "hard",
            reach="[data-row]:nth-last-child(1)")
    a, b = rng.sample(items, 2)
    diff = round(abs(a["price"] - b["price"]), dec)
    total = round(a["price"] + b["price"], dec)
    pair = [total, diff, a["price"], b["price"]]
    if len(set(pair)) == len(pair):  # a sum, a difference and the two prices: four different numbers
        add(f"What is the price difference between the {a['name']} and the {b['name']}?", site.money(diff),
            price_check(site, diff, pair + prices), shown_money(site, distinct(pair, diff)), "hard")
        add(f"What do the {a['name']} and the {b['name']} cost together?", site.money(total),
            price_check(site, total, pair + prices), shown_money(site, distinct(pair, total)), "medium")
    best_attr = unique_extreme(items, "attr", highest=True)
    if best_attr is not None:
        add(f"Which {site.item_noun} has the highest {attr['name'].lower()}?", best_attr["name"],
            name_check(best_attr["name"], names), others(names, best_attr["name"]), "medium")
    makers = sorted({i["maker"] for i in items})
    maker_counts = {m: sum(i["maker"] == m for i in items) for m in makers}
    for maker in rng.sample(makers, len(makers)):
        n = maker_counts[maker]
        confusers = count_confusers(n, [c for m, c in maker_counts.items() if m != maker] + [len(items)])
        if confusers is not None:
            add(f"How many {site.items_noun} from {maker} are in the table?", str(n),
                answer_count(n, confusers, unit=site.items_noun), [str(c) for c in confusers[:3]], "medium")
            break


@skill("multi-page")
def multi_page(site: SiteBuilder) -> None:
    items = catalog_shell(site, 24)
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
        site.task(TaskDraft(
            instruction=f"In which city is the maker of the {item['name']} based?", start_path="/",
            plan=open_item(item) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": maker["city"]}],
            checks=[answer_text(maker["city"], distinct(cities, maker["city"]))], difficulty="medium",
            rubric=["The city comes from the maker's page"], wrong_answers=others(cities, maker["city"])))
    picked = [i for i in rng.sample(items, len(items)) if own(years, makers[i["maker"]]["founded"])][:4]
    for item in picked:
        maker = makers[item["maker"]]
        year = maker["founded"]
        site.task(TaskDraft(
            instruction=f"In which year was the company that makes the {item['name']} founded?", start_path="/",
            plan=open_item(item) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": str(year)}],
            checks=[answer_count(year, distinct(years + [year - 1, year + 1], year))], difficulty="medium",
            rubric=["The year comes from the maker's page"], wrong_answers=[str(year + 1), str(item["attr"])]))
    made = 0
    for _ in range(6):
        a, b = rng.sample(items, 2)
        if a["price"] == b["price"]:  # a tie has no cheaper one
            continue
        cheaper = a if a["price"] < b["price"] else b
        site.task(TaskDraft(
            instruction=f"Which is cheaper: the {a['name']} or the {b['name']}? Answer with its name.", start_path="/",
            plan=open_item(a) + open_item(b) + [{"op": "done", "answer": cheaper["name"]}],
            checks=[name_check(cheaper["name"], names)], difficulty="hard", rubric=["Both prices were looked up"],
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
        site.task(TaskDraft(
            instruction=f"How many {site.items_noun} does the maker of the {item['name']} offer on this site?",
            start_path="/", plan=open_item(item) + [{"op": "click", "sel": "[data-link=maker]"},
                                                    {"op": "done", "answer": str(n)}],
            checks=[answer_count(n, confusers, unit=site.items_noun)], difficulty="hard",
            rubric=["The count comes from the maker's page"], wrong_answers=[str(c) for c in confusers[:3]]))
        made += 1
        if made == 2:
            break


@skill("hidden-content")
def hidden_content(site: SiteBuilder) -> None:
    mode = site.rng.choice(["tabs", "accordion", "modal", "tooltip"])
    site.data["hidden_mode"] = mode
    items = catalog_shell(site, 20, hidden=mode, search=False)
    labels = list(site.cat["facts"])
    home = {i["id"] for i in items[:8]}
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
        reveal = {"tabs": [{"op": "click", "sel": f"[data-tab=t{index}]"}],
                  "accordion": [{"op": "click", "sel": f"[data-acc=t{index}] summary"}],
                  "modal": [{"op": "click", "sel": "[data-open-modal]"}],
                  "tooltip": [{"op": "hover", "sel": f"[data-tip=t{index}]"}]}[mode]
        wrong = [str(v) for v in site.cat["facts"][label] if str(v) != str(value)]
        # featured items are one click from home; a modal or a tooltip is harder to find than a tab
        on_home = item["id"] in home
        reach = [{"op": "click", "sel": f"[data-link=item-{item['id']}]"}] if on_home else open_item(item)
        level = (0 if on_home else 1) + (1 if mode in ("modal", "tooltip") else 0)
        site.task(TaskDraft(
            instruction=f"What is the {label.lower()} of the {item['name']}?", start_path="/",
            plan=reach + reveal + [{"op": "done", "answer": str(value)}],
            checks=[answer_text(str(value), wrong + shown)], difficulty=["easy", "medium", "hard"][level],
            rubric=[f"The {label.lower()} is read from the item's details"], wrong_answers=wrong[:3]))
        made += 1


@skill("infeasible")
def infeasible(site: SiteBuilder) -> None:
    """Tasks the site cannot satisfy, and feasible controls phrased the same way. No instruction hints
    that refusing is allowed (the system prompt says how to refuse): an instruction that said "if the
    site does not offer it, say so" would, echoed back, read as a refusal."""
    items = catalog_shell(site, 24, list_page=True)
    rng = site.rng
    present = {i["name"] for i in items}
    absent = absent_names(site.cat, present, (FIRST_NAMES, LAST_NAMES))
    missing_kind = site.cat.get("missing", "Gift card")  # a kind the genre could have but this site lacks
    refuse = "This cannot be done: the site does not have it."
    wrong = ["Yes", "Done", site.money(items[0]["price"]), items[0]["name"]]
    for name in rng.sample(absent, 4):
        site.task(TaskDraft(
            instruction=f"What is the price of the {name}?", start_path="/",
            plan=[{"op": "fill", "sel": "#search-input", "text": name, "enter": True}, {"op": "done", "answer": refuse}],
            checks=[answer_infeasible()], difficulty="medium", rubric=["The agent reports that the item does not exist"],
            wrong_answers=wrong))
    site.task(TaskDraft(
        instruction=f"Open the page of the cheapest {missing_kind.lower()} on the site.",
        start_path="/", plan=[{"op": "fill", "sel": "#search-input", "text": missing_kind, "enter": True},
                              {"op": "done", "answer": refuse}],
        checks=[answer_infeasible()], difficulty="medium", rubric=["The agent reports the missing type"], wrong_answers=wrong))
    for item in rng.sample(items, 3):
        site.task(TaskDraft(
            instruction=f"What is the carbon footprint stated for the {item['name']}?",
            start_path="/", plan=open_item(item, "search") + [{"op": "done", "answer": refuse}],
            checks=[answer_infeasible()], difficulty="hard", rubric=["The agent does not invent a value"],
            wrong_answers=wrong + ["12 kg CO2"]))
    for item in rng.sample(items, 4):  # feasible controls: the answer is not always "impossible"
        draft = _price_task(site, item, "search", "easy")
        draft.wrong_answers.append(refuse)
        site.task(draft)
