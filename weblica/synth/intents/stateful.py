"""Intents of the skills that change state: cart and checkout, a to-do list, booking slots, choosing a
store, reordering a wishlist. Slots: {qty} a quantity, {item} / {a} / {b} entity names, {name},
{street}, {city}, {delivery} ("express shipping", "pick-up"), {pay}, {title} / {old} / {new} / {done}
to-do titles, {day} a date, {time} a time of day, {district}, {store}, {order} a sort order in
words, and the genre words."""
from weblica.synth.intents import intent

ADD_TO_CART = intent(
    "add-to-cart",
    "Add {qty} × {item} to the cart.",
    "Put {qty} of the {item} in my cart.",
    "Add the {item} to my cart, quantity {qty}.",
    "Please get {qty} × {item} into the cart.",
    "Could you add {qty} of the {item} to my cart?",
    "I'd like {qty} × {item} in my cart.",
)
ADD_TWO_TO_CART = intent(
    "add-two-to-cart",
    "Put 1 × {a} and 2 × {b} in the cart.",
    "Add the {a} (quantity 1) and the {b} (quantity 2) to my cart.",
    "I need one of the {a} and two of the {b}. Put them in the cart.",
    "Could you add the {a} once and the {b} twice to the cart?",
    "Get 2 × {b} and 1 × {a} into my cart.",
)
BUY_AND_SHIP = intent(
    "buy-and-ship",
    "Buy the {item} for {name}, {street}, {city}, with {delivery}, paying by {pay}.",
    "Order the {item} for {name}, {street}, {city}. Choose {delivery} and pay by {pay}.",
    "I want to buy the {item} for {name}, {street}, {city}, with {delivery}; I'll pay by {pay}.",
    "Place an order for the {item}: {name}, {street}, {city}, {delivery}, paid by {pay}.",
    "Please purchase the {item} for {name} at {street}, {city} ({delivery}, payment by {pay}).",
)
DELETE_TODO = intent(
    "delete-todo",
    "Delete the to-do \"{title}\".",
    "Remove \"{title}\" from the to-do list.",
    "Get rid of the to-do \"{title}\".",
    "\"{title}\" is no longer needed. Delete it.",
    "Please take \"{title}\" off the to-do list.",
)
COMPLETE_TODO = intent(
    "complete-todo",
    "Mark the to-do \"{title}\" as done.",
    "\"{title}\" is finished. Tick it off.",
    "Check off \"{title}\" on the to-do list.",
    "Set \"{title}\" to done.",
    "I've done \"{title}\". Mark it complete.",
)
RENAME_TODO = intent(
    "rename-todo",
    "Rename the to-do \"{old}\" to \"{new}\".",
    "Change the title of \"{old}\" to \"{new}\".",
    "Edit the to-do \"{old}\" so it reads \"{new}\".",
    "\"{old}\" should be called \"{new}\" now. Update it.",
    "Please retitle \"{old}\" as \"{new}\".",
)
ADD_AND_COMPLETE_TODO = intent(
    "add-and-complete-todo",
    "Add a to-do \"{title}\" and mark \"{done}\" as done.",
    "Create the to-do \"{title}\", then check off \"{done}\".",
    "New to-do: \"{title}\". Also, \"{done}\" is done now.",
    "Put \"{title}\" on the to-do list and mark \"{done}\" complete.",
    "I finished \"{done}\". Add \"{title}\" as a new to-do too.",
)

