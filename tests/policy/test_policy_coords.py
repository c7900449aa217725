"""Coordinate conventions: exact conversions both ways, for each model family."""
import math

import pytest

from weblica.env.actions import VIEWPORT_HEIGHT, VIEWPORT_WIDTH
from weblica.policy.context import check_response
from weblica.policy.coords import CoordinateFrame, frame_for_model_type, smart_resize


def test_smart_resize_matches_qwen25_processor_on_known_sizes():
    # values of the Qwen2.5-VL processor (factor 28, 4*28*28 .. 16384*28*28)
    assert smart_resize(720, 1280) == (728, 1288)
    assert smart_resize(1080, 1920) == (1092, 1932)
    assert smart_resize(28, 28) == (56, 56)  # lifted to min_pixels
    h, w = smart_resize(8000, 8000)  # capped at max_pixels, floored to the factor
    assert h * w <= 16384 * 28 * 28 and h % 28 == 0 and w % 28 == 0
    assert (h, w) == (3584, 3584)


def test_smart_resize_agrees_with_transformers():
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize as reference

    for h, w in [(720, 1280), (1, 200), (333, 777), (4000, 3000), (100, 20000)]:
        kwargs = dict(factor=28, min_pixels=4 * 28 * 28, max_pixels=16384 * 28 * 28)
        assert smart_resize(h, w, **kwargs) == reference(h, w, **kwargs), (h, w)


def test_smart_resize_rejects_extreme_aspect():
    with pytest.raises(ValueError, match="aspect"):
        smart_resize(1, 300)


def test_relative1000_integer_round_trip_is_exact():
    frame = CoordinateFrame.for_convention("relative1000")
    for gx in range(0, 1000, 7):
        for gy in (0, 1, 499, 500, 999):
            px, py = frame.to_viewport(gx, gy)
            assert frame.from_viewport(px, py) == (gx, gy)
    assert frame.to_viewport(500, 500) == (640.0, 360.0)
    assert frame.to_viewport(250, 100) == (320.0, 72.0)


def test_relative1000_pixel_round_trip_error_is_half_a_grid_cell():
    frame = CoordinateFrame.for_convention("relative1000")
    for px in range(0, VIEWPORT_WIDTH, 13):
        for py in range(0, VIEWPORT_HEIGHT, 11):
            bx, by = frame.to_viewport(*frame.from_viewport(px, py))
            assert abs(bx - px) <= VIEWPORT_WIDTH / 1000 / 2 + 1e-9
            assert abs(by - py) <= VIEWPORT_HEIGHT / 1000 / 2 + 1e-9


def test_relative1000_far_edge_is_clamped_inside_viewport():
    frame = CoordinateFrame.for_convention("relative1000")
    assert frame.to_viewport(1000, 1000) == (VIEWPORT_WIDTH - 1, VIEWPORT_HEIGHT - 1)
    assert frame.to_viewport(-5, 0) == (0.0, 0.0)


def test_smart_resize_frame_round_trips_both_ways():
    frame = CoordinateFrame.for_convention("smart_resize")
    assert (frame.model_width, frame.model_height) == (1288, 728)
    for mx in range(0, 1288, 23):
        for my in range(0, 728, 29):
            assert frame.from_viewport(*frame.to_viewport(mx, my)) == (mx, my)
    # a pixel maps to model units and back within half a model unit (model units are finer than pixels)
    for px in range(0, VIEWPORT_WIDTH, 17):
        bx, _ = frame.to_viewport(*frame.from_viewport(px, 0))
        assert abs(bx - px) <= 0.5 * VIEWPORT_WIDTH / 1288 + 1e-9
    assert frame.to_viewport(644, 364) == (640.0, 360.0)


def test_viewport_frame_is_identity():
    frame = CoordinateFrame.for_convention("viewport")
    assert frame.to_viewport(123.5, 456.25) == (123.5, 456.25)
    assert frame.from_viewport(123, 456) == (123, 456)


def test_frame_for_model_type():
    assert frame_for_model_type("qwen3_vl").convention == "relative1000"
    assert frame_for_model_type("qwen3_vl_moe").convention == "relative1000"
    assert frame_for_model_type("qwen2_5_vl").convention == "smart_resize"
    assert frame_for_model_type("llava").convention == "viewport"
    with pytest.raises(ValueError, match="unknown coordinate convention"):
        CoordinateFrame.for_convention("percent")


@pytest.mark.parametrize("convention,call_xy,expected", [
    ("relative1000", (500, 900), (640.0, 648.0)),   # y=900 is out of the viewport as pixels, fine as grid
    ("smart_resize", (1284, 700), (1280 * 1284 / 1288, 720 * 700 / 728)),
    ("viewport", (10, 20), (10.0, 20.0)),
])
def test_model_calls_reach_env_in_viewport_pixels(convention, call_xy, expected):
    frame = CoordinateFrame.for_convention(convention)
    x, y = call_xy
    text = f'<think>go</think><tool_call>{{"name": "click", "arguments": {{"x": {x}, "y": {y}}}}}</tool_call>'
    check = check_response(text, frame)
    assert check.ok, check.errors
    assert (check.actions[0].args["x"], check.actions[0].args["y"]) == pytest.approx(expected)


def test_all_coordinate_arguments_are_converted():
    frame = CoordinateFrame.for_convention("relative1000")
    text = ("<think>t</think>"
            '<tool_call>{"name": "drag", "arguments": {"x1": 0, "y1": 0, "x2": 500, "y2": 1000}}</tool_call>'
            '<tool_call>{"name": "type", "arguments": {"text": "hi", "x": 100, "y": 900}}</tool_call>'
            '<tool_call>{"name": "scroll", "arguments": {"direction": "down", "x": 500, "y": 500}}</tool_call>'
            '<tool_call>{"name": "hover", "arguments": {"coordinate": [250, 250]}}</tool_call>')
    check = check_response(text, frame)
    assert check.ok, check.errors
    drag, write, scroll, hover = check.actions
    assert (drag.args["x2"], drag.args["y2"]) == (640.0, VIEWPORT_HEIGHT - 1)
    assert (write.args["x"], write.args["y"]) == (128.0, 648.0)
    assert (scroll.args["x"], scroll.args["y"]) == (640.0, 360.0)
    assert (hover.args["x"], hover.args["y"]) == (320.0, 180.0)


def test_without_conversion_the_env_would_reject_grid_coordinates():
    # the reason conversion happens before validation: y=900 is invalid as a viewport pixel
    text = '<think>t</think><tool_call>{"name": "click", "arguments": {"x": 10, "y": 900}}</tool_call>'
    assert not check_response(text, CoordinateFrame.for_convention("viewport")).ok
    assert check_response(text, CoordinateFrame.for_convention("relative1000")).ok
    assert math.isclose(check_response(text, CoordinateFrame.for_convention("relative1000")).actions[0].args["x"], 12.8)
