"""The classifieds genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

MESSAGE_CHEAPEST = intent(
    "ads-message-cheapest",
    "Ask the seller of the cheapest {category} ad in {location} \"{question}\" (from {name}, {email}).",
    "Find the lowest-priced {category} listing in {location} and message its seller: \"{question}\" Sign as {name}, {email}.",
    "{name} ({email}) wants the cheapest {category} offered in {location}. Send that seller the message \"{question}\" from that email.",
    "Message whoever has the least expensive {category} ad in {location}, as {name} with {email}, asking \"{question}\" in the message.",
    "Of the {category} ads in {location}, contact the seller of the cheapest one with \"{question}\" ({name}, {email}).")

MESSAGE_AD = intent(
    "ads-message-seller",
    "Send the seller of \"{title}\" in {location} the message \"{question}\" as {name} ({email}).",
    "Contact the person selling the {title} in {location}: \"{question}\" It is from {name}, {email}.",
    "Message the seller of the {title} ad in {location} with \"{question}\" as {name}, email {email}.",
    "As {name} ({email}), ask the seller of the {title} in {location} \"{question}\" by message.",
    "Write to the {title} seller in {location} from {name} <{email}> with the message \"{question}\".")

POST_AD = intent(  # said as a person would: "in good condition, for €90, in Kingsport", not a list of field values
    "ads-post",
    "Post an ad for \"{title}\" in {category}: it's in {condition} condition, I'm asking {price}, and it's in {location}. Contact {email}.",
    "Put up a listing for my \"{title}\" under {category}, in {condition} condition, for {price}, to be picked up in {location}; my email is {email}.",
    "Sell my \"{title}\" in {category} for {price}. It's in {condition} condition and I'm in {location}; reply to {email}.",
    "List \"{title}\" for sale in the {category} section, in {condition} condition, for {price}, located in {location}, with {email} as the contact.",
    "Create a {category} ad titled \"{title}\": {condition} condition, {price}, collection in {location}, contact email {email}.")

ASKING_PRICE = intent(
    "ads-asking-price",
    "What is the asking price of the {title} in {location}?",
    "How much does the seller want for the {title} listed in {location}?",
    "Find the {title} ad in {location}. What does it cost?",
    "What price is the {title} in {location} listed at?",
    "How much is the {title} being sold for in {location}?")

COUNT_ADS = intent(
    "ads-count",
    "How many {category} ads are listed in {location}?",
    "Count the {category} listings in {location}.",
    "In {location}, how many {category} ads are there?",
    "What is the number of {category} ads posted in {location}?",
    "How many {category} ads does {location} have?")

WHO_SELLS = intent(
    "ads-who-sells",
    "Who is selling the {title} in {location}?",
    "Name the seller of the {title} ad in {location}.",
    "Which person posted the {title} listing in {location}?",
    "The {title} in {location}: who is the seller?",
    "Tell me the name of whoever is selling the {title} in {location}.")
