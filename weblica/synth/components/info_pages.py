"""The pages every real site has besides its catalog: help (with topics), about, contact, FAQ, careers,
press, privacy, terms, cookies, accessibility, shipping and returns where the genre ships, guides, a
sitemap, and one collection page per kind of entity. Footers and headers link to them (`link_groups`),
and some of those links are decoys: plausible, real, but not where a task leads.

Pages a skill or a genre flow registered first (a /contact form, /stores) are kept as they are.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from weblica.synth import images
from weblica.synth.components import content

if TYPE_CHECKING:
    from weblica.synth.site import SiteBuilder

Links = list[tuple[str, str]]


def _help_topics(w: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(slug, title, answer) of the help centre's topic pages."""
    topics = [("account", "Your account", "Create an account from the sign-up page, then keep your details "
                                          "and preferences in one place."),
              ("payments", "Payments and invoices", f"Every {w['price']} is shown before you confirm; invoices are "
                                                    "sent by e-mail."),
              ("accessibility", "Accessibility", "Every page works with a keyboard and a screen reader; tell us "
                                                 "when something does not."),
              ("security", "Security", "We never ask for your password by e-mail or phone."),
              ("listing", f"Listing your {w['items']}", f"{w['makers'].capitalize()} apply through our partner team.")]
    if w["ships"]:
        topics.insert(1, ("orders", "Orders and tracking", "Your order page shows every step from payment to "
                                                           "delivery."))
    return topics


def _policy(points: list[str]) -> list[dict[str, Any]]:
    """Numbered sections from "Heading: text" points."""
    return [{"h": f"{i + 1}. {p.split(':')[0]}", "p": [p.split(':', 1)[1].strip() if ':' in p else p]}
            for i, p in enumerate(points)]


def info_specs(site: SiteBuilder) -> dict[str, dict[str, Any]]:
    """path -> page context of every info page the site gets (before skipping existing ones)."""
    w = content.words(site)
    name = site.name
    topics = _help_topics(w)
    pages: dict[str, dict[str, Any]] = {}
    pages["/help"] = {"title": "Help centre", "intro": f"Answers about {name}, {w['items']} and your account.",
                      "blocks": [{"h": "Topics", "links": [(t, f"/help/{s}") for s, t, _ in topics]},
                                 {"h": "Still stuck?", "links": [("Frequently asked questions", "/faq"),
                                                                 ("Contact us", "/contact")]}]}
    for slug, title, answer in topics:
        pages[f"/help/{slug}"] = {"title": title, "intro": answer, "crumb": ("Help centre", "/help"),
                                  "blocks": [{"h": "Related topics",
                                              "links": [(t, f"/help/{s}") for s, t, _ in topics if s != slug][:3]}]}
    pages["/faq"] = {"title": "Frequently asked questions", "intro": f"What people ask about {name}.",
                     "blocks": [{"h": "Questions", "faq": content.faq(site, 8)}]}
    pages["/about"] = {"title": f"About {name}",
                       "intro": f"{name} brings {w['items']} from {w['makers']} you can trust to one place.",
                       "blocks": [{"h": "Our story", "p": [f"We started with a handful of {w['items']} and a simple "
                                                           "idea: show everything a person needs to decide.",
                                                           "Today a small team keeps every page accurate."]},
                                  {"h": "Growth", "image": "/img/about-chart.png"},
                                  {"h": "More", "links": [("Careers", "/careers"), ("Press", "/press")]}]}
    roles = ["Customer support specialist", "Frontend engineer", "Data analyst", "Partner manager", "Designer"]
    if w["ships"]:
        roles.append("Warehouse associate")
    pages["/careers"] = {"title": "Careers", "intro": f"Join the team behind {name}.",
                         "blocks": [{"h": "Open positions", "table": [("Role", "Location", "Type")] +
                                     [(r, content.CITIES[i % len(content.CITIES)], "Full time" if i % 3 else "Part time")
                                      for i, r in enumerate(roles)]}]}
    pages["/press"] = {"title": "Press", "intro": f"News and media resources about {name}.",
                       "blocks": [{"h": "Releases", "list": [f"{name} welcomes new {w['makers']}",
                                                             f"{name} redesigns its {w['item']} pages",
                                                             "Our accessibility commitment"]},
                                  {"h": "Media contact", "p": ["press@" + site.spec.site_id + ".example"]}]}
    pages["/privacy"] = {"title": "Privacy policy", "intro": "How we handle your personal data.",
                         "blocks": _policy(["What we collect: your contact details and what you ask for.",
                                                          "Why: to answer you and run the site.",
                                                          "How long: no longer than needed.",
                                                          "Your rights: see, correct or delete your data."])}
    pages["/terms"] = {"title": "Terms of use", "intro": f"The rules for using {name}.",
                       "blocks": _policy(["Using the site: be kind and lawful.",
                                                      f"Listings: {w['makers']} are responsible for their {w['items']}.",
                                                      "Liability: within the limits the law sets.",
                                                      "Changes: we announce them here."])}
    pages["/cookies"] = {"title": "Cookie policy", "intro": "Which cookies we set and why.",
                         "blocks": [{"h": "Cookies", "table": [("Name", "Purpose", "Lasts"), ("session", "Keeps you signed in", "Session"),
                                                              ("prefs", "Remembers your choices", "1 year")]}]}
    pages["/accessibility"] = {"title": "Accessibility statement", "intro": "We aim for WCAG 2.2 AA on every page.",
                               "blocks": [{"h": "Tell us", "links": [("Contact us", "/contact")]}]}
    if w["ships"]:
        pages["/shipping"] = {"title": "Shipping", "intro": "Where we deliver and how long it takes.",
                              "blocks": [{"h": "Options", "table": [("Option", "Time"), ("Standard", "3–5 days"),
                                                                   ("Express", "1–2 days"), ("Pick-up point", "2–4 days")]}]}
        pages["/returns"] = {"title": "Returns", "intro": "Changed your mind? Send it back within 30 days.",
                             "blocks": [{"h": "How", "list": ["Start a return from your account", "Pack the item",
                                                              "Drop it off; the refund follows in a week"]}]}
    pages["/contact"] = {"title": "Contact us", "intro": "We answer within one working day.",
                         "blocks": [{"h": "Write to us", "p": ["hello@" + site.spec.site_id + ".example"]},
                                    {"h": "Opening hours", "table": [("Day", "Hours")] + content.hours(site)},
                                    {"h": "Before you write", "links": [("Help centre", "/help"), ("FAQ", "/faq")]}]}
    for guide in content.guides(site):
        pages[f"/guides/{guide['slug']}"] = {"title": guide["title"], "crumb": ("Guides", "/guides"),
                                             "intro": f"A {guide['minutes']}-minute read from the {name} team.",
                                             "blocks": [{"h": "In short", "p": [f"Start from what you need, compare "
                                                                                f"two or three {w['items']}, and ask "
                                                                                f"the {w['maker']} when in doubt."]}]}
    pages["/guides"] = {"title": "Guides", "intro": f"Reading about {w['items']} before you decide.",
                        "blocks": [{"h": "Articles", "links": [(g["title"], f"/guides/{g['slug']}")
                                                               for g in content.guides(site)]}]}
    pages["/newsletter"] = {"title": "Thanks for subscribing", "intro": "Check your inbox to confirm.",
                            "blocks": [{"h": "Meanwhile", "links": [(f"All {w['items']}", "/items") if "/items" in site.pages
                                                                    else ("Home", "/"), ("Guides", "/guides")]}]}
    return pages


