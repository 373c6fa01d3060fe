"""`FakePubSource`: the PodUnavailableBudget webhook's read-only caches (`PubSource`), filled by the test.

A budget keeper reads the PUB (possibly stale: what another replica already wrote is not in it yet)
and the PUBs of a namespace from here, and the stored truth through its client; tests hand it the
cached PUBs and, when a case needs them, cached pods.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Obj = dict[str, Any]


def _at(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


class FakePubSource:
    def __init__(self, *pubs: Obj, pods: Iterable[Obj] = ()) -> None:
        self.pubs = list(pubs)
        self.pods = list(pods)

    def pub(self, namespace: str, name: str) -> Obj | None:
        return next((p for p in self.pubs if _at(p) == (namespace, name)), None)

    def pod(self, namespace: str, name: str) -> Obj | None:
        return next((p for p in self.pods if _at(p) == (namespace, name)), None)

    def in_namespace(self, namespace: str) -> list[Obj]:
        return [p for p in self.pubs if _at(p)[0] == namespace]

    def workload_of(self, owner: Obj, namespace: str) -> Obj | None:
        """The owner reference stands for its workload: no test here reads past it."""
        return owner
