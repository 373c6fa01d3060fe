"""The issue-29 counter sees each pattern it claims to count (so a falling number means less duplication,
not a blind counter)."""

from __future__ import annotations

from benchmarks.house_counts import count, sources, summary

SAMPLE = """
Obj = dict
Pod: type = dict

def walk(x):
    return ((x.get("a") or {}).get("b") or {}).get("c")

def one(x):
    return (x.get("spec") or {}).get("replicas")

def fmt(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")

def parse(s):
    return datetime.fromisoformat(s)

def owner(obj):
    return next(r for r in obj["metadata"]["ownerReferences"] if r.get("controller"))

def new_ref(o):
    return {"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u", "controller": True}

def get_c(status, t):
    for c in status.get("conditions") or []:
        if c.get("type") == t:
            return c

def set_c(status, new):
    kept = [c for c in status.get("conditions") or [] if c.get("type") != new["type"]]
    status["conditions"] = [*kept, new]

def reconcile(self, key):
    ok, waited, pending = self.scale_expectations.satisfied(key)
    for pod in pods:
        if not self.rv_expectations.is_satisfied(pod):
            return None

def plain(x):
    'Prose quoting (x.get("a") or {}) is not a chain.'

    return x["a"]  # nor is a comment: (x.get("a") or {})
"""


def test_each_pattern_is_counted_once() -> None:
    counts = count([("control/sample.py", SAMPLE)])
    assert summary(counts) == {
        "or_chain_lines": 2,
        "or_chains": 3,
        "deep_chain_lines": 1,
        "obj_aliases": 2,
        "time_copies": 2,
        "controllerref_copies": 2,
        "get_condition_copies": 1,
        "set_condition_copies": 1,
        "expectations_preambles": 1,
        "status_writers": 0,
        "revision_writers": 0,
    }
    assert counts.or_chains_by_package == {"control": 2}


WRITES = """
async def store(self, cs, status, revision):
    await self.client.patch(CLONESETS, "n", {"status": status}, "ns", subresource="status")
    await self.client.create(CONTROLLER_REVISIONS, revision, "ns")


async def put(self, ud):
    await self.client.update_status(UNITED_DEPLOYMENTS, ud)
"""


def test_status_and_revision_writes_count_in_controllers_not_in_the_writers() -> None:
    counts = count([("manager/controllers/x/reconciler.py", WRITES), ("manager/writers/status.py", WRITES)])
    assert counts.status_writers == [
        "manager/controllers/x/reconciler.py:2 store",
        "manager/controllers/x/reconciler.py:7 put",
    ]
    assert counts.revision_writers == ["manager/controllers/x/reconciler.py:2 store"]


def test_the_shared_homes_are_not_counted_as_copies() -> None:
    homes = ["api/timestamps.py", "api/conditions.py", "api/controllerref.py"]
    counts = count([(home, SAMPLE) for home in homes])
    assert {w.split(":")[0] for w in counts.time_copies} == {"api/conditions.py", "api/controllerref.py"}
    assert {w.split(":")[0] for w in counts.set_condition_copies} == {
        "api/timestamps.py",
        "api/controllerref.py",
    }
    assert {w.split(":")[0] for w in counts.controllerref_copies} == {
        "api/timestamps.py",
        "api/conditions.py",
    }


def test_the_tree_is_readable() -> None:
    files = list(sources())
    assert any(rel == "api/timestamps.py" for rel, _ in files)
    assert all(
        rel.split("/", 1)[0] in {"api", "kube", "control", "manager", "webhook", "daemon"} for rel, _ in files
    )
