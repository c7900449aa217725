"""News and community: a front page by section, section pages, articles with bylines, dates and
reader comments, author pages listing what they wrote, and posting a comment (stored server-side)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_count, answer_date
from weblica.synth.data import BASE_DATE, CITIES, FIRST_NAMES, LAST_NAMES, make_people, slugify
from weblica.synth.genres import flow
from weblica.synth.genres.kit import Plan, act, ask, fill_plan, record_checks, use_script
from weblica.synth.intents import intent
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, name_check

# section -> headline patterns ({city}, {thing}, {n})
SECTIONS = {"World": ["Leaders meet in {city} over {thing}", "{city} talks end without deal on {thing}",
                      "Aid pledged after {thing} crisis near {city}"],
            "Business": ["{city} firm posts record profit on {thing}", "Shares fall as {thing} costs rise",
                         "Start-up in {city} raises {n} million for {thing}"],
            "Science": ["Researchers in {city} map {thing}", "New study links {thing} to sleep",
                        "Telescope team in {city} spots {thing}"],
            "Sports": ["{city} win derby after late {thing}", "Coach praises {thing} as {city} advance",
                       "{city} marathon draws {n} thousand runners"],
            "Culture": ["{city} museum opens {thing} exhibition", "Festival in {city} celebrates {thing}",
                        "Review: a bold new take on {thing}"]}
THINGS = ["river water", "solar power", "rail links", "ancient coins", "fishing rights", "city parks", "bee colonies",
          "street art", "ocean currents", "jazz records", "school meals", "wind farms", "night trains", "glass art"]
ROLES = ["Political correspondent", "Business editor", "Science writer", "Sports reporter", "Arts critic", "Staff writer"]
REMARKS = ["Great reporting, thank you.", "I'm not convinced by this.", "Finally someone covers this.",
           "This affects my neighbourhood too.", "Well written and balanced.", "What about the costs?"]

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


def _newsroom(site: SiteBuilder) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    rng = site.rng
    sections = [{"name": s, "slug": slugify(s)} for s in rng.sample(list(SECTIONS), 4)]
    authors = [{"name": f"{f} {l}", "slug": slugify(f"{f} {l}"), "role": rng.choice(ROLES)}
               for f, l in zip(rng.sample(FIRST_NAMES, 5), rng.sample(LAST_NAMES, 5))]
    articles: list[dict[str, Any]] = []
    headlines: set[str] = set()
    for index, day in enumerate(rng.sample(range(0, 60), 22)):
        section, author = rng.choice(sections), rng.choice(authors)
        headline = ""
        while not headline or headline in headlines:
            headline = rng.choice(SECTIONS[section["name"]]).format(city=rng.choice(CITIES), thing=rng.choice(THINGS),
                                                                    n=rng.randint(2, 40))
            headline = headline[0].upper() + headline[1:]
        headlines.add(headline)
        commenters = make_people(rng, rng.randint(0, 4))
        articles.append({"id": f"a{index + 1}", "headline": headline, "slug": slugify(headline),
                         "section": section["name"], "section_slug": section["slug"], "author": author["name"],
                         "author_slug": author["slug"], "date": (BASE_DATE - dt.timedelta(days=day)).isoformat(),
                         "standfirst": f"What the {section['name'].lower()} desk learned this week.",
                         "body": [f"{headline}, according to people familiar with the matter.",
                                  "Officials said more details would follow in the coming days."],
                         "comments": [{"name": p["name"], "text": rng.choice(REMARKS)} for p in commenters]})
    articles.sort(key=lambda a: a["date"], reverse=True)
    for author in authors:
        author["articles"] = [a for a in articles if a["author"] == author["name"]]
    return sections, authors, articles


COMMENT_FIELDS = [{"name": "display_name", "label": "Display name", "type": "text", "required": True},
                  {"name": "text", "label": "Your comment", "type": "textarea", "required": True}]


@flow("news")
def news_flow(site: SiteBuilder) -> None:
    use_script(site)
    sections, authors, articles = _newsroom(site)
    site.data.update({"sections": sections, "authors": authors, "articles": articles})
    site.initial_state.update({"comments": []})
    site.nav += [("News", "/news")] + [(s["name"], f"/section/{s['slug']}") for s in sections]
    by_section = [(s, [a for a in articles if a["section"] == s["name"]]) for s in sections]
    site.page("/news", "genres/news/front.html.j2", title="News", heading="Top stories", sections=by_section,
              page_kind="news-front")
    for section, listed in by_section:
        site.page(f"/section/{section['slug']}", "genres/news/section.html.j2", title=section["name"], section=section,
                  articles=listed, page_kind="news-section")
    for article in articles:
        site.page(f"/articles/{article['slug']}", "genres/news/article.html.j2", title=article["headline"],
                  article=article, fields=COMMENT_FIELDS, page_kind="article",
                  related=[a for a in articles if a["section"] == article["section"] and a is not article][:4])
    for author in authors:
        site.page(f"/authors/{author['slug']}", "genres/news/author.html.j2", title=author["name"], author=author,
                  page_kind="author")
    site.page("/comments/posted", "message.html.j2", title="Comment posted", heading="Thanks for your comment",
              text="It appears under the article once a moderator has read it.", back="/news", page_kind="done")
    _tasks(site, sections, authors, articles)


def _open(article: dict[str, Any]) -> Plan:
    """The article's section from the front page, then the article (the first step reaches the section)."""
    return [{"op": "click", "sel": f"[data-news-section={article['section_slug']}] h2 a"},
            {"op": "click", "sel": f"[data-section-articles] [data-article={article['id']}] a.item-name"}]


