"""Issue 17, point 9: the assistant's answers are rendered as Markdown, and a proposal's diff
gets most of the pane (all of it on request). Through the real window, with a scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QFontInfo, QTextCursor
from test_propose import PROPOSED, make_window, send_propose

from ui.main_window import MainWindow

ANSWER = f"""## Why a grid-stride loop

- any **grid size** covers all `n` elements
- the loop condition is the bounds check

```cuda
{PROPOSED}```
"""


@pytest.fixture
def answering(qtbot: Any, tmp_path: Path, prompter: Any) -> Iterator[MainWindow]:
    """A window whose model answers ANSWER."""
    window, _ = make_window(qtbot, tmp_path, prompter, ANSWER)
    yield window
    window.assistant_commands.shutdown()


def test_the_answer_is_rendered_as_markdown(qtbot: Any, answering: MainWindow,
                                            kernel_copy: Path) -> None:
    window = answering
    window.open_files([kernel_copy])
    send_propose(qtbot, window, "a grid-stride vector_add")
    view = window.assistant_pane.answer
    assert view.raw_text() == ANSWER
    shown = view.toPlainText()
    assert "##" not in shown and "**" not in shown and "```" not in shown
    assert "Why a grid-stride loop" in shown and "grid size" in shown
    document = view.document()
    heading = document.findBlockByNumber(0)
    assert heading.text() == "Why a grid-stride loop" and heading.blockFormat().headingLevel() == 2
    item = document.find("grid size")
    assert item.charFormat().fontWeight() > 500  # bold
    assert item.block().textList() is not None  # a list item
    code = document.find("threadIdx.x")
    assert QFontInfo(code.charFormat().font()).fixedPitch()


def test_the_diff_gets_most_of_the_pane_and_all_of_it_on_request(
        qtbot: Any, answering: MainWindow, kernel_copy: Path) -> None:
    window = answering
    window.open_files([kernel_copy])
    window.show_pane("assistant")
    pane = window.assistant_pane
    send_propose(qtbot, window, "a grid-stride vector_add")
    assert pane.proposal.isVisibleTo(pane)
    answer_size, proposal_size = pane.splitter.sizes()
    assert proposal_size >= 2 * answer_size
    pane.enlarge_button.click()
    assert not pane.answer.isVisibleTo(pane) and not pane.question.isVisibleTo(pane)
    qtbot.waitUntil(lambda: pane.diff_view.height() > 0.6 * pane.height(), timeout=3000)
    pane.enlarge_button.click()
    assert pane.answer.isVisibleTo(pane)
    cursor = pane.diff_view.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    pane.discard_button.click()
    assert not pane.enlarge_button.isChecked()
