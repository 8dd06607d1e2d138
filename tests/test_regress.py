"""`gammago regress`: reading .tst files, judging answers, and runs against real engines.

The fixtures in tests/data/regress/ are hand-made (capture.tst, forms.tst, capture.sgf).
"""
import json
import os
import sys
import textwrap

import pytest

from gammago import cli
from gammago.arena import gtp_process
from gammago.arena.regress import FAIL, PASS, UPASS, XFAIL, parse_expected, parse_tst

from json_strings import strings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(__file__), "data", "regress")
# the engine of the end-to-end tests: the mercy rule off (on by default on 9x9), for at 200
# playouts it lets the search play elsewhere in capture.sgf's won position
# (docs/notebook/experiments/mercy.md); these tests check the runner, not the engine's reading
GAMMAGO_200 = "gammago --playouts 200 --seed 1 --mercy 0"

# what capture.tst must give for an engine that finds the capture: number -> outcome
CAPTURE_OUTCOMES = {10: PASS, 20: UPASS, 30: FAIL, 40: XFAIL, 50: FAIL, 60: PASS, 70: PASS}


# --- parsing -----------------------------------------------------------------------------------
def test_parse_every_form():
    tst = parse_tst(os.path.join(DATA, "forms.tst"), "forms.tst")
    tests = {t.number: t for t in tst.tests}
    assert sorted(tests) == [1, 2, 3, 4, 5, 6, 7, 9, 10, 11]      # '8' alone is no test

    one = tests[1].expected
    assert (one.negate, one.known_bug, str(one)) == (False, False, "[C3|D4]")
    assert one.matches("C3") and one.matches("d4") and not one.matches("C4")
    assert not one.matches("C33")                  # the whole answer must match

    two = tests[2].expected
    assert two.negate and not two.matches("B2") and two.matches("b3") and two.matches("PASS")

    three = tests[3].expected
    assert three.known_bug and str(three) == "[C3]*" and three.matches("c3")

    assert tests[4].expected.matches("pass") and tests[4].expected.matches("PASS")

    five = tests[5].expected                       # '[ ! (A1|B1) ]': spaces are allowed
    assert five.negate and not five.matches("a1") and not five.matches("B1") and five.matches("C1")

    # reg_genmove and genmove run; Fuego's own commands are skipped
    assert [n for n, t in sorted(tests.items()) if t.runs] == [1, 2, 3, 4, 5, 10]
    assert not tests[6].runs and not tests[7].runs
    assert tests[1].command == "reg_genmove black" and tests[5].command == "genmove b"


def test_parse_setup_and_positions():
    tst = parse_tst(os.path.join(DATA, "forms.tst"), "forms.tst")
    setups = [it for it in tst.items if not hasattr(it, "number")]
    assert [s.text for s in setups] == ["boardsize 9", "komi 6.5", "loadsgf capture.sgf 5"]
    # the comment after 'komi 6.5' is gone; loadsgf's path is made absolute (suite folder)
    assert setups[1].command == "komi 6.5"
    assert setups[2].command == f"loadsgf {os.path.join(os.path.abspath(DATA), 'capture.sgf')} 5"
    assert all(t.position == "loadsgf capture.sgf 5" for t in tst.tests)

    cap = parse_tst(os.path.join(DATA, "capture.tst"), "capture.tst")
    pos = {t.number: t.position for t in cap.tests}
    assert pos[10] == "loadsgf capture.sgf 5" and pos[50] == "loadsgf missing.sgf 5"
    assert pos[60] == pos[70] == "clear_board + 18 play"


def test_parse_errors_name_file_and_line():
    tst = parse_tst(os.path.join(DATA, "forms.tst"), "forms.tst")
    assert [e.split(": ", 1)[0] for e in tst.errors] == [
        "forms.tst:27", "forms.tst:28", "forms.tst:29", "forms.tst:31", "forms.tst:34", "forms.tst:35"]
    text = "\n".join(tst.errors)
    assert "not a GTP command" in text and "'$$ this line is not GTP'" in text
    assert "test 8 has no command" in text
    assert "forms.tst:29: an expected answer without a numbered test" in text
    assert "forms.tst:31: bad answer pattern [C3(]" in text
    assert "forms.tst:34: a second expected answer for test 10" in text
    assert "forms.tst:35: test 11 (reg_genmove b) has no expected answer" in text
    # a test whose answer cannot be read does not run (and is reported once)
    tests = {t.number: t for t in tst.tests}
    assert not tests[9].runs and not tests[11].runs
    assert sum("test 9" in e or ":31:" in e for e in tst.errors) == 1


