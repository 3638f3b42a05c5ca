"""The credentials family: planted secrets beside ordinary engineering notes, and how many of each
kenning.core.credentials refuses (docs/memory-model.md, "Secrets").

    python -m bench.credentials            # precision / recall on bench/data/credentials.jsonl
    python -m bench.credentials --write    # regenerate the corpus (seeded: the same file each time)

The corpus is made here from templates in several voices (a commit message, a chat line, a runbook,
a .env or YAML line, an incident note, a non-native speaker) with seeded random values; the notes
side carries what scanners confuse with secrets: commit shas, checksums, image digests, UUIDs,
version pins, ticket ids, documented example keys, placeholders and prose about passwords.
"""

from __future__ import annotations

import argparse
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kenning.core import credentials

CORPUS = Path(__file__).with_name("data") / "credentials.jsonl"
Rand = random.Random


def _chars(rng: Rand, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _hex(rng: Rand, n: int) -> str:
    return _chars(rng, n, "0123456789abcdef")


def _password(rng: Rand) -> str:
    word = rng.choice(["Tr0ub4dor", "Sunfl0wer", "blue-Horse", "Winter2026", "kx9Vq2mZ", "P4ssage"])
    return word + rng.choice(["&3", "!", "#77", "_x", "$9", "42"])


SECRETS: dict[str, Callable[[Rand], str]] = {
    "aws_access_key": lambda r: "AKIA" + _chars(r, 16, string.ascii_uppercase + string.digits),
    "aws_secret": lambda r: f'aws_secret_access_key = "{_chars(r, 40)}"',
    "github": lambda r: "ghp_" + _chars(r, 36),
    "gitlab": lambda r: "glpat-" + _chars(r, 20),
    "slack": lambda r: (
        f"xoxb-{r.randint(10**11, 10**12)}-{r.randint(10**12, 10**13)}-"
        + _chars(r, 24, string.ascii_lowercase + string.digits)
    ),
    "stripe": lambda r: "sk_live_" + _chars(r, 24),
    "openai": lambda r: "sk-proj-" + _chars(r, 48),
    "anthropic": lambda r: "sk-ant-api03-" + _chars(r, 60),
    "google": lambda r: "AIza" + _chars(r, 35),
    "jwt": lambda r: "eyJhbGciOiJIUzI1NiJ9." + _chars(r, 40) + "." + _chars(r, 43),
    "private_key": lambda r: "-----BEGIN OPENSSH PRIVATE KEY-----\n" + _chars(r, 64),
    "postgres_url": lambda r: f"postgres://app:{_password(r)}@db.internal:5432/shop",
    "redis_url": lambda r: f"redis://default:{_chars(r, 20)}@cache.internal:6379",
    "bearer": lambda r: f"Authorization: Bearer {_chars(r, 40)}",
    "env_password": lambda r: f"DB_PASSWORD={_password(r)}",
    "env_api_key": lambda r: f"STRIPE_API_KEY={_chars(r, 32)}",
    "prose_password": lambda r: f"the staging admin password is {_password(r)}",
    "twilio": lambda r: "SK" + _hex(r, 32),
    "sendgrid": lambda r: "SG." + _chars(r, 22) + "." + _chars(r, 43),
    "npm": lambda r: f"//registry.npmjs.org/:_authToken=npm_{_chars(r, 36)}",
    "huggingface": lambda r: "hf_" + _chars(r, 34),
    "kenning": lambda r: "kn_" + _chars(r, 43, string.ascii_letters + string.digits + "-_"),
    "azure": lambda r: "AccountKey=" + _chars(r, 86) + "==",
    "yaml_secret": lambda r: f"client_secret: {_chars(r, 32)}",
}
SECRET_FRAMES = (
    "fix: deploy script now uses {s} for the push step",
    "hey, for the staging box just use {s} until we rotate it",
    "Runbook step 3: export {s} before running the migration.",
    "{s}",
    "incident 2026-03-02: the worker failed because {s} expired",
    "pls use this one for ci: {s} (temporary!!)",
    "Note to self — {s} works for the read replica.",
    "the config for prod has {s} in it, don't lose it",
)
NOTES: dict[str, Callable[[Rand], str]] = {
    "commit_sha": lambda r: f"reverted {_hex(r, 40)} because it broke the login flow",
    "short_sha": lambda r: f"cherry-pick {_hex(r, 7)} onto release/2.4",
    "checksum": lambda r: f"the tarball's sha256 is {_hex(r, 64)}",
    "digest": lambda r: f"pin the image to python@sha256:{_hex(r, 64)}",
    "uuid": lambda r: (
        f"tenant {_hex(r, 8)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 4)}-{_hex(r, 12)} "
        "is the one with the broken invoices"
    ),
    "version_pin": lambda r: (
        f"we pinned boto3=={r.randint(1, 2)}.{r.randint(20, 40)}.{r.randint(0, 9)}"
        f" and urllib3<{r.randint(2, 3)}"
    ),
    "ticket": lambda r: f"see JIRA-{r.randint(100, 9999)} and PR #{r.randint(10, 999)} for context",
    "example_key": lambda r: r.choice(
        [
            "the AWS docs use AKIAIOSFODNN7EXAMPLE as the sample access key id",
            "their sample secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, not a real one",
            "set OPENAI_API_KEY=<your-key> in .env before the first run",
            "the compose file reads DB_PASSWORD=${DB_PASSWORD} from the environment",
            "export ANTHROPIC_API_KEY=sk-ant-xxxxxxxx to try it locally",
        ]
    ),
    "prose_about": lambda r: r.choice(
        [
            "the password is stored in Vault under secret/staging, never in git",
            "rotate the API key every 90 days; the rotation job is in ops/rotate.py",
            "password reset emails go out through SES with a 30 minute expiry",
            "the bearer token is read from the KENNING_TOKEN environment variable",
            "we store only a bcrypt hash of each password, cost 12",
            "the secret key for the session cookie comes from the KMS at boot",
            "client_secret is injected by the sidecar; do not put it in the helm values",
            "auth tokens expire after an hour and refresh silently",
        ]
    ),
    "url": lambda r: f"the dashboard is at https://grafana.internal:{r.randint(3000, 3999)}/d/abc",
    "user_url": lambda _: (
        "clone with git@github.com:acme/shop.git or https://alice@git.acme.dev/shop"
    ),
    "k8s": lambda r: f"the ingress uses secretName: tls-{_hex(r, 6)} in namespace prod",
    "path": lambda r: f"logs land in /var/log/shop/{_hex(r, 6)}.log, rotated daily",
    "base64": lambda r: (
        f"the fixture is dGhpcyBpcyBhIHRlc3Q= (base64 of 'this is a test') #{r.randint(1, 9)}"
    ),
    "numbers": lambda r: (
        f"p95 went from {r.randint(100, 900)} ms to {r.randint(10, 99)} ms after the cache"
    ),
    "ip": lambda r: f"the bastion is 10.{r.randint(0, 255)}.{r.randint(0, 255)}.4, port 2222",
    "env_ok": lambda r: r.choice(
        [
            "LOG_LEVEL=debug and WORKERS=4 in the staging .env",
            "KENNING_OAUTH=true turns on the login pages",
            "PASSWORD_MIN_LENGTH=12 is enforced by the signup form",
        ]
    ),
}
NOTE_FRAMES = ("{s}", "fyi {s}", "Decision: {s}.", "TIL {s}", "per the retro, {s}")


def build(seed: int = 11) -> list[dict[str, Any]]:
    rng = Rand(seed)
    rows: list[dict[str, Any]] = []
    for kind, make in SECRETS.items():
        for frame in SECRET_FRAMES:
            rows.append({"text": frame.format(s=make(rng)), "secret": True, "kind": kind})
    for kind, make in NOTES.items():
        for frame in NOTE_FRAMES * 4:
            rows.append({"text": frame.format(s=make(rng)), "secret": False, "kind": kind})
    return rows


def measure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    caught = [r for r in rows if r["secret"] and credentials.find(r["text"])]
    refused = [r for r in rows if not r["secret"] and credentials.find(r["text"])]
    secrets = sum(1 for r in rows if r["secret"])
    notes = len(rows) - secrets
    return {
        "secrets": secrets,
        "notes": notes,
        "caught": len(caught) / secrets,
        "notes_refused": len(refused) / notes,
        "missed": [r["kind"] for r in rows if r["secret"] and r not in caught],
        "refused": [r["text"] for r in refused],
    }


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="regenerate the corpus file")
    args = parser.parse_args()
    if args.write:
        CORPUS.parent.mkdir(exist_ok=True)
        lines = (json.dumps(row, sort_keys=True) for row in build())
        CORPUS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = measure(load())
    print(
        f"{result['secrets']} planted secrets: {result['caught']:.3f} caught; "
        f"{result['notes']} ordinary notes: {result['notes_refused']:.3f} refused"
    )
    for kind in result["missed"]:
        print(f"  missed: {kind}")
    for text in result["refused"]:
        print(f"  refused: {text}")


if __name__ == "__main__":
    main()
