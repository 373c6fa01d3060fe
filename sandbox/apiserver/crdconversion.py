"""A CRD's `spec.conversion`, checked as apiextensions-apiserver's validateCustomResourceConversion.

The check runs on the internal form, where v1's `webhook.clientConfig` and
`webhook.conversionReviewVersions` are the conversion's own `webhookClientConfig` and
`conversionReviewVersions`: that is why kube-apiserver names those paths, not the v1 ones. The rule
that matters for an API-set switch is the last one: a webhook configuration left on a CRD whose
strategy is not Webhook is refused. Server-side apply produces exactly that when the applied file drops
the conversion but another field manager (kruise-webhook, which writes the caBundle) still owns part of
`webhook.clientConfig`; a real cluster then refuses the whole apply, so the emulator must too.
"""

from __future__ import annotations

from typing import Any

from kruise.sandbox.apiserver.errors import field_error

PATH = "spec.conversion"
STRATEGIES = ("None", "Webhook")
NOT_WEBHOOK = "should not be set when strategy is not set to Webhook"


def validate(spec: dict[str, Any]) -> list[dict[str, str]]:
    """The causes for `spec.conversion` (none when it is absent: defaulting fills strategy None)."""
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return []
    causes = []
    strategy = conversion.get("strategy") or ""
    if not strategy:
        causes.append(field_error("FieldValueRequired", f"{PATH}.strategy"))
    elif strategy not in STRATEGIES:
        causes.append(
            field_error(
                "FieldValueNotSupported", f"{PATH}.strategy", strategy, 'supported values: "None", "Webhook"'
            )
        )
    webhook = conversion.get("webhook")
    webhook = webhook if isinstance(webhook, dict) else {}
    client_config = webhook.get("clientConfig")
    review_versions = webhook.get("conversionReviewVersions") or []
    if strategy == "Webhook":
        if client_config is None:
            causes.append(
                field_error(
                    "FieldValueRequired",
                    f"{PATH}.webhookClientConfig",
                    detail="required when strategy is set to Webhook",
                )
            )
        causes += _review_versions(review_versions)
        return causes
    if client_config is not None:
        causes.append(field_error("FieldValueForbidden", f"{PATH}.webhookClientConfig", detail=NOT_WEBHOOK))
    if review_versions:
        causes.append(
            field_error("FieldValueForbidden", f"{PATH}.conversionReviewVersions", detail=NOT_WEBHOOK)
        )
    return causes


def _review_versions(versions: list[Any]) -> list[dict[str, str]]:
    """validateConversionReviewVersions: at least one, none repeated."""
    path = f"{PATH}.conversionReviewVersions"
    if not versions:
        return [field_error("FieldValueRequired", path)]
    seen: set[Any] = set()
    causes = []
    for i, version in enumerate(versions):
        if version in seen:
            causes.append(field_error("FieldValueInvalid", f"{path}[{i}]", version, "duplicate version"))
        seen.add(version)
    return causes
