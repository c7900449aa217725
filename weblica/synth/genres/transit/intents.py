"""The transit genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

SAVE_FASTEST = intent(
    "transit-save-fastest",
    "Plan a trip from {origin} to {destination} leaving after {after}, and save the journey that gets there first.",
    "I need to be at {destination} as early as possible, starting from {origin} after {after}. Save that journey.",
    "Find the earliest-arriving connection from {origin} to {destination} departing after {after} and save it.",
    "Leaving {origin} no earlier than {after}, which journey reaches {destination} first? Save it to my journeys.",
    "Save the journey from {origin} that reaches {destination} earliest when I set off after {after}.")

SUBSCRIBE = intent(
    "transit-subscribe-alerts",
    "Sign {email} up for service alerts on {line}.",
    "Subscribe {email} to disruption alerts for {line}.",
    "I want alerts about {line} sent to {email}. Set that up.",
    "Get {line} service updates emailed to {email}.",
    "Register {email} for {line} alerts.")

FIRST_DEPARTURE = intent(
    "transit-first-departure",
    "When does the first {line} service leave {stop} after {after}?",
    "What time is the next {line} departure from {stop} after {after}?",
    "I'm at {stop} at {after}. When does the next {line} leave?",
    "After {after}, when is the first {line} from {stop}?",
    "Find the {line} timetable at {stop}: what is the first departure after {after}?")

ARRIVAL = intent(
    "transit-earliest-arrival",
    "Leaving {origin} after {after}, what is the earliest time I can reach {destination}?",
    "If I set off from {origin} after {after}, when do I get to {destination} at the soonest?",
    "What is the earliest arrival at {destination} for a trip from {origin} departing after {after}?",
    "Starting at {origin} after {after}, by what time can I be at {destination}?",
    "When would I arrive at {destination} at the earliest, leaving {origin} after {after}?")

CLOSED_STOP = intent(
    "transit-closed-stop",
    "Which stop is closed on {line} because of works?",
    "Service alerts say a {line} stop is shut. Which one?",
    "Name the {line} stop that trains and buses skip during the works.",
    "Which {line} stop can't I use at the moment?",
    "There are works on {line}: which stop is not served?")