def test_expected_pattern_forms():
    assert parse_expected("A1|PASS", None).matches("pass")
    assert not parse_expected("!PASS", None).matches("Pass")
    assert parse_expected("[A-T]1?[0-9]", None).matches("K10")       # a regular expression
    assert parse_expected("C3", "*").known_bug
    with pytest.raises(ValueError, match="bad answer pattern"):
        parse_expected("C3(", None)


# --- scripted engines (not engines: they play what the test needs) -------------------------
SCRIPT = textwrap.dedent('''
    import os, sys, time
    mode, log = sys.argv[1], sys.argv[2]
    def note(s):
        with open(log, "a") as f:
            f.write(s + "\\n")
    note("start")
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        cmd, ok, out = words[0], True, ""
        note(raw.strip())
        if cmd == "known_command":
            out = "false" if (mode == "no-reg" and words[1] == "reg_genmove") or words[1] == "go_param_rules" else "true"
        elif cmd == "quit":
            print("=\\n", flush=True)
            break
        elif cmd == "loadsgf" and not os.path.exists(words[1]):
            ok, out = False, "cannot load file"
        elif cmd in ("reg_genmove", "genmove"):
            if mode == "no-reg" and cmd == "reg_genmove":
                ok, out = False, "unknown command"
            elif mode == "crash-once" and not os.path.exists(log + ".crashed"):
                open(log + ".crashed", "w").close()
                sys.exit(3)
            elif mode == "slow-once" and not os.path.exists(log + ".slept"):
                open(log + ".slept", "w").close()
                time.sleep(30)
            else:
                out = "G1"
        print(("= " if ok else "? ") + out + "\\n", flush=True)
''')

SCRIPTED_TST = textwrap.dedent('''
    go_param_rules japanese 1
    loadsgf capture.sgf 5
    1 reg_genmove b
    #? [G1]
    2 reg_genmove b
    #? [G1]
    3 genmove b
    #? [!G1]*
''')


def _scripted(tmp_path, mode):
    script = tmp_path / "scripted_gtp.py"
    script.write_text(SCRIPT)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "capture.sgf").write_text(open(os.path.join(DATA, "capture.sgf")).read())
    (suite / "s.tst").write_text(SCRIPTED_TST)
    log = tmp_path / "log.txt"
    return str(suite), f"{sys.executable} {script} {mode} {log}", log


def _run(argv):
    return cli.main(["regress"] + argv + ["--quiet"])


def test_crash_fails_one_test_and_the_engine_restarts(tmp_path, capsys):
    suite, engine, log = _scripted(tmp_path, "crash-once")
    rec = tmp_path / "r.json"
    assert _run([suite, "--engine", engine, "--json", str(rec)]) == 0
    r = json.loads(rec.read_text())
    got = {t["number"]: (t["result"], t["got"]) for t in r["tests"]}
    assert got == {1: (FAIL, ""), 2: (PASS, "G1"), 3: (XFAIL, "G1")}
    crash = r["tests"][0]["error"]
    assert crash.startswith("crash:") and "died during 'reg_genmove b'" in crash and "exit code 3" in crash
    lines = log.read_text().split()
    assert lines.count("start") == 2
    # the restarted engine was given the position again before test 2; the rules command it
    # does not know was never sent
    second = log.read_text().split("start\n")[2]
    assert "loadsgf" in second.split("reg_genmove")[0]
    assert "go_param_rules japanese" not in log.read_text()
    assert r["notes"] == ["s.tst: 'go_param_rules' left out 1 time(s): the engine does not know it"]
    out = capsys.readouterr().out
    assert "s.tst:1 (line 4) after 'loadsgf capture.sgf 5': reg_genmove b: expected [G1], crash:" in out


def test_timeout_fails_the_test_and_the_run_goes_on(tmp_path):
    suite, engine, log = _scripted(tmp_path, "slow-once")
    rec = tmp_path / "r.json"
    assert _run([suite, "--engine", engine, "--json", str(rec), "--timeout", "2"]) == 0
    r = json.loads(rec.read_text())
    assert [t["result"] for t in r["tests"]] == [FAIL, PASS, XFAIL]
    assert r["tests"][0]["error"].startswith("timeout:")


def test_engine_without_reg_genmove_gets_genmove_and_undo(tmp_path):
    suite, engine, log = _scripted(tmp_path, "no-reg")
    rec = tmp_path / "r.json"
    assert _run([suite, "--engine", engine, "--json", str(rec)]) == 0
    r = json.loads(rec.read_text())
    assert [t["result"] for t in r["tests"]] == [PASS, PASS, XFAIL]
    sent = log.read_text().splitlines()
    assert "reg_genmove b" not in sent
    assert sent.count("genmove b") == 3 and sent.count("undo") == 3


