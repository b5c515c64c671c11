"""Keep an adapter only if it helps: two `eval --json` results on the held-out split, before
(the base model) and after (with the adapter), on the same tasks and seeds; the adapter stays
when pass@1 rises with the bootstrap interval's low end above zero, and its card then carries
both evals; otherwise it is removed and the figures say why."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.assist.errors import AssistError
from app.assist.evaluation.metrics import Lift, TaskOutcome, lift
from app.assist.model.adapters import CARD_NAME, check_adapter, read_card, recorded_source, seal
from app.base.fsutil import atomic_write_text

# Settings that must agree for the two runs to be compared task by task.
SAME = ("tasks", "k", "rounds", "seed", "arms", "max_new_tokens", "temperature")


class JudgeError(AssistError):
    """The two results cannot be compared (other tasks or seeds, not eval output)."""


@dataclass(frozen=True)
class Judgement:
    """The verdict on an adapter and the figures behind it."""

    kept: bool
    lift: Lift
    before: dict[str, Any]
    after: dict[str, Any]

    def describe(self) -> str:
        """One paragraph for the terminal."""
        verb = "kept" if self.kept else "discarded"
        return (f"adapter {verb}: pass@1 {_pass1(self.before):.3f} before, "
                f"{_pass1(self.after):.3f} after; lift {self.lift.describe()}")


def read_result(path: Path) -> dict[str, Any]:
    """An `eval --json` result; JudgeError for anything else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise JudgeError(f"cannot read the eval result {path}: {error}",
                         "give the file that eval --json wrote") from None
    # What judge() reads must be there: any other JSON is refused here, not with a KeyError.
    tables = ("outcomes", "summaries", "settings")
    if not isinstance(data, dict) or not all(isinstance(data.get(t), dict) for t in tables) \
            or len(data["outcomes"]) != 1 or len(data["summaries"]) != 1:
        raise JudgeError(f"{path} is not the result of a one-arm eval",
                         "run eval with --skills on|off and --examples on|off (not both)")
    return data


def _outcomes(result: dict[str, Any]) -> list[TaskOutcome]:
    """The one arm's task outcomes."""
    (items,) = result["outcomes"].values()
    return [TaskOutcome.from_dict(item) for item in items]


def _pass1(result: dict[str, Any]) -> float:
    """The arm's mean pass@1 over the tasks it decided."""
    (summary,) = result["summaries"].values()
    return float(summary.get("pass_at_1") or 0.0)


def _check_comparable(before: dict[str, Any], after: dict[str, Any]) -> None:
    """JudgeError when the runs differ in what decides the comparison."""
    for key in SAME:
        if before["settings"].get(key) != after["settings"].get(key):
            raise JudgeError(f"the two evals differ in {key}: {before['settings'].get(key)!r} "
                             f"against {after['settings'].get(key)!r}",
                             "run both with the same tasks, -k, --rounds, --seed, --skills "
                             "and --examples")
    if before.get("stopped") or after.get("stopped"):
        raise JudgeError("an eval was stopped before it ended", "run it again to the end")


def judge(before: dict[str, Any], after: dict[str, Any]) -> Judgement:
    """Compare the runs; kept when the interval of the pass@1 lift lies above zero."""
    _check_comparable(before, after)
    found = lift("base", "adapter", _outcomes(before), _outcomes(after))
    kept = found.low is not None and found.low > 0
    return Judgement(kept, found, before, after)


def _card_eval(result: dict[str, Any]) -> dict[str, Any]:
    """What the card keeps of an eval: its id, settings and summary (levels and dtypes)."""
    (summary,) = result["summaries"].values()
    return {"id": result.get("id"), "settings": result["settings"], "summary": summary,
            "model": result.get("model", {})}


def apply(model_folder: Path, name: str, verdict: Judgement, discarded: Path) -> Path:
    """Write the verdict: the card gains both evals (the adapter sealed again) when kept; when
    not, the figures go to `discarded`/<name>-<time>.json and the adapter is removed. The path
    written."""
    folder = check_adapter(model_folder, name)
    record = {"before": _card_eval(verdict.before), "after": _card_eval(verdict.after),
              "lift_pass_at_1": verdict.lift.as_dict(), "kept": verdict.kept}
    if verdict.kept:
        card = read_card(folder)
        card["eval"] = record
        atomic_write_text(folder / CARD_NAME, json.dumps(card, indent=1) + "\n")
        seal(folder, recorded_source(folder), name)
        return folder
    discarded.mkdir(parents=True, exist_ok=True)
    target = discarded / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    atomic_write_text(target, json.dumps({"adapter": name, "card": read_card(folder), **record},
                                         indent=1) + "\n")
    shutil.rmtree(folder)
    return target


def check_runs(before: dict[str, Any], after: dict[str, Any], name: str, start: str = "") -> None:
    """JudgeError unless 'before' ran the model as the adapter started from (the base model
    alone, or the adapter `start` that `teach rl` went on from) and 'after' this adapter."""
    first = before.get("model", {})
    second = after.get("model", {})
    if (first.get("adapter") or "") != start:
        ran = f"adapter {first['adapter']!r}" if first.get("adapter") else "no adapter"
        wanted = f"--adapter {start} (the adapter {name!r} was taught from)" if start else \
            "--adapter none (auto, the default, loads the model's 'default' adapter)"
        raise JudgeError(f"the 'before' eval ran with {ran}", f"run it with {wanted}")
    if second.get("adapter", "") != name:
        raise JudgeError(f"the 'after' eval ran with adapter {second.get('adapter') or 'none'!r}"
                         f", not {name!r}", f"run eval with --adapter {name}")
    if first.get("name") != second.get("name"):
        raise JudgeError(f"the evals ran different models ({first.get('name')!r} and "
                         f"{second.get('name')!r})", "run both on the adapter's base model")
    if first.get("quantization") != second.get("quantization"):
        raise JudgeError(f"the evals loaded the model differently ({first.get('quantization')!r}"
                         f" and {second.get('quantization')!r})",
                         "run both with the same --quantization (the one the adapter was "
                         "trained over)")


def started_from(model_folder: Path, name: str) -> str:
    """The adapter `name` was taught from (its card's from_adapter: `teach rl`), or ''."""
    origin = read_card(check_adapter(model_folder, name)).get("from_adapter")
    return str(origin.get("name", "")) if isinstance(origin, dict) else ""


def discard_folder(data: Path) -> Path:
    """Where the figures of discarded adapters are kept."""
    return data / "teach" / "discarded"


