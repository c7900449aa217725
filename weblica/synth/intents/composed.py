"""Intents that chain skills into one request, as a person asks it: find something by a comparison,
then act on it or read something further along ("Find the cheapest Laptop and add two to your
cart"). Each is built by the skill whose site has every feature the chain needs
(weblica/synth/skills: the `_composed` builders) and validated like any other task."""
from weblica.synth.intents import intent

CHEAPEST_KIND_TO_CART = intent(
    "cheapest-kind-to-cart",
    "Find the cheapest {kind} {noun} and add {qty} to my cart.",
    "Your cheapest {kind} {noun}: add {qty} to my cart, please.",
    "Put {qty} × the least expensive {kind} {noun} in the cart.",
    "I need {qty} {kind} {nouns}, the cheapest you have. Add them to my cart.",
    "Cheapest {kind} {noun}, quantity {qty}: add it to the cart.",
    "Get the lowest-priced {kind} {noun} into my cart, {qty} of them.",
)
BUY_BEST_RATED_OF_MAKER = intent(
    "buy-best-rated-of-maker",
    "Buy the best-rated {noun} from {maker} for {name}, {street}, {city}, with {delivery}, paying by {pay}.",
    "Order the top-rated {maker} {noun} for {name}, {street}, {city}; {delivery}, payment by {pay}.",
    "I want whichever {maker} {noun} has the best rating: order it for {name}, {street}, {city}, with {delivery}, and pay by {pay}.",
    "Find the highest-rated {noun} from {maker} and check out: {name}, {street}, {city}, {delivery}, {pay}.",
    "Please purchase the best-rated {noun} from {maker} for {name} at {street}, {city} ({delivery}, paid by {pay}).",
)
OPEN_CHEAPEST_MATCH = intent(
    "open-cheapest-match",
    "Find the cheapest {kind} {noun} and open its page.",
    "Open the least expensive {kind} {noun} on the site.",
    "Show me the cheapest {kind} {noun} you have.",
    "Which {kind} {noun} costs the least? Open it.",
    "Take me to the lowest-priced {kind} {noun}.",
)
PRICE_OF_BEST_RATED_MATCH = intent(
    "price-of-best-rated-match",
    "What does the best-rated {kind} {noun} cost?",
    "Find the top-rated {kind} {noun} and tell me its {price_word}.",
    "How much is the highest-rated {kind} {noun}?",
    "Best-rated {kind} {noun}: what's its {price_word}?",
    "Look up the {kind} {noun} with the best rating and give me its {price_word}.",
)
BEST_RATED_IN_SECTION = intent(
    "best-rated-in-section",
    "Open {dept} › {section} and tell me which {noun} is rated best.",
    "What's the best-rated {noun} in the {section} section of {dept}?",
    "In {section} ({dept}), which {noun} has the highest rating?",
    "Go to {section} under {dept} and name the top-rated {noun}.",
    "I'm browsing {dept}, {section}. Which {noun} there has the best rating?",
)
OPEN_CHEAPEST_OF_KIND_AND_MAKER = intent(
    "open-cheapest-of-kind-and-maker",
    "Open the cheapest {kind} {noun} from {maker}.",
    "Find the least expensive {kind} {noun} from {maker} and open its page.",
    "Take me to the cheapest {kind} {noun} that {maker} has.",
    "Show me the page of the cheapest {kind} {noun} from {maker}.",
    "I want the {kind} {noun} from {maker} with the lowest {price_word}. Open it.",
)
MAKER_CITY_OF_CHEAPEST = intent(
    "maker-city-of-cheapest",
    "In which city is the {maker_word} of the cheapest {kind} {noun} based?",
    "Where does the cheapest {kind} {noun} come from? Give the city of its {maker_word}.",
    "Find the least expensive {kind} {noun} and tell me which city its {maker_word} is in.",
    "The cheapest {kind} {noun} on the site: in what city is its {maker_word} based?",
    "Tell me the home city of the {maker_word} behind the lowest-priced {kind} {noun}.",
)
FACT_OF_CHEAPEST = intent(
    "fact-of-cheapest",
    "What {be} the {fact} of the cheapest {kind} {noun}?",
    "Find the cheapest {kind} {noun} and tell me its {fact}.",
    "Cheapest {kind} {noun}: what {be} its {fact}?",
    "I'm after the least expensive {kind} {noun}. What {be} its {fact}?",
    "Tell me the {fact} of the lowest-priced {kind} {noun}.",
)
FIELD_OF_CHEAPEST = intent(  # for a label that is no noun ("Suitable for", "Doors open", "Washable")
    "field-of-cheapest",
    "What does the cheapest {kind} {noun} have under \"{label}\"?",
    "Find the cheapest {kind} {noun} and tell me what it lists as \"{label}\".",
    "Cheapest {kind} {noun}: what is given under \"{label}\"?",
    "I'm after the least expensive {kind} {noun}. What does it say under \"{label}\"?",
    "Tell me the \"{label}\" entry of the lowest-priced {kind} {noun}.",
)
NEAREST_STORE_PHONE = intent(
    "nearest-store-phone",
    "What's the phone number of the {place} closest to me?",
    "Find my nearest {place} and give me its phone number.",
    "I need to call the nearest {place}. What's the number?",
    "Closest {place} to my location: what's its phone number?",
    "Tell me the phone number of whichever {place} is nearest.",
)
CHEAPEST_TO_TOP = intent(
    "cheapest-to-top",
    "Put the cheapest {noun} on my {saved} at the top and save.",
    "Move whichever entry of my {saved} costs the least to first place, then save.",
    "My {saved} should start with its least expensive {noun}. Rearrange it and save.",
    "Find the cheapest entry on my {saved} and move it to the top; save the order.",
    "Bring the lowest-priced {noun} on my {saved} to the top and save.",
)
COMPOSED = {i.name for i in (CHEAPEST_KIND_TO_CART, BUY_BEST_RATED_OF_MAKER, OPEN_CHEAPEST_MATCH,
                             PRICE_OF_BEST_RATED_MATCH, BEST_RATED_IN_SECTION, OPEN_CHEAPEST_OF_KIND_AND_MAKER,
                             MAKER_CITY_OF_CHEAPEST, FACT_OF_CHEAPEST, FIELD_OF_CHEAPEST, NEAREST_STORE_PHONE, CHEAPEST_TO_TOP)}
