// part of flows.js: Project boards: stored card moves, saved settings documents.
// weblica/site_runtime splices it into flows.js's closure (its $, api, on, ...), without this header.
  // ---- boards: stored card moves put each card in its column; a saved document refills its form ----
  async function boards() {
    const board = $("[data-board]"), cols = $$("[data-card-column]"), docs = $$("form[data-doc-form]");
    if (!board && !cols.length && !docs.length) return;
    const { data } = await api("GET", "/api/state");
    for (const move of data.card_moves || []) {
      for (const el of cols) if (el.dataset.cardColumn === move.card) el.textContent = move.column;
      const card = board && $(`[data-card="${CSS.escape(String(move.card))}"]`, board);
      const column = board && $(`[data-column="${CSS.escape(String(move.column))}"] [data-cards]`, board);
      if (card && column) column.appendChild(card);
    }
    if (board) for (const col of $$("[data-column]", board)) $("[data-column-count]", col).textContent = String($$("[data-card]", col).length);
    for (const form of docs) {
      const doc = data[form.dataset.docForm];
      if (!doc || doc.project !== (form.elements.project || {}).value) continue;
      for (const el of form.elements) if (el.type === "checkbox" && el.name in doc) el.checked = !!doc[el.name];
    }
  }

