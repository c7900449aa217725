"""Genres: what a category's sites are about. Each genre is a plug-in package, `<genre>/`, holding its
entity model and vocabulary (`genre.yaml`), its flows (`flow.py`: the pages and intents every site of
the category has, a bank's dashboard and transfers, a travel site's search -> results -> fare rules ->
booking), its intents, page templates and script; a skill (weblica/synth/skills) then adds what it needs
on top. `genre.py` is the contract (`Genre`), `registry.py` the explicit list of genres, `kit.py` what
the flows share, `flows.js` the script core the genres' scripts are spliced into.

This package module imports nothing, so a genre's modules can import the shared ones (`kit`, `genre`)
without loading every other genre."""
