"""Fixtures for the kube unit tests: `fake_api`, an in-memory apiserver for informers (tests.kit.fakeapi)."""

from __future__ import annotations

import pytest

from tests.kit.fakeapi import FakeApi


@pytest.fixture
def fake_api() -> FakeApi:
    return FakeApi()
