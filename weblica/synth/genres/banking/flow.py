"""Banking: an accounts dashboard with balances, transactions filtered by date range, type and a
search, transfers between one's own accounts and to payees (a form, then a confirm step; only a
confirmed transfer is stored), and monthly statements."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_count
from weblica.synth.data import BASE_DATE, price_scale
from weblica.synth.genres.banking.intents import (AMOUNT, BALANCE, COUNT_TYPE, LARGEST_DEPOSIT, OWN_TRANSFER,
                                                  PAY_LAST_BILL, PAY_PAYEE, STATEMENT)
from weblica.synth.fake import home_city
from weblica.synth.fake import names as name_source
from weblica.synth.fake import people as fake_people
from weblica.synth.genres.kit import Plan, act, amounts, ask, day_text, fill_plan, record_checks, unique_by
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, price_check, shown_money, unique_extreme

ACCOUNT_KINDS = [("Checking", ["Everyday", "Current", "Main"]), ("Savings", ["Rainy Day", "Holiday", "Growth"]),
                 ("Savings", ["Home Deposit", "Emergency", "Bonus"]), ("Credit card", ["Gold", "Travel", "Cashback"])]
# patterns of weblica/synth/fake.py: each bank's customers pay their own town's companies and shops
BILLERS = ["{last_name} Energy", "{home_city} Water", "{last_name} Broadband", "{company} Insurance", "{last_name} Mobile",
           "{last_name} Lettings"]
MERCHANTS = ["{last_name}'s Market", "{street_name} Café", "{home_city} Transit Card", "{last_name} Books",
             "{street_name} Pharmacy", "{last_name} Fuel", "{home_city} Cinema", "{street_name} Market Hall",
             "{last_name} Fitness", "{last_name} Pet Shop", "{home_city} Taxis", "{last_name}'s Bakery"]
TYPES = ["Card payment", "Direct debit", "Transfer", "Deposit", "Cash withdrawal"]
MONTHS = ["2025-12", "2026-01", "2026-02"]


TRANSFER_FIELDS_BASE = [{"name": "amount", "label": "Amount", "type": "number", "min": 0, "required": True},
                        {"name": "reference", "label": "Reference (optional)", "type": "text"}]


def _month_name(month: str) -> str:
    return dt.date.fromisoformat(month + "-01").strftime("%B %Y")


def _bank(site: SiteBuilder) -> dict[str, Any]:
    rng = site.rng
    decimals = site.fmt["decimals"]
    scale = price_scale(site.fmt)
    accounts = []
    balances = amounts(rng, 150 * scale, 9000 * scale, decimals, len(ACCOUNT_KINDS))
    for index, ((kind, names), balance) in enumerate(zip(ACCOUNT_KINDS, balances)):
        name = f"{rng.choice(names)} {kind if kind != 'Credit card' else 'Card'}"
        while any(a["name"] == name for a in accounts):
            name = f"{rng.choice(names)} {kind}"
        accounts.append({"id": f"a{index + 1}", "name": name, "kind": kind,
                         "number": f"•••• {rng.randint(1000, 9999)}", "balance": balance})
    # billers, shops and payees from the fake-data library: no two banks' statements share them
    billers = [name_source(site, "billers").unique(p) for p in rng.sample(BILLERS, 4)]
    people = [p["name"] for p in fake_people(site, "payees", 2)]
    shops = [name_source(site, "merchants").unique(p) for p in MERCHANTS]
    payees = [{"id": f"p{i + 1}", "name": n} for i, n in enumerate(billers + people)]
    transactions = []
    start = BASE_DATE - dt.timedelta(days=75)
    for index in range(46):
        day = (start + dt.timedelta(days=rng.randint(0, 73))).isoformat()
        kind = rng.choice(TYPES + ["Card payment", "Card payment"])
        if kind == "Direct debit":
            who = rng.choice(billers)
        elif kind == "Deposit":
            who = rng.choice(["Salary", "Refund", "Interest"])
        elif kind == "Transfer":
            who = rng.choice(people)
        elif kind == "Cash withdrawal":
            who = "Cash machine"
        else:
            who = rng.choice(shops)
        account = accounts[3] if kind == "Card payment" and rng.random() < 0.4 else accounts[0]
        if kind == "Deposit" and who == "Interest":
            account = accounts[1]
        high = 2600 if kind == "Deposit" else 240
        amount = amounts(rng, 3 * scale, high * scale, decimals, 1)[0]
        transactions.append({"id": f"t{index + 1}", "day": day, "who": who, "kind": kind, "account": account["id"],
                             "account_name": account["name"], "amount": amount, "credit": kind == "Deposit"})
    transactions.sort(key=lambda t: (t["day"], t["id"]), reverse=True)
    statements = []
    for account in accounts[:3]:
        closing = account["balance"]
        for month in reversed(MONTHS):
            opening = amounts(rng, 100 * scale, 9000 * scale, decimals, 1)[0]
            statements.append({"id": f"s{len(statements) + 1}", "account": account["id"], "account_name": account["name"],
                               "month": month, "month_name": _month_name(month), "opening": opening, "closing": closing})
            closing = opening
    return {"accounts": accounts, "payees": payees, "transactions": transactions, "statements": statements}


def build_flows(site: SiteBuilder) -> None:
    bank = _bank(site)
    site.add_data(bank=bank)
    site.add_state(transfers=[], transfer_draft=None)
    accounts, payees = bank["accounts"], bank["payees"]
    own = {a["id"]: f"{a['name']} ({a['number']})" for a in accounts}
    to_labels = {**own, **{p["id"]: f"Payee: {p['name']}" for p in payees}}
    source = {"name": "from", "label": "From account", "type": "select", "options": [a["id"] for a in accounts[:3]],
              "labels": own, "required": True}
    # two forms, as banks have them: between one's own accounts, and to a payee (short option lists)
    forms = {"/banking/transfer": [source, {"name": "to", "label": "To account", "type": "select",
                                            "options": list(own), "labels": own, "required": True}] + TRANSFER_FIELDS_BASE,
             "/banking/pay": [source, {"name": "to", "label": "Payee", "type": "select",
                                       "options": [p["id"] for p in payees], "labels": {p["id"]: p["name"] for p in payees},
                                       "required": True}] + TRANSFER_FIELDS_BASE}
    filter_fields = [
        {"name": "account", "label": "Account", "type": "select", "options": [a["id"] for a in accounts], "labels": own},
        {"name": "type", "label": "Type", "type": "select", "options": TYPES},
        {"name": "from", "label": "From date", "type": "date", "month": MONTHS[-1]},
        {"name": "to", "label": "To date", "type": "date", "month": MONTHS[-1]},
        {"name": "q", "label": "Search", "type": "search", "placeholder": "Payee or description"}]
    site.add_nav(("Accounts", "/banking"), ("Transactions", "/banking/transactions"), ("Transfers", "/banking/transfer"),
                 ("Pay someone", "/banking/pay"), ("Statements", "/banking/statements"))
    common = {"accounts": accounts}
    # the bank's public start page: log in first (weblica/synth/genres/banking/templates/start.html.j2)
    site.page("/", "banking/start.html.j2", title="Personal banking", home_city=home_city(site), page_kind="home")
    site.page("/banking", "banking/dashboard.html.j2", title="Accounts", heading="Your accounts",
              recent=bank["transactions"][:6], page_kind="bank-dashboard", **common)
    site.page("/banking/transactions", "banking/transactions.html.j2", title="Transactions",
              heading="Transactions", fields=filter_fields, transactions=bank["transactions"],
              page_kind="bank-transactions", **common)
    site.page("/banking/transfer", "banking/transfer.html.j2", title="Transfer between accounts",
              heading="Transfer between your accounts", fields=forms["/banking/transfer"], payees=payees,
              intro="Move money between your own accounts. You can check the details before anything is sent.",
              page_kind="bank-transfer", **common)
    site.page("/banking/pay", "banking/transfer.html.j2", title="Pay someone", heading="Pay someone",
              fields=forms["/banking/pay"], payees=payees,
              intro="Pay someone you have saved as a payee. You can check the details before anything is sent.",
              page_kind="bank-transfer", **common)
    site.page("/banking/transfer/review", "banking/review.html.j2", title="Review transfer",
              heading="Review your transfer", labels=to_labels, page_kind="bank-review", **common)
    site.page("/banking/transfer/done", "message.html.j2", title="Transfer sent", heading="Transfer sent",
              text="Your transfer has been submitted.", back="/banking", page_kind="done")
    site.page("/banking/statements", "banking/statements.html.j2", title="Statements", heading="Statements",
              statements=bank["statements"], page_kind="bank-statements", **common)
    _tasks(site, bank, forms, filter_fields)


def _form(forms: dict[str, list[dict[str, Any]]], to: str) -> tuple[str, list[dict[str, Any]]]:
    """The transfer form for a destination: a payee (p…) is paid on /banking/pay, an own account on /banking/transfer."""
    path = "/banking/pay" if to.startswith("p") else "/banking/transfer"
    return path, forms[path]


def _transfer(site: SiteBuilder, forms: dict[str, list[dict[str, Any]]], values: dict[str, Any]) -> Plan:
    path, fields = _form(forms, values["to"])
    return ([{"op": "click", "sel": f"a[href='{path}']"}] + fill_plan(site, fields, values)
            + [{"op": "click", "sel": "#submit"}, {"op": "click", "sel": "#confirm"}])


def _amount_text(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def _tasks(site: SiteBuilder, bank: dict[str, Any], forms: dict[str, list[dict[str, Any]]],
           filter_fields: list[dict[str, Any]]) -> None:
    rng = site.rng
    accounts, transactions = bank["accounts"], bank["transactions"]
    start = "/banking"
    to_transactions: Plan = [{"op": "click", "sel": "a[href='/banking/transactions']"}]
    decimals = site.fmt["decimals"]

    account = rng.choice(accounts)
    balances = [a["balance"] for a in accounts]
    ask(site, BALANCE, {"account": account["name"]}, start, [{"op": "reach", "sel": f"[data-account={account['id']}] .price"}],
        site.money(account["balance"]), price_check(site, account["balance"], balances),
        shown_money(site, distinct(balances, account["balance"])), "The balance shown for that account")

    days = sorted({t["day"] for t in transactions})
    for _ in range(6):  # a type and a range whose count no wrong procedure also gives
        kind = rng.choice(TYPES[:3])
        lo = rng.randrange(0, len(days) - 12)
        first, last = days[lo], days[lo + rng.randint(8, 11)]
        in_range = [t for t in transactions if first <= t["day"] <= last]
        gold = sum(t["kind"] == kind for t in in_range)
        competing = [len(in_range), sum(t["kind"] == kind for t in transactions), len(transactions),
                     sum(t["kind"] == kind and first < t["day"] < last for t in transactions)]
        confusers = count_confusers(gold, competing)
        if gold >= 2 and confusers:
            plan = to_transactions + fill_plan(site, filter_fields, {"type": kind, "from": first, "to": last}) + \
                [{"op": "click", "sel": "#filter-transactions"}, {"op": "reach", "sel": "[data-row-count]"}]
            ask(site, COUNT_TYPE, {"kind": kind.lower(), "start": day_text(first), "end": day_text(last)}, start, plan,
                str(gold), answer_count(gold, confusers, unit="transactions"), [str(c) for c in confusers], "The number of transactions of that type in the date range")
            break

    payments = [t for t in transactions if t["kind"] in ("Card payment", "Direct debit")]
    rng.shuffle(payments)
    for t in payments:
        if unique_by([p for p in transactions if p["who"] == t["who"]], "day", t["day"]) is t:
            plan = to_transactions + fill_plan(site, filter_fields, {"q": t["who"]}) + \
                [{"op": "click", "sel": "#filter-transactions"}, {"op": "reach", "sel": f"[data-row={t['id']}]"}]
            same = [p["amount"] for p in transactions if p["who"] == t["who"]] + [p["amount"] for p in transactions[:10]]
            ask(site, AMOUNT, {"merchant": t["who"], "day": day_text(t["day"])}, start, plan, site.money(t["amount"]),
                price_check(site, t["amount"], same), shown_money(site, distinct(same, t["amount"])), "The amount of that payment")
            break

    source, target = rng.sample(accounts[:3], 2)
    amount = amounts(rng, 20, 900, decimals, 1)[0] * (100 if decimals == 0 else 1)
    values = {"from": source["id"], "to": target["id"], "amount": _amount_text(amount, decimals)}
    plan = _transfer(site, forms, values)
    checks = record_checks("transfers", _form(forms, values["to"])[1], {**values, "amount": amount})
    other = next(a for a in accounts if a["id"] not in (source["id"], target["id"]))
    act(site, OWN_TRANSFER, {"amount": site.money(amount), "source": source["name"], "target": target["name"]}, start,
        plan, checks, "One confirmed transfer of that amount between the two accounts",
        maximal=plan + _transfer(site, forms, {**values, "to": other["id"]}))

    billers = {p["name"]: p for p in bank["payees"]}
    debits = [t for t in transactions if t["kind"] == "Direct debit"]
    names = sorted({t["who"] for t in debits})
    rng.shuffle(names)  # shuffled after sorting: a set's order changes with the process's hash seed
    for name in names:
        theirs = [t for t in debits if t["who"] == name]
        latest = unique_extreme(theirs, "day", highest=True)
        if latest is None:
            continue
        payee = billers[name]
        reference = f"{name.split()[0]} {rng.choice(['bill', 'account', 'invoice'])} {rng.randint(1000, 9999)}"
        values = {"from": accounts[0]["id"], "to": payee["id"], "amount": _amount_text(latest["amount"], decimals),
                  "reference": reference}
        plan = to_transactions + fill_plan(site, filter_fields, {"q": name}) + \
            [{"op": "click", "sel": "#filter-transactions"}, {"op": "reach", "sel": f"[data-row={latest['id']}]"}] + \
            _transfer(site, forms, values)
        checks = record_checks("transfers", _form(forms, values["to"])[1], {**values, "amount": latest["amount"]})
        act(site, PAY_LAST_BILL, {"payee": name, "source": accounts[0]["name"], "reference": reference}, start, plan,
            checks, "One confirmed payment to the payee of their latest direct debit's amount")
        break

    def statement_closing() -> None:
        statement = rng.choice(bank["statements"])
        figures = [s["closing"] for s in bank["statements"]] + [s["opening"] for s in bank["statements"]]
        ask(site, STATEMENT, {"month": statement["month_name"], "account": statement["account_name"]}, start,
            [{"op": "click", "sel": "a[href='/banking/statements']"}, {"op": "reach", "sel": f"[data-row={statement['id']}]"}],
            site.money(statement["closing"]), price_check(site, statement["closing"], figures),
            shown_money(site, distinct(figures, statement["closing"])), "The statement's closing balance")

    def largest_deposit() -> None:
        for month in rng.sample(MONTHS[1:], 2):
            deposits = [t for t in transactions if t["kind"] == "Deposit" and t["day"].startswith(month)]
            best = unique_extreme(deposits, "amount", highest=True)
            if best is None or len(deposits) < 2:
                continue
            days_in = [t["day"] for t in transactions if t["day"].startswith(month)]
            first, last = f"{month}-01", max(days_in)
            plan = to_transactions + fill_plan(site, filter_fields, {"type": "Deposit", "from": first, "to": last}) + \
                [{"op": "click", "sel": "#filter-transactions"}, {"op": "reach", "sel": f"[data-row={best['id']}]"}]
            figures = [t["amount"] for t in transactions if t["kind"] == "Deposit"]
            ask(site, LARGEST_DEPOSIT, {"month": _month_name(month)}, start, plan, site.money(best["amount"]),
                price_check(site, best["amount"], figures), shown_money(site, distinct(figures, best["amount"])), "The largest deposit of that month")
            return

    def pay_payee() -> None:
        payee = rng.choice(bank["payees"])
        source = rng.choice(accounts[:3])
        amount = amounts(rng, 10, 400, decimals, 1)[0] * (100 if decimals == 0 else 1)
        reference = f"{rng.choice(['Invoice', 'Dinner', 'Rent share', 'Gift'])} {rng.randint(10, 99)}"
        values = {"from": source["id"], "to": payee["id"], "amount": _amount_text(amount, decimals), "reference": reference}
        plan = _transfer(site, forms, values)
        act(site, PAY_PAYEE, {"amount": site.money(amount), "payee": payee["name"], "source": source["name"],
                              "reference": reference}, start, plan,
            record_checks("transfers", _form(forms, values["to"])[1], {**values, "amount": amount}), "One confirmed payment of that amount to the payee")

    rng.choice([largest_deposit, pay_payee, statement_closing])()
