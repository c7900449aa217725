"""Jobs: listings filtered by location, seniority and remote work and sorted by salary, company pages
with their open positions, saving a job (server-side) and a multi-step application."""
from __future__ import annotations

from typing import Any

from weblica.synth.checks import answer_count, state_count, state_is
from weblica.synth.data import price_scale, slugify
from weblica.synth.fake import people as fake_people
from weblica.synth.fake import places
from weblica.synth.genres.jobs.intents import APPLY, COUNT_OPEN, REMOTE_COUNT, SALARY, SAVE_BEST, WHO_HIRES
from weblica.synth.genres.kit import MAXIMAL_EXTRAS, Plan, act, ask, fill_plan, record_checks, unique_by
from weblica.synth.intents import count_of
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, name_check, price_check, unique_extreme

SENIORITY = ["Junior", "Mid-level", "Senior", "Lead"]
ROLES = ["Data Engineer", "Product Designer", "Account Executive", "Support Specialist", "Financial Analyst",
         "Operations Manager", "Backend Developer", "UX Researcher", "Recruiter", "Marketing Manager"]
WORKPLACE = ["Remote", "Hybrid", "On site"]
INDUSTRIES = ["Software", "Logistics", "Health tech", "Retail", "Energy", "Finance"]
EMPLOYERS = ["Quantel", "Brightway", "Nordwind", "Axiom Labs", "Helio", "Corvid"]  # when the catalog names none
NOTICE = ["Immediately", "In 2 weeks", "In 1 month", "In 3 months"]


STEP_CONTACT = [{"name": "name", "label": "Full name", "type": "text", "required": True},
                {"name": "email", "label": "Email", "type": "email", "required": True},
                {"name": "phone", "label": "Phone", "type": "tel", "required": True}]
STEP_EXPERIENCE = [{"name": "years", "label": "Years of relevant experience", "type": "number", "min": 0, "max": 40,
                    "value": 0},
                   {"name": "notice", "label": "When can you start?", "type": "select", "options": NOTICE, "required": True},
                   {"name": "portfolio", "label": "Portfolio or profile link (optional)", "type": "text"},
                   {"name": "cover", "label": "Cover letter (optional)", "type": "textarea"}]
STEP_CONSENT = [{"name": "consent", "label": "I agree that my data is kept for this application", "type": "checkbox"}]
APPLY_FIELDS = STEP_CONTACT + STEP_EXPERIENCE + STEP_CONSENT


def _board(site: SiteBuilder) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = site.rng
    cities = places(site, "job-towns", 4, "{city}")
    companies = [{"id": f"c{i + 1}", "name": name, "slug": slugify(name), "industry": rng.choice(INDUSTRIES),
                  "size": rng.choice(["11–50", "51–200", "201–1,000", "1,000+"]), "city": rng.choice(cities)}
                 for i, name in enumerate(site.cat.get("makers") or EMPLOYERS)]
    salaries = rng.sample(range(38, 190), 34)
    jobs, titles = [], set()
    scale = price_scale(site.fmt)
    for index, salary in enumerate(salaries):
        company = rng.choice(companies)
        title = f"{rng.choice(SENIORITY)} {rng.choice(ROLES)}"
        while (title, company["id"]) in titles:
            title = f"{rng.choice(SENIORITY)} {rng.choice(ROLES)}"
        titles.add((title, company["id"]))
        value = float(salary * 1000 * scale)
        jobs.append({"id": f"j{index + 1}", "title": title, "seniority": title.split(" ")[0], "company": company["name"],
                     "company_slug": company["slug"], "slug": slugify(f"{title} {company['name']} {index + 1}"),
                     "location": rng.choice(cities), "workplace": rng.choice(WORKPLACE), "salary": value,
                     "salary_text": site.money(value, whole=True), "posted": rng.randint(1, 30)})
    for company in companies:
        company["jobs"] = [j for j in jobs if j["company"] == company["name"]]
    return companies, jobs


