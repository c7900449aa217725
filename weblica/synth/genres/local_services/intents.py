"""The local services genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

BOOK_BEST = intent(
    "services-book-best-rated",
    "Book the earliest free visit with the best-rated {trade} provider in {area} for {name} ({email}) at {address}.",
    "Find the top-rated {trade} pro serving {area} and take their first open slot for {name}, {email}, {address}.",
    "{name} needs {trade} help at {address} in {area}. Book the highest-rated provider's soonest visit (email {email}).",
    "Schedule the first available visit from the best-reviewed {trade} provider in {area}: {name}, {email}, address {address}.",
    "Get the {trade} provider with the best rating in {area} to come as early as they can; book it for {name} ({email}) at {address}.")

BOOK_SLOT = intent(
    "services-book-slot",
    "Book {provider} for {day} at {time} for {name} ({email}) at {address}.",
    "Reserve the {time} visit on {day} with {provider}: {name}, {email}, {address}.",
    "Have {provider} come on {day} at {time}; the booking is for {name}, {email}, at {address}.",
    "{name} wants {provider} on {day} at {time}. Book it with {email} and the address {address}.",
    "Take {provider}'s {time} slot on {day} for {name} (email {email}, address {address}).")

QUOTE = intent(
    "services-request-quote",
    "Ask {provider} for a quote for {job} for {name} ({email}).",
    "Request a quote from {provider}: {job}, for {name}, email {email}.",
    "Get a price quote for {job} from {provider}; my name is {name} and my email {email}.",
    "{name} ({email}) would like {provider} to quote for {job}. Send the request.",
    "Send {provider} a quote request for {job} on behalf of {name}, {email}.")

JOB_PRICE = intent(
    "services-job-price",
    "How much does {provider} charge for {job}?",
    "What is {provider}'s price for {job}?",
    "Find {provider}'s price list: what does {job} cost?",
    "What would {job} by {provider} cost me?",
    "Tell me {provider}'s listed price for {job}.")

FIVE_STARS = intent(
    "services-five-star-count",
    "How many 5-star reviews does {provider} have?",
    "Count the reviews of {provider} that give five stars.",
    "How many customers rated {provider} 5 out of 5?",
    "What is the number of five-star reviews on {provider}'s page?",
    "Of {provider}'s reviews, how many are 5 stars?")

WORST_REVIEW = intent(
    "services-lowest-review",
    "Who left the lowest rating for {provider}?",
    "Which customer gave {provider} the fewest stars?",
    "Name the reviewer who rated {provider} lowest.",
    "Whose review of {provider} has the lowest star rating?",
    "Among {provider}'s reviews, who was least happy? Give the reviewer's name.")
