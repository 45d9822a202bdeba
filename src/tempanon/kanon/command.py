"""CLI commands of full-domain k-anonymity (filled in by issue 2)."""

import typer


def kanon() -> None:
    """k-anonymize a table with Incognito (placeholder)."""
    raise typer.Exit(2)


def demo() -> None:
    """Run Incognito on the bundled Adult sample (placeholder)."""
    raise typer.Exit(2)
