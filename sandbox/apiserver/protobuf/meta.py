"""Wire schemas of the apimachinery types the API objects embed (hand-written, see gen.py).

Rows: field number -> (json name, kind, message ref or None, flags). kind: s string,
i signed int, b bool, y bytes (base64 in JSON), m message, M map (ref = "<key kind>:<value
kind or message>"). flags: r repeated, p pointer, o omitempty. ``meta.Time``, ``Duration``,
``IntOrString``, ``Quantity``, ``RawExtension`` and ``FieldsV1`` have JSON forms of their own
and are decoded by ``decode.SPECIAL``.
"""

from __future__ import annotations

META: dict[str, dict[int, tuple[str, str, str | None, str]]] = {
    "meta.ObjectMeta": {
        1: ("name", "s", None, "o"),
        2: ("generateName", "s", None, "o"),
        3: ("namespace", "s", None, "o"),
        4: ("selfLink", "s", None, "o"),
        5: ("uid", "s", None, "o"),
        6: ("resourceVersion", "s", None, "o"),
        7: ("generation", "i", None, "o"),
        8: ("creationTimestamp", "m", "meta.Time", "o"),
        9: ("deletionTimestamp", "m", "meta.Time", "op"),
        10: ("deletionGracePeriodSeconds", "i", None, "op"),
        11: ("labels", "M", "s:s", "o"),
        12: ("annotations", "M", "s:s", "o"),
        13: ("ownerReferences", "m", "meta.OwnerReference", "or"),
        14: ("finalizers", "s", None, "or"),
        17: ("managedFields", "m", "meta.ManagedFieldsEntry", "or"),
    },
    "meta.OwnerReference": {
        1: ("kind", "s", None, ""),
        3: ("name", "s", None, ""),
        4: ("uid", "s", None, ""),
        5: ("apiVersion", "s", None, ""),
        6: ("controller", "b", None, "op"),
        7: ("blockOwnerDeletion", "b", None, "op"),
    },
    "meta.ManagedFieldsEntry": {
        1: ("manager", "s", None, "o"),
        2: ("operation", "s", None, "o"),
        3: ("apiVersion", "s", None, "o"),
        4: ("time", "m", "meta.Time", "op"),
        6: ("fieldsType", "s", None, "o"),
        7: ("fieldsV1", "m", "meta.FieldsV1", "op"),
        8: ("subresource", "s", None, "o"),
    },
    "meta.LabelSelector": {
        1: ("matchLabels", "M", "s:s", "o"),
        2: ("matchExpressions", "m", "meta.LabelSelectorRequirement", "or"),
    },
    "meta.LabelSelectorRequirement": {
        1: ("key", "s", None, ""),
        2: ("operator", "s", None, ""),
        3: ("values", "s", None, "or"),
    },
    "meta.FieldSelectorRequirement": {
        1: ("key", "s", None, ""),
        2: ("operator", "s", None, ""),
        3: ("values", "s", None, "or"),
    },
    "meta.ListMeta": {
        1: ("selfLink", "s", None, "o"),
        2: ("resourceVersion", "s", None, "o"),
        3: ("continue", "s", None, "o"),
        4: ("remainingItemCount", "i", None, "op"),
    },
    "meta.DeleteOptions": {
        1: ("gracePeriodSeconds", "i", None, "op"),
        2: ("preconditions", "m", "meta.Preconditions", "op"),
        3: ("orphanDependents", "b", None, "op"),
        4: ("propagationPolicy", "s", None, "op"),
        5: ("dryRun", "s", None, "or"),
        6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "b", None, "op"),
    },
    "meta.Preconditions": {
        1: ("uid", "s", None, "op"),
        2: ("resourceVersion", "s", None, "op"),
    },
    "meta.Condition": {
        1: ("type", "s", None, ""),
        2: ("status", "s", None, ""),
        3: ("observedGeneration", "i", None, "o"),
        4: ("lastTransitionTime", "m", "meta.Time", ""),
        5: ("reason", "s", None, ""),
        6: ("message", "s", None, ""),
    },
}
