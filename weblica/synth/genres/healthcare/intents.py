"""The healthcare genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

BOOK_EARLIEST = intent(
    "health-book-earliest-in-network",
    "Book the earliest open appointment with a {specialist} who accepts {insurance}, for {name} ({email}), reason: {reason}.",
    "Find a {specialist} that takes {insurance} and book their first available slot for {name}, email {email}, reason {reason}.",
    "{name} has {insurance} and needs to see a {specialist} as soon as possible. Book the earliest slot (email {email}, reason: {reason}).",
    "Get {name} the soonest {specialist} appointment covered by {insurance}; use {email} and the reason \"{reason}\".",
    "Schedule {name} with whichever {specialist} accepting {insurance} has the earliest opening. Email {email}, reason {reason}.")

BOOK_SLOT = intent(
    "health-book-slot",
    "Book {doctor}'s {time} appointment on {day} for {name} ({email}), reason: {reason}.",
    "Reserve the {time} slot with {doctor} on {day} for {name}; email {email}, reason {reason}.",
    "Make an appointment with {doctor} on {day} at {time} for {name}, email {email}, reason: {reason}.",
    "{name} wants to see {doctor} on {day} at {time}. Book it with the email {email} and reason \"{reason}\".",
    "Schedule {name} with {doctor} at {time} on {day} (email {email}, reason: {reason}).")

WHO_ACCEPTS = intent(
    "health-who-accepts",
    "Which {specialist} accepts {insurance}?",
    "I have {insurance}. Which {specialist} on the site takes it?",
    "Name the {specialist} who is in network with {insurance}.",
    "Find the {specialist} that accepts {insurance} insurance and tell me their name.",
    "Who is the {specialist} taking {insurance} patients?")

FIRST_SLOT = intent(
    "health-first-slot-time",
    "At what time is {doctor}'s first open appointment on {day}?",
    "What is the earliest time {doctor} can see me on {day}?",
    "On {day}, when does {doctor} have their first free slot?",
    "What time is the first appointment {doctor} still has free on {day}?",
    "When is the earliest opening with {doctor} on {day}?")

LAST_VISIT = intent(
    "health-last-visit",
    "When did I last see {doctor}?",
    "What was the date of my most recent visit with {doctor}?",
    "When was my last appointment with {doctor}?",
    "On what date did I most recently visit {doctor}?",
    "Find the date of my latest visit to {doctor}.")

VISIT_BILLED = intent(
    "health-visit-billed",
    "How much was I billed for my visit on {day}?",
    "What was the bill for my appointment on {day}?",
    "Find my visit from {day}: how much was billed to me?",
    "What amount was I charged for the visit on {day}?",
    "How much did I have to pay for the {day} appointment?")

CLINIC = intent(
    "health-doctor-clinic",
    "At which clinic does {doctor} see patients?",
    "Where does {doctor} work? Give the clinic's name.",
    "Which clinic is {doctor} at?",
    "Name the clinic where I can see {doctor}.",
    "I'd like an appointment with {doctor}. Which clinic would I go to?")
