"""Writes the `inflection` bench suite (docs/bench.md): eight tasks on inflection 0.5.1 (MIT,
Janne Vanhala; vendored once, in `source/`, from its PyPI sdist: every task starts from it, its
own files laid over it), each with scripted agents and a hidden oracle beside it. Three tasks have an edge case the project's own test and the task's
criterion do not cover: their scripted player gets it wrong on its first turn and right once a
reviewer names it; the scripted coach runs its own check of the edge case. So a workflow
without a reviewer (`solo`) approves three wrong changes that the oracle rejects, and the
Player/Coach loop fixes them in a second turn. Run `python3 make.py` after changing a task.
"""
import os
import shutil
import stat
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "source")

# (id, function, signature doc, good implementation, sloppy implementation or None,
#  the shallow test, the criterion, the edge-case check (coach and oracle), oracle extra)
TASKS = [
    ("kebab", "kebab", "kebab(word): the dasherized underscore form, 'DeviceType' -> 'device-type'",
     "def kebab(word):\n    return inflection.dasherize(inflection.underscore(word))\n", None,
     "self.assertEqual(extras.kebab('DeviceType'), 'device-type')",
     "extras.kebab('DeviceType') == 'device-type'",
     "assert extras.kebab('HTTPServer') == 'http-server', extras.kebab('HTTPServer')"),
    ("keys", "snake_keys", "snake_keys(mapping): the mapping with every key in underscore form",
     "def snake_keys(mapping):\n    return {inflection.underscore(k): v for k, v in mapping.items()}\n", None,
     "self.assertEqual(extras.snake_keys({'FirstName': 1}), {'first_name': 1})",
     "extras.snake_keys({'FirstName': 1}) == {'first_name': 1}",
     "assert extras.snake_keys({}) == {}; assert extras.snake_keys({'aB': 2}) == {'a_b': 2}"),
    ("human-list", "human_list", "human_list(words): 'a, b and c'; two words 'a and b'; one word as it is; none ''",
     "def human_list(words):\n    words = list(words)\n    if len(words) < 2:\n        return ''.join(words)\n    return ', '.join(words[:-1]) + ' and ' + words[-1]\n",
     "def human_list(words):\n    words = list(words)\n    return ', '.join(words[:-1]) + ' and ' + words[-1]\n",
     "self.assertEqual(extras.human_list(['a', 'b', 'c']), 'a, b and c')",
     "extras.human_list(['a', 'b', 'c']) == 'a, b and c'",
     "assert extras.human_list(['a']) == 'a', extras.human_list(['a']); assert extras.human_list([]) == ''"),
    ("count-noun", "count_noun", "count_noun(n, word): '1 person', '2 people', '0 people'",
     "def count_noun(n, word):\n    return f'{n} {word if n == 1 else inflection.pluralize(word)}'\n",
     "def count_noun(n, word):\n    return f'{n} {inflection.pluralize(word) if n > 1 else word}'\n",
     "self.assertEqual(extras.count_noun(2, 'person'), '2 people')",
     "extras.count_noun(2, 'person') == '2 people'",
     "assert extras.count_noun(0, 'person') == '0 people', extras.count_noun(0, 'person'); assert extras.count_noun(1, 'person') == '1 person'"),
    ("acronym", "acronym", "acronym(phrase): 'portable network graphics' -> 'PNG'",
     "def acronym(phrase):\n    return ''.join(w[0].upper() for w in phrase.split())\n", None,
     "self.assertEqual(extras.acronym('portable network graphics'), 'PNG')",
     "extras.acronym('portable network graphics') == 'PNG'",
     "assert extras.acronym('  as   soon as possible ') == 'ASAP'"),
    ("swap-style", "swap_style", "swap_style(word): camel case to underscore, underscore to camel case",
     "def swap_style(word):\n    if '_' in word:\n        return inflection.camelize(word)\n    return inflection.underscore(word)\n", None,
     "self.assertEqual(extras.swap_style('device_type'), 'DeviceType')",
     "extras.swap_style('device_type') == 'DeviceType'",
     "assert extras.swap_style('DeviceType') == 'device_type'"),
    ("plural-title", "plural_title", "plural_title(word): the titleized plural, 'octopus' -> 'Octopi'",
     "def plural_title(word):\n    return inflection.titleize(inflection.pluralize(word))\n", None,
     "self.assertEqual(extras.plural_title('octopus'), 'Octopi')",
     "extras.plural_title('octopus') == 'Octopi'",
     "assert extras.plural_title('raw_score') == 'Raw Scores'"),
    ("identifier", "identifier", "identifier(text): a Python identifier, 'Donald E. Knuth' -> 'donald_e_knuth'; one starting with a digit gets a leading '_'",
     "def identifier(text):\n    name = inflection.parameterize(text, separator='_')\n    return '_' + name if name[:1].isdigit() else name\n",
     "def identifier(text):\n    return inflection.parameterize(text, separator='_')\n",
     "self.assertEqual(extras.identifier('Donald E. Knuth'), 'donald_e_knuth')",
     "extras.identifier('Donald E. Knuth') == 'donald_e_knuth'",
     "assert extras.identifier('3 little pigs') == '_3_little_pigs', extras.identifier('3 little pigs')"),
]

