"""Canonical request keys: every place a request carries a value becomes a named field."""
from weblica.cache.canonical import request_view

JSON = [("Content-Type", "application/json")]
FORM = [("Content-Type", "application/x-www-form-urlencoded")]


def test_query_fields_are_order_insensitive_and_keep_blank_values():
    a = request_view("get", "https://WWW.Shop.test/s?q=lamp&_=1&empty=")
    b = request_view("GET", "https://www.shop.test/s?empty=&_=1&q=lamp")
    assert a.key == b.key
    assert a.field_dict() == {"query:q": ["lamp"], "query:_": ["1"], "query:empty": [""]}
    assert a.host == "www.shop.test" and a.method == "GET"


def test_host_keeps_non_default_port_and_drops_default_one():
    assert request_view("GET", "https://a.test:443/").host == "a.test"
    assert request_view("GET", "https://a.test:8443/").host == "a.test:8443"
    assert request_view("GET", "https://a.test:8443/").key != request_view("GET", "https://a.test:9443/").key


def test_form_body_fields():
    view = request_view("POST", "https://a.test/search", FORM, b"csrf=abc&q=desk+lamp")
    assert view.field_dict() == {"form:csrf": ["abc"], "form:q": ["desk lamp"]}


def test_json_body_is_flattened_by_path_and_graphql_operation_named():
    body = b'{"query": "query Feed($cursor: String) { feed }", "variables": {"cursor": "c2", "ids": [3, 4]}}'
    fields = request_view("POST", "https://api.a.test/graphql", JSON, body).field_dict()
    assert fields["json:variables.cursor"] == ["c2"]
    assert fields["json:variables.ids.0"] == ["3"] and fields["json:variables.ids.1"] == ["4"]
    assert fields["gql:operationName"] == ["Feed"]  # parsed from the query text when not given
    explicit = request_view("POST", "https://api.a.test/graphql", JSON,
                            b'{"operationName": "Products", "query": "{ x }"}').field_dict()
    assert explicit["gql:operationName"] == ["Products"]


def test_json_keeps_types_apart():
    one = request_view("POST", "https://a.test/x", JSON, b'{"n": 1}')
    text = request_view("POST", "https://a.test/x", JSON, b'{"n": "1"}')
    assert one.key != text.key


def test_multipart_fields_and_files_by_digest():
    boundary = "XyZ"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\nfile body\r\n--{boundary}--\r\n").encode()
    fields = request_view("POST", "https://a.test/up", [("Content-Type", f"multipart/form-data; boundary={boundary}")],
                          body).field_dict()
    assert fields["multipart:title"] == ["hello"]
    assert fields["multipart:file"][0].startswith("sha256:")


def test_opaque_body_is_one_digest_field_and_changes_the_key():
    a = request_view("POST", "https://a.test/bin", [("Content-Type", "application/octet-stream")], b"\x00\x01")
    b = request_view("POST", "https://a.test/bin", [("Content-Type", "application/octet-stream")], b"\x00\x02")
    assert list(a.field_dict()) == ["body:sha256"]
    assert a.key != b.key


def test_headers_and_cookies_are_context_fields_outside_the_key():
    headers = [("Accept-Language", "sv-SE"), ("Cookie", "sid=alice; theme=dark"), ("Cookie", "ab=B"),
               ("Range", "bytes=0-99"), ("Content-Length", "0"), ("If-None-Match", '"v1"')]
    view = request_view("GET", "https://a.test/p?q=1", headers)
    assert view.context_dict() == {"header:accept-language": "sv-SE", "cookie:sid": "alice", "cookie:theme": "dark",
                                   "cookie:ab": "B", "header:range": "bytes=0-99"}
    assert view.key == request_view("GET", "https://a.test/p?q=1").key   # a session cookie alone changes no key


def test_context_fields_enter_a_key_only_when_named():
    from weblica.cache.canonical import canonical_key

    alice = request_view("GET", "https://a.test/account", [("Cookie", "sid=alice")])
    bob = request_view("GET", "https://a.test/account", [("Cookie", "sid=bob")])
    nobody = request_view("GET", "https://a.test/account")
    assert canonical_key(alice) == canonical_key(bob)
    keys = {canonical_key(v, context={"cookie:sid"}) for v in (alice, bob, nobody)}
    assert len(keys) == 3   # absent is its own value: logged out is not logged in


def test_path_parameters_are_fields_and_leave_the_path():
    view = request_view("GET", "https://ad.a.test/ddm/adj/N1.side;sz=300x250;ord=123?x=1")
    assert view.path == "/ddm/adj/N1.side"
    assert view.field_dict() == {"path:sz": ["300x250"], "path:ord": ["123"], "query:x": ["1"]}
    assert request_view("GET", "https://a.test/a;b/c").path == "/a;b/c"