# ---- booking -------------------------------------------------------------------------------------
BOOK_CHEAPEST_ON = intent(
    "book-cheapest-on",
    "Book the cheapest available slot on {day}.",
    "Reserve the lowest-priced open slot on {day}.",
    "On {day}, book whichever available slot costs the least.",
    "I want the cheapest slot still free on {day}. Book it.",
    "Get me the least expensive slot on {day} that isn't sold out.",
)
BOOK_EARLIEST_ON = intent(
    "book-earliest-on",
    "Book the earliest available slot on {day}.",
    "Reserve the first free slot on {day}.",
    "On {day}, book the earliest slot that still has places.",
    "Get me in as early as possible on {day}.",
    "I'd like the earliest open slot on {day}. Please book it.",
)
BOOK_CHEAPEST_FROM = intent(
    "book-cheapest-from",
    "Book the cheapest available slot on {day} starting at {time} or later.",
    "On {day}, from {time} on, book the cheapest open slot.",
    "Reserve the lowest-priced free slot on {day} that starts no earlier than {time}.",
    "I can't make it before {time} on {day}. Book the cheapest slot from then on.",
    "Cheapest available slot on {day}, {time} or later, please: book it.",
)
BOOK_CHEAPEST_BEFORE = intent(
    "book-cheapest-before",
    "Book the cheapest available slot of the week that starts before {time}.",
    "Reserve the least expensive open slot this week starting before {time}.",
    "I need an early slot, before {time}, any day this week. Book the cheapest.",
    "Across the whole week, book the cheapest free slot that begins before {time}.",
    "Find the cheapest slot before {time} on any day and book it.",
)
SLOT_PRICE = intent(
    "slot-price",
    "How much does the {time} slot on {day} cost?",
    "What's the {price_word} of the {time} slot on {day}?",
    "{day} at {time}: how much is it?",
    "Tell me the {price_word} for the slot at {time} on {day}.",
    "How much would the {time} slot on {day} be?",
)

# ---- store locator -------------------------------------------------------------------------------
SET_NEAREST_STORE = intent(
    "set-nearest-store",
    "Set the {place} closest to my location as my {place}.",
    "Make the nearest {place} my {place}.",
    "Choose the {place} closest to me as my {place}.",
    "Pick whichever {place} is nearest to my location and set it as mine.",
    "I want my closest {place} as my default {place}.",
)
NEAREST_STORE = intent(
    "nearest-store",
    "Which {place} is closest to my location?",
    "What's the nearest {place} to me?",
    "Nearest {place}?",
    "Tell me which {place} is closest to where I am.",
    "Which of the {places} is the shortest distance from me?",
)
SET_STORE_IN = intent(
    "set-store-in",
    "Make the {place} in {district} my {place}.",
    "Set the {district} {place} as my {place}.",
    "I live in {district}. Make that {place} mine.",
    "Choose the {place} in {district} as my {place}.",
    "Switch my {place} to the one in {district}.",
)
STORE_PHONE = intent(
    "store-phone",
    "What is the phone number of the {store} {place}?",
    "How can I call the {store} {place}? Give me its number.",
    "Phone number for the {store} {place}?",
    "Tell me the {store} {place}'s phone number.",
    "I need to ring the {store} {place}. What's the number?",
)
STORE_CLOSES = intent(
    "store-closes",
    "Until what time is the {place} in {district} open?",
    "When does the {district} {place} close?",
    "What time does the {place} in {district} shut?",
    "Closing time of the {district} {place}?",
    "How late is the {place} in {district} open?",
)

# ---- wishlist order ------------------------------------------------------------------------------
MOVE_TO_TOP = intent(
    "move-to-top",
    "Move the {item} to the top of my {saved} and save the order.",
    "Put the {item} first in my {saved} and save.",
    "I want the {item} at the top of my {saved}. Save it that way.",
    "Make the {item} number one on my {saved} and save the order.",
    "Bring the {item} up to first place in my {saved}, then save.",
)
MOVE_TO_BOTTOM = intent(
    "move-to-bottom",
    "Move the {item} to the bottom of my {saved} and save.",
    "Put the {item} last in my {saved} and save.",
    "Send the {item} to the end of my {saved} and save the order.",
    "I care least about the {item}: move it to the bottom and save.",
    "Make the {item} the last entry of my {saved}, then save.",
)
PLACE_ABOVE = intent(
    "place-above",
    "Place the {a} directly above the {b} in my {saved} and save.",
    "Put the {a} right before the {b} in my {saved} and save.",
    "In my {saved}, I want the {a} just above the {b}. Save that order.",
    "Move the {a} so it sits immediately above the {b}, then save.",
    "Reorder my {saved} to have the {a} directly ahead of the {b}, and save.",
)
SORT_WISHLIST = intent(
    "sort-wishlist",
    "Sort my {saved} {order} and save.",
    "Order my {saved} {order}, then save it.",
    "Rearrange my {saved} {order} and save the order.",
    "I'd like my {saved} sorted {order}. Save it.",
    "Arrange my {saved} {order} and save.",
)
