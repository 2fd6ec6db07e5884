# turbaswarm.train and Run: configs from files and dicts, numpy data, the core's errors as
# Python exceptions, Ctrl-C, progress, and the run file (bitwise the command line's).
import os
import pickle
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import turbaswarm as ts


def test_train_from_a_config_file_predicts_with_every_member(source_dir):
    run = ts.train(str(source_dir / "configs/spirals-small.yaml"), swarm__size=4, train__epochs=3)
    X = np.random.default_rng(0).normal(size=(10, 2)).astype(np.float32)
    proba = run.predict_proba(X)
    assert proba.shape == (10, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1, rtol=1e-5)
    assert run.predict(X).shape == (10,)
    assert run.predict_members(X).shape == (4, 10, 2)
    assert run.history["train_loss"].shape == (4, 3)


def test_a_dict_config_trains_the_same_swarm_as_its_yaml_file(small_config, tmp_path):
    import yaml
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(small_config))
    a, b = ts.train(small_config), ts.train(str(path))
    for m in range(4):
        for la, lb in zip(a.params(m), b.params(m)):
            assert la.keys() == lb.keys()
            for k in la:
                np.testing.assert_array_equal(la[k], lb[k])


def test_save_writes_the_run_file_train_wrote_and_load_reads_it_back(small_config, tmp_path):
    run = ts.train(small_config)
    run.save(tmp_path / "new" / "kept.h5")  # a directory that does not exist yet
    assert (tmp_path / "new" / "kept.h5").read_bytes() == open(run.path, "rb").read()
    back = ts.load(tmp_path / "new" / "kept.h5")
    X = np.linspace(-1, 1, 20, dtype=np.float32).reshape(10, 2)
    np.testing.assert_array_equal(back.predict_proba(X), run.predict_proba(X))


