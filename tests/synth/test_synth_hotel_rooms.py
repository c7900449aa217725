"""Hotel rooms are used up (issue #18 point 1): a room type has a few rooms a night; a booking of any of
its rates holds one each night of the stay, and once the episode's bookings hold every room on a night
the next booking over it is refused by the server (409 naming the night, nothing stored), a patch
included, and the hotel and booking pages show the room sold out for such a stay. Real site server,
real Chromium, posts around the page and the page's own form."""
from __future__ import annotations

import json

from weblica.env.task import load_tasks
from weblica.serve.rules import refusal
from weblica.synth.generate import build_site, write_unvalidated
from weblica.synth.genres.travel.nights import free_stays, is_free, nights
from weblica.synth.genres.travel.hotels import rates_of
from weblica.synth.spec import sample_spec
from tests_helpers import fetch_json, run, synth_episode

SEED = 21

RULE = [{"kind": "open_dates", "by": "rate", "from": "checkin", "to": "checkout", "closed": {"r1": [], "r2": [], "r3": []},
         "room_of": {"r1": "h1:0", "r2": "h1:0", "r3": "h1:1"}, "rooms": {"h1:0": 2, "h1:1": 1},
         "error": "Sold out on {dates}."}]


def _book(rate: str, checkin: str, checkout: str, state: dict) -> str | None:
    return refusal(RULE, "hotel_bookings", {"rate": rate, "checkin": checkin, "checkout": checkout}, state)


def test_bookings_use_up_a_rooms_nights_across_its_rates():
    state = {"hotel_bookings": [{"rate": "r1", "checkin": "2026-03-10", "checkout": "2026-03-12"},
                                {"rate": "r2", "checkin": "2026-03-11", "checkout": "2026-03-13"},
                                {"rate": "r2", "checkin": "junk", "checkout": "2026-03-13"}]}
    assert _book("r1", "2026-03-09", "2026-03-14", state) == "Sold out on 2026-03-11."  # both rooms held that night only
    assert _book("r2", "2026-03-11", "2026-03-12", state) == "Sold out on 2026-03-11."
    assert _book("r1", "2026-03-12", "2026-03-14", state) is None  # one of two held on the 12th
    assert _book("r1", "2026-03-09", "2026-03-11", state) is None
    assert _book("r3", "2026-03-11", "2026-03-12", state) is None  # another room type is not used up
    one = {"hotel_bookings": [{"rate": "r3", "checkin": "2026-03-01", "checkout": "2026-03-03"}]}
    assert _book("r3", "2026-03-02", "2026-03-04", one) == "Sold out on 2026-03-02."  # its only room
    assert _book("r3", "2026-03-03", "2026-03-04", one) is None


