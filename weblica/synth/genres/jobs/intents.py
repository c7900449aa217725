"""The jobs genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

SAVE_BEST = intent(
    "jobs-save-best-paid-remote",
    "Save the best-paid remote {seniority} job in {location}.",
    "Find the {seniority} job in {location} with the highest salary that can be done remotely, and save it.",
    "Of the remote {seniority} positions in {location}, save the one that pays the most.",
    "I want a remote {seniority} role in {location}: save the highest-paying one to my saved jobs.",
    "Put the top-paying remote {seniority} job based in {location} on my saved list.")

APPLY = intent(
    "jobs-apply",
    "Apply for the {title} job at {company} as {name} ({email}, phone {phone}) with {experience} of experience, available {notice}.",
    "Send an application to {company} for their {title} opening: {name}, {email}, {phone}, {experience} of experience, able to start {notice}.",
    "{name} wants to apply for {title} at {company}. Use {email} and {phone}; {name} has {experience} of experience and can start {notice}.",
    "Submit {name}'s application for the {title} role at {company} (email {email}, phone {phone}; {experience} of experience; can start {notice}).",
    "Apply to {company}'s {title} position for {name}: email {email}, phone {phone}, {experience} in the field, available to start {notice}.")

REMOTE_COUNT = intent(
    "jobs-remote-count",
    "How many remote jobs does {company} have open?",
    "Count {company}'s open positions that are fully remote.",
    "How many of the jobs at {company} can be done remotely?",
    "What is the number of remote openings at {company}?",
    "{company} is hiring: how many of its open roles are remote?")

SALARY = intent(
    "jobs-salary",
    "What salary does the {title} job at {company} pay?",
    "How much does {company} offer for the {title} position?",
    "What is the yearly pay of {company}'s {title} opening?",
    "Tell me the salary listed for {title} at {company}.",
    "Find the {title} role at {company}: what does it pay per year?")

COUNT_OPEN = intent(
    "jobs-count-seniority-location",
    "How many {seniority} jobs are open in {location}?",
    "Count the {seniority} positions listed in {location}.",
    "In {location}, how many openings are there at {seniority} level?",
    "What is the number of {seniority} roles advertised in {location}?",
    "How many {seniority} vacancies does the board list for {location}?")

WHO_HIRES = intent(
    "jobs-who-hires",
    "Which company is hiring a {title} in {location}?",
    "Who is looking for a {title} in {location}? Name the employer.",
    "Name the employer of the {title} opening in {location}.",
    "There is a {title} job in {location}. Which company posted it?",
    "What company offers the {title} position based in {location}?")