def build_flows(site: SiteBuilder) -> None:
    companies, jobs = _board(site)
    site.add_data(companies=companies, jobs=jobs)
    site.add_state(saved_jobs=[], applications=[])
    locations = sorted({j["location"] for j in jobs})
    filters = [{"name": "q", "label": "Keywords", "type": "search", "placeholder": "Job title or company"},
               {"name": "location", "label": "Location", "type": "select", "options": locations},
               {"name": "seniority", "label": "Seniority", "type": "select", "options": SENIORITY}]
    site.add_nav(("Jobs", "/jobs"), ("Companies", "/companies"), ("Saved jobs", "/jobs/saved"))
    # a job board opens on its search (jobs/templates/start.html.j2)
    site.page("/", "jobs/start.html.j2", title="Find a job", fields=filters[:2], jobs=jobs, companies=companies,
              locations=locations, newest=sorted(jobs, key=lambda j: (j["posted"], j["id"]))[:8],
              popular=sorted({j["title"].split(" ", 1)[1] for j in jobs})[:6], page_kind="home")
    site.page("/jobs", "jobs/listings.html.j2", title="Jobs", heading="Open positions", fields=filters, jobs=jobs,
              page_kind="job-listings")
    for job in jobs:
        site.page(f"/jobs/{job['slug']}", "jobs/job.html.j2", title=job["title"], job=job, page_kind="job")
    site.page("/companies", "jobs/companies.html.j2", title="Companies", heading="Companies hiring",
              companies=companies, page_kind="companies")
    for company in companies:
        site.page(f"/companies/{company['slug']}", "jobs/company.html.j2", title=company["name"], company=company,
                  page_kind="company")
    site.page("/jobs/saved", "jobs/saved.html.j2", title="Saved jobs", heading="Saved jobs", page_kind="saved-jobs")
    site.page("/jobs/apply", "jobs/apply.html.j2", title="Apply", heading="Apply for this job", jobs=jobs,
              steps=[("Contact details", STEP_CONTACT), ("Experience", STEP_EXPERIENCE), ("Review and send", STEP_CONSENT)],
              page_kind="job-application")
    site.page("/jobs/applied", "message.html.j2", title="Application sent", heading="Application sent",
              text="The employer will contact you by email.", back="/jobs", page_kind="done")
    _tasks(site, companies, jobs, filters)


def _open_job(job: dict[str, Any], filters: list[dict[str, Any]], site: SiteBuilder) -> Plan:
    return fill_plan(site, filters, {"q": job["title"]}) + [{"op": "click", "sel": "#filter-jobs"},
                                                           {"op": "click", "sel": f"[data-row={job['id']}] [data-job-link]"}]


