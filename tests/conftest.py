import os
import shutil

import pytest

GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)


@pytest.fixture(scope="session")
def gnugo_path():
    if GNUGO is None:
        if os.environ.get("CI"):
            pytest.fail("GNU Go is not installed (apt-get install -y gnugo)")
        pytest.skip("GNU Go is not installed (apt-get install -y gnugo)")
    return GNUGO
