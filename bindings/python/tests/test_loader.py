"""The binding from the outside: real trees, the installed wheel."""

from __future__ import annotations

import keyword
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import lisa_context
from lisa_context import LisaContextError, Loader, Snapshot
from conftest import Tree, write


def loader(tree: Tree, **options: Any) -> Loader:
    return Loader(home=tree.home, home_policy=False, **options)


def test_snapshot_has_the_chain_and_the_skills(tree: Tree) -> None:
    s = loader(tree).snapshot(tree.sub)
    assert isinstance(s, Snapshot)
    paths = [b.path for b in s.instruction_files]
    assert paths == [
        str(tree.home / "AGENTS.md"),
        str(tree.repo / "AGENTS.md"),
        str(tree.sub / "AGENTS.md"),
    ]
    assert [b.origin for b in s.instruction_files] == ["home", "project", "project"]
    for text in ("home rules: be brief", "repo rules: run the tests", "sub rules: keep sub tidy"):
        assert text in s.prompt
    assert [k.name for k in s.skills] == ["release"]
    assert s.skills[0].frontmatter.description == "Cut a release."
    assert s.repo_root == str(tree.repo)
    assert len(s.fingerprint) == 32


def test_refresh_is_none_until_a_file_changes(tree: Tree) -> None:
    l = loader(tree)
    first = l.snapshot(tree.sub)
    assert l.fingerprint(tree.sub) == first.fingerprint
    assert l.refresh(tree.sub, first.fingerprint) is None
    write(tree.sub / "AGENTS.md", "sub rules, rewritten at another length\n")
    changed = l.refresh(tree.sub, first.fingerprint)
    assert changed is not None
    assert "rewritten at another length" in changed.prompt
    assert changed.fingerprint != first.fingerprint


def test_skill_and_its_errors(tree: Tree) -> None:
    l = loader(tree)
    f = l.skill(tree.sub, "release")
    assert f.name == "release" and f.origin == "home"
    assert "Steps to release." in f.content
    with pytest.raises(LisaContextError) as e:
        l.skill(tree.sub, "nope")
    assert e.value.code == "skill-not-found"
    # The fields `serve` writes, from the same report: the names available
    # and the advice.
    assert e.value.available == ["release"]
    with pytest.raises(LisaContextError) as near:
        l.skill(tree.sub, "releas")
    assert near.value.help is not None and "release" in near.value.help


def test_a_listed_rule_by_name(tree: Tree) -> None:
    write(
        tree.repo / ".cursor" / "rules" / "db.mdc",
        "---\ndescription: Database conventions\nalwaysApply: false\n---\nUse migrations.\n",
    )
    l = loader(tree, base_policy="cursor")
    s = l.snapshot(tree.repo)
    assert [(r.name, r.mode) for r in s.rules] == [("db", "listed")]
    r = l.rule(tree.repo, "db")
    assert r.content == "Use migrations." and r.mode == "listed"
    assert r.prompt.startswith("<<<") and "Use migrations." in r.prompt
    with pytest.raises(LisaContextError) as e:
        l.rule(tree.repo, "nope")
    assert e.value.code == "rule-not-found"


def test_access_loads_the_files_on_the_way_once(tree: Tree) -> None:
    l = loader(tree, base_policy="gemini")
    a = l.access(tree.repo, tree.sub / "file.txt", session="s1")
    assert [b.path for b in a.instruction_files] == [str(tree.sub / "GEMINI.md")]
    assert "gemini sub rules" in a.prompt
    again = l.access(tree.repo, tree.sub / "file.txt", session="s1")
    assert again.instruction_files == [] and again.prompt == ""
    other = l.access(tree.repo, tree.sub / "file.txt", session="s2")
    assert len(other.instruction_files) == 1


def test_access_outside_the_root_is_refused(tree: Tree, tmp_path: Path) -> None:
    l = loader(tree, base_policy="gemini")
    with pytest.raises(LisaContextError) as e:
        l.access(tree.repo, tmp_path / "elsewhere.txt")
    assert e.value.code == "access-outside-root"


def test_trust_status_and_diff(tree: Tree) -> None:
    l = loader(tree)
    status = l.trust_status(tree.sub)
    assert status.repo_root == str(tree.repo)
    diff = l.trust_diff(tree.sub)
    assert isinstance(diff.items, list)


