"""A <TAB> answers from the command tree kept for this source, the same words as one built from the app."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from failres.cli.help_cmds import description
from failres.clidoc.model import CommandDoc
from failres.clidoc.tree_cache import kept_tree, source_fingerprint, tree_document, tree_of

# Whether typer was imported by the line that ran.
PROBE = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('failres', run_name='__main__')\n"
         "except SystemExit as done:\n    print('typer' in sys.modules, done.code, file=sys.stderr)")

LINES = (("",), ("run", "--"), ("help", "less"), ("decide", "x", "--scope-files", ""), ("--no-pager", "jou"))


def tab(cwd: Path, env: dict[str, str], *words: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE, "__complete", *words], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def nodes(doc: CommandDoc) -> list[CommandDoc]:
    return list(doc.walk())


def test_the_kept_form_reads_back_as_the_apps_description() -> None:
    built = description()
    again = tree_of(json.loads(json.dumps(tree_document(built))))
    assert again == built
    # Compared apart: a field equality leaves out.
    assert [n.accepts_extra for n in nodes(again)] == [n.accepts_extra for n in nodes(built)]


def test_a_second_tab_answers_from_the_kept_tree_the_words_the_first_built(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    for words in LINES:
        shutil.rmtree(cache, ignore_errors=True)
        built = tab(tmp_path, env, *words)
        assert built.stderr.strip().splitlines()[-1] == "True 0", built.stderr
        assert len(list((cache / "failres").glob("commands-*.json"))) == 1
        kept = tab(tmp_path, env, *words)
        assert kept.stderr.strip().splitlines()[-1] == "False 0", kept.stderr
        assert kept.stdout == built.stdout, words
    assert tab(tmp_path, env, "lessons", "l").stdout == "list\n"


def test_a_damaged_kept_tree_is_rebuilt_and_answers_the_same(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert tab(tmp_path, env, "lessons", "l").stdout == "list\n"
    [kept] = (tmp_path / "cache" / "failres").glob("commands-*.json")
    for damage in ('{"path": []}', "not json", '{"path": [], "summary": 1, "nope": true}'):
        kept.write_text(damage)
        again = tab(tmp_path, env, "lessons", "l")
        assert (again.returncode, again.stdout) == (0, "list\n"), again.stderr
        assert tree_of(json.loads(kept.read_text())) == description()


def test_a_cache_that_cannot_be_written_still_answers(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    env = {**os.environ, "XDG_CACHE_HOME": str(blocked)}
    done = tab(tmp_path, env, "lessons", "l")
    assert (done.returncode, done.stdout) == (0, "list\n"), done.stderr


def test_a_changed_source_gets_a_tree_of_its_own(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(Path(__file__).parent, source / "pkg")
    before = source_fingerprint((source,))
    assert source_fingerprint((source,)) == before
    module = next((source / "pkg").glob("*.py"))
    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert source_fingerprint((source,)) != before
    # The parser's entry file counts too: an upgraded typer describes the same commands its own way.
    parser = tmp_path / "typer_init.py"
    parser.write_text("")
    with_parser = source_fingerprint((source,), (parser,))
    os.utime(parser, ns=(0, 10**9))
    assert source_fingerprint((source,), (parser,)) != with_parser
    built: list[int] = []

    def build() -> CommandDoc:
        built.append(1)
        return description()

    cache = tmp_path / "cache"
    assert kept_tree(build, cache, (source,)) == description()
    assert kept_tree(build, cache, (source,)) == description()
    assert built == [1]
    module.write_text(module.read_text() + "\n# edited\n")
    assert kept_tree(build, cache, (source,)) == description()
    assert built == [1, 1]


def test_trees_of_older_sources_are_forgotten_beyond_a_few(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    module = source / "m.py"
    cache = tmp_path / "cache"
    for n in range(7):
        module.write_text("x" * (n + 1))
        kept_tree(description, cache, (source,))
    assert len(list(cache.glob("commands-*.json"))) == 5
