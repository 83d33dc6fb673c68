"""`metctl status` (placeholder until its issue lands)."""
import click


@click.command(name="status", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(args):
    """Not built yet."""
    raise click.ClickException("metctl status is not built yet")
