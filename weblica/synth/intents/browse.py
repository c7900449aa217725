"""Intents of the browsing skills: faceted filter and sort, long lists (pagination, load more, infinite
scroll), menus and hierarchy. Slots: {kind} an entity type, {maker} an offerer's name, {nouns} /
{noun} the site's entity nouns, {maker_word} / {price_word} the genre's labels, {order} a sort order
in words ("cheapest first"), {cap} a price, {p} a page number, {dept} / {section} menu names,
{extreme} "cheapest" or "most expensive"."""
from weblica.synth.intents import intent

# ---- filter and sort ---------------------------------------------------------------------------
SHOW_KIND_SORTED = intent(
    "show-kind-sorted",
    "Show only {kind} {nouns}, {order}.",
    "Can you list just the {kind} {nouns}, {order}?",
    "{kind} {nouns} only, {order}, please.",
    "I'd like to browse the {kind} {nouns}, {order}.",
    "Bring up all {kind} {nouns}, {order}.",
    "Narrow the {nouns} down to the {kind} ones, {order}.",
)
SHOW_MAKER_BEST_RATED = intent(
    "show-maker-best-rated",
    "Show me only the {nouns} from {maker}, best rated first.",
    "List everything {maker} has, top rated first.",
    "Only the {nouns} from {maker}, please, with the best-rated ones on top.",
    "I'd like to see the {nouns} of the {maker_word} {maker}, highest rating first.",
    "Narrow the list to {maker} and put the best ratings first.",
    "{maker} {nouns}, sorted from best to worst rating.",
)
CHEAPEST_OF_KIND = intent(
    "cheapest-of-kind",
    "Which is the cheapest {kind} {noun}?",
    "What's the least expensive {kind} {noun} you have? Tell me its name.",
    "Cheapest {kind} {noun}?",
    "I'm looking for the lowest-priced {kind} {noun}. Which one is it?",
    "Could you tell me which {kind} {noun} costs the least?",
    "Name the {kind} {noun} with the lowest {price_word}.",
)
CHEAPEST_OF_KIND_GUIDED = intent(
    "cheapest-of-kind-guided",
    "Which is the cheapest {kind} {noun}? Use the filters and answer with its name.",
    "Filter the list to {kind}, sort by {price_word} from low to high and tell me the name of the first {noun}.",
    "Use the type filter and the {price_word} sort to find the cheapest {kind} {noun}, then give its name.",
    "Tick {kind} in the filters and sort by lowest {price_word}: which {noun} comes first?",
    "With the filters set to {kind} and the cheapest first, what is the top {noun} called?",
    guided=True,
)
TOP_PRICE_OF_KIND = intent(
    "top-price-of-kind",
    "What does the most expensive {kind} {noun} cost?",
    "How much is your priciest {kind} {noun}?",
    "Most expensive {kind} {noun}: what's the {price_word}?",
    "Tell me the {price_word} of the most expensive {kind} {noun}.",
    "What's the top {price_word} for a {kind} {noun} here?",
    "I'd like to know the highest {price_word} among the {kind} {nouns}.",
)
COUNT_KIND_UNDER = intent(
    "count-kind-under",
    "How many {kind} {nouns} have a {price_word} of at most {cap}?",
    "Count the {kind} {nouns} priced at {cap} or less.",
    "How many {kind} {nouns} are there for {cap} or under?",
    "Number of {kind} {nouns} up to {cap}?",
    "My budget is {cap}. How many {kind} {nouns} fit it?",
    "Tell me how many {kind} {nouns} don't go over {cap}.",
)
BEST_RATED_OF_MAKER = intent(
    "best-rated-of-maker",
    "Which {noun} from {maker} has the best rating?",
    "What's the best-rated {maker} {noun}?",
    "Top-rated {noun} from {maker}?",
    "Of all the {nouns} from {maker}, which one do people rate highest?",
    "I trust {maker}. Which of their {nouns} has the highest rating?",
    "Name the {maker} {noun} with the best rating.",
)

# ---- long lists ----------------------------------------------------------------------------------
PRICE_FAR_DOWN_GUIDED = intent(
    "item-price-far-down-guided",
    "What is the {price_word} of the {item}? It is further down the list of {nouns}.",
    "The {item} is not among the first {nouns} listed; keep going through the list and tell me its {price_word}.",
    "Page through the list of all {nouns} until you reach the {item}, then give its {price_word}.",
    "Scroll down the list of {nouns} to the {item} and tell me its {price_word}.",
    "Find the {item} further down the full list of {nouns}: what is its {price_word}?",
    guided=True,
)
LAST_IN_LIST = intent(
    "last-in-list",
    "What is the name of the very last {noun} in the list of all {nouns}?",
    "Which {noun} comes last in the full list of {nouns}?",
    "Tell me which {noun} is last among all the {nouns}.",
    "What's at the very end of the list of {nouns}?",
    "Name the final {noun} in the complete list of {nouns}.",
)
GO_TO_PAGE = intent(
    "go-to-page",
    "Go to page {p} of the list of all {nouns}.",
    "Show me page {p} of the {nouns}.",
    "Open page {p} of all {nouns}.",
    "I'd like to see the {nouns} on page {p}.",
    "Take me to page {p} of the full list of {nouns}.",
)
COUNT_KIND_ALL = intent(
    "count-kind-all",
    "How many {nouns} of type {kind} are there in the full list?",
    "How many {kind} {nouns} are there in total?",
    "Count all the {kind} {nouns} on the site.",
    "Total number of {kind} {nouns}?",
    "Can you tell me how many {kind} {nouns} are listed altogether?",
)
COUNT_ALL = intent(
    "count-all",
    "How many {nouns} are there in total?",
    "How many {nouns} does the site list altogether?",
    "Total number of {nouns}?",
    "Count every {noun} listed here.",
    "What's the total count of {nouns} on this site?",
)

# ---- menus ---------------------------------------------------------------------------------------
OPEN_SECTION = intent(
    "open-section",
    "Open the {section} section under {dept}.",
    "Take me to {dept} › {section}.",
    "I want to browse {section} in the {dept} department.",
    "Go to {section} ({dept}).",
    "Navigate to the {section} section of {dept}.",
    "Show me what's in {dept}, {section}.",
)
COUNT_IN_SECTION = intent(
    "count-in-section",
    "How many {nouns} are listed in {dept} › {section}?",
    "How many {nouns} does the {section} section of {dept} have?",
    "Count the {nouns} under {dept}, {section}.",
    "Number of {nouns} in {section} ({dept})?",
    "Tell me how many {nouns} there are in {section}, under {dept}.",
)
EXTREME_PRICE_IN_SECTION = intent(
    "extreme-price-in-section",
    "What is the {price_word} of the {extreme} {noun} in {dept} › {section}?",
    "In {dept} › {section}, what does the {extreme} {noun} cost?",
    "{extreme} {noun} under {dept}, {section}: what's its {price_word}?",
    "Tell me the {price_word} of the {extreme} {noun} in the {section} section of {dept}.",
    "How much is the {extreme} {noun} in {section} ({dept})?",
)
COUNT_SECTIONS = intent(
    "count-sections",
    "How many sections does the {dept} department have?",
    "How many sections are there under {dept}?",
    "Count the sections in {dept}.",
    "{dept}: how many sections?",
    "Tell me the number of sections {dept} is split into.",
)
