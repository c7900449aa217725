"""Cache: record real HTTP(S) traffic through mitmproxy, infer which request values are volatile, and
replay sites offline and deterministically.

    store.py      recordings: runs and exchanges in SQL, bodies content-addressed on disk
    canonical.py  the canonical view of a request (query, form, JSON, multipart, GraphQL fields)
    rules.py      per-domain rules in cache_rules/<domain>.yaml (ignore, require, paths, stubs)
    matcher.py    exact -> normalized -> scored -> miss
    addons.py     mitmproxy addons: EpisodeHeader, HostMapper, Recorder, Stubber, Replayer
    proxy.py      mitmproxy's engine in a background thread on an ephemeral loopback port
    record.py / replay.py / play.py   record runs, validate and serve replays, through the env
    backend.py    SiteBackend for tasks whose source is a recording
    infer.py      rule inference from K >= 2 runs and replay misses
    interop.py    HAR and WARC import (checked, atomic) and export
    har_entries.py  HAR entries read as their exporters write them (params as JSON, ws:// handshakes)
    warc.py       reading WARC records, each checked for length, truncation and digests
    websocket.py / socket_player.py   WebSockets and event streams; the loopback player of replayed sockets
    dates.py      recorded dates shifted to the replay's virtual clock; how old a recording is
    crawl.py / session.py   crawl expansion with the session each recorded episode left
    redact.py     secrets out of exports, by name and by value pattern
    commands.py   `weblica record | rules infer | replay | cache age | import | export`
"""
