"""Which annotations a SidecarSet may patch onto pods (`patchPodMetadata`).

Patching pod annotations is powerful, so upstream only allows keys matching regular expressions
listed in ConfigMap `kruise-configuration` (kruise namespace), key
`SidecarSet_PatchPodMetadata_WhiteList`, as `{"rules": [{"selector": <label selector over the
SidecarSet's labels>, "allowedAnnotationKeyExprs": ["regex", ...]}]}`. Without any applicable
rule the SidecarSet is refused, unless gate SidecarSetPatchPodMetadataDefaultsAllowed is on.
The expressions are Go regexps (RE2 syntax, `kruise.api.goregexp`); a key is allowed when one
matches anywhere in it, as Go's MatchString.
"""

from __future__ import annotations

import json
from typing import Any

from kruise.api import goregexp
from kruise.api.keys import CONFIG_SIDECARSET_PATCH_POD_METADATA_WHITELIST
from kruise.api.objects import labels_of, spec_of
from kruise.control.sidecarset.matching import SelectorError, selector_matches

CONFIGURATION_NAME = "kruise-configuration"


def whitelist_error(
    sidecarset: dict[str, Any], configuration: dict[str, str] | None, defaults_allowed: bool
) -> str | None:
    """The reason `sidecarset`'s patchPodMetadata is not allowed, or None when it is.

    `configuration` is the ConfigMap's `data` (None or {} when it does not exist).
    """
    patches = spec_of(sidecarset).get("patchPodMetadata") or []
    if not patches:
        return None
    raw = (configuration or {}).get(CONFIG_SIDECARSET_PATCH_POD_METADATA_WHITELIST)
    if raw is None:
        return None if defaults_allowed else "SidecarSet patch metadata whitelist not found"
    try:
        whitelist = json.loads(raw)
    except ValueError as exc:
        return str(exc)
    if not isinstance(whitelist, dict):
        return f"{CONFIG_SIDECARSET_PATCH_POD_METADATA_WHITELIST} is not a JSON object"
    rules = whitelist.get("rules") or []
    labels = labels_of(sidecarset)
    expressions: list[goregexp.GoRegexp] = []
    for rule in rules:
        selector = rule.get("selector")
        try:
            if selector is not None and not selector_matches(selector, labels):
                continue
            expressions.extend(goregexp.compile(expr) for expr in rule.get("allowedAnnotationKeyExprs") or [])
        except (SelectorError, goregexp.GoRegexpError) as exc:
            return str(exc)
    if not expressions:
        return None if defaults_allowed else "sidecarSet patch metadata annotation is not allowed"
    for patch in patches:
        for key in patch.get("annotations") or {}:
            if not any(expr.match_string(key) for expr in expressions):
                return f"sidecarSet patch metadata annotation({key}) is not allowed"
    return None
