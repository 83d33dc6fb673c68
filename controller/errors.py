"""The CLI's bad-input error (defined in decision.errors so lower layers can raise it too).

Everything user-supplied (config YAML, snapshot JSON/YAML, scenario files, state files,
profiles) that fails validation raises BadInput; the CLI prints its one line on stderr and
exits 2.
"""
from decision.errors import BadInput

__all__ = ["BadInput"]
