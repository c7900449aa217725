"""The government genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

# said as a person asks about themselves: "I'm 24, I don't live in the city, ...", not a list of raw values
ELIGIBLE = intent(
    "gov-eligibility",
    "Do I qualify for {service}? I'm {age}, {lives}, our household earns {income} a year and {children}.",
    "I'm {age} and {lives}. Our household income is {income} a year, and {children}. Can I get {service}?",
    "Can I get {service}? I'm {age} years old, {lives} and {children}; we earn {income} a year.",
    "Our household earns {income} a year, I'm {age}, {lives} and {children}. Am I eligible for {service}?",
    "Would I be able to get {service}? I'm {age}, {lives} and {children}, and our yearly household income is {income}.")

FEE_DIFFERENCE = intent(
    "gov-express-extra",
    "How much more does express processing cost than standard for: {service}?",
    "What is the extra charge for express instead of standard processing of \"{service}\"?",
    "By how much does the express fee exceed the standard fee for \"{service}\"?",
    "For \"{service}\", what is the difference between the express and the standard fee?",
    "If I choose express rather than standard for \"{service}\", how much extra do I pay?")

OFFICE_FOR = intent(
    "gov-office-for-topic",
    "Which office in {district} handles {topic}?",
    "I live in {district}. Which service office there deals with {topic}?",
    "Name the office in {district} where I can get help with {topic}.",
    "Where in {district} can I go in person about {topic}? Give the office name.",
    "Find the {district} office that offers {topic} services.")

SATURDAY = intent(
    "gov-office-saturday",
    "Until what time is the {office} open on Saturdays?",
    "When does the {office} close on a Saturday?",
    "What are the Saturday closing hours of the {office}?",
    "On Saturday, how late can I visit the {office}?",
    "At what time does the {office} shut on Saturdays?")

APPLY = intent(
    "gov-apply-parking",
    "Apply for a residential parking permit for {name} ({email}) at {street}, {district}, for the vehicle {plate}, with {speed} processing.",
    "{name} needs a residential parking permit: address {street} in {district}, car {plate}, email {email}. Submit the application with {speed} processing.",
    "Submit a residential parking permit application: applicant {name}, {email}, {street}, {district}, plate {plate}, {speed} processing.",
    "Get a residential parking permit for the car {plate}; the applicant is {name} ({email}) of {street}, {district}. Choose {speed} processing.",
    "Fill in and send the residential parking permit application for {name}, email {email}, living at {street} in {district}, vehicle {plate}, {speed} processing.")

PROCESSING = intent(
    "gov-processing-days",
    "How many working days does standard processing take for \"{service}\"?",
    "With standard processing, how long does \"{service}\" take in working days?",
    "What is the standard processing time of \"{service}\", in working days?",
    "If I don't pay for express, how many working days will \"{service}\" take?",
    "How long is the normal processing time for \"{service}\"? Give the number of working days.")

OFFICE_ADDRESS = intent(
    "gov-office-address",
    "What is the street address of the {office}?",
    "Where exactly is the {office}? Give its street address.",
    "I need to visit the {office}. What is its address?",
    "Tell me the address of the {office}.",
    "At what street address can I find the {office}?")