def _tasks(site: SiteBuilder, sections: list[dict[str, Any]], authors: list[dict[str, Any]],
           articles: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/news"  # the flow's own page: a site's nav may be folded into a menu
    combos = sorted({(a["author"], a["section"]) for a in articles})
    rng.shuffle(combos)
    for author, section in combos:
        theirs = [a for a in articles if (a["author"], a["section"]) == (author, section)]
        if len(theirs) < 2 or theirs[0]["date"] == theirs[1]["date"]:
            continue  # a choice to make: the newest of at least two (articles are newest first)
        latest = theirs[0]
        person = make_people(rng, 1)[0]
        values = {"display_name": person["name"], "text": rng.choice(REMARKS)}
        plan = _open(latest)[:1] + [{"op": "click", "sel": f"[data-article={latest['id']}] a[href='/authors/{latest['author_slug']}']"},
                                    {"op": "click", "sel": f"[data-author-articles] [data-article={latest['id']}] a"}] + \
            fill_plan(site, COMMENT_FIELDS, values) + [{"op": "click", "sel": "#post-comment"}]
        maximal = plan + [{"op": "goto", "url": site.url(f"/articles/{theirs[1]['slug']}")}] + \
            fill_plan(site, COMMENT_FIELDS, values) + [{"op": "click", "sel": "#post-comment"}]
        act(site, COMMENT, {"text": values["text"], "name": person["name"], "author": author, "section": section}, start,
            plan, record_checks("comments", COMMENT_FIELDS, values, {"article": latest["id"]}), "One comment with that text and name under that article", maximal=maximal)
        break

    names = [a["name"] for a in authors]
    article = rng.choice(articles)
    ask(site, AUTHOR_OF, {"headline": article["headline"]}, start, _open(article) + [{"op": "reach", "sel": "[data-byline]"}],
        article["author"], name_check(article["author"], names), distinct(names, article["author"]), "The article's byline")

    article = rng.choice(articles)
    days = [a["date"] for a in articles]
    ask(site, PUBLISHED, {"headline": article["headline"]}, start,
        _open(article) + [{"op": "reach", "sel": "[data-published]"}], site.date(article["date"]),
        answer_date(article["date"], distinct(days, article["date"]), site.locale),
        [site.date(d) for d in distinct(days, article["date"])], "The article's publication date")

    for author, section in rng.sample(combos, len(combos)):
        gold = sum((a["author"], a["section"]) == (author, section) for a in articles)
        confusers = count_confusers(gold, [sum(a["author"] == author for a in articles),
                                           sum(a["section"] == section for a in articles)])
        if gold >= 1 and confusers:
            slug = next(a["author_slug"] for a in articles if a["author"] == author)
            first = next(a for a in articles if a["author"] == author)
            plan = _open(first)[:1] + [{"op": "click", "sel": f"[data-article={first['id']}] a[href='/authors/{slug}']"},
                                       {"op": "reach", "sel": "[data-author-articles]"}]
            ask(site, COUNT_BY, {"section": section, "author": author}, start, plan, str(gold),
                answer_count(gold, confusers, unit="articles"), [str(c) for c in confusers], "The author's articles in that section")
            break
