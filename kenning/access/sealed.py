"""A token's secret sealed for an idempotent retry (docs/reliability.md, "Tokens").

``kenning token create --idempotency-key KEY`` must answer a retry -- the first call committed,
its reply was lost -- with the same token, and a token is no use without its secret. So the secret
is kept for a short window (``WINDOW_SECONDS``), sealed (AES-GCM) under a key derived from the
caller's idempotency key with scrypt, and stored under a lookup id derived the same way: the store
holds neither the idempotency key nor anything that opens the seal without it, and scrypt makes
guessing a weak key slow. The sha256 of the secret stays the only lasting trace
(kenning.store.tokens).
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

WINDOW_SECONDS = 900
SHORTEST_KEY = 22  # 128 bits as base64; a UUID (36) is fine
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


@dataclass(frozen=True)
class Seal:
    """What one idempotency key derives: where the sealed reply is kept, and its cipher key."""

    lookup: str
    key: bytes

    @classmethod
    def of(cls, idempotency_key: str, actor: str) -> Seal:
        material = hashlib.scrypt(
            idempotency_key.encode(),
            salt=f"kenning token create\0{actor}".encode(),
            dklen=64,
            **_SCRYPT,
        )
        return cls(hashlib.sha256(material[:32]).hexdigest(), material[32:])

    def close(self, secret: str, bound: str) -> str:
        """``secret`` sealed; ``bound`` (the request) must be given again to open it."""
        nonce = os.urandom(12)
        sealed = AESGCM(self.key).encrypt(nonce, secret.encode(), bound.encode())
        return base64.b64encode(nonce + sealed).decode()

    def open(self, sealed: str, bound: str) -> str | None:
        """The secret, or None when the seal does not open with this key and request."""
        raw = base64.b64decode(sealed)
        try:
            return AESGCM(self.key).decrypt(raw[:12], raw[12:], bound.encode()).decode()
        except (InvalidTag, ValueError):
            return None