def test_the_options_are_checked_at_the_boundary(tree: Tree) -> None:
    bad: List[Any] = [
        {"capacity": 0},
        {"capacity": -1},
        {"capacity": True},
        {"capacity": 1.5},
        {"capacity": 2**70},
        {"capacity": "8"},
        {"cache_bytes": 1},
        {"cache_bytes": 2**41},
        {"home_policy": "yes"},
        {"base_policy": 3},
        {"policy": b"/bytes/path"},
    ]
    for options in bad:
        with pytest.raises(LisaContextError) as e:
            Loader(home=tree.home, **options)
        assert e.value.code == "bad-request", options
    with pytest.raises(LisaContextError) as e:
        Loader(home=tree.home / "missing")
    assert e.value.code == "bad-home"
    assert Loader(home=tree.home, capacity=1, cache_bytes=65536).cached_entries == 0


def test_hostile_arguments_raise_never_abort(tree: Tree) -> None:
    l = loader(tree)
    hostile: List[Any] = ["", "relative/dir", "/no\0such", "\ud800", "/" + "a" * 100_000, 3, None, b"/x", object()]
    for cwd in hostile:
        with pytest.raises(LisaContextError):
            l.snapshot(cwd)
    for name in ["", "../x", "\0", "\udcff", "a" * 100_000]:
        with pytest.raises(LisaContextError):
            l.skill(tree.sub, name)
    with pytest.raises(LisaContextError):
        l.refresh(tree.sub, 12)  # type: ignore[arg-type]
    with pytest.raises(LisaContextError) as e:
        l.snapshot(tree.sub, root=tree.sub / "AGENTS.md")
    assert e.value.code in ("bad-cwd", "root-outside")


def test_an_unknown_shipped_policy_is_named(tree: Tree) -> None:
    with pytest.raises(LisaContextError) as e:
        Loader(home=tree.home, base_policy="cursorr")
    assert e.value.code == "unknown-policy"


def test_policy_invalid_carries_the_whole_diagnostic(tree: Tree, tmp_path: Path) -> None:
    policy = write(tmp_path / "bad.toml", 'version = 1\n[instructions]\nbudget-bytes = "lots"\n')
    l = loader(tree, policy=policy)
    with pytest.raises(LisaContextError) as e:
        l.snapshot(tree.sub)
    assert e.value.code == "policy-invalid"
    assert "budget-bytes" in e.value.message
    assert "bad.toml:3" in e.value.message, e.value.message
    # Each problem for a program, as `serve` lists them.
    assert e.value.problems is not None and len(e.value.problems) == 1
    assert e.value.problems[0].key == "instructions.budget-bytes"
    assert e.value.problems[0].line == 3
    # Fixed, the next call works: the policy file is watched.
    write(policy, "version = 1\n")
    assert l.snapshot(tree.sub).instruction_files


