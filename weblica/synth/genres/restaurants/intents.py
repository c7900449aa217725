"""The restaurants genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

ORDER = intent(
    "food-order-delivery",
    "Order {qty} × {dish}, {size} size, with {extra}, for delivery at {slot} to {address}, phone {phone}.",
    "I'd like {qty} × {dish} in {size} size with {extra} delivered to {address} in the {slot} window; my phone is {phone}.",
    "Get {qty} × {dish} in {size} size, with {extra}, delivered at {slot} to {address} (phone {phone}).",
    "Place a delivery order: {qty} × {dish}, size {size}, add {extra}. Deliver to {address} at {slot}, phone {phone}.",
    "Have {qty} × {dish} ({size} size, with added {extra}) brought to {address} at {slot}. Contact phone: {phone}.")

COMBO_PRICE = intent(
    "food-combo-price",
    "Price of the {dish} in {size} size with {extra}?",
    "What is the price of the {dish} in {size} size with {extra} added?",
    "What would I pay for the {dish} in {size} size with {extra}?",
    "Tell me the price of the {dish}, {size} size, with {extra}.",
    "If I order the {dish} in {size} size and add {extra}, what does it come to?")

CHEAPEST = intent(
    "food-cheapest-in-section",
    "What is the cheapest dish among the {section}?",
    "Which of the {section} costs the least?",
    "Name the lowest-priced dish in the {section} section.",
    "I want the least expensive of the {section}. Which dish is it?",
    "Among the {section} on the menu, which is cheapest?")

EARLIEST_SLOT = intent(
    "food-earliest-window",
    "What is the earliest delivery window still taking orders?",
    "When is the first delivery time that is not full?",
    "Which delivery window is the earliest one still available?",
    "I want my food as soon as possible: which is the first open delivery window?",
    "Tell me the earliest delivery time I can still choose.")

BOOK_TABLE = intent(
    "food-book-table",
    "Book a table for {party} on {day} at {time} under the name {name}, phone {phone}.",
    "Reserve a table for {party} people at {time} on {day}; the booking is for {name} ({phone}).",
    "I need a table for {party} on {day}, {time}. Name: {name}, phone: {phone}.",
    "Make a reservation: {party} guests, {day} at {time}, in the name of {name}, contact {phone}.",
    "Get us a table for {party} at {time} on {day}. Put it under {name}, phone {phone}.")
