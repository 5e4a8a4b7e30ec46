"""What a trial on real public transcripts got wrong, held on shortened excerpts of them.

Each excerpt keeps the records that decided the outcome, from the file named beside it;
long replies are cut to their opening lines, which is all the reader compares."""

from __future__ import annotations

import json
from pathlib import Path

from lessons.learning.followups import Followup, classify_followup
from lessons.learning.interventions import extract_interventions
from lessons.learning.provenance import Origin, classify_origin
from lessons.learning.transcripts.aider import load_aider

# github:BjornNordblom/pocketflow-text2sql-gui@ecff57ba2769cce8f4aeb473b40ed17008d0faeb:.aider.chat.history.md
# (lines 2-13, 1356-1360, 1518-1531, 1588-1600, 1663-1672, 1986-1992). The architect answered,
# the person let files into the chat, it answered again (twice), and aider relayed only the
# last answer to the editor.
ARCHITECT_HEADER = """
# aider chat started at 2025-08-06 12:06:30

> Git repository created in C:\\temp\\pocketflow-text2sql  
> C:\\Users\\NORD028\\AppData\\Local\\anaconda3\\envs\\aider\\Scripts\\aider --model openrouter/openrouter/horizon-beta --architect --dark-mode --read LLM.md  
> Aider v0.85.2  
> Model: openrouter/openrouter/horizon-beta with architect edit format  
> Editor model: openrouter/openrouter/horizon-beta with editor-whole edit format  
> Git repo: .git with 0 files  
> Repo-map: using 4096 tokens, auto refresh  
> Added LLM.md to the chat (read-only).  

#### You job now is to ensure that all tests can run successfully.  

"""
FIRST_ANSWER = ("Understood. Here are the precise, minimal code changes to ensure the tests run and pass. "
                "Apply them exactly; do not rewrite entire files.\n\n1) backend/flow_nodes.py\n")
SECOND_ANSWER = ("Thanks. I have everything needed for now. Your current files already align closely with "
                 "the planned tests. Make only the following minimal adjustments\n\n1) backend/flow_nodes.py\n")
LAST_ANSWER = ("Great. Based on the current files, make the following minimal changes to ensure all tests "
               "run and pass.\n\n1) backend/flow_nodes.py\nUpdate run_text_to_sql to always return a "
               "consistent payload containing ok, data, err, sql, attempts, schema.\n\nChange:\n"
               "    if \"final_result\" in shared:\n")
ADD = "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: y  \n"
NEXT_TASK = ("Now I need you to plan and implement a minimal web client frontend into frontend directory. "
             "Keep it to the minimum and as few external dependencies as possible.")
ARCHITECT_INPUTS = """
# 2025-08-06 12:10:38.827089
+You job now is to ensure that all tests can run successfully.

# 2025-08-06 12:12:45.700992
+Now I need you to plan and implement a minimal web client frontend into frontend directory. Keep it to the minimum and as few external dependencies as possible.
"""


def _relayed(reply: str) -> str:
    return "".join(f"#### {line}  \n" if line else "####   \n" for line in reply.rstrip("\n").split("\n"))


def architect_history(folder: Path) -> Path:
    chat = folder / ".aider.chat.history.md"
    chat.write_text(
        ARCHITECT_HEADER + FIRST_ANSWER + "\n> Tokens: 6.5k sent, 1.3k received.  \n> backend\\app.py  \n" + ADD
        + "\n" + SECOND_ANSWER + "\n> Tokens: 9.2k sent, 498 received.  \n> backend\\tests\\__init__.py  \n" + ADD
        + "\n" + LAST_ANSWER + "\n> Tokens: 9.8k sent, 561 received.  \n\n" + _relayed(LAST_ANSWER)
        + "\nbackend/flow_nodes.py\n<source>\nfrom __future__ import annotations\n</source>\n\n"
        "> Tokens: 4.7k sent, 1.7k received.  \n> Applied edit to backend/flow_nodes.py  \n"
        "> Commit bbc3fbf fix: unify response payloads and explicit QueryResponse mapping  \n"
        "> You can use /undo to undo and discard each aider commit.  \n\n"
        f"#### {NEXT_TASK}  \n\nI'll keep the frontend to plain HTML.\n", encoding="utf-8")
    (folder / ".aider.input.history").write_text(ARCHITECT_INPUTS, encoding="utf-8")
    return chat


def test_the_architects_last_answer_relayed_after_files_were_added_is_the_models(tmp_path: Path) -> None:
    """The relay repeats the third answer, not the first: it is the agent's, so the person's
    next words stay clean (read as no one's words, it made every later turn untrusted)."""
    t = load_aider(architect_history(tmp_path))
    answer, relay = [m for m in t.messages if "Great. Based on the current files" in m.texts_by("agent")]
    assert (answer.role, relay.role) == ("assistant", "user") and not relay.texts_by("person")
    (task,) = [i for i in extract_interventions(t) if i.intervention == NEXT_TASK]
    assert classify_origin(t, task.message_index) is Origin.CLEAN


