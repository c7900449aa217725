// part of flows.js: Enrollment prerequisites: the form refuses while a required course is missing.
// weblica/site_runtime splices it into flows.js's closure (its $, api, on, ...), without this header.
  // ---- prerequisites: an enrollment form refuses (stores nothing) while a required course is missing ----
  function prerequisites() {
    for (const form of $$("form[data-prereq]")) {
      const rule = JSON.parse(form.dataset.prereq);
      W.handlers["before-submit:" + form.id] = () => {
        const missing = rule.needs.filter((c) => !rule.done.includes(c));
        const out = $("[data-prereq-error]", form);
        if (!missing.length) return true;
        out.textContent = "You cannot enroll yet: complete " + missing.join(", ") + " first.";
        out.hidden = false;
        return false;
      };
    }
  }

