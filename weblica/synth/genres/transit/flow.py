"""Transit: lines with their stops and per-stop departures, a route planner (from, to, leave after ->
itineraries with changes and duration, computed in flows.js from the same timetable the gold is
computed from here), saving a journey and alert subscriptions (server-side), service alerts."""
from __future__ import annotations

from typing import Any

from weblica.synth.checks import answer_text, state_count, state_is
from weblica.synth.data import slugify
from weblica.synth.fake import people as fake_people
from weblica.synth.fake import names as name_source
from weblica.synth.genres.kit import Plan, act, ask, fill_plan, record_checks
from weblica.synth.genres.transit.intents import ARRIVAL, CLOSED_STOP, FIRST_DEPARTURE, SAVE_FASTEST, SUBSCRIBE
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import distinct

STOPS = ["{street_name}", "{last_name} Square", "{street_name} Station", "{last_name} Park", "{home_city} Central",
         "{last_name} Hospital", "{street_name} Market", "{last_name} University"]
CHANGE_MIN = 2  # minutes needed to change lines at a stop; flows.js uses the same
SHOWN = 3  # itineraries the planner lists


SUBSCRIBE_FIELDS = [{"name": "email", "label": "Email", "type": "email", "required": True},
                    {"name": "line", "label": "Line", "type": "select", "options": [], "required": True},
                    {"name": "sms", "label": "Also send a text message", "type": "checkbox"}]


def hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _network(site: SiteBuilder) -> list[dict[str, Any]]:
    rng = site.rng
    # stops of its own town (weblica/synth/fake.py), named as stops are: a street, a square, a station
    source = name_source(site, "stops")
    pool = [source.unique(STOPS[k % len(STOPS)]) for k in range(10)]
    kinds = list(site.cat["kinds"])
    lines = []
    for index in range(4):
        stops = rng.sample(pool, rng.randint(5, 6))
        offsets, at = [], 0
        for _ in stops:
            offsets.append(at)
            at += rng.randint(2, 6)
        first, headway = 6 * 60 + rng.randint(0, 14), rng.choice([10, 12, 15, 20])
        name = f"{kinds[index % len(kinds)]} {index + 1}"
        lines.append({"id": f"l{index + 1}", "name": name, "slug": slugify(name), "stops": stops, "offsets": offsets,
                      "starts": [first + k * headway for k in range(9)], "headway": headway,
                      "towards": stops[-1]})
    for line in lines:
        line["stop_pages"] = [{"stop": s, "slug": slugify(s), "times": [hhmm(t + off) for t in line["starts"]]}
                              for s, off in zip(line["stops"], line["offsets"])]
    return lines


def itineraries(lines: list[dict[str, Any]], origin: str, destination: str, after: int) -> list[dict[str, Any]]:
    """Every journey with at most one change, best first (earliest arrival, then latest departure, then
    fewer changes); flows.js planner() computes the same list in the same order."""
    out = []
    for a in lines:
        if origin not in a["stops"]:
            continue
        i = a["stops"].index(origin)
        for start in a["starts"]:
            dep = start + a["offsets"][i]
            if dep < after:
                continue
            for j in range(i + 1, len(a["stops"])):
                stop, arr1 = a["stops"][j], start + a["offsets"][j]
                if stop == destination:
                    out.append({"dep": dep, "arr": arr1, "changes": 0, "legs": [[a["name"], origin, stop, dep, arr1]]})
                    continue
                for b in lines:
                    if b is a or stop not in b["stops"] or destination not in b["stops"]:
                        continue
                    x, y = b["stops"].index(stop), b["stops"].index(destination)
                    if x >= y:
                        continue
                    nxt = [s for s in b["starts"] if s + b["offsets"][x] >= arr1 + CHANGE_MIN]
                    if nxt:
                        dep2, arr = nxt[0] + b["offsets"][x], nxt[0] + b["offsets"][y]
                        out.append({"dep": dep, "arr": arr, "changes": 1,
                                    "legs": [[a["name"], origin, stop, dep, arr1], [b["name"], stop, destination, dep2, arr]]})
    out.sort(key=lambda o: (o["arr"], -o["dep"], o["changes"], str(o["legs"])))
    seen, best = set(), []
    for o in out:  # one itinerary per departure and arrival pair: the one with fewer changes
        if (o["dep"], o["arr"]) not in seen:
            seen.add((o["dep"], o["arr"]))
            best.append(o)
    return best


