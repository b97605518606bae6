"""`python -m authoring stamp` (authoring/fingerprints.py): every French text that records its English, stamped.

An author never types a fingerprint. `--new` writes `of` in every French text that has none yet (a row written
for the first time), never in a stale one; a stale row is stamped by name once re-read. Each kind of file keeps
every other byte as the translator wrote it (tomlkit): a catalogue's [key.fr] table and its hints, a notebook's
markdown cell, an audit row's inline `fr = { instruction = ... }`.
"""

import json

from authoring import fingerprints
from authoring.fingerprints import Row, stamp
from authoring.notebook_translations import fingerprint


def test_a_catalogue_row_is_stamped_in_its_french_table_and_nothing_else_changes(tmp_path):
    path = tmp_path / "thing.toml"
    text = '[a]\ntext = "one"\n[a.fr]\ntext = "un"\n\n[b]\ntext = "two"\n[b.fr]\nof = "00000000"\ntext = "deux"\n'
    path.write_text(text, encoding="utf-8")
    assert stamp(Row("catalogue", path, "a", "new", "one")) == fingerprint("one")
    assert path.read_text(encoding="utf-8") == text.replace("[a.fr]\n", f'[a.fr]\nof = "{fingerprint("one")}"\n')
    stamp(Row("catalogue", path, "b", "stale", "two"))
    assert f'[b.fr]\nof = "{fingerprint("two")}"\ntext = "deux"' in path.read_text(encoding="utf-8")


def test_a_new_rows_of_goes_under_its_header_not_after_the_comment_opening_the_next_section(tmp_path):
    """Appended at the end of its table, `of` landed after a comment that opens the next section; a row written later
    above that comment then took it over (a stale fingerprint on the wrong row)."""
    path = tmp_path / "course.toml"
    path.write_text('["8.1"]\ntext = "one"\n["8.1".fr]\ntext = "un"\n\n# the next section\n[c]\ntext = "three"\n',
                    encoding="utf-8")
    stamp(Row("catalogue", path, "8.1", "new", "one"))
    assert f'["8.1".fr]\nof = "{fingerprint("one")}"\ntext = "un"\n\n# the next section\n' in path.read_text(encoding="utf-8")


def test_an_exercises_hints_are_stamped_in_their_table(tmp_path):
    path = tmp_path / "notebook9.toml"
    path.write_text('[hints]\n"9.1" = ["Try.", "Try harder."]\n\n[hints.fr]\n"9.1" = ["Essayez.", "Encore."]\n',
                    encoding="utf-8")
    english = json.dumps(["Try.", "Try harder."])
    stamp(Row("catalogue", path, "hints:9.1", "new", english))
    assert f'[hints.fr.of]\n"9.1" = "{fingerprint(english)}"' in path.read_text(encoding="utf-8")


def test_an_audit_rows_inline_table_gains_its_of_in_the_files_own_style(tmp_path):
    path = tmp_path / "notebook9.toml"
    row = '[["9.1"]]\ninstruction = "double it"\nfr = { instruction = "doublez-le : deux fois" }\n'
    path.write_text(row + "\n" + row, encoding="utf-8")
    stamp(Row("audit", path, "9.1#2", "new", "double it"))
    first, second = path.read_text(encoding="utf-8").split("\n\n")
    assert first + "\n" == row  # the first row was not named
    assert second.endswith(f'fr = {{ instruction = "doublez-le : deux fois", of = "{fingerprint("double it")}" }}\n')


def test_a_notebooks_markdown_cell_is_stamped_by_its_id(tmp_path):
    path = tmp_path / "09_x.toml"
    path.write_text("[cells.abc123]\nof = \"00000000\"\ntext = '''\n# Titre'''\n", encoding="utf-8")
    stamp(Row("notebook", path, "abc123", "stale", "# Title"))
    assert path.read_text(encoding="utf-8") == f"[cells.abc123]\nof = \"{fingerprint('# Title')}\"\ntext = '''\n# Titre'''\n"


def test_the_course_has_no_french_text_left_to_stamp_and_every_row_it_needs(capsys):
    assert fingerprints.main([]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("0 missing, 0 new, 0 stale"), out
    assert fingerprints.problems() == ([], [])


def test_each_row_says_its_file_key_and_the_command_that_fixes_it():
    new = Row("audit", fingerprints.ROOT / "looplab/checks/audit/notebook1.toml", "1.1#1", "new", "x")
    stale = Row("catalogue", fingerprints.ROOT / "looplab/texts/viewer.toml", "legend", "stale", "Legend")
    assert new.line() == "new      looplab/checks/audit/notebook1.toml  1.1#1: `python -m authoring stamp --new`"
    assert stale.line().endswith("then `python -m authoring stamp looplab/texts/viewer.toml legend`")
