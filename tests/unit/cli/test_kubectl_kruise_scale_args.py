"""The pure parts of `scale`: which objects the arguments name, and kubectl's preconditions."""

from __future__ import annotations

import re

import pytest

from kruise.cli.kubectl_kruise import kinds, scale
from kruise.cli.kubectl_kruise.scale import ScaleError, ScaleOptions, check_precondition, select


def test_arguments_name_targets_or_a_bulk_selection():
    assert select(["cloneset/a", "asts/b"], "", False).targets == (
        kinds.Target(kinds.CLONESET, "a"),
        kinds.Target(kinds.ADVANCED_STATEFULSET, "b"),
    )
    assert select(["clone,deploy", "x"], "", False).targets == (
        kinds.Target(kinds.CLONESET, "x"),
        kinds.Target(kinds.DEPLOYMENT, "x"),
    )
    bulk = select(["rs"], " app=x ", False)
    assert (bulk.bulk[0].kind, bulk.selector) == ("ReplicaSet", "app=x")
    assert select(["ud"], "", True).bulk[0].kind == "UnitedDeployment"


@pytest.mark.parametrize(
    ("args", "selector", "message"),
    [
        (
            ["cloneset/a"],
            "app=x",
            "selectors and the all flag cannot be used when passing resource/name arguments",
        ),
        (["cloneset", "a"], "app=x", "name cannot be provided when a selector is specified"),
        ([], "app=x", "at least one resource must be specified to use a selector"),
        (["cloneset"], "", "resource(s) were provided, but no name was specified"),
    ],
)
def test_selection_refusals_are_kubectls(args, selector, message):
    with pytest.raises(ScaleError, match=re.escape(message)):
        select(args, selector, False)


def test_no_arguments_at_all_points_at_the_forms():
    with pytest.raises(ScaleError) as caught:
        select([], "", True)
    assert str(caught.value) == scale.MISSING_RESOURCE


def test_preconditions():
    current = {"metadata": {"resourceVersion": "7"}, "spec": {"replicas": 3}}
    check_precondition(current, ScaleOptions(replicas=1, current_replicas=3, resource_version="7"))
    with pytest.raises(ScaleError, match=r"^Expected replicas to be 2, was 3$"):
        check_precondition(current, ScaleOptions(replicas=1, current_replicas=2))
    with pytest.raises(ScaleError, match=r"^Expected resource version to be 6, was 7$"):
        check_precondition(current, ScaleOptions(replicas=1, resource_version="6"))
    assert not ScaleOptions(replicas=1).has_precondition


def test_printed_object_shows_the_new_size_without_touching_the_read_one():
    read = {"kind": "CloneSet", "spec": {"replicas": 3, "paused": True}}
    assert scale.with_replicas(read, 5) == {"kind": "CloneSet", "spec": {"replicas": 5, "paused": True}}
    assert read["spec"]["replicas"] == 3
