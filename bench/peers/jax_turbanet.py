#!/usr/bin/env -S sh -c 'exec "$(dirname "$0")/../.venv-peers/bin/python" "$0" "$@"'
"""Peer 3: the original TurbaNet library (PyPI turbanet==0.3.1: JAX + Flax + Optax), on the CPU,
used through its public API as its README shows: TurbaTrainState.swarm(model, optax.adam(..),
S, sample_input), then swarm.train(X, y, loss_fn) once per optimizer step with inputs stacked
[S, B, ...]. Inside, the library jits one member's step and jax.vmap's it over the members.
The loss is the library's own `softmax_cross_entropy` (optax, one-hot targets, mean over the
batch). Runs in bench/.venv-peers (see bench/install-peers.sh):

    bench/.venv-peers/bin/python bench/peers/jax_turbanet.py W1 --size 8 --epochs 64

The library's parameters ({"Dense_i": {"kernel": [S, in, out], "bias": [S, out]}}, y = x·W + b)
are replaced by the common initial weights before training, so the spirals runs start exactly
where turbanet's did. Warm-up = the first swarm.train call (tracing + XLA compilation), on the
initial state, whose result is thrown away; timed = every step from the initial state, until
the last step's parameters are ready (block_until_ready).

--outer-jit additionally wraps the library's vmapped step in jax.jit (a variant reported as
tool "turbanet-py+jit"; not how the library's README uses it).
"""
import sys
import time

import numpy as np

import common


def main():
    outer_jit = "--outer-jit" in sys.argv
    if outer_jit:
        sys.argv.remove("--outer-jit")
    args = common.parse_args(__doc__)
    import jax
    import jax.numpy as jnp
    import optax
    import turbanet
    from flax import linen as nn
    from turbanet import TurbaTrainState, softmax_cross_entropy
    from turbanet import turba_train_state as tts

    task = common.Task(args)
    sizes = task.sizes

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            for i, units in enumerate(sizes[1:]):
                x = nn.Dense(units)(x)
                if i < len(sizes) - 2:
                    x = nn.relu(x)
            return x

    S, K = task.size, sizes[-1]
    opt = optax.adam(learning_rate=task.lr, b1=common.BETAS[0], b2=common.BETAS[1], eps=common.EPS)
    swarm = TurbaTrainState.swarm(MLP(), opt, S, np.zeros((1, sizes[0]), np.float32))
    params = {f"Dense_{i}": {"kernel": jnp.asarray(W), "bias": jnp.asarray(b)}
              for i, (W, b) in enumerate(task.init)}
    assert jax.tree_util.tree_map(lambda a: a.shape, params) == \
        jax.tree_util.tree_map(lambda a: a.shape, swarm.params)
    swarm = swarm.replace(params=params)

    onehot = np.eye(K, dtype=np.float32)[task.y]
    if task.order is None:  # full batch: the same stacked arrays every step
        Xs = jnp.asarray(np.broadcast_to(task.X, (S,) + task.X.shape))
        Ys = jnp.asarray(np.broadcast_to(onehot, (S,) + onehot.shape))
        batch = lambda t: (Xs, Ys)  # noqa: E731
    else:
        batch = lambda t: (task.X[task.order[:, t]], onehot[task.order[:, t]])  # noqa: E731

    if outer_jit:
        step_fn = jax.jit(tts.train, static_argnums=3)
        step = lambda st, x, y: step_fn(st, jnp.asarray(x), jnp.asarray(y), softmax_cross_entropy)  # noqa: E731
    else:
        step = lambda st, x, y: st.train(x, y, softmax_cross_entropy)  # noqa: E731

    t0 = time.perf_counter()
    warm, _, _ = step(swarm, *batch(0))
    jax.block_until_ready(warm.params)
    warmup = time.perf_counter() - t0
    del warm

    t0 = time.perf_counter()
    state = swarm
    for t in range(task.steps):
        state, loss, _ = step(state, *batch(t))
    jax.block_until_ready(state.params)
    seconds = time.perf_counter() - t0

    trained = [(np.asarray(state.params[f"Dense_{i}"]["kernel"]),
                np.asarray(state.params[f"Dense_{i}"]["bias"])) for i in range(len(sizes) - 1)]

    def logits(s, X):
        z = X
        for i, (W, b) in enumerate(trained):
            z = z @ W[s] + b[s]
            if i < len(trained) - 1:
                z = np.maximum(z, 0)
        return z

    loss, acc = common.evaluate(task, logits)
    common.result("turbanet-py+jit" if outer_jit else "turbanet-py", task, seconds, warmup,
                  loss, acc, trained, jax=jax.__version__, library="turbanet==0.3.1",
                  backend=jax.default_backend(), outer_jit=outer_jit,
                  library_file=turbanet.__file__)


if __name__ == "__main__":
    common.main_guard(main)
