"""Ctrl-C while gpu-dpsyn is still importing (numpy, pandas: about half a second) printed
Python's traceback: main()'s handler is not running yet. The command now says one line
and exits 130, as for an interrupt later on; a program that imports gpu_dpsyn still gets
its KeyboardInterrupt."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the import of numpy (the first slow one) announces itself, then waits for the signal:
# the interrupt lands inside gpu_dpsyn's import at a known point, with no timing guess
SLOW_IMPORT = """
import os, sys, time
class SlowNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("SLOW_MODULE", "numpy"):
            sys.meta_path.remove(self)
            print("importing", flush=True)
            time.sleep(60)
        return None
sys.meta_path.insert(0, SlowNumpy())
"""
# what pip writes for the gpu-dpsyn console script
WRAPPER = """import re
import sys
from gpu_dpsyn.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def _interrupted(tmp_path, argv, slow="numpy"):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SLOW_IMPORT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hook), str(ROOT)]),
               SLOW_MODULE=slow)
    # SIGINT as a terminal delivers it: where the suite's process ignores it (the whole
    # clean-clone suite did by then), the child inherited that and timed out
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "importing"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, err


@pytest.mark.parametrize("how", ["script", "-m"])
def test_ctrl_c_while_the_command_imports_says_one_line(tmp_path, how):
    script = tmp_path / "gpu-dpsyn"
    script.write_text(WRAPPER)
    cmd = [str(script)] if how == "script" else ["-m", "gpu_dpsyn"]
    code, err = _interrupted(tmp_path, cmd + ["synthesize", "x.csv", "--epsilon", "1"])
    assert code == 130, err
    assert err == "gpu-dpsyn: interrupted\n"


def test_ctrl_c_after_the_package_under_python_m_says_one_line(tmp_path):
    # once gpu_dpsyn is imported, argv[0] is __main__.py's path, not "-m": an interrupt
    # while __main__ imports the CLI (cli/paths.py's shlex) printed a traceback (a review)
    code, err = _interrupted(tmp_path, ["-m", "gpu_dpsyn", "check", "x.csv"], slow="shlex")
    assert code == 130, err
    assert err == "gpu-dpsyn: interrupted\n"


def test_a_program_that_imports_gpu_dpsyn_keeps_its_interrupt(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text("import gpu_dpsyn\n")
    code, err = _interrupted(tmp_path, [str(script)])
    assert code == -signal.SIGINT and "KeyboardInterrupt" in err, err


def test_ctrl_c_while_the_arguments_are_parsed_says_one_line(monkeypatch, capsys):
    # main() parsed its arguments before its handler began: a probe's Ctrl-C landed in
    # argparse (its terminal width, its patterns) about 1 time in 80 and printed a traceback
    import gpu_dpsyn.cli as cli

    def interrupted():
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["check", "x.csv"]) == 130
    assert capsys.readouterr().err == "gpu-dpsyn: interrupted\n"
