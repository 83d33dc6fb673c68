"""The `metctl` command line: one click group, one module per subcommand under controller/commands/.

Exit codes (stable): 0 success, 2 bad input or configuration (one line on stderr naming the
file, the field and what was expected), 1 anything else.
"""
from __future__ import annotations

import importlib
import sys

import click

from controller.errors import BadInput

# subcommand name -> module under controller.commands exposing `command`
COMMANDS = ("plan", "validate", "snapshot", "simulate", "run", "nodes", "status",
            # the daemon's HTTP API (docs/control.md)
            "pause", "resume", "pin", "unpin", "protect", "unprotect", "explain")


class _LazyGroup(click.Group):
    """Imports a subcommand's module only when it is used, so `metctl plan` never loads boto3."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        return importlib.import_module(f"controller.commands.{name}").command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="metctl")
def cli() -> None:
    """metctl — workload-aware elasticity for NoSQL clusters (MET)."""


def main(argv: list[str] | None = None) -> int:
    try:
        # Outside standalone mode click *returns* the code of ctx.exit(n) instead of raising it.
        returned = cli.main(args=argv, prog_name="metctl", standalone_mode=False)
        return returned if isinstance(returned, int) else 0
    except BadInput as err:
        click.echo(f"metctl: {err.line()}", err=True)
        return 2
    except click.exceptions.Exit as err:
        return err.exit_code
    except click.ClickException as err:
        err.show()
        return 2 if isinstance(err, click.UsageError) else err.exit_code
    except click.Abort:
        click.echo("metctl: aborted", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # noqa: BLE001 — the CLI's last line of defence
        click.echo(f"metctl: error: {err}", err=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
