"""Each subcommand's --help says what the command does and shows a command line to start
from (a probe's reading: only the top-level list said what each did, none gave one)."""
import shlex

import pytest

from gpu_dpsyn.cli import main

COMMANDS = ["synthesize", "evaluate", "infer-schema", "check", "schema", "sample"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_each_subcommand_help_says_what_it_does_and_gives_an_example(cmd, capsys):
    from gpu_dpsyn.cli import build_parser
    subs = next(a for a in build_parser()._actions if hasattr(a, "choices") and
                isinstance(a.choices, dict))
    summary = next(c.help for c in subs._choices_actions if c.dest == cmd)
    with pytest.raises(SystemExit):
        main([cmd, "--help"])
    out = capsys.readouterr().out
    said = " ".join(out.split()).lower()
    assert " ".join(summary.split()).lower() in said, out  # what it does
    lines = [x.strip() for x in out.splitlines()]
    examples = [x for x in lines if x.startswith(f"gpu-dpsyn {cmd} ")]
    assert examples, out
    for line in examples:  # each parses, its required options given
        a = build_parser().parse_args(shlex.split(line)[1:])
        assert a.cmd == cmd