# github:Blizard32/seniales@5fd48734fd5534a53a92f0e1dd020944e856291f:.aider.chat.history.md
# (lines 14-33, 68-72, 113, 279-281, 405, 455-460; replies cut) and its .aider.input.history.
# The person declined two files aider offered to create from a reply's headings, then asked
# whether the commit was done; before that, a long prompt described the tests to write.
SENIALES_TASK = ("Quiero que me agregues lo analizado al README.md y además crees un archivo nuevo para "
                 "realizar test de las funciones que estan generadas actualmentes, los test preferiblemente "
                 "deberían estar en una subcarpeta llamada test y que haya un archivo para cada test, en estos "
                 "se debe corroborar que se ejecuten las funciones sin que lancen error intentando llevarlas al "
                 "fallo. Tambien estaría bueno otro archivo RunTests que ejecute cada archivo de la subcarpeta")
SENIALES_ASKED = "Hiciste lo que te pedí?? Pudiste hacer el commit y push con los cambios?"
SENIALES_CHAT = f"""
# aider chat started at 2026-04-22 09:06:43

> C:\\Users\\Mi Notebook\\AppData\\Local\\Packages\\PythonSoftwareFoundation.Python.3.11_qbz5n2kfra8p0\\LocalCache\\local-packages\\Python311\\Scripts\\aider --model ollama/qwen3  
> Aider v0.86.2  
> Model: ollama/qwen3 with whole edit format  
> Git repo: .git with 16 files  
> Repo-map: using 4096 tokens, auto refresh  

#### Analizar el directorio en el que te encuentras y generar un resumen del objetivo del mismo  

El proyecto genera señales estándar y realiza operaciones matemáticas.

> Tokens: 1.3k sent, 545 received.  
> README.md  
> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: y  
> seniales\\funciones.py  
> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: n  

#### {SENIALES_TASK}  

seniales/test/test_signals.py
```
import unittest
```

> Tokens: 2.4k sent, 2.0k received.  
> seniales/test/test_signals.py  
> Create new file? (Y)es/(N)o [Yes]: y  

#### cual es el comando para que los cambios planteados se generen? y para que hagas un commit con push?  

Para generar los cambios y realizar un commit con push, use estos comandos en la terminal:

**1. Verificar cambios pendientes:**
```bash
git status
```

> Tokens: 5.4k sent, 554 received.  
> 1. Verificar cambios pendientes  
> Create new file? (Y)es/(N)o [Yes]: n  
> Skipping edits to 1. Verificar cambios pendientes  
> 2. Añadir archivos al staging area  
> Create new file? (Y)es/(N)o [Yes]: n  
> Skipping edits to 2. Añadir archivos al staging area  

#### {SENIALES_ASKED}  

Sí, los cambios están listos.
"""
SENIALES_INPUTS = f"""
# 2026-04-22 09:09:24.417463
+Analizar el directorio en el que te encuentras y generar un resumen del objetivo del mismo

# 2026-04-22 09:12:43.861636
+Y

# 2026-04-22 09:12:46.031391
+N

# 2026-04-22 09:17:16.991109
+{SENIALES_TASK}

# 2026-04-22 09:24:28.292046
+Y

# 2026-04-22 10:12:28.324873
+cual es el comando para que los cambios planteados se generen? y para que hagas un commit con push?

# 2026-04-22 10:14:19.497608
+N

# 2026-04-22 10:14:31.131339
+N

# 2026-04-22 10:16:05.038919
+{SENIALES_ASKED}
"""


def test_a_task_written_as_one_long_sentence_is_a_request_though_it_says_where_things_should_be() -> None:
    assert classify_followup(SENIALES_TASK, "El proyecto genera señales estándar.") is Followup.REQUEST


def test_declined_files_a_question_and_a_new_task_from_a_real_aider_session_propose_no_rule(
        repo: Path, tmp_path: Path, cli) -> None:
    """All clean, none a standing correction: a wordless "no" to a file aider offered to
    create, the person asking whether the commit was made, and the next task."""
    (tmp_path / "s").mkdir()
    chat = tmp_path / "s" / ".aider.chat.history.md"
    chat.write_text(SENIALES_CHAT, encoding="utf-8")
    (tmp_path / "s" / ".aider.input.history").write_text(SENIALES_INPUTS, encoding="utf-8")
    out = cli(repo, "reflect", str(chat), "--no-edits", "--json")
    assert out.code == 0, out.err
    recorded = json.loads(out.out)
    assert {d["origin"] for d in recorded} == {"clean"}
    assert SENIALES_ASKED in [d["intervention"] for d in recorded]
    (outcome,) = json.loads(cli(repo, "learn", "--json").out)
    assert outcome["proposal"] is None, json.dumps(outcome["proposal"])[:3000]
