"""Credentials that must never be stored in a memory: API keys, tokens, private keys, passwords in
URLs, connection strings and prose, cloud credentials. Pure.

detect-secrets (Yelp's scanner) supplies the patterns of the services it knows: its regex plugins'
patterns run here directly (one pass, no settings context, no files), and its keyword plugin only
when a keyword appears. Kenning's own rules add what it misses in engineers' prose: Anthropic and
current OpenAI keys, Google API keys, Kenning's own tokens, ``Authorization:`` headers, "the
password is ...", ``api_key=...``. Documented example keys and placeholders
(``AKIAIOSFODNN7EXAMPLE``, ``<your-key>``, ``${DB_PASSWORD}``, ``xxxx``) are not credentials: a
note that explains how to set a key is kept. A finding names its kind and where it is, never the
value (docs/memory-model.md, "Secrets").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from kenning.core.errors import InvalidInput

# detect-secrets' service patterns; left out: its entropy plugins (every git sha and checksum would
# be a "secret"), the public-IP one, and the keyword-shaped IBM/Cloudant/Softlayer/Artifactory
# patterns, which match ordinary words ("sl", "cl", "AP" + letters) in prose.
PLUGINS: tuple[type[RegexBasedDetector], ...] = (
    AWSKeyDetector,
    AzureStorageKeyDetector,
    BasicAuthDetector,
    DiscordBotTokenDetector,
    GitHubTokenDetector,
    GitLabTokenDetector,
    JwtTokenDetector,
    MailchimpDetector,
    NpmDetector,
    OpenAIDetector,
    PrivateKeyDetector,
    PypiTokenDetector,
    SendGridDetector,
    SlackDetector,
    SquareOAuthDetector,
    StripeDetector,
    TelegramBotTokenDetector,
    TwilioKeyDetector,
)
SERVICES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (str(plugin.secret_type), pattern)
    for plugin in (cls() for cls in PLUGINS)
    for pattern in plugin.denylist
)
VALUE = r"[A-Za-z0-9_\-./+=~]"
OWN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Anthropic API key", re.compile(r"\bsk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_\-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-[A-Za-z0-9]{40,}\b")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("Kenning token", re.compile(r"\bkn[arc]?_[A-Za-z0-9_\-]{30,}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    (
        "password on a command line",
        re.compile(r"\b(?:mysql|mariadb|mysqldump)\b[^\n]*?\s-p(?P<v>\S{4,})"),
    ),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("password in a URL", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<v>[^\s@/]{3,})@")),
    (
        "Authorization header",
        re.compile(rf"(?i)\bauthorization:\s*(?:bearer|token|basic)\s+{VALUE}{{16,}}"),
    ),
    ("bearer token", re.compile(rf"(?i)\bbearer\s+(?P<v>{VALUE}{{24,}})")),
    (
        "password",
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd|pass)\b(?:\s+for\s+[\w.\-]+)?"
            r"(?:\s+(?:is|was))?"
            r"\s*[:=]?\s*[\"'`]?(?P<v>[^\s\"'`,;]{6,})"
        ),
    ),
    (
        "API secret",
        re.compile(
            r"(?i)\b(?:api[_\- ]?key|secret[_\- ]?key|access[_\- ]?key[_\- ]?id|secret|"
            r"access[_\- ]?token|auth[_\- ]?token|client[_\- ]?secret|private[_\- ]?key)"
            rf"\b(?:\s+(?:is|was))?\s*[:=]?\s*[\"'`]?(?P<v>{VALUE}{{20,}})"
        ),
    ),
)
KEYWORD = KeywordDetector()  # stateless: built once, not per remember
KEYWORDS = re.compile(r"(?i)pass|pwd|secret|token|key|auth|cred")
# what an example or a placeholder looks like: never a real credential
PLACEHOLDER = re.compile(
    r"(?i)example|x{4,}|\*{3,}|<[^>]*>|\$\{|\{\{|\$[A-Z_]{3,}|your[_\-]|changeme|dummy|"
    r"placeholder|redacted|\.\.\.|^(?:password|passw0rd|secret|pass|test|none|null)$"
)
# a key that names where a secret is or what it must be, not the secret ("secretName: tls-prod",
# "PASSWORD_MIN_LENGTH=12", "api_key_path: /run/key")
REFERENCE_KEY = re.compile(
    r"(?i)(?:name|id|path|file|ref|url|uri|length|len|min|max|type|policy|manager|store|env|"
    r"var|header|field|rotation|ttl|expiry|version)[\"']?\s*[:=]+\s*[\"'`]?$"
)
# words a prose rule can catch as a "value" that are only prose ("the password is stored in ...")
PROSE = re.compile(r"^[a-z]+(?:[-'][a-z]+)?[.,:;!?)]*$")


@dataclass(frozen=True)
class Finding:
    """One credential in a text: its kind and where it is; never the value."""

    kind: str
    start: int
    end: int


def find(text: str) -> list[Finding]:
    """Every credential in ``text``, in order, overlapping findings merged."""
    found = sorted(_raw(text), key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for finding in found:
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Finding(last.kind, last.start, max(last.end, finding.end))
            continue
        merged.append(finding)
    return merged


def _raw(text: str) -> Iterator[Finding]:
    for kind, pattern in SERVICES:
        for match in pattern.finditer(text):
            yield from _checked(kind, match, strict=False)
    for kind, pattern in OWN:
        for match in pattern.finditer(text):
            yield from _checked(kind, match, strict=True)
    if KEYWORDS.search(text):
        yield from _keyword(text)


def _checked(kind: str, match: re.Match[str], *, strict: bool) -> Iterator[Finding]:
    group = "v" if "v" in match.re.groupindex else (1 if match.re.groups else 0)
    value = match.group(group) or ""
    start, end = match.span(group)
    if not value or PLACEHOLDER.search(value) or PLACEHOLDER.search(match.group(0)):
        return
    if strict and "v" in match.re.groupindex and not _looks_secret(value):
        return
    yield Finding(kind, start, end)


def _looks_secret(value: str) -> bool:
    """A prose rule's value: not a word, not a plain number, varied enough to be a credential."""
    if PROSE.match(value) or value.isdigit() or value.lower() in {"true", "false"}:
        return False
    classes = sum(
        any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit)
    ) + any(not c.isalnum() for c in value)
    return classes >= 2 and _entropy(value) >= 2.5


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _keyword(text: str) -> Iterator[Finding]:
    offset = 0
    for line in text.splitlines(keepends=True):
        for secret in KEYWORD.analyze_line(filename="memory.yaml", line=line, line_number=1):
            # the YAML reading takes the rest of the line: the value is its first word
            value = (secret.secret_value or "").split(maxsplit=1)[0] if secret.secret_value else ""
            at = line.find(value)
            key = REFERENCE_KEY.search(line[:at]) if at > 0 else None
            if not value or at < 0 or key is not None or PLACEHOLDER.search(value):
                continue
            if _looks_secret(value):
                yield Finding(
                    "password or secret assignment", offset + at, offset + at + len(value)
                )
        offset += len(line)


