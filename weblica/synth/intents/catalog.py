"""Intents asked of a catalog by reading it: an entity's price or page, search results, the compare
table, facts on offerer pages and behind tabs, and what the site does not have. Slots: {item}, {a},
{b} entity names, {query} a search, {kind}, {maker}, {attr} / {fact} a field's name, {be} "is" or
"are" agreeing with it, {t} a rating, {extreme} "cheapest" or "most expensive", and the genre words."""
from weblica.synth.intents import intent

ASK_PRICE = intent(
    "ask-price",
    "What is the {price_word} of the {item}?",
    "What's the {price_word} of the {item}?",
    "{item}: what {price_word} is listed?",
    "Could you look up the {price_word} of the {item} for me?",
    "I'd like to know the {price_word} for the {item}.",
    "{price_word} of the {item}?",
    "What does the {item} go for?",
)
OPEN_ITEM = intent(
    "open-item",
    "Open the page of the {item}.",
    "Take me to the {item}.",
    "Show me the page for the {item}.",
    "I want to look at the {item}.",
    "Go to the details of the {item}.",
    "Pull up the {item}.",
)
SEARCH_OPEN_GUIDED = intent(
    "search-open-guided",
    "Use the search box to find the {item} and open its page.",
    "Search for \"{item}\" and open the result.",
    "Type the {item} into the search box and open its page from the results.",
    "Find the {item} with the site search and go to its page.",
    "Look up the {item} using the search bar, then open it.",
    guided=True,
)
SEARCH_COUNT = intent(
    "search-count",
    "How many results does a search for \"{query}\" return?",
    "If I search for \"{query}\", how many results do I get?",
    "Number of results for \"{query}\"?",
    "How many hits does \"{query}\" give in the site search?",
    "Search \"{query}\" and tell me how many results come back.",
)
SEARCH_BEST_RESULT = intent(
    "search-best-result",
    "Search for \"{query}\" and open the result with the highest rating.",
    "Among the results for \"{query}\", open the best-rated one.",
    "Find \"{query}\" and take me to the top-rated match.",
    "Open the highest-rated result for \"{query}\".",
    "Of everything matching \"{query}\", open the one with the best rating.",
)

# ---- the compare table ---------------------------------------------------------------------------
CHEAPEST_OVERALL = intent(
    "cheapest-overall",
    "Which {noun} is the cheapest overall?",
    "What's the least expensive {noun} in the table?",
    "Cheapest {noun} overall?",
    "Which {noun} has the lowest {price_word} of all?",
    "Tell me the name of the cheapest {noun} listed.",
)
PRICIEST_OVERALL = intent(
    "priciest-overall",
    "Which {noun} is the most expensive?",
    "What's the priciest {noun} here?",
    "Which {noun} has the highest {price_word}?",
    "Most expensive {noun}?",
    "Name the {noun} with the top {price_word}.",
)
COUNT_KIND_LISTED = intent(
    "count-kind-listed",
    "How many {nouns} of type {kind} are listed?",
    "How many {kind} {nouns} are in the table?",
    "Count the {kind} {nouns}.",
    "Number of {kind} {nouns} listed?",
    "Tell me how many of the {nouns} are of type {kind}.",
)
EXTREME_OF_KIND = intent(
    "extreme-of-kind",
    "Which {kind} {noun} is the {extreme}?",
    "What's the {extreme} {kind} {noun}?",
    "{extreme} {kind} {noun}?",
    "Among the {kind} {nouns}, which one is the {extreme}?",
    "Name the {extreme} {kind} {noun} in the table.",
)
COUNT_RATED_AT_LEAST = intent(
    "count-rated-at-least",
    "How many {nouns} have a rating of {t} or higher?",
    "How many {nouns} are rated {t} or above?",
    "Count the {nouns} with a rating of at least {t}.",
    "Number of {nouns} with a rating of {t} or more?",
    "Tell me how many {nouns} score {t} or better.",
)
PRICE_DIFFERENCE = intent(
    "price-difference",
    "What is the {price_word} difference between the {a} and the {b}?",
    "How far apart are the {a} and the {b} in {price_word}?",
    "{a} vs. {b}: what's the difference in {price_word}?",
    "Work out the gap in {price_word} between the {a} and the {b}.",
    "Tell me how much the {price_word} of the {a} differs from that of the {b}.",
)
PRICE_TOGETHER = intent(
    "price-together",
    "What do the {a} and the {b} cost together?",
    "If I took both the {a} and the {b}, what would they cost together?",
    "Total {price_word} of the {a} plus the {b}?",
    "Add up the {price_word} of the {a} and the {b} for me.",
    "How much are the {a} and the {b} together?",
)
HIGHEST_ATTR = intent(  # {attr} is the column's name, quoted: "Seats left" or "Next free slot" is no noun
    "highest-attr",
    "Which {noun} has the highest \"{attr}\" value?",
    "Which {noun} tops the table for \"{attr}\"?",
    "Highest \"{attr}\": which {noun} is it?",
    "Tell me which {noun} leads on \"{attr}\".",
    "Which {noun} has the largest figure under \"{attr}\"?",
)
COUNT_OF_MAKER = intent(
    "count-of-maker",
    "How many {nouns} from {maker} are in the table?",
    "How many {maker} {nouns} are listed?",
    "Count the {nouns} from {maker}.",
    "Number of {maker} {nouns}?",
    "Tell me how many of the {nouns} come from {maker}.",
)

