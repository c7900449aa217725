"""Started with this directory on PYTHONPATH (tests/scripted_rollouts.py `scripted_env`), a process plays
the scripted GRPO groups of `install_grpo_scripts` once it imports `weblica.train.grpo`: how a test gets the
same known episode outcomes into the ranks that `weblica train grpo --nproc 2` launches under torchrun.
Nothing is imported before that module is (most processes of such a run never train)."""
import importlib.abc
import importlib.machinery
import sys

TARGET = "weblica.train.grpo"


class _ScriptAfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            from scripted_rollouts import install_grpo_scripts

            install_grpo_scripts()

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _ScriptAfterImport())
