"""The CLI's exit-code contract: 0 success, 2 usage or bad input, 1 anything else."""
import subprocess
import sys

from controller.cli import main


def test_help_and_version_exit_zero(capsys):
    assert main(["--help"]) == 0
    assert "plan" in capsys.readouterr().out
    assert main(["--version"]) == 0


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2
    assert "no-such-command" in capsys.readouterr().err


def test_console_script_propagates_exit_code():
    done = subprocess.run([sys.executable, "-m", "controller.cli", "validate", "/nonexistent/x.yaml"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "/nonexistent/x.yaml" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