def redact(text: str, findings: list[Finding] | None = None) -> str:
    """``text`` with every credential replaced by ``[REDACTED: kind]``."""
    out, last = [], 0
    for finding in findings if findings is not None else find(text):
        out += [text[last : finding.start], f"[REDACTED: {finding.kind}]"]
        last = finding.end
    return "".join([*out, text[last:]])


def refuse(findings: list[Finding], *, what: str = "content") -> InvalidInput:
    """The error for a text that holds credentials: what and where, never the value."""
    kinds = sorted({f.kind for f in findings})
    where = ", ".join(f"characters {f.start + 1}-{f.end}" for f in findings[:5])
    return InvalidInput(
        f"{what} holds what looks like a credential ({', '.join(kinds)}: {where}); "
        "it was not stored",
        hint=(
            "remove the secret and say where it lives instead (e.g. 'the staging key is in "
            "Vault at secret/staging/api'); an operator can set KENNING_CREDENTIALS=redact to "
            "store such text with the secret replaced by [REDACTED: kind]"
        ),
    )


def guard(text: str, policy: str, *, what: str = "content") -> str:
    """``text`` without credentials under ``policy`` (the ``credentials`` setting): unchanged when
    it holds none, redacted under ``redact``, else refused with ``refuse``'s error."""
    found = find(text)
    if not found:
        return text
    if policy == "redact":
        return redact(text, found)
    raise refuse(found, what=what)