def test_the_last_room_booked_sells_the_night_out_on_the_server_and_the_pages(tmp_path):
    spec = sample_spec(SEED, "search", "travel")
    path = write_unvalidated(spec, tmp_path)
    site = build_site(spec)
    task = next(t for t in site.tasks if t.intent.startswith("hotel-"))
    origin = "http://" + json.loads((path / "site.json").read_text())["spec"]["host"]
    # the hotel's room type with the fewest rooms and two rates, and two stays it is free for, apart
    hotel, room = min(((h, r) for h in site.data["hotels"] for r in h["rooms"] if len(r["rates"]) == 2),
                      key=lambda hr: (hr[1]["rooms"], hr[0]["id"]))
    rates = [r for r in rates_of(hotel) if r["room_key"] == room["key"]]
    stays = free_stays(room, 2)
    stay = stays[0]
    other = next(s for s in stays if s["checkin"] >= stay["checkout"])
    guest = {"name": "Ana Berg", "email": "ana@example.test", "guests": 1}
    n = room["rooms"]
    episode_task = next(t for t in load_tasks(path / "tasks.jsonl") if t.metadata.get("intent") == task.intent)

    async def play(page, backend):
        await page.goto(origin + "/hotels", wait_until="load")
        posts = [("POST", "/api/hotel_bookings", {"rate": rates[i % 2]["id"], **stay, **guest}) for i in range(n)]
        posts += [("POST", "/api/hotel_bookings", {"rate": rates[0]["id"], **stay, **guest}),    # no room left
                  ("POST", "/api/hotel_bookings", {"rate": rates[1]["id"], **other, **guest}),   # other nights: free
                  ("PATCH", f"/api/hotel_bookings/r{n + 1}", dict(stay))]                        # moved onto the full nights
        seen = {"posts": [await fetch_json(page, *p) for p in posts]}
        query = f"checkin={stay['checkin']}&checkout={stay['checkout']}&guests=1"
        await page.goto(f"{origin}/hotels/{hotel['slug']}?{query}", wait_until="load")
        sel = f"[data-rate={rates[0]['id']}] [data-sold-out]"
        await page.wait_for_function(f"!document.querySelector('{sel}').hidden")
        seen["reserve_hidden"] = await page.locator(f"[data-rate={rates[0]['id']}] [data-reserve]").is_hidden()
        await page.goto(f"{origin}/hotels/{hotel['slug']}?checkin={other['checkin']}&checkout={other['checkout']}&guests=1",
                        wait_until="load")
        await page.wait_for_timeout(300)
        seen["other_reserve"] = await page.locator(f"[data-rate={rates[0]['id']}] [data-reserve]").is_visible()
        await page.goto(f"{origin}/hotels/results?city={hotel['city']}&{query}", wait_until="load")
        await page.wait_for_function(f"JSON.parse(document.querySelector('[data-row={hotel['id']}]').dataset.roomNights)"
                                     f".some((r) => r.key === '{room['key']}' && r.out.includes('{stay['checkin']}'))")
        row = page.locator(f"[data-row={hotel['id']}]")
        seen["row"] = (await row.get_attribute("data-unavailable"), await row.get_attribute("data-s-price"))
        await page.goto(f"{origin}/hotels/book?rate={rates[1]['id']}&{query}", wait_until="load")
        await page.wait_for_function(f"document.querySelector('#hotel-booking-form [name=checkin]').value === '{stay['checkin']}'")
        await page.wait_for_timeout(300)
        await page.fill("#f-name", guest["name"])
        await page.fill("#f-email", guest["email"])
        await page.click("#submit")
        await page.wait_for_function("!document.querySelector('#hotel-booking-form [data-form-error]').hidden")
        seen["form_error"] = await page.locator("#hotel-booking-form [data-form-error]").inner_text()
        seen["state"] = await backend.state(episode_task, "rooms")
        return seen

    seen = run(synth_episode([path], episode_task, "rooms", play))
    codes = [code for code, _ in seen["posts"]]
    assert codes == [200] * n + [409, 200, 409], seen["posts"]
    full = ", ".join(nights(stay["checkin"], stay["checkout"]))  # both nights: every room held on each
    assert f"sold out on the night of {full};" in seen["posts"][n][1]["error"], (full, seen["posts"][n])
    assert "sold out on the night of" in seen["posts"][n + 2][1]["error"]
    assert seen["reserve_hidden"] and seen["other_reserve"]
    # the results row is priced by the hotel's other rooms free for the stay, or left out when none is
    others = [r for r in hotel["rooms"] if r is not room and is_free(r, stay)]
    if others:
        assert seen["row"][0] is None and float(seen["row"][1]) == min(rate["price"] for r in others for rate in r["rates"]), seen["row"]
    else:
        assert seen["row"][0] is not None, seen["row"]
    assert "sold out on the night of" in seen["form_error"], seen["form_error"]
    bookings = seen["state"]["hotel_bookings"]
    assert len(bookings) == n + 1 and bookings[-1]["checkin"] == other["checkin"], bookings  # nothing more stored
