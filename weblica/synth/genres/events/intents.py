"""The events genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

BUY = intent(
    "events-buy-tickets",
    "Buy tickets for the {kind} at {venue} on {day}: {count_a} × {type_a} and {count_b} × {type_b}, for {name} ({email}).",
    "Get me {count_a} × {type_a} and {count_b} × {type_b} for the {kind} at {venue} on {day}; name {name}, email {email}.",
    "{name} ({email}) wants {count_a} × {type_a} plus {count_b} × {type_b} for the {kind} happening at {venue} on {day}. Order them.",
    "Order tickets for the {day} {kind} at {venue}: {count_a} × {type_a}, {count_b} × {type_b}. Buyer {name}, {email}.",
    "Book {count_a} × {type_a} and {count_b} × {type_b} for the {kind} at {venue} on {day} in the name of {name}, {email}.")

TOTAL = intent(
    "events-ticket-total",
    "How much do {count} {type} tickets for {event} cost in total?",
    "What would {count} {type} tickets to {event} come to?",
    "I need {count} {type} tickets for {event}. What is the total price?",
    "Work out the cost of {count} {type} tickets for {event}.",
    "What do {count} {type} tickets for {event} cost altogether?",
    "Tell me the total for {count} {type} tickets to {event}.")

WHERE = intent(
    "events-venue-of",
    "At which venue is {event}?",
    "Where is {event} taking place? Name the venue.",
    "Which venue hosts {event}?",
    "Name the venue of {event}.",
    "I have tickets for {event}. Which venue do I go to?")

WHEN = intent(
    "events-date-of",
    "On what date is {event}?",
    "When does {event} take place?",
    "What is the date of {event}?",
    "Which day is {event} on?",
    "Tell me the date {event} is scheduled for.")

TOGETHER = intent(
    "events-seats-together",
    "Book {count} seats next to each other in the {zone} zone for {event}, as close to the stage as possible, for {name} ({email}).",
    "Get {count} adjacent {zone} seats for {event}, in the front-most row that has them; name {name}, email {email}.",
    "{name} ({email}) wants {count} seats side by side in the {zone} zone at {event}, nearest the stage. Buy them.",
    "For {event}, buy {count} seats together in the {zone} area, in the row closest to the stage where that is possible. Tickets for {name}, {email}.",
    "Reserve {count} neighbouring seats in the {zone} zone for {event}, as near the front as they can be, in the name of {name} ({email}).")

NAMED = intent(
    "events-seats-named",
    "Book seats {seats} in row {row} for {event}, for {name} ({email}).",
    "Buy row {row}, seats {seats}, for {event}; name {name}, email {email}.",
    "{name} ({email}) wants seats {seats} of row {row} for {event}. Book them.",
    "For {event}, get me seats {seats} in row {row}. Tickets for {name}, {email}.",
    "Reserve row {row} seats {seats} for {event} in the name of {name} ({email}).")

FREE_IN_ROW = intent(
    "events-seats-free-in-row",
    "How many seats are still free in row {row} for {event}?",
    "For {event}, how many seats in row {row} can still be booked?",
    "Count the available seats in row {row} for {event}.",
    "How many unsold seats are left in row {row} for {event}?",
    "I'd like to sit in row {row} for {event}. How many seats are still open there?")
