"""Test kit for reconcilers: fake caches, a recording client and recorder, and a polling helper.

A reconciler reads informer caches and writes through a `Client`; with `FakeInformer` for the
caches and `RecordingClient` for the writes it runs in a plain unit test, no emulator, and the
test asserts on exactly which writes it made.
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
