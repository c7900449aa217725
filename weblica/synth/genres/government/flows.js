// part of flows.js: Eligibility: the questionnaire's rules decide, and the result is shown with its reason.
// weblica/site_runtime splices it into flows.js's closure (its $, api, on, ...), without this header.
  // ---- eligibility: the questionnaire's rules decide, and the result is shown with its reason ----
  function eligibility() {
    for (const form of $$("form[data-eligibility]")) {
      const rules = JSON.parse(form.dataset.eligibility);
      W.handlers["before-submit:" + form.id] = (values) => {
        let reason = rules.pass;
        for (const rule of rules.rules) {
          const v = values[rule.field];
          const fails = rule.op === "is" ? v !== rule.value : rule.op === "min" ? !(Number(v) >= rule.value) : !(Number(v) <= rule.value);
          if (fails) { reason = rule.reason; values.result = "Not eligible"; break; }
        }
        if (!values.result) values.result = "Eligible";
        values.service = rules.service;
        const out = $("[data-eligibility-result]");
        out.hidden = false;
        $("[data-result]", out).textContent = values.result;
        $("[data-reason]", out).textContent = reason;
        return true;
      };
    }
  }

