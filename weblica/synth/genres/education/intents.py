"""The education genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

ENROLL_SLOT = intent(
    "edu-enroll-by-timetable",
    "Enroll me in the {dept} course that meets on {day} at {time}.",
    "Sign me up for the {dept} class held on {day} at {time}.",
    "There is a {dept} course on {day} at {time}; enroll me in it.",
    "I'm free on {day} at {time}. Register me for the {dept} course in that slot.",
    "Put me on the roll of the {dept} class that runs on {day}s at {time}.")

PREREQ = intent(
    "edu-prerequisite",
    "Which course must I complete before taking {title}?",
    "What is the prerequisite for {title}?",
    "Before I can enroll in {title}, which course do I need?",
    "Name the course required before {title}.",
    "{title} has a prerequisite. Which course is it?")

INSTRUCTOR = intent(
    "edu-instructor",
    "Who teaches {title}?",
    "Which instructor is running {title} this term?",
    "Name the instructor of {title}.",
    "Who is the teacher for the {title} course?",
    "I'm taking {title}. Who will be teaching it?")

MEETS = intent(
    "edu-meeting-day",
    "On which day of the week does {title} meet?",
    "What day of the week is {title} taught on?",
    "Which day of the week are {title} classes held?",
    "Tell me the day of the week {title} meets.",
    "When in the week is {title}? Give the day.")

ENROLL = intent(
    "edu-enroll",
    "Enroll me in {title}.",
    "Sign me up for {title} this term.",
    "Register me for the course {title}.",
    "I want to take {title}: enroll me.",
    "Add {title} to my enrollments.")