def add_pages(site: SiteBuilder) -> None:
    """Register the info pages, the collections and the sitemap (never over a page that exists)."""
    for path, ctx in info_specs(site).items():
        if path not in site.pages:
            site.page(path, "info.html.j2", heading=ctx["title"], page_kind="info", **ctx)
    if "/about" in site.pages and site.pages["/about"][0] == "info.html.j2":
        site.add_file("img/about-chart.png", _about_chart(site))
    w = content.words(site)
    for coll in content.collections(site):
        path = f"/c/{coll['slug']}"
        if path not in site.pages:
            site.page(path, "listing.html.j2", title=coll["name"], heading=coll["name"],
                      intro=f"Every {coll['name'].lower()} on {site.name}, from all our {w['makers']}.",
                      items=coll["entries"], pages=0,
                      **({"crumb": (w["Items"], "/items")} if "/items" in site.pages else {}),
                      page_kind="collection")
    site.page("/sitemap", "info.html.j2", title="Sitemap", heading="Sitemap", page_kind="info",
              intro=f"Every section of {site.name}.", blocks=[{"h": "Pages", "links": sitemap_links(site)}])


def _about_chart(site: SiteBuilder) -> Any:
    from functools import partial

    rng = content.layout_rng(site, "chart")
    values = [round(rng.uniform(10, 30) * (1.25 ** i), 1) for i in range(6)]
    return partial(images.chart_image, values, [str(2020 + i) for i in range(6)], site.spec.style.palette,
                   kind=rng.choice(["bar", "line"]), title="Customers (thousands)")


def sitemap_links(site: SiteBuilder) -> Links:
    skip = ("/item/", "/maker/", "/help/", "/guides/", "/items/page/")
    paths = [p for p in sorted(site.pages) if not p.startswith(skip) and p not in ("/", "/sitemap")]
    return [(site.pages[p][1].get("title") or p.strip("/").replace("-", " ").capitalize(), p) for p in paths]


def link_groups(site: SiteBuilder) -> dict[str, Links]:
    """The footer's columns: every link is to a page of the bundle."""
    w = content.words(site)
    have = set(site.pages)

    def keep(links: Links) -> Links:
        return [(label, href) for label, href in links if href.split("?")[0] in have]

    explore = list(site.nav[1:]) + [(c["name"], f"/c/{c['slug']}") for c in content.collections(site)[:5]]
    helps = [("Help centre", "/help"), ("FAQ", "/faq"), ("Contact us", "/contact"), ("Shipping", "/shipping"),
             ("Returns", "/returns"), ("Accessibility", "/accessibility")]
    company = [(f"About {site.name}", "/about"), ("Careers", "/careers"), ("Press", "/press"), ("Guides", "/guides"),
               ("Sitemap", "/sitemap")]
    legal = [("Privacy", "/privacy"), ("Terms", "/terms"), ("Cookies", "/cookies")]
    return {w["Items"]: keep(explore), "Help": keep(helps), "Company": keep(company), "Legal": keep(legal)}
