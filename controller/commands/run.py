"""`metctl run` (placeholder until its issue lands)."""
import click


@click.command(name="run", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(args):
    """Not built yet."""
    raise click.ClickException("metctl run is not built yet")