def build_flows(site: SiteBuilder) -> None:
    rng = site.rng
    lines = _network(site)
    stops = sorted({s for line in lines for s in line["stops"]})
    closures = []
    for line in lines[:3]:
        stop = rng.choice(line["stops"][1:-1])
        closures.append({"id": line["id"], "line": line["name"], "stop": stop, "text": f"{stop} is closed on {line['name']} for platform "
                         f"works; use the stop before or after it."})
    delays = [{"line": lines[3]["name"], "text": f"{lines[3]['name']} runs every {lines[3]['headway'] + 5} minutes in the "
               "evenings this week because of a vehicle shortage."}]
    site.add_data(lines=lines, closures=closures)
    site.add_state(saved_journeys=[], alert_subscriptions=[])
    times = [hhmm(6 * 60 + 10 * k) for k in range(10)]
    planner = [{"name": "from", "label": "From", "type": "select", "options": stops, "required": True},
               {"name": "to", "label": "To", "type": "select", "options": stops, "required": True},
               {"name": "after", "label": "Leave after", "type": "select", "options": times, "required": True}]
    subscribe = [dict(f, options=[line["name"] for line in lines]) if f["name"] == "line" else f for f in SUBSCRIBE_FIELDS]
    site.add_nav(("Journey planner", "/planner"), ("Lines", "/lines"), ("Service alerts", "/alerts"))
    network = {"change": CHANGE_MIN, "shown": SHOWN,
               "lines": [{k: line[k] for k in ("name", "stops", "offsets", "starts")} for line in lines]}
    # the journey planner comes first (transit/templates/start.html.j2); it plans on /planner
    site.page("/", "transit/start.html.j2", title="Plan your journey", fields=planner, lines=lines, closures=closures,
              delays=delays, page_kind="home")
    site.page("/planner", "transit/planner.html.j2", title="Journey planner", heading="Plan a journey",
              fields=planner, network=network, page_kind="journey-planner")
    site.page("/lines", "transit/lines.html.j2", title="Lines", heading="Lines and timetables", lines=lines,
              page_kind="lines")
    for line in lines:
        site.page(f"/lines/{line['slug']}", "transit/line.html.j2", title=line["name"], line=line,
                  page_kind="line")
        for sp in line["stop_pages"]:
            site.page(f"/lines/{line['slug']}/{sp['slug']}", "transit/stop.html.j2",
                      title=f"{line['name']} at {sp['stop']}", line=line, stop=sp, page_kind="stop-timetable")
    site.page("/alerts", "transit/alerts.html.j2", title="Service alerts", heading="Service alerts",
              closures=closures, delays=delays, fields=subscribe, page_kind="alerts")
    site.page("/alerts/subscribed", "message.html.j2", title="Subscribed", heading="You are subscribed",
              text="We will email you when something changes on this line.", back="/alerts", page_kind="done")
    _tasks(site, lines, stops, times, planner, subscribe, closures)


