"""patchPodMetadata against the kruise-configuration whitelist."""

from __future__ import annotations

import json

import pytest

from kruise.control.sidecarset.whitelist import whitelist_error

KEY = "SidecarSet_PatchPodMetadata_WhiteList"


def sidecarset(annotations: dict | None, labels: dict | None = None) -> dict:
    spec = {"patchPodMetadata": [{"annotations": annotations}]} if annotations is not None else {}
    return {"metadata": {"name": "s", "labels": labels or {}}, "spec": spec}


def config(*rules: dict) -> dict:
    return {KEY: json.dumps({"rules": list(rules)})}


def db_only(*exprs: str) -> dict:
    return config({"selector": {"matchLabels": {"tier": "db"}}, "allowedAnnotationKeyExprs": list(exprs)})


@pytest.mark.parametrize(
    ("obj", "configuration", "defaults_allowed", "error"),
    [
        (sidecarset(None), {}, False, None),
        (sidecarset({"a.io/x": "1"}), {}, False, "SidecarSet patch metadata whitelist not found"),
        (sidecarset({"a.io/x": "1"}), None, True, None),
        (sidecarset({"a.io/x": "1"}), config({"allowedAnnotationKeyExprs": ["^a\\.io/"]}), False, None),
        (sidecarset({"b.io/x": "1"}), config({"allowedAnnotationKeyExprs": ["^a\\.io/"]}), False,
         "sidecarSet patch metadata annotation(b.io/x) is not allowed"),
        (sidecarset({"a.io/x": "1"}, {"tier": "web"}),
         db_only(".*"), False,
         "sidecarSet patch metadata annotation is not allowed"),
        (sidecarset({"a.io/x": "1"}, {"tier": "web"}),
         db_only(".*"), True, None),
        (sidecarset({"a.io/x": "1"}, {"tier": "db"}),
         db_only("x$"), False, None),
        (sidecarset({"a.io/x": "1"}), config({"allowedAnnotationKeyExprs": ["("]}), False,
         "error parsing regexp: missing closing ): `(`"),
    ],
)  # fmt: skip
def test_whitelist(obj, configuration, defaults_allowed, error):
    assert whitelist_error(obj, configuration, defaults_allowed) == error
