"""The shared fixtures of tests/conftest.py do what they say."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import donutbox


def _meta(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/api/meta", timeout=10) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def test_cli_runs_this_source_tree(cli: Any) -> None:
    version = cli("--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"donutbox {donutbox.__version__}"
    bad = cli("frobnicate")
    assert bad.returncode == 2 and bad.stdout == ""
    # A batch comes back in the order it was given, whatever finishes first.
    procs = cli.many([("--version",), ("frobnicate",), ("--version",)])
    assert [p.returncode for p in procs] == [0, 2, 0]


@pytest.mark.slow
def test_live_server_is_this_process_and_comes_back_on_its_port(
    serve: Callable[..., Any],
) -> None:
    # The helper the fixture waits with, from tests/conftest.py by path:
    # the name "conftest" may be tests/browser's when both are collected.
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_root_conftest", Path(__file__).with_name("conftest.py")
    )
    assert spec is not None and spec.loader is not None
    root = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root)
    _listens = root._listens

    a, b = serve(), serve()
    assert a.port != b.port and a.db != b.db
    assert _listens(a.proc.pid, a.port) in (True, None)
    assert _meta(a.url) == _meta(b.url)
    port = a.port
    a.kill()
    with pytest.raises(urllib.error.URLError):
        _meta(a.url)
    a.start()
    assert a.port == port and "agents" in _meta(a.url)
