"""News and community: a front page by section, section pages, articles with bylines, dates and
reader comments, author pages listing what they wrote, and posting a comment (stored server-side)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from weblica.synth.checks import answer_count, answer_date
from weblica.synth.data import BASE_DATE, slugify
from weblica.synth.fake import home_city, places
from weblica.synth.fake import people as fake_people
from weblica.synth.genres.kit import Plan, act, ask, fill_plan, record_checks
from weblica.synth.genres.news.intents import AUTHOR_OF, COMMENT, COUNT_BY, PUBLISHED
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


STANDFIRSTS = ["What it means for {town}, and what happens next.", "Our {desk} desk on the week's biggest story.",
               "Residents of {town} react as the details emerge.", "The decision has divided opinion in {town}.",
               "Questions remain over cost and timing, our {desk} team reports."]
# a story's paragraphs, a grammar over its people, towns and numbers: several paragraphs, none the same twice
OPENERS = ["{headline}, officials confirmed on {weekday}.", "{headline}. The news broke late on {weekday} in {town}.",
           "{headline}, in a move that surprised many in {town}."]
MIDDLES = ["\u201cWe did not expect it to happen this quickly,\u201d said {p0}, {role0} at {org}.",
           "{p0}, who has {n} years of experience as {role0}, called the plan \u201ca first step\u201d.",
           "According to figures seen by this paper, about {n} per cent of households in {town} are affected.",
           "The council in {town2} said it would publish its own assessment within {n} days.",
           "{p1}, {role1} at {org2}, warned that the costs had been underestimated.",
           "Critics pointed to a similar scheme in {town2}, which was scrapped after {n} months.",
           "Supporters say the change is overdue. \u201cPeople have waited long enough,\u201d {p1} said.",
           "Around {n} people attended a public meeting in {town} on {weekday} evening."]
CLOSERS = ["{org} said it would respond in full next week.", "{p2} is expected to speak about it on {weekday}.",
           "A final decision is due before the end of the month.", "This story will be updated as it develops."]
JOBS = ["a spokesperson", "the chair", "a senior analyst", "the director", "a local organiser", "a researcher"]


def body(rng: Any, headline: str, people: list[dict[str, Any]], towns: list[str], site: SiteBuilder) -> list[str]:
    """Four to six paragraphs of one story, drawn from the grammar above with the story's own people."""
    orgs = places(site, "news-orgs", 6, "{company}")
    slots = {"headline": headline, "town": towns[0], "town2": towns[1], "weekday": rng.choice(
        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]), "org": rng.choice(orgs), "org2": rng.choice(orgs)}
    for k, person in enumerate(people):
        slots[f"p{k}"], slots[f"role{k}"] = person["name"], rng.choice(JOBS)
    middle = rng.sample(MIDDLES, rng.randint(3, 5))
    return [line.format(n=rng.randint(3, 60), **slots) for line in [rng.choice(OPENERS), *middle, rng.choice(CLOSERS)]]


def _newsroom(site: SiteBuilder) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    rng = site.rng
    sections = [{"name": s, "slug": slugify(s)} for s in rng.sample(list(SECTIONS), 4)]
    # the newsroom, its towns and the people in its stories, from the fake-data library (weblica/synth/fake.py)
    authors = [{"name": p["name"], "slug": slugify(p["name"]), "role": rng.choice(ROLES)}
               for p in fake_people(site, "authors", 5)]
    towns = [home_city(site)] + places(site, "news-towns", 5, "{city}")
    sources = fake_people(site, "sources", 30)
    readers = fake_people(site, "readers", 40)
    articles: list[dict[str, Any]] = []
    headlines: set[str] = set()
    for index, day in enumerate(rng.sample(range(0, 60), 22)):
        section, author = rng.choice(sections), rng.choice(authors)
        headline = ""
        while not headline or headline in headlines:
            headline = rng.choice(SECTIONS[section["name"]]).format(city=rng.choice(towns), thing=rng.choice(THINGS),
                                                                    n=rng.randint(2, 40))
            headline = headline[0].upper() + headline[1:]
        headlines.add(headline)
        commenters = rng.sample(readers, rng.randint(0, 4))
        articles.append({"id": f"a{index + 1}", "headline": headline, "slug": slugify(headline),
                         "section": section["name"], "section_slug": section["slug"], "author": author["name"],
                         "author_slug": author["slug"], "date": (BASE_DATE - dt.timedelta(days=day)).isoformat(),
                         "standfirst": rng.choice(STANDFIRSTS).format(desk=section["name"].lower(), town=rng.choice(towns)),
                         "body": body(rng, headline, rng.sample(sources, 3), rng.sample(towns, 2), site),
                         "comments": [{"name": p["name"], "text": rng.choice(REMARKS)} for p in commenters]})
    articles.sort(key=lambda a: a["date"], reverse=True)
    for author in authors:
        author["articles"] = [a for a in articles if a["author"] == author["name"]]
    return sections, authors, articles


COMMENT_FIELDS = [{"name": "display_name", "label": "Display name", "type": "text", "required": True},
                  {"name": "text", "label": "Your comment", "type": "textarea", "required": True}]


def build_flows(site: SiteBuilder) -> None:
    sections, authors, articles = _newsroom(site)
    site.add_data(sections=sections, authors=authors, articles=articles)
    site.add_state(comments=[])
    site.add_nav(("News", "/news"), *[(s["name"], f"/section/{s['slug']}") for s in sections])
    by_section = [(s, [a for a in articles if a["section"] == s["name"]]) for s in sections]
    # the homepage: lead story, top stories, a block per section, most read (news/templates/home.html.j2)
    most_read = sorted(articles, key=lambda a: (len(a["comments"]), a["id"]), reverse=True)[:6]
    site.page("/", "news/home.html.j2", title="Latest news", articles=articles, sections=by_section,
              authors=authors, most_read=most_read, page_kind="home")
    site.page("/news", "news/front.html.j2", title="News", heading="Top stories", sections=by_section,
              page_kind="news-front")
    for section, listed in by_section:
        site.page(f"/section/{section['slug']}", "news/section.html.j2", title=section["name"], section=section,
                  articles=listed, page_kind="news-section")
    for article in articles:
        site.page(f"/articles/{article['slug']}", "news/article.html.j2", title=article["headline"],
                  article=article, fields=COMMENT_FIELDS, page_kind="article",
                  related=[a for a in articles if a["section"] == article["section"] and a is not article][:4])
    for author in authors:
        site.page(f"/authors/{author['slug']}", "news/author.html.j2", title=author["name"], author=author,
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
        person = fake_people(site, "commenter", 1)[0]
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