# ---- across pages --------------------------------------------------------------------------------
MAKER_CITY = intent(
    "maker-city",
    "In which city is the {maker_word} of the {item} based?",
    "Where is the {maker_word} behind the {item} based? Give the city.",
    "Which city is the {maker_word} of the {item} from?",
    "{item}: which city is its {maker_word} in?",
    "Tell me the home city of the {maker_word} listed for the {item}.",
)
# {founded}: how the genre says a maker began ("founded"; a branch, venue or restaurant "opened")
MAKER_FOUNDED = intent(
    "maker-founded",
    "In which year was the {maker_word} of the {item} {founded}?",
    "When was the {maker_word} behind the {item} {founded}? Just the year.",
    "The {item}'s {maker_word}: what year was it {founded}?",
    "Since which year has the {maker_word} of the {item} been around?",
    "Tell me when the {maker_word} of the {item} was {founded}.",
)
CHEAPER_OF_TWO = intent(
    "cheaper-of-two",
    "Which is cheaper: the {a} or the {b}?",
    "{a} or {b}: which one costs less?",
    "Between the {a} and the {b}, which has the lower {price_word}?",
    "Is the {a} or the {b} cheaper? Give me the name.",
    "I can't decide between the {a} and the {b}. Which is less expensive?",
)
MAKER_RANGE = intent(
    "maker-range",
    "How many {nouns} does the {maker_word} of the {item} offer on this site?",
    "How many {nouns} are listed from the {maker_word} of the {item}?",
    "Count the {nouns} of the {maker_word} behind the {item}.",
    "How big is the range of the {item}'s {maker_word}? Give the number of {nouns}.",
    "Number of {nouns} from the same {maker_word} as the {item}?",
)
HIDDEN_FACT = intent(
    "hidden-fact",
    "What {be} the {fact} of the {item}?",
    "{item}: what {be} its {fact}?",
    "Tell me the {fact} of the {item}.",
    "I need the {fact} for the {item}.",
    "Could you find out the {fact} of the {item}?",
    "Look up the {item} and tell me its {fact}.",
)
HIDDEN_FIELD = intent(  # for a label that is no noun ("Suitable for", "Doors open", "Washable")
    "hidden-field",
    "What does the {item} have under \"{label}\"?",
    "{item}: what is listed as \"{label}\"?",
    "Look up the \"{label}\" entry for the {item}.",
    "What is given as \"{label}\" for the {item}?",
    "Tell me what the details of the {item} say under \"{label}\".",
)
HIDDEN_ACCEPTED = intent(  # for a label "X accepted" ("Insurance accepted"): what the entity accepts, asked so
    "hidden-accepted",
    "Which {what} does the {item} accept?",
    "What {what} does the {item} take?",
    "{item}: which {what} is accepted?",
    "Tell me which {what} the {item} accepts.",
    "I'd like to know what {what} the {item} accepts.",
    "Could you check which {what} the {item} accepts?",
)

# ---- what the site does not have -----------------------------------------------------------------
OPEN_CHEAPEST_MISSING = intent(
    "open-cheapest-missing-kind",
    "Open the page of the cheapest {kind} on the site.",
    "Take me to your cheapest {kind}.",
    "Show me the least expensive {kind} you have.",
    "I need a {kind}. Open the cheapest one.",
    "Cheapest {kind}, please: open its page.",
)
CARBON_FOOTPRINT = intent(
    "carbon-footprint",
    "What is the carbon footprint stated for the {item}?",
    "How much CO2 does the {item} cause, according to the site?",
    "Tell me the carbon footprint listed for the {item}.",
    "What carbon footprint does the site give for the {item}?",
    "{item}: what's its stated carbon footprint?",
)
