"""`pod()`: one builder for the plain pod dicts unit tests feed to controllers, simulators and webhooks.

It writes only what the test asks for (metadata name and namespace unless told not to; spec,
status and the rest when given), so a test states the few fields its case turns on and nothing else leaks in:
`pod("web-0", node="n1", ready=True)`. Extra spec fields go as camelCase keywords
(`pod(nodeSelector={...})`); extra metadata and status fields as `meta=` and `status=` dicts.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]

DELETION_TIMESTAMP = "2026-01-01T00:00:00Z"


def pod(
    name: str | None = "p",
    *,
    namespace: str | None = "default",
    uid: str | None = None,
    rv: int | str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: Obj | None = None,
    created: str | None = None,
    deleting: bool = False,
    deletion_grace: int | None = None,
    meta: Obj | None = None,
    node: str | None = None,
    grace: int | None = None,
    containers: list[Obj] | None = None,
    phase: str | None = None,
    ready: bool | None = None,
    conditions: list[Obj] | None = None,
    ip: str | None = None,
    status: Obj | None = None,
    typed: bool = False,
    **spec: Any,
) -> Obj:
    """A pod. `name` None leaves the name out (a create named by the generateName given in `meta`);
    `owner` is one ownerReference (see `controller_ref`); `deleting` sets a deletionTimestamp,
    `deletion_grace` that and deletionGracePeriodSeconds (as a DELETE does), `grace` is the spec's
    terminationGracePeriodSeconds; a spec keyword given as None is left out; `ready` adds the Ready
    condition before `conditions`; `typed` adds apiVersion and kind, as a stored object has and a list
    item does not."""
    metadata: Obj = {} if name is None else {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    for key, value in (
        ("uid", uid),
        ("resourceVersion", None if rv is None else str(rv)),
        ("labels", labels),
        ("annotations", annotations),
        ("ownerReferences", None if owner is None else [owner]),
        ("creationTimestamp", created),
        ("deletionTimestamp", DELETION_TIMESTAMP if deleting or deletion_grace is not None else None),
        ("deletionGracePeriodSeconds", deletion_grace),
    ):
        if value is not None:
            metadata[key] = value
    metadata.update(meta or {})

    body: Obj = {}
    if node is not None:
        body["nodeName"] = node
    if grace is not None:
        body["terminationGracePeriodSeconds"] = grace
    if containers is not None:
        body["containers"] = containers
    body.update((key, value) for key, value in spec.items() if value is not None)

    state: Obj = {}
    if phase is not None:
        state["phase"] = phase
    if ready is not None or conditions is not None:
        ready_condition = [] if ready is None else [{"type": "Ready", "status": "True" if ready else "False"}]
        state["conditions"] = ready_condition + [dict(c) for c in conditions or ()]
    if ip is not None:
        state["podIP"] = ip
    state.update(status or {})

    out: Obj = {"apiVersion": "v1", "kind": "Pod"} if typed else {}
    out["metadata"] = metadata
    out["spec"] = body
    if state:
        out["status"] = state
    return copy.deepcopy(out)  # nothing shared with the caller's (or a partial's) dicts


def controller_ref(kind: str, name: str, *, uid: str | None = None, api_version: str = "apps/v1") -> Obj:
    """The controller ownerReference a workload sets on its pods (uid defaults to `uid-<name>`)."""
    uid = uid or f"uid-{name}"
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}
