"""The modern web's mechanics (issue 38, point 5), part one: a document that opens in a new tab, a
payment form embedded in an iframe, web components with open shadow roots. Part two, the walls (sign-in,
consent) and dark patterns, is weblica/synth/skills/walls.py.

Their pages' behaviour is the bundle file /assets/mechanics.js (mechanics.js beside this module), not a
runtime script, so the runtime's digest and every other skill's bytes stay as they were. Plans reach into
frames and shadow roots with " >>> " selectors and move between tabs with `open_tab` / `switch_tab`
(weblica/synth/player.py): the oracle clicks at the page coordinates the env's click uses."""
from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from weblica.synth.checks import answer_text, state_count, state_is
from weblica.synth.data import price_scale
from weblica.synth.intents import mechanics as asks
from weblica.synth.intents import say
from weblica.synth.intents.difficulty import planned
from weblica.synth.site import SiteBuilder, TaskDraft
from weblica.synth.skills.common import catalog_shell, skill

SCRIPT = Path(__file__).with_name("mechanics.js")


def add_script(site: SiteBuilder) -> None:
    """The mechanics' script as a file of the bundle (/assets/mechanics.js)."""
    if "assets/mechanics.js" not in site.files:
        site.add_file("assets/mechanics.js", SCRIPT.read_bytes())


def mech_page(site: SiteBuilder, path: str, title: str, body: str, nav: bool = True, **context: Any) -> None:
    """A page of the site's frame whose body the skill wrote (mechanics.html.j2)."""
    add_script(site)
    if nav:
        site.add_nav((title, path))
    site.page(path, "mechanics.html.j2", title=title, heading=title, body=body, page_kind="mechanics", **context)


def bare_page(site: SiteBuilder, path: str, title: str, body: str, framed: bool = False) -> None:
    """A document outside the site's frame: an iframe's widget (`framed`: it loads the runtime for its
    form) or a page another tab shows."""
    site.page(path, "mechanics_bare.html.j2", title=title, heading=title, body=body, framed=framed)


def _unique_codes(site: SiteBuilder, n: int, make: Any) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        code = make(site.rng)
        if code not in out:
            out.append(code)
    return out


