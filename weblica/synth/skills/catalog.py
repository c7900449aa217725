"""Reading skills over a catalog: search, table reasoning, multi-page seeking, hidden content, infeasible."""
from __future__ import annotations

from weblica.synth.checks import (answer_count, answer_infeasible, answer_number, answer_text, url_is)
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import blurb, catalog_shell, matches, open_item, others, skill

RUBRIC_READ = ["The final answer states the value shown on the site", "No data was invented"]


def _price_task(site: SiteBuilder, item: dict, via: str, difficulty: str) -> TaskDraft:
    items = site.data["items"]
    decimals = site.fmt["decimals"]
    return TaskDraft(
        instruction=f"What is the price of the {item['name']}? Answer with the price.",
        start_path="/", plan=open_item(item, via) + [{"op": "done", "answer": site.money(item["price"])}],
        checks=[answer_number(item["price"], decimals)], difficulty=difficulty, rubric=RUBRIC_READ,
        wrong_answers=[site.money(i["price"]) for i in others(items, item)] + ["I don't know"])


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
    for kind in rng.sample(kinds, 2):
        count = sum(matches(i, kind) for i in items)
        site.task(TaskDraft(
            instruction=f"How many results does a search for \"{kind}\" return?",
            start_path="/", plan=[{"op": "fill", "sel": "#search-input", "text": kind, "enter": True},
                                  {"op": "reach", "sel": "[data-search-summary]"}, {"op": "done", "answer": str(count)}],
            checks=[answer_count(count)], difficulty="medium", rubric=["The answer is the number of results"],
            wrong_answers=[str(count + 1), str(max(0, count - 1)), "many"]))
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

    cheapest = min(items, key=lambda i: i["price"])
    priciest = max(items, key=lambda i: i["price"])
    add(f"Which {site.item_noun} is the cheapest overall?", cheapest["name"], answer_text(cheapest["name"]),
        others(names, cheapest["name"]), "easy")
    add(f"Which {site.item_noun} is the most expensive?", priciest["name"], answer_text(priciest["name"]),
        others(names, priciest["name"]), "easy")
    kinds = sorted({i["kind"] for i in items})
    for kind in rng.sample(kinds, min(3, len(kinds))):
        group = [i for i in items if i["kind"] == kind]
        add(f"How many {site.items_noun} of type {kind} are listed?", str(len(group)), answer_count(len(group)),
            [str(len(group) + 1), str(len(group) + 2)], "medium", reach=f"[data-row]:nth-last-child(1)")
        if len(group) >= 2:
            low = min(group, key=lambda i: i["price"])
            add(f"Which {kind} is the cheapest?", low["name"], answer_text(low["name"]),
                others([i["name"] for i in group], low["name"]) + others(names, low["name"], 1), "medium")
    threshold = sorted(i["rating"] for i in items)[len(items) // 2]
    n_good = sum(i["rating"] >= threshold for i in items)
    add(f"How many {site.items_noun} have a rating of {threshold:.1f} or higher?", str(n_good), answer_count(n_good),
        [str(n_good - 1), str(n_good + 1)], "hard", reach="[data-row]:nth-last-child(1)")
    a, b = rng.sample(items, 2)
    diff = round(abs(a["price"] - b["price"]), dec)
    add(f"What is the price difference between the {a['name']} and the {b['name']}?", site.money(diff),
        answer_number(diff, dec), [site.money(round(a["price"] + b["price"], dec)), site.money(a["price"])], "hard")
    best_attr = max(items, key=lambda i: (i["attr"], -i["price"]))
    if sum(i["attr"] == best_attr["attr"] for i in items) == 1:
        add(f"Which {site.item_noun} has the highest {attr['name'].lower()}?", best_attr["name"],
            answer_text(best_attr["name"]), others(names, best_attr["name"]), "medium")
    total = round(a["price"] + b["price"], dec)
    add(f"What do the {a['name']} and the {b['name']} cost together?", site.money(total), answer_number(total, dec),
        [site.money(diff), site.money(b["price"])], "medium")
    makers = sorted({i["maker"] for i in items})
    maker = rng.choice(makers)
    group = [i for i in items if i["maker"] == maker]
    add(f"How many {site.items_noun} from {maker} are in the table?", str(len(group)), answer_count(len(group)),
        [str(len(group) + 1), "0" if group else "1"], "medium")


@skill("multi-page")
def multi_page(site: SiteBuilder) -> None:
    items = catalog_shell(site, 24)
    makers = {m["name"]: m for m in site.data["makers"]}
    rng = site.rng
    cities = [m["city"] for m in makers.values()]
    for item in rng.sample(items, 4):
        maker = makers[item["maker"]]
        site.task(TaskDraft(
            instruction=f"In which city is the maker of the {item['name']} based?", start_path="/",
            plan=open_item(item) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": maker["city"]}],
            checks=[answer_text(maker["city"])], difficulty="medium", rubric=["The city comes from the maker's page"],
            wrong_answers=others(cities, maker["city"])))
    for item in rng.sample(items, 3):
        maker = makers[item["maker"]]
        site.task(TaskDraft(
            instruction=f"In which year was the company that makes the {item['name']} founded?", start_path="/",
            plan=open_item(item) + [{"op": "click", "sel": "[data-link=maker]"}, {"op": "done", "answer": str(maker["founded"])}],
            checks=[answer_count(maker["founded"])], difficulty="medium", rubric=["The year comes from the maker's page"],
            wrong_answers=[str(maker["founded"] + 1), str(item["attr"])]))
    for _ in range(3):
        a, b = rng.sample(items, 2)
        cheaper = a if a["price"] < b["price"] else b
        site.task(TaskDraft(
            instruction=f"Which is cheaper: the {a['name']} or the {b['name']}? Answer with its name.", start_path="/",
            plan=open_item(a) + open_item(b) + [{"op": "done", "answer": cheaper["name"]}],
            checks=[answer_text(cheaper["name"])], difficulty="hard", rubric=["Both prices were looked up"],
            wrong_answers=[(b if cheaper is a else a)["name"]]))
    for item in rng.sample(items, 2):
        maker = makers[item["maker"]]
        n = sum(i["maker"] == maker["name"] for i in items)
        site.task(TaskDraft(
            instruction=f"How many {site.items_noun} does the maker of the {item['name']} offer on this site?",
            start_path="/", plan=open_item(item) + [{"op": "click", "sel": "[data-link=maker]"},
                                                    {"op": "done", "answer": str(n)}],
            checks=[answer_count(n)], difficulty="hard", rubric=["The count comes from the maker's page"],
            wrong_answers=[str(n + 1), str(n + 2)]))


@skill("hidden-content")
def hidden_content(site: SiteBuilder) -> None:
    mode = site.rng.choice(["tabs", "accordion", "modal", "tooltip"])
    site.data["hidden_mode"] = mode
    items = catalog_shell(site, 20, hidden=mode, search=False)
    labels = list(site.cat["facts"])
    home = {i["id"] for i in items[:8]}
    for item in site.rng.sample(items, 12):
        label = site.rng.choice(labels)
        index = labels.index(label) + 1
        value = item["facts"][label]
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
            checks=[answer_text(str(value), wrong)], difficulty=["easy", "medium", "hard"][level],
            rubric=[f"The {label.lower()} is read from the item's details"], wrong_answers=wrong[:3]))


