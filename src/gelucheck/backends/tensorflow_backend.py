"""TensorFlow on the CPU: tf.nn.gelu in both forms (eager, and compiled by XLA through
tf.function(jit_compile=True)), keras.activations.gelu (Keras 3), and the derivatives of
tf.nn.gelu through tf.GradientTape. TensorFlow has no Gaussian CDF op of its own (it is in
tensorflow-probability), so Φ is not measured here."""
from __future__ import annotations

import os

from .. import tiers
from .base import Backend, Implementation


def load() -> Backend:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # no banner of CPU features per import
    try:
        import keras
        import tensorflow as tf
    except ImportError as exc:
        return Backend("tensorflow", False, f"tensorflow or keras is not installed ({exc}); "
                       "pip install 'gelucheck[tensorflow]'", None)

    def run(fn):
        return lambda x: fn(tf.constant(x)).numpy()

    def xla(fn):
        # do_not_convert: the function is one op; AutoGraph would only warn it cannot parse it
        # reduce_retracing: one shape-generic compile, not one per array length
        return tf.function(tf.autograph.experimental.do_not_convert(fn), jit_compile=True,
                           reduce_retracing=True)

    def gradient(fn):
        """d/dx with grad_out = 1: the gradient of the sum (elementwise functions)."""
        def grad(t):
            with tf.GradientTape() as tape:
                tape.watch(t)
                y = fn(t)
            return tape.gradient(y, t)
        return grad

    def prepare(fn):
        return lambda x: (fn, tf.constant(x))

    def exact(t):
        return tf.nn.gelu(t, approximate=False)

    def tanh(t):
        return tf.nn.gelu(t, approximate=True)

    def keras_exact(t):
        return keras.activations.gelu(t, approximate=False)

    def keras_tanh(t):
        return keras.activations.gelu(t, approximate=True)

    def make(name, function, fn, text):
        return Implementation("tensorflow", name, function, run(fn), description=text,
                              prepare=prepare(fn),
                              paths=lambda fmt, fn=fn: {"xla": run(xla(fn))})

    impls = (
        make("nn.gelu", "gelu", exact, "tf.nn.gelu(x, approximate=False), eager"),
        make("nn.gelu", "gelu_tanh", tanh, "tf.nn.gelu(x, approximate=True), eager"),
        make("nn.gelu[xla]", "gelu", xla(exact),
             "tf.function(jit_compile=True) of tf.nn.gelu(x, approximate=False)"),
        make("nn.gelu[xla]", "gelu_tanh", xla(tanh),
             "tf.function(jit_compile=True) of tf.nn.gelu(x, approximate=True)"),
        make("keras.gelu", "gelu", keras_exact,
             f"keras.activations.gelu(x, approximate=False), Keras {keras.__version__}"),
        make("keras.gelu", "gelu_tanh", keras_tanh,
             "keras.activations.gelu(x, approximate=True) - the tanh form is Keras' default"),
        make("nn.gelu", "gelu_grad", gradient(exact),
             "tf.GradientTape of tf.nn.gelu(x, approximate=False)"),
        make("nn.gelu", "gelu_tanh_grad", gradient(tanh),
             "tf.GradientTape of tf.nn.gelu(x, approximate=True)"),
        make("math.erf", "erf", tf.math.erf, "tf.math.erf(x), eager"),
        make("math.erfc", "erfc", tf.math.erfc, "tf.math.erfc(x), eager"),
        make("math.erf[xla]", "erf", xla(tf.math.erf), "tf.function(jit_compile=True) of "
             "tf.math.erf"),
        make("math.erfc[xla]", "erfc", xla(tf.math.erfc), "tf.function(jit_compile=True) of "
             "tf.math.erfc"),
    )
    missing = {name: "TensorFlow has no Gaussian CDF op (tensorflow-probability has ndtr)"
               for name in ("phi", "phi_grad")}
    tier = tiers.xla_tier()
    version = f"{tf.__version__} (Keras {keras.__version__}), kernels {tier}"
    return Backend("tensorflow", True, "", version, impls, missing, tier=tier)