# ---- a new tab: invoices open with target=_blank, the carrier's tracking page with window.open ----------
@skill("new-tab")
def new_tab(site: SiteBuilder) -> None:
    items = catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    n = 6
    numbers = sorted(rng.sample(range(10_000, 99_999), n))
    refs = _unique_codes(site, n, lambda r: f"INV-{r.randint(100_000, 999_999)}")
    tracking = _unique_codes(site, n, lambda r: f"TRK{r.randint(10 ** 9, 10 ** 10 - 1)}")
    orders = []
    for i, item in enumerate(rng.sample(items, n)):
        qty = rng.randint(1, 3)
        orders.append({"number": str(numbers[i]), "item": item["name"], "qty": qty, "total": round(item["price"] * qty, 2),
                       "reference": refs[i], "tracking": tracking[i], "id": f"o{i + 1}"})
    site.add_data(orders=orders)
    site.add_state(confirmations=[])
    rows = "".join(
        f"<tr data-order='{o['id']}'><td>#{o['number']}</td><td>{o['qty']} × {escape(o['item'])}</td>"
        f"<td>{escape(site.money(o['total']))}</td>"
        f"<td><a href='/invoice/{o['id']}' target='_blank' rel='noopener' data-invoice='{o['id']}'>Invoice #{o['number']}</a></td>"
        f"<td><button type='button' data-open='/track/{o['id']}' data-track='{o['id']}'>Track #{o['number']}</button></td></tr>"
        for o in orders)
    body = (f"<p>Your recent orders. Invoices and the carrier's tracking open separately.</p>"
            f"<table class='mech-table'><thead><tr><th>Order</th><th>Items</th><th>Total</th><th>Invoice</th>"
            f"<th>Delivery</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<h2>Confirm a payment</h2><p>Paid by bank transfer? Quote the reference printed on the invoice.</p>"
            f"<form data-api='/api/confirmations' data-redirect='/payment-confirmed' id='confirm-form'>"
            f"<label for='f-reference'>Invoice reference</label> <input id='f-reference' name='reference' type='text' required>"
            f"<p data-error-for='reference' hidden></p><p data-form-error hidden></p>"
            f"<button type='submit' id='confirm-submit'>Confirm payment</button></form>")
    mech_page(site, "/orders", "Your orders", body)
    site.page("/payment-confirmed", "message.html.j2", title="Payment confirmed", heading="Thank you",
              text="We have your payment confirmation.", back="/orders", page_kind="done")
    for o in orders:
        bare_page(site, f"/invoice/{o['id']}", f"Invoice for order #{o['number']}",
                  f"<dl><dt>Reference</dt><dd data-ref>{o['reference']}</dd><dt>Order</dt><dd>#{o['number']}</dd>"
                  f"<dt>Items</dt><dd>{o['qty']} × {escape(o['item'])}</dd><dt>Amount</dt>"
                  f"<dd>{escape(site.money(o['total']))}</dd></dl><p>Pay by bank transfer quoting the reference.</p>")
        bare_page(site, f"/track/{o['id']}", "Parcel tracking",
                  f"<p>Delivery partner: Swiftpost</p><dl><dt>Tracking number</dt><dd data-tracking>{o['tracking']}</dd>"
                  f"<dt>Status</dt><dd>In transit</dd></dl>")
    go = [{"op": "click", "sel": "a[href='/orders']"}]
    refs_all = [o["reference"] for o in orders]
    shown = [v for x in orders for v in (f"#{x['number']}", x["number"], site.money(x["total"]), str(x["qty"]))]
    for o in rng.sample(orders, 4):
        plan = go + [{"op": "open_tab", "sel": f"[data-invoice={o['id']}]"}, {"op": "reach", "sel": "[data-ref]"},
                     {"op": "done", "answer": o["reference"]}]
        site.task(TaskDraft(**say(site, asks.INVOICE_REFERENCE, order=f"#{o['number']}"), start_path="/", plan=plan,
                            # the order numbers and totals the pages show are confusers too: an answer
                            # that copies the invoice or the orders table ("INV-1, #52745") asserts them
                            checks=[answer_text(o["reference"], [r for r in refs_all if r != o["reference"]] + shown)],
                            difficulty=planned(plan), rubric=["The reference printed on that order's invoice"],
                            wrong_answers=[r for r in refs_all if r != o["reference"]][:3]))
    tracks = [o["tracking"] for o in orders]
    for o in rng.sample(orders, 4):
        plan = go + [{"op": "open_tab", "sel": f"[data-track={o['id']}]"}, {"op": "reach", "sel": "[data-tracking]"},
                     {"op": "done", "answer": o["tracking"]}]
        site.task(TaskDraft(**say(site, asks.TRACKING_NUMBER, order=f"#{o['number']}"), start_path="/", plan=plan,
                            checks=[answer_text(o["tracking"], [t for t in tracks if t != o["tracking"]] + shown)],
                            difficulty=planned(plan), rubric=["The tracking number the carrier's page shows"],
                            wrong_answers=[t for t in tracks if t != o["tracking"]][:3]))
    for o in rng.sample(orders, 4):
        # the reference is only on the invoice, in the other tab: read there, typed back in the first tab
        plan = go + [{"op": "open_tab", "sel": f"[data-invoice={o['id']}]"}, {"op": "reach", "sel": "[data-ref]"},
                     {"op": "switch_tab", "index": 0}, {"op": "fill", "sel": "#f-reference", "text": o["reference"]},
                     {"op": "click", "sel": "#confirm-submit"}]
        site.task(TaskDraft(**say(site, asks.CONFIRM_PAYMENT, order=f"#{o['number']}"), start_path="/", plan=plan,
                            checks=[state_count("confirmations", 1), state_is("confirmations.0.reference", o["reference"])],
                            difficulty=planned(plan), rubric=["One confirmation quoting that invoice's reference"]))


