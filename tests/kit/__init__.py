"""Test kit for reconcilers: fake caches, a recording client and recorder, and a polling helper.

A reconciler reads informer caches and writes through a `Client`; with `FakeInformer` for the
caches and `RecordingClient` for the writes it runs in a plain unit test, no emulator, and the
test asserts on exactly which writes it made.

Beside these: `pods.pod` builds plain pod dicts; `fakeapi.FakeApi` is an in-memory apiserver for
informers and status writers; `runtime.FakeRuntimeClient` stands in for the daemon's CRI client; and
`sidecarsets`, `pubs` and `namespace_contents` hold the webhook's read-only cache fakes, and
`webhook.context` builds a `WebhookContext` from them.
"""

from tests.kit.client import Call, RecordingClient
from tests.kit.events import RecordedEvent, RecordingEventRecorder
from tests.kit.informers import FakeInformer
from tests.kit.polling import until, until_fetched

__all__ = [
    "Call",
    "FakeInformer",
    "RecordedEvent",
    "RecordingClient",
    "RecordingEventRecorder",
    "until",
    "until_fetched",
]
