"""The banking genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

BALANCE = intent(
    "banking-balance",
    "What is the current balance of my {account} account?",
    "How much money is in my {account} account right now?",
    "Tell me the balance of the {account} account.",
    "What's the available balance on {account}?",
    "What balance does my {account} account show?")

COUNT_TYPE = intent(
    "banking-count-type",
    "How many {kind} transactions were there from {start} to {end}?",
    "Count my {kind} transactions between {start} and {end}, both days included.",
    "Between {start} and {end}, how many {kind} transactions went through my accounts?",
    "How many times did a {kind} transaction happen from {start} through {end}?",
    "From {start} to {end} inclusive, what is the number of {kind} transactions?")

AMOUNT = intent(
    "banking-payment-amount",
    "How much did I pay {merchant} on {day}?",
    "What was the amount of the {merchant} payment on {day}?",
    "Find the {merchant} transaction from {day}: how much was it?",
    "On {day} I paid {merchant}. What was the amount?",
    "Look up my payment to {merchant} on {day} and tell me how much it was.")

OWN_TRANSFER = intent(
    "banking-own-transfer",
    "Transfer {amount} from my {source} account to my {target} account.",
    "Move {amount} from {source} to {target}.",
    "Send {amount} from the {source} account over to {target}.",
    "Put {amount} into {target}, taking it from {source}.",
    "I want {amount} moved from {source} into {target}; make the transfer.")

PAY_LAST_BILL = intent(
    "banking-pay-last-bill",
    "Pay {payee} the same amount as their latest direct debit, from my {source} account, with the reference \"{reference}\".",
    "Send {payee} a payment equal to the most recent {payee} direct debit, from {source}, reference \"{reference}\".",
    "From {source}, transfer to {payee} exactly what their last direct debit took; use \"{reference}\" as the reference.",
    "Look up the latest {payee} direct debit and pay them that amount again from {source} (reference \"{reference}\").",
    "Make a payment to {payee} from {source} for the amount of their most recent direct debit, with reference \"{reference}\".")

STATEMENT = intent(
    "banking-statement-closing",
    "What was the closing balance on the {month} statement of my {account} account?",
    "On my {account} statement for {month}, what is the closing balance?",
    "How much was in {account} at the end of {month}, according to the statement?",
    "What balance did {account} close {month} with, according to its statement?",
    "Tell me the closing balance of {account} in the statement for {month}.")

LARGEST_DEPOSIT = intent(
    "banking-largest-deposit",
    "What was the largest deposit into my accounts in {month}?",
    "How much was my biggest deposit during {month}?",
    "In {month}, what is the highest amount paid into my accounts?",
    "Find my largest incoming payment of {month}: how much was it?",
    "Which amount was the biggest deposit I received in {month}?")

PAY_PAYEE = intent(
    "banking-pay-payee",
    "Send {amount} to {payee} from my {source} account with the reference \"{reference}\".",
    "Pay {payee} {amount} from {source}; the reference is \"{reference}\".",
    "Transfer {amount} from {source} to my payee {payee}, reference \"{reference}\".",
    "I owe {payee} {amount}. Pay it from {source} with \"{reference}\" as the reference.",
    "Make a {amount} payment to {payee} out of {source}, referenced \"{reference}\".")
