"""Jobs: listings filtered by location, seniority and remote work and sorted by salary, company pages
with their open positions, saving a job (server-side) and a multi-step application."""
from __future__ import annotations

from typing import Any

from weblica.synth.checks import answer_count, state_count, state_is
from weblica.synth.data import CITIES, make_people, price_scale, slugify
from weblica.synth.genres import flow
from weblica.synth.genres.kit import MAXIMAL_EXTRAS, Plan, act, ask, fill_plan, record_checks, unique_by, use_script
from weblica.synth.intents import count_of, intent
from weblica.synth.site import SiteBuilder
from weblica.synth.skills.common import count_confusers, distinct, name_check, price_check, unique_extreme

SENIORITY = ["Junior", "Mid-level", "Senior", "Lead"]
ROLES = ["Data Engineer", "Product Designer", "Account Executive", "Support Specialist", "Financial Analyst",
         "Operations Manager", "Backend Developer", "UX Researcher", "Recruiter", "Marketing Manager"]
WORKPLACE = ["Remote", "Hybrid", "On site"]
INDUSTRIES = ["Software", "Logistics", "Health tech", "Retail", "Energy", "Finance"]
EMPLOYERS = ["Quantel", "Brightway", "Nordwind", "Axiom Labs", "Helio", "Corvid"]  # when the catalog names none
NOTICE = ["Immediately", "In 2 weeks", "In 1 month", "In 3 months"]

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
    cities = rng.sample(CITIES, 4)
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


@flow("jobs")
def jobs_flow(site: SiteBuilder) -> None:
    use_script(site)
    companies, jobs = _board(site)
    site.data["companies"], site.data["jobs"] = companies, jobs
    site.initial_state.update({"saved_jobs": [], "applications": []})
    locations = sorted({j["location"] for j in jobs})
    filters = [{"name": "q", "label": "Keywords", "type": "search", "placeholder": "Job title or company"},
               {"name": "location", "label": "Location", "type": "select", "options": locations},
               {"name": "seniority", "label": "Seniority", "type": "select", "options": SENIORITY}]
    site.nav += [("Jobs", "/jobs"), ("Companies", "/companies"), ("Saved jobs", "/jobs/saved")]
    site.page("/jobs", "genres/jobs/listings.html.j2", title="Jobs", heading="Open positions", fields=filters, jobs=jobs,
              page_kind="job-listings")
    for job in jobs:
        site.page(f"/jobs/{job['slug']}", "genres/jobs/job.html.j2", title=job["title"], job=job, page_kind="job")
    site.page("/companies", "genres/jobs/companies.html.j2", title="Companies", heading="Companies hiring",
              companies=companies, page_kind="companies")
    for company in companies:
        site.page(f"/companies/{company['slug']}", "genres/jobs/company.html.j2", title=company["name"], company=company,
                  page_kind="company")
    site.page("/jobs/saved", "genres/jobs/saved.html.j2", title="Saved jobs", heading="Saved jobs", page_kind="saved-jobs")
    site.page("/jobs/apply", "genres/jobs/apply.html.j2", title="Apply", heading="Apply for this job", jobs=jobs,
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
    person = make_people(rng, 1)[0]
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
