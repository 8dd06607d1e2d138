"""KaTrain 1.20's real window on `gammago analysis` (tools/katrain_window.py): under Xvfb, a
game opened in KaTrain and stepped through move by move with xdotool, every query answered and
no exception in KaTrain's log. The 9x9 walk runs in the suite (about 30 s); the whole 19x19
game is `-m benchmark`. Skipped without Xvfb, xdotool, xwininfo, ImageMagick or katrain."""
import pathlib

import pytest

from tool_module import load_tool

kw = load_tool("katrain_window")
DATA = pathlib.Path(__file__).resolve().parent


def test_exceptions_found_and_kivys_missing_libraries_set_apart():
    log = "\n".join([
        "[ERROR  ] [Input       ] MTDev is not supported by your version of linux",
        "Traceback (most recent call last):",
        '  File "mtdev.py", line 30, in <module>',
        "OSError: libmtdev.so.1: cannot open shared object file: No such file or directory",
        "xclip - FileNotFoundError: [Errno 2] No such file or directory: 'xclip'",
        '  File "clipboard_xclip.py", line 17, in <module>',
        "",
        'Sending query QUERY:3: {"id": "QUERY:3", "overrideSettings": {}}',
        "[0.4][QUERY:3][done] KataGo analysis received: 5 candidate moves, 20 visits",
        "ERROR: Error in engine callback for query QUERY:4: 'scoreLead'",
        "Traceback (most recent call last):",
        '  File "game_node.py", line 1, in points_lost',
        "TypeError: unsupported operand type(s) for -: 'float' and 'NoneType'",
    ])
    environment = []
    found = kw.exceptions(log, environment)
    assert found == ["ERROR: Error in engine callback for query QUERY:4: 'scoreLead'",
                     "Traceback (most recent call last):",
                     "TypeError: unsupported operand type(s) for -: 'float' and 'NoneType'"]
    assert len(environment) == 3


def test_config_is_the_packages_with_the_custom_engine(tmp_path):
    pytest.importorskip("katrain")
    path = kw.write_config(tmp_path, kw.engine_command(), visits=7, fast_visits=3)
    import json
    config = json.loads(path.read_text())
    assert config["engine"]["backend"] == "custom"
    assert "-m gammago analysis" in config["engine"]["altcommand"]
    assert config["engine"]["max_visits"] == 7 and config["engine"]["fast_visits"] == 3
    assert config["ui_state"]["play"]["analysis_controls"]["hints"] is True
    assert config["general"]["version"]             # KaTrain keeps a config of its own version


def walk_or_skip(sgf, **kwargs):
    gone = kw.missing_tools()
    if gone:
        pytest.skip("missing: " + ", ".join(gone))
    report = kw.walk(sgf, **kwargs)
    assert report["alive"], report
    assert report["stepped"] == report["moves"], report
    assert report["exceptions"] == [], report["exceptions"][:20]
    assert report["outstanding"] == [], report
    assert report["empty_answers"] == 0, report
    assert report["answers"] >= report["moves"], report        # the whole game was analysed
    return report


def test_katrain_window_steps_through_a_9x9_game():
    walk_or_skip(DATA / "games9" / "selfplay-game_0001.sgf", visits=10, fast_visits=5,
                 step_wait=20)


@pytest.mark.benchmark
def test_katrain_window_steps_through_a_19x19_game(tmp_path):
    report = walk_or_skip(DATA / "data" / "2006-11-27-43.sgf", visits=20, fast_visits=10,
                          step_wait=30, shots=tmp_path)
    assert (tmp_path / "board-19.png").stat().st_size > 10000, report
