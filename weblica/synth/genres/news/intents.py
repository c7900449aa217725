"""The news genre's intents: what its users ask for, each in several phrasings
(the task grammar, weblica/synth/intents)."""
from __future__ import annotations

from weblica.synth.intents import intent

COMMENT = intent(
    "news-comment-latest-by-author",
    "Post the comment \"{text}\" as {name} on {author}'s most recent {section} article.",
    "On the latest {section} story by {author}, leave the comment \"{text}\", signed {name}.",
    "Find {author}'s newest article in {section} and comment \"{text}\" under the name {name}.",
    "Reply to {author}'s latest {section} piece with \"{text}\" (posting as {name}).",
    "As {name}, write \"{text}\" in the comments of the most recent {section} article {author} wrote.")

AUTHOR_OF = intent(
    "news-byline",
    "Who wrote the article \"{headline}\"?",
    "Whose byline is on \"{headline}\"?",
    "Name the author of \"{headline}\".",
    "Which reporter wrote \"{headline}\"?",
    "Tell me who the story \"{headline}\" is by.")

PUBLISHED = intent(
    "news-published",
    "When was \"{headline}\" published?",
    "On what date did the article \"{headline}\" come out?",
    "What is the publication date of \"{headline}\"?",
    "Which day was \"{headline}\" published on?",
    "Find the story \"{headline}\": when did it run?")

COUNT_BY = intent(
    "news-count-by-author-section",
    "How many {section} articles has {author} written?",
    "Count the stories {author} has in the {section} section.",
    "What is the number of {section} pieces by {author}?",
    "How many times has {author} written for {section}?",
    "{author} writes for several sections. How many of their articles are in {section}?")
