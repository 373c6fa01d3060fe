"""Field errors render exactly like the apiserver's, and the shared validators follow apimachinery."""

import pytest

from kruise.api.common import LabelSelector
from kruise.api.validation import (
    aggregate_message,
    duplicate,
    forbidden,
    int_or_percent_errors,
    invalid,
    not_supported,
    percent_over_100,
    qualified_name_errors,
    required,
    to_status,
    validate_label_selector,
)


@pytest.mark.parametrize(
    ("err", "text"),
    [
        (
            invalid("spec.updateStrategy.partition", -1, "must be greater than or equal to 0"),
            "spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0",
        ),
        (invalid("spec.x", "50", "bad"), 'spec.x: Invalid value: "50": bad'),
        (required("spec.selector"), "spec.selector: Required value"),
        (forbidden("spec", "no"), "spec: Forbidden: no"),
        (duplicate("spec.containers[1].name", "a"), 'spec.containers[1].name: Duplicate value: "a"'),
        (
            not_supported("spec.template.spec.restartPolicy", "Never", ["Always"]),
            'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        ),
    ],
)
def test_error_text(err, text):
    assert str(err) == text


def test_aggregate_and_status():
    errs = [invalid("spec.replicas", -1, "must be greater than or equal to 0"), required("spec.selector")]
    assert (
        aggregate_message(errs[:1]) == "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    )
    assert aggregate_message(errs + errs) == (
        "[spec.replicas: Invalid value: -1: must be greater than or equal to 0, "
        "spec.selector: Required value]"
    )
    status = to_status("CloneSet", "apps.kruise.io", "demo", errs)
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert status["message"].startswith('CloneSet.apps.kruise.io "demo" is invalid: [spec.replicas')
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: -1: must be greater than or equal to 0",
            "field": "spec.replicas",
        },
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.selector"},
    ]


@pytest.mark.parametrize(
    ("selector", "fields"),
    [
        ({"matchLabels": {"app": "x"}}, []),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, ["s.matchExpressions[0].values"]),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            ["s.matchExpressions[0].values"],
        ),
        ({"matchExpressions": [{"key": "a", "operator": "Foo"}]}, ["s.matchExpressions[0].operator"]),
        ({"matchLabels": {"bad key!": "x"}}, ["s.matchLabels"]),
        ({"matchLabels": {"app": "-bad"}}, ["s.matchLabels"]),
    ],
)
def test_label_selector_validation(selector, fields):
    errs = validate_label_selector(LabelSelector.model_validate(selector), "s")
    assert [e.field for e in errs] == fields


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("app", True),
        ("apps.kruise.io/x", True),
        ("a/b/c", False),
        ("/x", False),
        ("x" * 64, False),
        ("-a", False),
    ],
)
def test_qualified_names(name, ok):
    assert (not qualified_name_errors(name)) is ok


def test_percent_helpers():
    assert int_or_percent_errors("10%", "p") == []
    assert int_or_percent_errors(3, "p") == []
    assert [str(e) for e in int_or_percent_errors("10", "p")] == [
        "p: Invalid value: \"10\": a valid percent string must be a numeric string followed by an ending '%' "
        "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
    ]
    assert [str(e) for e in int_or_percent_errors(-1, "p")] == [
        "p: Invalid value: -1: must be greater than or equal to 0"
    ]
    assert [str(e) for e in percent_over_100("101%", "p")] == [
        'p: Invalid value: "101%": must not be greater than 100%'
    ]
    assert percent_over_100("100%", "p") == []
