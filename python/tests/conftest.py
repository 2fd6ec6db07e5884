# The turbaswarm tests: the package from PYTHONPATH (a build tree's build/python, ctest) or
# installed (`pip install .`, scripts/test-python.sh); TURBANET_BINARY names the command line
# the results are compared with, TURBANET_SOURCE_DIR the checkout (configs/, scripts/).
import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("TURBANET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def small_config():
    """Two spirals, 4 members 2-16-2, 6 epochs: trains in milliseconds."""
    return {
        "name": "py-small",
        "seed": 3,
        "swarm": {"size": 4},
        "model": {"layers": [{"type": "dense", "units": 16, "activation": "tanh"}, {"type": "dense", "units": 2}]},
        "loss": "cross_entropy",
        "optimizer": {"type": "adam", "lr": 0.01},
        "data": {"source": {"type": "spirals", "n": 128, "seed": 0}, "split": {"train": 0.75, "val": 0.0, "test": 0.25}},
        "train": {"epochs": 6, "batch_size": 32},
    }


@pytest.fixture
def source_dir():
    return SOURCE_DIR
