"""`context`: the `WebhookContext` a webhook test builds its routes or app from.

Most webhook tests are about one or two sources (a keeper, a lister, the gates); the rest should be
what an empty cluster gives, and the gates upstream's defaults rather than this process's
environment (`KRUISE_CUSTOM_RESOURCE_ENABLE` would otherwise change which routes exist).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kruise.api.features import FeatureGates
from kruise.webhook.context import WebhookContext
from tests.kit.namespace_contents import FakeNamespaceContents


def context(**sources: Any) -> WebhookContext:
    """Empty namespaces and default gates, with `sources` (WebhookContext fields) set over them."""
    base = WebhookContext(namespace_contents=FakeNamespaceContents(), gates=FeatureGates(env={}))
    return dataclasses.replace(base, **sources)
