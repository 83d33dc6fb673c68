"""BadInput: the one error for input that fails validation, naming the file, the field and what
was expected. It lives in the neutral package so every layer (decision, profiles, monitor,
actuator, controller, simulator) raises the same type; the CLI prints its one line and exits 2."""
from __future__ import annotations


class BadInput(ValueError):
    def __init__(self, file: str, field: str, expected: str):
        self.file, self.field, self.expected = str(file), field, expected
        super().__init__(self.line())

    def line(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{where}: {self.expected}"

    def __reduce__(self):
        # rebuilt from its three parts when it crosses a process boundary (a worker of
        # `metctl simulate` or bench/evaluate.py raising it): Exception's default passes args only
        return (type(self), (self.file, self.field, self.expected))


class DeprecatedKey(FutureWarning):
    """A config key that moved (controller/layers.py): it still works for one release, and the
    warning names its new place. A FutureWarning: Python shows those to the operator by default."""
