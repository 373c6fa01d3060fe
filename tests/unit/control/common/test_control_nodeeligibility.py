"""Node eligibility of daemon pods (native NodeShouldRunDaemonPod) and the per-node pod template."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.common import nodeeligibility as dn


def node(name: str = "n1", labels: dict[str, str] | None = None, taints: list[dict] | None = None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


def template(**spec: Any) -> dict:
    return {
        "metadata": {"labels": {"app": "d"}},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


def required(*terms: dict) -> dict:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def expr(key: str, operator: str, *values: str) -> dict:
    req: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        req["values"] = list(values)
    return req


def fit(tpl: dict, n: dict) -> tuple[bool, bool]:
    result = dn.should_run_on_node(tpl, n)
    return result.should_run, result.should_continue_running


# --- nodeName and nodeSelector ------------------------------------------------------------


def test_plain_template_runs_everywhere() -> None:
    assert fit(template(), node()) == (True, True)


@pytest.mark.parametrize(
    ("wanted", "expected"), [("n1", (True, True)), ("n2", (False, False)), ("", (True, True))]
)
def test_template_node_name(wanted: str, expected: tuple[bool, bool]) -> None:
    assert fit(template(nodeName=wanted), node("n1")) == expected


@pytest.mark.parametrize(
    ("selector", "labels", "runs"),
    [
        ({"disk": "ssd"}, {"disk": "ssd"}, True),
        ({"disk": "ssd"}, {"disk": "hdd"}, False),
        ({"disk": "ssd"}, {}, False),
        ({"disk": "ssd", "zone": "a"}, {"disk": "ssd"}, False),
        ({"disk": "ssd", "zone": "a"}, {"disk": "ssd", "zone": "a", "x": "y"}, True),
        ({"disk": ""}, {}, False),
        ({"disk": ""}, {"disk": ""}, True),
        ({}, {"any": "thing"}, True),
    ],
)
def test_node_selector(selector: dict, labels: dict, runs: bool) -> None:
    assert fit(template(nodeSelector=selector), node(labels=labels)) == (runs, runs)


# --- required node affinity ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("req", "labels", "matches"),
    [
        (expr("zone", "In", "a", "b"), {"zone": "b"}, True),
        (expr("zone", "In", "a", "b"), {"zone": "c"}, False),
        (expr("zone", "In", "a"), {}, False),
        (expr("zone", "NotIn", "a"), {"zone": "b"}, True),
        (expr("zone", "NotIn", "a"), {"zone": "a"}, False),
        (expr("zone", "NotIn", "a"), {}, True),
        (expr("gpu", "Exists"), {"gpu": ""}, True),
        (expr("gpu", "Exists"), {}, False),
        (expr("gpu", "DoesNotExist"), {}, True),
        (expr("gpu", "DoesNotExist"), {"gpu": "1"}, False),
        (expr("cores", "Gt", "4"), {"cores": "8"}, True),
        (expr("cores", "Gt", "4"), {"cores": "4"}, False),
        (expr("cores", "Gt", "4"), {"cores": "+5"}, True),
        # "-1" is an integer but not a valid label value: the term does not parse
        (expr("cores", "Gt", "-1"), {"cores": "0"}, False),
        (expr("cores", "Gt", "4"), {"cores": "eight"}, False),
        (expr("cores", "Gt", "4"), {"cores": " 8"}, False),
        (expr("cores", "Gt", "4"), {"cores": "1_0"}, False),
        (expr("cores", "Gt", "4"), {"cores": "99999999999999999999"}, False),
        (expr("cores", "Gt", "4"), {}, False),
        (expr("cores", "Lt", "4"), {"cores": "3"}, True),
        (expr("cores", "Lt", "4"), {"cores": "4"}, False),
        (expr("cores", "Lt", "4"), {"cores": "-10"}, True),
    ],
)
def test_match_expressions(req: dict, labels: dict, matches: bool) -> None:
    tpl = template(affinity=required({"matchExpressions": [req]}))
    assert fit(tpl, node(labels=labels)) == (matches, matches)


@pytest.mark.parametrize(
    ("req", "name", "matches"),
    [
        (expr("metadata.name", "In", "n1"), "n1", True),
        (expr("metadata.name", "In", "n1"), "n2", False),
        (expr("metadata.name", "NotIn", "n1"), "n2", True),
        (expr("metadata.name", "NotIn", "n1"), "n1", False),
        # an unknown field reads as the empty string
        (expr("spec.unknown", "In", "x"), "n1", False),
        (expr("spec.unknown", "NotIn", "x"), "n1", True),
        # only In/NotIn with exactly one value parse; a term that does not parse never matches
        (expr("metadata.name", "In", "n1", "n2"), "n1", False),
        (expr("metadata.name", "Exists"), "n1", False),
        (expr("metadata.name", "In"), "n1", False),
    ],
)
def test_match_fields(req: dict, name: str, matches: bool) -> None:
    tpl = template(affinity=required({"matchFields": [req]}))
    assert fit(tpl, node(name)) == (matches, matches)


def test_terms_are_ored_and_requirements_anded() -> None:
    tpl = template(
        affinity=required(
            {"matchExpressions": [expr("zone", "In", "a"), expr("disk", "In", "ssd")]},
            {"matchFields": [expr("metadata.name", "In", "special")]},
        )
    )
    assert fit(tpl, node("n1", {"zone": "a", "disk": "ssd"}))[0]
    assert not fit(tpl, node("n1", {"zone": "a", "disk": "hdd"}))[0]
    assert fit(tpl, node("special", {}))[0]


def test_expressions_and_fields_in_one_term_are_anded() -> None:
    tpl = template(
        affinity=required(
            {
                "matchExpressions": [expr("zone", "In", "a")],
                "matchFields": [expr("metadata.name", "In", "n1")],
            }
        )
    )
    assert fit(tpl, node("n1", {"zone": "a"}))[0]
    assert not fit(tpl, node("n2", {"zone": "a"}))[0]
    assert not fit(tpl, node("n1", {"zone": "b"}))[0]


@pytest.mark.parametrize("terms", [[], [{}], [{"matchExpressions": [], "matchFields": []}]])
def test_empty_terms_select_nothing(terms: list) -> None:
    assert fit(template(affinity=required(*terms)), node()) == (False, False)


def test_required_affinity_and_node_selector_both_apply() -> None:
    tpl = template(
        nodeSelector={"disk": "ssd"}, affinity=required({"matchExpressions": [expr("zone", "In", "a")]})
    )
    assert fit(tpl, node(labels={"disk": "ssd", "zone": "a"}))[0]
    assert not fit(tpl, node(labels={"disk": "hdd", "zone": "a"}))[0]
    assert not fit(tpl, node(labels={"disk": "ssd", "zone": "b"}))[0]


def test_affinity_without_required_part_matches_everything() -> None:
    preferred = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]}
    assert fit(template(affinity={"nodeAffinity": preferred}), node())[0]
    assert fit(template(affinity={"podAntiAffinity": {}}), node())[0]


@pytest.mark.parametrize(
    ("req", "fragment"),
    [
        (expr("zone", "Equals", "a"), 'operator: Unsupported value: "Equals"'),
        (expr("zone", "In"), "values set can't be empty"),
        (expr("zone", "NotIn"), "values set can't be empty"),
        (expr("zone", "Exists", "a"), "values set must be empty"),
        (expr("cores", "Gt", "1", "2"), "exactly one value is required"),
        (expr("cores", "Lt", "four"), "the value must be an integer"),
        (expr("bad key!", "Exists"), "matchExpressions[0].key: Invalid value"),
        (expr("zone", "In", "not valid!"), "values[0]: Invalid value"),
        (expr("cores", "Gt", "-1"), "values[0]: Invalid value"),
    ],
)
def test_invalid_term_is_skipped_and_reported(req: dict, fragment: str) -> None:
    """A term that does not parse never matches, yet a valid term beside it still can."""
    bad = {"matchExpressions": [req]}
    spec = template(affinity=required(bad))["spec"]
    errors = dn.node_affinity_errors(spec)
    assert errors and fragment in errors[0]
    assert errors[0].startswith(f"{dn.AFFINITY_PATH}.nodeSelectorTerms[0].matchExpressions[0]")
    labels = {"zone": "a", "cores": "3", "bad key!": "x"}
    assert not fit(template(affinity=required(bad)), node(labels=labels))[0]
    good = {"matchExpressions": [expr("zone", "In", "a")]}
    assert fit(template(affinity=required(bad, good)), node(labels=labels))[0]


def test_field_errors_are_reported() -> None:
    spec = template(affinity=required({"matchFields": [expr("metadata.name", "In", "a", "b")]}))["spec"]
    assert dn.node_affinity_errors(spec) == [
        f"{dn.AFFINITY_PATH}.nodeSelectorTerms[0].matchFields[0].values: Invalid value: ['a', 'b']: "
        "must have one element"
    ]
    assert dn.node_affinity_errors(template()["spec"]) == []


# --- taints and tolerations ---------------------------------------------------------------


def taint(key: str, effect: str, value: str = "") -> dict:
    out = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


@pytest.mark.parametrize(
    ("taints", "tolerations", "expected"),
    [
        ([taint("dedicated", "NoSchedule", "gpu")], [], (False, True)),
        ([taint("dedicated", "NoExecute", "gpu")], [], (False, False)),
        ([taint("dedicated", "PreferNoSchedule", "gpu")], [], (True, True)),
        (
            [taint("dedicated", "NoExecute", "gpu")],
            [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoExecute"}],
            (True, True),
        ),
        (
            [taint("dedicated", "NoExecute", "gpu")],
            [{"key": "dedicated", "value": "gpu"}],  # no operator means Equal; no effect matches all
            (True, True),
        ),
        (
            [taint("dedicated", "NoExecute", "gpu")],
            [{"key": "dedicated", "operator": "Equal", "value": "cpu"}],
            (False, False),
        ),
        (
            [taint("dedicated", "NoExecute", "gpu")],
            [{"key": "dedicated", "operator": "Exists"}],
            (True, True),
        ),
        ([taint("dedicated", "NoExecute", "gpu")], [{"operator": "Exists"}], (True, True)),
        (
            [taint("dedicated", "NoExecute", "gpu")],
            [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
            (False, False),
        ),
        (
            [taint("a", "NoSchedule"), taint("b", "NoExecute")],
            [{"key": "b", "operator": "Exists"}],
            (False, True),
        ),
        (
            [taint("a", "NoSchedule"), taint("b", "NoExecute")],
            [{"key": "a", "operator": "Exists"}],
            (False, False),
        ),
        (
            [taint("dedicated", "NoSchedule")],
            [{"key": "dedicated", "operator": "Gt", "value": "1"}],
            (False, True),
        ),
    ],
)
def test_taints_against_tolerations(taints: list, tolerations: list, expected: tuple[bool, bool]) -> None:
    assert fit(template(tolerations=tolerations), node(taints=taints)) == expected


@pytest.mark.parametrize(
    ("key", "effect"),
    [
        (dn.TAINT_NODE_NOT_READY, "NoExecute"),
        (dn.TAINT_NODE_UNREACHABLE, "NoExecute"),
        (dn.TAINT_NODE_DISK_PRESSURE, "NoSchedule"),
        (dn.TAINT_NODE_MEMORY_PRESSURE, "NoSchedule"),
        (dn.TAINT_NODE_PID_PRESSURE, "NoSchedule"),
        (dn.TAINT_NODE_UNSCHEDULABLE, "NoSchedule"),
    ],
)
def test_daemon_pods_tolerate_node_problem_taints(key: str, effect: str) -> None:
    assert fit(template(), node(taints=[taint(key, effect)])) == (True, True)


def test_node_problem_tolerations_are_effect_specific() -> None:
    # kube adds not-ready only for NoExecute: a NoSchedule not-ready taint still blocks new pods
    assert fit(template(), node(taints=[taint(dn.TAINT_NODE_NOT_READY, "NoSchedule")])) == (False, True)
    assert fit(template(), node(taints=[taint(dn.TAINT_NODE_DISK_PRESSURE, "NoExecute")])) == (False, False)


def test_network_unavailable_tolerated_only_with_host_network() -> None:
    tainted = node(taints=[taint(dn.TAINT_NODE_NETWORK_UNAVAILABLE, "NoSchedule")])
    assert fit(template(), tainted) == (False, True)
    assert fit(template(hostNetwork=True), tainted) == (True, True)


def test_affinity_failure_wins_over_taints() -> None:
    tpl = template(nodeSelector={"disk": "ssd"})
    assert fit(tpl, node(labels={}, taints=[taint("x", "NoSchedule")])) == (False, False)


def test_should_run_does_not_mutate_template() -> None:
    tpl = template(tolerations=[{"key": "x", "operator": "Exists"}])
    before = repr(tpl)
    dn.should_run_on_node(tpl, node(taints=[taint("y", "NoSchedule")]))
    assert repr(tpl) == before


def test_daemon_tolerations_added_in_kube_order() -> None:
    tols = dn.daemon_pod_tolerations(
        {"hostNetwork": True, "tolerations": [{"key": "mine", "operator": "Exists"}]}
    )
    assert [t["key"] for t in tols] == [
        "mine",
        dn.TAINT_NODE_NOT_READY,
        dn.TAINT_NODE_UNREACHABLE,
        dn.TAINT_NODE_DISK_PRESSURE,
        dn.TAINT_NODE_MEMORY_PRESSURE,
        dn.TAINT_NODE_PID_PRESSURE,
        dn.TAINT_NODE_UNSCHEDULABLE,
        dn.TAINT_NODE_NETWORK_UNAVAILABLE,
    ]
    assert all(t["operator"] == "Exists" for t in tols)


def test_bounded_node_problem_toleration_becomes_unbounded() -> None:
    user = {
        "key": dn.TAINT_NODE_NOT_READY,
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    }
    tols = dn.daemon_pod_tolerations({"tolerations": [user]})
    not_ready = [t for t in tols if t["key"] == dn.TAINT_NODE_NOT_READY]
    assert not_ready == [{"key": dn.TAINT_NODE_NOT_READY, "operator": "Exists", "effect": "NoExecute"}]
    assert tols[0]["key"] == dn.TAINT_NODE_NOT_READY  # replaced in place


def test_identical_toleration_is_not_duplicated() -> None:
    user = {"key": dn.TAINT_NODE_UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}
    tols = dn.daemon_pod_tolerations({"tolerations": [user]})
    assert sum(t["key"] == dn.TAINT_NODE_UNREACHABLE for t in tols) == 1


def test_toleration_with_other_operator_is_kept_beside_the_default() -> None:
    user = {"key": dn.TAINT_NODE_UNSCHEDULABLE, "operator": "Equal", "value": "", "effect": "NoSchedule"}
    tols = dn.daemon_pod_tolerations({"tolerations": [user]})
    assert [t for t in tols if t["key"] == dn.TAINT_NODE_UNSCHEDULABLE] == [
        user,
        {"key": dn.TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"},
    ]


# --- the per-node template ----------------------------------------------------------------


def test_bind_to_node_without_affinity() -> None:
    bound = dn.bind_to_node(template(), "n7")
    assert bound["spec"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}
                ]
            }
        }
    }
    assert dn.target_node_name(bound) == "n7"
    assert "nodeName" not in bound["spec"]


def test_bind_to_node_replaces_required_terms_and_keeps_the_rest() -> None:
    preferred = [{"weight": 1, "preference": {"matchExpressions": [expr("zone", "In", "a")]}}]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "a")]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": preferred,
        },
        "podAntiAffinity": {"x": 1},
    }
    tpl = template(affinity=affinity)
    bound = dn.bind_to_node(tpl, "n2")
    node_affinity = bound["spec"]["affinity"]["nodeAffinity"]
    assert node_affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
    ]
    assert node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] == preferred
    assert bound["spec"]["affinity"]["podAntiAffinity"] == {"x": 1}
    # the template itself is untouched
    assert tpl["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ] == [{"matchExpressions": [expr("zone", "In", "a")]}]


def test_bind_to_node_by_controller_sets_node_name() -> None:
    bound = dn.bind_to_node(template(), "n3", by_scheduler=False)
    assert bound["spec"]["nodeName"] == "n3"
    assert bound["spec"]["schedulerName"] == "kubernetes.io/daemonset-controller"
    assert dn.target_node_name(bound) == "n3"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, None),
        ({"affinity": required()}, None),
        ({"affinity": required({"matchFields": [expr("metadata.name", "In", "a", "b")]})}, None),
        ({"affinity": required({"matchFields": [expr("metadata.name", "NotIn", "a")]})}, None),
        (
            {
                "affinity": required(
                    {"matchExpressions": [expr("zone", "In", "a")]},
                    {"matchFields": [expr("metadata.name", "In", "b")]},
                )
            },
            "b",
        ),
        ({"nodeName": "x", "affinity": required({"matchFields": [expr("metadata.name", "In", "b")]})}, "x"),
    ],
)
def test_target_node_name(spec: dict, expected: str | None) -> None:
    assert dn.target_node_name({"spec": spec}) == expected


def test_create_pod_template_labels_and_tolerations() -> None:
    tpl = template()
    made = dn.create_pod_template(tpl, 3, "abc")
    assert made["metadata"]["labels"] == {
        "app": "d",
        "pod-template-generation": "3",
        "controller-revision-hash": "abc",
    }
    assert len(made["spec"]["tolerations"]) == 6
    assert "tolerations" not in tpl["spec"] and tpl["metadata"]["labels"] == {"app": "d"}
    assert dn.create_pod_template(tpl, None, "")["metadata"]["labels"] == {"app": "d"}


# --- properties ---------------------------------------------------------------------------

label_keys = st.sampled_from(["zone", "disk", "gpu", "example.com/role"])
label_values = st.sampled_from(["a", "b", "ssd", "1", "7", "12"])
labels_st = st.dictionaries(label_keys, label_values, max_size=4)
names = st.sampled_from(["n1", "n2", "n3"])


@st.composite
def requirements(draw: st.DrawFn) -> dict:
    operator = draw(st.sampled_from(dn.NODE_SELECTOR_OPERATORS))
    key = draw(label_keys)
    if operator in ("Exists", "DoesNotExist"):
        return expr(key, operator)
    if operator in ("Gt", "Lt"):
        return expr(key, operator, str(draw(st.integers(0, 10))))
    return expr(key, operator, *draw(st.lists(label_values, min_size=1, max_size=3)))


terms_st = st.lists(
    st.fixed_dictionaries(
        {"matchExpressions": st.lists(requirements(), max_size=3)},
        optional={
            "matchFields": st.lists(
                st.builds(
                    lambda op, n: expr("metadata.name", op, n), st.sampled_from(["In", "NotIn"]), names
                ),
                max_size=1,
            )
        },
    ),
    max_size=3,
)


def reference_requirement(req: dict, labels: dict[str, str]) -> bool:
    key, op, values = req["key"], req["operator"], req.get("values", [])
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if key not in labels:
        return False
    try:
        have = int(labels[key])
    except ValueError:
        return False
    return have > int(values[0]) if op == "Gt" else have < int(values[0])


@given(terms=terms_st, labels=labels_st, name=names)
def test_affinity_is_an_or_of_ands(terms: list[dict], labels: dict, name: str) -> None:
    def term_ok(term: dict) -> bool:
        if not term["matchExpressions"] and not term.get("matchFields"):
            return False
        fields_ok = all(
            (name == r["values"][0]) == (r["operator"] == "In") for r in term.get("matchFields", [])
        )
        return fields_ok and all(reference_requirement(r, labels) for r in term["matchExpressions"])

    spec = template(affinity=required(*terms))["spec"]
    assert dn.node_affinity_errors(spec) == []
    assert dn.matches_required_node_affinity(spec, node(name, labels)) == any(term_ok(t) for t in terms)


taint_keys = st.sampled_from(["a", "b", dn.TAINT_NODE_NOT_READY, dn.TAINT_NODE_DISK_PRESSURE])
effects = st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"])
taints_st = st.lists(st.builds(taint, taint_keys, effects, st.sampled_from(["", "x"])), max_size=4)
tolerations_st = st.lists(
    st.builds(
        lambda k, op, v, e: {
            k_: v_ for k_, v_ in {"key": k, "operator": op, "value": v, "effect": e}.items() if v_
        },
        st.sampled_from(["", "a", "b"]),
        st.sampled_from(["", "Equal", "Exists"]),
        st.sampled_from(["", "x"]),
        st.sampled_from(["", "NoSchedule", "NoExecute"]),
    ),
    max_size=3,
)


@given(taints=taints_st, tolerations=tolerations_st, host_network=st.booleans())
def test_taint_rules_properties(taints: list, tolerations: list, host_network: bool) -> None:
    tpl = template(tolerations=tolerations, hostNetwork=host_network)
    should_run, keep = fit(tpl, node(taints=taints))
    # running implies continuing; PreferNoSchedule never matters
    assert not should_run or keep
    assert fit(tpl, node(taints=[t for t in taints if t["effect"] != "PreferNoSchedule"])) == (
        should_run,
        keep,
    )
    # more tolerations never hurt
    wider = template(tolerations=[*tolerations, {"operator": "Exists"}], hostNetwork=host_network)
    assert fit(wider, node(taints=taints)) == (True, True)
    # dropping NoSchedule taints never changes whether a running pod stays
    no_execute_only = [t for t in taints if t["effect"] == "NoExecute"]
    assert fit(tpl, node(taints=no_execute_only))[1] == keep
