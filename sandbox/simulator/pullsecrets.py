"""Registry credentials for a pod's image pulls, from its ``imagePullSecrets``, as the kubelet finds them.

The kubelet builds a docker keyring from the pod's Secrets - ``kubernetes.io/dockerconfigjson``
(``.dockerconfigjson``, its ``auths`` map) and ``kubernetes.io/dockercfg`` (``.dockercfg``, the bare
map); other types are ignored - and looks the image's repository up in it (pkg/credentialprovider):
a key is a schemeless URL whose host parts may be globs (``*.example.com``) and whose path must be a
prefix of the repository's; ``/v1/`` and ``/v2/`` are the host itself; the most specific keys come
first; Docker Hub's ``index.docker.io`` key also serves images without a registry host. An entry's
``auth`` (base64 ``user:password``) wins over its ``username``/``password``. Every match is tried in
turn by the caller, and with none the pull goes without credentials.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from kruise.sandbox.simulator.noderuntime import RegistryAuth

DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
DOCKER_CFG = "kubernetes.io/dockercfg"
DEFAULT_REGISTRY_HOST = "index.docker.io"

Obj = Mapping[str, Any]


def repository_of(image: str) -> str:
    """The repository the kubelet looks credentials up for: the normalized name without tag or
    digest (``busybox`` -> ``docker.io/library/busybox``)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[: len(name) - len(last)] + last.split(":", 1)[0]
    first, slash, _rest = name.partition("/")
    if not slash:
        return f"docker.io/library/{name}"
    if "." in first or ":" in first or first == "localhost":
        return name
    return f"docker.io/{name}"


def _entries(secret: Obj) -> Mapping[str, Any]:
    data = secret.get("data") or {}
    kind = secret.get("type")
    if kind == DOCKER_CONFIG_JSON and data.get(".dockerconfigjson"):
        raw, nested = data[".dockerconfigjson"], True
    elif kind == DOCKER_CFG and data.get(".dockercfg"):
        raw, nested = data[".dockercfg"], False
    else:
        return {}
    try:
        config = json.loads(base64.b64decode(raw))
    except (ValueError, binascii.Error):
        return {}  # the kubelet skips a Secret it cannot parse
    if not isinstance(config, dict):
        return {}
    found = config.get("auths") if nested else config
    return found if isinstance(found, dict) else {}


def _identity(entry: Any) -> tuple[str, str] | None:
    if not isinstance(entry, dict):
        return None
    username, password = str(entry.get("username") or ""), str(entry.get("password") or "")
    if entry.get("auth"):
        try:
            decoded = base64.b64decode(str(entry["auth"])).decode()
        except (ValueError, binascii.Error):
            return None
        username, sep, password = decoded.partition(":")
        if not sep:
            return None
    return username, password


def _key(location: str) -> str:
    """A keyring key: the location without scheme, ``/v1/`` or ``/v2/`` standing for the host."""
    parsed = urlsplit(location if "://" in location else f"https://{location}")
    path = parsed.path
    if path.startswith(("/v1/", "/v2/")):
        path = path[3:]
    return parsed.netloc + path if path not in ("", "/") else parsed.netloc


def _split(url: str) -> tuple[list[str], str, str]:
    parsed = urlsplit(f"https://{url}")
    host, _, port = parsed.netloc.partition(":")
    return host.split("."), port, parsed.path


def _matches(key: str, repository: str) -> bool:
    key_parts, key_port, key_path = _split(key)
    parts, port, path = _split(repository)
    if key_port != port or len(key_parts) != len(parts) or not path.startswith(key_path):
        return False
    return all(fnmatch.fnmatchcase(part, glob) for glob, part in zip(key_parts, parts, strict=True))


def _default_registry(repository: str) -> bool:
    first, slash, _ = repository.partition("/")
    if not first:
        return False
    return not slash or first in ("docker.io", DEFAULT_REGISTRY_HOST) or not any(c in first for c in ".:")


def credentials(image: str, secrets: Iterable[Obj]) -> list[RegistryAuth]:
    """The credentials to try, in order, for pulling ``image`` with the pod's pull ``secrets``."""
    keyring: dict[str, list[RegistryAuth]] = {}
    for secret in secrets:
        for location, entry in _entries(secret).items():
            identity = _identity(entry)
            if identity is None:
                continue
            key = _key(str(location))
            auth = RegistryAuth(username=identity[0], password=identity[1], server_address=key)
            if auth not in keyring.setdefault(key, []):
                keyring[key].append(auth)
    repository = repository_of(image)
    matching = [key for key in sorted(keyring, reverse=True) if _matches(key, repository)]
    found = [auth for key in matching for auth in keyring[key]]
    if not found and _default_registry(repository):
        found = list(keyring.get(DEFAULT_REGISTRY_HOST, []))
    return found
