// part of flows.js: The mortgage calculator's monthly payment.
// weblica/site_runtime splices it into flows.js's closure (its $, api, on, ...), without this header.
  // ---- mortgage calculator: the monthly payment of a fixed-rate loan (genres/real_estate/flow.py has the same formula) ----
  function mortgage() {
    for (const form of $$("form[data-mortgage]")) {
      prefill(form, params());
      const out = $("[data-monthly]", form.parentElement);
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        const v = (name) => Number(form.elements[name].value);
        const principal = v("price") - v("down"), r = v("rate") / 1200, n = v("years") * 12;
        if (!(principal > 0) || !(n > 0) || !(r >= 0)) { out.textContent = "Enter a price above the down payment and a term."; return; }
        const monthly = r === 0 ? principal / n : principal * r / (1 - Math.pow(1 + r, -n));
        out.textContent = money(monthly) + " a month";
      });
    }
  }