@skill("infeasible")
def infeasible(site: SiteBuilder) -> None:
    items = catalog_shell(site, 24, list_page=True)
    rng = site.rng
    present = {i["name"] for i in items}
    absent = [f"{a} {n}" for a in site.cat["adjectives"] for n in site.cat["nouns"] if f"{a} {n}" not in present]
    missing_kind = {"electronics": "Refrigerator", "fashion": "Wedding gown"}.get(site.spec.category, "Gift card")
    refuse = "This cannot be done: the site does not have it."
    wrong = ["Yes", "Done", site.money(items[0]["price"]), items[0]["name"]]
    for name in rng.sample(absent, 4):
        site.task(TaskDraft(
            instruction=f"What is the price of the {name}? If the site does not offer it, say so.", start_path="/",
            plan=[{"op": "fill", "sel": "#search-input", "text": name, "enter": True}, {"op": "done", "answer": refuse}],
            checks=[answer_infeasible()], difficulty="medium", rubric=["The agent reports that the item does not exist"],
            wrong_answers=wrong))
    site.task(TaskDraft(
        instruction=f"Open the page of the cheapest {missing_kind.lower()} on the site, or say if there is none.",
        start_path="/", plan=[{"op": "fill", "sel": "#search-input", "text": missing_kind, "enter": True},
                              {"op": "done", "answer": refuse}],
        checks=[answer_infeasible()], difficulty="medium", rubric=["The agent reports the missing type"], wrong_answers=wrong))
    for item in rng.sample(items, 3):
        site.task(TaskDraft(
            instruction=f"What is the carbon footprint stated for the {item['name']}? Say so if it is not given.",
            start_path="/", plan=open_item(item, "search") + [{"op": "done", "answer": refuse}],
            checks=[answer_infeasible()], difficulty="hard", rubric=["The agent does not invent a value"],
            wrong_answers=wrong + ["12 kg CO2"]))
    for item in rng.sample(items, 4):  # feasible controls: the answer is not always "impossible"
        draft = _price_task(site, item, "search", "easy")
        draft.instruction += " If the site does not offer it, say so."
        draft.wrong_answers.append(refuse)
        site.task(draft)