def _tasks(site: SiteBuilder, companies: list[dict[str, Any]], jobs: list[dict[str, Any]],
           filters: list[dict[str, Any]]) -> None:
    rng = site.rng
    start = "/jobs"
    salaries = [j["salary"] for j in jobs]

    combos = sorted({(j["seniority"], j["location"]) for j in jobs})
    rng.shuffle(combos)
    for seniority, location in combos:
        there = [j for j in jobs if (j["seniority"], j["location"]) == (seniority, location)]
        best = unique_extreme([j for j in there if j["workplace"] == "Remote"], "salary", highest=True)
        if best is None or len(there) < 2:
            continue  # a choice to make: another job of that seniority there, remote or not
        plan = fill_plan(site, filters, {"location": location, "seniority": seniority}) + \
            [{"op": "click", "sel": "#f-remote"}, {"op": "click", "sel": "#filter-jobs"},
             {"op": "click", "sel": "a[data-sort='-salary']"},
             {"op": "click", "sel": f"[data-row={best['id']}] [data-job-link]"}, {"op": "click", "sel": "#save-job"}]
        extra = [j for j in jobs if j is not best][:MAXIMAL_EXTRAS]
        act(site, SAVE_BEST, {"seniority": seniority.lower(), "location": location}, start, plan,
            [state_count("saved_jobs", 1), state_is("saved_jobs.0.job", best["id"])], "Exactly that job is saved", maximal=plan + [s for j in extra for s in
                                                         [{"op": "goto", "url": site.url(f"/jobs/{j['slug']}")},
                                                          {"op": "click", "sel": "#save-job"}]])
        break

    job = rng.choice(jobs)
    person = fake_people(site, "applicant", 1)[0]
    values = {"name": person["name"], "email": person["email"], "phone": person["phone"], "years": rng.randint(1, 15),
              "notice": rng.choice(NOTICE), "consent": True}
    plan = _open_job(job, filters, site) + [{"op": "click", "sel": "#apply"}] + fill_plan(site, STEP_CONTACT, values) + \
        [{"op": "click", "sel": "#next-1"}] + fill_plan(site, STEP_EXPERIENCE, values) + \
        [{"op": "click", "sel": "#next-2"}] + fill_plan(site, STEP_CONSENT, values) + [{"op": "click", "sel": "#submit"}]
    act(site, APPLY, {"title": job["title"], "company": job["company"], **values,
                      "experience": count_of(values["years"], "year"), "notice": values["notice"].lower()},
        start, plan, record_checks("applications", APPLY_FIELDS, values, {"job": job["id"]}), "One application to that job with the given details")

    for company in rng.sample(companies, len(companies)):
        gold = sum(j["workplace"] == "Remote" for j in company["jobs"])
        confusers = count_confusers(gold, [len(company["jobs"]), sum(j["workplace"] == "Remote" for j in jobs),
                                           sum(j["workplace"] != "On site" for j in company["jobs"])])
        if gold >= 1 and confusers:
            plan = [{"op": "click", "sel": "a[href='/companies']"},
                    {"op": "click", "sel": f"[data-company={company['id']}] a"}, {"op": "reach", "sel": "[data-positions]"}]
            ask(site, REMOTE_COUNT, {"company": company["name"]}, start, plan, str(gold),
                answer_count(gold, confusers, unit="jobs"), [str(c) for c in confusers], "The number of that company's remote positions")
            break

    for job in rng.sample(jobs, len(jobs)):
        if unique_by([j for j in jobs if j["company"] == job["company"]], "title", job["title"]) is job:
            ask(site, SALARY, {"title": job["title"], "company": job["company"]}, start,
                _open_job(job, filters, site) + [{"op": "reach", "sel": "[data-salary]"}], job["salary_text"],
                price_check(site, job["salary"], salaries), [site.money(s, whole=True)
                                                              for s in distinct(salaries, job["salary"])[:3]],
                "The salary on the job's page")
            break

    def count_open() -> None:
        for seniority, location in rng.sample(combos, len(combos)):
            gold = sum((j["seniority"], j["location"]) == (seniority, location) for j in jobs)
            confusers = count_confusers(gold, [sum(j["location"] == location for j in jobs),
                                               sum(j["seniority"] == seniority for j in jobs), len(jobs)])
            if gold >= 2 and confusers:
                plan = fill_plan(site, filters, {"location": location, "seniority": seniority}) + \
                    [{"op": "click", "sel": "#filter-jobs"}, {"op": "reach", "sel": "[data-row-count]"}]
                ask(site, COUNT_OPEN, {"seniority": seniority.lower(), "location": location}, start, plan, str(gold),
                    answer_count(gold, confusers, unit="jobs"), [str(c) for c in confusers], "The number of jobs of that seniority in that location")
                return

    def who_hires() -> None:
        for job in rng.sample(jobs, len(jobs)):
            same = [j for j in jobs if (j["title"], j["location"]) == (job["title"], job["location"])]
            if len(same) == 1:
                names = [c["name"] for c in companies]
                ask(site, WHO_HIRES, {"title": job["title"], "location": job["location"]}, start,
                    fill_plan(site, filters, {"q": job["title"]}) + [{"op": "click", "sel": "#filter-jobs"},
                                                                   {"op": "reach", "sel": f"[data-row={job['id']}]"}],
                    job["company"], name_check(job["company"], names), distinct(names, job["company"]), "The employer of that job")
                return

    rng.choice([count_open, who_hires])()
