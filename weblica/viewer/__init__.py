"""The trajectory viewer (`weblica view RUN_DIR [--compare RUN_DIR2]`)."""
from weblica.viewer.app import RunDirError, create_app, load_run

__all__ = ["RunDirError", "create_app", "load_run"]
