from kruise.kube.clock import FakeClock
from kruise.kube.expectations import ControllerExpectations, ResourceVersionExpectations


def test_no_record_is_satisfied():
    assert ControllerExpectations(FakeClock()).satisfied("ns/a")


def test_creations_lowered_by_observations():
    exp = ControllerExpectations(FakeClock())
    exp.expect_creations("ns/a", 2)
    assert not exp.satisfied("ns/a")
    exp.creation_observed("ns/a")
    assert not exp.satisfied("ns/a")
    exp.creation_observed("ns/a")
    assert exp.satisfied("ns/a")
    assert exp.get("ns/a") == (0, 0)


def test_deletions_and_raise():
    exp = ControllerExpectations(FakeClock())
    exp.set("k", add=1, delete=1)
    exp.raise_("k", delete=1)
    exp.creation_observed("k")
    exp.deletion_observed("k")
    assert not exp.satisfied("k")
    exp.deletion_observed("k")
    assert exp.satisfied("k")


def test_expectations_expire_after_timeout():
    clock = FakeClock()
    exp = ControllerExpectations(clock, timeout=300)
    exp.expect_deletions("k", 3)
    clock.step(300)
    assert not exp.satisfied("k")
    clock.step(0.001)
    assert exp.satisfied("k") and exp.expired("k")
    exp.delete("k")
    assert exp.get("k") is None


def obj(uid: str, rv: str) -> dict:
    return {"metadata": {"uid": uid, "resourceVersion": rv}}


def test_resource_version_expectation_waits_for_newer_cache():
    exp = ResourceVersionExpectations(FakeClock())
    exp.expect(obj("u1", "10"))
    assert not exp.is_satisfied(obj("u1", "9"))
    assert exp.is_satisfied(obj("u1", "10"))
    assert exp.is_satisfied(obj("u1", "9"))  # record dropped once satisfied


def test_resource_version_expectation_keeps_highest_and_observe():
    exp = ResourceVersionExpectations(FakeClock())
    exp.expect(obj("u1", "12"))
    exp.expect(obj("u1", "11"))
    exp.observe(obj("u1", "11"))
    assert not exp.is_satisfied(obj("u1", "11"))
    exp.observe(obj("u1", "13"))
    assert len(exp) == 0


def test_resource_version_unparsable_counts_as_newer_and_timeout():
    clock = FakeClock()
    exp = ResourceVersionExpectations(clock, timeout=5)
    exp.expect(obj("u1", "10"))
    assert exp.is_satisfied(obj("u1", "abc"))
    exp.expect(obj("u2", "10"))
    clock.step(6)
    assert exp.is_satisfied(obj("u2", "1"))
    exp.expect(obj("", "10"))
    assert len(exp) == 0
