"""The one error type for bad input: it names the file, the field and what was expected.

Everything user-supplied (config YAML, snapshot JSON/YAML, scenario files, state files) that
fails validation raises BadInput; the CLI prints its one line on stderr and exits 2.
"""
from __future__ import annotations


class BadInput(Exception):
    def __init__(self, file: str, field: str, expected: str):
        self.file, self.field, self.expected = str(file), field, expected
        super().__init__(self.line())

    def line(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{where}: {self.expected}"
