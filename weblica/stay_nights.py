"""The nights of a stay, shared by the synth genres that draw hotel availability
(weblica/synth/genres/travel/nights.py) and the server rule that counts booked rooms
(weblica/serve/rules.py `open_dates`): both must name the same nights, and neither layer imports the
other. A night is named by its date: the night of March 12 runs to the morning of March 13, so a stay
holds the nights from the check-in up to the night before the check-out."""
from __future__ import annotations

import datetime as dt

MAX_NIGHTS = 366  # a stay a hostile record gives ("0001-01-01" to "9999-12-31") is cut at a year


def stay_nights(checkin: str | dt.date, checkout: str | dt.date) -> list[str]:
    """The nights of the stay as ISO dates, at most MAX_NIGHTS of them (none when the check-out does not
    follow the check-in). ISO strings are read with `date.fromisoformat` (its ValueError passes on)."""
    first = checkin if isinstance(checkin, dt.date) else dt.date.fromisoformat(checkin)
    last = checkout if isinstance(checkout, dt.date) else dt.date.fromisoformat(checkout)
    return [(first + dt.timedelta(days=n)).isoformat() for n in range(min((last - first).days, MAX_NIGHTS))]
