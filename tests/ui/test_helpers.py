"""The Qt-free helpers behind the panes: spec form conversions, PTX/SASS correlation and
instruction mix, completion words, comment toggling, templates, recovery locks."""

from __future__ import annotations

from pathlib import Path

from app.base.paths import RESOURCES
from app.compile.assembly import (
    SassRow,
    opcode,
    ptx_mix,
    ptx_source_lines,
    sass_mix,
    sass_rows_for_line,
)
from app.spec.form import build_data, fields_from_data, parse_case, split_list, validate
from app.workspace import cuda_language, recovery
from app.workspace.templates import TemplateExists, create_from_template, list_templates
from ui.editor.text_rules import indent_after, toggle_comment

PTX = """.file 1 "/tmp/k/vector_add.cu"
.visible .entry vector_add(
{
.loc 1 14 5
mov.u32 %r1, %ctaid.x;
mad.lo.s32 %r4, %r1, %r2, %r3;
.loc 1 19 9
ld.global.f32 %f1, [%rd1];
add.f32 %f3, %f1, %f2;
st.global.f32 [%rd3], %f3;
ret;
}
"""


def test_lists_split_on_top_level_commas_only() -> None:
    assert split_list("cdiv(n, 256), 4,") == ["cdiv(n, 256)", "4"]
    assert parse_case("n = 1_000, x = 2.5") == {"n": 1000, "x": 2.5}


def test_the_form_round_trips_a_template_spec_and_names_bad_fields() -> None:
    import tomllib

    path = RESOURCES / "kernels" / "vector_add" / "vector_add.toml"
    data = tomllib.loads(path.read_text())
    fields = fields_from_data(data)
    rows = [{"name": a["name"], "kind": a["kind"], "dtype": a["dtype"],
             "shape": ", ".join(a.get("shape", [])),
             "detail": str(a.get("value") or a.get("init") or "")} for a in data["arg"]]
    spec = validate(build_data(fields, rows), path.parent, path)
    assert not isinstance(spec, list) and spec.entry == "vector_add"
    fields["grid"] = "cdiv(n, 256"
    problems = validate(build_data(fields, rows), path.parent, path)
    assert isinstance(problems, list) and problems[0].field == "[launch].grid[0]"
    fields["grid"], fields["block"] = "cdiv(n, 256)", "2048"
    problems = validate(build_data(fields, rows), path.parent, path)
    assert isinstance(problems, list) and problems[0].field.startswith("[launch].block")


def test_ptx_and_sass_map_to_source_lines_and_mix() -> None:
    lines = ptx_source_lines(PTX, "vector_add.cu")
    assert lines[PTX.splitlines().index("add.f32 %f3, %f1, %f2;")] == 19
    assert lines[PTX.splitlines().index("mov.u32 %r1, %ctaid.x;")] == 14
    assert ptx_mix(PTX) == {"memory": 2, "arithmetic": 2, "other": 1, "control": 1}
    rows = [SassRow(0, "S2R R0, SR_CTAID.X ;", "vector_add.cu", 14),
            SassRow(16, "@!P0 EXIT ;", "vector_add.cu", 15),
            SassRow(32, "LDG.E R2, desc[UR4][R2.64] ;", "vector_add.cu", 19),
            SassRow(48, "FADD R9, R2, R5 ;", "/other/vector_add.cu", 19),
            SassRow(64, "STG.E desc[UR4][R6.64], R9 ;", "header.h", 19)]
    assert opcode("@!P0 LDG.E.64 R2, [R4] ;") == "LDG"
    assert sass_rows_for_line(rows, 19, "vector_add.cu") == [2, 3]
    assert sass_mix(rows) == {"other": 1, "control": 1, "memory": 2, "arithmetic": 1}


def test_completion_and_editing_rules() -> None:
    assert cuda_language.completions("atomicA")[0] == "atomicAdd"
    assert cuda_language.completions("syncth")[0] == "__syncthreads"
    assert "my_total" in cuda_language.completions("my_", {"my_total"})
    assert cuda_language.call_tip("__shfl_xor_sync").startswith("T __shfl_xor_sync(")
    lines = ["  a = 1;", "", "    b = 2;"]
    assert toggle_comment(lines) == ["  // a = 1;", "", "  //   b = 2;"]
    assert toggle_comment(toggle_comment(lines)) == lines
    assert indent_after("    if (x) {", 4) == 8 and indent_after("  x = 1; // {", 4) == 2


def test_templates_are_listed_and_copied_without_overwriting(tmp_path: Path) -> None:
    templates = list_templates()
    assert templates[0].name == "vector_add" and len(templates) >= 10
    assert templates[0].description.startswith("c = a + b")
    source = create_from_template(templates[0], tmp_path)
    assert sorted(p.name for p in source.parent.iterdir()) == [
        "vector_add.cu", "vector_add.toml", "vector_add_ref.py"]
    try:
        create_from_template(templates[0], tmp_path)
    except TemplateExists:
        pass
    else:
        raise AssertionError("a second copy must not overwrite the first")


def test_a_locked_session_is_live_and_an_unlocked_one_crashed(tmp_path: Path) -> None:
    live = recovery.RecoveryStore(tmp_path)
    live.save("b1", "k.cu", "/x/k.cu", "text")
    assert recovery.recoverable(tmp_path) == []
    dead = tmp_path / "123-dead"
    dead.mkdir()
    (dead / "b2.json").write_text('{"title": "t.cu", "path": null, "text": "lost?", '
                                  '"saved_at": 1}')
    (dead / "broken.json").write_text("{not json")
    found = recovery.recoverable(tmp_path)
    assert [(b.title, b.text, b.path) for b in found] == [("t.cu", "lost?", None)]
    live.close()
    assert not live.folder.exists()
