"""User-written regexes compile and match as Go's `regexp` (RE2 syntax, MatchString = search).

The refused table's messages are Go 1.23's `*syntax.Error` texts for those patterns (derived from
Go's regexp/syntax parser: the error code and the offending piece it reports).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api import goregexp

REFUSED = [
    # Perl constructs RE2 (and Go) leave out; Python's re takes every one of these.
    (r"app-(?=main)", "invalid or unsupported Perl syntax: `(?=`"),
    (r"(?!sidecar)", "invalid or unsupported Perl syntax: `(?!`"),
    (r"(?#comment)app", "invalid or unsupported Perl syntax: `(?#`"),
    (r"(?P=name)", "invalid or unsupported Perl syntax: `(?P`"),
    (r"(?'n'a)", "invalid or unsupported Perl syntax: `(?'`"),
    (r"(?i", "invalid or unsupported Perl syntax: `(?i`"),
    (r"(?i-)a", "invalid or unsupported Perl syntax: `(?i-)`"),
    (r"(a)\1", "invalid escape sequence: `\\1`"),
    (r"a++", "invalid nested repetition operator: `++`"),
    (r"a*+", "invalid nested repetition operator: `*+`"),
    (r"a**", "invalid nested repetition operator: `**`"),
    (r"a{2}{3}", "invalid nested repetition operator: `{2}{3}`"),
    (r"\Z", "invalid escape sequence: `\\Z`"),
    (r"\q", "invalid escape sequence: `\\q`"),
    (r"\8", "invalid escape sequence: `\\8`"),
    (r"\xZZ", "invalid escape sequence: `\\xZZ`"),
    # Go-only refusals RE2 itself would accept.
    (r"\C", "invalid escape sequence: `\\C`"),
    (r"app\C+", "invalid escape sequence: `\\C`"),
    (r"(?P<ñ>a)", "invalid named capture: `(?P<ñ>`"),
    (r"(?<=a)b", "invalid named capture: `(?<=a)b`"),
    (r"(?<!a)b", "invalid named capture: `(?<!a)b`"),
    (r"(?P<n", "invalid named capture: `(?P<n`"),
    (r"(?P<>a)", "invalid named capture: `(?P<>`"),
    (r"(?P<a-b>a)", "invalid named capture: `(?P<a-b>`"),
    # Structure.
    ("app-(", "missing closing ): `app-(`"),
    ("(", "missing closing ): `(`"),
    ("a)b", "unexpected ): `a)b`"),
    ("[a", "missing closing ]: `[a`"),
    ("[z-a]", "invalid character class range: `z-a`"),
    ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
    (r"\pX", "invalid character class range: `\\pX`"),
    (r"\p{greek}", "invalid character class range: `\\p{greek}`"),
    ("*a", "missing argument to repetition operator: `*`"),
    ("a{1001}", "invalid repeat count: `{1001}`"),
    ("a{2,1}", "invalid repeat count: `{2,1}`"),
    ("((a{100}){100}){100}", "invalid repeat count: `{100}`"),
    ("a\\", "trailing backslash at end of expression: ``"),
    # The first error wins, RE2's or Go's own.
    (r"a)\C", "unexpected ): `a)\\C`"),
    (r"(\C", "invalid escape sequence: `\\C`"),
    (r"[a\C]", "invalid escape sequence: `\\C`"),
]

ACCEPTED = [
    r"\d+",
    r"^app-\w+$",
    r".*",
    r"(?i)APP",
    r"(?i:app)-(?s:.)(?m:^x$)(?U:a+)",
    r"(?P<name>a)(?<other>b)",
    r"(?P<n>a)(?P<n>b)",  # Go takes a repeated name
    r"\\C",  # an escaped backslash and a C
    r"\Q\C(?=\E",  # literal text
    r"[\d-z]",
    r"[]a]",
    r"[^]a]",
    r"[[:alpha:]]+",
    r"\pL\p{Greek}\PN\p{^Han}\p{Any}",
    r"\x41\x{10FFFF}\0\012\_\-",
    r"a{,5}",  # not a repeat: literal text
    r"a{1000}",
    "(?)",
    "",
]


@pytest.mark.parametrize(("pattern", "message"), REFUSED)
def test_go_refuses_with_its_error_text(pattern: str, message: str) -> None:
    with pytest.raises(goregexp.GoRegexpError) as caught:
        goregexp.compile(pattern)
    assert str(caught.value) == f"error parsing regexp: {message}"


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_go_accepts(pattern: str) -> None:
    assert goregexp.compile(pattern).pattern == pattern


def test_a_huge_program_is_too_large_not_a_crash() -> None:
    """RE2's 8 MiB budget (a documented gap: Go still builds this one) reads as Go's ErrLarge."""
    with pytest.raises(goregexp.GoRegexpError, match=r"^error parsing regexp: expression too large: `"):
        goregexp.compile(r"\pL{1000}")


def test_a_lone_surrogate_is_invalid_utf8_and_the_message_still_encodes() -> None:
    with pytest.raises(goregexp.GoRegexpError) as caught:
        goregexp.compile("ab\ud800c")
    assert str(caught.value) == "error parsing regexp: invalid UTF-8: `\ufffdc`"
    str(caught.value).encode("utf-8")


MATCHES = [
    # MatchString is an unanchored search.
    ("app", "my-app-1", True),
    ("1$", "app1", True),
    ("^app", "my-app", False),
    ("^app$", "app", True),
    # `$` without (?m) is the end of the text only (Python's also matches before a final newline).
    ("app$", "app\n", False),
    ("(?m)app$", "app\nx", True),
    # Perl classes are ASCII in Go (Unicode in Python's re).
    (r"\d", "٣", False),
    (r"\d", "v3", True),
    (r"^\w+$", "café", False),
    (r"\s", "\v", False),
    (r"\s", "a b", True),
    (r"\bapp\b", "x-app-y", True),
    (r"\pN", "٣", True),
    # Flags.
    ("(?i)APP", "my-app", True),
    ("APP", "my-app", False),
    ("(?i)k", "\u212a", True),  # Kelvin sign folds to k, as Go's simple folding
    ("(?i:a)b", "AB", False),
    ("(?s)a.b", "a\nb", True),
    ("a.b", "a\nb", False),
    # Escapes and literal text.
    (r"\Qa.b\E", "a.b", True),
    (r"\Qa.b\E", "axb", False),
    (r"\x41", "A", True),
    ("", "anything", True),
    ("é+", "café", True),
]


@pytest.mark.parametrize(("pattern", "text", "matched"), MATCHES)
def test_match_string(pattern: str, text: str, matched: bool) -> None:
    assert goregexp.compile(pattern).match_string(text) is matched


def test_a_lone_surrogate_in_the_text_is_matched_as_the_replacement_character() -> None:
    assert goregexp.compile("a\ufffdb").match_string("a\ud800b")


@given(literal=st.text(max_size=12), text=st.text(max_size=24))
def test_an_escaped_literal_matches_exactly_the_texts_that_contain_it(literal: str, text: str) -> None:
    """Python's re.escape output (backslash before ASCII punctuation) is valid Go syntax too."""
    literal = "".join(ch for ch in literal if not "\ud800" <= ch <= "\udfff")
    text = "".join(ch for ch in text if not "\ud800" <= ch <= "\udfff")
    compiled = goregexp.compile(re.escape(literal))
    assert compiled.match_string(text + literal + text)
    assert compiled.match_string(text) is (literal in text)


@given(pattern=st.text(alphabet=st.sampled_from(list("ab()[]{}?*+|^$.\\:-<>=!PQECdwsx1,0^")), max_size=14))
def test_any_pattern_compiles_or_gives_a_go_error(pattern: str) -> None:
    """Random syntax soup never escapes as another exception, and errors read as Go's."""
    try:
        goregexp.compile(pattern)
    except goregexp.GoRegexpError as exc:
        assert str(exc).startswith("error parsing regexp: ")
        assert exc.code and str(exc).endswith("`")
