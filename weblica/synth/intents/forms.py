"""Intents of the input skills: a contact form, date ranges, numeric preferences, autocomplete
reservations, account flows. Slots: {fields} the named field values in words ("name \"Ana Costa\"
and email \"…\""), {message}, {person}, {start} / {end} dates in words, {changes} the settings in the
genre's words ("the monthly fee limit to £9.00 and the number of cards to 3"), {item}, {place}, {user},
{password}, {email}, {display}, {language}, and the genre words."""
from weblica.synth.intents import intent

CONTACT_FORM = intent(
    "contact-form",
    "Send the contact form with {fields}. The message must be: \"{message}\"",
    "Contact the site with {fields}. Message: \"{message}\"",
    "Please send a message with {fields}. It should say: \"{message}\"",
    "I have a question. Submit the contact form with {fields}, writing \"{message}\" as the message.",
    "Fill in the contact form ({fields}) with the message \"{message}\", then send it.",
    "Get in touch with {fields}; the message is \"{message}\"",
)
REQUEST_DATES = intent(
    "request-dates",
    "Request {request_what} for {person} from {start} until {end}.",
    "{person} needs {request_what} from {start} to {end}. Please send the request.",
    "Put in a request for {request_what}, {start} to {end}, under the name {person}.",
    "Send a request for {request_what} for {person}: {start} until {end}.",
    "Could you ask for {request_what} for {person}, starting {start} and ending {end}?",
    "I'd like {request_what} from {start} through {end}; the name is {person}.",
)
SET_PREFERENCES = intent(
    "set-preferences",
    "Set {changes}, then save my preferences.",
    "Change {changes} and save.",
    "In my preferences, set {changes} and save them.",
    "Could you set {changes} and save my preferences?",
    "Please update my preferences: {changes}. Save when done.",
    "I'd like you to set {changes} in my saved preferences.",
)
RESERVE_AT = intent(
    "reserve-at",
    "Reserve the {item} at {place}.",
    "Hold the {item} for me at {place}.",
    "I'd like to reserve the {item}; make it {place}.",
    "Reserve the {item} and choose {place} as the location.",
    "Can you put a reservation on the {item} at the {place} location?",
)
RESERVE_FOR = intent(  # a genre whose form is no pick-up reservation ("Book an adviser", "Request a viewing")
    "reserve-for",
    "{reserve_do} for the {item}, with {place} as the {pickup_word}.",
    "I'd like to {reserve_do} for the {item}; the {pickup_word} is {place}.",
    "Please {reserve_do} for the {item} ({pickup_word}: {place}).",
    "For the {item}, {reserve_do} with {place} as the {pickup_word}.",
    "Could you {reserve_do} for the {item}? The {pickup_word} should be {place}.",
)
LOG_IN = intent(
    "log-in",
    "Log in as {user} (password: {password}).",
    "Sign in with the username {user} and the password {password}.",
    "My login is {user} with the password {password}. Sign me in.",
    "Log into the account {user}; the password is {password}.",
    "Please sign in as {user}, password {password}.",
)
SIGN_UP = intent(
    "sign-up",
    "Create an account with username {user}, email {email} and password {password}.",
    "Sign up as {user} with {email} and the password {password}.",
    "Register a new account: username {user}, email {email}, password {password}.",
    "I'm new here. Make me an account called {user} ({email}) with the password {password}.",
    "Open an account for {email} with the username {user} and the password {password}.",
)
LOG_IN_RENAME = intent(
    "log-in-rename",
    "Log in as {user} (password: {password}) and change the display name to \"{display}\".",
    "Sign in as {user} with the password {password} and set the display name to \"{display}\".",
    "Change the display name of {user} to \"{display}\" (the password is {password}).",
    "As {user} (password {password}), make my display name \"{display}\".",
    "I'd like my display name to be \"{display}\". My login is {user}, password {password}.",
)
LOG_IN_PREFERENCES = intent(
    "log-in-preferences",
    "Log in as {user} (password: {password}), subscribe to the newsletter and switch the language to {language}.",
    "Sign in as {user} (password {password}), turn on the newsletter and change the language to {language}.",
    "For the account {user} (password {password}): newsletter on, language {language}. Save it.",
    "I want the newsletter and {language} as my language. Log in as {user} with the password {password} and save that.",
    "Log into {user} with the password {password}, subscribe to the newsletter and set the language to {language}.",
)