def test_environment_policy_is_the_default(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LISA_CONTEXT_POLICY", "gemini")
    s = loader(tree).snapshot(tree.sub)
    assert [Path(b.path).name for b in s.instruction_files] == ["GEMINI.md", "GEMINI.md"]
    # An explicit policy wins over the variable.
    s = loader(tree, base_policy="lisa").snapshot(tree.sub)
    assert Path(s.instruction_files[-1].path).name == "AGENTS.md"


def test_per_call_homes_share_one_cache(tree: Tree, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    write(other / "AGENTS.md", "the other home\n")
    l = loader(tree)
    mine = l.snapshot(tree.sub)
    theirs = l.snapshot(tree.sub, home=other)
    assert "home rules: be brief" in mine.prompt and "the other home" not in mine.prompt
    assert "the other home" in theirs.prompt and "home rules: be brief" not in theirs.prompt
    assert l.cached_entries == 1
    assert l.snapshot(tree.sub, home=other).fingerprint == theirs.fingerprint


def test_no_project_reads_the_home_only(tree: Tree) -> None:
    cwd = Loader.no_project()
    s = loader(tree).snapshot(cwd)
    assert [b.origin for b in s.instruction_files] == ["home"]
    assert Loader.no_project() == cwd


def test_hello_lists_the_error_codes_the_types_declare() -> None:
    hello = Loader.hello()
    assert set(hello.error_codes) == set(lisa_context.types.ErrorCode.__args__)  # type: ignore[attr-defined]
    assert "gemini" in hello.policies


def test_calls_release_the_gil(tree: Tree) -> None:
    """With a switch interval of 1000 s, a thread gets the GIL only when the
    holder lets go of it. The other thread runs while this one is in its
    loop of loader calls only if those calls let go."""
    l = loader(tree)
    other_ran = threading.Event()
    done = threading.Event()
    calls = 0

    def caller() -> None:
        nonlocal calls
        while not other_ran.is_set() and calls < 2000:
            l.fingerprint(tree.sub)
            calls += 1
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    try:
        a = threading.Thread(target=caller)
        b = threading.Thread(target=other_ran.set)
        a.start()
        b.start()
        a.join()
        b.join()
    finally:
        sys.setswitchinterval(old)
    assert done.is_set()
    assert calls < 2000, "the other thread never ran during the loader calls"


def test_many_threads_answer_as_one(tree: Tree) -> None:
    l = loader(tree)
    expected = l.snapshot(tree.sub).prompt
    errors: List[BaseException] = []
    results: List[str] = []

    def work() -> None:
        try:
            for _ in range(50):
                results.append(l.snapshot(tree.sub).prompt)
                l.access(tree.repo, tree.sub / "file.txt", session=str(threading.get_ident()))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 400 and all(r == expected for r in results)


def test_the_wheel_is_the_abi3_one() -> None:
    native = Path(lisa_context._native.__file__)
    assert native.name.endswith(".abi3.so"), native.name
    assert os.access(native, os.R_OK)


def _uncovered(raw: Any, typed: Any, at: str) -> List[str]:
    """The JSON keys under `raw` that the dataclass `typed` has no field
    for (a field the schema lacks: the dataclasses would drop it)."""
    import dataclasses

    missing: List[str] = []
    if dataclasses.is_dataclass(typed):
        fields = {f.name for f in dataclasses.fields(typed)}
        for key, value in raw.items():
            name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()
            name = name + "_" if keyword.iskeyword(name) else name
            if name not in fields:
                missing.append(f"{at}.{key}")
            else:
                missing += _uncovered(value, getattr(typed, name), f"{at}.{key}")
    elif isinstance(typed, list):
        for i, (r, t) in enumerate(zip(raw, typed)):
            missing += _uncovered(r, t, f"{at}[{i}]")
    return missing


def test_every_field_the_library_sends_is_typed(tree: Tree, tmp_path: Path) -> None:
    """The raw answers of the extension, walked key by key against the
    dataclasses made from them: nothing the library sends is dropped."""
    import json

    from lisa_context import _native, types

    write(tree.repo / "CLAUDE.md", "see @missing.md\n")
    write(tree.repo / ".cursor" / "rules" / "db.mdc", "---\ndescription: d\n---\nbody \u200b\n")
    cursor = _native.NativeLoader(home=str(tree.home), home_policy=False, base_policy="cursor")
    (tree.sub / "CLAUDE.md").symlink_to(tmp_path / "outside.md")  # a `skipped` entry
    write(tmp_path / "outside.md", "outside the roots\n")
    native = _native.NativeLoader(home=str(tree.home), home_policy=False, base_policy="claude-code")
    cases: List[Tuple[str, Any]] = [
        (native.snapshot(str(tree.sub)), types.Snapshot),
        (native.skill(str(tree.sub), "release"), types.SkillFile),
        (cursor.rule(str(tree.repo), "db"), types.RuleText),
        (native.trust_status(str(tree.sub)), types.TrustStatus),
        (native.trust_diff(str(tree.sub)), types.TrustDiff),
        (native.access(str(tree.repo), str(tree.sub / "file.txt"), "s"), types.Access),
        (_native.hello(), types.Hello),
    ]
    snapshot = json.loads(cases[0][0])
    assert snapshot["skipped"] and snapshot["imports"], "the tree gives every list an entry"
    for text, kind in cases:
        raw = json.loads(text)
        assert _uncovered(raw, kind._from_json(raw), kind.__name__) == []
