"""`metctl plan` (placeholder until its issue lands)."""
import click


@click.command(name="plan", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(args):
    """Not built yet."""
    raise click.ClickException("metctl plan is not built yet")
