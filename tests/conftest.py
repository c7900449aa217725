import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from sites import LocalServer, create_app  # noqa: E402
from xdist_scheduling import pytest_xdist_make_scheduler  # noqa: E402,F401  (-n 2 --dist loadfile: groups, costliest first)
import weblica.synth.validate_seeds as _validate_seeds  # noqa: E402

# Sites that tests generate in-process are validated at episode seed 0 only: the extra seeds' own
# behaviour is tested with explicit counts (tests/synth/test_synth_validate_seeds.py), and at the default (2)
# every generating fixture would cost ~+30% of its validation again.
_validate_seeds.EXTRA_SEEDS = 0


@pytest.fixture(scope="session")
def site():
    """The foundation test site, served for real on 127.0.0.1."""
    with LocalServer(create_app()) as server:
        yield server


@pytest.fixture(scope="session")
def sync_env():
    """One synchronous env (one Chromium) shared by the tests that only read pages."""
    from weblica.env.sync_env import SyncWebEnv

    env = SyncWebEnv()
    yield env
    env.close()


@pytest.fixture(scope="session")
def grpo_reference(tmp_path_factory):
    """One-process GRPO runs, one per distinct config, shared by the tests comparing two ranks to them."""
    from fixtures_runs import grpo_reference as make

    return make(tmp_path_factory)


@pytest.fixture(autouse=True, scope="module")
def _no_proxy_outlives_its_module(request):
    """mitmproxy allows one master per process: a proxy a module leaves running (a test that failed between
    start and stop) would fail every later module of this worker that starts one. It is stopped here, with a
    warning that names the module, so one failure stays one."""
    yield
    import warnings

    proxy = sys.modules.get("weblica.cache.proxy")  # not loaded: no proxy can run
    left = proxy._active if proxy is not None else None
    if left is not None:
        warnings.warn(f"{request.module.__name__} left a proxy running; stopped it", stacklevel=1)
        left.stop()


def pytest_collection_modifyitems(items):
    """`-m attack` selects the adversarial tests: every file of attacks is named so ("*attack*") or is the
    adversarial policy's."""
    for item in items:
        name = item.path.name
        if "attack" in name or name.startswith("test_adversarial"):
            item.add_marker(pytest.mark.attack)


def pytest_sessionfinish(session):
    """The tiny checkpoints xdist workers shared (tests/fixtures_models.py) go when the controller ends."""
    if not hasattr(session.config, "workerinput"):
        from fixtures_models import remove_checkpoints

        remove_checkpoints(os.getpid())
