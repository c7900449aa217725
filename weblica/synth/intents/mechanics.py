"""Intents of the modern web's mechanics (weblica/synth/skills/mechanics.py): a document that opens in a
new tab, a payment form embedded in a frame, web components, a sign-in wall, a consent wall and dark
patterns. None says how the page does it (no "tab", "frame" or "click": the instruction lint refuses
hints). Slots: {order} an order number, {payee} a biller, {amount} a sum as the site writes it,
{item} / {a} / {b} entity names, {qty} / {qa} / {qb} quantities, {email}, {password}, {street},
{city}, {name}, {page} a page's name."""
from weblica.synth.intents import intent

INVOICE_REFERENCE = intent(
    "invoice-reference",
    "What is the invoice reference of order {order}?",
    "Find the reference number on the invoice for order {order}.",
    "I need the invoice reference for order {order}. What is it?",
    "Look up order {order}'s invoice and tell me its reference.",
    "Which reference does the invoice of order {order} carry?",
)
TRACKING_NUMBER = intent(
    "tracking-number",
    "What is the carrier's tracking number for order {order}?",
    "Find the tracking number of order {order} at the delivery partner.",
    "I need the parcel tracking number for order {order}.",
    "Tell me the delivery partner's tracking number for order {order}.",
    "Which tracking number did the carrier give order {order}?",
)
CONFIRM_PAYMENT = intent(
    "confirm-payment-reference",
    "Confirm the payment of order {order} by entering its invoice reference in the payment confirmation form.",
    "Copy the invoice reference of order {order} into the payment confirmation form and submit it.",
    "Submit a payment confirmation for order {order}, quoting the reference from its invoice.",
    "Send the payment confirmation for order {order} with the reference printed on its invoice.",
    "Please confirm that order {order} is paid: the confirmation form needs the reference from its invoice.",
)
PAY_BILL_IN_FULL = intent(
    "pay-bill-in-full",
    "Pay the {payee} bill in full.",
    "Settle the whole amount due to {payee}.",
    "Make a payment to {payee} for the full amount due.",
    "I want to pay everything I owe {payee}.",
    "Please pay {payee}'s bill, the full amount.",
)
PAY_BILL_PART = intent(
    "pay-bill-part",
    "Pay {amount} towards the {payee} bill.",
    "Make a payment of {amount} to {payee}.",
    "Send {payee} a part payment of {amount}.",
    "I'd like to pay {amount} of what I owe {payee}.",
    "Please pay {payee} {amount}, not the full bill.",
)
SET_QUANTITY = intent(
    "component-quantity",
    "Set the quantity of the {item} to {qty} and save the order sheet.",
    "On the order sheet, make it {qty} × {item} and save.",
    "I want {qty} of the {item} on the order sheet. Save it.",
    "Change the order sheet so it has {qty} × {item}, then save it.",
    "Please save an order sheet with {qty} of the {item}.",
)
SET_TWO_QUANTITIES = intent(
    "component-two-quantities",
    "Set the order sheet to {qa} × {a} and {qb} × {b}, then save.",
    "On the order sheet, put {qa} of the {a} and {qb} of the {b}, and save it.",
    "I need {qa} × {a} and {qb} × {b} on the order sheet. Save it.",
    "Save an order sheet with {qa} of the {a} and {qb} of the {b}.",
    "Make the order sheet {qa} × {a} plus {qb} × {b} and save.",
)
QUANTITY_GIFT_WRAP = intent(
    "component-quantity-gift",
    "Put {qty} × {item} on the order sheet with gift wrapping turned on, and save.",
    "Save an order sheet of {qty} of the {item}, gift wrapped.",
    "I want {qty} of the {item}, gift-wrapped. Save the order sheet.",
    "Set {qty} × {item} on the order sheet, switch gift wrapping on and save.",
    "Please save the order sheet with {qty} of the {item} and gift wrap on.",
)
SIGNED_IN_NUMBER = intent(
    "signed-in-member-number",
    "Sign in as {email} with the password {password} and tell me the membership number on the account.",
    "Log in as {email} (password {password}). What is my membership number?",
    "My login is {email}, password {password}. Find my membership number.",
    "With the account {email} and the password {password}, look up the membership number.",
    "Sign in with {email} and {password}, then read me my membership number.",
)
SIGNED_IN_ADDRESS = intent(
    "signed-in-address",
    "Sign in as {email} with the password {password} and change the delivery address to {street}, {city}.",
    "Log in as {email} (password {password}) and set my delivery address to {street}, {city}.",
    "My login is {email}, password {password}. Update my delivery address to {street}, {city}.",
    "With the account {email} and the password {password}, make {street}, {city} the delivery address.",
    "Sign in with {email} and {password}, then save {street}, {city} as my delivery address.",
)
SIGNED_IN_QUIET = intent(
    "signed-in-notifications-off",
    "Sign in as {email} with the password {password} and turn off email notifications for the account.",
    "Log in as {email} (password {password}) and stop the account's email notifications.",
    "My login is {email}, password {password}. Switch off my email notifications.",
    "With the account {email} and the password {password}, disable email notifications.",
    "Sign in with {email} and {password}, then make sure the account sends no email notifications.",
)
REJECT_COOKIES = intent(
    "reject-optional-cookies",
    "Open the {page} page and refuse all optional cookies.",
    "Go to the {page} page and decline every cookie that is not essential.",
    "On the {page} page, say no to analytics and marketing cookies.",
    "Visit the {page} page and allow only the essential cookies.",
    "I don't want optional cookies: refuse them on the {page} page.",
)
ANALYTICS_ONLY = intent(
    "analytics-cookies-only",
    "Open the {page} page and allow analytics cookies but not marketing cookies.",
    "Go to the {page} page and accept only the analytics cookies, no marketing ones.",
    "On the {page} page, consent to analytics cookies and refuse marketing cookies.",
    "Visit the {page} page; allow analytics cookies, decline marketing cookies.",
    "I only want analytics cookies: set that on the {page} page.",
)
JOIN_OFFERS_NO_PARTNERS = intent(
    "join-offers-no-partners",
    "Join the members' club as {name} with the email {email}, accepting all cookies; I want offers by email but no sharing with partners.",
    "Sign {name} ({email}) up for the members' club with all cookies allowed. Keep the email offers, refuse partner sharing.",
    "Register {name}, {email}, for the members' club: all cookies are fine, email offers yes, partner sharing no.",
    "Make {name} a club member with the email {email}; accept every cookie and the offers by email, but do not share details with partners.",
    "Please enrol {name} ({email}) in the members' club, accepting all cookies, keeping email offers and declining partner sharing.",
)
JOIN_NO_MARKETING = intent(
    "join-without-marketing",
    "Join the members' club as {name} with the email {email}, refusing optional cookies, marketing emails and sharing with partners.",
    "Sign {name} ({email}) up for the members' club. No optional cookies, no marketing emails, no data for partners.",
    "Register {name}, {email}, for the members' club without any marketing emails or partner sharing, and with essential cookies only.",
    "Make {name} a club member with the email {email}; decline optional cookies, offers by email and partner sharing.",
    "Please enrol {name} ({email}) in the members' club, opting out of marketing emails, partner sharing and optional cookies.",
)
UNSUBSCRIBE = intent(
    "unsubscribe-newsletter",
    "Unsubscribe from the newsletter, refusing optional cookies if asked.",
    "Stop the newsletter subscription; decline optional cookies.",
    "I no longer want the newsletter. Unsubscribe me, and allow only essential cookies.",
    "Cancel my newsletter subscription, with essential cookies only.",
    "Please end the newsletter subscription and refuse the optional cookies.",
)
PAY_TWO_BILLS = intent(
    "pay-two-bills",
    "Pay the {a} and {b} bills in full.",
    "Settle both bills, {a} and {b}, for the full amounts due.",
    "I want to pay everything I owe {a} and {b}.",
    "Make two full payments: one to {a}, one to {b}.",
    "Please clear the {a} bill and the {b} bill completely.",
)
