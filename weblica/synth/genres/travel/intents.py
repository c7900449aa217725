"""The travel genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

CHEAPEST = intent(
    "travel-cheapest-fare",
    "What is the cheapest fare from {origin} to {destination} on {day}?",
    "How much is the lowest fare for a flight from {origin} to {destination} on {day}?",
    "I need to fly from {origin} to {destination} on {day}. What does the cheapest flight cost?",
    "Find the lowest price per traveller for {origin} to {destination} on {day}.",
    "What's the best price for a one-way flight {origin}–{destination} on {day}?",
    "Look up flights from {origin} to {destination} on {day} and tell me the cheapest fare.")

FASTEST = intent(
    "travel-fastest-airline",
    "Which airline has the shortest flight from {origin} to {destination} on {day}?",
    "Who operates the fastest flight from {origin} to {destination} on {day}?",
    "On {day}, which airline gets me from {origin} to {destination} in the least time?",
    "Name the airline of the quickest {origin} to {destination} flight on {day}.",
    "I want the shortest trip from {origin} to {destination} on {day}. Which airline flies it?")

CHANGE_FEE = intent(
    "travel-change-fee",
    "What is the change fee on the cheapest nonstop flight from {origin} to {destination} on {day}?",
    "If I book the cheapest direct flight from {origin} to {destination} on {day}, how much does a change cost?",
    "How much would it cost to change the cheapest nonstop {origin}–{destination} fare on {day}?",
    "What would the cheapest nonstop flight from {origin} to {destination} on {day} charge for a change?",
    "What change fee applies to the lowest nonstop fare from {origin} to {destination} on {day}?")

BOOK_REFUNDABLE_FLIGHT = intent(
    "travel-book-cheapest-refundable",
    "Book the cheapest refundable flight from {origin} to {destination} on {day} for {name} ({email}), {guests} travellers.",
    "{name} needs a refundable flight from {origin} to {destination} on {day} for {guests} travellers: book the cheapest one, email {email}.",
    "Find the lowest refundable fare from {origin} to {destination} on {day} and book it for {guests} travellers under {name}, {email}.",
    "Reserve the least expensive refundable {origin} to {destination} flight on {day}: {guests} travellers, lead passenger {name}, email {email}.",
    "For {guests} travellers, book the cheapest flight from {origin} to {destination} on {day} that can be refunded; passenger {name}, email {email}.")

BOOK_EARLIEST = intent(
    "travel-book-earliest",
    "Book the earliest flight from {origin} to {destination} on {day} for {name} (email {email}).",
    "Get {name} on the first flight of the day from {origin} to {destination} on {day}; the email is {email}.",
    "Reserve the earliest departure from {origin} to {destination} on {day} for one traveller, {name}, {email}.",
    "{name} wants to leave {origin} for {destination} as early as possible on {day}. Book that flight with the email {email}.",
    "Book one seat on the first {origin} to {destination} flight on {day} for {name}, contact email {email}.")

NONSTOP_COUNT = intent(
    "travel-nonstop-count",
    "How many nonstop flights are there from {origin} to {destination} on {day}?",
    "On {day}, how many direct flights fly from {origin} to {destination}?",
    "Count the nonstop options from {origin} to {destination} on {day}.",
    "How many flights from {origin} to {destination} on {day} have no stops?",
    "I only fly direct: how many {origin}–{destination} flights can I choose from on {day}?")

ARRIVAL = intent(
    "travel-arrival-time",
    "When does {airline} flight {code} from {origin} land in {destination} on {day}?",
    "At what time does {airline} {code} from {origin} arrive in {destination} on {day}?",
    "What is the arrival time of {airline} flight {code}, {origin} to {destination}, on {day}?",
    "I'm picking someone up from {airline} {code} ({origin} to {destination}) on {day}. When does it get in?",
    "On {day}, what time is {airline} {code} from {origin} due in {destination}?")

BOOK_REFUNDABLE_ROOM = intent(
    "hotel-book-cheapest-refundable",
    "Book the cheapest refundable room at {hotel} from {checkin} to {checkout} for {guests} guests; name {name}, email {email}.",
    "{name} ({email}) needs a room at {hotel}, checking in {checkin} and out {checkout}, {guests} guests. Book the cheapest one that can be cancelled for a refund.",
    "Reserve the least expensive refundable room for {guests} guests at {hotel}, {checkin} to {checkout}, under {name}, {email}.",
    "For {guests} guests staying at {hotel} from {checkin} until {checkout}, book the lowest-priced room with free cancellation. Guest: {name}, {email}.",
    "I want the cheapest cancellable room at {hotel} for {guests} guests, arriving {checkin} and leaving {checkout}. Book it for {name}, email {email}.")

BOOK_BEST = intent(
    "hotel-book-best-rated",
    "In {city}, book the cheapest refundable room at the best-rated hotel with at least {stars} stars, {checkin} to {checkout}, {guests} guests; name {name}, email {email}.",
    "Find the hotel in {city} with {stars} or more stars and the highest guest rating, and book its cheapest refundable room from {checkin} to {checkout} for {guests} guests ({name}, {email}).",
    "{name} wants the top-rated hotel of at least {stars} stars in {city}: book the lowest-priced refundable room there, {checkin} to {checkout}, {guests} guests, email {email}.",
    "Book a stay in {city} from {checkin} to {checkout} for {guests} guests at the highest-rated hotel rated {stars} stars or more, taking its cheapest refundable room. Guest {name}, {email}.",
    "Among {city} hotels with at least {stars} stars, pick the one guests rate best and reserve its cheapest refundable room for {guests} guests, {checkin} to {checkout}, for {name} ({email}).")

BOOK_BREAKFAST = intent(
    "hotel-book-cheapest-breakfast",
    "Book the cheapest room with breakfast included at {hotel} from {checkin} to {checkout} for {guests} guests; name {name}, email {email}.",
    "{name} ({email}) wants breakfast included: book the lowest-priced such room at {hotel}, {checkin} to {checkout}, {guests} guests.",
    "Reserve the least expensive room at {hotel} whose rate includes breakfast, for {guests} guests from {checkin} until {checkout}. Guest {name}, {email}.",
    "For {guests} guests at {hotel}, arriving {checkin} and leaving {checkout}, book the cheapest rate with breakfast. Name {name}, email {email}.",
    "I'd like breakfast every morning at {hotel}: book the cheapest room that includes it, {checkin} to {checkout}, {guests} guests, for {name} ({email}).")

BEST_UNDER = intent(
    "hotel-best-rated-under",
    "Which hotel in {city} has the highest guest rating among those with a room under {price} a night from {checkin} to {checkout}?",
    "I can spend less than {price} a night in {city}, staying {checkin} to {checkout}. Which hotel there is rated best?",
    "What is the best-rated hotel in {city} with a room for under {price} per night, checking in {checkin} and out {checkout}?",
    "For a stay from {checkin} until {checkout}, name the highest-rated {city} hotel whose rooms start below {price} a night.",
    "Among hotels in {city} starting under {price} a night for {checkin} to {checkout}, which one do guests rate highest?")

SOLD_OUT_NIGHT = intent(
    "hotel-sold-out-night",
    "Between {first} and {last}, on which night is the {room} at {hotel} sold out?",
    "Which night from {first} to {last} can I not get the {room} at {hotel} because it is sold out?",
    "The {room} at {hotel} is sold out on one night between {first} and {last}. Which night is it?",
    "I'd like the {room} at {hotel} some night between {first} and {last}. Which night is it already sold out?",
    "On what date between {first} and {last} is the {room} at {hotel} fully booked for the night?")

FREE_ROOM = intent(
    "hotel-room-free",
    "Which hotel in {city} still has a {room} free from {checkin} to {checkout}?",
    "I need a {room} in {city}, checking in {checkin} and out {checkout}. Which hotel can still offer one?",
    "Name the {city} hotel where a {room} is available every night from {checkin} until {checkout}.",
    "Arriving {checkin} and leaving {checkout}, at which hotel in {city} can I still get a {room}?",
    "Only one hotel in {city} has a {room} that is not sold out from {checkin} to {checkout}. Which one?")

BOOK_AVAILABLE = intent(
    "hotel-book-cheapest-available",
    "In {city}, book the cheapest room for {guests} guests that is free from {checkin} to {checkout}; name {name}, email {email}.",
    "{name} ({email}) needs a room in {city} for {guests} guests, {checkin} to {checkout}. Book the lowest-priced one still available for those nights.",
    "Reserve the least expensive room in any {city} hotel that sleeps {guests} and can be had from {checkin} until {checkout}, for {name}, {email}.",
    "For {guests} guests arriving {checkin} and leaving {checkout}, find the cheapest room in {city} not sold out on any of those nights and book it. Guest: {name}, {email}.",
    "I want the cheapest room in {city} for {guests} guests that is still free every night from {checkin} to {checkout}. Book it for {name}, email {email}.")

POLICY = intent(
    "hotel-free-cancellation-days",
    "Until how many days before check-in can the {room} at {hotel} be cancelled free of charge?",
    "How many days before arrival do I have to cancel the {room} at {hotel} to pay nothing?",
    "The {room} at {hotel} can be cancelled for free. Up to how many days before check-in?",
    "What is the free-cancellation deadline of the {room} at {hotel}, in days before check-in?",
    "How late can I cancel a {room} at {hotel} without being charged? Give the days before check-in.")
