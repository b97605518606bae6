"""The first difference between two JSON values, with its path: what every failure that compares names."""

from anthropic.types import TextBlock

from looplab.checks.difference import ABSENT, Difference, first_difference, shown


def said(yours, expected, path="messages[2]"):
    return str(first_difference(yours, expected, path))


def test_the_same_values_have_no_difference():
    assert first_difference({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]}) is None
    assert first_difference(2, 2.0) is None  # the same JSON number


def test_a_field_is_named_by_its_path_with_both_sides_whole():
    yours = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "851"}]}
    expected = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_y", "content": "851"}]}
    assert said(yours, expected) == "messages[2].content[0].tool_use_id: yours 'toolu_x', expected 'toolu_y'"


def test_a_missing_or_extra_field_or_item_is_nothing_on_one_side():
    assert said({"role": "assistant", "content": [], "id": "msg_1"}, {"role": "assistant", "content": []},
                "messages[1]") == "messages[1].id: yours 'msg_1', expected nothing"
    assert said([1], [1, 2], "xs") == "xs[1]: yours nothing, expected 2"
    assert first_difference({"a": 1}, {"a": 1, "b": 2}).yours is ABSENT


def test_blocks_of_different_types_are_shown_whole():
    assert said([{"type": "tool_use", "id": "t"}], [{"type": "text", "text": "Hi"}], "content") == (
        'content[0]: yours {"type": "tool_use", "id": "t"}, expected {"type": "text", "text": "Hi"}')


def test_json_types_count_true_is_not_1_and_a_string_is_not_a_number():
    assert said(True, 1, "is_error") == "is_error: yours true, expected 1"
    assert said("2", 2, "content") == "content: yours '2', expected 2"


def test_sdk_objects_count_as_their_json_and_nothing_is_cut():
    long_text = "x" * 500
    difference = first_difference([TextBlock(type="text", text=long_text)], [{"type": "text", "text": "y"}], "c")
    assert difference == Difference("c[0].text", long_text, "y")
    assert repr(long_text) in str(difference)
    assert shown(ABSENT) == "nothing"
