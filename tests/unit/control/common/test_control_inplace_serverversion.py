"""Which write an in-place resize is, from the server's gitVersion (upstream ShouldUpdateResourceByResize):
upstream's table of managed-cluster strings, and properties over generated versions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.common.inplace.serverversion import parse_git_version, should_resize_through_subresource


@pytest.mark.parametrize(
    ("git_version", "expected"),
    [
        ("v1.32.0", True),  # the first release with pods/resize
        ("v1.33.0", True),
        ("v1.31.0", False),
        ("v1.28+gke.1", False),  # read as 1.28.1
        ("v1.32+gke.1", True),  # read as 1.32.1
        ("v1.30+eks.1", False),
        ("v1.28+.1", False),
        ("v1.32.0.extra", True),  # the fourth part folds into the patch and is trimmed
        ("", False),
        (None, False),  # never read: the pre-1.32 write
        ("garbage", False),
        ("1.32", False),  # no patch part: upstream's parse fails
        ("1.32.0", True),  # the "v" is optional
        ("v1.32.0-rc.1", True),  # pre-release text is trimmed like build metadata
        ("v1.31.9-eks-1234", False),
        ("v1.36.0", True),  # what the emulator reports by default
        ("v1.x.0", False),  # a part with no leading digit
        ("vv1.32.0", False),  # only one "v" is dropped
        ("v2.0.0", True),
        ("v1.32.99999999999999999999", False),  # beyond int64: upstream's parse fails
    ],
)
def test_upstream_cases(git_version: str | None, expected: bool) -> None:
    assert should_resize_through_subresource(git_version) is expected


def test_parse_reads_managed_cluster_strings() -> None:
    assert parse_git_version("v1.32+gke.1") == (1, 32, 1)
    assert parse_git_version("v1.28+.1") == (1, 28, 1)
    assert parse_git_version("v1.32.0.extra") == (1, 32, 0)
    assert parse_git_version("v1.032.007") == (1, 32, 7)
    assert parse_git_version("v1.32") is None


versions = st.tuples(
    st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=60), st.integers(0, 30)
)
suffixes = st.sampled_from(["", "+gke", "-eks-1", "-rc.1", "+k3s1", ".extra", "-gke.1200"])


@given(versions, suffixes, st.booleans())
def test_decision_is_the_numeric_comparison_with_1_32(
    version: tuple[int, int, int], suffix: str, prefixed: bool
) -> None:
    major, minor, patch = version
    text = f"{'v' if prefixed else ''}{major}.{minor}.{patch}{suffix}"
    assert parse_git_version(text) == version
    assert should_resize_through_subresource(text) is (version >= (1, 32, 0))


@given(st.text(max_size=30))
def test_any_text_gives_an_answer_and_never_raises(text: str) -> None:
    parsed = parse_git_version(text)
    assert should_resize_through_subresource(text) is (parsed is not None and parsed >= (1, 32, 0))
    if parsed is not None:
        # only three dotted parts that each start with an ASCII digit parse
        parts = text.removeprefix("v").split(".", 2)
        assert len(parts) == 3 and all(p[:1].isascii() and p[:1].isdigit() for p in parts)


@given(st.text(alphabet="0123456789.v+-abc", max_size=12))
def test_a_missing_part_never_parses(text: str) -> None:
    if text.removeprefix("v").count(".") < 2:
        assert parse_git_version(text) is None
        assert should_resize_through_subresource(text) is False