CONFIG = """\
# Scripted agents: the bench measures the workflows, not a model.
[checks.test]
cmd = "PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s tests -q"
timeout = "60s"

[roles.player]
agent = "command"
command = ["sh", ".autobuild/agents/player.sh"]

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/agents/coach.sh"]
"""

PLAYER = """\
#!/bin/sh
# Scripted player: writes inflection/extras.py; {behaviour}
set -eu
mkdir -p tests
if [ "${{AUTOBUILD_TURN:-1}}" -ge 2 ] || [ {first_is_good} = 1 ]; then
    cp .autobuild/agents/good.py inflection/extras.py
else
    cp .autobuild/agents/first.py inflection/extras.py
fi
cp .autobuild/agents/test_extras.py tests/test_extras.py
echo "Added inflection.extras.{function} with a test."
"""

COACH = """\
#!/bin/sh
# Scripted coach: approves when its own check of the edge case passes, else names it.
if PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 python3 .autobuild/agents/edge_check.py >/dev/null 2>&1; then
    decision=approve; issues='[]'; status=met
else
    decision=feedback; status=not_met
    issues='[{{"severity": "must_fix", "category": "correctness", "description": "{function} is wrong at the edge: {edge_words}", "location": "inflection/extras.py", "suggestion": "handle the edge case"}}]'
fi
cat <<VERDICT
\\`\\`\\`json
{{"decision": "$decision", "summary": "review", "issues": $issues, "criteria": [{{"id": "AC-001", "status": "$status", "evidence": "ran it"}}]}}
\\`\\`\\`
VERDICT
"""


def write(path, text, executable=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if executable:
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def module(body):
    return '"""Helpers built on inflection (a bench task)."""\nimport inflection\n\n\n' + body


for number, (name, function, doc, good, sloppy, test, criterion, edge) in enumerate(TASKS, 1):
    task_id = f"TASK-{number:02d}"
    root = os.path.join(HERE, name)
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    write(os.path.join(root, ".gitignore"), "__pycache__/\n")
    write(os.path.join(root, "tests/__init__.py"), "")
    write(os.path.join(root, "tests/test_inflection_basics.py"), textwrap.dedent("""\
        import unittest

        import inflection


        class Basics(unittest.TestCase):
            def test_underscore(self):
                self.assertEqual(inflection.underscore('DeviceType'), 'device_type')
        """))
    write(os.path.join(root, ".autobuild/.gitignore"), "runs/\nworktrees/\n")
    write(os.path.join(root, ".autobuild/config.toml"), CONFIG)
    write(os.path.join(root, f".autobuild/tasks/{task_id}.md"), textwrap.dedent(f"""\
        ---
        id: {task_id}
        title: Add inflection.extras.{function}
        ---
        # Add inflection.extras.{function}

        Add `{doc}` to a new module `inflection/extras.py`, with a test in `tests/`.

        ## Acceptance Criteria
        - [ ] AC-001: `{function}` does what it says `verify: python3 -c "from inflection import extras; assert {criterion}"`
        """))
    agents = os.path.join(root, ".autobuild/agents")
    write(os.path.join(agents, "good.py"), module(good))
    write(os.path.join(agents, "first.py"), module(sloppy or good))
    write(os.path.join(agents, "test_extras.py"), textwrap.dedent(f"""\
        import unittest

        from inflection import extras


        class Extras(unittest.TestCase):
            def test_{function}(self):
                {test}
        """))
    write(os.path.join(agents, "edge_check.py"), f"from inflection import extras\n{edge}\n")
    behaviour = ("gets the edge case wrong on its first turn, right once told"
                 if sloppy else "right the first time")
    write(os.path.join(agents, "player.sh"), PLAYER.format(
        behaviour=behaviour, first_is_good=0 if sloppy else 1, function=function), executable=True)
    edge_words = edge.split(";")[0].replace("assert ", "").replace('"', "'")
    write(os.path.join(agents, "coach.sh"), COACH.format(
        function=function, edge_words=edge_words), executable=True)
    oracle = root + ".oracle"
    if os.path.exists(oracle):
        shutil.rmtree(oracle)
    write(os.path.join(oracle, "oracle_check.py"), textwrap.dedent(f"""\
        # The bench's own check of {task_id}; never shown to a run.
        from inflection import extras
        assert {criterion}
        {edge}
        """))
    write(os.path.join(oracle, "run"), "#!/bin/sh\nPYTHONDONTWRITEBYTECODE=1 exec python3 oracle_check.py\n",
          executable=True)

write(os.path.join(HERE, "suite.toml"), "# The budget every task runs with, under each workflow, and the code every task starts\n# from (its own files laid over it).\nmax_turns = 3\nmax_wall_time = \"10m\"\nbase = \"source\"\n")
