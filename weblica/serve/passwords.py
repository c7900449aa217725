"""How a synth site keeps passwords: hashed, never in clear, and checked through the same verifier.

The site server stores `hash_password(password, username)` for every field named like a password
(signup, any form posted to the state API) and logs in through `verify_password`; a task's state check
that a password was set reads the stored hash through `verify_password` too (check mode `password`), so
neither the site's state nor a state dump holds a password a policy could copy. The salt comes from the
site's own user name, not from chance: one seed gives the same state bytes every run.
"""
from __future__ import annotations

import hashlib
import hmac

SCHEME = "pbkdf2_sha256"
ITERATIONS = 1000  # a synthetic site's accounts: enough to be a hash, cheap enough for every episode


def hash_password(password: str, salt: str) -> str:
    digest = hashlib.pbkdf2_hmac("sha256", str(password).encode(), f"weblica:{salt}".encode(), ITERATIONS).hex()
    return f"{SCHEME}${ITERATIONS}${salt}${digest}"


def is_hashed(value: object) -> bool:
    return isinstance(value, str) and value.startswith(SCHEME + "$") and value.count("$") >= 3


def verify_password(password: object, stored: object) -> bool:
    """Whether `password` (in clear) is the one `stored` (a hash from `hash_password`) was made from."""
    if not is_hashed(stored) or not isinstance(password, str):
        return False
    _, iterations, salt, digest = str(stored).split("$", 3)
    if not iterations.isdigit() or int(iterations) != ITERATIONS:
        return False
    return hmac.compare_digest(hash_password(password, salt), str(stored))


def password_fields(record: dict) -> list[str]:
    """The fields of a posted record that hold a password ("password", "new_password", "pin")."""
    return [k for k, v in record.items() if isinstance(v, str) and ("password" in k.lower() or k.lower() == "pin")]


def with_hashed_passwords(record: dict, salt: str) -> dict:
    """`record` with every password field replaced by its hash (already hashed ones kept)."""
    out = dict(record)
    for key in password_fields(record):
        if not is_hashed(out[key]):
            out[key] = hash_password(out[key], salt)
    return out