def _tasks(site: SiteBuilder, lines: list[dict[str, Any]], stops: list[str], times: list[str],
           planner: list[dict[str, Any]], subscribe: list[dict[str, Any]], closures: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/planner"
    # every time the site shows (timetables, planner options): an answer hedging between two fails
    every_time = sorted({t for line in lines for sp in line["stop_pages"] for t in sp["times"]} | set(times))
    trips = [(a, b, t) for a in stops for b in stops if a != b for t in times]
    rng.shuffle(trips)

    def plan_trip(origin: str, destination: str, after: str) -> Plan:
        return fill_plan(site, planner, {"from": origin, "to": destination, "after": after}) + \
            [{"op": "click", "sel": "#plan-trip"}]

    def key(o: dict[str, Any]) -> str:
        return f"{hhmm(o['dep'])}-{hhmm(o['arr'])}".replace(":", "")

    found = []
    for origin, destination, after in trips:  # journeys with a change and a unique best one
        options = itineraries(lines, origin, destination, int(after[:2]) * 60 + int(after[3:]))
        if len(options) >= 2 and options[0]["arr"] < options[1]["arr"] and any(o["changes"] for o in options[:SHOWN]):
            found.append((origin, destination, after, options))
            if len(found) == 2:
                break
    if found:
        origin, destination, after, options = found[0]
        best = options[0]
        plan = plan_trip(origin, destination, after) + [{"op": "click", "sel": f"[data-itinerary='{key(best)}'] [data-save-journey]"}]
        act(site, SAVE_FASTEST, {"origin": origin, "destination": destination, "after": after}, start, plan,
            [state_count("saved_journeys", 1), state_is("saved_journeys.0.from", origin),
             state_is("saved_journeys.0.to", destination), state_is("saved_journeys.0.depart", hhmm(best["dep"])),
             state_is("saved_journeys.0.arrive", hhmm(best["arr"]))], "Only the first-arriving journey saved",
            maximal=plan + [{"op": "click", "sel": f"[data-itinerary='{key(o)}'] [data-save-journey]"}
                            for o in options[1:SHOWN]])

    line = rng.choice(lines)
    email = fake_people(site, "rider", 1)[0]["email"]
    act(site, SUBSCRIBE, {"email": email, "line": line["name"]}, start,
        [{"op": "click", "sel": "a[href='/alerts']"}] + fill_plan(site, subscribe, {"email": email, "line": line["name"]}) +
        [{"op": "click", "sel": "#subscribe"}],
        record_checks("alert_subscriptions", subscribe, {"email": email, "line": line["name"]}), "One subscription to that line's alerts")

    line = rng.choice(lines)
    sp = rng.choice(line["stop_pages"][:-1])
    k = rng.randint(1, len(sp["times"]) - 2)
    after = hhmm(int(sp["times"][k][:2]) * 60 + int(sp["times"][k][3:]) - 1)
    ask(site, FIRST_DEPARTURE, {"line": line["name"], "stop": sp["stop"], "after": after}, start,
        [{"op": "click", "sel": "a[href='/lines']"}, {"op": "click", "sel": f"[data-line={line['id']}] a"},
         {"op": "click", "sel": f"[data-stop-link='{sp['slug']}']"}, {"op": "reach", "sel": f"[data-time='{sp['times'][k]}']"}],
        sp["times"][k], answer_text(sp["times"][k], distinct(sp["times"] + every_time, sp["times"][k])),
        [sp["times"][k - 1], sp["times"][k + 1]], "The first departure after that time")

    def arrival() -> None:
        if len(found) < 2:
            return
        origin, destination, after, options = found[1]
        gold = hhmm(options[0]["arr"])
        shown = [hhmm(t) for o in options[:SHOWN] for leg in o["legs"] for t in leg[3:]]
        ask(site, ARRIVAL, {"origin": origin, "destination": destination, "after": after}, start,
            plan_trip(origin, destination, after) + [{"op": "reach", "sel": f"[data-itinerary='{key(options[0])}']"}],
            gold, answer_text(gold, distinct(shown + [after] + every_time, gold)), distinct(shown, gold), "The arrival time of the first-arriving journey")

    def closed() -> None:
        closure = rng.choice(closures)
        line = next(x for x in lines if x["name"] == closure["line"])
        others = [c["stop"] for c in closures] + line["stops"]
        ask(site, CLOSED_STOP, {"line": closure["line"]}, start,
            [{"op": "click", "sel": "a[href='/alerts']"}, {"op": "reach", "sel": f"[data-alert='{line['id']}']"}],
            closure["stop"], answer_text(closure["stop"], distinct(others, closure["stop"])),
            distinct(others, closure["stop"]), "The stop closed on that line")

    rng.choice([arrival, closed])()
