"""The elementwise operations of the shaped families (app.assist.teach.shaped), each in every
notation a register needs: C++ over float (or int) values, NumPy over widened arrays, PyTorch,
the project's formula, and words.

Placeholders: {a} and {b} the inputs, {s} the scalar argument (when the operation has one).
An operation whose PyTorch form is a KernelBench problem (torch.relu(x) is 19_ReLU) has
`kernelbench` set: it is taught in the other registers only, and the guard
(app.assist.teach.kbguard) would refuse its PyTorch form anyway (a test keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Op:
    """One elementwise operation."""

    tag: str
    arity: int
    cxx: str
    npy: str
    torch: tuple[str, ...]
    formula: str       # the project's notation, over elements ({a} is x[i])
    words: str         # what it computes, for docstrings and notes ({a} is a name)
    scalar: bool = False
    integer: bool = False
    kernelbench: bool = False


FLOAT_OPS = (
    Op("abs", 1, "fabsf({a})", "np.abs({a})", ("torch.abs({a})", "{a}.abs()"), "|{a}|",
       "absolute value of {a}"),
    Op("square", 1, "{a} * {a}", "{a} * {a}", ("torch.square({a})", "{a} ** 2"), "{a}^2",
       "square of {a}"),
    Op("exp", 1, "expf({a})", "np.exp({a})", ("torch.exp({a})", "{a}.exp()"), "exp({a})",
       "exponential of {a}"),
    Op("sqrtabs", 1, "sqrtf(fabsf({a}))", "np.sqrt(np.abs({a}))",
       ("torch.sqrt(torch.abs({a}))", "{a}.abs().sqrt()"), "sqrt(|{a}|)",
       "square root of |{a}|"),
    Op("sin", 1, "sinf({a})", "np.sin({a})", ("torch.sin({a})", "{a}.sin()"), "sin({a})",
       "sine of {a}"),
    Op("log1pabs", 1, "log1pf(fabsf({a}))", "np.log1p(np.abs({a}))",
       ("torch.log1p(torch.abs({a}))", "{a}.abs().log1p()"), "log(1 + |{a}|)",
       "log(1 + |{a}|)"),
    Op("clamp", 1, "fminf(fmaxf({a}, -0.5f), 0.5f)", "np.clip({a}, -0.5, 0.5)",
       ("torch.clamp({a}, -0.5, 0.5)", "{a}.clamp(min=-0.5, max=0.5)"),
       "min(max({a}, -0.5), 0.5)", "{a} clamped to [-0.5, 0.5]"),
    Op("relu", 1, "fmaxf({a}, 0.0f)", "np.maximum({a}, 0.0)", ("torch.relu({a})",),
       "max({a}, 0)", "ReLU of {a}", kernelbench=True),
    Op("sigmoid", 1, "1.0f / (1.0f + expf(-{a}))", "1.0 / (1.0 + np.exp(-{a}))",
       ("torch.sigmoid({a})",), "1 / (1 + exp(-{a}))", "logistic sigmoid of {a}",
       kernelbench=True),
    Op("tanh", 1, "tanhf({a})", "np.tanh({a})", ("torch.tanh({a})",), "tanh({a})",
       "tanh of {a}", kernelbench=True),
    # The activations of KernelBench level 1 beyond the four above: each plain form is one of
    # its problems, so they are taught in the project's, docstring and terse registers only.
    Op("silu", 1, "{a} / (1.0f + expf(-{a}))", "{a} / (1.0 + np.exp(-{a}))",
       ("{a} * torch.sigmoid({a})",), "{a} / (1 + exp(-{a}))",
       "SiLU (swish) of {a}: {a} times sigmoid({a})", kernelbench=True),
    Op("gelu_tanh", 1,
       "0.5f * {a} * (1.0f + tanhf(0.7978845608f * ({a} + 0.044715f * {a} * {a} * {a})))",
       "0.5 * {a} * (1.0 + np.tanh(0.7978845608028654 * ({a} + 0.044715 * {a} ** 3)))",
       ("torch.nn.functional.gelu({a}, approximate='tanh')",),
       "0.5 * {a} * (1 + tanh(sqrt(2 / pi) * ({a} + 0.044715 * {a}^3)))",
       "GELU of {a}, tanh approximation", kernelbench=True),
    # Exact GELU: erff in CUDA, the reference header's erf (math.erf per element) in NumPy.
    Op("gelu", 1, "0.5f * {a} * (1.0f + erff({a} * 0.70710678118654752f))",
       "0.5 * {a} * (1.0 + erf({a} * 0.7071067811865476))",
       ("torch.nn.functional.gelu({a})",), "0.5 * {a} * (1 + erf({a} / sqrt(2)))",
       "GELU of {a} (the exact form, with erf)", kernelbench=True),
    Op("selu", 1,
       "1.0507009873554805f * ({a} > 0.0f ? {a} : 1.6732632423543772f * expm1f({a}))",
       "1.0507009873554805 * np.where({a} > 0, {a}, 1.6732632423543772 * np.expm1({a}))",
       ("torch.selu({a})",), "1.0507 * ({a} if {a} > 0 else 1.6733 * (exp({a}) - 1))",
       "SELU of {a} (scale 1.0507009873554805, alpha 1.6732632423543772)",
       kernelbench=True),
    Op("elu", 1, "({a} > 0.0f ? {a} : expm1f({a}))", "np.where({a} > 0, {a}, np.expm1({a}))",
       ("torch.nn.functional.elu({a})",), "{a} if {a} > 0 else exp({a}) - 1",
       "ELU of {a} (alpha 1)", kernelbench=True),
    Op("softplus", 1, "fmaxf({a}, 0.0f) + log1pf(expf(-fabsf({a})))",
       "np.maximum({a}, 0.0) + np.log1p(np.exp(-np.abs({a})))",
       ("torch.nn.functional.softplus({a})",), "log(1 + exp({a}))", "softplus of {a}",
       kernelbench=True),
    Op("softsign", 1, "{a} / (1.0f + fabsf({a}))", "{a} / (1.0 + np.abs({a}))",
       ("{a} / (1 + torch.abs({a}))",), "{a} / (1 + |{a}|)", "softsign of {a}",
       kernelbench=True),
    Op("hardsigmoid", 1, "fminf(fmaxf({a} / 6.0f + 0.5f, 0.0f), 1.0f)",
       "np.clip({a} / 6.0 + 0.5, 0.0, 1.0)", ("torch.nn.functional.hardsigmoid({a})",),
       "min(max({a} / 6 + 1/2, 0), 1)", "hard sigmoid of {a}", kernelbench=True),
    Op("hardtanh", 1, "fminf(fmaxf({a}, -1.0f), 1.0f)", "np.clip({a}, -1.0, 1.0)",
       ("torch.nn.functional.hardtanh({a})",), "min(max({a}, -1), 1)",
       "hard tanh of {a} (clamped to [-1, 1])", kernelbench=True),
    Op("relu_scale", 1, "fmaxf({a}, 0.0f) * {s}", "np.maximum({a}, 0.0) * {s}",
       ("torch.relu({a}) * {s}", "{a}.clamp(min=0) * {s}"), "max({a}, 0) * {s}",
       "ReLU of {a} times {s}", scalar=True),
    Op("tanh_scale", 1, "tanhf({a} * {s})", "np.tanh({a} * {s})", ("torch.tanh({a} * {s})",),
       "tanh({a} * {s})", "tanh of {a} times {s}", scalar=True),
    Op("sigmoid_shift", 1, "1.0f / (1.0f + expf(-{a})) - 0.5f", "1.0 / (1.0 + np.exp(-{a})) - 0.5",
       ("torch.sigmoid({a}) - 0.5",), "sigmoid({a}) - 0.5", "sigmoid of {a} minus one half"),
    Op("leaky", 1, "({a} > 0.0f ? {a} : {a} * {s})", "np.where({a} > 0, {a}, {a} * {s})",
       ("torch.where({a} > 0, {a}, {a} * {s})",), "{a} if {a} > 0 else {a} * {s}",
       "{a} where positive, else {a} times {s}", scalar=True),
    Op("add", 2, "{a} + {b}", "{a} + {b}", ("{a} + {b}", "torch.add({a}, {b})"), "{a} + {b}",
       "sum of {a} and {b}"),
    Op("relu_add", 2, "fmaxf({a} + {b}, 0.0f)", "np.maximum({a} + {b}, 0.0)",
       ("torch.relu({a} + {b})", "({a} + {b}).clamp(min=0)"), "max({a} + {b}, 0)",
       "ReLU of {a} + {b}"),
    Op("tanh_add", 2, "tanhf({a}) + {b}", "np.tanh({a}) + {b}", ("torch.tanh({a}) + {b}",),
       "tanh({a}) + {b}", "tanh of {a} plus {b}"),
    Op("sub", 2, "{a} - {b}", "{a} - {b}", ("{a} - {b}", "torch.sub({a}, {b})"), "{a} - {b}",
       "difference {a} - {b}"),
    Op("mul", 2, "{a} * {b}", "{a} * {b}", ("{a} * {b}",), "{a} * {b}", "product of {a} and {b}",
       kernelbench=True),
    Op("maximum", 2, "fmaxf({a}, {b})", "np.maximum({a}, {b})", ("torch.maximum({a}, {b})",),
       "max({a}, {b})", "larger of {a} and {b}"),
    Op("minimum", 2, "fminf({a}, {b})", "np.minimum({a}, {b})", ("torch.minimum({a}, {b})",),
       "min({a}, {b})", "smaller of {a} and {b}"),
    Op("axpy", 2, "{a} * {s} + {b}", "{a} * {s} + {b}", ("{a} * {s} + {b}",
                                                          "torch.add({b}, {a}, alpha={s})"),
       "{a} * {s} + {b}", "{a} times {s} plus {b}", scalar=True),
    Op("lerp", 2, "{a} + {s} * ({b} - {a})", "{a} + {s} * ({b} - {a})",
       ("torch.lerp({a}, {b}, {s})",), "{a} + {s} * ({b} - {a})",
       "linear interpolation from {a} to {b} by {s}", scalar=True),
    Op("sqdiff", 2, "({a} - {b}) * ({a} - {b})", "({a} - {b}) ** 2", ("({a} - {b}) ** 2",),
       "({a} - {b})^2", "squared difference of {a} and {b}"),
    Op("where", 2, "({a} > {b} ? {a} - {b} : 0.0f)", "np.where({a} > {b}, {a} - {b}, 0.0)",
       ("torch.where({a} > {b}, {a} - {b}, 0.0)", "({a} - {b}).clamp(min=0)"),
       "max({a} - {b}, 0)", "{a} - {b} where positive, else 0"),
)
INT_OPS = (
    Op("abs", 1, "abs({a})", "np.abs({a})", ("torch.abs({a})",), "|{a}|",
       "absolute value of {a}", integer=True),
    Op("neg", 1, "-{a}", "-{a}", ("-{a}", "torch.neg({a})"), "-{a}", "negation of {a}",
       integer=True),
    Op("scale_add", 1, "{a} * {s} + 1", "{a} * {s} + 1", ("{a} * {s} + 1",), "{a} * {s} + 1",
       "{a} times {s} plus one", scalar=True, integer=True),
    Op("add", 2, "{a} + {b}", "{a} + {b}", ("{a} + {b}", "torch.add({a}, {b})"), "{a} + {b}",
       "sum of {a} and {b}", integer=True),
    Op("sub", 2, "{a} - {b}", "{a} - {b}", ("{a} - {b}",), "{a} - {b}",
       "difference {a} - {b}", integer=True),
    Op("maximum", 2, "max({a}, {b})", "np.maximum({a}, {b})", ("torch.maximum({a}, {b})",),
       "max({a}, {b})", "larger of {a} and {b}", integer=True),
    Op("xor", 2, "{a} ^ {b}", "np.bitwise_xor({a}, {b})", ("torch.bitwise_xor({a}, {b})",
                                                           "{a} ^ {b}"),
       "{a} xor {b}", "bitwise xor of {a} and {b}", integer=True),
)
