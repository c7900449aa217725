"""The real estate genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

BOOK_TOUR = intent(
    "homes-tour-cheapest",
    "Book a viewing of the cheapest {kind} in {district} on {day} at {time} for {name} ({email}).",
    "Schedule {name} to see the least expensive {kind} for sale in {district}: {day}, {time}, email {email}.",
    "{name} wants to view the lowest-priced {kind} in {district}. Book it for {day} at {time} with {email}.",
    "Arrange a tour of the cheapest {kind} listed in {district} at {time} on {day}; name {name}, email {email}.",
    "Set up a {day} {time} viewing of the most affordable {kind} in {district} for {name}, {email}.")

CONTACT = intent(
    "homes-contact-agent",
    "Ask the agent of the {kind} at {address} \"{message}\" as {name} ({email}).",
    "Send the agent for the {kind} at {address} the message \"{message}\"; name {name}, email {email}.",
    "Message the agent listing the {kind} on {address}: \"{message}\" (from {name}, {email}).",
    "Contact the agent about the {kind} at {address} with \"{message}\". Sign it {name}, email {email}.",
    "{name} ({email}) has a question for the agent selling the {kind} at {address}: \"{message}\" Send it.")

MONTHLY = intent(
    "homes-monthly-payment",
    "What would the monthly payment be for the {kind} at {address} with {down} down at {rate}% over {years} years?",
    "If I buy the {kind} at {address} putting {down} down, at {rate}% interest for {years} years, how much do I pay each month?",
    "Estimate my monthly mortgage payment on the {kind} at {address}: {down} down payment, {rate}% rate, {years}-year term.",
    "With a {down} deposit and a {years}-year loan at {rate}%, what is the monthly payment for the {kind} at {address}?",
    "How much per month would the {kind} at {address} cost me with {down} down, {rate}% interest and {years} years to repay?")

AGENT = intent(
    "homes-agent-of",
    "Which agent handles the {kind} at {address}?",
    "Who is the agent for the {kind} at {address}?",
    "Name the agent selling the {kind} at {address}.",
    "I'm interested in the {kind} at {address}. Which agent should I talk to?",
    "Who lists the {kind} at {address}? Give the agent's name.")