def test_the_run_file_is_bitwise_the_command_lines_for_the_same_config_and_seed(small_config, tmp_path, source_dir):
    binary = os.environ.get("TURBANET_BINARY", str(source_dir / "build/turbanet"))
    if not os.access(binary, os.X_OK):
        pytest.skip(f"no turbanet binary at {binary} (set TURBANET_BINARY)")
    import yaml
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(small_config))
    out = tmp_path / "run.h5"
    subprocess.run([binary, "train", str(cfg), "--out", str(out), "--quiet"], check=True, cwd=tmp_path)
    os.rename(out, tmp_path / "cli.h5")
    cwd = os.getcwd()
    os.chdir(tmp_path)  # /data@base_dir is the working directory, as for the CLI
    try:
        ts.train(str(cfg), output=str(out))
    finally:
        os.chdir(cwd)
    r = subprocess.run([sys.executable, str(source_dir / "scripts/compare_runs.py"), str(tmp_path / "cli.h5"), str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_bad_value_is_a_config_error_naming_its_key_path(small_config):
    small_config["optimizer"]["lr"] = -1
    with pytest.raises(ts.ConfigError, match=r"optimizer\.lr") as e:
        ts.train(small_config)
    assert isinstance(e.value, ValueError)


def test_a_misspelt_override_is_a_config_error_naming_the_key(small_config):
    with pytest.raises(ts.ConfigError, match="optimizer"):
        ts.train(small_config, optimizer__lrr=0.1)


def test_a_config_value_python_cannot_write_as_yaml_is_a_config_error(small_config):
    small_config["seed"] = object()
    with pytest.raises(ts.ConfigError, match="seed"):
        ts.train(small_config)


def test_a_missing_config_file_is_a_config_error():
    with pytest.raises(ts.ConfigError, match="nope.yaml"):
        ts.train("nope.yaml")


def _moons(n=200, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    y = rng.integers(0, 2, n)
    X = np.stack([np.cos(t) + y, np.sin(t) * (1 - 2 * y) + 0.5 * y], axis=1) + rng.normal(0, 0.1, (n, 2))
    return X, y


def test_numpy_arrays_are_the_training_data(small_config):
    X, y = _moons()
    run = ts.train(small_config, X, y, train__epochs=40)
    assert (run.predict(X) == y).mean() > 0.8
    assert "type: arrays" in run.config


def test_a_non_finite_value_in_X_is_a_data_error_naming_the_element(small_config):
    X, y = _moons()
    X[17, 1] = np.nan
    with pytest.raises(ts.DataError, match=r"17"):
        ts.train(small_config, X, y)


def test_X_without_y_is_a_config_error(small_config):
    with pytest.raises(ts.ConfigError, match="X and y"):
        ts.train(small_config, np.zeros((4, 2)))


def test_predict_with_the_wrong_number_of_features_is_a_data_error(small_config):
    run = ts.train(small_config)
    with pytest.raises(ts.DataError, match="2 features"):
        run.predict(np.zeros((3, 5)))


def test_progress_is_called_after_every_epoch(small_config):
    seen = []
    ts.train(small_config, progress=lambda s: seen.append((s["epoch"], s["epochs"])))
    assert seen == [(e, 6) for e in range(1, 7)]


def test_an_error_in_the_progress_callback_stops_training_and_is_raised(small_config):
    def fail(s):
        if s["epoch"] == 2:
            raise RuntimeError("enough")
    with pytest.raises(RuntimeError, match="enough"):
        ts.train(small_config, progress=fail)


@pytest.fixture
def ctrl_c():
    """Python's own Ctrl-C handler, as an interactive session has it. A process started in the
    background by a script (`cmd &`, nohup) inherits SIGINT ignored, and Python then installs
    no handler, so the signals these tests send would do nothing."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_ctrl_c_writes_the_checkpoint_then_raises_keyboard_interrupt_and_resume_continues(small_config, tmp_path, ctrl_c):
    small_config["train"]["epochs"] = 30
    def interrupt(s):
        if s["epoch"] == 3:
            os.kill(os.getpid(), signal.SIGINT)
    out = tmp_path / "run.h5"
    with pytest.raises(KeyboardInterrupt, match="checkpoint") as e:
        ts.train(small_config, output=out, progress=interrupt)
    ckpt = tmp_path / "run.ckpt.h5"
    assert str(ckpt) in str(e.value)
    assert ckpt.exists() and ts.load(out).interrupted
    resumed = ts.train(small_config, output=out, resume=ckpt)
    whole = ts.train(small_config)
    for m in range(4):
        for la, lb in zip(resumed.params(m), whole.params(m)):
            for k in la:
                np.testing.assert_array_equal(la[k], lb[k])


def test_a_sigint_while_the_core_trains_stops_after_the_epoch_and_raises_keyboard_interrupt(small_config, tmp_path, ctrl_c):
    small_config["train"]["epochs"] = 100000  # minutes: the signal comes long before the end
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt, match="stopped after epoch"):
        ts.train(small_config, output=tmp_path / "run.h5")
    timer.join()
    assert time.perf_counter() - started < 20
    run = ts.load(tmp_path / "run.h5")
    assert run.interrupted and run.history["train_loss"].shape[1] < 100000


def test_members_list_each_members_per_member_values(small_config):
    run = ts.train(small_config, optimizer__lr={"values": [0.001, 0.01]})
    assert [m["member"] for m in run.members] == [0, 1, 2, 3]
    assert [m["optimizer.lr"] for m in run.members] == pytest.approx([0.001, 0.01, 0.001, 0.01])


def test_params_of_a_member_have_the_layer_shapes(small_config):
    run = ts.train(small_config)
    layers = run.params(1)
    assert layers[0]["W"].shape in [(2, 16), (16, 2)] and layers[1]["b"].shape == (2,)
    with pytest.raises(ts.UsageError, match="members 0 to 3"):
        run.params(9)


def test_a_regression_run_predicts_the_members_mean():
    X = np.linspace(-3, 3, 200, dtype=np.float32).reshape(-1, 1)
    y = np.sin(X[:, 0])
    cfg = {"seed": 0, "swarm": {"size": 3}, "loss": "mse",
           "model": {"layers": [{"type": "dense", "units": 32, "activation": "tanh"}, {"type": "dense", "units": 1}]},
           "data": {"split": {"train": 1.0, "val": 0.0, "test": 0.0}}, "train": {"epochs": 60, "batch_size": 32},
           "optimizer": {"lr": 0.01}}
    run = ts.train(cfg, X, y)
    np.testing.assert_allclose(run.predict(X), run.predict_members(X).mean(axis=0)[:, 0], rtol=1e-5, atol=1e-6)
    assert np.abs(run.predict(X) - y).mean() < 0.2


def test_a_run_pickles_with_its_file(small_config):
    run = ts.train(small_config)
    back = pickle.loads(pickle.dumps(run))
    X = np.zeros((3, 2), np.float32)
    np.testing.assert_array_equal(back.predict_proba(X), run.predict_proba(X))


def test_training_releases_the_gil(small_config):
    small_config["train"]["epochs"] = 400
    done = threading.Event()
    t = threading.Thread(target=lambda: (ts.train(small_config), done.set()))
    ticks = 0
    t.start()
    start = time.perf_counter()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - start
    # Holding the GIL would leave this thread no tick while the C++ loop runs.
    assert elapsed < 0.05 or ticks > elapsed / 0.01


def test_the_core_logs_warnings_only_unless_asked(capfd):
    # Target scaling is logged at info ("targets standardized ...").
    cfg = {"swarm": {"size": 2}, "loss": "mse", "train": {"epochs": 1},
           "model": {"layers": [{"type": "dense", "units": 4, "activation": "tanh"}, {"type": "dense", "units": 1}]},
           "data": {"source": {"type": "sine", "n": 32}, "normalize_target": "standard"}}
    ts.train(cfg)
    assert "targets standardized" not in "".join(capfd.readouterr())
    ts.set_log_level("info")
    try:
        ts.train(cfg)
        assert "targets standardized" in "".join(capfd.readouterr())
    finally:
        ts.set_log_level("warning")
    with pytest.raises(ts.UsageError, match="log level"):
        ts.set_log_level("loud")
