"""Each kind's declared hooks in `kruise.api.registry` agree with the functions they name."""

from __future__ import annotations

import importlib
import inspect

import pytest

from kruise.api.crdgen import CRDInfo
from kruise.api.hooks import ADD_PROTECTION, HOST_NETWORK_HOST_PORTS, INJECT_TEMPLATE_DEFAULTS
from kruise.api.registry import KINDS, hooks_of

_OPTIONS = {INJECT_TEMPLATE_DEFAULTS, HOST_NETWORK_HOST_PORTS, ADD_PROTECTION}


def _module(info: CRDInfo) -> object:
    return importlib.import_module(info.storage_version.model.__module__)


@pytest.mark.parametrize("info", KINDS, ids=lambda i: i.kind)
def test_declared_hooks_match_the_kind_module(info: CRDInfo) -> None:
    hooks = hooks_of(info)
    module = _module(info)
    assert hooks.set_defaults is getattr(module, "set_defaults", None)
    assert hooks.validate is getattr(module, "validate", None)
    assert hooks.version == getattr(module, "VERSION", None)
    if hooks.validate is not None:
        assert hooks.validate_takes_old == ("old" in inspect.signature(hooks.validate).parameters)
    if hooks.set_defaults is not None:
        accepted = set(inspect.signature(hooks.set_defaults).parameters) & _OPTIONS
        assert hooks.default_options == accepted


def test_an_unregistered_kind_is_named_in_the_error() -> None:
    info = KINDS[0]
    stranger = CRDInfo.__new__(CRDInfo)
    object.__setattr__(stranger, "__dict__", {**info.__dict__, "kind": "Stranger"})
    with pytest.raises(KeyError, match=r"Stranger\.apps\.kruise\.io is not a registered kind"):
        hooks_of(stranger)