def test_missing_suite_and_no_match(tmp_path, capsys):
    assert _run([str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such folder" in capsys.readouterr().err
    assert _run([DATA, "--files", "*ladder*.tst"]) == 2
    assert "no .tst file" in capsys.readouterr().err


# --- real engines ----------------------------------------------------------------------------
def _check_capture_record(rec, engine):
    r = json.loads(rec.read_text())
    assert r["engine"] == engine and r["finished"]
    outcome = {t["number"]: t["result"] for t in r["tests"]}
    assert outcome == CAPTURE_OUTCOMES
    by_number = {t["number"]: t for t in r["tests"]}
    assert by_number[10]["got"].upper() == "G1" and by_number[60]["got"].upper() == "F1"
    assert by_number[70]["got"].upper() == "F1"
    assert "missing.sgf" in by_number[50]["error"] and by_number[50]["got"] == ""
    for t in r["tests"]:
        assert set(t) >= {"file", "number", "command", "expected", "got", "result", "seconds"}
        assert t["file"] == "capture.tst" and t["seconds"] >= 0
    total = r["total"]
    assert (total["tests"], total[PASS], total[FAIL], total[UPASS], total[XFAIL], total["skipped"]) \
        == (7, 3, 2, 1, 1, 1)
    assert total["pass_rate"] == round(4 / 7, 4)
    assert r["files"]["capture.tst"] == {k: v for k, v in total.items() if k != "wall_s"}
    assert total["wall_s"] >= total["seconds"] >= 0
    # forms.tst was not selected: its errors are not reported
    assert r["parse_errors"] == []


def test_gammago_end_to_end(tmp_path, capsys, monkeypatch):
    """The suite given relative (run from the checkout): the record names it so, and the
    engine's build and argv hold no absolute path of this machine either."""
    monkeypatch.chdir(ROOT)
    suite = os.path.relpath(DATA, ROOT)
    rec = tmp_path / "r.json"
    assert _run([suite, "--files", "capture.tst", "--engine", GAMMAGO_200, "--json", str(rec)]) == 0
    _check_capture_record(rec, GAMMAGO_200)
    r = json.loads(rec.read_text())
    assert r["suite"] == suite and r["build"].split(" ")[0] == "gammago"
    assert r["argv"][:4] == [os.path.basename(sys.executable), *gtp_process.SAFE_PATH, "-m", "gammago"]
    absolute = [s for s in strings(r) if ROOT in s or s.startswith(os.sep)]
    assert not absolute, absolute
    out = capsys.readouterr().out
    assert "capture.tst      7     3     2           1         1        1      57.1%" in out
    assert "capture.tst:30 (line 13) after 'loadsgf capture.sgf 5': reg_genmove black: expected [!G1], got G1" in out
    assert "unexpected PASS (1):" in out


@pytest.mark.gnugo
def test_gnugo_end_to_end(tmp_path, gnugo_path, capsys):
    engine = (f"{gnugo_path} --mode gtp --chinese-rules --capture-all-dead --positional-superko "
              "--level 10 --seed {seed}")
    rec = tmp_path / "r.json"
    assert _run([DATA, "--files", "cap*.tst", "--engine", engine, "--json", str(rec)]) == 0
    _check_capture_record(rec, engine)
    r = json.loads(rec.read_text())
    assert r["argv"][0] == gnugo_path and r["argv"][-2:] == ["--seed", "1"]
    assert r["build"] == ""                      # not a gammago


def test_an_engine_running_other_code_than_its_pythonpath_is_refused(tmp_path, capsys):
    """`python -m gammago` from the checkout runs the checkout's gammago, whatever PYTHONPATH
    says: the run is refused before any test, naming both."""
    other = tmp_path / "old-build"
    other.mkdir()
    engine = f"env PYTHONPATH={other} {sys.executable} -m gammago gtp --playouts 20 --quiet"
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert _run([DATA, "--files", "capture.tst", "--engine", engine]) == 2
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert str(other) in err and os.path.join(ROOT, "gammago") in err


def test_parse_errors_reported_and_the_run_goes_on(tmp_path, capsys):
    rec = tmp_path / "r.json"
    assert _run([DATA, "--engine", GAMMAGO_200, "--json", str(rec)]) == 0
    err = capsys.readouterr().err
    assert "warning: forms.tst:27: not a GTP command" in err
    r = json.loads(rec.read_text())
    assert len(r["parse_errors"]) == 6
    # both files ran: forms.tst's six runnable tests and capture.tst's seven
    assert r["files"]["forms.tst"]["tests"] == 6 and r["files"]["forms.tst"]["skipped"] == 4
    assert r["total"]["tests"] == 13
