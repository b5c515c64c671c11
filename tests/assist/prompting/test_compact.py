"""The compact style adapters are taught in: training sees exactly the tokens a proposal starts
from, kernels are put in the answer's form (or refused), a compact chain asks the same short
prompt every round and samples after its first; the formula generator brackets what binds
loosely."""

from __future__ import annotations

import threading
from pathlib import Path

from app.assist.model.batch import BatchModel, Request
from app.assist.model.session import GenerationOptions
from app.assist.prompting import compact
from app.assist.prompting.candidates import answer_prefix
from app.assist.refine.loop import Chain, Job, LoopSettings, RefineLoop
from app.assist.refine.verifypool import VerifyPool
from app.assist.tasks.suite import TASKS_DIR, load_task
from app.assist.teach import exprs, train
from app.engine.verify.runs import VerifyOptions
from app.spec.model import load_spec
from tests.assist.scripted import SUBTRACTS, ScriptedModel, right

ADD = TASKS_DIR / "add_f32" / "add_f32.toml"
VECTOR_ADD = Path("resources/kernels/vector_add/vector_add.toml")


def test_spec_core_keeps_kernel_args_and_launch_only() -> None:
    core = compact.spec_core(ADD.read_text(encoding="utf-8"))
    assert core.startswith("[kernel]") and "[launch]" in core and core.count("[[arg]]") == 4
    assert "[task]" not in core and "[verify]" not in core and "[reference]" not in core
    assert "#" not in core and "\n\n" not in core


def test_a_kernel_with_a_helper_before_it_has_no_canonical_form() -> None:
    spec = load_spec(VECTOR_ADD)
    helper = ("__device__ float twice(float v) { return 2.0f * v; }\n"
              'extern "C" __global__ void vector_add(const float* a, const float* b, float* c, '
              "int n)\n{\n    c[0] = twice(a[0]);\n}\n")
    assert compact.canonical_kernel(spec, helper) is None
    plain = spec.source_path.read_text(encoding="utf-8")
    canonical = compact.canonical_kernel(spec, plain)
    assert canonical is not None
    assert ("```cuda\n" + canonical).startswith(answer_prefix(spec))
    assert canonical.rstrip().endswith("}") and "c[i] = a[i] + b[i];" in canonical


def test_training_sees_the_tokens_a_proposal_starts_from(default_folder: Path) -> None:
    """The head of an encoded example is the tokenization of prompt + answer prefix, the very
    string the session tokenizes before generating."""
    model = BatchModel(default_folder)
    tokenizer = model.load_tokenizer()
    spec = load_spec(VECTOR_ADD)
    kernel = compact.canonical_kernel(spec, spec.source_path.read_text(encoding="utf-8"))
    assert kernel is not None
    example = {"description": "c[i] = a[i] + b[i]", "spec": VECTOR_ADD.read_text("utf-8"),
               "kernel": kernel}
    ids, labels = train.encode(tokenizer, example, 4096)
    asked = model.render(compact.messages(example["description"], example["spec"]))
    expected_head = tokenizer(asked + answer_prefix(spec), add_special_tokens=False)["input_ids"]
    learned = [i for i, label in enumerate(labels) if label != -100]
    assert ids[:learned[0]] == expected_head
    assert "c[i] = a[i] + b[i];" in tokenizer.decode(ids[learned[0]:])


class CompactModel(ScriptedModel):
    """A scripted model that says it carries a compact-style adapter."""

    prompt_style = compact.STYLE


def test_a_compact_chain_asks_the_short_prompt_and_samples_after_its_first_round(
        tmp_path: Path) -> None:
    answers = iter([SUBTRACTS])

    def write(request: Request) -> str:
        return next(answers, None) or right(request)

    model = CompactModel(write)
    task = load_task(ADD)
    job = Job(task.name, task.spec(), task.description, "arm", True, style=compact.STYLE)
    chain = Chain(job, 0, 0, GenerationOptions(repetition_penalty=1.05, top_p=0.9))
    stop = threading.Event()
    with VerifyPool(VerifyOptions(backend="cpu", timeout=10.0), 1, stop) as pool:
        RefineLoop(model, pool, LoopSettings(tmp_path / "run", 3), stop).run([chain])
    assert [a.status for a in chain.attempts] == ["mismatch", "passed"]
    first, second = (calls[0] for calls in model.calls)
    wanted = compact.messages(task.description, ADD.read_text(encoding="utf-8"))
    assert first.messages == wanted and second.messages == wanted
    assert first.options.temperature == 0 and second.options.temperature > 0
    # Only the temperature and seed change: a batch shares its first row's repetition penalty.
    assert (second.options.repetition_penalty, second.options.top_p) == (1.05, 0.9)


def test_formulas_bracket_operands_that_bind_loosely() -> None:
    a, b, c = (exprs._leaf(n, "i", "{v}") for n in "abc")
    minus, times = exprs.FLOAT_BINARY[1], exprs.FLOAT_BINARY[2]
    assert exprs._apply(times, exprs._apply(minus, a, b), c).text == "(a[i] - b[i]) * c[i]"
    assert exprs._apply(minus, a, exprs._apply(minus, b, c)).text == "a[i] - (b[i] - c[i])"
    assert exprs._apply(minus, exprs._apply(minus, a, b), c).text == "a[i] - b[i] - c[i]"
    maximum = exprs.FLOAT_BINARY[3]
    assert exprs._apply(maximum, exprs._apply(minus, a, b), c).text == "max(a[i] - b[i], c[i])"
