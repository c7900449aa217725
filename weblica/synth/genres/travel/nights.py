"""Hotel availability: which nights each room type is sold out, and what a stay can have. A night is
named by its date (the night of March 12 runs to the morning of March 13); a stay from check-in to
check-out holds the nights from the check-in up to the night before the check-out. Every stay the
site's calendar offers lies in the base date's month, so the sold-out nights are drawn in that month.
A room type also has a few rooms a night: the episode's bookings use them up, and a night whose last
room is booked is sold out for the next booking (the server counts them; the results, hotel and booking
pages show it).
The results page, the hotel page and the server's `open_dates` rule (weblica/serve/rules.py) all read
the same `sold_out` lists, so they agree on what can be booked."""
from __future__ import annotations

import calendar
from typing import Any, Callable

from weblica.stay_nights import stay_nights as nights  # the server counts the same nights
from weblica.synth.data import BASE_DATE

# how many nights of the month one room type is sold out: often none or a few, sometimes a busy week
SOLD_OUT_COUNTS = [0, 0, 1, 2, 2, 3, 4, 6]
# how many rooms of a type a hotel has free on a night that is not sold out: at least 2, so that a "book
# everything" run's second booking of the gold room is stored (and fails the checks), not refused
ROOMS_FREE = [2, 2, 2, 3, 3, 4, 5]
STAY_TRIES = 24  # stays drawn before a task gives up finding one it can state without ambiguity

Stay = dict[str, Any]


def calendar_nights() -> tuple[str, str]:
    """The first and the last night the site's calendar offers a stay for (ISO dates): the base date's
    month, which the date fields open on and every stated stay lies in. The server's `open_dates` rule
    carries them (`first_night`, `last_night`) and refuses a stay with a night outside."""
    days = calendar.monthrange(BASE_DATE.year, BASE_DATE.month)[1]
    return BASE_DATE.replace(day=1).isoformat(), BASE_DATE.replace(day=days).isoformat()


def draw_sold_out(rng: Any) -> list[str]:
    """One room type's sold-out nights in the base date's month, sorted ISO dates."""
    days = calendar.monthrange(BASE_DATE.year, BASE_DATE.month)[1]
    picked = rng.sample(range(1, days + 1), rng.choice(SOLD_OUT_COUNTS))
    return [BASE_DATE.replace(day=d).isoformat() for d in sorted(picked)]


def draw_rooms(rng: Any, hotels: list[dict[str, Any]]) -> None:
    """Each room type's `key` (its hotel and place) and how many `rooms` of it are free on a night not
    sold out: bookings of any of its rates use one a night, and the last one makes the night sold out."""
    for hotel in hotels:
        for index, room in enumerate(hotel["rooms"]):
            room["key"], room["rooms"] = f"{hotel['id']}:{index}", rng.choice(ROOMS_FREE)


def is_free(room: dict[str, Any], stay: Stay) -> bool:
    """The room type (or a rate, which carries its room's nights) is free every night of the stay."""
    return not set(room["sold_out"]) & set(nights(stay["checkin"], stay["checkout"]))


def free_stays(room: dict[str, Any], length: int) -> list[Stay]:
    """Every stay of `length` nights in the base date's month that the room type (or rate) is free for,
    earliest first: what a test or a task may book there whatever nights were drawn sold out."""
    days = calendar.monthrange(BASE_DATE.year, BASE_DATE.month)[1]
    dates = [BASE_DATE.replace(day=d).isoformat() for d in range(1, days + 1)]
    return [stay for stay in ({"checkin": a, "checkout": b} for a, b in zip(dates, dates[length:])) if is_free(room, stay)]


def open_rates(rates: list[dict[str, Any]], stay: Stay, guests: int = 1) -> list[dict[str, Any]]:
    """The rates whose room is free for the whole stay and sleeps the guests."""
    return [r for r in rates if is_free(r, stay) and r["sleeps"] >= guests]


def stay_price(hotel: dict[str, Any], stay: Stay) -> float | None:
    """The hotel's "from" price for the stay, as its results row shows it: the cheapest rate of a room
    free every night (whatever it sleeps); None when every room is sold out on a night of the stay."""
    prices = [rate["price"] for room in hotel["rooms"] if is_free(room, stay) for rate in room["rates"]]
    return min(prices) if prices else None


def shown(hotels: list[dict[str, Any]], stay: Stay, guests: int) -> list[dict[str, Any]]:
    """The hotels a results page for the stay lists: some room is free every night, and the largest of
    those sleeps the party (the page's guests filter)."""
    return [h for h in hotels if any(is_free(r, stay) and r["sleeps"] >= guests for r in h["rooms"])]


def results_rooms(hotel: dict[str, Any]) -> list[dict[str, Any]]:
    """What a results row carries so the page can price it for any stay: per room type, what it
    sleeps, its cheapest rate, its sold-out nights, and its key and rooms a night (the page adds the
    nights the episode's bookings have used up)."""
    return [{"sleeps": r["sleeps"], "from": min(rate["price"] for rate in r["rates"]), "out": r["sold_out"],
             "key": r["key"], "rooms": r["rooms"]} for r in hotel["rooms"]]


def draw_stay(rng: Any, draw: Callable[[Any], tuple[str, str]], fits: Callable[[Stay], bool],
              guests: int | None = None) -> Stay | None:
    """A stay (check-in, check-out and, when given, guests) that `fits`, drawn at most STAY_TRIES times."""
    for _ in range(STAY_TRIES):
        checkin, checkout = draw(rng)
        stay = {"checkin": checkin, "checkout": checkout, **({"guests": guests} if guests else {})}
        if fits(stay):
            return stay
    return None
