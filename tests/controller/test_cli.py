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


def test_a_missing_extra_names_the_install_that_brings_it(tmp_path):
    """Issue 24, friction: a command needing a missing extra said "No module named 'boto3'"
    without "install metctl[ec2]"."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    cfg = tmp_path / "ec2.yaml"
    cfg.write_text("cluster: c\ndatastore: {driver: sim}\ninfrastructure:\n  driver: ec2\n"
                   "  ec2: {region: eu-west-1, image_id: ami-0123456789abcdef0}\n")
    blocked = ("import sys; sys.modules['boto3'] = None; sys.modules['botocore'] = None\n"
               "from controller.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", blocked, "nodes", "list", "--config", str(cfg)],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "metctl: this needs boto3, from the optional extra ec2: pip install 'metctl[ec2]' "
        "(from the source tree: pip install '.[ec2]')"]


def test_every_optional_library_maps_to_an_extra_that_installs_it():
    import tomllib
    from pathlib import Path

    from controller.cli import EXTRA_OF

    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]
    distribution = {"boto3": "boto3", "botocore": "boto3", "openstack": "openstacksdk",
                    "keystoneauth1": "openstacksdk", "py4j": "py4j", "kazoo": "kazoo",
                    "prometheus_client": "prometheus-client", "cassandra": "cassandra-driver"}
    assert set(distribution) == set(EXTRA_OF)
    for module, extra in EXTRA_OF.items():
        assert any(dep.startswith(distribution[module]) for dep in extras[extra]), (module, extra)
    # every extra's libraries are covered
    covered = {distribution[m] for m in EXTRA_OF}
    for extra in ("ec2", "openstack", "hbase", "ha", "metrics", "cassandra"):
        for dep in extras[extra]:
            name = dep.split(">")[0].split("=")[0].split(";")[0].strip()
            assert name in covered or name == "pyasyncore", (extra, name)


def test_a_group_without_its_subcommand_shows_its_help(capsys):
    """Issue 24, friction: `metctl nodes` / `metctl hbase-jars` alone squashed the help into
    one error line."""
    for group in ("nodes", "hbase-jars", "config"):
        code = main([group])
        out, err = capsys.readouterr()
        help_text = out + err
        assert help_text.startswith(f"Usage: metctl {group} [OPTIONS] COMMAND"), help_text
        assert "\nCommands:\n" in help_text and len(help_text.splitlines()) > 5
        assert code in (0, 2)


def test_shell_completion_as_docs_install_md_says():
    """Issue 24, friction: shell completion worked but was not documented. docs/install.md's
    three lines each print a completion script for `metctl`."""
    import os
    import re
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "install.md").read_text()
    shells = re.findall(r"_METCTL_COMPLETE=(\w+)_source metctl", text)
    assert shells == ["bash", "zsh", "fish"]
    metctl = shutil.which("metctl") or str(Path(sys.executable).parent / "metctl")
    for shell in shells:
        done = subprocess.run([metctl], env={**os.environ, "_METCTL_COMPLETE": f"{shell}_source",
                                             "PYTHONPATH": str(root)},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "_METCTL_COMPLETE" in done.stdout, (shell, done.stderr)
    # and it completes: the subcommands after `metctl st`
    done = subprocess.run([metctl], env={**os.environ, "_METCTL_COMPLETE": "bash_complete",
                                         "COMP_WORDS": "metctl st", "COMP_CWORD": "1",
                                         "PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=60)
    assert "plain,status" in done.stdout, done.stdout
