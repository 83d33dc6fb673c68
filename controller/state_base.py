"""Where a config's relative state paths point: never the working directory (the CLI run from
elsewhere found no token or journal), but the config file's directory, $METCTL_STATE_DIR, or
for the built-in default and the files metctl ships $XDG_STATE_HOME. Apart from
controller/config_files.py so that controller/config.py can use it without importing the
module that loads configs."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SHIPPED = Path(__file__).resolve().parents[1] / "configs"  # the configs metctl ships


def state_base(file: str | None, *, sets_state_dir: bool = False) -> Path:
    """The directory relative state paths are read against, never the working directory (so
    `metctl status`, `explain` and `pause` find the daemon's journal and token wherever they
    run): a config file's directory when it sets `state_dir` itself; else $METCTL_STATE_DIR
    (the systemd unit and the container set it); else the file's directory. For the built-in
    default and the files metctl ships (`file` None or inside the package): $XDG_STATE_HOME,
    default ~/.local/state, in place of a directory."""
    user = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    here = user
    if file is not None and not Path(file).resolve().is_relative_to(SHIPPED):
        here = Path(file).resolve().parent
    if not sets_state_dir and os.environ.get("METCTL_STATE_DIR"):
        return Path(os.environ["METCTL_STATE_DIR"]).expanduser()
    return here


def state_base_of(file: str | None, data: Any) -> Path:
    """`state_base` for a parsed config document."""
    return state_base(file, sets_state_dir=isinstance(data, dict) and "state_dir" in data)


def with_state_paths(config: Any, base: Path) -> Any:
    """`config` with its relative state paths made absolute under `base`."""
    def at(path: str | None) -> str | None:
        if path is None or path == ":memory:" or path.startswith("file:"):
            return path
        p = Path(path).expanduser()
        return str(p if p.is_absolute() else base / p)

    def section(obj: Any, **fields: str | None) -> Any:
        changed = {k: at(v) for k, v in fields.items() if at(v) != v}
        return obj.model_copy(update=changed) if changed else obj

    infra = config.infrastructure
    return config.model_copy(update={
        "executor": section(config.executor, journal_path=config.executor.journal_path),
        "loop": section(config.loop, memory_path=config.loop.memory_path),
        "control": section(config.control, state_path=config.control.state_path,
                           token_file=config.control.token_file),
        "infrastructure": infra.model_copy(update={
            "local": section(infra.local, state_dir=infra.local.state_dir)}),
    })


__all__ = ["SHIPPED", "state_base", "state_base_of", "with_state_paths"]
