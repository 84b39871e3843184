"""The rule options as data: RULE_OPTIONS, Rules.from_dict / key / label."""

from __future__ import annotations

import pytest

from donutbox.core import RULE_OPTIONS, RecordError, Rules


def test_the_options_in_order_with_their_json_shape() -> None:
    assert [o.name for o in RULE_OPTIONS] == ["match", "layout", "closers"]
    assert [o.kind for o in RULE_OPTIONS] == ["choice", "choice", "flag"]
    match = RULE_OPTIONS[0].to_dict()
    assert list(match) == ["name", "label", "help", "kind", "default", "choices"]
    assert match["label"] == "Matching" and match["default"] == "one-good-match"
    assert [(c["value"], c["label"]) for c in match["choices"]] == [
        ("one-good-match", "One Good Match"),
        ("perfect-match", "Perfect Match"),
    ]
    assert all(list(c) == ["value", "label", "help"] and c["help"] for c in match["choices"])
    layout = RULE_OPTIONS[1].to_dict()
    assert [(c["value"], c["label"]) for c in layout["choices"]] == [
        ("squared-away", "Squared Away"),
        ("splitzkies", "Splitzkies"),
    ]
    closers = RULE_OPTIONS[2].to_dict()
    assert {k: v for k, v in closers.items() if k != "help"} == {
        "name": "closers",
        "label": "Coffee's For Closers",
        "kind": "flag",
        "default": False,
        "choices": [],
    }
    assert closers["help"] and "\n" not in closers["help"]


def test_defaults_are_the_default_rules() -> None:
    assert Rules(**{o.name: o.default for o in RULE_OPTIONS}) == Rules()  # type: ignore[arg-type]


def test_from_dict_reads_every_option_and_defaults_the_missing_ones() -> None:
    assert Rules.from_dict({}) == Rules()
    assert Rules.from_dict({"layout": "splitzkies"}) == Rules(layout="splitzkies")
    full = {"match": "perfect-match", "layout": "splitzkies", "closers": True}
    assert Rules.from_dict(full) == Rules("perfect-match", "splitzkies", True)
    for rules in Rules.all():
        assert Rules.from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("perfect-match", "rules must be an object"),
        ({"speed": "fast"}, "rules: unknown key 'speed'"),
        ({"match": 3}, "rules.match must be a string"),
        ({"match": "best-match"}, "rules.match must be one of one-good-match, perfect-match"),
        ({"layout": "round"}, "rules.layout must be one of squared-away, splitzkies"),
        ({"closers": "yes"}, "rules.closers must be true or false"),
        ({"closers": 1}, "rules.closers must be true or false"),
    ],
)
def test_from_dict_names_the_field(data: object, words: str) -> None:
    with pytest.raises(RecordError) as info:
        Rules.from_dict(data)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_from_dict_names_the_field_under_a_given_path() -> None:
    with pytest.raises(RecordError, match=r"^body\.rules\.layout must be one of"):
        Rules.from_dict({"layout": "round"}, where="body.rules")


def test_keys_and_labels() -> None:
    assert Rules().key() == "ogm-sa"
    assert Rules("perfect-match", "splitzkies", True).key() == "pm-spl-closers"
    assert Rules(closers=True).key() == "ogm-sa-closers"
    keys = [r.key() for r in Rules.all()]
    assert len(set(keys)) == 8
    assert all(Rules.from_key(k).key() == k for k in keys)
    with pytest.raises(RecordError, match="rules key"):
        Rules.from_key("ogm")
    assert Rules().label() == "One Good Match, Squared Away"
    assert (
        Rules("perfect-match", "splitzkies", True).label()
        == "Perfect Match, Splitzkies, Coffee's For Closers"
    )


def test_rules_own_their_policies() -> None:
    assert Rules().match_rule.name == "one-good-match"
    assert Rules(match="perfect-match").match_rule.label == "Perfect Match"
    assert Rules().layout_rule.step == 2 and Rules().squared
    assert Rules(layout="splitzkies").layout_rule.step == 1
    assert not Rules(layout="splitzkies").squared


# -- the policies, worked by hand ---------------------------------------------------
#
# A requirement packs, per quadrant NW, NE, SE, SW (bits 4i), the flavours the
# quadrant would touch (bit 0 C, 1 S, 2 H, 3 B).  Face CCSS turned:
#   0: CCSS   90: SCCS   180: SSCC   270: CSSC   (NW, NE, SE, SW).

NW_C = 1  # only the NW quadrant touches, a C
NW_C_NE_S = 1 | 2 << 4  # NW touches a C, NE an S


def test_one_good_match_needs_one_agreeing_pair() -> None:
    ogm = Rules().match_rule
    assert ogm.fits("CCSS", NW_C) == ((0, ""), (270, ""))
    # 0: NW C=C; 90: S/C and C/S; 180: NE S=S; 270: C=C and S=S.
    assert ogm.fits("CCSS", NW_C_NE_S) == ((0, ""), (180, ""), (270, ""))
    assert ogm.mismatch("SCCS", [1, 2, 0, 0]) == "One Good Match: no touching pair agrees"


def test_perfect_match_needs_every_touching_quadrant_to_agree() -> None:
    pm = Rules(match="perfect-match").match_rule
    assert pm.fits("CCSS", NW_C) == ((0, ""), (270, ""))
    assert pm.fits("CCSS", NW_C_NE_S) == ((270, ""),)
    assert pm.mismatch("CCSS", [1, 2, 0, 0]) == (
        "Perfect Match: the C at NE agrees with none of the donuts it touches"
    )
    assert pm.mismatch("CSSC", [1, 2, 0, 0]) is None


def test_a_new_matching_rule_is_one_policy_object() -> None:
    from collections.abc import Sequence

    from donutbox.core import MatchRule

    class NoMatch(MatchRule):
        """Anything goes: no pair needs to agree."""

        __slots__ = ()

        def accepts(self, agree: Sequence[bool], touched: Sequence[bool]) -> bool:
            return True

        def why_not(self, quads: str, agree: Sequence[bool], touched: Sequence[bool]) -> str:
            raise AssertionError("never refuses")

    rule = NoMatch("no-match", "No Match", "Any card fits.", "nm")
    assert rule.fits("CCSS", NW_C) == ((0, ""), (90, ""), (180, ""), (270, ""))
    # A roll touching nothing locks to one of its card neighbours (S or H).
    assert rule.fits("RSCH", NW_C_NE_S << 8)[:2] == ((0, "S"), (0, "H"))


def test_layouts() -> None:
    squared = Rules().layout_rule
    assert squared.allows(2, -4) and not squared.allows(1, 0) and not squared.allows(0, 3)
    assert squared.why_not(1, 0) == "Squared Away: a card's x and y must both be even"
    assert Rules(layout="splitzkies").layout_rule.allows(1, -3)
