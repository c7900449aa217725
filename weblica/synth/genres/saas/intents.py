"""The saas genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

MOVE_CARD = intent(
    "saas-move-card",
    "Move the card \"{card}\" on the {project} board to {column}.",
    "On {project}, put \"{card}\" in the {column} column.",
    "The card \"{card}\" in {project} belongs in {column} now; move it there.",
    "Please shift the {project} card \"{card}\" to {column}.",
    "Update the {project} board: \"{card}\" goes to {column}.")

MOVE_EARLIEST = intent(
    "saas-move-earliest-due",
    "In {project}, move the {column} card that is due soonest to {target}.",
    "Take the card in {column} on the {project} board with the earliest due date and move it to {target}.",
    "The {project} board's most urgent card in {column} (earliest due date) should go to {target}.",
    "Of the {project} cards sitting in {column}, move the one due first to {target}.",
    "Find which {column} card in {project} is due earliest and put it in {target}.")

SETTINGS = intent(
    "saas-settings",
    "In the settings of {project}, turn on \"{on}\" and turn off \"{off}\".",
    "Change {project}'s settings: enable \"{on}\", disable \"{off}\".",
    "For the {project} project, switch \"{on}\" on and \"{off}\" off, and save.",
    "I want \"{on}\" enabled and \"{off}\" disabled on {project}.",
    "Update {project}: \"{off}\" should be off and \"{on}\" on.")

INVITE = intent(
    "saas-invite",
    "Invite {email} to {project} as a {role}.",
    "Add {email} to the {project} project with the {role} role.",
    "Send {email} an invitation to join {project}; they should be a {role}.",
    "Give {email} access to {project} as a {role}.",
    "Invite {email} to join {project} with {role} rights.")

COLUMN_COUNT = intent(
    "saas-column-count",
    "How many cards are in {column} on the {project} board?",
    "Count the {project} cards that are in {column}.",
    "On the {project} board, how many cards sit in the {column} column?",
    "What is the number of {column} cards in {project}?",
    "How many of {project}'s cards are currently in {column}?")

ASSIGNEE = intent(
    "saas-assignee",
    "Who is assigned to \"{card}\" in {project}?",
    "Which team member owns the card \"{card}\" on the {project} board?",
    "Name the assignee of the {project} card \"{card}\".",
    "Who is working on \"{card}\" in the {project} project?",
    "The card \"{card}\" in {project}: whose is it?")

DUE = intent(
    "saas-card-due",
    "When is the card \"{card}\" in {project} due?",
    "What is the due date of \"{card}\" on the {project} board?",
    "By what date must \"{card}\" in {project} be finished?",
    "Find the {project} card \"{card}\": what is its due date?",
    "Tell me when \"{card}\" ({project}) is due.")

MEMBER_ROLE = intent(
    "saas-member-role",
    "What role does {member} have in {project}?",
    "What permissions does {member} have on {project}?",
    "Which role is {member} given in the {project} project?",
    "Check {project}'s members: what is {member}'s role?",
    "In {project}, what access level does {member} have?")