# ---- an iframe: the payment form is an embedded widget (a document of its own) ---------------------------
@skill("iframe")
def iframe(site: SiteBuilder) -> None:
    catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    payees = ["City Water", "Northgrid Power", "Metro Broadband", "Harbor Gas", "Civic Waste Services"]
    decimals = int(site.fmt["decimals"])  # a bill is due in what the site's currency writes (no yen cents)
    bills = [{"id": f"b{i + 1}", "payee": p, "due": round(rng.randint(2_000, 40_000) / 100 * price_scale(site.fmt), decimals)}
             for i, p in enumerate(payees)]
    site.add_data(bills=bills)
    site.add_state(payments=[])
    rows = "".join(f"<tr data-bill='{b['id']}'><td>{escape(b['payee'])}</td><td>{escape(site.money(b['due']))}</td></tr>"
                   for b in bills)
    body = (f"<p>Your open bills. Payments go through our secure payment partner below.</p>"
            f"<table class='mech-table'><thead><tr><th>Biller</th><th>Amount due</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<iframe id='pay-frame' class='mech-frame' src='/pay-widget' title='Secure payment'></iframe>")
    mech_page(site, "/bills", "Pay bills", body)
    radios = "".join(f"<label><input type='radio' name='id' value='{b['id']}' id='payee-{b['id']}' required> "
                     f"{escape(b['payee'])}</label>" for b in bills)
    # a payment's record id is its bill's (the radio's name is "id"): checks find it whatever the order,
    # and the site server refuses a second payment of one bill
    bare_page(site, "/pay-widget", "Secure payment",
              f"<form data-api='/api/payments' data-redirect='/pay-widget-done' id='pay-form'>"
              f"<fieldset><legend>Pay to</legend>{radios}</fieldset><p data-error-for='id' hidden></p>"
              f"<label for='amount'>Amount</label><input id='amount' name='amount' type='number' step='0.01' min='0.01' required>"
              f"<p data-error-for='amount' hidden></p><p data-form-error hidden></p>"
              f"<button type='submit' id='pay'>Pay now</button></form>", framed=True)
    bare_page(site, "/pay-widget-done", "Payment sent",
              "<p data-paid>Your payment was sent.</p><p><a href='/pay-widget' id='again'>Make another payment</a></p>",
              framed=True)
    go = [{"op": "click", "sel": "a[href='/bills']"}]
    frame = "#pay-frame >>> "

    def pay(bill: dict[str, Any], amount: float) -> list[dict[str, Any]]:
        return [{"op": "click", "sel": f"{frame}#payee-{bill['id']}"},
                {"op": "fill", "sel": f"{frame}#amount", "text": f"{amount:.{decimals}f}"},
                {"op": "click", "sel": f"{frame}#pay"}, {"op": "reach", "sel": f"{frame}[data-paid]"}]

    def task(bill: dict[str, Any], amount: float, asked: dict[str, Any]) -> None:
        plan = go + pay(bill, amount)
        other = next(b for b in bills if b is not bill)
        site.task(TaskDraft(**asked, start_path="/", plan=plan, difficulty=planned(plan),
                            checks=[state_count("payments", 1), state_is(f"payments_by_id.{bill['id']}.amount", amount, "numeric")],
                            rubric=["One payment, to that biller, of that amount"],
                            # "do everything": another biller paid too, from the widget's own next form
                            maximal=plan + [{"op": "click", "sel": f"{frame}#again"}] + pay(other, other["due"])))

    for bill in rng.sample(bills, 5):
        task(bill, bill["due"], say(site, asks.PAY_BILL_IN_FULL, payee=bill["payee"]))
    for bill in rng.sample(bills, 4):
        part = float(max(1, int(bill["due"] // 2)))  # a whole part of the bill
        task(bill, part, say(site, asks.PAY_BILL_PART, payee=bill["payee"], amount=site.money(part)))
    for _ in range(3):
        a, b = rng.sample(bills, 2)
        # the widget's "make another payment" brings its form back for the second bill
        plan = go + pay(a, a["due"]) + [{"op": "click", "sel": f"{frame}#again"}] + pay(b, b["due"])
        site.task(TaskDraft(**say(site, asks.PAY_TWO_BILLS, a=a["payee"], b=b["payee"]), start_path="/", plan=plan,
                            difficulty=planned(plan), rubric=["Two payments, each bill in full"],
                            checks=[state_count("payments", 2), state_is(f"payments_by_id.{a['id']}.amount", a["due"], "numeric"),
                                    state_is(f"payments_by_id.{b['id']}.amount", b["due"], "numeric")]))


# ---- web components: steppers and a switch whose controls live in open shadow roots ---------------------
@skill("web-components")
def web_components(site: SiteBuilder) -> None:
    items = catalog_shell(site, search=False, list_page=False, home_items=4)
    rng = site.rng
    lines = rng.sample(items, 5)
    site.add_data(sheet_items=[i["id"] for i in lines])
    site.add_state(sheet={"lines": {}, "gift_wrap": False})
    rows = "".join(f"<tr><td>{escape(i['name'])}</td><td>{escape(site.money(i['price']))}</td>"
                   f"<td><qty-stepper data-item='{i['id']}' id='qty-{i['id']}' value='0'></qty-stepper></td></tr>"
                   for i in lines)
    body = (f"<p>Build your order sheet: set a quantity for each line, then save.</p>"
            f"<table class='mech-table'><thead><tr><th>{escape(site.item_noun.capitalize())}</th><th>Price</th>"
            f"<th>Quantity</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p><toggle-switch id='gift-wrap'>Gift wrap</toggle-switch></p>"
            f"<p><button type='button' id='save-sheet'>Save order sheet</button> <span data-saved-sheet hidden>Saved.</span></p>")
    mech_page(site, "/order-sheet", "Order sheet", body)
    go = [{"op": "click", "sel": "a[href='/order-sheet']"}]
    save = [{"op": "click", "sel": "#save-sheet"}, {"op": "reach", "sel": "[data-saved-sheet]"}]

    def steps(item: dict[str, Any], qty: int) -> list[dict[str, Any]]:
        return [{"op": "click", "sel": f"#qty-{item['id']} >>> [data-up]"} for _ in range(qty)]

    def task(wanted: dict[str, int], gift: bool, asked: dict[str, Any], plan: list[dict[str, Any]]) -> None:
        # every line is checked (the others stay 0), so stepping every stepper up is no way through
        checks = [state_is(f"sheet.lines.{i['id']}", wanted.get(i["id"], 0), "numeric") for i in lines]
        others = [i for i in lines if i["id"] not in wanted]
        site.task(TaskDraft(**asked, start_path="/", plan=plan, difficulty=planned(plan),
                            checks=checks + [state_is("sheet.gift_wrap", gift)], rubric=["The saved sheet is as asked"],
                            maximal=plan + [s for i in others for s in steps(i, 1)]
                            + ([] if gift else [{"op": "click", "sel": "#gift-wrap >>> [data-switch]"}]) + save))

    for item in rng.sample(lines, 5):
        qty = rng.randint(2, 4)
        task({item["id"]: qty}, False, say(site, asks.SET_QUANTITY, item=item["name"], qty=qty),
             go + steps(item, qty) + save)
    for _ in range(4):
        a, b = rng.sample(lines, 2)
        qa, qb = rng.randint(1, 3), rng.randint(2, 4)
        task({a["id"]: qa, b["id"]: qb}, False, say(site, asks.SET_TWO_QUANTITIES, a=a["name"], b=b["name"], qa=qa, qb=qb),
             go + steps(a, qa) + steps(b, qb) + save)
    for item in rng.sample(lines, 3):
        qty = rng.randint(1, 3)
        task({item["id"]: qty}, True, say(site, asks.QUANTITY_GIFT_WRAP, item=item["name"], qty=qty),
             go + steps(item, qty) + [{"op": "click", "sel": "#gift-wrap >>> [data-switch]"}] + save)
