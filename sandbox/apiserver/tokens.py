"""Service account tokens: the TokenRequest API (`serviceaccounts/<name>/token`) and their check.

kube-apiserver signs a JWT per TokenRequest (RS256, issuer `https://kubernetes.default.svc.cluster.local`,
claims `aud`, `exp`, `iat`, `nbf`, `sub` = `system:serviceaccount:<ns>:<name>` and a `kubernetes.io`
block naming the namespace and the account) and authenticates requests bearing it as that account
until it expires. Here the JWT has the same claims but is signed with HS256 and a per-emulator
secret; the emulator accepts exactly the tokens it issued, until their `exp`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from datetime import UTC, datetime
from typing import Any

import orjson

from kruise.sandbox.apiserver import errors

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_EXPIRATION = 3600  # SetDefaults_TokenRequestSpec
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def service_account_user(namespace: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "username": f"system:serviceaccount:{namespace}:{name}",
        "uid": uid,
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
    }


class TokenIssuer:
    """Issues TokenRequest tokens and knows whom a presented one authenticates."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self._issued: dict[str, tuple[dict[str, Any], float]] = {}

    def request(self, account: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """The TokenRequest reply for `body` (a TokenRequest) against the stored ServiceAccount."""
        meta = account["metadata"]
        spec = dict(body.get("spec") or {})
        seconds = spec.get("expirationSeconds")
        seconds = DEFAULT_EXPIRATION if seconds is None else seconds
        if not isinstance(seconds, int) or seconds < MIN_EXPIRATION or seconds > MAX_EXPIRATION:
            detail = (
                "may not specify a duration less than 10 minutes"
                if isinstance(seconds, int) and seconds < MIN_EXPIRATION
                else "may not specify a duration larger than 2^32 seconds"
            )
            raise errors.invalid(
                "authentication.k8s.io",
                "TokenRequest",
                meta["name"],
                [errors.field_error("FieldValueInvalid", "spec.expirationSeconds", seconds, detail)],
            )
        audiences = spec.get("audiences") or [ISSUER]
        now = int(time.time())
        claims = {
            "aud": audiences,
            "exp": now + seconds,
            "iat": now,
            "iss": ISSUER,
            "nbf": now,
            "sub": f"system:serviceaccount:{meta['namespace']}:{meta['name']}",
            "kubernetes.io": {
                "namespace": meta["namespace"],
                "serviceaccount": {"name": meta["name"], "uid": meta["uid"]},
            },
        }
        signing_input = _b64(orjson.dumps({"alg": "HS256", "typ": "JWT"})) + "." + _b64(orjson.dumps(claims))
        signature = hmac.new(self._key, signing_input.encode(), hashlib.sha256).digest()
        token = signing_input + "." + _b64(signature)
        user = service_account_user(meta["namespace"], meta["name"], meta["uid"])
        self._issued[token] = (user, now + seconds)
        expires = datetime.fromtimestamp(now + seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "creationTimestamp": None},
            "spec": {
                "audiences": audiences,
                "expirationSeconds": seconds,
                "boundObjectRef": spec.get("boundObjectRef"),
            },
            "status": {"token": token, "expirationTimestamp": expires},
        }

    def user_of(self, token: str) -> dict[str, Any] | None:
        """Whom `token` authenticates, or None (never issued, or expired)."""
        entry = self._issued.get(token)
        if entry is None:
            return None
        user, expires = entry
        if time.time() >= expires:
            del self._issued[token]
            return None
        return user
