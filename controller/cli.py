"""The `metctl` command line: one click group, one module per subcommand under controller/commands/.

Exit codes (stable): 0 success, 2 bad input or configuration (one line on stderr naming the
file, the field and what was expected), 1 anything else.
"""
from __future__ import annotations

import importlib
import re
import sys
import warnings

import click

from common.redact import redact
from controller.errors import BadInput
from common.errors import DeprecatedKey

# subcommand name -> module under controller.commands exposing `command`
COMMANDS = ("plan", "validate", "snapshot", "simulate", "run", "nodes", "status",
            # the daemon's HTTP API (docs/control.md)
            "pause", "resume", "pin", "unpin", "protect", "unprotect", "windows", "explain",
            "events", "hbase-jars", "scenario",
            # the files metctl ships, by name (controller/config_files.py)
            "config")


# the import name of each optional library -> the extra of pyproject.toml that installs it
# (tests/controller/test_cli.py keeps the two in step)
EXTRA_OF = {"boto3": "ec2", "botocore": "ec2", "openstack": "openstack", "keystoneauth1": "openstack",
            "py4j": "hbase", "kazoo": "ha", "prometheus_client": "metrics", "cassandra": "cassandra"}


class _LazyGroup(click.Group):
    """Imports a subcommand's module only when it is used, so `metctl plan` never loads boto3."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        return importlib.import_module(f"controller.commands.{name.replace('-', '_')}").command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="metctl")
def cli() -> None:
    """metctl — workload-aware elasticity for NoSQL clusters (MET)."""


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """`text` as one terminal-safe line: whitespace runs collapsed, control characters shown
    as escapes (an error quoting a file's bytes must not drive the terminal)."""
    text = " ".join(text.split())
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_show_warning = warnings.showwarning


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A moved config key is one line for the operator, not a Python source location."""
    if issubclass(category, DeprecatedKey):
        click.echo(f"metctl: warning: {redact(one_line(str(message)))}", err=True)
    else:
        _show_warning(message, category, filename, lineno, file, line)


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = _one_line_warning
    try:
        # Outside standalone mode click *returns* the code of ctx.exit(n) instead of raising it.
        returned = cli.main(args=argv, prog_name="metctl", standalone_mode=False)
        return returned if isinstance(returned, int) else 0
    except BadInput as err:
        # One line whatever a parser put in the message (libyaml's problems span lines).
        click.echo(f"metctl: {redact(one_line(err.line()))}", err=True)
        return 2
    except click.exceptions.Exit as err:
        return err.exit_code
    except click.exceptions.NoArgsIsHelpError as err:
        # `metctl nodes` alone: the group's help as click lays it out (it was squashed into
        # one error line), on stderr, exit 2 (no command was run)
        click.echo(err.ctx.get_help(), err=True)
        return 2
    except click.UsageError as err:
        # One line, like BadInput: which option, what was wrong, where help is.
        cmd = err.ctx.command_path if err.ctx is not None else "metctl"
        message = " ".join(err.format_message().split())
        click.echo(f"metctl: {redact(message)} (see '{cmd} --help')", err=True)
        return 2
    except click.ClickException as err:
        click.echo(f"metctl: {redact(err.format_message())}", err=True)
        return err.exit_code
    except click.Abort:
        click.echo("metctl: aborted", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as err:
        extra = EXTRA_OF.get((err.name or "").split(".")[0])
        if extra is None:
            click.echo(f"metctl: error: {redact(one_line(str(err)))}", err=True)
            return 1
        # a driver the config chose whose library is not installed: say which install brings it
        click.echo(f"metctl: this needs {err.name}, from the optional extra {extra}: "
                   f"pip install 'metctl[{extra}]' (from the source tree: pip install '.[{extra}]')",
                   err=True)
        return 1
    except Exception as err:  # noqa: BLE001 — the CLI's last line of defence
        # Every error text is redacted: a cloud API's error body may echo the request.
        text = one_line(str(err)) or type(err).__name__
        click.echo(f"metctl: error: {redact(text)}", err=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
